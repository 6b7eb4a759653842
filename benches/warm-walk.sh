#!/usr/bin/env bash
# Warm snapshot and status (no daemon) against the bare walk of the same tree, in one loop.
#
#   benches/warm-walk.sh [-n RUNS] [-e] DIR OUT
#
# Each round runs, in this order and with the tree's metadata read (du) right before each: the bare walk
# (examples/walkbench: the parallel walk with one lstat per entry and an empty stat cache, the
# floor of a warm snapshot), then for each binary a warm snapshot (`snapshot -q`, nothing
# changed) and `status`. Wall, CPU (user+sys) and peak RSS come from /usr/bin/time; the table
# gives medians over RUNS rounds (default 5) and each median against the walk's.
# -e: the store file is also dropped from the page cache (posix_fadvise DONTNEED) right before
# each timed rewind step: what a warm command meets once the store has not been read for a while
# (this machine's page cache lets an untouched file go after ~30 s), where the stat cache's size
# on disk is read time.
#
# REWIND_BIN is the binary (default target/release/rewind); OLD_BIN, if set, is measured too,
# alternating with it in the same rounds (same store, so both must read its format: a rewind
# from before schema 2 refuses a store a newer one made or opened for writing).
# WALKBENCH defaults to target/release/examples/walkbench. The store is OUT/store; DIR gets a
# cold snapshot there first if it has none. Results: OUT/warm-walk.tsv and OUT/warm-walk.md.
set -euo pipefail
export LC_ALL=C
RUNS=5 EVICT=
while getopts n:e opt; do
	case $opt in
	n) RUNS=$OPTARG ;;
	e) EVICT=1 ;;
	*) sed -n '2,20p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { sed -n '2,20p' "$0" >&2; exit 2; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=$(realpath "$1")
mkdir -p "$2"
OUT=$(cd "$2" && pwd)
BINS=("new:$(realpath "${REWIND_BIN:-$HERE/target/release/rewind}")")
[ -n "${OLD_BIN:-}" ] && BINS=("old:$(realpath "$OLD_BIN")" "${BINS[@]}")
WALKBENCH=$(realpath "${WALKBENCH:-$HERE/target/release/examples/walkbench}")
for b in "$WALKBENCH" /usr/bin/time python3; do
	command -v "$b" >/dev/null || { echo "warm-walk.sh: $b is missing" >&2; exit 2; }
done
export REWIND_STORE="$OUT/store"
TSV="$OUT/warm-walk.tsv"
printf 'round\tstep\twall_s\tcpu_s\tpeak_rss_mib\n' >"$TSV"
# Warm snapshots read no file content: an lstat of every entry is what must be cached.
warm() { du -s "$DIR" >/dev/null 2>&1 || true; }

# The first snapshot (cold, not timed), so that every timed one is warm.
"${BINS[-1]#*:}" -C "$DIR" snapshot -q >/dev/null

# measure ROUND STEP CMD...
measure() {
	local round=$1 step=$2 t="$OUT/time.out"
	shift 2
	warm
	/usr/bin/time -f '%e %U %S %M' -o "$t" "$@" >/dev/null 2>"$OUT/cmd.err" || {
		echo "warm-walk.sh: $step failed:" >&2
		cat "$OUT/cmd.err" >&2
		exit 1
	}
	read -r wall user sys rss <"$t"
	printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$step" "$wall" "$(echo "$user + $sys" | bc)" \
		"$(echo "scale=1; $rss / 1024" | bc)" | tee -a "$TSV"
}

# With -e: the store file out of the page cache (the tree's metadata stays: `measure` reads it).
evict() {
	[ -n "$EVICT" ] || return 0
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
os.close(fd)' "$REWIND_STORE/store.redb"
}

for round in $(seq "$RUNS"); do
	measure "$round" walk "$WALKBENCH" "$DIR" 1
	for b in "${BINS[@]}"; do
		evict
		measure "$round" "${b%%:*} warm snapshot" "${b#*:}" -C "$DIR" snapshot -q
		evict
		measure "$round" "${b%%:*} status" "${b#*:}" -C "$DIR" status
	done
done

python3 - "$TSV" "$DIR" "$RUNS" >"$OUT/warm-walk.md" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
steps = list(dict.fromkeys(r["step"] for r in rows))
med = {s: {k: statistics.median(float(r[k]) for r in rows if r["step"] == s)
           for k in ("wall_s", "cpu_s", "peak_rss_mib")} for s in steps}
w = med["walk"]
print(f"{sys.argv[2]}, medians of {sys.argv[3]} alternating rounds\n")
print("| step | wall s | CPU s | peak RSS MiB | wall vs walk | CPU vs walk |")
print("|---|---|---|---|---|---|")
for s in steps:
    m = med[s]
    print(f"| {s} | {m['wall_s']:.2f} | {m['cpu_s']:.2f} | {m['peak_rss_mib']:.0f} | "
          f"{m['wall_s'] / w['wall_s']:.2f}x | {m['cpu_s'] / max(w['cpu_s'], 0.01):.2f}x |")
EOF
cat "$OUT/warm-walk.md"
