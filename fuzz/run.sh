#!/usr/bin/env bash
# Runs the patch fuzz target (parser, applier, reverse, merge3) for a while; not part of CI.
# usage: fuzz/run.sh [SECONDS]   (default 300)
# Needs `cargo install cargo-fuzz`. Runs on the stable toolchain without a sanitizer (the
# machines here have no nightly); panics and assertion failures are what it finds.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p corpus/patch
# Seed the corpus with the fixture patches.
for p in ../fixtures/patches/*/patch.diff; do cp "$p" "corpus/patch/$(basename "$(dirname "$p")").diff"; done
RUSTC_BOOTSTRAP=1 cargo fuzz run patch --sanitizer none -- -max_total_time="${1:-300}" -max_len=8192
