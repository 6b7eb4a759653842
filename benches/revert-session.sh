#!/usr/bin/env bash
# `rewind revert --meta session=S` of a session of N tool calls on a copy of a source tree (the
# Linux tree: /work/corpus/linux), with a second session's tool calls interleaved in the same
# files and user edits after them. Each tool call edits three lines in each of three files, as
# an agent's Edit calls do; the hook's snapshot after each is taken as the Claude Code hook
# takes it (a snapshot with session, turn, tool and label=tool). The revert is timed RUNS
# times (each undone before the next), wall and CPU, and checked: every line of S gone, every
# line of the other session and of the user kept.
#   benches/revert-session.sh TREE [CALLS] [RUNS]
#   e.g. benches/revert-session.sh /work/corpus/linux 20 5
# Needs target/release/rewind (or REWIND_BIN). Works on a copy in /tmp; TREE is not touched.
set -euo pipefail
tree=$(realpath "$1"); calls=${2:-20}; runs=${3:-5}
bin=${REWIND_BIN:-$(realpath "$(dirname "$0")/../target/release/rewind")}
work=$(mktemp -d /tmp/rewind-revert-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
ws=$work/ws
cp -a "$tree" "$ws"
export REWIND_STORE=$work/store
R() { "$bin" -C "$ws" "$@"; }
R init -q
R snapshot -q -m base > /dev/null
# The files both sessions edit: C files of a few hundred lines or more, spread over the tree.
mapfile -t files < <(cd "$ws" && find kernel mm fs -name '*.c' -size +20k | sort | head -12)
tool() { # session turn
	R snapshot -q -m "claude turn $2: PostToolUse Edit" --meta agent=claude --meta "session=$1" \
		--meta "turn=$2" --meta event=PostToolUse --meta label=tool --meta tool=Edit > /dev/null
}
for i in $(seq 1 "$calls"); do
	for s in S T; do
		for k in 0 1 2; do
			f=${files[$(( (i * 3 + k) % ${#files[@]} ))]}
			n=$(wc -l < "$ws/$f")
			# S edits lines in the first half of each block of 40, T in the second half: the two
			# sessions share files and hunks, never lines.
			off=$([ "$s" = S ] && echo 3 || echo 23)
			l=$(( ((i * 7 + k * 13) % (n / 40 - 1)) * 40 + off ))
			sed -i "${l}s/\$/ \/* $s call $i *\//" "$ws/$f"
		done
		tool "$s" "$i"
	done
done
# The user edits after the sessions (other lines).
for f in "${files[@]:0:4}"; do sed -i '1s/^/\/* user *\/ /' "$ws/$f"; done
count() { (cd "$ws" && cat "${files[@]}" | grep -c -- "$1" || true); }
before_s=$(count '/\* S call'); before_t=$(count '/\* T call'); before_u=$(count '/\* user \*/')
: > "$work/t"
for _ in $(seq "$runs"); do
	/usr/bin/time -f '%e %U %S' -a -o "$work/t" "$bin" -C "$ws" revert -q --meta session=S
	after_s=$(count '/\* S call'); after_t=$(count '/\* T call'); after_u=$(count '/\* user \*/')
	if [ "$after_s" != 0 ] || [ "$after_t" != "$before_t" ] || [ "$after_u" != "$before_u" ]; then
		echo "wrong revert: S lines $before_s -> $after_s, T $before_t -> $after_t, user $before_u -> $after_u" >&2
		exit 1
	fi
	R undo -q > /dev/null
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf 'revert --meta session=S: %s tool calls (%s lines in %s files, interleaved with %s lines of another session) in a %s-file tree: median %s s wall, %s s user, %s s system (%s runs); every S line gone, every other kept\n' \
	"$calls" "$before_s" "${#files[@]}" "$before_t" "$(find "$ws" -type f | wc -l)" \
	"$(cut -d' ' -f1 "$work/t" | median)" "$(cut -d' ' -f2 "$work/t" | median)" "$(cut -d' ' -f3 "$work/t" | median)" "$runs"
