#!/usr/bin/env bash
# `rewind blame` of a file with N versions against `git blame` of the same history imported as
# commits, in the same run, on a copy of a source tree (the Linux tree: /work/corpus/linux).
# Medians of RUNS runs each, the tree read again before every timed run (the page cache on these
# machines drops what is untouched for ~30 s).
#   benches/blame.sh TREE [FILE] [VERSIONS] [RUNS]
#   e.g. benches/blame.sh /work/corpus/linux mm/mmap.c 100 7
# Needs target/release/rewind. Works on a copy in /tmp; TREE is not touched.
set -euo pipefail
tree=$(realpath "$1"); file=${2:-mm/mmap.c}; versions=${3:-100}; runs=${4:-7}
bin=$(realpath "$(dirname "$0")/../target/release/rewind")
work=$(mktemp -d /tmp/rewind-blame-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
ws=$work/ws
cp -a "$tree" "$ws"
export REWIND_STORE=$work/store
R() { "$bin" -C "$ws" "$@"; }
G() { git -C "$ws" -c user.name=b -c user.email=b@b -c gc.auto=0 "$@"; }
G init -q
G add -A
G commit -qm base
R init -q
R snapshot -q -m base > /dev/null
lines=$(wc -l < "$ws/$file")
# Each version rewrites two lines and inserts one, at places spread over the file; another file
# changes too, so the snapshots are not all about the blamed file.
for i in $(seq 2 "$versions"); do
	a=$(( (i * 7919) % (lines - 2) + 1 )); b=$(( (i * 104729) % (lines - 2) + 1 ))
	sed -i "${a}s/\$/ \/* v$i a *\//; ${b}s/\$/ \/* v$i b *\//; ${b}a\\
/* version $i */" "$ws/$file"
	echo "/* touch $i */" >> "$ws/README"
	R snapshot -q -m "v$i" > /dev/null
	G commit -qam "v$i"
done
warm() { cat "$work/store/store.redb" > /dev/null; tar -cf - -C "$ws" .git > /dev/null; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_ms() { local s e; s=$(date +%s%N); "$@" > /dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
: > "$work/r"; : > "$work/l"; : > "$work/g"
for _ in $(seq "$runs"); do
	warm; time_ms R blame "$file" @ >> "$work/r"
	warm; time_ms R blame "$file" >> "$work/l"
	warm; time_ms G blame "$file" >> "$work/g"
done
# Same answer: the lines each tool blames on the base are the same lines.
R --json blame "$file" @ | python3 -c '
import json, sys
b = json.load(sys.stdin)
base = min(b["snapshots"], key=lambda k: b["snapshots"][k]["time_ns"])
print(sum(1 for l in b["lines"] if l["snapshot"] == base))' > "$work/rb"
# git marks the root commit's lines with '^' and one hex digit less.
G blame -s "$file" | awk -v root="$(G rev-list --max-parents=0 HEAD | cut -c1-7)" 'index($0, "^" root) == 1 || index($0, root) == 1' | wc -l > "$work/gb"
printf '%s (%s lines, %s versions, %s files): rewind blame FILE @ median %s ms, live file %s ms; git blame %s ms (%s runs); lines blamed on the base: rewind %s, git %s\n' \
	"$file" "$(wc -l < "$ws/$file")" "$versions" "$(find "$ws" -path "$ws/.git" -prune -o -type f -print | wc -l)" \
	"$(median < "$work/r")" "$(median < "$work/l")" "$(median < "$work/g")" "$runs" "$(cat "$work/rb")" "$(cat "$work/gb")"
