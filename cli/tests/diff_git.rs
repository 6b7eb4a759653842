//! `rewind diff` and `rewind status` end to end, against real git and GNU patch.
//!
//! Generated pairs of trees (adds, deletes, edits, exact renames, mode changes, file <-> symlink
//! and file <-> directory changes, empty files, missing final newlines, CRLF, spaces and unicode
//! in names) are snapshotted with the real binary and committed to a scratch git repository; the
//! patch `rewind diff A B` prints must apply with `git apply` (and with `patch -p1` where GNU
//! patch can express the change) onto a copy of A and give B byte for byte, and `--numstat` and
//! `--name-status` must equal `git diff -M100%` for the same two commits.
//!
//! git and patch are required: a missing one fails the test and says which.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{Env, Listing, list_disk, make_symlink, set_exec, write_file};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// Tools

/// Fails (never skips) when a required tool is missing, naming it.
fn require(tool: &str) {
    let found = Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "this test needs `{tool}` on PATH and could not run it"
    );
}

/// `git` with a clean, deterministic configuration (the shared helper, tests/support/git.rs).
fn git(dir: &Path) -> Command {
    require("git");
    crate::git::git(dir)
}

/// Runs a command, asserting success; returns stdout.
fn run(c: &mut Command) -> Vec<u8> {
    let out = c.stdin(Stdio::null()).output().expect("spawn");
    assert!(
        out.status.success(),
        "{c:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Runs the rewind binary with only `--store` (no workspace), NO_COLOR set.
fn rewind_at(store: &Path, cwd: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rewind"));
    c.current_dir(cwd)
        .arg("--store")
        .arg(store)
        .env("NO_COLOR", "1")
        .env_remove("REWIND_STORE");
    c
}

fn snapshot(env: &Env) -> String {
    let id = env.ok(&["snapshot", "-q"]).trim().to_string();
    assert!(
        id.len() == 12 && id.bytes().all(|b| b.is_ascii_hexdigit()),
        "snapshot -q printed {id:?}"
    );
    id
}

/// Raw stdout of a rewind command that must succeed.
fn rewind_raw(env: &Env, args: &[&str]) -> Vec<u8> {
    let out = env
        .cmd()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("spawn rewind");
    assert!(
        out.status.success(),
        "rewind {args:?} failed ({:?}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Replaces the ids on `index` lines (rewind's BLAKE3, git's SHA-1) so patches compare.
fn mask_index(patch: &[u8]) -> Vec<Vec<u8>> {
    patch
        .split_inclusive(|&b| b == b'\n')
        .map(|l| {
            let Some(rest) = l.strip_prefix(b"index ") else {
                return l.to_vec();
            };
            let rest = String::from_utf8_lossy(rest);
            let (ids, tail) = match rest.split_once(' ') {
                Some((ids, tail)) => (ids.to_string(), format!(" {tail}")),
                None => (rest.trim_end().to_string(), "\n".to_string()),
            };
            let masked: Vec<&str> = ids
                .split("..")
                .map(|h| {
                    if h.trim_start_matches('0').is_empty() {
                        "Z"
                    } else {
                        "H"
                    }
                })
                .collect();
            format!("index {}{tail}", masked.join("..")).into_bytes()
        })
        .collect()
}

/// The header lines of a patch (no hunk bodies), index ids masked. The generated contents
/// have no line starting with `-- ` or `++ `, so `---`/`+++` lines are labels.
fn headers(patch: &[u8]) -> Vec<String> {
    const HEADS: &[&str] = &[
        "diff --git ",
        "old mode ",
        "new mode ",
        "deleted file mode ",
        "new file mode ",
        "index ",
        "similarity index ",
        "rename from ",
        "rename to ",
        "--- ",
        "+++ ",
        "Binary files ",
    ];
    mask_index(patch)
        .iter()
        .map(|l| lossy(l))
        .filter(|l| HEADS.iter().any(|h| l.starts_with(h)))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The tree model

#[derive(Clone, PartialEq, Eq)]
enum Node {
    File { data: Vec<u8>, exec: bool },
    Link(Vec<u8>),
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Node::File { data, exec } => {
                write!(
                    f,
                    "File{}({:?})",
                    if *exec { "+x" } else { "" },
                    lossy(data)
                )
            }
            Node::Link(t) => write!(f, "Link({:?})", lossy(t)),
        }
    }
}

type Model = BTreeMap<String, Node>;

fn materialize(root: &Path, m: &Model) {
    for (p, n) in m {
        match n {
            Node::File { data, exec } => {
                write_file(root, p.as_bytes(), data);
                set_exec(&root.join(p), *exec);
            }
            Node::Link(t) => make_symlink(root, p.as_bytes(), t),
        }
    }
}

/// Removes everything in `dir` except `.git`.
fn clear_dir(dir: &Path) {
    for e in fs::read_dir(dir).expect("read_dir") {
        let e = e.expect("entry");
        if e.file_name() == ".git" {
            continue;
        }
        let p = e.path();
        if e.file_type().expect("file_type").is_dir() {
            fs::remove_dir_all(&p).expect("rm -r");
        } else {
            fs::remove_file(&p).expect("rm");
        }
    }
}

/// The listing of a model, as `list_disk` would see it, without directories.
fn model_listing(m: &Model) -> Listing {
    m.iter()
        .map(|(p, n)| {
            let v = match n {
                Node::File { data, exec } => ('f', data.clone(), *exec),
                Node::Link(t) => ('l', t.clone(), false),
            };
            (p.as_bytes().to_vec(), v)
        })
        .collect()
}

/// A disk listing without directories (empty directories left behind by a tool that does not
/// prune them are not content; directories holding files are implied by their files).
fn files_only(root: &Path) -> Listing {
    list_disk(root)
        .into_iter()
        .filter(|(_, (k, _, _))| *k != 'd')
        .collect()
}

fn show_listing(l: &Listing) -> String {
    l.iter()
        .map(|(p, (k, d, x))| {
            format!(
                "{k}{} {:?} {:?}\n",
                if *x { "x" } else { "" },
                String::from_utf8_lossy(p),
                String::from_utf8_lossy(d)
            )
        })
        .collect()
}

/// Whether `p` can be added to `m` without a path being both a file and a directory.
fn fits(m: &Model, p: &str) -> bool {
    !m.keys()
        .any(|q| q == p || q.starts_with(&format!("{p}/")) || p.starts_with(&format!("{q}/")))
}

const PATHS: &[&str] = &[
    "a.txt",
    "b",
    "sp ace.txt",
    "ünï cødé.txt",
    "dir/x.txt",
    "dir/y z.md",
    "dir/sub/deep.rs",
    "t",
    "t/inner.txt",
    "dir2/ß",
    "e",
    "crlf.txt",
    "z/last",
    "dir-x",
];

const RENAME_TO: &[&str] = &[
    "moved.txt",
    "dir/moved",
    "nd/ünï moved.txt",
    "dir/sub/mv",
    "dir2/renamed file",
];

const LINES: &[&str] = &[
    "alpha",
    "beta",
    "",
    "  indented",
    "fn main() {",
    "}",
    "ünïcödé ✓",
    "tab\there",
    "gamma ",
];

const TARGETS: &[&str] = &["a.txt", "dir", "../outside", "ünï/ziel", "sp ace"];

/// A file body: lines (text, CRLF) and whether the final newline is cut.
#[derive(Clone, Debug)]
struct Body {
    empty: bool,
    lines: Vec<(usize, bool)>,
    cut: bool,
}

fn body() -> impl Strategy<Value = Body> {
    (
        prop::bool::weighted(0.12),
        prop::collection::vec((0..LINES.len(), prop::bool::weighted(0.25)), 0..10),
        prop::bool::weighted(0.25),
    )
        .prop_map(|(empty, lines, cut)| Body { empty, lines, cut })
}

fn render_lines(lines: &[(usize, bool)]) -> Vec<u8> {
    let mut out = Vec::new();
    for &(i, crlf) in lines {
        out.extend_from_slice(LINES[i].as_bytes());
        out.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
    }
    out
}

#[derive(Clone, Debug)]
enum Spec {
    File(Body, bool),
    Link(usize),
}

fn spec() -> impl Strategy<Value = Spec> {
    prop_oneof![
        4 => (body(), prop::bool::weighted(0.2)).prop_map(|(b, x)| Spec::File(b, x)),
        1 => (0..TARGETS.len()).prop_map(Spec::Link),
    ]
}

#[derive(Clone, Debug)]
enum Op {
    /// Replace lines `at..at+del` (after the first line) by `ins`; maybe toggle the final newline.
    Edit {
        i: usize,
        at: usize,
        del: usize,
        ins: Vec<(usize, bool)>,
        toggle_cut: bool,
    },
    Delete(usize),
    Add(usize, Spec),
    Rename {
        i: usize,
        to: usize,
        chmod: bool,
    },
    Chmod(usize),
    ToLink(usize, usize),
    ToFile(usize, Body),
    ToDir(usize, Body),
    DirToFile(usize, Body),
}

fn op() -> impl Strategy<Value = Op> {
    let idx = 0usize..64;
    prop_oneof![
        4 => (
            idx.clone(),
            0usize..8,
            0usize..3,
            prop::collection::vec((0..LINES.len(), prop::bool::weighted(0.25)), 0..4),
            prop::bool::weighted(0.2)
        )
            .prop_map(|(i, at, del, ins, toggle_cut)| Op::Edit { i, at, del, ins, toggle_cut }),
        2 => idx.clone().prop_map(Op::Delete),
        2 => (0..PATHS.len(), spec()).prop_map(|(p, s)| Op::Add(p, s)),
        3 => (idx.clone(), 0..RENAME_TO.len(), prop::bool::weighted(0.2))
            .prop_map(|(i, to, chmod)| Op::Rename { i, to, chmod }),
        1 => idx.clone().prop_map(Op::Chmod),
        1 => (idx.clone(), 0..TARGETS.len()).prop_map(|(i, t)| Op::ToLink(i, t)),
        1 => (idx.clone(), body()).prop_map(|(i, b)| Op::ToFile(i, b)),
        1 => (idx.clone(), body()).prop_map(|(i, b)| Op::ToDir(i, b)),
        1 => (idx, body()).prop_map(|(i, b)| Op::DirToFile(i, b)),
    ]
}

/// Builds models, giving every non-empty file and every link a unique first line / target so
/// that the only equal contents are intended ones (unchanged files and exact renames).
struct Builder {
    counter: usize,
}

impl Builder {
    fn file(&mut self, b: &Body) -> Vec<u8> {
        if b.empty {
            return Vec::new();
        }
        self.counter += 1;
        let mut data = format!("id {}\n", self.counter).into_bytes();
        data.extend_from_slice(&render_lines(&b.lines));
        if b.cut && data.last() == Some(&b'\n') {
            data.pop();
        }
        data
    }

    fn link(&mut self, t: usize) -> Vec<u8> {
        self.counter += 1;
        format!("{}{}", TARGETS[t], self.counter).into_bytes()
    }

    fn node(&mut self, s: &Spec) -> Node {
        match s {
            Spec::File(b, exec) => Node::File {
                data: self.file(b),
                exec: *exec,
            },
            Spec::Link(t) => Node::Link(self.link(*t)),
        }
    }

    fn build_a(&mut self, specs: &[(usize, Spec)]) -> Model {
        let mut m = Model::new();
        for (p, s) in specs {
            let p = PATHS[*p];
            if fits(&m, p) {
                let n = self.node(s);
                m.insert(p.to_string(), n);
            }
        }
        m
    }

    fn apply(&mut self, m: &mut Model, op: &Op) {
        let keys: Vec<String> = m.keys().cloned().collect();
        let pick = |i: usize| (!keys.is_empty()).then(|| keys[i % keys.len()].clone());
        match op {
            Op::Edit {
                i,
                at,
                del,
                ins,
                toggle_cut,
            } => {
                let Some(p) = pick(*i) else { return };
                let Some(Node::File { data, .. }) = m.get_mut(&p) else {
                    return;
                };
                if data.is_empty() {
                    self.counter += 1;
                    *data = format!("id {}\n", self.counter).into_bytes();
                }
                let mut lines: Vec<Vec<u8>> = data
                    .split_inclusive(|&b| b == b'\n')
                    .map(<[u8]>::to_vec)
                    .collect();
                let cut = data.last() != Some(&b'\n');
                if cut && let Some(l) = lines.last_mut() {
                    // Work on whole lines; the cut is re-applied below.
                    l.push(b'\n');
                }
                let at = 1 + (*at).min(lines.len() - 1);
                let del = (*del).min(lines.len() - at);
                let new: Vec<Vec<u8>> = ins
                    .iter()
                    .map(|&(i, crlf)| {
                        let mut l = LINES[i].as_bytes().to_vec();
                        l.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
                        l
                    })
                    .collect();
                lines.splice(at..at + del, new);
                let mut out = lines.concat();
                if cut != *toggle_cut && out.last() == Some(&b'\n') {
                    out.pop();
                }
                *data = out;
            }
            Op::Delete(i) => {
                if let Some(p) = pick(*i) {
                    m.remove(&p);
                }
            }
            Op::Add(p, s) => {
                let p = PATHS[*p];
                if fits(m, p) {
                    let n = self.node(s);
                    m.insert(p.to_string(), n);
                }
            }
            Op::Rename { i, to, chmod } => {
                let Some(p) = pick(*i) else { return };
                let to = RENAME_TO[*to];
                let mut n = m.remove(&p).expect("picked");
                if !fits(m, to) {
                    m.insert(p, n);
                    return;
                }
                if let (Node::File { exec, .. }, true) = (&mut n, chmod) {
                    *exec = !*exec;
                }
                m.insert(to.to_string(), n);
            }
            Op::Chmod(i) => {
                if let Some(p) = pick(*i)
                    && let Some(Node::File { exec, .. }) = m.get_mut(&p)
                {
                    *exec = !*exec;
                }
            }
            Op::ToLink(i, t) => {
                if let Some(p) = pick(*i)
                    && matches!(m.get(&p), Some(Node::File { .. }))
                {
                    let l = self.link(*t);
                    m.insert(p, Node::Link(l));
                }
            }
            Op::ToFile(i, b) => {
                if let Some(p) = pick(*i)
                    && matches!(m.get(&p), Some(Node::Link(_)))
                {
                    let data = self.file(b);
                    m.insert(p, Node::File { data, exec: false });
                }
            }
            Op::ToDir(i, b) => {
                if let Some(p) = pick(*i) {
                    m.remove(&p);
                    let data = self.file(b);
                    m.insert(format!("{p}/in.txt"), Node::File { data, exec: false });
                }
            }
            Op::DirToFile(i, b) => {
                let Some(p) = pick(*i) else { return };
                let Some((d, _)) = p.split_once('/') else {
                    return;
                };
                let under = format!("{d}/");
                m.retain(|k, _| !k.starts_with(&under));
                let data = self.file(b);
                m.insert(d.to_string(), Node::File { data, exec: false });
            }
        }
    }
}

/// Deleted and added entries with equal content (and link-ness): an exact rename is ambiguous
/// when one side of such a group has more than one member, and git and rewind may then pair
/// differently without either being wrong.
fn renames_ambiguous(a: &Model, b: &Model) -> bool {
    let key = |n: &Node| match n {
        Node::File { data, .. } => (false, data.clone()),
        Node::Link(t) => (true, t.clone()),
    };
    let mut groups: BTreeMap<(bool, Vec<u8>), (usize, usize)> = BTreeMap::new();
    for (p, n) in a {
        if !b.contains_key(p) {
            groups.entry(key(n)).or_default().0 += 1;
        }
    }
    for (p, n) in b {
        if !a.contains_key(p) {
            groups.entry(key(n)).or_default().1 += 1;
        }
    }
    groups
        .values()
        .any(|&(d, ad)| d > 0 && ad > 0 && (d > 1 || ad > 1))
}

// ---------------------------------------------------------------------------------------------
// The scratch git repository

/// A git repository with two commits, A and B.
fn git_repo(root: &Path, a: &Model, b: &Model) -> PathBuf {
    let g = root.join("git");
    fs::create_dir(&g).expect("mkdir");
    run(git(&g).args(["init", "-q", "."]));
    materialize(&g, a);
    run(git(&g).args(["add", "-A"]));
    run(git(&g).args(["commit", "-q", "--allow-empty", "-m", "A"]));
    clear_dir(&g);
    materialize(&g, b);
    run(git(&g).args(["add", "-A"]));
    run(git(&g).args(["commit", "-q", "--allow-empty", "-m", "B"]));
    g
}

fn git_diff(g: &Path, args: &[&str]) -> Vec<u8> {
    run(git(g)
        .args(["diff", "--no-color", "--no-ext-diff", "-M100%"])
        .args(args)
        .args(["HEAD~", "HEAD"]))
}

/// Applies `patch` with `git apply` in `dir`; Err carries git's message.
fn git_apply(dir: &Path, patch: &Path) -> Result<(), String> {
    let o = git(dir)
        .args(["apply", "--whitespace=nowarn"])
        .arg(patch)
        .stdin(Stdio::null())
        .output()
        .expect("spawn git apply");
    if o.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&o.stderr).into_owned())
    }
}

