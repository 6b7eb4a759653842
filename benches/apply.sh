#!/usr/bin/env bash
# `rewind apply` beside `git apply` and GNU `patch -p1` on one large patch: N_FILES generated
# files of 200 lines, 10 separated one-line changes in each (5,000 hunks for 500 files), made
# by `git diff` in a scratch repository. Each round copies the base tree three times and
# applies the same patch with each tool, in the same loop, and checks all three results equal
# the edited tree. rewind's time includes what git's and patch's do not: the snapshots before
# and after (what `rewind undo` takes back) and the op log; `rewind apply --check` is timed too,
# which parses, places and checks every hunk but writes nothing.
#
# usage: benches/apply.sh [N_FILES] [ROUNDS] [REWIND]   (defaults 500, 5,
#        target/release/rewind). Prints wall and CPU seconds per tool per round
#        (`/usr/bin/time -f '%e s %U+%S cpu'`).
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-500}
ROUNDS=${2:-5}
REWIND=${3:-$HERE/target/release/rewind}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
git_() { git -c user.name=b -c user.email=b@b "$@"; }

mkdir "$WORK/repo"
cd "$WORK/repo"
git_ init -q .
awk -v n="$N" 'BEGIN {
  for (f = 0; f < n; f++) {
    name = sprintf("src/d%02d/file%04d.txt", f % 25, f)
    system("mkdir -p " substr(name, 1, index(substr(name, 5), "/") + 3))
    for (l = 1; l <= 200; l++)
      printf "file %d line %d: the quick brown fox jumps over the lazy dog\n", f, l > name
    close(name)
  }
}'
git_ add -A && git_ commit -qm base
cp -a "$WORK/repo" "$WORK/base"
rm -rf "$WORK/base/.git"
# Ten one-line changes per file, 20 lines apart: ten hunks each.
find src -type f | while read -r f; do
  awk '{ if (NR % 20 == 10) print "changed: " $0; else print }' "$f" > "$f.new" && mv "$f.new" "$f"
done
git_ diff > "$WORK/p.diff"
cp -a "$WORK/repo" "$WORK/want"
rm -rf "$WORK/want/.git"
HUNKS=$(grep -c '^@@ ' "$WORK/p.diff")
echo "patch: $(find src -type f | wc -l) files, $HUNKS hunks, $(wc -c < "$WORK/p.diff") bytes"
echo "rewind: $REWIND ($("$REWIND" --version 2>/dev/null || echo '?'))"
echo "git: $(git --version)  patch: $(patch --version | head -1)"

timed() { # label, command...
  local label=$1
  shift
  /usr/bin/time -f "  $label %e s %U+%S cpu" "$@" > /dev/null
}

for r in $(seq 1 "$ROUNDS"); do
  echo "round $r"
  for t in git patch rewind check; do
    rm -rf "$WORK/$t"
    cp -a "$WORK/base" "$WORK/$t"
  done
  rm -rf "$WORK/store"
  "$REWIND" --store "$WORK/store" -C "$WORK/rewind" snapshot -q > /dev/null
  "$REWIND" --store "$WORK/store" -C "$WORK/check" snapshot -q > /dev/null
  (cd "$WORK/git" && timed "git apply     " git apply "$WORK/p.diff")
  (cd "$WORK/patch" && timed "patch -p1     " patch -p1 -s -i "$WORK/p.diff")
  timed "rewind apply  " "$REWIND" --store "$WORK/store" -C "$WORK/rewind" apply -q "$WORK/p.diff"
  timed "rewind --check" "$REWIND" --store "$WORK/store" -C "$WORK/check" apply -q --check "$WORK/p.diff"
  for t in git patch rewind; do
    diff -r "$WORK/want" "$WORK/$t" > /dev/null || { echo "$t: wrong result"; exit 1; }
  done
done
