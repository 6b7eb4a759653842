//! Applying a unified diff (rewind's, git's, GNU diff's) to a workspace, all files or none.
//!
//! Every file's new content is computed in memory first; only when all of them apply is
//! anything written. Then the live state is snapshotted (so `undo` can take the apply back),
//! each file is written through a temporary sibling renamed into place, and the result is
//! snapshotted and recorded as an operation. A hunk that does not apply even with an offset and
//! fuzz is merged three ways when its base is known: from `--base REV`, or from the store when
//! the patch's `index` line names a blob rewind has.

use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::error::{Error, IoContext, Remedy, Result};
use crate::files::{BadPath, Beneath, Lstats, RelPath};
use crate::files::{display, join_rel};
use crate::id::Id;
use crate::patch::{
    ApplyError, ApplyOptions, FilePatch, HunkReport, MergeLabels, MergeOutcome, PatchSet,
    apply_hunks, merge3,
};
use crate::progress::NoProgress;
use crate::snapshot::{SnapshotOptions, snapshot};
use crate::store::Store;
use crate::store::oplog::{self, OpRecord};
use crate::store::pending::PendingWrite;
use crate::store::tree::Kind;

/// How to apply.
#[derive(Clone, Debug)]
pub struct ApplyPatchOptions {
    /// Leading path components to strip (`-p N`, default 1: the `a/` and `b/` prefixes).
    pub strip: usize,
    /// Apply the inverse patch.
    pub reverse: bool,
    /// Only check that it would apply.
    pub check: bool,
    /// Merge three ways when a hunk does not apply and the base is known.
    pub three_way: bool,
    /// A snapshot holding the files the patch was made against.
    pub base: Option<Id>,
    /// On a merge conflict, write git-style markers instead of failing.
    pub conflict_markers: bool,
    /// Create or delete over files whose content differs from what the patch expects.
    pub force: bool,
    /// Most context lines ignored at each end of a hunk; `None` for what the patch's own tool
    /// does: none for a git-style patch (git apply has no fuzz), 2 for a traditional one (GNU
    /// patch's default).
    pub max_fuzz: Option<usize>,
}

impl Default for ApplyPatchOptions {
    fn default() -> Self {
        ApplyPatchOptions {
            strip: 1,
            reverse: false,
            check: false,
            three_way: false,
            base: None,
            conflict_markers: false,
            force: false,
            max_fuzz: None,
        }
    }
}

/// What happened to one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileOutcome {
    /// Path after the patch (the old path for deletions).
    pub path: Vec<u8>,
    /// The path before, for renames and copies.
    pub old_path: Option<Vec<u8>>,
    /// "modify", "create", "delete", "rename", "copy" or "mode".
    pub action: &'static str,
    /// How each hunk was placed.
    pub hunks: Vec<HunkReport>,
    /// Whether a three-way merge was needed.
    pub merged: bool,
    /// Conflict regions left as markers.
    pub conflicts: usize,
}

/// What an apply did.
#[derive(Clone, Debug, Default)]
pub struct ApplyReport {
    /// Per file.
    pub files: Vec<FileOutcome>,
    /// The snapshot taken before writing (None with `check`).
    pub before: Option<Id>,
    /// The snapshot taken after.
    pub after: Option<Id>,
    /// The operation recorded.
    pub op: Option<u64>,
    /// Whether this finished an earlier, interrupted run of the same apply (see
    /// `crate::store::pending`) rather than planning anew.
    pub resumed: bool,
}

/// One planned change to the workspace.
pub(crate) struct Planned {
    pub outcome: FileOutcome,
    /// (path, kind, content) to write.
    pub write: Option<(Vec<u8>, Kind, Vec<u8>)>,
    /// Paths to remove (the old side of a rename, or a deleted file).
    pub remove: Vec<Vec<u8>>,
}

pub(crate) fn fail(path: &[u8], why: impl Into<String>) -> Error {
    Error::PatchFailed {
        path: display(path),
        why: why.into(),
        remedy: None,
    }
}

/// A refusal that `remedy` would get past.
fn refuse(path: &[u8], why: impl Into<String>, remedy: Remedy) -> Error {
    Error::PatchFailed {
        path: display(path),
        why: why.into(),
        remedy: Some(remedy),
    }
}

/// Checks a patch path and returns it: a [`RelPath`] (relative, no `..`; empty and `.`
/// components dropped), not the root, not inside another tool's store.
fn safe_rel(raw: &[u8]) -> Result<Vec<u8>> {
    let rel = RelPath::normalize(raw).map_err(|why| fail(raw, why.to_string()))?;
    if rel.is_root() {
        return Err(fail(raw, BadPath::Empty.to_string()));
    }
    // Another tool's store (a git hook is code that runs): never written, as git apply refuses.
    if rel.components().any(|c| {
        crate::scan::walk::NEVER_ENTER
            .iter()
            .any(|n| c.eq_ignore_ascii_case(n))
    }) {
        return Err(fail(raw, "paths inside .git, .jj or .hg are refused"));
    }
    Ok(rel.into_bytes())
}

