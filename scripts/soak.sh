#!/usr/bin/env bash
# The full concurrency soak: eight processes (snapshots in three workspaces, run, restore,
# artifact put, gc, forget) share one store for a minute (cli/tests/soak.rs; `cargo test` runs
# a few seconds). Afterwards every snapshot and artifact reported as stored must read back
# with its content, and `verify --full` must be clean.
#   scripts/soak.sh            # 60 s
#   REWIND_SOAK_SECONDS=300 scripts/soak.sh
set -euo pipefail
cd "$(dirname "$0")/.."
REWIND_SOAK_SECONDS=${REWIND_SOAK_SECONDS:-60} cargo test --release -p rewind-cli --test cli soak:: -- --nocapture
