#!/usr/bin/env bash
# "Without a daemon nothing gets slower": warm `snapshot` and `status` with nothing changed, no
# daemon, an older rewind binary against this one, alternating in every round.
#
#   benches/nodaemon-regress.sh OLD_BIN [NEW_BIN] [CORPUS] [RUNS]
#
# OLD_BIN is a release build of the commit to compare with, e.g. the last one before the daemon:
#   git clone -q --no-checkout . /tmp/old && git -C /tmp/old checkout -q 6f538ab
#   (cd /tmp/old && CARGO_TARGET_DIR=/tmp/old-target cargo build --release --locked)
#   benches/nodaemon-regress.sh /tmp/old-target/release/rewind
# (check `df -h` first; delete /tmp/old and /tmp/old-target afterwards.)
# Each binary gets its own store and its own copy of CORPUS (default /work/corpus/linux; same
# files, so the same work), cold-snapshotted once. Per round (RUNS, default 5): both trees are
# read (tar > /dev/null) right before, then old snapshot, new snapshot, old status, new status,
# then 10 edits + 5 new files in both trees (../shared/bench/mutate.sh) and old status, new
# status, old snapshot, new snapshot. Prints wall medians, min and max per step, the CPU
# median (perf stat task-clock, when perf is installed: the stable figure on a loaded
# machine), and the load average at start and end. Env: MUTATE (default ../shared/bench/mutate.sh).
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "$0")/.." && pwd)
old=${1:?usage: nodaemon-regress.sh OLD_BIN [NEW_BIN] [CORPUS] [RUNS]}
new=${2:-$here/target/release/rewind}
corpus=${3:-/work/corpus/linux}
runs=${4:-5}
mutate=${MUTATE:-$here/../shared/bench/mutate.sh}
[ -x "$mutate" ] || mutate=/work/shared/bench/mutate.sh
have_perf=0
perf stat -e task-clock true >/dev/null 2>&1 && have_perf=1

W=$(mktemp -d "${TMPDIR:-/tmp}/rewind-nodaemon.XXXXXX")
trap 'rm -rf "$W"' EXIT
for v in old new; do
	echo "# copying $corpus for $v" >&2
	cp -a "$corpus" "$W/tree-$v"
done
R() { # old|new args...
	local v=$1
	shift
	local bin=$old
	[ "$v" = new ] && bin=$new
	if [ "${CPU_TO:-}" ] && [ $have_perf = 1 ]; then
		perf stat -x, -e task-clock -o "$CPU_TO" -- "$bin" --store "$W/store-$v" -C "$W/tree-$v" "$@"
	else
		"$bin" --store "$W/store-$v" -C "$W/tree-$v" "$@"
	fi
}
bash "$mutate" --list "$W/tree-old" >"$W/list"
for v in old new; do
	R $v init >/dev/null
	R $v snapshot -q >/dev/null
	R $v snapshot -q >/dev/null # the stat cache now holds settled entries
done

t() { # "WALL_MS CPU_MS" for one run of the arguments (CPU "-" without perf)
	local s e cpu=-
	rm -f "$W/cpu"
	s=$(date +%s%N)
	CPU_TO=$W/cpu "$@" >/dev/null 2>&1
	e=$(date +%s%N)
	[ -s "$W/cpu" ] && cpu=$(awk -F, '/task-clock/ {printf "%.1f", $1}' "$W/cpu")
	echo "$(((e - s) / 1000000)) $cpu"
}
samples=$W/samples.tsv
: >"$samples"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$runs"); do
	tar -cf - -C "$W" tree-old tree-new >/dev/null 2>&1
	for step in snapshot status; do
		for v in old new; do
			if [ $step = snapshot ]; then
				ms=$(t R $v snapshot -q)
			else
				ms=$(t R $v status)
			fi
			printf '%s\t%s\t%s\n' "$step" "$v" "$ms" >>"$samples"
		done
	done
	for v in old new; do
		bash "$mutate" "$W/tree-$v" "$W/list" "$round"
	done
	for step in status snapshot; do
		for v in old new; do
			ms=$(t R $v $step -q)
			printf '%s\t%s\t%s\n' "$step after 10 edits + 5 new files" "$v" "$ms" >>"$samples"
		done
	done
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$samples" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    step, v, ms = line.rstrip("\n").split("\t")
    wall, cpu = ms.split()
    r = rows.setdefault((step, v), ([], []))
    r[0].append(int(wall))
    if cpu != "-":
        r[1].append(float(cpu))
print("| step (no daemon) | binary | wall median ms | min | max | CPU median ms | wall samples |")
print("|---|---|---|---|---|---|---|")
for (step, v), (s, c) in rows.items():
    cpu = f"{statistics.median(c):.1f}" if c else "-"
    print(f"| {step} | {v} | {statistics.median(s):.0f} | {min(s)} | {max(s)} | {cpu} | {' '.join(map(str, s))} |")
EOF