/// Refuses a path whose parents (or, unless it is a symlink patch, itself) are symlinks. A
/// parent that the patch itself removes (a symlink or file replaced by a directory) is gone
/// by the time anything is written below it, so the check stops there.
fn check_no_symlink(
    disk: &Lstats,
    rel: &[u8],
    allow_last_symlink: bool,
    removed: &Removed,
) -> Result<()> {
    let comps: Vec<&[u8]> = rel.split(|&b| b == b'/').collect();
    for i in 0..comps.len() {
        let prefix = &rel[..prefix_len(&comps, i)];
        if removed.contains(prefix) {
            break;
        }
        let last = i + 1 == comps.len();
        // A parent already known to be a real directory (most are, for most paths) costs no
        // question to the kernel.
        if !last && disk.is_real_dir(prefix) {
            continue;
        }
        match disk.get(prefix) {
            Some(m) if m.file_type().is_symlink() && !(allow_last_symlink && last) => {
                return Err(fail(
                    rel,
                    format!(
                        "{} is a symlink; refusing to patch through it",
                        join_rel(disk.root(), prefix).display()
                    ),
                ));
            }
            Some(_) => {}
            None => break,
        }
    }
    Ok(())
}

/// Paths the patch deletes or renames away, so that a file may replace a directory, or a
/// directory a file or symlink, within one patch (as `diff -ruN` and git write them).
type Removed = std::collections::HashSet<Vec<u8>>;

/// Byte length of the first `i + 1` components joined by `/`.
fn prefix_len(comps: &[&[u8]], i: usize) -> usize {
    comps[..=i].iter().map(|c| c.len()).sum::<usize>() + i
}

/// Whether a proper parent of `rel` is removed by the patch: `rel` then does not exist yet.
fn under_removed(rel: &[u8], removed: &Removed) -> bool {
    let comps: Vec<&[u8]> = rel.split(|&b| b == b'/').collect();
    (0..comps.len().saturating_sub(1)).any(|i| removed.contains(&rel[..prefix_len(&comps, i)]))
}

