#!/usr/bin/env bash
# The full crash test: 200 SIGKILLs at random moments during snapshot, restore, apply and gc
# (cli/tests/crash.rs; `cargo test` runs 12). After each kill the store must verify clean, every
# file must be its old or its new version, and running the command again must finish the job.
# Then the store file itself damaged (cli/tests/damage.rs; `cargo test` runs 12 of each kind):
# 200 byte flips of each kind (header page, b-tree pages, data pages, anywhere) and 100 cuts,
# each opened, verified, restored and snapshotted through the library: errors, never a panic.
#   scripts/crash.sh                 # 200 iterations, a new seed
#   REWIND_CRASH_SEED=N scripts/crash.sh   # replay a run
set -euo pipefail
cd "$(dirname "$0")/.."
seed=${REWIND_CRASH_SEED:-$(date +%s)}
echo "seed $seed (REWIND_CRASH_SEED=$seed replays this run)"
REWIND_CRASH_ITERATIONS=${REWIND_CRASH_ITERATIONS:-200} REWIND_CRASH_SEED=$seed \
	cargo test --release -p rewind-cli --test cli crash:: -- --nocapture
REWIND_DAMAGE_PER_KIND=${REWIND_DAMAGE_PER_KIND:-200} REWIND_DAMAGE_SEED=$seed \
	cargo test --release -p rewind-cli --test cli damage:: -- --nocapture
