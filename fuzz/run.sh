#!/usr/bin/env bash
# Runs a fuzz target for a while; not part of CI.
# usage: fuzz/run.sh [TARGET] [SECONDS]   (TARGET: patch (default), decoders or store_file; 300 s default)
#   patch:    the patch parser, applier, reverse and merge3.
#   decoders: the decoders of what the store holds (blob/chunk records, stat-cache views,
#             trees, snapshot/operation/overlay records, pack indexes); tests/decoders.rs runs
#             the same body as a proptest smoke in CI.
#   store_file: a real store.redb with bytes flipped and cut short anywhere (header, b-tree
#             pages, segments): open, verify --full, restore and snapshot give errors, never a
#             panic (cli/tests/damage.rs runs a seeded sample in CI).
# Needs `cargo install cargo-fuzz`. Runs on the stable toolchain without a sanitizer (the
# machines here have no nightly); panics and assertion failures are what it finds.
set -euo pipefail
cd "$(dirname "$0")"
target=patch
if [[ "${1:-}" =~ ^[a-z_]+$ ]]; then target="$1"; shift; fi
seconds="${1:-300}"
mkdir -p "corpus/$target"
if [ "$target" = patch ]; then
  # Seed the corpus with the fixture patches.
  for p in ../fixtures/patches/*/patch.diff; do cp "$p" "corpus/patch/$(basename "$(dirname "$p")").diff"; done
fi
RUSTC_BOOTSTRAP=1 cargo fuzz run "$target" --sanitizer none -- -max_total_time="$seconds" -max_len=8192
