//! Unit tests with known answers: parser errors and headers, offset and
//! fuzz placement, reversal, merge basics, and no panics on any input.

use super::*;
use proptest::prelude::*;

fn parse(s: &[u8]) -> PatchSet {
    match PatchSet::parse(s) {
        Ok(p) => p,
        Err(e) => panic!("parse failed: {e}"),
    }
}

fn one(s: &[u8]) -> FilePatch {
    let mut set = parse(s);
    assert_eq!(set.files.len(), 1);
    set.files.remove(0)
}

fn apply(old: &[u8], fp: &FilePatch) -> Result<Applied, ApplyError> {
    apply_hunks(old, fp, &ApplyOptions::default())
}

const SIMPLE: &[u8] = b"--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n";

// ---------- parser errors ----------

#[test]
fn no_patch() {
    assert_eq!(PatchSet::parse(b"hello\nworld\n"), Err(ParseError::NoPatch));
    assert_eq!(PatchSet::parse(b""), Err(ParseError::NoPatch));
}

#[test]
fn truncated_hunk() {
    let e = PatchSet::parse(b"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n");
    assert_eq!(
        e,
        Err(ParseError::TruncatedHunk {
            line: 5,
            header_line: 3,
            old_missing: 1,
            new_missing: 2
        })
    );
}

#[test]
fn count_mismatch_too_many_lines() {
    let e = PatchSet::parse(b"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n c\n");
    assert!(
        matches!(
            e,
            Err(ParseError::HunkCountMismatch {
                line: 7,
                header_line: 3,
                ..
            })
        ),
        "{e:?}"
    );
}

#[test]
fn count_mismatch_next_hunk_too_early() {
    let e =
        PatchSet::parse(b"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n@@ -9 +9 @@\n-x\n+y\n");
    assert!(
        matches!(
            e,
            Err(ParseError::HunkCountMismatch {
                line: 7,
                old_found: 2,
                new_found: 2,
                ..
            })
        ),
        "{e:?}"
    );
}

#[test]
fn count_mismatch_overflowing_one_side() {
    let e = PatchSet::parse(b"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n-b\n+c\n");
    assert!(
        matches!(
            e,
            Err(ParseError::HunkCountMismatch {
                line: 5,
                old_found: 2,
                ..
            })
        ),
        "{e:?}"
    );
}

#[test]
fn garbage_in_hunk() {
    let e = PatchSet::parse(b"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\nxyz\n");
    assert_eq!(
        e,
        Err(ParseError::Garbage {
            line: 5,
            text: "xyz".into()
        })
    );
}

#[test]
fn bad_hunk_header() {
    let e = PatchSet::parse(b"--- a/f\n+++ b/f\n@@ -1,x +1 @@\n a\n");
    assert!(
        matches!(e, Err(ParseError::BadHunkHeader { line: 3, .. })),
        "{e:?}"
    );
    let e = PatchSet::parse(b"--- a/f\n+++ b/f\n@@ -99999999999999999999999 +1 @@\n a\n");
    assert!(
        matches!(e, Err(ParseError::BadHunkHeader { line: 3, .. })),
        "{e:?}"
    );
}

#[test]
fn header_without_hunks() {
    let e = PatchSet::parse(b"--- a/f\n+++ b/f\nsomething else\n");
    assert_eq!(
        e,
        Err(ParseError::MissingHunks {
            line: 2,
            path: "b/f".into()
        })
    );
    // git: index ids differ but no hunks and no binary marker.
    let e = PatchSet::parse(b"diff --git a/f b/f\nindex 1234567..89abcde 100644\n");
    assert!(
        matches!(e, Err(ParseError::MissingHunks { line: 1, .. })),
        "{e:?}"
    );
}

#[test]
fn bad_mode_and_path() {
    let e = PatchSet::parse(b"diff --git a/f b/f\nold mode 10x644\nnew mode 100755\n");
    assert!(
        matches!(e, Err(ParseError::BadMode { line: 2, .. })),
        "{e:?}"
    );
    let e = PatchSet::parse(b"diff --git \"a/f b/f\n");
    assert!(
        matches!(e, Err(ParseError::BadPath { line: 1, .. })),
        "{e:?}"
    );
}

// ---------- parser: shapes ----------

