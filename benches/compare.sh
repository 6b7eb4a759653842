#!/usr/bin/env bash
# Compare rewind with its peers on a real tree, using the shared harness (../shared/bench).
#
# usage: benches/compare.sh [-n RUNS] [-t "rewind git restic"] [CORPUS [OUT]]
#   CORPUS  the tree to snapshot (default: /work/corpus/linux, built by
#           ../shared/bench/make-corpus.sh /work/corpus if missing)
#   OUT     results folder (default: target/bench-out); OUT/tables.md gets the medians
#   -n      runs per measurement (default 3); -t tools (default: rewind only; the README of
#           ../shared/bench lists the peers' figures measured on this machine kind)
#   -s      the harness's steps (default cold,size,warm,change,diff,restore)
#   -L      skip the floors (lower-bounds.sh: walk, read, b3sum, tar | zstd -1/-3), which
#           otherwise run right before the tools, with the same run count
# rewind runs with benches/peers/rewind.sh (same files as git; gc timed on a copy of the store,
# like git's repack -ad). Builds the release binary first. Mind the harness's two traps (cold page cache, slow
# deletes): it handles both.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
BENCH=${BENCH_DIR:-$HERE/../shared/bench}
RUNS=3 TOOLS_ARG=rewind FLOORS=1 STEPS=cold,size,warm,change,diff,restore
while getopts n:t:s:L opt; do
	case $opt in
	n) RUNS=$OPTARG ;;
	t) TOOLS_ARG=$OPTARG ;;
	s) STEPS=$OPTARG ;;
	L) FLOORS=0 ;;
	*) sed -n '2,15p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
CORPUS=${1:-/work/corpus/linux}
OUT=${2:-$HERE/target/bench-out}
if [ ! -d "$CORPUS" ]; then
	"$BENCH/make-corpus.sh" "$(dirname "$CORPUS")"
fi
command -v /usr/bin/time >/dev/null || { apt-get update -qq && apt-get install -y -qq time; }
(cd "$HERE" && cargo build --release --quiet)
export REWIND_BIN="$HERE/target/release/rewind"
mkdir -p "$OUT"
# The shared harness with rewind's own plug-in (benches/peers/rewind.sh says how it differs)
rm -rf "$OUT/harness" && cp -r "$BENCH" "$OUT/harness" && cp "$HERE"/benches/peers/*.sh "$OUT/harness/tools/"
BENCH=$OUT/harness
[ "$FLOORS" = 0 ] || "$BENCH/lower-bounds.sh" -n "$RUNS" "$CORPUS" "$OUT"
TOOLS="$TOOLS_ARG" "$BENCH/snapshot-bench.sh" -n "$RUNS" -s "$STEPS" -t "$TOOLS_ARG" "$CORPUS" "$OUT"
"$BENCH/summarize.py" "$OUT" >"$OUT/tables.md"
cat "$OUT/tables.md"
