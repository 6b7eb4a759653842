//! Every Rust file under a tests/ directory is compiled: a test file that no `mod` declares is
//! silently never built nor run (the CLI's tests are one binary, `autotests = false`, and this
//! package's are modules of `engine.rs`), so its tests would pass by not existing. The check
//! follows `mod NAME;` declarations (and their `#[path]`s) from each test binary's root, as
//! rustc resolves them, and lists the files it never reaches.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The files reached from `root` through `mod` declarations (`root` included), canonical.
fn declared(root: &Path) -> BTreeSet<PathBuf> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![(root.to_path_buf(), true)];
    while let Some((file, mod_rs)) = todo.pop() {
        let file = file
            .canonicalize()
            .unwrap_or_else(|e| panic!("a declared module {}: {e}", file.display()));
        if !seen.insert(file.clone()) {
            continue;
        }
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        let dir = file.parent().expect("a file's directory");
        // A `mod x;` in a.rs (not a mod.rs or a root) lives in a/x.rs.
        let children = if mod_rs {
            dir.to_path_buf()
        } else {
            dir.join(file.file_stem().expect("a file name"))
        };
        let mut path_attr: Option<String> = None;
        for line in text.lines().map(str::trim) {
            if let Some(rest) = line.strip_prefix("#[path = \"") {
                path_attr = rest.strip_suffix("\"]").map(str::to_string);
                continue;
            }
            if line.starts_with("#[") {
                continue;
            }
            let decl = line
                .strip_prefix("pub ")
                .or_else(|| line.strip_prefix("pub(crate) "))
                .unwrap_or(line);
            if let Some(name) = decl.strip_prefix("mod ").and_then(|n| n.strip_suffix(';')) {
                match path_attr.take() {
                    // A `#[path]` is relative to the declaring file's directory; the file it
                    // names declares its own children beside itself only if it is a mod.rs.
                    Some(p) => {
                        let target = dir.join(&p);
                        let is_mod_rs = target.file_name().is_some_and(|f| f == "mod.rs");
                        todo.push((target, is_mod_rs));
                    }
                    None => {
                        let flat = children.join(format!("{name}.rs"));
                        if flat.exists() {
                            todo.push((flat, false));
                        } else {
                            todo.push((children.join(name).join("mod.rs"), true));
                        }
                    }
                }
            } else {
                path_attr = None;
            }
        }
    }
    seen
}

/// The Rust files under `dir` (recursively) that none of `roots` reaches.
fn forgotten(dir: &Path, roots: &[PathBuf]) -> Vec<PathBuf> {
    let reached: BTreeSet<PathBuf> = roots.iter().flat_map(|r| declared(r)).collect();
    let mut all = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                all.push(path);
            }
        }
    }
    let mut out: Vec<PathBuf> = all
        .into_iter()
        .filter(|p| !reached.contains(&p.canonicalize().expect("a listed file")))
        .collect();
    out.sort();
    out
}

#[test]
fn no_forgotten_test_files() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    // This package keeps cargo's automatic test targets: each tests/*.rs is a binary root.
    let lib_roots: Vec<PathBuf> = std::fs::read_dir(repo.join("tests"))
        .expect("tests/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    let cli_manifest =
        std::fs::read_to_string(repo.join("cli/Cargo.toml")).expect("cli/Cargo.toml");
    assert!(
        cli_manifest.contains("autotests = false") && cli_manifest.contains("\"tests/main.rs\""),
        "the CLI's tests are the one binary tests/main.rs; this check assumes so"
    );
    let mut missing = forgotten(&repo.join("tests"), &lib_roots);
    missing.extend(forgotten(
        &repo.join("cli/tests"),
        &[repo.join("cli/tests/main.rs")],
    ));
    assert!(
        !repo.join("serve/tests").exists(),
        "serve/tests: add its binaries' roots to this check"
    );
    assert!(
        missing.is_empty(),
        "test files no `mod` declares, so never compiled or run: {missing:?}"
    );
}

/// The check finds a file nobody declares, and follows `#[path]` and nested modules.
#[test]
fn a_forgotten_file_is_found() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path();
    std::fs::create_dir_all(d.join("group")).expect("mkdir");
    std::fs::create_dir_all(d.join("shared")).expect("mkdir");
    std::fs::write(
        d.join("main.rs"),
        "mod group;\n#[path = \"shared/util.rs\"]\nmod util;\n",
    )
    .expect("write");
    std::fs::write(d.join("group/mod.rs"), "mod one;\n").expect("write");
    std::fs::write(d.join("group/one.rs"), "").expect("write");
    std::fs::write(d.join("shared/util.rs"), "").expect("write");
    std::fs::write(d.join("group/two.rs"), "").expect("write");
    std::fs::write(d.join("stray.rs"), "").expect("write");
    let missing = forgotten(d, &[d.join("main.rs")]);
    let names: Vec<String> = missing
        .iter()
        .map(|p| p.strip_prefix(d).expect("under").display().to_string())
        .collect();
    assert_eq!(names, ["group/two.rs", "stray.rs"]);
}
