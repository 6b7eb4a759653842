#!/usr/bin/env bash
# The disk budget's eviction against the snapshot that triggers it, on a real tree: a copy of a
# subset of CORPUS, a first snapshot, then STEPS rounds of small edits (a line appended to three
# files in different directories, one file added), each a `rewind snapshot` (the config's
# budget is 1 TiB: the snapshot alone, and one `stat`) followed by `rewind forget --max-size
# BUDGET` (the `budget::enforce` a budgeted snapshot runs after itself). BUDGET is each
# store's own pages in use after WARM rounds: from then on most rounds go past it by their new data
# and evict the oldest unprotected snapshots; only those rounds are in the medians. Each binary gets its own store;
# the rounds alternate between the binaries, so a slow spell of the shared machine hits both.
# Wall and CPU (user + system) seconds per command (process start and store open included, in
# both); medians over the rounds, and eviction / snapshot.
# Second measure, as users meet it: the eviction inside the snapshot that triggers it. A copy of
# each store, with BUDGET in its config, takes the same snapshots; each evicts in its own
# process (warm), and REWIND_TRACE prints what the budget took (its `budget` phase), which is
# set against that snapshot command's wall time. Binaries without the phase show none.
#
# usage: benches/budget.sh [-n STEPS] [-w WARM] [-s SUBDIRS] CORPUS BIN...
#   CORPUS   e.g. /work/corpus/linux
#   BIN      rewind binaries to compare (e.g. an old build copied aside, target/release/rewind)
#   -n       measured rounds (default 15)
#   -w       rounds before the budget is set (default 6)
#   -s       the subdirectories of CORPUS copied (default "drivers fs include kernel mm net lib", ~44k files)
# Every timed command is echoed once. Work files go to a temporary directory, removed at the end.
set -euo pipefail
STEPS=15
WARM=6
SUBDIRS="drivers fs include kernel mm net lib"
while getopts n:w:s: opt; do
	case $opt in
	n) STEPS=$OPTARG ;;
	w) WARM=$OPTARG ;;
	s) SUBDIRS=$OPTARG ;;
	*) sed -n '2,19p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { sed -n '2,19p' "$0" >&2; exit 2; }
CORPUS=$(realpath "$1")
shift
BINS=()
for b in "$@"; do BINS+=("$(realpath "$b")"); done
SCRATCH=$(mktemp -d /tmp/rewind-budget-bench.XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT

# timed FILE CMD...: appends "wall cpu" of one run to FILE (bash's `time`: milliseconds).
timed() {
	local out=$1 t
	shift
	t=$( { TIMEFORMAT='%3R %3U %3S'; time "$@" >"$SCRATCH/last.out" 2>"$SCRATCH/last.err"; } 2>&1)
	awk '{printf "%.3f %.3f\n", $1, $2 + $3}' <<<"${t##*$'\n'}" >>"$out"
}
med() { # column $2 of file $1, median
	awk -v c="$2" '{print $c}' "$1" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

# The same edits in every tree: round $2 of tree $1.
edit() {
	local ws=$1 i=$2
	echo "/* round $i */" >>"$ws/fs/open.c"
	echo "/* round $i */" >>"$ws/kernel/fork.c"
	echo "/* round $i */" >>"$ws/mm/mmap.c"
	printf 'round %s\n' "$i" >"$ws/lib/round-$i.txt"
}

n=0
for b in "${BINS[@]}"; do
	n=$((n + 1))
	mkdir -p "$SCRATCH/ws$n"
	for d in $SUBDIRS; do cp -a "$CORPUS/$d" "$SCRATCH/ws$n/"; done
	"$b" --store "$SCRATCH/store$n" -C "$SCRATCH/ws$n" snapshot -q -m start >/dev/null
	# A budget no snapshot reaches, so `stats` reports the pages in use.
	printf '[retention]\nmax_store_bytes = 1099511627776\n' >"$SCRATCH/store$n/config.toml"
	for i in $(seq 1 "$WARM"); do
		edit "$SCRATCH/ws$n" "w$i"
		"$b" --store "$SCRATCH/store$n" -C "$SCRATCH/ws$n" snapshot -q -m "warm $i" >/dev/null
	done
	"$b" --store "$SCRATCH/store$n" -C "$SCRATCH/ws$n" stats --json >"$SCRATCH/stats$n.json"
	cp -a "$SCRATCH/store$n" "$SCRATCH/inproc$n"
done
files=$(find "$SCRATCH/ws1" -type f | wc -l)
echo "tree: $SUBDIRS of $CORPUS ($files files), $WARM rounds before the budget, $STEPS measured"
# Each store's budget: its own pages in use after the warm rounds (the stores hold the same
# snapshots, but builds lay them out differently: one whose store is a little larger, given
# another's budget, would evict everything at once). From then on a round's snapshot goes past
# it whenever the last eviction did not leave room for it, which is most rounds; those are the
# rounds measured.
BUDGETS=()
n=0
for b in "${BINS[@]}"; do
	n=$((n + 1))
	BUDGETS[n]=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["budget"]["used_bytes"])' "$SCRATCH/stats$n.json")
	printf '[retention]\nmax_store_bytes = %s\n' "${BUDGETS[n]}" >"$SCRATCH/inproc$n/config.toml"
	echo "budget of $(basename "$b")'s store: ${BUDGETS[n]} bytes"
done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
shown=0
for i in $(seq 1 "$STEPS"); do
	n=0
	for b in "${BINS[@]}"; do
		n=$((n + 1))
		ws=$SCRATCH/ws$n
		edit "$ws" "$i"
		BUDGET=${BUDGETS[n]}
		if [ $shown = 0 ]; then
			echo "+ $b --store STORE -C WS snapshot -q -m 'round $i'"
			echo "+ $b --store STORE -C WS --json forget --max-size 1TiB   (nothing to do)"
			echo "+ $b --store STORE -C WS --json forget --max-size $BUDGET"
		fi
		timed "$SCRATCH/snap$n" "$b" --store "$SCRATCH/store$n" -C "$ws" snapshot -q -m "round $i"
		# What every command pays (process start, store open, one `stat`), to subtract.
		timed "$SCRATCH/noop$n" "$b" --store "$SCRATCH/store$n" -C "$ws" --json forget --max-size 1TiB
		timed "$SCRATCH/evict$n" "$b" --store "$SCRATCH/store$n" -C "$ws" --json forget --max-size "$BUDGET"
		python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(len(r["evicted"]), r["collections"], r["used_before"], r["used_after"])' \
			"$SCRATCH/last.out" >>"$SCRATCH/evicted$n"
		REWIND_TRACE=1 timed "$SCRATCH/t-inproc$n" "$b" --store "$SCRATCH/inproc$n" -C "$ws" snapshot \
			-m "round $i"
		# "evicted budget-ms": whether the budget forgot snapshots, and what it took.
		awk '/disk budget .*forgot/ {e = 1} /phases:/ {if (match($0, /budget [0-9.]+ ms/)) {
			split(substr($0, RSTART, RLENGTH), a, " "); b = a[2]}}
			END {print e + 0, (b == "" ? "-" : b)}' "$SCRATCH/last.err" >>"$SCRATCH/inlen$n"
	done
	shown=1
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "per round: evicted, batches (collections), pages in use before and after, eviction wall / CPU"
n=0
for b in "${BINS[@]}"; do
	n=$((n + 1))
	echo "$(basename "$b"):"
	paste -d' ' "$SCRATCH/evicted$n" "$SCRATCH/evict$n" | awk '{printf "  %d %d %d %d %s / %s\n", $1, $2, $3, $4, $5, $6}'