/// Applies `patch` with GNU `patch -p1` in `dir`, with extra arguments.
fn gnu_patch(dir: &Path, patch: &Path, extra: &[&str]) -> Result<(), String> {
    require("patch");
    let o = Command::new("patch")
        .current_dir(dir)
        .args(["-p1", "--batch", "--quiet", "--no-backup-if-mismatch"])
        .args(extra)
        .arg("-i")
        .arg(patch)
        .stdin(Stdio::null())
        .output()
        .expect("spawn patch");
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ))
    }
}

/// Whether `git apply` can take this pair's patch. git 2.x refuses its own patch when a
/// symlink is renamed away and a directory takes its name (`t -> x` moved, `t/in.txt` added):
/// it checks "beyond a symbolic link" against the preimage as if the rename source stayed.
/// A deleted (not renamed) symlink is fine.
fn git_applicable(a: &Model, b: &Model) -> bool {
    !a.iter().any(|(p, n)| {
        let Node::Link(_) = n else { return false };
        let under = format!("{p}/");
        b.keys().any(|k| k.starts_with(&under))
            && b.iter()
                .any(|(q, m)| !a.contains_key(q) && same_content(n, m))
    })
}

/// Whether GNU patch is asked to handle this pair: no mode-only change, no rename (and the
/// generator makes no binaries), and no file <-> directory change: GNU patch 2.7 applies the
/// files of a patch in order but defers deletions to the end, so it cannot create `t/in.txt`
/// while the file `t` it has just been told to delete is still there (nor create `t` before
/// `t/in.txt` is gone). That holds for git's own patches too. Nor can it find the name of a
/// hunkless entry (an empty file added or deleted: only a `diff --git` line, no `---`/`+++`)
/// when the name has a space, which git does not quote.
fn patch_applicable(a: &Model, b: &Model) -> bool {
    let empty = |n: Option<&Node>| matches!(n, Some(Node::File { data, .. }) if data.is_empty());
    let file = |n: Option<&Node>| matches!(n, Some(Node::File { .. }));
    let hunkless_with_space = a.keys().chain(b.keys()).any(|p| {
        let (x, y) = (a.get(p), b.get(p));
        p.contains(' ') && ((empty(x) && !file(y)) || (empty(y) && !file(x)))
    });
    if hunkless_with_space {
        return false;
    }
    let dir_of = |m: &Model, p: &str| {
        let d = format!("{p}/");
        m.keys().any(|k| k.starts_with(&d))
    };
    if a.keys().any(|p| dir_of(b, p)) || b.keys().any(|p| dir_of(a, p)) {
        return false;
    }
    let deleted: Vec<&Node> = a
        .iter()
        .filter(|(p, _)| !b.contains_key(*p))
        .map(|(_, n)| n)
        .collect();
    let renamed = b
        .iter()
        .any(|(p, n)| !a.contains_key(p) && deleted.iter().any(|d| same_content(d, n)));
    let mode_only = a.iter().any(|(p, n)| match (n, b.get(p)) {
        (Node::File { data, exec }, Some(Node::File { data: d2, exec: x2 })) => {
            data == d2 && exec != x2
        }
        _ => false,
    });
    !renamed && !mode_only
}

