#!/usr/bin/env bash
# `rewind log -- PATH` over 45 snapshots against the by-hand way an integrator used (log --json,
# then `ls` of PATH in each snapshot, comparing ids), on a copy of a source tree (e.g. the Linux
# arch/ subtree). Medians of N runs each.
#   benches/log-path.sh TREE [N]      e.g. benches/log-path.sh /work/corpus/linux/arch 5
# Needs target/release/rewind. Works on a copy in /tmp; TREE is not touched.
set -euo pipefail
tree=$(realpath "$1"); n=${2:-5}
bin=$(realpath "$(dirname "$0")/../target/release/rewind")
work=$(mktemp -d /tmp/rewind-logpath-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
ws=$work/ws
cp -r "$tree" "$ws"
export REWIND_STORE=$work/store
R() { "$bin" -C "$ws" "$@"; }
R init -q
mapfile -t files < <(cd "$ws" && find . -type f -name '*.c' | sed 's|^\./||' | head -20)
target=${files[0]}
# 45 snapshots: every third edits the target, the others edit other files.
for i in $(seq 45); do
	if (( i % 3 == 0 )); then f=$target; else f=${files[$(( i % 19 + 1 ))]}; fi
	echo "/* edit $i */" >> "$ws/$f"
	R snapshot -q -m "s$i" > /dev/null
done
tar -cf - "$work" > /dev/null 2>&1 || true
by_hand() {
	local prev="" ids id cur
	ids=$(R log --json -n 1000 | python3 -c 'import json,sys; print("\n".join(r["id"] for r in json.load(sys.stdin)))')
	for id in $ids; do
		cur=$(R ls "$id" "$target" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])' || echo none)
		[ "$cur" != "$prev" ] && echo "$id"
		prev=$cur
	done > /dev/null
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
: > "$work/a"; : > "$work/b"
for _ in $(seq "$n"); do
	s=$(date +%s.%N); R log -- "$target" > /dev/null; echo "$(date +%s.%N) - $s" | bc >> "$work/a"
	s=$(date +%s.%N); by_hand; echo "$(date +%s.%N) - $s" | bc >> "$work/b"
done
rows=$(R log --json -- "$target" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
printf 'log -- PATH over 45 snapshots (%s rows): median %.3f s; log --json + ls per snapshot: median %.3f s (%s runs, %s files)\n' \
	"$rows" "$(median < "$work/a")" "$(median < "$work/b")" "$n" "$(find "$ws" -type f | wc -l)"
