//! Sessions' changes: which snapshots a metadata selector names as changes (a run's or an agent
//! tool call's), and taking back all of them at once while keeping everyone else's edits.
//!
//! A change is a snapshot carrying every selected metadata pair, paired with the snapshot taken
//! just before it in the workspace (the next older row of `log`): what happened between the two
//! is what that run or tool call did. Snapshots that mark a starting point (a run's `before`,
//! an agent's `turn-start`, `session-start`, `before-tool`) are not changes of their own: the
//! edits before them belong to whoever worked then.
//!
//! [`revert_selected`] takes the changes back newest first, each three ways onto the result of
//! the ones after it (base: the change's after state; ours: the live file so far; theirs: its
//! before state), so edits of other sessions and of the user, before or after, are kept. A
//! hunk where the change and a later edit touch the same lines keeps the live lines and is
//! reported as a [`HunkConflict`]; the rest is written as one undoable operation.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::apply::{FileOutcome, Planned, read_current, request_key, write_with_op};
use crate::compare::{DiffRequest, Rev, diff};
use crate::error::{Error, Result};
use crate::id::Id;
use crate::patch::{MergeLabels, MergeOutcome, merge3};
use crate::store::snapshot::{Snapshot, SnapshotRecord};
use crate::store::tree::Kind;
use crate::store::{Reader, Store};

/// Labels of snapshots that mark a starting point rather than a change.
const START_LABELS: [&str; 4] = ["before", "turn-start", "session-start", "before-tool"];

/// One change a selector names: the snapshots on either side of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectedChange {
    /// The state before the change (the next older snapshot of the workspace).
    pub before: Id,
    /// The snapshot carrying the selected metadata, after the change.
    pub after: Id,
    /// The after snapshot's record.
    pub record: Snapshot,
}

/// The workspace `ws`'s changes whose after snapshot carries every pair of `selector`, newest
/// first. Empty `selector` is refused: it would select everything.
pub fn select(
    reader: &Reader,
    ws: u64,
    selector: &[(String, String)],
) -> Result<Vec<SelectedChange>> {
    if selector.is_empty() {
        return Err(Error::EmptySelector);
    }
    let rows = reader.snapshot_records(ws, usize::MAX)?;
    let mut out = Vec::new();
    for (i, (id, r)) in rows.iter().enumerate() {
        let matches = selector.iter().all(|(k, v)| r.meta(k) == Some(v.as_str()));
        if !matches || r.meta("label").is_some_and(|l| START_LABELS.contains(&l)) {
            continue;
        }
        let Some((before, _)) = rows.get(i + 1) else {
            continue;
        };
        out.push(SelectedChange {
            before: *before,
            after: *id,
            record: Snapshot::new(*id, r.clone()),
        });
    }
    Ok(out)
}

/// A hunk of a selected change that could not be taken back because later edits touch the
/// same lines: the live lines were kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HunkConflict {
    /// The file.
    pub path: Vec<u8>,
    /// The change's after snapshot.
    pub after: Id,
    /// The change's before snapshot.
    pub before: Id,
    /// Why (for a whole-file conflict: a deletion against an edit, a binary file...).
    pub why: String,
    /// The lines of the file as the revert leaves them that the hunk covers (1-based first
    /// line and count); `None` for a whole-file conflict.
    pub lines: Option<(usize, usize)>,
    /// What the change wrote there (its after side).
    pub changed: Vec<u8>,
    /// What is there now, kept.
    pub live: Vec<u8>,
    /// What taking the change back would have put there.
    pub reverted: Vec<u8>,
}

/// What [`revert_selected`] did (or, with `check`, would do).
#[derive(Clone, Debug, Default)]
pub struct SelectionRevert {
    /// The changes taken back, newest first.
    pub changes: Vec<SelectedChange>,
    /// Per path: "restore" (set back), "delete", "create" (a deleted file brought back),
    /// "merge" (set back around later edits), "unchanged".
    pub files: Vec<FileOutcome>,
    /// Hunks kept as they are because later edits overlap them.
    pub conflicts: Vec<HunkConflict>,
    /// The snapshot taken before writing.
    pub before: Option<Id>,
    /// The snapshot taken after.
    pub after: Option<Id>,
    /// The operation recorded (None when nothing was written).
    pub op: Option<u64>,
}

