#!/usr/bin/env bash
# The watch daemon on a large tree, beside git and jj, in one run.
#
#   benches/daemon.sh [CORPUS] [RUNS]     (default /work/corpus/linux, 7 runs)
#
# Copies CORPUS to a scratch directory (edits are made in it), takes the cold snapshots
# (rewind, git add -A + commit, jj util snapshot), then times, RUNS times each, medians:
#   phase 1, no daemon:   rewind snapshot / status / run -- true with nothing changed, and
#                         after 10 edits + 5 new files (../shared/bench/mutate.sh);
#   phase 2, with daemon: the same, after `rewind watch on` and `rewind daemon start`
#                         (its start is timed: it puts a watch on every directory);
#   peers, in the same rounds: git status, git add -A && git write-tree, jj util snapshot.
# The tree is read (tar > /dev/null) right before each round: the page cache on these machines
# drops data untouched for ~30 s. Each step gives wall time and, when perf is installed, CPU
# time (perf stat task-clock of the step and everything it starts, a stable figure on a loaded
# machine); every step runs in `bash -c`, whose own cost is the "shell" line. The load average
# is printed at start and end. Needs: git, jq, python3; jj and perf optional.
# Env: REWIND_BIN (default target/release/rewind), MUTATE (default ../shared/bench/mutate.sh).
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:-/work/corpus/linux}
runs=${2:-7}
rewind=${REWIND_BIN:-$here/target/release/rewind}
mutate=${MUTATE:-$here/../shared/bench/mutate.sh}
[ -x "$mutate" ] || mutate=/work/shared/bench/mutate.sh
have_jj=0
command -v jj >/dev/null && have_jj=1
have_perf=0
perf stat -e task-clock true >/dev/null 2>&1 && have_perf=1

W=$(mktemp -d "${TMPDIR:-/tmp}/rewind-daemon-bench.XXXXXX")
tree=$W/tree
store=$W/store
cleanup() {
	"$rewind" --store "$store" daemon stop >/dev/null 2>&1 || true
	rm -rf "$W"
}
trap cleanup EXIT

echo "# copying $corpus" >&2
cp -a "$corpus" "$tree"
bash "$mutate" --list "$tree" >"$W/list"

R() { "$rewind" --store "$store" -C "$tree" "$@"; }
G() { git -C "$tree" "$@"; }
export -f R G
export rewind store tree
echo "# load at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

echo "# cold snapshots" >&2
R init >/dev/null
R snapshot -q >/dev/null
G init -q
G add -A
G -c user.email=b@b -c user.name=b commit -qm base
if [ $have_jj = 1 ]; then
	(cd "$tree" && jj git init >/dev/null 2>&1 && jj util snapshot >/dev/null 2>&1) || have_jj=0
fi

# "WALL_MS CPU_MS" for one run of a shell command (CPU "-" without perf)
t() {
	local s e cpu=-
	s=$(date +%s%N)
	if [ $have_perf = 1 ]; then
		perf stat -x, -e task-clock -o "$W/cpu" -- bash -c "$1" >/dev/null 2>&1 || true
		cpu=$(awk -F, '/task-clock/ {printf "%.1f", $1}' "$W/cpu")
	else
		bash -c "$1" >/dev/null 2>&1 || true
	fi
	e=$(date +%s%N)
	echo "$(((e - s) / 1000000)) $cpu"
}

samples=$W/samples.tsv
: >"$samples"
rec() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$samples"; }
warm() { tar -cf - -C "$tree" . >/dev/null 2>&1; }

round=0
measure() { # phase
	local phase=$1 i
	for i in $(seq 1 "$runs"); do
		warm
		R snapshot -q >/dev/null # settle: nothing pending
		G add -A >/dev/null 2>&1
		rec shell "bash -c true (inside every figure)" "$(t 'true')"
		rec "$phase" "rewind snapshot, nothing changed" "$(t 'R snapshot -q')"
		rec "$phase" "rewind status, nothing changed" "$(t 'R status')"
		rec "$phase" "rewind run -- true" "$(t 'R run -q -- true')"
		rec peers "git status, nothing changed" "$(t 'G status --porcelain')"
		rec peers "git add -A && git write-tree, nothing changed" "$(t 'G add -A && G write-tree')"
		[ $have_jj = 1 ] && rec peers "jj util snapshot, nothing changed" "$(t 'cd "$tree" && jj util snapshot')"
		round=$((round + 1))
		bash "$mutate" "$tree" "$W/list" "$round"
		rec "$phase" "rewind status, 10 edits + 5 new files" "$(t 'R status')"
		rec peers "git status, 10 edits + 5 new files" "$(t 'G status --porcelain')"
		rec "$phase" "rewind snapshot, 10 edits + 5 new files" "$(t 'R snapshot -q')"
		rec peers "git add -A && git write-tree, 10 edits + 5 new files" "$(t 'G add -A && G write-tree')"
		[ $have_jj = 1 ] && rec peers "jj util snapshot, 10 edits + 5 new files" "$(t 'cd "$tree" && jj util snapshot')"
	done
}

echo "# phase 1: no daemon" >&2
measure "no daemon"

echo "# phase 2: daemon" >&2
R watch on >/dev/null
warm
rec daemon "daemon start (watches every directory)" "$(t 'R daemon start')"
R daemon status --json >"$W/status.json"
measure "daemon"
R daemon status --json >"$W/status2.json"

echo "# load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 - "$samples" "$W/status.json" "$W/status2.json" <<'EOF'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    phase, what, ms = line.rstrip("\n").split("\t")
    wall, cpu = ms.split()
    r = rows.setdefault((phase, what), ([], []))
    r[0].append(int(wall))
    if cpu != "-":
        r[1].append(float(cpu))
print("| phase | step | wall median ms | min | max | CPU median ms | runs |")
print("|---|---|---|---|---|---|---|")
for (phase, what), (v, c) in rows.items():
    cpu = f"{statistics.median(c):.1f}" if c else "-"
    print(f"| {phase} | {what} | {statistics.median(v):.0f} | {min(v)} | {max(v)} | {cpu} | {len(v)} |")
for f in sys.argv[2:]:
    s = json.load(open(f))
    w = s["workspaces"][0]
    print(f"\ndaemon ({f.split('/')[-1]}): rss {s['memory_rss_bytes']/2**20:.1f} MiB, "
          f"watches {w['watches']}, events {w['events']}, overflows {w['overflows']}")
EOF
