#!/usr/bin/env bash
# The line diff before and after diff/text.rs came to run patch/linediff's engine:
# times the old text.rs line diff (similar's minimal Myers, from git history) against the
# current one on real files, each against an edited copy of itself, and checks that the
# current engine gives the change maps the engine gave before its compaction was made linear.
#
# usage: benches/linediff.sh [N_FILES] [CORPUS]   (default 3000 C files over 8 KiB of
#        /work/corpus/linux). Builds a scratch crate in $TMPDIR; prints 5 rounds of timings
#        (old and new, with insertion and deletion totals, which must be equal).
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-3000}
CORPUS=${2:-/work/corpus/linux}
OLD_REV=6f538ab   # the last commit with the similar-based diff/text.rs
PREV_REV=5f69594  # linediff.rs before its compaction became linear
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/src"
cat > "$WORK/Cargo.toml" <<'TOML'
[package]
name = "ldbench"
version = "0.0.0"
edition = "2024"
publish = false
[dependencies]
similar = "3.2"
[workspace]
TOML
strip_tests() { sed '/^#\[cfg(test)\]/,$d'; }
git -C "$HERE" show "$OLD_REV:src/diff/text.rs" | strip_tests > "$WORK/src/old_text.rs"
git -C "$HERE" show "$PREV_REV:src/patch/linediff.rs" | strip_tests > "$WORK/src/linediff_prev.rs"
strip_tests < "$HERE/src/patch/linediff.rs" > "$WORK/src/linediff.rs"
strip_tests < "$HERE/src/diff/text.rs" | sed 's/use crate::patch::linediff::/use crate::linediff::/' > "$WORK/src/new_text.rs"
cat > "$WORK/src/main.rs" <<'RUST'
#![allow(dead_code)]
//! Times the old diff/text.rs line diff (similar's Myers) against the new one (patch/linediff's
//! engine) on pairs of real files: each file of a list against an edited copy of itself.
mod linediff;
mod linediff_prev;
mod new_text;
mod old_text;

use std::time::Instant;

fn edit(src: &[u8], seed: usize) -> Vec<u8> {
    // Delete every 37th line, duplicate every 53rd, change every 71st.
    let mut out = Vec::with_capacity(src.len());
    for (i, l) in src.split_inclusive(|&b| b == b'\n').enumerate() {
        let k = i + seed;
        if k % 37 == 0 {
            continue;
        }
        if k % 71 == 0 {
            out.extend_from_slice(b"changed line\n");
            continue;
        }
        out.extend_from_slice(l);
        if k % 53 == 0 {
            out.extend_from_slice(l);
        }
    }
    out
}

fn main() {
    let list = std::fs::read_to_string(std::env::args().nth(1).expect("file list")).unwrap();
    let pairs: Vec<(Vec<u8>, Vec<u8>)> = list
        .lines()
        .enumerate()
        .filter_map(|(i, p)| std::fs::read(p).ok().map(|a| { let b = edit(&a, i); (a, b) }))
        .collect();
    let lines: usize = pairs.iter().map(|(a, _)| a.iter().filter(|&&b| b == b'\n').count()).sum();
    println!("{} pairs, {} old lines", pairs.len(), lines);
    fn split(b: &[u8]) -> Vec<&[u8]> { b.split_inclusive(|&c| c == b'\n').collect() }
    let mut same = 0;
    for (i, (a, b)) in pairs.iter().enumerate() {
        let (la, lb) = (split(a), split(b));
        // Also a second, rougher edit of b, and the pair reversed.
        let c = edit(b, i * 7 + 3);
        let lc = split(&c);
        for (x, y) in [(&la, &lb), (&lb, &la), (&la, &lc), (&lc, &lb)] {
            let p = linediff_prev::changed_lines(x, y, None);
            let n = linediff::changed_lines(x, y, None);
            assert_eq!(p, n, "pair {i} differs");
            same += 1;
        }
    }
    println!("{same} diffs identical between the previous and the linear compaction");
    for round in 0..5 {
        let t = Instant::now();
        let mut n_old = (0, 0);
        for (a, b) in &pairs {
            let d = old_text::line_diff(a, b, &old_text::DiffOptions { context: 3, timeout: None });
            n_old.0 += d.insertions;
            n_old.1 += d.deletions;
        }
        let t_old = t.elapsed();
        let t = Instant::now();
        let mut n_new = (0, 0);
        let mut hunks_differ = 0;
        for (a, b) in &pairs {
            let d = new_text::line_diff(a, b, &new_text::DiffOptions { context: 3, timeout: None });
            n_new.0 += d.insertions;
            n_new.1 += d.deletions;
            let _ = &mut hunks_differ;
        }
        let t_new = t.elapsed();
        println!("round {round}: old {:?} (+{} -{})  new {:?} (+{} -{})", t_old, n_old.0, n_old.1, t_new, n_new.0, n_new.1);
    }
}
RUST
find "$CORPUS" -name "*.c" -size +8k | head -n "$N" > "$WORK/files.txt" || true  # head closes the pipe early
(cd "$WORK" && cargo build --release --quiet)
# Warm the page cache right before the timed runs.
xargs cat < "$WORK/files.txt" > /dev/null
"$WORK/target/release/ldbench" "$WORK/files.txt"
