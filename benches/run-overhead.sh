#!/usr/bin/env bash
# The overhead of `rewind run -- true` against `git status --porcelain` on a real tree (issue:
# no more than 2x), warm, medians of N runs; with and without the inotify-watched after
# snapshot (REWIND_NO_WATCH=1).
#   benches/run-overhead.sh CORPUS [N]     e.g. benches/run-overhead.sh /work/corpus/linux 9
# Needs target/release/rewind. The git repository and store live in a temp dir.
set -euo pipefail
corpus=$(realpath "$1"); n=${2:-9}
bin=$(realpath "$(dirname "$0")/../target/release/rewind")
work=$(mktemp -d /tmp/rewind-run-bench.XXXXXX)
export REWIND_STORE=$work/store
G() { git --git-dir="$work/git" --work-tree="$corpus" "$@"; }
git init -q --bare "$work/git"
(cd "$corpus" && G add -A && G write-tree > /dev/null)
"$bin" -C "$corpus" snapshot -q > /dev/null
sleep 2
"$bin" -C "$corpus" snapshot -q > /dev/null
warm() { find "$corpus" > /dev/null; }
t() { local s; s=$(date +%s.%N); "$@" > /dev/null; echo "$(date +%s.%N) - $s" | bc; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
: > "$work/git.t"; : > "$work/run.t"; : > "$work/nowatch.t"
for _ in $(seq "$n"); do
	warm; (cd "$corpus" && t G status --porcelain) >> "$work/git.t"
	warm; (cd "$corpus" && t "$bin" run -q -- true) >> "$work/run.t"
	warm; (cd "$corpus" && REWIND_NO_WATCH=1 t "$bin" run -q -- true) >> "$work/nowatch.t"
done
g=$(median < "$work/git.t"); r=$(median < "$work/run.t"); w=$(median < "$work/nowatch.t")
printf 'git status --porcelain      %.3f s\n' "$g"
printf 'rewind run -- true          %.3f s  (%.2fx)\n' "$r" "$(echo "$r / $g" | bc -l)"
printf '  without the watch         %.3f s  (%.2fx)\n' "$w" "$(echo "$w / $g" | bc -l)"
rm -rf "$work"
