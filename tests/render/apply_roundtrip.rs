//! Property: a rendered Modified patch applies with `git apply` and with
//! `patch -p1`, reproducing the new file byte for byte, and our line counts
//! equal `git diff --numstat`.

use std::process::Command;

use super::common::{fake_id, git, run};
use proptest::prelude::*;
use rewind::diff::{Change, EntryKind, PatchOptions, Side, write_patch};

fn content() -> impl Strategy<Value = Vec<u8>> {
    let line = (
        prop::sample::select(vec!["a", "b", "c", "d", "", "  x"]),
        any::<bool>(),
    )
        .prop_map(|(t, crlf)| format!("{t}{}", if crlf { "\r\n" } else { "\n" }));
    (prop::collection::vec(line, 0..24), any::<bool>()).prop_map(|(lines, cut)| {
        let mut s = lines.concat().into_bytes();
        if cut && s.last() == Some(&b'\n') {
            s.pop();
            if s.last() == Some(&b'\r') && s.len() % 2 == 0 {
                s.pop();
            }
        }
        s
    })
}

fn numstat(dir: &std::path::Path) -> (u64, u64) {
    let out = run(git(dir).args(["diff", "--no-index", "--numstat", "old", "new"]));
    let s = String::from_utf8(out).unwrap();
    let mut it = s.split('\t');
    let ins = it.next().and_then(|x| x.trim().parse().ok()).unwrap_or(0);
    let del = it.next().and_then(|x| x.trim().parse().ok()).unwrap_or(0);
    (ins, del)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
    #[test]
    fn patch_applies_and_counts_match_git(old in content(), new in content(), ctx in 0usize..4) {
        let change = Change::Modified {
            old: Side { path: b"f", kind: EntryKind::File, id: fake_id(&old) },
            new: Side { path: b"f", kind: EntryKind::File, id: fake_id(&new) },
        };
        let mut opts = PatchOptions::default();
        opts.diff.context = ctx;
        let mut patch = Vec::new();
        let stat = write_patch(&mut patch, &change, &old, &new, &opts).unwrap();

        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::write(d.join("old"), &old).unwrap();
        std::fs::write(d.join("new"), &new).unwrap();
        prop_assert_eq!((stat.insertions, stat.deletions), numstat(d));
        if old == new {
            prop_assert!(patch.is_empty());
            return Ok(());
        }
        std::fs::write(d.join("p.diff"), &patch).unwrap();

        // git apply. Not with -U0: `git apply --unidiff-zero` misapplies
        // even git's own -U0 patches when a missing final newline is involved
        // (e.g. old "c\r\nc", new "a\nc\r\n"), so only `patch` checks those.
        if ctx > 0 {
            std::fs::write(d.join("f"), &old).unwrap();
            let o = git(d).args(["apply", "--whitespace=nowarn", "p.diff"]).output().unwrap();
            prop_assert!(o.status.success(), "git apply: {}\n{}", String::from_utf8_lossy(&o.stderr), String::from_utf8_lossy(&patch));
            prop_assert_eq!(std::fs::read(d.join("f")).unwrap(), new.clone());
        }

        // GNU patch; --binary keeps it from stripping CRs in CRLF patches.
        std::fs::write(d.join("f"), &old).unwrap();
        let o = Command::new("patch").current_dir(d)
            .args(["-p1", "--binary", "--quiet", "--no-backup-if-mismatch", "-i", "p.diff"])
            .output().unwrap();
        prop_assert!(o.status.success(), "patch: {}{}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr), String::from_utf8_lossy(&patch));
        prop_assert_eq!(std::fs::read(d.join("f")).unwrap(), new);
    }
}