/// A file's state while the changes are taken back: kind and content, or absent.
type State = Option<(Kind, Vec<u8>)>;

/// Takes back every change `selector` names in the workspace at `root` (see the module docs).
/// With `check`, nothing is written.
pub fn revert_selected(
    store: &Store,
    root: &Path,
    ws: u64,
    selector: &[(String, String)],
    check: bool,
) -> Result<SelectionRevert> {
    let root = crate::workspace::resolve(root)?;
    let changes = {
        let reader = store.reader()?;
        select(&reader, ws, selector)?
    };
    if changes.is_empty() {
        return Err(Error::NothingSelected(
            selector
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" and "),
        ));
    }
    // Every path any change touched, with the live state, then each change taken back in turn.
    let mut states: Vec<(Vec<u8>, State, State)> = Vec::new(); // (path, live, current)
    let mut conflicts = Vec::new();
    for ch in &changes {
        let d = change_diff(store, ch)?;
        let reader = d.reader();
        for c in &d.changes {
            let base: State = match c.new {
                Some(s) => Some((s.kind, reader.read_blob(&s.id)?)),
                None => None,
            };
            let theirs: State = match c.old {
                Some(s) => Some((s.kind, reader.read_blob(&s.id)?)),
                None => None,
            };
            let i = match states.iter().position(|(p, _, _)| *p == c.path) {
                Some(i) => i,
                None => {
                    let live = read_current(&root, &c.path)?;
                    states.push((c.path.clone(), live.clone(), live));
                    states.len() - 1
                }
            };
            let ours = states[i].2.clone();
            let next = take_back(&c.path, ch, &base, &ours, &theirs, &mut conflicts);
            states[i].2 = next;
        }
    }
    let mut files = Vec::new();
    let mut work = Vec::new();
    for (path, live, now) in states {
        let action = match (&live, &now) {
            _ if live == now => "unchanged",
            (Some(_), None) => "delete",
            (None, Some(_)) => "create",
            _ if conflicts.iter().any(|k: &HunkConflict| k.path == path) => "merge",
            _ => "restore",
        };
        let outcome = FileOutcome {
            path: path.clone(),
            old_path: None,
            action,
            hunks: Vec::new(),
            merged: false,
            conflicts: conflicts.iter().filter(|k| k.path == path).count(),
        };
        if live != now {
            let remove = if now.is_none() {
                vec![path.clone()]
            } else {
                Vec::new()
            };
            work.push(Planned {
                outcome: outcome.clone(),
                write: now.map(|(k, data)| (path.clone(), k, data)),
                remove,
            });
        }
        files.push(outcome);
    }
    let mut report = SelectionRevert {
        changes,
        files,
        conflicts,
        ..SelectionRevert::default()
    };
    if check || work.is_empty() {
        return Ok(report);
    }
    let mut parts: Vec<Vec<u8>> = vec![b"revert-selected".to_vec()];
    for (k, v) in selector {
        parts.push(k.as_bytes().to_vec());
        parts.push(v.as_bytes().to_vec());
    }
    for c in &report.changes {
        parts.push(c.after.0.to_vec());
    }
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    let done = write_with_op(store, &root, "revert", request_key(&refs), &work, false)?;
    report.before = done.before;
    report.after = done.after;
    report.op = Some(done.op);
    Ok(report)
}

/// One change to one path taken back from `ours`: `base` is what the change left, `theirs`
/// what was there before it. Returns the new state; overlapping hunks keep `ours` and are
/// added to `conflicts`.
/// What one selected change did: its two snapshots compared path by path (exact content, no
/// rename pairing: a revert takes back each path as it was).
fn change_diff(store: &Store, ch: &SelectedChange) -> Result<crate::compare::Diff> {
    diff(
        store,
        Rev::Snapshot(ch.before),
        Rev::Snapshot(ch.after),
        None,
        &DiffRequest {
            renames: false,
            rename_score: crate::diff::similar::DEFAULT_RENAME_SCORE,
            paths: Vec::new(),
        },
    )
}

