#!/usr/bin/env bash
# Overlay costs on a real tree (issue: namespace create within 50 ms of a warm snapshot;
# `overlay diff` after 15 changed files under 100 ms whatever the tree's size; the copy backend
# no slower than `cp -a`; keeping the base pinned adds at most a warm status to `overlay run`;
# `overlay diff --json` with hunks after 15 changes under 50 ms). Medians of N runs, page
# cache warmed before each; `rewind status` and a bare namespace entry (`unshare -Urm true`)
# are timed in the same loop as peers.
#   benches/overlay.sh CORPUS [N]     e.g. benches/overlay.sh /work/corpus/linux 5
# SKIP_COPY=1 leaves out the copy backend and `cp -a` (minutes, and 2 copies of the tree per run).
# MOVED=1 runs another step instead: the pinned layer's cost when the workspace HAS moved
# since create. Each round creates an overlay, then edits the tree itself (10 *.c/*.h files
# spread over the tree get a line appended, 5 new files, as /work/shared/bench/mutate.sh
# does), then times `overlay run -- true` twice (the first rebuilds the pin, the second finds
# nothing moved and reuses it) beside `rewind status`. It EDITS CORPUS: give it a copy, e.g.
#   cp -a /work/corpus/linux /tmp/linux-copy && MOVED=1 benches/overlay.sh /tmp/linux-copy 5
# Needs target/release/rewind. The store and copies live in a temp dir, moved aside rather
# than deleted between runs (deleting a big tree slows the next runs on these machines).
set -euo pipefail
corpus=$(realpath "$1"); n=${2:-5}
bin=$(realpath "$(dirname "$0")/../target/release/rewind")
work=$(mktemp -d /tmp/rewind-overlay-bench.XXXXXX)
export REWIND_STORE=$work/store
R() { "$bin" -C "$corpus" "$@"; }
warm() { sync; find "$corpus" > /dev/null; cat "$REWIND_STORE/store.redb" > /dev/null 2>&1 || true; }
t() { local s; s=$(date +%s.%N); "$@" > /dev/null; echo "$(date +%s.%N) - $s" | bc; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
R snapshot -q > /dev/null
sleep 2
R snapshot -q > /dev/null
for f in snap create diff copy cp status run bare json run1 run2; do : > "$work/$f.t"; done
if [ -n "${MOVED:-}" ]; then
	mapfile -t all < <(cd "$corpus" && find . -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)
	picks=()
	for k in $(seq 0 9); do picks+=("${all[$(( (2 * k + 1) * ${#all[@]} / 20 ))]}"); done
	for i in $(seq "$n"); do
		id=$(R overlay create --backend namespace)
		R overlay run "$id" -- true > /dev/null # its first run, with nothing moved yet
		r=${work##*.}_$i # new names on every round of every run of the script
		for f in "${picks[@]}"; do printf '/* overlay-bench change %s */\n' "$r" >> "$corpus/$f"; done
		for k in 0 1 2 3 4; do
			seq 1 600 | sed "s/.*/int overlay_bench_${r}_${k}_&;/" > "$corpus/$(dirname "${picks[$k]}")/overlay_bench_${r}_$k.c"
		done
		warm; t R status >> "$work/status.t"
		warm; t R overlay run "$id" -- true >> "$work/run1.t"
		pinned=$(find "$REWIND_STORE/overlays/$id/pin" -mindepth 1 \( -type f -o -type c \) | wc -l)
		warm; t R overlay run "$id" -- true >> "$work/run2.t"
		R overlay drop "$id"
	done
	status=$(median < "$work/status.t"); run1=$(median < "$work/run1.t"); run2=$(median < "$work/run2.t")
	printf 'rewind status (warm, 15 moved)          %.3f s\n' "$status"
	printf 'overlay run -- true, pin rebuilt        %.3f s  (run - status = %.0f ms; pin holds %s entries)\n' "$run1" "$(echo "($run1 - $status) * 1000" | bc -l)" "$pinned"
	printf 'overlay run -- true, pin reused         %.3f s  (run - status = %.0f ms)\n' "$run2" "$(echo "($run2 - $status) * 1000" | bc -l)"
	for f in status run1 run2; do printf '%-7s %s\n' "$f" "$(tr '\n' ' ' < "$work/$f.t")"; done
	echo "results in $work (delete it when done)"
	exit 0
fi
for i in $(seq "$n"); do
	warm; t R snapshot -q >> "$work/snap.t"
	warm; s=$(date +%s.%N); id=$(R overlay create --backend namespace); echo "$(date +%s.%N) - $s" | bc >> "$work/create.t"
	# 15 files changed inside the overlay (10 edited, 5 created).
	R overlay run "$id" -- sh -c 'for f in $(find kernel -name "*.c" | head -10); do echo "/* bench */" >> "$f"; done; for j in 1 2 3 4 5; do echo new > bench-new-$j.txt; done' > /dev/null
	R overlay diff "$id" --stat > /dev/null # the first diff stores the changed files
	warm; t R overlay diff "$id" --stat >> "$work/diff.t"
	warm; t R overlay diff "$id" --json >> "$work/json.t"
	# A run with nothing to do: the pinned layer's refresh (a status of the workspace
	# against the base), the mount, the state and the run's diff.
	warm; t R status >> "$work/status.t"
	warm; t R overlay run "$id" -- true >> "$work/run.t"
	warm; t unshare -Urm true >> "$work/bare.t"
	R overlay drop "$id"
	[ -n "${SKIP_COPY:-}" ] && continue
	warm; s=$(date +%s.%N); id=$(R overlay create --backend copy); echo "$(date +%s.%N) - $s" | bc >> "$work/copy.t"
	mv "$REWIND_STORE/overlays/$id" "$work/aside-copy-$i"
	R overlay drop "$id"
	warm; t cp -a "$corpus" "$work/aside-cp-$i" >> "$work/cp.t"
done
snap=$(median < "$work/snap.t"); create=$(median < "$work/create.t")
diff=$(median < "$work/diff.t"); copy=$(median < "$work/copy.t" || true); cp=$(median < "$work/cp.t" || true)
status=$(median < "$work/status.t"); run=$(median < "$work/run.t"); bare=$(median < "$work/bare.t")
json=$(median < "$work/json.t")
printf 'warm snapshot (nothing changed)   %.3f s\n' "$snap"
printf 'overlay create, namespace         %.3f s  (+%.0f ms over the snapshot)\n' "$create" "$(echo "($create - $snap) * 1000" | bc -l)"
printf 'overlay diff --stat, 15 changes   %.3f s\n' "$diff"
printf 'overlay diff --json (hunks), 15   %.3f s\n' "$json"
printf 'rewind status (warm)              %.3f s\n' "$status"
printf 'overlay run -- true (15 changes)  %.3f s  (run - status = %.0f ms)\n' "$run" "$(echo "($run - $status) * 1000" | bc -l)"
printf 'unshare -Urm true                 %.3f s\n' "$bare"
if [ -z "${SKIP_COPY:-}" ]; then
	printf 'overlay create, copy backend      %.3f s\n' "$copy"
	printf 'cp -a of the tree                 %.3f s  (copy/cp = %.2fx)\n' "$cp" "$(echo "$copy / $cp" | bc -l)"
fi
echo "results in $work (delete it when done)"