#[test]
fn hunk_lines_keep_endings_and_no_newline_marker() {
    let fp =
        one(b"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\r\n-b\n\\ No newline at end of file\n+b\n");
    let h = &fp.hunks[0];
    assert_eq!(h.lines[0].content, b"a\r\n");
    assert_eq!(
        h.lines[1],
        HunkLine {
            kind: LineKind::Removed,
            content: b"b".to_vec()
        }
    );
    assert_eq!(
        h.lines[2],
        HunkLine {
            kind: LineKind::Added,
            content: b"b\n".to_vec()
        }
    );
    assert_eq!(h.header(), "@@ -1,2 +1,2 @@");
}

#[test]
fn gnu_timestamps_and_epoch_new_file() {
    let fp = one(
        b"diff -ruN a/x b/x\n--- a/x\t1970-01-01 00:00:00.000000000 +0000\n\
          +++ b/x\t2024-01-01 10:00:00.000000000 +0100\n@@ -0,0 +1 @@\n+hi\nOnly in a: y\n",
    );
    assert_eq!(fp.old_path.as_deref(), Some(&b"a/x"[..]));
    assert_eq!(fp.new_path.as_deref(), Some(&b"b/x"[..]));
    assert!(fp.is_new && !fp.is_deleted);
    assert_eq!(fp.format, PatchFormat::Unified);
}

#[test]
fn mail_preamble_and_signature() {
    let mail = b"From 1234 Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nSubject: [PATCH] x\n\n\
        body --- text\n---\n f | 2 +-\n 1 file changed\n\n\
        diff --git a/f b/f\nindex 1111111..2222222 100644\n--- a/f\n+++ b/f\n\
        @@ -1 +1 @@\n-a\n+b\n-- \n2.47.3\n\n";
    let fp = one(mail);
    assert_eq!(fp.old_index.as_deref(), Some("1111111"));
    assert_eq!(fp.new_index.as_deref(), Some("2222222"));
    assert_eq!((fp.old_mode, fp.new_mode), (Some(0o100644), Some(0o100644)));
    assert_eq!(fp.hunks.len(), 1);
}

#[test]
fn quoted_and_non_utf8_paths() {
    let fp = one(
        b"diff --git \"a/caf\\303\\251 x\" \"b/caf\\303\\251 x\"\nnew file mode 100644\n\
          index 0000000..e69de29\n",
    );
    assert_eq!(fp.new_path.as_deref(), Some("b/café x".as_bytes()));
    assert_eq!(fp.old_path, None);
    assert!(fp.is_new && fp.hunks.is_empty());
    assert_eq!(fp.new_path_stripped(1), Some("café x".as_bytes()));
    let fp = one(b"--- a/\xff\xfe\n+++ b/\xff\xfe\n@@ -1 +1 @@\n-a\n+b\n");
    assert_eq!(fp.old_path.as_deref(), Some(&b"a/\xff\xfe"[..]));
    let fp = one(b"diff --git a/x \"b/tab\\there\"\nrename from x\nrename to \"tab\\there\"\nsimilarity index 100%\n");
    assert_eq!(fp.new_path.as_deref(), Some(&b"b/tab\there"[..]));
    assert!(fp.is_rename);
    assert_eq!(fp.similarity, Some(100));
}

#[test]
fn mode_only_and_renames() {
    let fp = one(b"diff --git a/s.sh b/s.sh\nold mode 100644\nnew mode 100755\n");
    assert_eq!((fp.old_mode, fp.new_mode), (Some(0o100644), Some(0o100755)));
    assert!(fp.hunks.is_empty());
    let fp = one(b"diff --git a/my dir/f b/new dir/g\nsimilarity index 100%\nrename from my dir/f\nrename to new dir/g\n");
    assert_eq!(fp.old_path.as_deref(), Some(&b"a/my dir/f"[..]));
    assert_eq!(fp.new_path.as_deref(), Some(&b"b/new dir/g"[..]));
    let fp = one(
        b"diff --git a/o b/n\nsimilarity index 80%\nrename from o\nrename to n\nindex 1111111..2222222 100644\n\
          --- a/o\n+++ b/n\n@@ -1 +1 @@\n-a\n+b\n",
    );
    assert!(fp.is_rename && fp.hunks.len() == 1);
    let fp = one(b"diff --git a/o b/c\nsimilarity index 100%\ncopy from o\ncopy to c\n");
    assert!(fp.is_copy && !fp.is_rename);
}

#[test]
fn empty_new_and_deleted_files() {
    let set = parse(
        b"diff --git a/e b/e\nnew file mode 100644\nindex 0000000..e69de29\n\
          diff --git a/d b/d\ndeleted file mode 100644\nindex e69de29..0000000\n",
    );
    assert!(set.files[0].is_new && set.files[1].is_deleted);
    assert_eq!(set.files[1].old_mode, Some(0o100644));
    assert_eq!(apply(b"", &set.files[0]).map(|a| a.content), Ok(vec![]));
    assert_eq!(apply(b"", &set.files[1]).map(|a| a.content), Ok(vec![]));
}