/// Whether the directory `rel` holds nothing but paths the patch removes, so that it is
/// gone (emptied and pruned) before a file is written in its place.
fn emptied_by(root: &Path, rel: &[u8], removed: &Removed) -> Result<bool> {
    let dir = join_rel(root, rel);
    for entry in fs::read_dir(&dir).at(&dir)? {
        let entry = entry.at(&dir)?;
        let mut child = rel.to_vec();
        child.push(b'/');
        child.extend_from_slice(entry.file_name().as_bytes());
        let is_dir = entry.file_type().at(entry.path())?.is_dir();
        let gone = if is_dir {
            emptied_by(root, &child, removed)?
        } else {
            removed.contains(&child)
        };
        if !gone {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The workspace-relative path a patch names, `-p` components stripped and checked.
fn patch_rel(raw: &Option<Vec<u8>>, strip: usize) -> Result<Option<Vec<u8>>> {
    let Some(raw) = raw else { return Ok(None) };
    // GNU patch and git refuse an absolute name whatever `-p` strips from it.
    if raw.first() == Some(&b'/') {
        return Err(fail(
            raw,
            "is an absolute path; a patch may only name paths inside the workspace",
        ));
    }
    let s = crate::patch::strip_components(raw, strip).ok_or_else(|| {
        fail(
            raw,
            format!(
                "has fewer than {} leading components to strip (-p)",
                strip + 1
            ),
        )
    })?;
    Ok(Some(safe_rel(s)?))
}

/// Every path whose entry in the workspace the patch set deletes or renames away (see
/// [`Removed`]), even when a later section puts something new there (a type change).
fn removed_paths(set: &PatchSet, strip: usize) -> Result<Removed> {
    let mut removed = Removed::new();
    for fp in set.files.iter().filter(|f| f.is_deleted || f.is_rename) {
        if let Some(old) = patch_rel(&fp.old_path, strip)? {
            removed.insert(old);
        }
    }
    Ok(removed)
}

/// Reads the current content of `rel` (None if absent).
pub(crate) fn read_current(root: &Path, rel: &[u8]) -> Result<Option<(Kind, Vec<u8>)>> {
    let p = join_rel(root, rel);
    match fs::symlink_metadata(&p) {
        Ok(m) if m.file_type().is_symlink() => Ok(Some((
            Kind::Symlink,
            fs::read_link(&p).at(&p)?.as_os_str().as_bytes().to_vec(),
        ))),
        Ok(m) if m.is_file() => {
            let kind = if std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o100 != 0 {
                Kind::Executable
            } else {
                Kind::File
            };
            Ok(Some((kind, fs::read(&p).at(&p)?)))
        }
        Ok(_) => Err(fail(rel, "is a directory or special file")),
        // A parent that is a file (about to become a directory) holds nothing either.
        Err(e)
            if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR) =>
        {
            Ok(None)
        }
        Err(e) => Err(Error::io(p, e)),
    }
}

fn kind_of_mode(mode: Option<u32>, fallback: Kind) -> Kind {
    match mode {
        Some(0o120000) => Kind::Symlink,
        Some(m) if m & 0o100 != 0 => Kind::Executable,
        Some(_) => Kind::File,
        None => fallback,
    }
}

/// Applies `input` (a patch) to the workspace at `root`.
pub fn apply_patch(
    store: &Store,
    root: &Path,
    input: &[u8],
    opts: &ApplyPatchOptions,
) -> Result<ApplyReport> {
    let root = crate::workspace::resolve(root)?;
    let key = request_key(&[format!("apply {opts:?}").as_bytes(), input]);
    if let Some((pending, done)) = resume_pending(store, &root, "apply", key, opts.check)? {
        return Ok(ApplyReport {
            files: resumed_outcomes(&pending),
            before: done.before,
            after: done.after,
            op: Some(done.op),
            resumed: true,
        });
    }
    let mut set = PatchSet::parse(input).map_err(|e| Error::PatchParse(e.to_string()))?;
    if opts.reverse {
        set = set.reverse();
    }
    let reader = store.reader()?;
    let base_root = match opts.base {
        Some(id) => Some(reader.snapshot_record(&id)?.root),
        None => None,
    };
    // The content a blob id (full or a hex prefix from an index line) names, if stored.
    let stored = |hex: Option<&str>| -> Result<Option<Vec<u8>>> {
        // Only rewind's own ids (12+ hex digits): a git patch's 7-digit SHA-1 prefix could
        // match an unrelated BLAKE3 id.
        let Some(hex) = hex.filter(|h| h.len() >= 12 && h.bytes().any(|b| b != b'0')) else {
            return Ok(None);
        };
        match reader.blobs_with_prefix(hex, 2)?.as_slice() {
            [one] => Ok(Some(reader.read_blob(one)?)),
            _ => Ok(None),
        }
    };
    let removed = removed_paths(&set, opts.strip)?;
    let base_of = |rel: &[u8]| -> Result<Option<Vec<u8>>> {
        let Some(r) = base_root else { return Ok(None) };
        match reader.lookup(&r, rel)? {
            Some(e) if e.kind.is_blob() => Ok(Some(reader.read_blob(&e.id)?)),
            _ => Ok(None),
        }
    };
    // Each section applies to what the sections before it made of the workspace (a path may
    // be deleted and created again, or changed by two concatenated diffs), all in memory.
    let mut staged = Staged::new(&root, removed);
    let mut outcomes = Vec::with_capacity(set.files.len());
    for fp in &set.files {
        outcomes.push(plan_file(&mut staged, fp, opts, &stored, &base_of)?);
    }
    let plan = staged.into_plan()?;
    let mut report = ApplyReport {
        files: outcomes,
        ..ApplyReport::default()
    };
    if opts.check {
        return Ok(report);
    }
    drop(reader);

    let done = write_with_op(store, &root, "apply", key, &plan, opts.force)?;
    report.before = done.before;
    report.after = done.after;
    report.op = Some(done.op);
    Ok(report)
}

/// What [`write_with_op`] recorded.
pub(crate) struct Recorded {
    pub before: Option<Id>,
    pub after: Option<Id>,
    pub op: u64,
}

/// Carries out planned writes as one undoable operation of kind `kind`: snapshot the live
/// state, write (each file atomically), snapshot the result, record the operation. If a write
/// fails, the paths already touched are restored from the first snapshot.
pub(crate) fn write_with_op(
    store: &Store,
    root: &Path,
    kind: &str,
    key: Id,
    plan: &[Planned],
    force: bool,
) -> Result<Recorded> {
    let before = bracket(store, root, kind, "pre")?;
    // A touched path that exists but is not in the snapshot just taken, or that the
    // workspace's rules ignore, is outside every snapshot: changing or creating it could not be
    // undone (an undo never deletes what no snapshot looked at).
    if let (Some(id), false) = (before, force) {
        let reader = store.reader()?;
        let rec = reader.snapshot_record(&id)?;
        let tree = rec.root;
        let mut ignores = crate::restore::SnapshotIgnores::new(&reader, &rec)?;
        let mut unsaved = Vec::new();
        let disk = Lstats::new(root);
        for rel in plan
            .iter()
            .flat_map(|p| p.write.iter().map(|w| &w.0).chain(p.remove.iter()))
        {
            let existing = disk.get(rel);
            let unseen = existing.as_ref().is_some_and(|m| !m.is_dir())
                && reader.lookup(&tree, rel)?.is_none();
            if unseen || (existing.is_none() && ignores.excluded(rel, false)) {
                unsaved.push(display(rel));
            }
        }
        if !unsaved.is_empty() {
            return Err(Error::PatchFailed {
                path: unsaved.join(", "),
                why: "ignored by the workspace, so no snapshot holds it and an undo could not bring it back".into(),
                remedy: Some(Remedy::Force),
            });
        }
    }
    let root_bytes = root.as_os_str().as_bytes();
    crate::store::pending::begin(
        store,
        root_bytes,
        &PendingWrite {
            kind: kind.to_string(),
            key,
            before,
            started_ns: crate::files::now_ns(),
            writes: plan.iter().filter_map(|p| p.write.clone()).collect(),
            removes: plan.iter().flat_map(|p| p.remove.iter().cloned()).collect(),
        },
    )?;
    if let Err(e) = write_plan(root, plan) {
        if let Some(id) = before {
            let touched: Vec<RelPath> = plan
                .iter()
                .flat_map(|p| {
                    p.write
                        .iter()
                        .map(|w| w.0.clone())
                        .chain(p.remove.iter().cloned())
                })
                .map(RelPath::trusted)
                .collect();
            let opts = crate::restore::RestoreOptions {
                paths: touched,
                ..Default::default()
            };
            let info = crate::restore::OpInfo {
                kind: format!("{kind}-rollback"),
                reverses: None,
                undoable: false,
            };
            // The restore clears the pending write once the workspace is whole again.
            let _ = crate::restore::restore(store, root, id, &opts, &info, &NoProgress);
        }
        return Err(e);
    }
    finish(store, root, kind, before)
}

/// Snapshots the workspace around a write (`when` is "pre" or "post").
fn bracket(store: &Store, root: &Path, kind: &str, when: &str) -> Result<Option<Id>> {
    let label = format!("{when}-{kind}");
    let opts = SnapshotOptions {
        message: format!("{when} {kind}"),
        meta: vec![("label".into(), label.clone())],
        force: true,
        op_kind: Some(label),
        ..SnapshotOptions::default()
    };
    let outcome = snapshot(store, root, &opts, &NoProgress)?;
    if when == "pre" {
        // What a killed apply or revert left behind; the live state is safely recorded by now.
        crate::snapshot::remove_stale_temps(root, &outcome.stale_temps)?;
    }
    Ok(outcome.report.id)
}

/// Ends a write: the after snapshot, then the operation and the end of the pending record in
/// one transaction.
fn finish(store: &Store, root: &Path, kind: &str, before: Option<Id>) -> Result<Recorded> {
    let after = bracket(store, root, kind, "post")?;
    let root_bytes = root.as_os_str().as_bytes();
    let txn = store.begin_write()?;
    let op = oplog::record(
        &txn,
        OpRecord::new(store, kind, root_bytes.to_vec(), before, after),
    )?;
    crate::store::pending::clear_in(&txn, root_bytes)?;
    txn.commit()?;
    Ok(Recorded { before, after, op })
}

/// Identifies a request (its command, options and input) for `resume_pending`.
pub fn request_key(parts: &[&[u8]]) -> Id {
    let mut h = blake3::Hasher::new();
    for p in parts {
        h.update(&(p.len() as u64).to_le_bytes());
        h.update(p);
    }
    Id::from(h.finalize())
}

/// Deals with a write to `root` that was interrupted (killed between two renames): the same
/// request (`kind`, `key`) finishes it from the journal and returns what it recorded; any other
/// request is refused with what to do, since the workspace may be half-written.
pub(crate) fn resume_pending(
    store: &Store,
    root: &Path,
    kind: &str,
    key: Id,
    check_only: bool,
) -> Result<Option<(PendingWrite, Recorded)>> {
    let Some(p) = crate::store::pending::get(store, root.as_os_str().as_bytes())? else {
        return Ok(None);
    };
    if p.kind != kind || p.key != key || check_only {
        return Err(Error::InterruptedWrite {
            kind: p.kind.clone(),
            workspace: root.to_path_buf(),
            before: p.before.map(|b| b.short()),
        });
    }
    let plan: Vec<Planned> = p
        .writes
        .iter()
        .map(|w| Planned {
            outcome: resumed_outcome(&w.0),
            write: Some(w.clone()),
            remove: Vec::new(),
        })
        .chain(p.removes.iter().map(|r| Planned {
            outcome: resumed_outcome(r),
            write: None,
            remove: vec![r.clone()],
        }))
        .collect();
    write_plan(root, &plan)?;
    let done = finish(store, root, kind, p.before)?;
    Ok(Some((p, done)))
}

/// The new content of a `GIT binary patch`: the old side is checked against the `index` line
/// first (git's full blob id, or rewind's BLAKE3 prefix; `force` skips the check), the result
/// after (git's id), so a patch never applies to the wrong file or yields the wrong bytes.
fn binary_content(
    path: &[u8],
    fp: &FilePatch,
    hunk: &crate::patch::binary::BinaryHunk,
    cur: &[u8],
    force: bool,
) -> Result<Vec<u8>> {
    use crate::patch::binary::{NULL_GIT_ID, git_blob_id};
    let is_git_id = |h: &str| h.len() == 40 && h.bytes().all(|b| b.is_ascii_hexdigit());
    if !fp.is_new && !force {
        let matches = match fp.old_index.as_deref() {
            Some(h) if is_git_id(h) => git_blob_id(cur) == h,
            Some(h) if names_empty_blob(h) => cur.is_empty(),
            Some(h) if h.len() >= 12 => Id::of(cur).hex().starts_with(h),
            _ => false,
        };
        if !matches {
            return Err(refuse(
                path,
                "binary patch: the file differs from the one the patch was made against",
                Remedy::Force,
            ));
        }
    }
    let content = hunk
        .apply(if fp.is_new { b"" } else { cur })
        .map_err(|e| fail(path, format!("binary patch: {e}")))?;
    if let Some(h) = fp
        .new_index
        .as_deref()
        .filter(|h| is_git_id(h) && *h != NULL_GIT_ID)
        && git_blob_id(&content) != h
    {
        return Err(fail(
            path,
            format!(
                "binary patch: the result's id is {}, not {h} as the patch says",
                git_blob_id(&content)
            ),
        ));
    }
    Ok(content)
}

/// Whether an `index` line's id names git's empty blob (`e69de29`, the abbreviation git and
/// rewind write for an empty side of a binary change).
fn names_empty_blob(hex: &str) -> bool {
    hex.len() >= 7 && crate::patch::binary::EMPTY_GIT_ID.starts_with(hex)
}

fn resumed_outcome(path: &[u8]) -> FileOutcome {
    FileOutcome {
        path: path.to_vec(),
        old_path: None,
        action: "resume",
        hunks: Vec::new(),
        merged: false,
        conflicts: 0,
    }
}

/// The per-file report of a resumed write.
pub(crate) fn resumed_outcomes(p: &PendingWrite) -> Vec<FileOutcome> {
    p.writes
        .iter()
        .map(|w| w.0.as_slice())
        .chain(p.removes.iter().map(Vec::as_slice))
        .map(resumed_outcome)
        .collect()
}

type BaseLookup<'a> = dyn Fn(&[u8]) -> Result<Option<Vec<u8>>> + 'a;
type StoredLookup<'a> = dyn Fn(Option<&str>) -> Result<Option<Vec<u8>>> + 'a;

/// Plans one section: reads what it applies to (from `staged`), computes the new content and
/// records the result in `staged`.
fn plan_file(
    staged: &mut Staged,
    fp: &FilePatch,
    opts: &ApplyPatchOptions,
    stored: &StoredLookup,
    base_of: &BaseLookup,
) -> Result<FileOutcome> {
    let default_fuzz = match fp.format {
        crate::patch::PatchFormat::Git => 0,
        crate::patch::PatchFormat::Unified => 2,
    };
    let aopts = &ApplyOptions {
        max_fuzz: opts.max_fuzz.unwrap_or(default_fuzz),
    };
    let paths = FilePaths::resolve(staged, fp, opts.strip)?;
    let mut outcome = FileOutcome {
        path: paths.path.clone(),
        old_path: if fp.is_rename || fp.is_copy {
            paths.old.clone()
        } else {
            None
        },
        action: action_of(fp),
        hunks: Vec::new(),
        merged: false,
        conflicts: 0,
    };
    // git records a submodule as a commit id; the work tree of one is another repository's,
    // so git leaves it alone, and so does rewind.
    if fp.old_mode == Some(SUBMODULE) || fp.new_mode == Some(SUBMODULE) {
        outcome.action = "submodule";
        return Ok(outcome);
    }
    // git applies renames and copies to the tree as it was (so two names can swap); other
    // sections to what the sections before them left.
    let current = if fp.is_rename || fp.is_copy {
        staged.original(&paths.source)?
    } else {
        staged.current(&paths.source, fp.is_new || paths.creates)?
    };
    let creates = fp.is_new || paths.creates;
    let (cur_kind, cur) = match (&current, creates) {
        (Some((k, c)), _) => (*k, c.clone()),
        (None, true) => (Kind::File, Vec::new()),
        (None, false) => return Err(fail(&paths.source, "does not exist in the workspace")),
    };
    let content = if let Some(hunk) = &fp.binary_forward {
        binary_content(&paths.path, fp, hunk, &cur, opts.force)?
    } else if fp.binary {
        stored_binary(&paths.path, fp, &cur, opts.force, stored)?
    } else if creates && current.is_some() {
        let created = create_over(&paths.path, fp, &cur, opts.force, aopts)?;
        if created == cur && kind_of_mode(fp.new_mode, cur_kind) == cur_kind {
            outcome.action = "already-applied";
        }
        created
    } else {
        let texts = TextPatch {
            fp,
            opts,
            aopts,
            stored,
            base_of,
        };
        texts.apply(&paths, &cur, &mut outcome)?
    };
    // A mode the patch does not change (an `index` line's, or none) leaves the file's kind as
    // it is: a 755 file stays executable under a patch made from a 644 copy.
    let kind = match fp.new_mode {
        Some(m) if current.is_none() || creates || fp.old_mode != Some(m) => {
            kind_of_mode(Some(m), cur_kind)
        }
        _ => cur_kind,
    };
    staged.record(fp, paths, kind, content, opts.force)?;
    Ok(outcome)
}

/// git's mode of a submodule (a gitlink).
const SUBMODULE: u32 = 0o160000;

/// The workspace paths a file patch touches, checked.
struct FilePaths {
    /// The old path (none for a created file).
    old: Option<Vec<u8>>,
    /// The path written (the new path, or the old one for a deletion).
    path: Vec<u8>,
    /// Where the current content is read from: the old path, else `path`.
    source: Vec<u8>,
    /// A traditional patch that creates a missing file without saying so (`@@ -0,0` and
    /// ordinary timestamps), as GNU patch and git take it.
    creates: bool,
}

impl FilePaths {
    /// Strips and checks the patch's paths; none may lead through a symlink.
    fn resolve(staged: &Staged, fp: &FilePatch, strip: usize) -> Result<FilePaths> {
        let strip = |p: &Option<Vec<u8>>| patch_rel(p, strip);
        let mut old = if fp.is_new {
            None
        } else {
            strip(&fp.old_path)?
        };
        let mut new = if fp.is_deleted {
            None
        } else {
            strip(&fp.new_path)?
        };
        let mut creates = false;
        if fp.format == crate::patch::PatchFormat::Unified
            && !fp.is_new
            && !fp.is_deleted
            && let (Some(o), Some(n)) = (&old, &new)
        {
            // A traditional patch names one file twice (`f.orig` and `f`, `a/old/f.c` and
            // `b/new/f.c`): GNU patch patches the one that exists, the shorter name if both.
            let chosen = match (staged.exists(o), staged.exists(n)) {
                (true, false) => o.clone(),
                (false, true) => n.clone(),
                (true, true) => gnu_best_name(o, n).to_vec(),
                (false, false) => {
                    creates = fp.hunks.iter().all(|h| h.old_len == 0 && h.old_start == 0);
                    n.clone()
                }
            };
            old = Some(chosen.clone());
            new = Some(chosen);
        }
        let Some(path) = new.clone().or(old.clone()) else {
            return Err(Error::PatchParse("a file patch names no path".into()));
        };
        // A rename or copy moves the entry as it is (git names no mode when it is unchanged),
        // so its source may be a symlink; read_current reads the link, never what it points to.
        let symlink_patch = fp.old_mode == Some(0o120000)
            || fp.new_mode == Some(0o120000)
            || fp.is_rename
            || fp.is_copy;
        for rel in old.iter().chain(new.iter()) {
            check_no_symlink(&staged.disk, rel, symlink_patch, &staged.removed)?;
        }
        let source = old.clone().unwrap_or_else(|| path.clone());
        Ok(FilePaths {
            old,
            path,
            source,
            creates,
        })
    }
}

/// GNU patch's choice between two existing names: fewest components, then the shortest base
/// name, then the shortest name; the old name on a tie.
fn gnu_best_name<'a>(old: &'a [u8], new: &'a [u8]) -> &'a [u8] {
    let key = |p: &[u8]| {
        (
            p.split(|&b| b == b'/').count(),
            crate::files::split_parent(p).1.len(),
            p.len(),
        )
    };
    if key(new) < key(old) { new } else { old }
}

/// The workspace as the sections applied so far leave it: what they wrote or removed, over
/// what is on disk. Nothing is written until every section has applied and the result checks.
struct Staged<'r> {
    root: &'r Path,
    /// Paths whose original entry goes away (see [`Removed`]).
    removed: Removed,
    /// Per path: the new entry, or `None` for removed.
    entries: std::collections::BTreeMap<Vec<u8>, Option<(Kind, Vec<u8>)>>,
    /// Sources of renames: removed at the end unless a section wrote them.
    renamed_away: Vec<Vec<u8>>,
    /// What is on disk, each parent directory checked once.
    disk: Lstats,
}

impl<'r> Staged<'r> {
    fn new(root: &'r Path, removed: Removed) -> Self {
        Staged {
            root,
            removed,
            entries: Default::default(),
            renamed_away: Vec::new(),
            disk: Lstats::new(root),
        }
    }

    /// The entry on disk, as it was before the apply.
    fn original(&self, rel: &[u8]) -> Result<Option<(Kind, Vec<u8>)>> {
        read_current(self.root, rel)
    }

    /// Whether something is at `rel` now (staged or on disk).
    fn exists(&self, rel: &[u8]) -> bool {
        match self.entries.get(rel) {
            Some(e) => e.is_some(),
            None => self.disk.get(rel).is_some_and(|m| !m.is_dir()),
        }
    }

    /// The entry at `rel` after the sections so far. For a creation, a directory the patch
    /// empties, or a path below something the patch removes, holds nothing.
    fn current(&self, rel: &[u8], creating: bool) -> Result<Option<(Kind, Vec<u8>)>> {
        if let Some(e) = self.entries.get(rel) {
            return Ok(e.clone());
        }
        if !creating {
            return read_current(self.root, rel);
        }
        let dir_goes = fs::symlink_metadata(join_rel(self.root, rel)).is_ok_and(|m| m.is_dir())
            && emptied_by(self.root, rel, &self.removed)?;
        if dir_goes || self.removed.contains(rel) || under_removed(rel, &self.removed) {
            Ok(None)
        } else {
            read_current(self.root, rel)
        }
    }

    /// Records a section's result.
    fn record(
        &mut self,
        fp: &FilePatch,
        paths: FilePaths,
        kind: Kind,
        content: Vec<u8>,
        force: bool,
    ) -> Result<()> {
        let FilePaths {
            old, path, source, ..
        } = paths;
        if fp.is_deleted {
            self.entries.insert(source, None);
            return Ok(());
        }
        if (fp.is_rename || fp.is_copy)
            && old.as_ref() != Some(&path)
            && let Some((_, existing)) = self.current(&path, true)?
            && existing != content
            && !force
        {
            return Err(refuse(
                &path,
                "the patch renames or copies onto this path, which already exists with other content",
                Remedy::Force,
            ));
        }
        if fp.is_rename
            && let Some(old) = old
            && old != path
        {
            self.renamed_away.push(old);
        }
        self.entries.insert(path, Some((kind, content)));
        Ok(())
    }

    /// Checks the result as a whole (no path below a file or symlink, no directory where a
    /// file goes, symlink targets the system can hold) and turns it into writes and removals.
    fn into_plan(mut self) -> Result<Vec<Planned>> {
        for old in std::mem::take(&mut self.renamed_away) {
            self.entries.entry(old).or_insert(None);
        }
        let gone: Removed = self
            .entries
            .iter()
            .filter(|(_, e)| e.is_none())
            .map(|(p, _)| p.clone())
            .chain(self.removed.iter().cloned())
            .collect();
        let mut plan = Vec::new();
        for (rel, entry) in &self.entries {
            let Some((kind, content)) = entry else {
                if self.disk.get(rel).is_some_and(|m| !m.is_dir()) {
                    plan.push(Planned {
                        outcome: resumed_outcome(rel),
                        write: None,
                        remove: vec![rel.clone()],
                    });
                }
                continue;
            };
            if *kind == Kind::Symlink && (content.is_empty() || content.contains(&0)) {
                return Err(fail(
                    rel,
                    "the patch makes a symlink with an empty target or one holding a NUL byte",
                ));
            }
            self.check_parents(rel, &gone)?;
            let disk = join_rel(self.root, rel);
            if fs::symlink_metadata(&disk).is_ok_and(|m| m.is_dir())
                && !emptied_by(self.root, rel, &gone)?
            {
                return Err(fail(
                    rel,
                    "a directory stands where the patch writes a file",
                ));
            }
            plan.push(Planned {
                outcome: resumed_outcome(rel),
                write: Some((rel.clone(), *kind, content.clone())),
                remove: Vec::new(),
            });
        }
        Ok(plan)
    }

    /// Refuses `rel` when one of its parents is, after the patch, a file or a symlink: written
    /// by the patch itself (a symlink `evil` and then `evil/pwn`), or on disk and kept.
    fn check_parents(&self, rel: &[u8], gone: &Removed) -> Result<()> {
        let comps: Vec<&[u8]> = rel.split(|&b| b == b'/').collect();
        for i in 0..comps.len().saturating_sub(1) {
            let parent = &rel[..prefix_len(&comps, i)];
            let blocked = match self.entries.get(parent) {
                Some(Some((kind, _))) => Some(*kind),
                Some(None) => None,
                None if gone.contains(parent) => None,
                None if self.disk.is_real_dir(parent) => None,
                None => match self.disk.get(parent) {
                    Some(m) if m.file_type().is_symlink() => Some(Kind::Symlink),
                    Some(m) if !m.is_dir() => Some(Kind::File),
                    _ => None,
                },
            };
            if let Some(kind) = blocked {
                let what = if kind == Kind::Symlink {
                    "a symlink"
                } else {
                    "a file"
                };
                return Err(fail(
                    rel,
                    format!(
                        "{} is {what} after the patch; refusing to write beneath it",
                        display(parent)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// What the file patch does, as reported.
fn action_of(fp: &FilePatch) -> &'static str {
    if fp.is_new {
        "create"
    } else if fp.is_deleted {
        "delete"
    } else if fp.is_rename {
        "rename"
    } else if fp.is_copy {
        "copy"
    } else if fp.hunks.is_empty() && !fp.binary && fp.old_mode != fp.new_mode {
        "mode"
    } else {
        "modify"
    }
}

/// A binary change without data (`Binary files differ`): there are no hunks to check the old
/// side against, so its id must match instead, and the new content must be in the store.
fn stored_binary(
    path: &[u8],
    fp: &FilePatch,
    cur: &[u8],
    force: bool,
    stored: &StoredLookup,
) -> Result<Vec<u8>> {
    let matches_old = fp.old_index.as_deref().is_some_and(|h| {
        (names_empty_blob(h) && cur.is_empty())
            || (h.len() >= 12 && Id::of(cur).hex().starts_with(h))
    });
    if !fp.is_new && !matches_old && !force {
        return Err(refuse(
            path,
            "binary patch: the file differs from the one the patch was made against",
            Remedy::Force,
        ));
    }
    match stored(fp.new_index.as_deref())? {
        Some(c) => Ok(c),
        None if fp.is_deleted => Ok(Vec::new()),
        None => Err(fail(
            path,
            "binary patch: rewind can apply a binary change only when its store holds the new content (a patch rewind made)",
        )),
    }
}

/// Creating over an existing file: fine if it already holds exactly that.
fn create_over(
    path: &[u8],
    fp: &FilePatch,
    cur: &[u8],
    force: bool,
    aopts: &ApplyOptions,
) -> Result<Vec<u8>> {
    let created = apply_hunks(&[], fp, aopts)
        .map_err(|e| fail(path, e.to_string()))?
        .content;
    if created != cur && !force {
        return Err(refuse(
            path,
            "the patch creates this file, but it exists with other content",
            Remedy::ForceToOverwrite,
        ));
    }
    Ok(created)
}

/// A text file patch's hunks, applied to the current content, falling back to a three-way
/// merge with the file's base when they do not apply and that was asked for.
struct TextPatch<'a, 'l> {
    fp: &'a FilePatch,
    opts: &'a ApplyPatchOptions,
    aopts: &'a ApplyOptions,
    stored: &'a StoredLookup<'l>,
    base_of: &'a BaseLookup<'l>,
}

impl TextPatch<'_, '_> {
    fn apply(&self, paths: &FilePaths, cur: &[u8], outcome: &mut FileOutcome) -> Result<Vec<u8>> {
        let (fp, path) = (self.fp, &paths.path);
        match apply_hunks(cur, fp, self.aopts) {
            Ok(applied) => {
                outcome.hunks = applied.hunks;
                Ok(applied.content)
            }
            Err(ApplyError::DeleteLeftContent { .. }) if self.opts.force => Ok(Vec::new()),
            Err(ApplyError::DeleteLeftContent { len }) => Err(refuse(
                path,
                format!(
                    "the patch deletes this file, but it differs from what the patch expects ({len} bytes would remain)"
                ),
                Remedy::ForceInReason,
            )),
            Err(err @ ApplyError::HunkFailed { .. }) => {
                // GNU patch's "Reversed (or previously applied) patch detected".
                let exact = ApplyOptions { max_fuzz: 0 };
                if !self.opts.three_way
                    && self.opts.base.is_none()
                    && apply_hunks(cur, &fp.reverse(), &exact).is_ok()
                {
                    return Err(refuse(
                        path,
                        format!(
                            "{err}; but its reverse applies cleanly, so the patch looks applied already"
                        ),
                        Remedy::Reverse,
                    ));
                }
                let Some(base) = self.base(&paths.source)? else {
                    let remedy = if self.opts.three_way {
                        Remedy::Base
                    } else {
                        Remedy::ThreeWay
                    };
                    return Err(refuse(path, err.to_string(), remedy));
                };
                self.merge(path, &base, cur, outcome)
            }
            Err(e) => Err(fail(path, e.to_string())),
        }
    }

    /// The file's base for a three-way merge, when one was asked for: from the base revision,
    /// else the blob the patch's `index` line names.
    fn base(&self, source: &[u8]) -> Result<Option<Vec<u8>>> {
        if !self.opts.three_way && self.opts.base.is_none() {
            return Ok(None);
        }
        match (self.base_of)(source)? {
            Some(b) => Ok(Some(b)),
            None => (self.stored)(self.fp.old_index.as_deref()),
        }
    }

    /// Applies the patch to `base` and merges the result with the workspace's `cur`.
    fn merge(
        &self,
        path: &[u8],
        base: &[u8],
        cur: &[u8],
        outcome: &mut FileOutcome,
    ) -> Result<Vec<u8>> {
        let theirs = apply_hunks(base, self.fp, self.aopts).map_err(|e| {
            fail(
                path,
                format!("the patch does not apply to its base either: {e}"),
            )
        })?;
        outcome.merged = true;
        let labels = MergeLabels {
            ours: "workspace".into(),
            theirs: "patch".into(),
        };
        match merge3(base, cur, &theirs.content, labels) {
            MergeOutcome::Clean(c) => Ok(c),
            MergeOutcome::Conflict { conflicts, .. } if !self.opts.conflict_markers => {
                Err(Error::Conflict {
                    path: display(path),
                    lines: conflicts
                        .iter()
                        .map(|c| (c.ours.start + 1, c.ours.end))
                        .collect(),
                })
            }
            MergeOutcome::Conflict {
                with_markers,
                conflicts,
            } => {
                outcome.conflicts = conflicts.len();
                Ok(with_markers)
            }
        }
    }
}

/// Removes, then writes: every new content is already in memory, and removing first lets a
/// file take the place of a directory the patch empties, or a directory that of a file.
fn write_plan(root: &Path, plan: &[Planned]) -> Result<()> {
    let dirs = Beneath::open(root)?;
    let written: std::collections::HashSet<&[u8]> = plan
        .iter()
        .filter_map(|p| p.write.as_ref().map(|w| w.0.as_slice()))
        .collect();
    for p in plan {
        // A path both removed and written (a swap of two names) keeps what was written.
        for rel in p.remove.iter().filter(|r| !written.contains(r.as_slice())) {
            if dirs.remove_file(rel)? {
                remove_empty_parents(&dirs, rel);
            }
        }
    }
    for p in plan {
        if let Some((rel, kind, content)) = &p.write {
            if dirs.is_dir(rel) {
                return Err(fail(
                    rel,
                    "a directory stands where the patch writes a file",
                ));
            }
            dirs.write(rel, *kind, &mut content.as_slice())?;
        }
    }
    Ok(())
}

/// Removes directories left empty by a deletion, up to (not including) the root, as git does.
fn remove_empty_parents(dirs: &Beneath, rel: &[u8]) {
    let mut dir = crate::files::split_parent(rel).0;
    while !dir.is_empty() {
        if dirs.remove_dir(dir).ok() != Some(crate::files::DirRemoval::Removed) {
            break;
        }
        dir = crate::files::split_parent(dir).0;
    }
}
