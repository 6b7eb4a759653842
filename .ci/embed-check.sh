#!/usr/bin/env bash
# The library as an embedder gets it: a throwaway crate outside this workspace depends on rewind
# by path, with no `[patch]` and no features, and runs the example of src/lib.rs as its main.
# A dependency that resolves only inside this workspace (a `[patch.crates-io]`, a workspace-only
# setting) fails here. Offline: the versions are the workspace's Cargo.lock, whose crates the
# workspace build has already fetched.
#
# Usage: .ci/embed-check.sh [REPO]   (REPO defaults to this checkout)
set -euo pipefail
repo=$(cd "${1:-$(dirname "$0")/..}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/embedder/src"
cat >"$tmp/embedder/Cargo.toml" <<EOF
[package]
name = "rewind-embedder"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
rewind = { path = "$repo" }
tempfile = "3"

[workspace]
EOF
# The same versions as the workspace (cargo drops the entries this crate does not use).
cp "$repo/Cargo.lock" "$tmp/embedder/Cargo.lock"
# The doc example: the lines between the first pair of fences, less `//! ` and the `# ` that
# hides a line from the rendered docs.
awk '/^\/\/! ```/ { n++; next } n == 1' "$repo/src/lib.rs" |
	sed -e 's|^//! \{0,1\}||' -e 's|^# \{0,1\}||' >"$tmp/embedder/src/main.rs"
grep -q 'fn main' "$tmp/embedder/src/main.rs" || {
	echo "embed-check: no example with a main in src/lib.rs" >&2
	exit 1
}
# Its own target directory (kept between runs) so it neither locks nor rebuilds the workspace's.
CARGO_TARGET_DIR="$repo/target/embed-check" \
	cargo run --offline --quiet --manifest-path "$tmp/embedder/Cargo.toml"
echo "embed-check: a crate outside the workspace built rewind and ran its example"
