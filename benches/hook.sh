#!/usr/bin/env bash
# A Claude Code PostToolUse hook round trip (process start to exit) with the watch daemon,
# against what shadow-git checkpointers do (`git add -A && git commit` in a separate git dir
# whose work tree is the workspace), after the same one-file edit, in one run.
#
# usage: benches/hook.sh CORPUS_DIR [RUNS]   (e.g. /work/corpus/linux; release build first:
#        cargo build --release -p rewind-cli)
set -euo pipefail
SRC=$1 RUNS=${2:-10}
BIN=${REWIND_BIN:-$(dirname "$0")/../target/release/rewind}
tmp=$(mktemp -d /tmp/hookbench.XXXXXX)
ws=$tmp/ws store=$tmp/store gitdir=$tmp/git
cp -a "$SRC" "$ws"
"$BIN" --store "$store" -C "$ws" snapshot -q >/dev/null
"$BIN" --store "$store" daemon start >/dev/null
"$BIN" --store "$store" -C "$ws" watch on >/dev/null
"$BIN" --store "$store" -C "$ws" snapshot -q >/dev/null
git --git-dir="$gitdir" --work-tree="$ws" init -q
git --git-dir="$gitdir" --work-tree="$ws" add -A
git --git-dir="$gitdir" --work-tree="$ws" -c user.name=b -c user.email=b@b commit -qm base
f=$(cd "$ws" && find . -name '*.c' | head -1)
event() { printf '{"session_id":"bench","cwd":"%s","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"%s"}}' "$ws" "$f"; }
ms() { echo "scale=1; ($2 - $1) / 1000000" | bc; }
for i in $(seq "$RUNS"); do
	echo "// edit $i" >>"$ws/$f"; sleep 0.2
	t0=$(date +%s%N); event | "$BIN" --store "$store" hook claude; t1=$(date +%s%N)
	echo "// git $i" >>"$ws/$f"; sleep 0.2
	t2=$(date +%s%N)
	git --git-dir="$gitdir" --work-tree="$ws" add -A
	git --git-dir="$gitdir" --work-tree="$ws" -c user.name=b -c user.email=b@b commit -qm "turn $i"
	t3=$(date +%s%N)
	printf 'run %s\trewind hook %s ms\tgit add+commit %s ms\n' "$i" "$(ms "$t0" "$t1")" "$(ms "$t2" "$t3")"
done
"$BIN" --store "$store" daemon stop >/dev/null || true
echo "scratch left in $tmp (delete at the end: deleting big trees slows the next runs)"
