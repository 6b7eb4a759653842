#!/usr/bin/env bash
# Compare rewind with its peers on a real tree, using the shared harness (../shared/bench).
#
# usage: benches/compare.sh [-n RUNS] [-t "rewind git restic"] [CORPUS [OUT]]
#   CORPUS  the tree to snapshot (default: /work/corpus/linux, built by
#           ../shared/bench/make-corpus.sh /work/corpus if missing)
#   OUT     results folder (default: target/bench-out); OUT/tables.md gets the medians
#   -n      runs per measurement (default 3); -t tools (default: rewind only; the README of
#           ../shared/bench lists the peers' figures measured on this machine kind)
# Builds the release binary first. Mind the harness's two traps (cold page cache, slow
# deletes): it handles both.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
BENCH=${BENCH_DIR:-$HERE/../shared/bench}
RUNS=3 TOOLS_ARG=rewind
while getopts n:t: opt; do
	case $opt in
	n) RUNS=$OPTARG ;;
	t) TOOLS_ARG=$OPTARG ;;
	*) sed -n '2,12p' "$0" >&2; exit 2 ;;
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
TOOLS="$TOOLS_ARG" "$BENCH/snapshot-bench.sh" -n "$RUNS" -t "$TOOLS_ARG" "$CORPUS" "$OUT"
"$BENCH/summarize.py" "$OUT" >"$OUT/tables.md"
cat "$OUT/tables.md"
