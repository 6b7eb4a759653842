#!/usr/bin/env bash
# Store size before and after gc's dictionary recompression, with restore and `cat` of one
# file before and after (they must stay fast), and `verify --full`.
#   benches/dict-size.sh CORPUS [FILE-IN-CORPUS] [RUNS]
#   e.g. benches/dict-size.sh /work/corpus/linux kernel/sched/core.c 5
# REWIND_BIN picks the binary (default: target/release/rewind). Prints one TSV line per figure:
# what, value. Sizes: `du` (blocks on disk) and `ls -l` (apparent) of the store file. Times are
# medians of RUNS; the tree is read right before each timed snapshot (the page cache drops
# data untouched for ~30 s on these machines). The work dir is deleted at the end.
set -euo pipefail
corpus=$(realpath "$1"); file=${2:-}; runs=${3:-3}
bin=$(realpath "${REWIND_BIN:-$(dirname "$0")/../target/release/rewind}")
work=$(mktemp -d /tmp/rewind-dict-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
store=$work/store
R() { "$bin" --store "$store" -C "$corpus" "$@"; }
warm() { tar -cf - -C "$corpus" . > /dev/null; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
sizes() {
	local f=$store/store.redb
	printf '%s\tstore du (MiB)\t%s\n' "$1" "$(mib $(( $(du -sk "$store" | cut -f1) * 1024 )))"
	printf '%s\tstore file apparent (MiB)\t%s\n' "$1" "$(mib "$(stat -c %s "$f")")"
	printf '%s\tcontent encoded (MiB)\t%s\n' "$1" "$(R stats --json | python3 -c '
import json, sys
o = json.load(sys.stdin)
def find(o, k):
    if isinstance(o, dict):
        for kk, v in o.items():
            if kk == k: return v
            r = find(v, k)
            if r is not None: return r
print(find(o, "encoded_bytes") / 1048576)')"
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
timeit() { # label, command...: median wall seconds over $runs
	local label=$1; shift
	local t0 t1
	"$@" > /dev/null
	for _ in $(seq "$runs"); do
		t0=$(date +%s.%N); "$@" > /dev/null; t1=$(date +%s.%N)
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
	done | median | sed "s/^/$label\t/"
}
restore_once() { rm -rf "$work/dest"; mkdir "$work/dest"; "$bin" --store "$store" -C "$work/dest" restore "$snap" -q; }
cat_once() { R cat "$snap" "$file" > /dev/null; }
measure() { # phase
	sizes "$1"
	printf '%s\t' "$1"; timeit "restore (s)" restore_once
	if [ -n "$file" ]; then
		printf '%s\t' "$1"; runs=$((runs * 3)) timeit "cat one file (s)" cat_once
	fi
	rm -rf "$work/dest"
}

warm
/usr/bin/time -f "%e %M" -o "$work/snap" "$bin" --store "$store" -C "$corpus" snapshot -q --tag bench > /dev/null
read -r secs kib < "$work/snap"
printf 'snapshot\tcold snapshot (s, peak KiB)\t%s %s\n' "$secs" "$kib"
snap=bench
measure "after snapshot"
/usr/bin/time -f "%e %M" -o "$work/gc" "$bin" --store "$store" gc -q
read -r secs kib < "$work/gc"
printf 'gc\tgc (s, peak KiB)\t%s %s\n' "$secs" "$kib"
measure "after gc"
R verify --full -q && printf 'after gc\tverify --full\tclean\n'