fn take_back(
    path: &[u8],
    ch: &SelectedChange,
    base: &State,
    ours: &State,
    theirs: &State,
    conflicts: &mut Vec<HunkConflict>,
) -> State {
    if ours == theirs {
        return ours.clone();
    }
    if ours == base {
        return theirs.clone();
    }
    let whole = |why: &str, conflicts: &mut Vec<HunkConflict>| {
        conflicts.push(HunkConflict {
            path: path.to_vec(),
            after: ch.after,
            before: ch.before,
            why: why.to_string(),
            lines: None,
            changed: base.as_ref().map(|s| s.1.clone()).unwrap_or_default(),
            live: ours.as_ref().map(|s| s.1.clone()).unwrap_or_default(),
            reverted: theirs.as_ref().map(|s| s.1.clone()).unwrap_or_default(),
        });
        ours.clone()
    };
    let (Some((bk, b)), Some((ok, o)), Some((tk, t))) = (base, ours, theirs) else {
        return whole(
            "created or deleted by the change, and edited since: kept as it is",
            conflicts,
        );
    };
    if [*bk, *ok, *tk].contains(&Kind::Symlink) {
        return whole("a symlink changed since: kept as it is", conflicts);
    }
    if [b, o, t].iter().any(|x| crate::diff::text::is_binary(x)) {
        return whole("a binary file changed since: kept as it is", conflicts);
    }
    let kind = if tk != bk { *tk } else { *ok };
    match merge3(b, o, t, MergeLabels::default()) {
        MergeOutcome::Clean(c) => Some((kind, c)),
        MergeOutcome::Conflict {
            with_markers,
            conflicts: regions,
        } => {
            // Each conflicting region keeps the live lines; the rest of the merge stands.
            let lines: Vec<&[u8]> = with_markers.split_inclusive(|&x| x == b'\n').collect();
            let base_l: Vec<&[u8]> = b.split_inclusive(|&x| x == b'\n').collect();
            let ours_l: Vec<&[u8]> = o.split_inclusive(|&x| x == b'\n').collect();
            let theirs_l: Vec<&[u8]> = t.split_inclusive(|&x| x == b'\n').collect();
            let mut out = Vec::with_capacity(o.len());
            let mut pos = 0;
            for r in &regions {
                for l in &lines[pos..r.output.start] {
                    out.extend_from_slice(l);
                }
                let first = out.iter().filter(|&&x| x == b'\n').count() + 1;
                let kept: Vec<u8> = ours_l[r.ours.clone()].concat();
                out.extend_from_slice(&kept);
                conflicts.push(HunkConflict {
                    path: path.to_vec(),
                    after: ch.after,
                    before: ch.before,
                    why: "edited since, on the lines the change wrote: kept as it is".into(),
                    lines: Some((first, r.ours.len())),
                    changed: base_l[r.base.clone()].concat(),
                    live: kept,
                    reverted: theirs_l[r.theirs.clone()].concat(),
                });
                pos = r.output.end;
            }
            for l in &lines[pos..] {
                out.extend_from_slice(l);
            }
            Some((kind, out))
        }
    }
}

/// Whether a session's changes are still in the live tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    /// Every line it added is there as it wrote it (or, when it only removed, taking it back
    /// would still change the tree).
    Wholly,
    /// Some of its lines are there.
    Partly,
    /// None of its lines are there (taken back, or rewritten since).
    Reverted,
}

impl Presence {
    /// A stable lowercase name for JSON.
    pub fn name(self) -> &'static str {
        match self {
            Presence::Wholly => "wholly",
            Presence::Partly => "partly",
            Presence::Reverted => "reverted",
        }
    }
}

/// One session's summary.
#[derive(Clone, Debug)]
pub struct SessionSummary {
    /// The session id (the `session` metadata).
    pub session: String,
    /// The agent that recorded it, if named.
    pub agent: Option<String>,
    /// Its first snapshot (oldest taken) and that snapshot's time.
    pub first: (Id, i64),
    /// Its last snapshot and time.
    pub last: (Id, i64),
    /// How many snapshots carry the session.
    pub snapshots: usize,
    /// How many of them are changes (see [`select`]).
    pub changes: usize,
    /// The files its changes touched, sorted.
    pub files: Vec<Vec<u8>>,
    /// Lines its changes added.
    pub added: u64,
    /// Lines its changes removed.
    pub removed: u64,
    /// Lines of the live files blamed on its snapshots.
    pub present_lines: u64,
    /// Whether its changes are still in the live tree.
    pub presence: Presence,
}

