//! Fuzzes the patch parser, the applier (forward and reverse) and the three-way merge: none
//! may panic, and a patch applied to its own old side and then reversed must give that old
//! side back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rewind::patch::{ApplyOptions, MergeLabels, PatchSet, apply_hunks, merge3};

fuzz_target!(|data: &[u8]| {
    // Three-way merge on the input cut in three at 0xff bytes.
    let mut parts = data.splitn(3, |&b| b == 0xff);
    if let (Some(base), Some(ours), Some(theirs)) = (parts.next(), parts.next(), parts.next()) {
        let _ = merge3(base, ours, theirs, MergeLabels::default());
    }
    let Ok(set) = PatchSet::parse(data) else { return };
    let _ = set.reverse();
    let exact = ApplyOptions { max_fuzz: 0 };
    for f in &set.files {
        // The patch's own old side, rebuilt from its hunks, must take it exactly there and back
        // when the hunks are in order and do not overlap.
        let old: Vec<u8> = f.hunks.iter().flat_map(|h| h.old_lines().flat_map(|l| l.iter().copied())).collect();
        if let Ok(applied) = apply_hunks(&old, f, &exact) {
            let back = apply_hunks(&applied.content, &f.reverse(), &exact);
            if let Ok(back) = back {
                assert_eq!(back.content, old, "reverse did not undo the patch");
            }
        }
        let _ = apply_hunks(b"a\nb\nc\nd\ne\n", f, &ApplyOptions::default());
    }
});