#[test]
fn binary_markers() {
    let set = parse(
        b"diff --git a/p.bin b/p.bin\nindex 1111111..2222222 100644\nBinary files a/p.bin and b/p.bin differ\n\
          diff --git a/q b/q\nindex 1111111..2222222 100644\nGIT binary patch\nliteral 0\nHcmV?d00001\n\nliteral 0\nHcmV?d00001\n\n\
          diff --git a/t b/t\n--- a/t\n+++ b/t\n@@ -1 +1 @@\n-a\n+b\n",
    );
    assert_eq!(set.files.len(), 3);
    assert!(set.files[0].binary && set.files[1].binary && !set.files[2].binary);
    assert_eq!(apply(b"", &set.files[0]), Err(ApplyError::Binary));
    // git's own encoding of an empty side decodes.
    let fwd = set.files[1].binary_forward.as_ref().map(|h| h.data.clone());
    assert_eq!(fwd, Some(Vec::new()));
    assert!(set.files[1].binary_reverse.is_some());
}

#[test]
fn corrupt_binary_data_is_a_parse_error_naming_the_line() {
    let err = PatchSet::parse(
        b"diff --git a/q b/q\nindex 1111111..2222222 100644\nGIT binary patch\nliteral 3\nKcmZ?wYy\n\n",
    );
    assert!(
        matches!(
            err,
            Err(crate::patch::ParseError::BadBinary { line: 4, .. })
        ),
        "{err:?}"
    );
}

#[test]
fn strip_components_like_patch() {
    assert_eq!(strip_components(b"a/b/c", 0), Some(&b"a/b/c"[..]));
    assert_eq!(strip_components(b"a/b/c", 1), Some(&b"b/c"[..]));
    assert_eq!(strip_components(b"a//b/c", 2), Some(&b"c"[..]));
    assert_eq!(strip_components(b"a/b/c", 3), None);
}

// ---------- applying ----------

#[test]
fn exact_offset_and_report() {
    let fp = one(SIMPLE);
    let a = apply(b"a\nb\nc\nd\ne\n", &fp).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.content, b"a\nb\nC\nd\ne\n");
    assert_eq!(
        a.hunks,
        vec![HunkReport {
            index: 1,
            offset: 0,
            fuzz: 0
        }]
    );
    // Three lines inserted above: found 3 lines later.
    let a = apply(b"x\ny\nz\na\nb\nc\nd\ne\n", &fp).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.content, b"x\ny\nz\na\nb\nC\nd\ne\n");
    assert_eq!(a.hunks[0].offset, 3);
    // One line removed above: offset -1.
    let a = apply(b"b\nc\nd\n", &fp).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (a.content.as_slice(), a.hunks[0].offset),
        (&b"b\nC\nd\n"[..], -1)
    );
}

#[test]
fn nearest_match_wins() {
    let fp = one(b"--- a/f\n+++ b/f\n@@ -5,1 +5,1 @@\n-k\n+K\n");
    let a = apply(b"k\n1\n2\n3\n4\n5\nk\n", &fp).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (a.content.as_slice(), a.hunks[0].offset),
        (&b"k\n1\n2\n3\n4\n5\nK\n"[..], 2)
    );
}

#[test]
fn fuzz_one_and_two() {
    let fp = one(b"--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n a\n b\n-c\n+C\n d\n e\n");
    let a = apply(b"A\nb\nc\nd\nE\n", &fp).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.content, b"A\nb\nC\nd\nE\n");
    assert_eq!(a.hunks[0].fuzz, 1);
    let a = apply(b"A\nB\nc\nD\nE\n", &fp).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (a.content.as_slice(), a.hunks[0].fuzz),
        (&b"A\nB\nC\nD\nE\n"[..], 2)
    );
    let strict = ApplyOptions { max_fuzz: 1 };
    let e = apply_hunks(b"A\nB\nc\nD\nE\n", &fp, &strict);
    assert!(
        matches!(e, Err(ApplyError::HunkFailed { index: 1, .. })),
        "{e:?}"
    );
}