/// Every session that recorded snapshots in workspace `ws` (root `root`), the most recently
/// active first.
pub fn sessions(store: &Store, root: &Path, ws: u64) -> Result<Vec<SessionSummary>> {
    let root = crate::workspace::resolve(root)?;
    let reader = store.reader()?;
    let rows = reader.snapshot_records(ws, usize::MAX)?;
    let mut order: Vec<String> = Vec::new();
    for (_, r) in &rows {
        if let Some(s) = r.meta(crate::history::SESSION_KEY)
            && !order.iter().any(|o| o == s)
        {
            order.push(s.to_string());
        }
    }
    let mut out = Vec::new();
    for s in order {
        let mine: Vec<&(Id, SnapshotRecord)> = rows
            .iter()
            .filter(|(_, r)| r.meta(crate::history::SESSION_KEY) == Some(s.as_str()))
            .collect();
        let (Some(last), Some(first)) = (mine.first(), mine.last()) else {
            continue;
        };
        let selector = [(crate::history::SESSION_KEY.to_string(), s.clone())];
        let changes = select(&reader, ws, &selector)?;
        let ids: rustc_hash::FxHashSet<Id> = mine.iter().map(|(id, _)| *id).collect();
        let mut files: Vec<Vec<u8>> = Vec::new();
        let (mut added, mut removed) = (0, 0);
        for ch in &changes {
            let d = change_diff(store, ch)?;
            for (c, st) in d.changes.iter().zip(d.stats(&Default::default())?) {
                added += st.insertions;
                removed += st.deletions;
                files.push(c.path.clone());
            }
        }
        files.sort();
        files.dedup();
        // What the session left at its end, and how much of that the live files still have.
        let (mut expected, mut present_lines) = (0u64, 0u64);
        let mine_count = |b: &crate::blame::Blame| {
            b.lines
                .iter()
                .filter(|l| l.origin.as_ref().is_some_and(|o| ids.contains(&o.snapshot)))
                .count() as u64
        };
        for f in &files {
            let Ok(rel) = crate::files::RelPath::new(f.clone()) else {
                continue;
            };
            let at_end = crate::blame::BlameOptions {
                rev: Some(last.0),
                lines: None,
            };
            match crate::blame::blame(store, &reader, ws, &root, &rel, &at_end) {
                Ok(b) => expected += mine_count(&b),
                Err(Error::PathNotInSnapshot { .. }) => {}
                Err(e) => return Err(e),
            }
            let live = root.join(std::ffi::OsStr::from_bytes(f));
            if !std::fs::symlink_metadata(&live).is_ok_and(|m| m.is_file()) {
                continue;
            }
            let b = crate::blame::blame(store, &reader, ws, &root, &rel, &Default::default())?;
            present_lines += mine_count(&b);
        }
        let presence = if expected > 0 {
            match present_lines {
                0 => Presence::Reverted,
                n if n >= expected => Presence::Wholly,
                _ => Presence::Partly,
            }
        } else if changes.is_empty() {
            Presence::Reverted
        } else {
            // Only removals: present while taking them back would change the tree.
            let r = revert_selected(store, &root, ws, &selector, true)?;
            if r.files.iter().any(|f| f.action != "unchanged") {
                Presence::Wholly
            } else {
                Presence::Reverted
            }
        };
        out.push(SessionSummary {
            agent: last.1.meta("agent").map(str::to_string),
            session: s,
            first: (first.0, first.1.time_ns),
            last: (last.0, last.1.time_ns),
            snapshots: mine.len(),
            changes: changes.len(),
            files,
            added,
            removed,
            present_lines,
            presence,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;
    use crate::snapshot::{SnapshotOptions, snapshot};
    use proptest::prelude::*;

    const FILES: usize = 3;
    const LINES: usize = 12;

    /// Who makes an edit.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Actor {
        A,
        B,
        User,
    }

    /// One edit: `actor` sets line `line` of file `file` (or, with `line == LINES`, creates a
    /// file of its own).
    #[derive(Clone, Debug)]
    struct Edit {
        actor: Actor,
        file: usize,
        line: usize,
    }

    fn edit(overlap: bool) -> impl Strategy<Value = Edit> {
        (0..3u8, 0..FILES, 0..LINES / 4, 0..8u8).prop_map(move |(a, file, slot, kind)| {
            let actor = match a {
                0 => Actor::A,
                1 => Actor::B,
                _ => Actor::User,
            };
            // Without overlap, A owns lines 0 mod 4 and the others lines 2 mod 4: every change
            // of A is at least one unchanged line away from everyone else's. With overlap, now
            // and then another actor writes one of A's lines.
            let line = match actor {
                _ if actor == Actor::A && kind == 0 => LINES,
                Actor::A => slot * 4,
                _ if overlap && kind < 2 => slot * 4,
                _ => slot * 4 + 2,
            };
            Edit { actor, file, line }
        })
    }

    fn name(f: usize) -> String {
        format!("f{f}.txt")
    }

    fn render(lines: &[String]) -> Vec<u8> {
        lines
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>()
            .into_bytes()
    }

    /// The tree after `edits`, leaving out `skip`'s: file name -> content.
    fn model(edits: &[Edit], skip: Option<Actor>) -> std::collections::BTreeMap<String, Vec<u8>> {
        let mut files: Vec<Vec<String>> = (0..FILES)
            .map(|f| (0..LINES).map(|l| format!("f{f} line {l}")).collect())
            .collect();
        let mut out = std::collections::BTreeMap::new();
        for (k, e) in edits.iter().enumerate() {
            if Some(e.actor) == skip {
                continue;
            }
            if e.line == LINES {
                out.insert(
                    format!("new{k}.txt"),
                    format!("made by edit {k}\n").into_bytes(),
                );
            } else {
                files[e.file][e.line] = format!("edit {k} by {:?}", e.actor);
            }
        }
        for (f, lines) in files.iter().enumerate() {
            out.insert(name(f), render(lines));
        }
        out
    }

    fn on_disk(ws: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
        std::fs::read_dir(ws)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect()
    }

    /// Plays `edits` on a real workspace: after each of A's or B's a snapshot in that session,
    /// after each user edit a plain snapshot, except the last `live` user edits, left live.
    /// Returns the store, the workspace, and per edit the snapshot that recorded it.
    fn play(edits: &[Edit], live: usize) -> (tempfile::TempDir, Store, Vec<Option<Id>>) {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        for (f, content) in model(&[], None) {
            std::fs::write(ws.join(f), content).unwrap();
        }
        let store = Store::open(&tmp.path().join("store"), Default::default()).unwrap();
        let snap = |meta: Vec<(String, String)>| {
            snapshot(
                &store,
                &ws,
                &SnapshotOptions {
                    meta,
                    ..Default::default()
                },
                &NoProgress,
            )
            .unwrap()
            .report
            .id
            .unwrap()
        };
        snap(Vec::new());
        // User edits after every session's last edit may stay live (no snapshot): a session
        // snapshot after them would record them as its own.
        let last_session = edits.iter().rposition(|e| e.actor != Actor::User);
        let trailing: Vec<usize> = (0..edits.len())
            .filter(|&k| last_session.is_none_or(|l| k > l))
            .collect();
        let live_edits = &trailing[trailing.len().saturating_sub(live)..];
        let mut ids = Vec::new();
        for (k, e) in edits.iter().enumerate() {
            let state = model(&edits[..=k], None);
            for (f, content) in &state {
                if std::fs::read(ws.join(f)).ok().as_ref() != Some(content) {
                    std::fs::write(ws.join(f), content).unwrap();
                }
            }
            let id = match e.actor {
                Actor::User if live_edits.contains(&k) => None,
                Actor::User => Some(snap(Vec::new())),
                a => Some(snap(vec![
                    ("session".into(), format!("{a:?}")),
                    ("label".into(), "tool".into()),
                ])),
            };
            ids.push(id);
        }
        (tmp, store, ids)
    }

    /// Bad selectors and ranges fail with variants of their own, not a string to parse.
    #[test]
    fn selectors_and_line_ranges_fail_with_their_own_variants() {
        let (tmp, store, _) = play(&[], 0);
        let ws = crate::workspace::resolve(&tmp.path().join("ws")).unwrap();
        let wsid = store
            .reader()
            .unwrap()
            .workspace(&ws)
            .unwrap()
            .unwrap()
            .id();
        let r = revert_selected(&store, &ws, wsid, &[], true);
        assert!(matches!(r, Err(Error::EmptySelector)), "{r:?}");
        let nobody = [("session".to_string(), "nobody".to_string())];
        let r = revert_selected(&store, &ws, wsid, &nobody, true);
        assert!(
            matches!(&r, Err(Error::NothingSelected(s)) if s == "session=nobody"),
            "{r:?}"
        );
        let rel = crate::files::RelPath::new(name(0).into_bytes()).unwrap();
        let opts = crate::blame::BlameOptions {
            rev: None,
            lines: Some((5, 99)),
        };
        let r = crate::blame::blame(&store, &store.reader().unwrap(), wsid, &ws, &rel, &opts);
        assert!(
            matches!(
                r,
                Err(Error::LineRange {
                    first: 5,
                    last: 99,
                    lines: LINES
                })
            ),
            "{:?}",
            r.err()
        );
        let bad = crate::store::tags::validate_tag("@x");
        assert!(matches!(bad, Err(Error::BadTagName(_))), "{bad:?}");
    }

    fn check(edits: Vec<Edit>, live: usize, overlap: bool) {
        let (tmp, store, ids) = play(&edits, live);
        let ws = tmp.path().join("ws");
        let wsid = store
            .reader()
            .unwrap()
            .workspace(&crate::workspace::resolve(&ws).unwrap())
            .unwrap()
            .unwrap()
            .id();

        // Blame names, for every line, the snapshot that recorded its last edit.
        for f in 0..FILES {
            let rel = crate::files::RelPath::new(name(f).into_bytes()).unwrap();
            let b = crate::blame::blame(
                &store,
                &store.reader().unwrap(),
                wsid,
                &ws,
                &rel,
                &Default::default(),
            )
            .unwrap();
            for l in &b.lines {
                let text = String::from_utf8_lossy(&l.text);
                let want = text
                    .strip_prefix("edit ")
                    .and_then(|r| r.split(' ').next())
                    .and_then(|k| k.parse::<usize>().ok())
                    .map(|k| ids[k]);
                match want {
                    Some(w) => assert_eq!(l.origin.as_ref().map(|o| o.snapshot), w, "{text}"),
                    None => assert!(l.origin.is_some(), "{text}"),
                }
            }
        }

        let selector = [("session".to_string(), "A".to_string())];
        let has_a = edits.iter().any(|e| e.actor == Actor::A);
        let r = match revert_selected(&store, &ws, wsid, &selector, false) {
            Ok(r) => r,
            Err(Error::NothingSelected(_)) if !has_a => return,
            Err(e) => panic!("{e}"),
        };
        // The lines of A that another actor rewrote later: the conflicts must name them.
        let mut overlapped: Vec<(usize, usize)> = Vec::new();
        for (k, e) in edits.iter().enumerate() {
            if e.actor == Actor::A
                && e.line < LINES
                && edits[k + 1..]
                    .iter()
                    .any(|x| x.actor != Actor::A && x.file == e.file && x.line == e.line)
            {
                overlapped.push((e.file, e.line));
            }
        }
        let got = on_disk(&ws);
        let want = model(&edits, Some(Actor::A));
        if !overlap || overlapped.is_empty() {
            assert!(r.conflicts.is_empty(), "{:?}", r.conflicts);
            assert_eq!(got, want);
        } else {
            for (f, line) in &overlapped {
                assert!(
                    r.conflicts.iter().any(|c| c.path == name(*f).as_bytes()
                        && c.lines.is_some_and(
                            |(first, n)| first <= line + 1 && line + 1 < first + n.max(1)
                        )),
                    "no conflict names {}:{} in {:?}",
                    name(*f),
                    line + 1,
                    r.conflicts
                );
            }
            // Files without a conflict are exactly as if A never edited them.
            for (path, content) in &want {
                if !r.conflicts.iter().any(|c| c.path == path.as_bytes()) {
                    assert_eq!(got.get(path), Some(content), "{path}");
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        #[test]
        fn reverting_a_session_leaves_the_tree_it_never_touched(
            edits in proptest::collection::vec(edit(false), 1..14),
            live in 0..3usize,
        ) {
            check(edits, live, false);
        }

        #[test]
        fn overlapping_edits_are_reported_per_hunk(
            edits in proptest::collection::vec(edit(true), 1..14),
            live in 0..3usize,
        ) {
            check(edits, live, true);
        }
    }
}
