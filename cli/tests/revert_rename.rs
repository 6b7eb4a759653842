//! `revert A B` where A..B renamed a file that a later change edited: the file is renamed back,
//! with the later edits merged in.

use crate::common;

use std::fs;

use common::*;

const WRITER: &[u8] = b"fn a() {}\n\nfn b() {}\n\nfn c() {}\n\nfn d() {}\n";

#[test]
fn revert_of_a_rename_follows_the_file_and_keeps_later_edits() {
    let e = Env::new();
    e.write("src/writer.rs", WRITER);
    e.write("src/other.rs", b"other\n");
    e.ok(&["init"]);
    e.ok(&["snapshot", "--tag", "s3-before"]);
    // S3: the rename.
    fs::rename(e.path("src/writer.rs"), e.path("src/out.rs")).unwrap();
    e.ok(&["snapshot", "--tag", "s3-after"]);
    // A later subtask edits the renamed file.
    let edited = String::from_utf8(WRITER.to_vec())
        .unwrap()
        .replace("fn d() {}", "fn d() { println!(\"later\"); }");
    e.write("src/out.rs", edited.as_bytes());
    e.ok(&["snapshot", "-m", "later edit"]);

    let out = e.ok(&["revert", "s3-before", "s3-after", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(!e.path("src/out.rs").exists(), "renamed back: {v}");
    assert_eq!(
        fs::read_to_string(e.path("src/writer.rs")).unwrap(),
        edited,
        "with the later edit"
    );
    assert_eq!(fs::read(e.path("src/other.rs")).unwrap(), b"other\n");
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{v}");
    assert_eq!(files[0]["path"], "src/writer.rs");
    assert_eq!(files[0]["old_path"], "src/out.rs");
    assert_eq!(files[0]["action"], "rename");
    assert_eq!(files[0]["merged"], true);

    // One undoable operation: undo puts the renamed, edited file back.
    e.ok(&["undo"]);
    assert_eq!(fs::read_to_string(e.path("src/out.rs")).unwrap(), edited);
    assert!(!e.path("src/writer.rs").exists());
}

#[test]
fn a_rename_back_onto_an_occupied_path_is_a_conflict_and_writes_nothing() {
    let e = Env::new();
    e.write("a.txt", b"content\n");
    e.ok(&["init"]);
    e.ok(&["snapshot", "--tag", "before"]);
    fs::rename(e.path("a.txt"), e.path("b.txt")).unwrap();
    e.ok(&["snapshot", "--tag", "after"]);
    e.write("b.txt", b"content\nmore\n");
    e.write("a.txt", b"someone else\n");
    let before = list_disk(&e.ws);
    let (code, err) = e.fails(&["revert", "before", "after"]);
    assert_eq!(code, 1, "a conflict exits 1: {err}");
    assert!(err.contains("a.txt"), "{err}");
    assert_eq!(list_disk(&e.ws), before);
}