#[test]
fn failure_names_hunk_and_best_location() {
    let fp = one(b"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+A\n@@ -3,3 +3,3 @@\n p\n-q\n+Q\n r\n");
    let e = apply_hunks(b"a\nx\np\nZ\nr\n", &fp, &ApplyOptions { max_fuzz: 0 });
    assert_eq!(
        e,
        Err(ApplyError::HunkFailed {
            index: 2,
            header: "@@ -3,3 +3,3 @@".into(),
            reason: FailureReason::ContextMismatch {
                best_line: Some(3),
                matched: 2,
                expected: 3
            },
        })
    );
    assert!(format!("{}", e.unwrap_err()).contains("hunk #2 @@ -3,3 +3,3 @@"));
}

#[test]
fn hunks_do_not_overlap() {
    let fp = one(b"--- a/f\n+++ b/f\n@@ -2,2 +2,2 @@\n x\n-y\n+Y\n@@ -1,2 +1,2 @@\n a\n-x\n+X\n");
    let e = apply_hunks(b"a\nx\ny\n", &fp, &ApplyOptions { max_fuzz: 0 });
    assert!(
        matches!(
            e,
            Err(ApplyError::HunkFailed {
                index: 2,
                reason: FailureReason::Overlap { line: 1 },
                ..
            })
        ),
        "{e:?}"
    );
}

#[test]
fn new_and_deleted_file_rules() {
    let new = one(b"--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+a\n+b\n");
    assert_eq!(apply(b"", &new).map(|a| a.content), Ok(b"a\nb\n".to_vec()));
    assert_eq!(apply(b"x\n", &new), Err(ApplyError::NotEmpty { len: 2 }));
    let del = new.reverse();
    assert!(del.is_deleted && del.new_path.is_none());
    assert_eq!(apply(b"a\nb\n", &del).map(|a| a.content), Ok(vec![]));
    assert_eq!(
        apply(b"a\nb\nc\n", &del),
        Err(ApplyError::DeleteLeftContent { len: 2 })
    );
}

#[test]
fn crlf_and_missing_final_newline_round_trip() {
    let fp =
        one(b"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n\\ No newline at end of file\n+b\r\n");
    let a = apply(b"a\r\nb\r", &fp).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.content, b"a\r\nb\r\n");
    let back = apply(&a.content, &fp.reverse()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back.content, b"a\r\nb\r");
}

#[test]
fn reverse_swaps_everything() {
    let fp = one(b"diff --git a/o b/n\nold mode 100644\nnew mode 100755\nindex 1111111..2222222\n--- a/o\n+++ b/n\n@@ -1,2 +1 @@\n-a\n-b\n+c\n");
    let r = fp.reverse();
    assert_eq!(r.old_path.as_deref(), Some(&b"b/n"[..]));
    assert_eq!((r.old_mode, r.new_mode), (Some(0o100755), Some(0o100644)));
    assert_eq!(r.old_index.as_deref(), Some("2222222"));
    assert_eq!((r.hunks[0].old_len, r.hunks[0].new_len), (1, 2));
    assert_eq!(r.reverse(), fp);
}

// ---------- merge ----------

#[test]
fn merge_clean_conflict_and_markers() {
    let labels = MergeLabels::default();
    assert_eq!(
        merge3(
            b"a\nb\nc\nd\ne\n",
            b"A\nb\nc\nd\ne\n",
            b"a\nb\nc\nd\nE\n",
            labels.clone()
        ),
        MergeOutcome::Clean(b"A\nb\nc\nd\nE\n".to_vec())
    );
    let out = merge3(b"a\nb\nc\n", b"a\nX\nc\n", b"a\nY\nd\n", labels.clone());
    let MergeOutcome::Conflict {
        with_markers,
        conflicts,
    } = out
    else {
        panic!("expected conflict")
    };
    assert_eq!(
        with_markers,
        b"a\n<<<<<<< ours\nX\nc\n=======\nY\nd\n>>>>>>> theirs\n".to_vec()
    );
    assert_eq!(
        conflicts,
        vec![ConflictRegion {
            base: 1..3,
            ours: 1..3,
            theirs: 1..3,
            output: 1..8
        }]
    );
    // Byte-identical to `git merge-file -p`: "c" lost its newline in theirs.
    let MergeOutcome::Conflict { with_markers, .. } =
        merge3(b"a\nb\nc\n", b"a\nX\nc\n", b"a\nY\nc", labels)
    else {
        panic!("expected conflict")
    };
    assert_eq!(
        with_markers,
        b"a\n<<<<<<< ours\nX\nc\n=======\nY\nc\n>>>>>>> theirs\n".to_vec()
    );
}

