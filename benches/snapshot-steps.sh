#!/usr/bin/env bash
# Two rewind binaries on one tree, alternated in the same rounds (the machine is shared and
# noisy): cold snapshot into a fresh store, warm snapshot with nothing changed, and `status`
# (the dry-run snapshot) with nothing changed. Prints each run and the medians, as wall/CPU
# seconds (CPU: user + system).
#
#   benches/snapshot-steps.sh OLD_BIN NEW_BIN [CORPUS] [RUNS]   (default /work/corpus/linux, 5)
#
# Written for the split of the snapshot into `Snapshotter` steps (old = main's release binary, new = the branch's).
# The tree is only read; the stores go to a scratch directory, removed at exit. The tree is read
# (tar > /dev/null) right before each timed run: the page cache drops data untouched for ~30 s.
set -euo pipefail
export LC_ALL=C
old=$1 new=$2
corpus=${3:-/work/corpus/linux}
runs=${4:-5}
W=$(mktemp -d "${TMPDIR:-/tmp}/rewind-steps-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
warm() { tar -cf - "$corpus" 2>/dev/null >/dev/null; }
secs() { # secs CMD... : "WALL/CPU" seconds of CMD (CPU: user + system), its output discarded
	local f
	f=$(mktemp)
	/usr/bin/time -o "$f" -f '%e %U %S' "$@" >/dev/null
	awk '{printf "%s/%.2f", $1, $2 + $3}' "$f"
	rm -f "$f"
}
declare -A cold warmsnap status
for r in $(seq "$runs"); do
	for which in old new; do
		bin=${!which}
		store=$W/store-$which
		rm -rf "$store"
		"$bin" --store "$store" -C "$corpus" init >/dev/null
		warm
		c=$(secs "$bin" --store "$store" -C "$corpus" snapshot)
		warm
		w=$(secs "$bin" --store "$store" -C "$corpus" snapshot)
		warm
		s=$(secs "$bin" --store "$store" -C "$corpus" status)
		rm -rf "$store"
		echo "round $r $which: cold $c s, warm $w s, status $s s"
		cold[$which]+="$c "
		warmsnap[$which]+="$w "
		status[$which]+="$s "
	done
done
# Median of the wall times and, apart, of the CPU times of "WALL/CPU" words.
median1() { grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
median() {
	local xs
	xs=$(tr ' ' '\n' | grep .)
	echo "$(echo "$xs" | cut -d/ -f1 | median1)/$(echo "$xs" | cut -d/ -f2 | median1)"
}
for which in old new; do
	printf '%s: median cold %s s, warm %s s, status %s s (%s runs)\n' "$which" \
		"$(echo "${cold[$which]}" | median)" "$(echo "${warmsnap[$which]}" | median)" \
		"$(echo "${status[$which]}" | median)" "$runs"
done
