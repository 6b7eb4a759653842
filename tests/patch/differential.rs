//! Differential tests: patches made by real `diff -u` and `git diff` are
//! parsed and applied by our code, forward and reversed, and must reproduce
//! the files exactly.

use super::common::{edit, edits, git_diff, gnu_diff, join, lines};
use proptest::prelude::*;
use rewind::patch::{ApplyOptions, LineKind, PatchSet, apply_hunks};

fn check_round_trip(patch: &[u8], old: &[u8], new: &[u8]) -> Result<(), TestCaseError> {
    let set = PatchSet::parse(patch).map_err(|e| TestCaseError::fail(format!("{e}")))?;
    prop_assert_eq!(set.files.len(), 1);
    let file = &set.files[0];
    let opts = ApplyOptions { max_fuzz: 0 };
    let fwd = apply_hunks(old, file, &opts).map_err(|e| TestCaseError::fail(format!("{e}")))?;
    prop_assert_eq!(&fwd.content, new);
    prop_assert!(fwd.hunks.iter().all(|h| h.offset == 0 && h.fuzz == 0));
    let back = apply_hunks(new, &file.reverse(), &opts)
        .map_err(|e| TestCaseError::fail(format!("{e}")))?;
    prop_assert_eq!(&back.content, old);
    Ok(())
}

/// diffy 0.5's single-file parser as an independent oracle: same hunk
/// ranges and the same lines (with endings and no-newline folding).
fn check_against_diffy(patch: &[u8]) -> Result<(), TestCaseError> {
    let ours = PatchSet::parse(patch).map_err(|e| TestCaseError::fail(format!("{e}")))?;
    let theirs =
        diffy::Patch::from_bytes(patch).map_err(|e| TestCaseError::fail(format!("diffy: {e}")))?;
    let ours = &ours.files[0].hunks;
    prop_assert_eq!(ours.len(), theirs.hunks().len());
    for (a, b) in ours.iter().zip(theirs.hunks()) {
        prop_assert_eq!(
            (a.old_start, a.old_len),
            (b.old_range().start(), b.old_range().len())
        );
        prop_assert_eq!(
            (a.new_start, a.new_len),
            (b.new_range().start(), b.new_range().len())
        );
        let b_lines: Vec<(LineKind, &[u8])> = b
            .lines()
            .iter()
            .map(|l| match l {
                diffy::Line::Context(t) => (LineKind::Context, *t),
                diffy::Line::Delete(t) => (LineKind::Removed, *t),
                diffy::Line::Insert(t) => (LineKind::Added, *t),
            })
            .collect();
        let a_lines: Vec<(LineKind, &[u8])> = a
            .lines
            .iter()
            .map(|l| (l.kind, l.content.as_slice()))
            .collect();
        prop_assert_eq!(a_lines, b_lines);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn diff_and_git_patches_round_trip(
        base in lines(14),
        ed in edits(),
        old_nl in prop::bool::weighted(0.8),
        new_nl in prop::bool::weighted(0.8),
    ) {
        let old = join(&base, old_nl);
        let new = join(&edit(&base, &ed), new_nl);
        prop_assume!(old != new);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("old"), &old).unwrap();
        std::fs::write(dir.path().join("new"), &new).unwrap();
        let gnu = gnu_diff(dir.path(), "old", "new");
        check_round_trip(&gnu, &old, &new)?;
        check_against_diffy(&gnu)?;
        let git = git_diff(dir.path(), "old", "new");
        check_round_trip(&git, &old, &new)?;
    }
}