done
echo "medians over the rounds that evicted, seconds wall / CPU; 'net' is the eviction less the"
echo "command that has nothing to do; evicted: snapshots in rounds"
printf '%-24s %13s %13s %13s %13s %15s %8s\n' binary snapshot "forget noop" eviction "net eviction" "net/snapshot" evicted
n=0
for b in "${BINS[@]}"; do
	n=$((n + 1))
	paste -d' ' "$SCRATCH/evict$n" "$SCRATCH/noop$n" | awk '{printf "%.3f %.3f\n", $1 - $3, $2 - $4}' >"$SCRATCH/net$n"
	# Rounds that evicted nothing (the store fit again) would flatter the medians: left out.
	for f in snap noop evict net; do
		paste -d' ' "$SCRATCH/evicted$n" "$SCRATCH/$f$n" | awk '$1 > 0 {print $5, $6}' >"$SCRATCH/$f$n.tmp"
		mv "$SCRATCH/$f$n.tmp" "$SCRATCH/$f$n"
	done
	sw=$(med "$SCRATCH/snap$n" 1)
	sc=$(med "$SCRATCH/snap$n" 2)
	nw=$(med "$SCRATCH/net$n" 1)
	nc=$(med "$SCRATCH/net$n" 2)
	ev="$(awk '{s += $1} END {print s}' "$SCRATCH/evicted$n") in $(awk '$1 > 0' "$SCRATCH/evicted$n" | wc -l)"
	printf '%-24s %13s %13s %13s %13s %15s %8s\n' "$(basename "$b")" "$sw / $sc" \
		"$(med "$SCRATCH/noop$n" 1) / $(med "$SCRATCH/noop$n" 2)" \
		"$(med "$SCRATCH/evict$n" 1) / $(med "$SCRATCH/evict$n" 2)" "$nw / $nc" \
		"$(awk -v a="$nw" -v b="$sw" -v c="$nc" -v d="$sc" 'BEGIN {printf "%.2f / %.2f", a / b, (d > 0 ? c / d : 0)}')" "$ev"
	"$b" --store "$SCRATCH/store$n" verify -q --full || echo "verify --full FAILED for $b"
done
echo "in process: the budget's phase in the snapshot that evicted, against that snapshot's wall"
printf '%-24s %13s %13s %15s %8s\n' binary "snapshot" "budget phase" "budget/snap" rounds
n=0
for b in "${BINS[@]}"; do
	n=$((n + 1))
	paste -d' ' "$SCRATCH/inlen$n" "$SCRATCH/t-inproc$n" | awk '$1 == 1 && $2 != "-" {print $3, $2 / 1000}' >"$SCRATCH/inev$n"
	if ! [ -s "$SCRATCH/inev$n" ]; then
		echo "$(basename "$b"): no round evicted (or no budget phase in this build)"
		continue
	fi
	sw=$(med "$SCRATCH/inev$n" 1)
	bw=$(med "$SCRATCH/inev$n" 2)
	ratio=$(awk '{print $2 / $1}' "$SCRATCH/inev$n" | sort -g | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]}')
	printf '%-24s %13s %13s %15s %8s\n' "$(basename "$b")" "$sw" "$bw" "$ratio" "$(wc -l <"$SCRATCH/inev$n")"
	"$b" --store "$SCRATCH/inproc$n" verify -q --full || echo "verify --full FAILED for $b (budgeted)"
done
