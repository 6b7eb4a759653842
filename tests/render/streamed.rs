//! The streaming writer must produce exactly what the in-memory writer does.

use std::io::{self, BufRead, BufReader};

use super::common::fake_id;
use proptest::prelude::*;
use rewind::diff::{Change, EntryKind, PatchOptions, Side, write_patch, write_patch_streamed};

fn both(content: &[u8], color: bool, cap: usize) {
    let side = Side {
        path: b"dir/f ile",
        kind: EntryKind::Executable,
        id: fake_id(content),
    };
    let opts = PatchOptions {
        color,
        ..PatchOptions::default()
    };
    for (change, old, new) in [
        (Change::Added { new: side }, &b""[..], content),
        (Change::Deleted { old: side }, content, &b""[..]),
    ] {
        let mut want = Vec::new();
        let ws = write_patch(&mut want, &change, old, new, &opts).unwrap();
        let mut got = Vec::new();
        let mut open = || -> io::Result<Box<dyn BufRead>> {
            Ok(Box::new(BufReader::with_capacity(cap, content)))
        };
        let gs = write_patch_streamed(&mut got, &change, &mut open, &opts).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want)
        );
        assert_eq!(gs, ws);
    }
}

#[test]
fn edge_cases() {
    let mut big_text = b"x".repeat(9000);
    big_text.push(0); // NUL after the first 8000 bytes: still text
    for c in [
        &b""[..],
        b"a",
        b"a\n",
        b"a\r\nb\r",
        b"\n\n",
        b"bin\0ary",
        b"t \t\r\n x\n",
        &big_text,
    ] {
        for color in [false, true] {
            for cap in [1, 3, 8192] {
                both(c, color, cap);
            }
        }
    }
}

#[test]
fn content_changing_between_reads_is_an_error() {
    let side = Side {
        path: b"f",
        kind: EntryKind::File,
        id: [1; 32],
    };
    let mut n = 0;
    let mut open = || -> io::Result<Box<dyn BufRead>> {
        n += 1;
        Ok(Box::new(if n == 1 {
            &b"a\nb\n"[..]
        } else {
            &b"a\nb\nc\n"[..]
        }))
    };
    let err = write_patch_streamed(
        &mut Vec::new(),
        &Change::Added { new: side },
        &mut open,
        &PatchOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
}

#[test]
fn modified_is_rejected() {
    let side = Side {
        path: b"f",
        kind: EntryKind::File,
        id: [1; 32],
    };
    let mut open = || -> io::Result<Box<dyn BufRead>> { Ok(Box::new(&b""[..])) };
    let change = Change::Modified {
        old: side,
        new: side,
    };
    let err = write_patch_streamed(
        &mut Vec::new(),
        &change,
        &mut open,
        &PatchOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
}

proptest! {
    #[test]
    fn streamed_equals_in_memory(content in prop::collection::vec(prop::sample::select(b"ab \t\r\n\0".to_vec()), 0..64), color: bool, cap in 1usize..16) {
        both(&content, color, cap);
    }

    /// No panics on arbitrary bytes, whatever the change shape.
    #[test]
    fn never_panics(old in prop::collection::vec(any::<u8>(), 0..200), new in prop::collection::vec(any::<u8>(), 0..200), ctx in 0usize..5, color: bool, binary: bool) {
        let mk = |p: &'static [u8], k, c: &[u8]| Side { path: p, kind: k, id: fake_id(c) };
        let opts = PatchOptions { color, binary, diff: rewind::diff::DiffOptions { context: ctx, ..Default::default() } };
        for change in [
            Change::Modified { old: mk(b"a\x01", EntryKind::File, &old), new: mk(b"a\x01", EntryKind::Symlink, &new) },
            Change::Renamed { old: mk(b"x", EntryKind::File, &old), new: mk(b"y/\xff", EntryKind::Executable, &new), similarity: 250 },
            Change::Modified { old: mk(b"z", EntryKind::File, &old), new: mk(b"z", EntryKind::File, &new) },
        ] {
            write_patch(&mut Vec::new(), &change, &old, &new, &opts).unwrap();
        }
    }
}