fn same_content(x: &Node, y: &Node) -> bool {
    match (x, y) {
        (Node::File { data, .. }, Node::File { data: d2, .. }) => data == d2,
        (Node::Link(t), Node::Link(t2)) => t == t2,
        _ => false,
    }
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The whole round trip for one pair of trees.
fn check_pair(a: &Model, b: &Model) -> Result<(), TestCaseError> {
    require("git");
    require("patch");
    let env = Env::new();
    materialize(&env.ws, a);
    let ida = snapshot(&env);
    clear_dir(&env.ws);
    materialize(&env.ws, b);
    let idb = snapshot(&env);
    let g = git_repo(env.tmp.path(), a, b);

    // --numstat and --name-status equal git's (exact renames on both sides).
    for fmt in ["--numstat", "--name-status"] {
        let ours = rewind_raw(&env, &["diff", "-M100%", &ida, &idb, fmt]);
        let theirs = git_diff(&g, &[fmt]);
        prop_assert_eq!(lossy(&ours), lossy(&theirs), "{}", fmt);
    }

    let patch = rewind_raw(&env, &["diff", "-M100%", &ida, &idb]);
    // The patch's headers equal git's (order, quoting, modes, renames, `---`/`+++` labels), up
    // to the ids on `index` lines. Hunk bodies are not compared: rewind's line diff gives git's
    // counts (checked above) but may place an edit elsewhere among equally small diffs (no
    // indent heuristic); the apply checks
    // below prove the hunks right.
    let theirs = git_diff(&g, &[]);
    prop_assert_eq!(headers(&patch), headers(&theirs));
    // The live side (B defaults to the workspace) gives the same patch.
    let live = rewind_raw(&env, &["diff", "-M100%", &ida]);
    prop_assert_eq!(lossy(&live), lossy(&patch), "diff A <live> != diff A B");

    let pfile = env.tmp.path().join("p.diff");
    fs::write(&pfile, &patch).expect("write patch");
    let want = model_listing(b);
    if patch.is_empty() {
        prop_assert_eq!(model_listing(a), want);
        return Ok(());
    }

    // git apply onto a copy of A gives B. Where git refuses its own patch, rewind's apply
    // must still get there.
    let dir = env.tmp.path().join("apply-git");
    fs::create_dir(&dir).expect("mkdir");
    materialize(&dir, a);
    let applier = if git_applicable(a, b) {
        if let Err(e) = git_apply(&dir, &pfile) {
            return Err(TestCaseError::fail(format!(
                "git apply failed: {e}\n{}",
                lossy(&patch)
            )));
        }
        "git apply"
    } else {
        env.ok_in(&dir, &["apply", pfile.to_str().expect("utf-8 temp path")]);
        "rewind apply"
    };
    let got = files_only(&dir);
    prop_assert!(
        got == want,
        "{} result differs\ngot:\n{}want:\n{}patch:\n{}",
        applier,
        show_listing(&got),
        show_listing(&want),
        lossy(&patch)
    );

    // GNU patch -p1 gives B too. Checked with and without --binary: on Linux GNU patch 2.7
    // keeps CRs either way (it strips them only from a patch whose every line ends in CRLF,
    // and a git-format patch has LF header lines), so --binary is not needed for CRLF files.
    if patch_applicable(a, b) {
        for extra in [&[][..], &["--binary"][..]] {
            let dir = env.tmp.path().join(format!("apply-patch{}", extra.len()));
            fs::create_dir(&dir).expect("mkdir");
            materialize(&dir, a);
            if let Err(e) = gnu_patch(&dir, &pfile, extra) {
                return Err(TestCaseError::fail(format!(
                    "patch -p1 {extra:?} failed: {e}\n{}",
                    lossy(&patch)
                )));
            }
            let got = files_only(&dir);
            prop_assert!(
                got == want,
                "patch -p1 {:?} result differs\ngot:\n{}want:\n{}patch:\n{}",
                extra,
                show_listing(&got),
                show_listing(&want),
                lossy(&patch)
            );
        }
    }
    Ok(())
}

fn pair() -> impl Strategy<Value = (Model, Model)> {
    (
        prop::collection::vec((0..PATHS.len(), spec()), 1..10),
        prop::collection::vec(op(), 1..8),
    )
        .prop_map(|(specs, ops)| {
            let mut bld = Builder { counter: 0 };
            let a = bld.build_a(&specs);
            let mut b = a.clone();
            for o in &ops {
                bld.apply(&mut b, o);
            }
            (a, b)
        })
}

proptest! {
    // 32 cases by default (a few seconds); PROPTEST_CASES=N for a longer run.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(32),
        ..ProptestConfig::default()
    })]
    #[test]
    fn generated_trees_match_git_and_apply((a, b) in pair()) {
        prop_assume!(!renames_ambiguous(&a, &b));
        check_pair(&a, &b)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Fixed scenarios

/// Exit code, stdout and stderr of a rewind command in `env`.
fn rewind_out(env: &Env, args: &[&str]) -> (i32, String, String) {
    let out = env
        .cmd()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("spawn rewind");
    (
        out.status.code().unwrap_or(-1),
        lossy(&out.stdout),
        lossy(&out.stderr),
    )
}

#[test]
fn diff_between_snapshots_needs_no_workspace() {
    let env = Env::new();
    env.write("keep.txt", b"same\n");
    env.write("src/main.rs", b"fn main() {\n    old();\n}\n");
    env.write("gone.txt", b"bye\n");
    let a = snapshot(&env);
    env.write("src/main.rs", b"fn main() {\n    new();\n}\n");
    fs::remove_file(env.path("gone.txt")).expect("rm");
    env.write("added.txt", b"hello\n");
    let b = snapshot(&env);

    let formats: &[&[&str]] = &[
        &[],
        &["--stat"],
        &["--numstat"],
        &["--name-status"],
        &["--json"],
    ];
    let before: Vec<String> = formats
        .iter()
        .map(|f| {
            let mut args = vec!["diff", a.as_str(), b.as_str()];
            args.extend_from_slice(f);
            env.ok(&args)
        })
        .collect();
    assert!(before[0].contains("+    new();\n"), "{}", before[0]);

    fs::remove_dir_all(&env.ws).expect("rm -r ws");
    // No -C, run from a directory that is not (and is not under) a workspace.
    let elsewhere = env.tmp.path().join("elsewhere");
    fs::create_dir(&elsewhere).expect("mkdir");
    for (f, want) in formats.iter().zip(&before) {
        let out = rewind_at(&env.store, &elsewhere)
            .args(["diff", &a, &b])
            .args(*f)
            .stdin(Stdio::null())
            .output()
            .expect("spawn rewind");
        assert!(
            out.status.success(),
            "diff {f:?} after the workspace was deleted failed: {}",
            lossy(&out.stderr)
        );
        assert_eq!(&lossy(&out.stdout), want, "diff {f:?}");
    }
}

#[test]
fn exit_code_paths_and_no_renames() {
    let env = Env::new();
    env.write("dir/a.txt", b"1\n");
    env.write("dir2/b.txt", b"2\n");
    env.write("dir-c.txt", b"3\n");
    env.write("old name.txt", b"moving\n");
    let a = snapshot(&env);
    env.write("dir/a.txt", b"1 changed\n");
    env.write("dir2/b.txt", b"2 changed\n");
    env.write("dir-c.txt", b"3 changed\n");
    fs::rename(env.path("old name.txt"), env.path("new name.txt")).expect("mv");
    let b = snapshot(&env);

    // --exit-code: 1 with differences, 0 without; the patch is still printed.
    let (code, out, err) = rewind_out(&env, &["diff", &a, &b, "--exit-code"]);
    assert_eq!(code, 1, "differences with --exit-code: {err}");
    assert!(
        out.starts_with("diff --git a/dir-c.txt b/dir-c.txt\n"),
        "{out}"
    );
    let (code, out, err) = rewind_out(&env, &["diff", &a, &a, "--exit-code"]);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
    let (code, _, err) = rewind_out(&env, &["diff", &a, &b, "--exit-code", "--name-status"]);
    assert_eq!(code, 1, "{err}");
    // Without --exit-code, differences exit 0.
    assert_eq!(rewind_out(&env, &["diff", &a, &b]).0, 0);
    // Live side: the workspace equals @ (= b), then differs.
    assert_eq!(
        rewind_out(&env, &["diff", "--exit-code"]),
        (0, String::new(), String::new())
    );
    env.write("dir/a.txt", b"1 changed again\n");
    let (code, out, _) = rewind_out(&env, &["diff", "--exit-code"]);
    assert_eq!(code, 1);
    assert!(out.contains("+1 changed again\n"), "{out}");

    // -- PATH restricts the diff, to whole path components ("dir" is not "dir2" or "dir-c.txt").
    let ns = |extra: &[&str]| {
        let mut args = vec!["diff", a.as_str(), b.as_str(), "--name-status"];
        args.extend_from_slice(extra);
        env.ok(&args)
    };
    assert_eq!(
        ns(&[]),
        "M\tdir-c.txt\nM\tdir/a.txt\nM\tdir2/b.txt\nR100\told name.txt\tnew name.txt\n"
    );
    assert_eq!(ns(&["--", "dir"]), "M\tdir/a.txt\n");
    assert_eq!(ns(&["--", "dir/"]), "M\tdir/a.txt\n");
    assert_eq!(
        ns(&["--", "dir2/b.txt", "dir-c.txt"]),
        "M\tdir-c.txt\nM\tdir2/b.txt\n"
    );
    assert_eq!(ns(&["--", "nothing/here"]), "");
    let patch = env.ok(&["diff", &a, &b, "--", "dir"]);
    assert_eq!(
        patch
            .lines()
            .filter(|l| l.starts_with("diff --git"))
            .collect::<Vec<_>>(),
        ["diff --git a/dir/a.txt b/dir/a.txt"]
    );
    let (code, out, _) = rewind_out(&env, &["diff", &a, &b, "--exit-code", "--", "nothing"]);
    assert_eq!((code, out.as_str()), (0, ""));
    // A path filter on one side of a rename shows only that side.
    assert_eq!(ns(&["--", "new name.txt"]), "A\tnew name.txt\n");

    // --no-renames: the exact rename becomes a deletion and an addition, as in git.
    assert_eq!(
        ns(&["--no-renames"]),
        "M\tdir-c.txt\nM\tdir/a.txt\nM\tdir2/b.txt\nA\tnew name.txt\nD\told name.txt\n"
    );
    let patch = env.ok(&[
        "diff",
        &a,
        &b,
        "--no-renames",
        "--",
        "old name.txt",
        "new name.txt",
    ]);
    assert!(patch.contains("deleted file mode 100644\n"), "{patch}");
    assert!(patch.contains("new file mode 100644\n"), "{patch}");
    assert!(!patch.contains("rename from"), "{patch}");
    let patch = env.ok(&["diff", &a, &b, "--", "old name.txt", "new name.txt"]);
    assert!(
        patch.contains("similarity index 100%\nrename from old name.txt\nrename to new name.txt\n"),
        "{patch}"
    );
}

#[test]
fn status_json_lists_every_kind_of_change() {
    let env = Env::new();
    env.write("mod.txt", b"before\n");
    env.write("del.txt", b"delete me\n");
    env.write("ren/old.txt", b"rename me\n");
    env.write("run.sh", b"#!/bin/sh\n");
    env.write("link", b"was a file\n");
    env.write("same.txt", b"unchanged\n");
    snapshot(&env);
    let clean: serde_json::Value =
        serde_json::from_str(&env.ok(&["status", "--json"])).expect("json");
    assert_eq!(clean["clean"], true, "{clean}");

    env.write("new dir/added ü.txt", b"new\n");
    env.write("mod.txt", b"after\n");
    fs::remove_file(env.path("del.txt")).expect("rm");
    fs::rename(env.path("ren/old.txt"), env.path("renamed.txt")).expect("mv");
    set_exec(&env.path("run.sh"), true);
    fs::remove_file(env.path("link")).expect("rm");
    make_symlink(&env.ws, b"link", b"same.txt");

    let v: serde_json::Value = serde_json::from_str(&env.ok(&["status", "--json"])).expect("json");
    assert_eq!(v["clean"], false, "{v}");
    let mut got: Vec<(String, String, Option<String>)> = v["changes"]
        .as_array()
        .expect("changes array")
        .iter()
        .map(|c| {
            (
                c["status"].as_str().expect("status").to_string(),
                c["path"].as_str().expect("path").to_string(),
                c["old_path"].as_str().map(str::to_string),
            )
        })
        .collect();
    got.sort();
    let want =
        |s: &str, p: &str, o: Option<&str>| (s.to_string(), p.to_string(), o.map(str::to_string));
    let mut expected = vec![
        want("added", "new dir/added ü.txt", None),
        want("modified", "mod.txt", None),
        want("deleted", "del.txt", None),
        want("renamed", "renamed.txt", Some("ren/old.txt")),
        want("mode_changed", "run.sh", None),
        want("type_changed", "link", None),
    ];
    expected.sort();
    assert_eq!(got, expected, "{v}");
    // The sides say what each path was and is.
    let by_path = |p: &str| {
        v["changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["path"] == p)
            .unwrap_or_else(|| panic!("{p} in {v}"))
            .clone()
    };
    assert_eq!(by_path("run.sh")["old"]["mode"], "100644");
    assert_eq!(by_path("run.sh")["new"]["mode"], "100755");
    assert_eq!(by_path("link")["new"]["mode"], "120000");
    assert!(by_path("del.txt")["new"].is_null());
    assert!(by_path("new dir/added ü.txt")["old"].is_null());
}

#[test]
fn binary_files_match_git() {
    let env = Env::new();
    let bin1 = b"\x00\x01\x02binary\n".to_vec();
    let mut bin2 = bin1.clone();
    bin2.extend_from_slice(b"more\x00\n");
    let a: Model = [
        ("bin.dat", bin1.clone()),
        ("to-binary.txt", b"text for now\n".to_vec()),
        ("gone.bin", b"\x00gone".to_vec()),
    ]
    .into_iter()
    .map(|(p, d)| {
        (
            p.to_string(),
            Node::File {
                data: d,
                exec: false,
            },
        )
    })
    .collect();
    let b: Model = [
        ("bin.dat", bin2),
        ("to-binary.txt", b"now \x00 binary\n".to_vec()),
        ("new.bin", b"\x00\xff\xfe".to_vec()),
    ]
    .into_iter()
    .map(|(p, d)| {
        (
            p.to_string(),
            Node::File {
                data: d,
                exec: false,
            },
        )
    })
    .collect();
    materialize(&env.ws, &a);
    let ida = snapshot(&env);
    clear_dir(&env.ws);
    materialize(&env.ws, &b);
    let idb = snapshot(&env);
    let g = git_repo(env.tmp.path(), &a, &b);

    let patch = rewind_raw(&env, &["diff", "-M100%", &ida, &idb]);
    let text = lossy(&patch);
    for line in [
        "Binary files a/bin.dat and b/bin.dat differ\n",
        "Binary files a/to-binary.txt and b/to-binary.txt differ\n",
        "Binary files /dev/null and b/new.bin differ\n",
        "Binary files a/gone.bin and /dev/null differ\n",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    assert_eq!(mask_index(&patch), mask_index(&git_diff(&g, &[])));
    let numstat = lossy(&rewind_raw(
        &env,
        &["diff", "-M100%", &ida, &idb, "--numstat"],
    ));
    assert_eq!(
        numstat,
        "-\t-\tbin.dat\n-\t-\tgone.bin\n-\t-\tnew.bin\n-\t-\tto-binary.txt\n"
    );
    assert_eq!(numstat, lossy(&git_diff(&g, &["--numstat"])));
    assert_eq!(
        lossy(&rewind_raw(
            &env,
            &["diff", "-M100%", &ida, &idb, "--name-status"]
        )),
        lossy(&git_diff(&g, &["--name-status"]))
    );
    assert_eq!(
        lossy(&rewind_raw(&env, &["diff", "-M100%", &ida, &idb, "--stat"])),
        lossy(&git_diff(&g, &["--stat"]))
    );
}

/// Peak resident memory of a running process, in KiB.
fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let s = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let l = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    l.split_whitespace().nth(1)?.parse().ok()
}

/// Spawns rewind with stdout piped, reads one line and closes the pipe: the command must end
/// with status 0 and print nothing on stderr.
fn head_1(env: &Env, args: &[&str]) -> String {
    let mut child = env
        .cmd()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rewind");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut first)
        .expect("read");
    // The reader (and so the pipe) is dropped here.
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("read stderr");
    let status = child.wait().expect("wait");
    assert!(
        status.success() && err.is_empty(),
        "rewind {args:?} | head -1: {status:?}, stderr {err:?}"
    );
    first
}

#[test]
fn huge_added_file_streams_and_closed_pipe_is_quiet() {
    const SIZE: usize = 40 << 20;
    let env = Env::new();
    env.write("small.txt", b"small\n");
    let a = snapshot(&env);
    let mut big = Vec::with_capacity(SIZE + 64);
    let mut n = 0usize;
    while big.len() < SIZE {
        big.extend_from_slice(format!("line {n:09} of a big text file\n").as_bytes());
        n += 1;
    }
    env.write("big.txt", &big);

    // `rewind diff | head -1` on the live side: a closed pipe ends the command quietly.
    assert_eq!(head_1(&env, &["diff"]), "diff --git a/big.txt b/big.txt\n");

    let b = snapshot(&env);
    assert_eq!(
        head_1(&env, &["diff", &a, &b]),
        "diff --git a/big.txt b/big.txt\n"
    );

    // The whole patch, read incrementally and compared by hash and length.
    let header = format!(
        "diff --git a/big.txt b/big.txt\nnew file mode 100644\nindex 0000000..{}\n\
         --- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,{n} @@\n",
        &blake3::hash(&big).to_hex()[..12]
    );
    let mut want = blake3::Hasher::new();
    want.update(header.as_bytes());
    for line in big.split_inclusive(|&c| c == b'\n') {
        want.update(b"+");
        want.update(line);
    }
    let want_len = header.len() + big.len() + n;
    drop(big);

    let mut child = env
        .cmd()
        .args(["diff", &a, &b])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rewind");
    let pid = child.id();
    let mut stdout = child.stdout.take().expect("stdout");
    let mut got = blake3::Hasher::new();
    let mut len = 0usize;
    let mut buf = vec![0u8; 64 << 10];
    let mut peak = None;
    loop {
        let k = stdout.read(&mut buf).expect("read");
        if k == 0 {
            break;
        }
        got.update(&buf[..k]);
        len += k;
        // Most of the output is still to come, so the process is alive and blocked on the pipe.
        if peak.is_none() && len > want_len * 3 / 4 {
            peak = vm_hwm_kib(pid);
        }
    }
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("read stderr");
    assert!(child.wait().expect("wait").success(), "{err}");
    assert_eq!(len, want_len, "patch length");
    assert_eq!(got.finalize(), want.finalize(), "patch content");
    // Streaming: the process never held the 40 MiB file (let alone its 43 MiB patch).
    let peak = peak.expect("peak memory read from /proc while the diff was running");
    eprintln!("rewind diff of a 40 MiB added file: peak RSS {peak} KiB");
    assert!(
        peak < 40 << 10,
        "rewind diff peaked at {peak} KiB for a 40 MiB file"
    );

    assert_eq!(
        env.ok(&["diff", &a, &b, "--numstat"]),
        format!("{n}\t0\tbig.txt\n")
    );
}
