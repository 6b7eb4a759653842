#!/usr/bin/env bash
# Restoring 15 changed files (10 edited, 5 created) in a full workspace, the safety snapshot
# included (issue: under 1 s on the Linux tree). Medians of N runs, page cache warmed first.
#   benches/restore-changed.sh CORPUS [N]     e.g. benches/restore-changed.sh /work/corpus/linux 5
# Needs target/release/rewind. Edits files of CORPUS and restores them each run: it ends as it
# started.
set -euo pipefail
corpus=$(realpath "$1"); n=${2:-5}
bin=$(realpath "$(dirname "$0")/../target/release/rewind")
work=$(mktemp -d /tmp/rewind-restore-bench.XXXXXX)
export REWIND_STORE=$work/store
R() { "$bin" -C "$corpus" "$@"; }
R snapshot -q --tag start > /dev/null
files=$(cd "$corpus" && find . -name '*.c' | head -10 || true) # find may die of SIGPIPE
: > "$work/t"
for i in $(seq "$n"); do
	for f in $files; do echo "/* bench $i */" >> "$corpus/$f"; done
	for j in 1 2 3 4 5; do echo new > "$corpus/bench-new-$j.txt"; done
	find "$corpus" > /dev/null
	s=$(date +%s.%N); R restore start -q; echo "$(date +%s.%N) - $s" | bc >> "$work/t"
done
R status --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert not d.get("changes", d.get("files", [])), d' || echo "warning: the tree differs from the start"
printf 'restore of 15 changed files, safety snapshot included: median %.3f s (%s runs)\n' \
	"$(sort -n "$work/t" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')" "$n"
rm -rf "$work"
