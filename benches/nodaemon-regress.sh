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
# read (tar > /dev/null) right before, then old snapshot, new snapshot, old status, new status.
# Prints medians, min and max per step, and the load average at start and end.
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "$0")/.." && pwd)
old=${1:?usage: nodaemon-regress.sh OLD_BIN [NEW_BIN] [CORPUS] [RUNS]}
new=${2:-$here/target/release/rewind}
corpus=${3:-/work/corpus/linux}
runs=${4:-5}

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
	"$bin" --store "$W/store-$v" -C "$W/tree-$v" "$@"
}
for v in old new; do
	R $v init >/dev/null
	R $v snapshot -q >/dev/null
	R $v snapshot -q >/dev/null # the stat cache now holds settled entries
done

t() { # ms for one run of the arguments
	local s e
	s=$(date +%s%N)
	"$@" >/dev/null 2>&1
	e=$(date +%s%N)
	echo $(((e - s) / 1000000))
}
samples=$W/samples.tsv
: >"$samples"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq 1 "$runs"); do
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
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$samples" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    step, v, ms = line.split("\t")
    rows.setdefault((step, v), []).append(int(ms))
print("| step (no daemon, nothing changed) | binary | median ms | min | max | samples |")
print("|---|---|---|---|---|---|")
for (step, v), s in rows.items():
    print(f"| {step} | {v} | {statistics.median(s):.0f} | {min(s)} | {max(s)} | {' '.join(map(str, s))} |")
EOF
