//! Golden comparisons: our patch versus `git diff --cached` in a scratch
//! repository, line by line except the index-line hashes.

use super::common::{Entry, e, fake_id, git_diff, mask_index};
use rewind::diff::EntryKind::{Executable, File, Symlink};
use rewind::diff::{Change, PatchOptions, Side, write_patch};

/// (old path, new path, similarity) of one expected change, in git's order.
type Spec<'a> = (Option<&'a [u8]>, Option<&'a [u8]>, u8);

fn side<'a>(entries: &'a [Entry], path: &[u8]) -> (Side<'a>, &'a [u8]) {
    let en = entries.iter().find(|x| x.path == path).expect("entry");
    (
        Side {
            path: &en.path,
            kind: en.kind,
            id: fake_id(&en.content),
        },
        &en.content,
    )
}

fn render(before: &[Entry], after: &[Entry], specs: &[Spec], color: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let opts = PatchOptions {
        color,
        ..PatchOptions::default()
    };
    for &(o, n, sim) in specs {
        let old = o.map(|p| side(before, p));
        let new = n.map(|p| side(after, p));
        let change = match (old, new) {
            (Some((old, _)), Some((new, _))) if old.path != new.path => Change::Renamed {
                old,
                new,
                similarity: sim,
            },
            (Some((old, _)), Some((new, _))) => Change::Modified { old, new },
            (None, Some((new, _))) => Change::Added { new },
            (Some((old, _)), None) => Change::Deleted { old },
            (None, None) => unreachable!(),
        };
        let oc = old.map(|x| x.1).unwrap_or_default();
        let nc = new.map(|x| x.1).unwrap_or_default();
        write_patch(&mut out, &change, oc, nc, &opts).unwrap();
    }
    out
}

fn check(before: &[Entry], after: &[Entry], specs: &[Spec]) {
    for color in [false, true] {
        let args: &[&str] = if color { &["--color=always"] } else { &[] };
        let want = git_diff(before, after, args);
        let got = render(before, after, specs, color);
        let (want, got) = (mask_index(&want), mask_index(&got));
        assert_eq!(
            got,
            want,
            "color={color}\n--- ours:\n{}\n--- git:\n{}",
            got.concat(),
            want.concat()
        );
    }
}

fn lines(n: usize) -> Vec<u8> {
    (1..=n)
        .map(|i| format!("line {i}\n"))
        .collect::<String>()
        .into_bytes()
}

#[test]
fn add_and_delete() {
    let a = [e(b"gone.sh", Executable, b"echo bye\n")];
    let b = [e(b"new.txt", File, b"hello\nworld\n")];
    check(
        &a,
        &b,
        &[(Some(b"gone.sh"), None, 0), (None, Some(b"new.txt"), 0)],
    );
}

#[test]
fn mode_change_only_and_with_content() {
    let a = [e(b"m1", File, b"m\n"), e(b"m2", Executable, b"x\ny\n")];
    let b = [e(b"m1", Executable, b"m\n"), e(b"m2", File, b"x\nz\n")];
    check(
        &a,
        &b,
        &[(Some(b"m1"), Some(b"m1"), 0), (Some(b"m2"), Some(b"m2"), 0)],
    );
}

#[test]
fn rename_exact_and_across_dirs_with_edit() {
    let mut edited = lines(30);
    edited.extend_from_slice(b"line 31\n");
    let a = [
        e(b"d/moved.txt", File, &lines(40)),
        e(b"old.txt", File, &lines(30)),
    ];
    let b = [
        e(b"e/moved.txt", File, &lines(40)),
        e(b"sub/new.txt", File, &edited),
    ];
    check(
        &a,
        &b,
        &[
            (Some(b"d/moved.txt"), Some(b"e/moved.txt"), 100),
            (Some(b"old.txt"), Some(b"sub/new.txt"), 96),
        ],
    );
}

#[test]
fn rename_with_mode_change() {
    let a = [e(b"a.sh", File, &lines(20))];
    let b = [e(b"b.sh", Executable, &lines(20))];
    check(&a, &b, &[(Some(b"a.sh"), Some(b"b.sh"), 100)]);
}

#[test]
fn symlinks() {
    let a = [
        e(b"link", Symlink, b"target/one"),
        e(b"tolink", File, b"hello\n"),
    ];
    let b = [
        e(b"link", Symlink, b"target/two"),
        e(b"newlink", Symlink, b"../x y"),
        e(b"tolink", Symlink, b"hello"),
    ];
    check(
        &a,
        &b,
        &[
            (Some(b"link"), Some(b"link"), 0),
            (None, Some(b"newlink"), 0),
            (Some(b"tolink"), Some(b"tolink"), 0),
        ],
    );
}

