//! Applies every fixture under fixtures/patches/ (made by real git, GNU diff
//! and GNU patch; see fixtures/make-fixtures.sh): each file patch applied to
//! before/ must give exactly after/, with renames, copies, deletions and
//! modes honoured.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use rewind::patch::{ApplyOptions, FilePatch, PatchSet, apply_hunks};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/patches")
}

fn rel(dir: &Path, p: &[u8]) -> PathBuf {
    dir.join(std::ffi::OsStr::from_bytes(p))
}

/// Whether no file or symlink is at `p` (a directory may have taken its place).
fn no_file_at(p: &Path) -> bool {
    !p.symlink_metadata().is_ok_and(|m| !m.is_dir())
}

/// Applies one file patch; returns a description of the reported drift.
fn check_file(case: &Path, fp: &FilePatch) -> String {
    let (before, after) = (case.join("before"), case.join("after"));
    let old_name = fp.old_path_stripped(1);
    let new_name = fp.new_path_stripped(1);
    let old = match old_name {
        Some(p) if !fp.is_new => std::fs::read(rel(&before, p)).unwrap_or_else(|e| {
            panic!(
                "{}: read {:?}: {e}",
                case.display(),
                String::from_utf8_lossy(p)
            )
        }),
        _ => Vec::new(),
    };
    let applied = apply_hunks(&old, fp, &ApplyOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", case.display()));
    match new_name {
        Some(p) if !fp.is_deleted => {
            let want = std::fs::read(rel(&after, p)).unwrap_or_else(|e| {
                panic!(
                    "{}: read after {:?}: {e}",
                    case.display(),
                    String::from_utf8_lossy(p)
                )
            });
            assert_eq!(
                String::from_utf8_lossy(&applied.content),
                String::from_utf8_lossy(&want),
                "{}",
                case.display()
            );
            assert_eq!(applied.content, want);
            if let Some(mode) = fp.new_mode {
                let exec =
                    std::fs::metadata(rel(&after, p)).map(|m| m.permissions().mode() & 0o100 != 0);
                assert_eq!(
                    exec.ok(),
                    Some(mode & 0o100 != 0),
                    "{}: mode",
                    case.display()
                );
            }
        }
        _ => {
            assert!(applied.content.is_empty());
            let gone = old_name.map(|p| rel(&after, p));
            assert!(
                gone.is_some_and(|g| no_file_at(&g)),
                "{}: deleted file still there",
                case.display()
            );
        }
    }
    if fp.is_rename
        && let Some(p) = old_name
    {
        assert!(
            no_file_at(&rel(&after, p)),
            "{}: rename source remains",
            case.display()
        );
    }
    if fp.is_copy
        && let Some(p) = old_name
    {
        assert!(
            rel(&after, p).exists(),
            "{}: copy source removed",
            case.display()
        );
    }
    format!(
        "{:?}",
        applied
            .hunks
            .iter()
            .map(|h| (h.offset, h.fuzz))
            .collect::<Vec<_>>()
    )
}

fn run_case(name: &str) -> Vec<String> {
    let case = root().join(name);
    let input = std::fs::read(case.join("patch.diff")).unwrap_or_else(|e| panic!("{name}: {e}"));
    let set = PatchSet::parse(&input).unwrap_or_else(|e| panic!("{name}: {e}"));
    set.files.iter().map(|fp| check_file(&case, fp)).collect()
}

#[test]
fn every_fixture_applies() {
    let mut names: Vec<String> = std::fs::read_dir(root())
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    assert!(names.len() >= 15, "fixtures missing: {names:?}");
    for name in &names {
        run_case(name);
    }
}

#[test]
fn drift_fixtures_report_offset_and_fuzz() {
    assert_eq!(run_case("offset"), vec!["[(3, 0), (5, 0)]".to_string()]);
    assert_eq!(run_case("fuzz"), vec!["[(0, 1), (0, 1)]".to_string()]);
    assert_eq!(
        run_case("offset-and-fuzz"),
        vec!["[(1, 1), (1, 0)]".to_string()]
    );
}

#[test]
fn fixture_headers_parse_as_expected() {
    let parse = |name: &str| {
        let input = std::fs::read(root().join(name).join("patch.diff")).unwrap_or_default();
        PatchSet::parse(&input).unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let q = parse("quoted-paths");
    let paths: Vec<Vec<u8>> = q
        .files
        .iter()
        .filter_map(|f| f.new_path_stripped(1).map(<[u8]>::to_vec))
        .collect();
    assert!(paths.contains(&"dir with space/café.txt".as_bytes().to_vec()));
    assert!(paths.contains(&b"tab\there".to_vec()));
    assert!(paths.contains(&b"renamed \"quote\"".to_vec()));
    let m = parse("mode-change");
    assert_eq!(
        (m.files[0].old_mode, m.files[0].new_mode),
        (Some(0o100644), Some(0o100755))
    );
    let nd = parse("new-deleted");
    assert_eq!(nd.files.iter().filter(|f| f.is_new).count(), 2);
    assert_eq!(nd.files.iter().filter(|f| f.is_deleted).count(), 2);
    assert!(parse("rename-pure").files[0].is_rename);
    assert!(parse("copy-edit").files.iter().any(|f| f.is_copy));
    assert_eq!(parse("many-hunks").files[0].hunks.len(), 5);
    let gnu = parse("gnu-diff-ruN");
    assert!(gnu.files.iter().any(|f| f.is_new) && gnu.files.iter().any(|f| f.is_deleted));
}