#[test]
fn merge_conflict_without_final_newline_gets_one_before_marker() {
    let labels = MergeLabels {
        ours: "mine".into(),
        theirs: "yours".into(),
    };
    let MergeOutcome::Conflict { with_markers, .. } = merge3(b"a", b"b", b"c", labels) else {
        panic!("expected conflict")
    };
    assert_eq!(
        with_markers,
        b"<<<<<<< mine\nb\n=======\nc\n>>>>>>> yours\n".to_vec()
    );
}

// ---------- robustness ----------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn parser_and_applier_never_panic(
        chunks in prop::collection::vec(prop::sample::select(vec![
            &b"diff --git a/x b/x\n"[..], b"--- a/x\n", b"+++ b/x\n", b"@@ -1,2 +1,3 @@\n",
            b"@@ -0,0 +1 @@\n", b"@@ -99999999999 +1 @@\n", b" a\n", b"-a\n", b"+b\n", b"\\ x\n",
            b"\n", b"new file mode 100644\n", b"rename from \"q\\", b"index 1..2 100644\n",
            b"GIT binary patch\n", b"\"a\\303\" b\n", b"\xff\r", b"Binary files a and b differ\n",
        ]), 0..24),
        content in prop::collection::vec(prop::sample::select(vec![&b"a\n"[..], b"b\n", b"\r\n", b"x"]), 0..8),
    ) {
        let input: Vec<u8> = chunks.concat();
        if let Ok(set) = PatchSet::parse(&input) {
            let old: Vec<u8> = content.concat();
            for f in set.reverse().files.iter().chain(&set.files) {
                let _ = apply_hunks(&old, f, &ApplyOptions::default());
            }
        }
    }

    #[test]
    fn parser_never_panics_on_bytes(input in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = PatchSet::parse(&input);
    }
}

// ---------- placement: git's rule for git-style patches, GNU's for traditional ones ----------

fn with_fuzz(old: &[u8], fp: &FilePatch, max_fuzz: usize) -> Result<Applied, ApplyError> {
    apply_hunks(old, fp, &ApplyOptions { max_fuzz })
}

#[test]
fn unequal_context_pins_the_hunk_instead_of_ignoring_two_lines_each_side() {
    let fp = one(b"--- a/f\n+++ b/f\n@@ -2,6 +2,6 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n");
    assert!(with_fuzz(b"1\ntwo\n3\n4\n5\nsix\n7\n8\n", &fp, 2).is_err());
    // Leading context only: the end of the file, not an earlier "x".
    let tail = one(b"--- a/f\n+++ b/f\n@@ -2 +2,2 @@\n x\n+y\n");
    let r = with_fuzz(b"a\nx\nb\nx\n", &tail, 0).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.content, b"a\nx\nb\nx\ny\n");
    assert_eq!(r.hunks[0].offset, 2);
}

#[test]
fn a_no_newline_line_is_never_joined_to_the_next() {
    let body = b"@@ -1,2 +1,2 @@\n a\n-b\n+B\n\\ No newline at end of file\n";
    let gnu = one(&[&b"--- a/f\n+++ b/f\n"[..], body].concat());
    let r = with_fuzz(b"a\nb\nc\nd\n", &gnu, 2).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.content, b"a\nB\nc\nd\n");
    assert_eq!(r.hunks[0].fuzz, 1);
    let git = one(&[&b"diff --git a/f b/f\n--- a/f\n+++ b/f\n"[..], body].concat());
    assert!(with_fuzz(b"a\nb\nc\nd\n", &git, 0).is_err());
    assert_eq!(
        with_fuzz(b"a\nb\n", &git, 0).map(|r| r.content),
        Ok(b"a\nB".to_vec())
    );
    // A marker inside a side is malformed.
    let e = PatchSet::parse(
        b"--- a/f\n+++ b/f\n@@ -1 +1,3 @@\n+X\n\\ No newline at end of file\n+Y\n a\n",
    );
    assert!(
        matches!(e, Err(ParseError::MisplacedNoNewline { line: 5 })),
        "{e:?}"
    );
}

#[test]
fn fuzz_zero_is_gits_exact_rule() {
    let fp = one(b"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n");
    // A hunk at line 1 matches at the start only; GNU's rule (equal context) lets it move.
    assert!(with_fuzz(b"new\n1\n2\n3\n", &fp, 0).is_err());
    let r = with_fuzz(b"new\n1\n2\n3\n", &fp, 2).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.content, b"new\n1\ntwo\n3\n");
    assert_eq!((r.hunks[0].offset, r.hunks[0].fuzz), (1, 0));
}