#[test]
fn symlink_to_file() {
    let a = [e(b"x", Symlink, b"somewhere")];
    let b = [e(b"x", File, b"now a file\n")];
    check(&a, &b, &[(Some(b"x"), Some(b"x"), 0)]);
}

#[test]
fn binaries() {
    let a = [
        e(b"b.bin", File, b"bin\0ary"),
        e(b"gone.bin", File, b"\0\0"),
    ];
    let b = [
        e(b"b.bin", File, b"bin\0ary2xx"),
        e(b"new.bin", File, b"x\0y"),
    ];
    check(
        &a,
        &b,
        &[
            (Some(b"b.bin"), Some(b"b.bin"), 0),
            (Some(b"gone.bin"), None, 0),
            (None, Some(b"new.bin"), 0),
        ],
    );
}

#[test]
fn binary_mode_change_only() {
    let a = [e(b"b.bin", File, b"bin\0ary")];
    let b = [e(b"b.bin", Executable, b"bin\0ary")];
    check(&a, &b, &[(Some(b"b.bin"), Some(b"b.bin"), 0)]);
}

#[test]
fn empty_file_added() {
    check(&[], &[e(b"e2", Executable, b"")], &[(None, Some(b"e2"), 0)]);
}

#[test]
fn empty_file_deleted() {
    check(&[e(b"e1", File, b"")], &[], &[(Some(b"e1"), None, 0)]);
}

#[test]
fn trailing_whitespace_in_added_lines() {
    let a = [e(b"f", File, b"a\n")];
    let b = [e(b"f", File, b"a\n  \nb \t\nc\r\nd\n")];
    check(&a, &b, &[(Some(b"f"), Some(b"f"), 0)]);
}

#[test]
fn no_newline_at_eof() {
    let a = [
        e(b"a", File, b"1\n2\n3"),
        e(b"b", File, b"1\n2\n3\n"),
        e(b"c", File, b"x\ny"),
    ];
    let b = [
        e(b"a", File, b"1\n2\n3\n"),
        e(b"b", File, b"1\n2\n3"),
        e(b"c", File, b"x\nz"),
    ];
    check(
        &a,
        &b,
        &[
            (Some(b"a"), Some(b"a"), 0),
            (Some(b"b"), Some(b"b"), 0),
            (Some(b"c"), Some(b"c"), 0),
        ],
    );
}

#[test]
fn added_and_deleted_without_final_newline() {
    let a = [e(b"old", File, b"a\nb")];
    let b = [e(b"new", File, b"c\nd\ne")];
    check(&a, &b, &[(None, Some(b"new"), 0), (Some(b"old"), None, 0)]);
}

#[test]
fn quoted_paths() {
    let a = [
        e(b"sp ace.txt", File, b"1\n"),
        e(b"ol\"d", File, &lines(10)),
    ];
    let b = [
        e(b"sp ace.txt", File, b"2\n"),
        e("\u{e9}t\u{e9}.txt".as_bytes(), File, b"u\n"),
        e(b"n\xffw\\x", File, b"raw\n"),
        e(b"ne\"w", File, &lines(10)),
        e(b"t\tb", File, b"tab\n"),
    ];
    check(
        &a,
        &b,
        &[
            (Some(&b"ol\"d"[..]), Some(&b"ne\"w"[..]), 100),
            (None, Some(&b"n\xffw\\x"[..]), 0),
            (Some(&b"sp ace.txt"[..]), Some(&b"sp ace.txt"[..]), 0),
            (None, Some(&b"t\tb"[..]), 0),
            (None, Some("\u{e9}t\u{e9}.txt".as_bytes()), 0),
        ],
    );
}

#[test]
fn hunks_context_and_function_names() {
    let mut old = String::from("fn first() {\n");
    for i in 0..30 {
        old.push_str(&format!("    body {i}\n"));
        if i == 15 {
            old.push_str("fn second() {   \n");
        }
    }
    let new = old
        .replace("    body 2\n", "    body 2 changed\n")
        .replace("    body 9\n", "    body 9 changed\n")
        .replace("    body 20\n", "")
        .replace("    body 29\n", "    body 29\r\n    extra\n");
    let a = [e(b"src.rs", File, old.as_bytes())];
    let b = [e(b"src.rs", File, new.as_bytes())];
    check(&a, &b, &[(Some(b"src.rs"), Some(b"src.rs"), 0)]);
}

#[test]
fn crlf_lines() {
    let a = [e(b"w.txt", File, b"a\r\nb\r\nc\r\n")];
    let b = [e(b"w.txt", File, b"a\r\nB\r\nc\r\nd")];
    check(&a, &b, &[(Some(b"w.txt"), Some(b"w.txt"), 0)]);
}
