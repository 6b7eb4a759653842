#!/usr/bin/env bash
# Times forget + gc on a real tree: snapshot the tree, take a big subtree away, snapshot again,
# forget the first snapshot, then `rewind gc` (sweep, repack, compaction). Prints the store's
# size before and after and the gc's own report.
#   benches/gc.sh CORPUS [SUBTREE]     e.g. benches/gc.sh /work/corpus/linux drivers
# Needs target/release/rewind (cargo build --release). The tree is moved back at the end.
set -euo pipefail
corpus=$(realpath "$1"); sub=${2:-drivers}
bin=$(realpath "$(dirname "$0")/../target/release/rewind")
work=$(mktemp -d /tmp/rewind-gc-bench.XXXXXX)
store=$work/store
aside=$work/aside
trap 'if [ -e "$aside" ]; then mv "$aside" "$corpus/$sub"; fi' EXIT
R() { "$bin" --store "$store" -C "$corpus" "$@"; }
size() { du -sk "$store" | awk '{printf "%.1f MiB", $1/1024}'; }
cat_tree() { find "$corpus" -type f -print0 | xargs -0 cat > /dev/null; }

cat_tree
first=$(R snapshot -q -m full)
echo "snapshot of the whole tree: $first, store $(size)"
mv "$corpus/$sub" "$aside"
second=$(R snapshot -q -m "without $sub")
echo "snapshot without $sub: $second, store $(size)"
R forget "$first" -q
/usr/bin/time -f "gc: %e s wall, %M KiB peak" "$bin" --store "$store" gc
echo "store after gc: $(size)"
R verify -q && echo "verify: clean"
echo "(work dir $work; delete it when done)"
