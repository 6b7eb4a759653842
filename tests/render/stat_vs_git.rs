//! `--stat`, `--numstat`, `--name-status` versus real git on a mixed change
//! set, with statistics taken from `write_patch` itself.

use super::common::{Entry, e, fake_id, git_diff};
use rewind::diff::EntryKind::{Executable, File, Symlink};
use rewind::diff::{
    BinarySizes, Change, PatchOptions, Side, StatEntry, Status, write_name_status, write_numstat,
    write_patch, write_stat,
};

fn lines(n: usize, tag: &str) -> Vec<u8> {
    (1..=n)
        .map(|i| format!("{tag} {i}\n"))
        .collect::<String>()
        .into_bytes()
}

/// (old path, new path, similarity) in git's output order.
type Spec<'a> = (Option<&'a [u8]>, Option<&'a [u8]>, u8);

fn entries_for<'a>(
    before: &'a [Entry],
    after: &'a [Entry],
    specs: &[Spec<'a>],
) -> Vec<StatEntry<'a>> {
    let find = |es: &'a [Entry], p: &[u8]| es.iter().find(|x| x.path == p).unwrap();
    let side = |en: &'a Entry| Side {
        path: &en.path,
        kind: en.kind,
        id: fake_id(&en.content),
    };
    specs
        .iter()
        .map(|&(o, n, sim)| {
            let old = o.map(|p| find(before, p));
            let new = n.map(|p| find(after, p));
            let (change, status) = match (old, new) {
                (Some(a), Some(b)) if a.path != b.path => (
                    Change::Renamed {
                        old: side(a),
                        new: side(b),
                        similarity: sim,
                    },
                    Status::Renamed { similarity: sim },
                ),
                (Some(a), Some(b)) => (
                    Change::Modified {
                        old: side(a),
                        new: side(b),
                    },
                    if a.kind.is_type_change(b.kind) {
                        Status::TypeChanged
                    } else {
                        Status::Modified
                    },
                ),
                (None, Some(b)) => (Change::Added { new: side(b) }, Status::Added),
                (Some(a), None) => (Change::Deleted { old: side(a) }, Status::Deleted),
                (None, None) => unreachable!(),
            };
            let oc = old.map(|x| &x.content[..]).unwrap_or_default();
            let nc = new.map(|x| &x.content[..]).unwrap_or_default();
            let st =
                write_patch(&mut Vec::new(), &change, oc, nc, &PatchOptions::default()).unwrap();
            StatEntry {
                path: new.or(old).map(|x| &x.path[..]).unwrap(),
                old_path: if matches!(status, Status::Renamed { .. }) {
                    old.map(|x| &x.path[..])
                } else {
                    None
                },
                status,
                insertions: st.insertions,
                deletions: st.deletions,
                binary: st.binary.then_some(BinarySizes {
                    old: st.old_size,
                    new: st.new_size,
                }),
            }
        })
        .collect()
}

fn compare(before: &[Entry], after: &[Entry], specs: &[Spec]) {
    let entries = entries_for(before, after, specs);
    let mut got = Vec::new();
    write_stat(&mut got, &entries, 80).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&git_diff(before, after, &["--stat"]))
    );
    let mut got = Vec::new();
    write_numstat(&mut got, &entries).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&git_diff(before, after, &["--numstat"]))
    );
    let mut got = Vec::new();
    write_name_status(&mut got, &entries).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&git_diff(before, after, &["--name-status"]))
    );
}

#[test]
fn mixed_change_set() {
    let mut ren2 = lines(30, "r");
    ren2.extend_from_slice(b"r 31\n");
    let before = [
        e(b"b.bin", File, b"bin\0ary"),
        e(b"bm.bin", File, b"\0same"),
        e(b"d/moved.txt", File, &lines(40, "m")),
        e(b"del.txt", File, b"x\n"),
        e(b"empty", File, b""),
        e(b"mod.txt", File, b"a\nb\nc\n"),
        e(b"modeonly", File, b"m\n"),
        e(b"ren.txt", File, &lines(20, "q")),
        e(b"ren2.txt", File, &lines(30, "r")),
        e(b"tolink", File, b"hello\n"),
    ];
    let after = [
        e(b"added.txt", File, b"new\nfile\n"),
        e(b"b.bin", File, b"bin\0ary2xx"),
        e(b"bm.bin", Executable, b"\0same"),
        e(b"e/moved.txt", File, &lines(40, "m")),
        e(b"mod.txt", File, b"a\nB\nc\nd\n"),
        e(b"modeonly", Executable, b"m\n"),
        e(b"ren-new.txt", File, &lines(20, "q")),
        e(b"ren2-new.txt", File, &ren2),
        e(b"t\tb", File, b"tab"),
        e(b"tolink", Symlink, b"target"),
        e("u\u{e9}".as_bytes(), File, b"\xff\xfe\n"),
    ];
    compare(
        &before,
        &after,
        &[
            (None, Some(b"added.txt"), 0),
            (Some(b"b.bin"), Some(b"b.bin"), 0),
            (Some(b"bm.bin"), Some(b"bm.bin"), 0),
            (Some(b"del.txt"), None, 0),
            (Some(b"d/moved.txt"), Some(b"e/moved.txt"), 100),
            (Some(b"empty"), None, 0),
            (Some(b"mod.txt"), Some(b"mod.txt"), 0),
            (Some(b"modeonly"), Some(b"modeonly"), 0),
            (Some(b"ren.txt"), Some(b"ren-new.txt"), 100),
            (Some(b"ren2.txt"), Some(b"ren2-new.txt"), 96),
            (None, Some(b"t\tb"), 0),
            (Some(b"tolink"), Some(b"tolink"), 0),
            (None, Some("u\u{e9}".as_bytes()), 0),
        ],
    );
}

#[test]
fn scaled_bars_and_long_names() {
    let long = b"a/very/long/directory/name/that/goes/on/and/on/and/on/forever/file-name.txt";
    let before = [
        e(b"big.txt", File, &lines(500, "x")),
        e(b"small.txt", File, b"s\n"),
    ];
    let mut big = lines(500, "x");
    big.extend_from_slice(&lines(300, "y"));
    let after = [
        e(long, File, &lines(7, "z")),
        e(b"big.txt", File, &big[200 * 6..]),
        e(b"small.txt", File, b"t\n"),
    ];
    compare(
        &before,
        &after,
        &[
            (None, Some(&long[..]), 0),
            (Some(b"big.txt"), Some(b"big.txt"), 0),
            (Some(b"small.txt"), Some(b"small.txt"), 0),
        ],
    );
}

#[test]
fn single_file_singular_summary() {
    let before = [e(b"f", File, b"a\n")];
    let after = [e(b"f", File, b"a\nb\n")];
    compare(&before, &after, &[(Some(b"f"), Some(b"f"), 0)]);
}
