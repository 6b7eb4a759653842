#!/usr/bin/env bash
# The full crash test: 200 SIGKILLs at random moments during snapshot, restore, apply and gc
# (cli/tests/crash.rs; `cargo test` runs 12). After each kill the store must verify clean, every
# file must be its old or its new version, and running the command again must finish the job.
#   scripts/crash.sh                 # 200 iterations, a new seed
#   REWIND_CRASH_SEED=N scripts/crash.sh   # replay a run
set -euo pipefail
cd "$(dirname "$0")/.."
seed=${REWIND_CRASH_SEED:-$(date +%s)}
echo "seed $seed (REWIND_CRASH_SEED=$seed replays this run)"
REWIND_CRASH_ITERATIONS=${REWIND_CRASH_ITERATIONS:-200} REWIND_CRASH_SEED=$seed \
	cargo test --release -p rewind-cli --test cli crash:: -- --nocapture
