//! The CLI's wording of library errors: the library says what went wrong, and where a flag of
//! this CLI gets past it (or names what to give), the hint naming that flag is added here. The
//! printed text is what rewind has always printed; the library's own messages name no flag.

use rewind::Error;
use rewind::carry::{Conflict, Settle};
use rewind::error::{GlobList, HunkSet, Remedy};
use rewind::gc::CompactSkipped;

/// A conflict's reason, with the flags that settle it where the library says a choice does.
pub fn conflict_why(c: &Conflict) -> String {
    match c.settle {
        None => c.why.clone(),
        Some(Settle::ChooseSide) => format!("{}: choose with --theirs or --ours", c.why),
        Some(Settle::ChooseSideOrReject) => {
            format!("{}: choose with --theirs or --ours, or reject it", c.why)
        }
    }
}

/// Why gc did not compact the store, with what to do about it.
pub fn compact_skipped(why: &CompactSkipped) -> String {
    match why {
        CompactSkipped::Busy => format!("{why}; run `rewind gc` again when it is idle"),
        _ => why.to_string(),
    }
}

/// The message printed for `e`.
pub fn message(e: &Error) -> String {
    match e {
        Error::NoStore(_) => format!("{e}: run `rewind init` or pass --store DIR"),
        Error::ReadOnlyStore { .. } => format!("{e} or pass another --store"),
        Error::DiskFull(_) => {
            format!(
                "{e} (`rewind forget` then `rewind gc` frees rewind's own), or put the store \
                 elsewhere with --store DIR or REWIND_STORE"
            )
        }
        Error::DangerousWorkspace(_) => format!("{e} (pass --force if you mean it)"),
        Error::ArtifactExists(_) => format!("{e}: pass --force to replace it"),
        Error::Strict(why) => format!("snapshot aborted (--strict): {why}"),
        Error::TagExists { .. } => format!("{e}: pass --force to move it"),
        Error::TagTaken(tag) => format!("{e}: delete it first with `rewind tag -d {tag}`"),
        Error::WouldOverwriteIgnored { .. } => {
            format!("{e} (move them away, or pass --force to overwrite them)")
        }
        Error::ForeignSnapshot { .. } => format!(
            "{e} (pass --from-workspace to do it anyway, or -C DIR to restore into its own \
             workspace)"
        ),
        Error::ChangedSince { action, op, paths } => format!(
            "refusing to {action} operation {op}: these paths changed since it ran (pass \
             --force to overwrite them): {}",
            paths.join(", ")
        ),
        Error::OverlayChanged(_) => format!("{e} (pass --force to overwrite its changes)"),
        Error::NamespaceUnavailable(_) => format!("{e} (use --backend copy)"),
        Error::OverlayBusy { .. } => format!("{e} (--lock-timeout)"),
        Error::UnknownHunk { overlay, .. } => {
            format!("{e} (ids are listed by `rewind overlay diff {overlay} --json`)")
        }
        Error::BadGlob { list, glob, why } => {
            let flag = match list {
                GlobList::Ignore => "--ignore",
                GlobList::Recorded => "ignore",
                GlobList::WithIgnored => "--with-ignored",
            };
            match glob {
                Some(g) => format!("bad {flag} glob '{g}': {why}"),
                None => format!("bad {flag} globs: {why}"),
            }
        }
        Error::NoSuchHunk {
            among: HunkSet::Between { .. },
            ..
        } => format!("{e} (see `rewind diff A B --json --hunks`)"),
        Error::RemoteObjectMissing { remote, .. } => {
            format!("{e} (run `rewind verify --remote {remote}`)")
        }
        Error::RemoteDamaged { remote, .. } => {
            let e = e.to_string();
            let open = e.strip_suffix(')').unwrap_or(&e);
            format!("{open}; see `rewind verify --remote {remote}`)")
        }
        Error::GcDamaged { .. } => {
            format!("{e}; run `rewind verify --full` to see what is damaged")
        }
        Error::NoSnapshots(_) => format!("{e}: run `rewind snapshot` first"),
        Error::NoAgentSession(_) => {
            format!("{e}: install one with `rewind hook install AGENT`")
        }
        Error::NoSuchTurn { session, .. } => {
            format!("{e} (see `rewind log --session {session}`)")
        }
        Error::NoOverlay(_) | Error::OverlayExists(_) => {
            format!("{e} (see `rewind overlay list`)")
        }
        Error::NoOperation { .. } => format!("{e} (see `rewind op log`)"),
        Error::NoArtifact(_) => format!("{e} (see `rewind artifact ls`)"),
        Error::RemoteExists { name, .. } => {
            format!("{e}: remove it first with `rewind remote rm {name}`")
        }
        Error::NoRemote(name) => {
            format!("{e}: add it with `rewind remote add {name} URL` (see `rewind remote ls`)")
        }
        Error::StateForgotten {
            action,
            op,
            kind,
            which,
            snapshot,
        } => format!(
            "cannot {action} operation {op} ({kind}): its {which} state, snapshot {snapshot}, was \
             forgotten (`rewind forget`), so there is nothing to compare with or go back to"
        ),
        Error::RejectedOverlayGone(_) => {
            format!("{e} (`rewind undo OP` picks another operation)")
        }
        Error::InterruptedWrite {
            kind,
            workspace,
            before,
        } => format!(
            "an interrupted `rewind {kind}` left {} partly written: run the same `rewind {kind}` \
             again to finish it{}",
            workspace.display(),
            before
                .as_ref()
                .map(|b| format!(", or `rewind restore {b}` to go back to the state before it"))
                .unwrap_or_default()
        ),
        Error::RestoreInterrupted {
            kind,
            target,
            before,
            written,
            total,
        } => format!(
            "interrupted: {written} of {total} files of the {kind} written, the rest untouched. \
             Run `rewind restore {target}` to finish it, or `rewind undo` to go back to the \
             state before it{}",
            before
                .as_ref()
                .map(|b| format!(" ({b})"))
                .unwrap_or_default()
        ),
        Error::ConcurrentGc("remote restore") => {
            Error::ConcurrentGc("restore --remote").to_string()
        }
        Error::NoCommand => "rewind run needs a command after --".into(),
        Error::NeedsWorkspace(_) => format!("{e} (use -C DIR)"),
        Error::WhiteoutUnsupported { .. } => format!("{e}, else use --backend copy"),
        Error::StoreInsideWorkspace { .. } => {
            format!("{e} (use a store elsewhere, or --backend copy)")
        }
        Error::NothingToForget => {
            "nothing to forget: give a policy (--keep-last N, --keep-daily N, --keep-within DURATION, ...) or snapshot ids".into()
        }
        Error::ForgetIdsAndPolicy => {
            "give either snapshot ids or a policy (--keep-*), not both".into()
        }
        Error::PatchFailed {
            path,
            why,
            remedy: Some(remedy),
        } => {
            let why = match remedy {
                Remedy::Force => format!("{why} (use --force)"),
                Remedy::ForceToOverwrite => format!("{why} (use --force to overwrite)"),
                Remedy::ForceInReason => match why.strip_suffix(')') {
                    Some(open) => format!("{open}; use --force)"),
                    None => format!("{why} (use --force)"),
                },
                Remedy::ThreeWay => format!("{why} (try --3way)"),
                Remedy::Base => format!("{why} (no base for a three-way merge: pass --base REV)"),
                Remedy::Reverse => format!("{why} (to undo it, apply with -R)"),
            };
            format!("{path}: {why} (nothing was changed)")
        }
        Error::Conflict { path, lines } => {
            let at: Vec<String> = lines
                .iter()
                .map(|(a, b)| format!("lines {a}-{b}"))
                .collect();
            format!(
                "{path}: three-way merge conflicts at {} (use --conflict=markers to write \
                 markers) (nothing was changed)",
                at.join(", ")
            )
        }
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    //! Each hinted error printed as rewind printed it before the hints moved out of the
    //! library (the expected strings are the library's old messages, verbatim).

    use super::message;
    use rewind::Error;
    use rewind::error::{GlobList, Remedy};
    use std::path::PathBuf;

    fn patch(why: &str, remedy: Remedy) -> String {
        message(&Error::PatchFailed {
            path: "f".into(),
            why: why.into(),
            remedy: Some(remedy),
        })
    }

    #[test]
    fn store_and_workspace_errors_name_their_flags() {
        assert_eq!(
            message(&Error::NoStore(PathBuf::from("/s"))),
            "no rewind store at /s: run `rewind init` or pass --store DIR"
        );
        assert_eq!(
            message(&Error::ReadOnlyStore {
                path: PathBuf::from("/s"),
                why: "EROFS".into()
            }),
            "store /s is read-only (EROFS); check its permissions or pass another --store"
        );
        let full = message(&Error::DiskFull(std::io::Error::from_raw_os_error(28)));
        assert!(
            full.starts_with("the disk holding the store is full ("),
            "{full}"
        );
        assert!(
            full.ends_with(
                "); nothing was stored and the store is as it was: free some space (`rewind \
                 forget` then `rewind gc` frees rewind's own), or put the store elsewhere with \
                 --store DIR or REWIND_STORE"
            ),
            "{full}"
        );
        assert_eq!(
            message(&Error::DangerousWorkspace(PathBuf::from("/"))),
            "refusing to use / as a workspace: it is the root or your home directory (pass \
             --force if you mean it)"
        );
        assert_eq!(
            message(&Error::ArtifactExists("k".into())),
            "artifact 'k' already exists: pass --force to replace it"
        );
        assert_eq!(
            message(&Error::Strict("2 unreadable".into())),
            "snapshot aborted (--strict): 2 unreadable"
        );
        assert_eq!(
            message(&Error::NeedsWorkspace("@~1".into())),
            "'@~1' needs a workspace (use -C DIR)"
        );
    }

    #[test]
    fn tag_restore_undo_and_forget_refusals() {
        assert_eq!(
            message(&Error::TagExists {
                name: "v1".into(),
                target: "abcd1234".into()
            }),
            "tag 'v1' already points at abcd1234: pass --force to move it"
        );
        assert_eq!(
            message(&Error::TagTaken("v1".into())),
            "tag 'v1' already exists: delete it first with `rewind tag -d v1`"
        );
        assert_eq!(
            message(&Error::WouldOverwriteIgnored {
                paths: vec!["a".into(), "b".into()]
            }),
            "restoring would overwrite files that the workspace ignores, so no snapshot holds \
             them: a, b (move them away, or pass --force to overwrite them)"
        );
        assert_eq!(
            message(&Error::ForeignSnapshot {
                snapshot: "abcd".into(),
                owner: "/w".into(),
                here: "workspace /x".into()
            }),
            "snapshot abcd belongs to workspace /w, not to workspace /x; restoring it would \
             replace these files with another project's (pass --from-workspace to do it \
             anyway, or -C DIR to restore into its own workspace)"
        );
        assert_eq!(
            message(&Error::ChangedSince {
                action: "undo",
                op: 7,
                paths: vec!["a".into(), "b".into()]
            }),
            "refusing to undo operation 7: these paths changed since it ran (pass --force to \
             overwrite them): a, b"
        );
        assert_eq!(
            message(&Error::NothingToForget),
            "nothing to forget: give a policy (--keep-last N, --keep-daily N, --keep-within DURATION, ...) or snapshot ids"
        );
        assert_eq!(
            message(&Error::ForgetIdsAndPolicy),
            "give either snapshot ids or a policy (--keep-*), not both"
        );
    }

    #[test]
    fn overlay_refusals() {
        assert_eq!(
            message(&Error::NamespaceUnavailable("no userns".into())),
            "the namespace backend is unavailable here: no userns (use --backend copy)"
        );
        assert_eq!(
            message(&Error::OverlayBusy {
                seconds: 2.0,
                what: "waiting for the overlay's lock".into()
            }),
            "gave up after 2.0s waiting for the overlay's lock (--lock-timeout)"
        );
        assert_eq!(
            message(&Error::OverlayChanged(3)),
            "overlay 3 changed since (pass --force to overwrite its changes)"
        );
        assert_eq!(
            message(&Error::UnknownHunk {
                hunk: "h1".into(),
                overlay: 3
            }),
            "no pending hunk 'h1' in overlay 3 (ids are listed by `rewind overlay diff 3 --json`)"
        );
    }

    #[test]
    fn namespace_refusals() {
        assert_eq!(
            message(&Error::WhiteoutUnsupported {
                path: PathBuf::from("/o/x"),
                why: std::io::Error::from_raw_os_error(1),
            }),
            "cannot hide a path the workspace added since the overlay's base (/o/x: Operation \
             not permitted (os error 1)); the kernel must allow unprivileged whiteouts (Linux \
             5.8+), else use --backend copy"
        );
        assert_eq!(
            message(&Error::StoreInsideWorkspace {
                store: PathBuf::from("/w/.s"),
                workspace: PathBuf::from("/w"),
            }),
            "the store /w/.s lies inside the workspace /w: overlayfs cannot take its upper \
             layer from inside its lower one (use a store elsewhere, or --backend copy)"
        );
    }

    #[test]
    fn globs() {
        let bad = |list, glob: Option<&str>| {
            message(&Error::BadGlob {
                list,
                glob: glob.map(str::to_string),
                why: "oops".into(),
            })
        };
        assert_eq!(
            bad(GlobList::Ignore, Some("[")),
            "bad --ignore glob '[': oops"
        );
        assert_eq!(bad(GlobList::Ignore, None), "bad --ignore globs: oops");
        assert_eq!(
            bad(GlobList::WithIgnored, Some("[")),
            "bad --with-ignored glob '[': oops"
        );
        assert_eq!(
            bad(GlobList::WithIgnored, None),
            "bad --with-ignored globs: oops"
        );
        assert_eq!(
            bad(GlobList::Recorded, Some("[")),
            "bad ignore glob '[': oops"
        );
    }

    #[test]
    fn patch_refusals() {
        assert_eq!(
            patch(
                "binary patch: the file differs from the one the patch was made against",
                Remedy::Force
            ),
            "f: binary patch: the file differs from the one the patch was made against (use \
             --force) (nothing was changed)"
        );
        assert_eq!(
            patch(
                "the patch creates this file, but it exists with other content",
                Remedy::ForceToOverwrite
            ),
            "f: the patch creates this file, but it exists with other content (use --force to \
             overwrite) (nothing was changed)"
        );
        assert_eq!(
            patch(
                "the patch deletes this file, but it differs from what the patch expects (3 bytes would remain)",
                Remedy::ForceInReason
            ),
            "f: the patch deletes this file, but it differs from what the patch expects (3 \
             bytes would remain; use --force) (nothing was changed)"
        );
        assert_eq!(
            patch("hunk 1 failed", Remedy::ThreeWay),
            "f: hunk 1 failed (try --3way) (nothing was changed)"
        );
        assert_eq!(
            patch("hunk 1 failed", Remedy::Base),
            "f: hunk 1 failed (no base for a three-way merge: pass --base REV) (nothing was \
             changed)"
        );
        assert_eq!(
            message(&Error::Conflict {
                path: "f".into(),
                lines: vec![(1, 2), (5, 5)]
            }),
            "f: three-way merge conflicts at lines 1-2, lines 5-5 (use --conflict=markers to \
             write markers) (nothing was changed)"
        );
    }

    /// Report data and errors whose hint moved out of the library read as before.
    #[test]
    fn conflicts_hunks_remotes_and_gc_name_their_commands() {
        use super::{compact_skipped, conflict_why};
        use rewind::carry::{Conflict, Settle};
        use rewind::error::HunkSet;
        use rewind::gc::CompactSkipped;
        let raced = |settle| Conflict {
            path: b"f".to_vec(),
            why: "the workspace changed it while a command ran in the overlay".into(),
            regions: 0,
            settle: Some(settle),
        };
        assert_eq!(
            conflict_why(&raced(Settle::ChooseSide)),
            "the workspace changed it while a command ran in the overlay: choose with --theirs \
             or --ours"
        );
        assert_eq!(
            conflict_why(&Conflict {
                why: "the workspace changed it while a command ran in the overlay, which may \
                      have read the workspace's version"
                    .into(),
                ..raced(Settle::ChooseSideOrReject)
            }),
            "the workspace changed it while a command ran in the overlay, which may have read \
             the workspace's version: choose with --theirs or --ours, or reject it"
        );
        assert_eq!(
            message(&Error::NoSuchHunk {
                hunk: "h1".into(),
                among: HunkSet::Between {
                    a: "aaaa".into(),
                    b: "bbbb".into()
                }
            }),
            "no hunk 'h1' in the modified files of aaaa..bbbb (see `rewind diff A B --json \
             --hunks`)"
        );
        assert_eq!(
            message(&Error::NoSuchHunk {
                hunk: "h1".into(),
                among: HunkSet::LiveAgainst
            }),
            "no hunk 'h1' in the workspace's changes against that snapshot (they moved since?)"
        );
        assert_eq!(
            message(&Error::RemoteObjectMissing {
                remote: "r".into(),
                kind: "blob",
                id: "ab".into()
            }),
            "remote 'r': blob ab is in no pack on the remote (run `rewind verify --remote r`)"
        );
        assert_eq!(
            message(&Error::RemoteDamaged {
                remote: "r".into(),
                what: "pack p".into(),
                why: "missing".into(),
                problems: 2
            }),
            "remote 'r': not collecting: pack p: missing (2 problems; see `rewind verify \
             --remote r`)"
        );
        assert_eq!(
            compact_skipped(&CompactSkipped::Busy),
            "another process is using the store; run `rewind gc` again when it is idle"
        );
        assert_eq!(
            message(&Error::GcDamaged {
                kind: "blob",
                id: "ab".into(),
                referrer: "tree cd".into(),
                why: "missing".into()
            }),
            "gc stopped, nothing was deleted: blob ab (reached from tree cd) is missing; run \
             `rewind verify --full` to see what is damaged"
        );
        assert_eq!(
            message(&Error::NoSnapshots(PathBuf::from("/w"))),
            "workspace /w has no snapshot yet: run `rewind snapshot` first"
        );
        assert_eq!(
            message(&Error::NoOverlay("x".into())),
            "no overlay 'x' in this store (see `rewind overlay list`)"
        );
        assert_eq!(
            message(&Error::OverlayExists("x".into())),
            "an overlay named 'x' already exists (see `rewind overlay list`)"
        );
        assert_eq!(
            message(&Error::NoOperation {
                op: 3,
                workspace: PathBuf::from("/w")
            }),
            "no operation 3 in workspace /w (see `rewind op log`)"
        );
        assert_eq!(
            message(&Error::NoArtifact("k".into())),
            "no artifact 'k' in the store (see `rewind artifact ls`)"
        );
        assert_eq!(
            message(&Error::RemoteExists {
                name: "r".into(),
                url: "s3://b".into()
            }),
            "remote 'r' already exists (s3://b): remove it first with `rewind remote rm r`"
        );
        assert_eq!(
            message(&Error::NoRemote("r".into())),
            "no remote 'r': add it with `rewind remote add r URL` (see `rewind remote ls`)"
        );
        assert_eq!(
            message(&Error::StateForgotten {
                action: "undo",
                op: 4,
                kind: "restore".into(),
                which: "before",
                snapshot: "abcd".into()
            }),
            "cannot undo operation 4 (restore): its before state, snapshot abcd, was forgotten \
             (`rewind forget`), so there is nothing to compare with or go back to"
        );
        assert_eq!(
            message(&Error::RejectedOverlayGone(7)),
            "overlay 7 was dropped, so its reject cannot be taken back (`rewind undo OP` picks \
             another operation)"
        );
        assert_eq!(
            message(&Error::InterruptedWrite {
                kind: "apply".into(),
                workspace: PathBuf::from("/w"),
                before: Some("abcd".into())
            }),
            "an interrupted `rewind apply` left /w partly written: run the same `rewind apply` \
             again to finish it, or `rewind restore abcd` to go back to the state before it"
        );
        assert_eq!(
            message(&Error::RestoreInterrupted {
                kind: "restore".into(),
                target: "t1".into(),
                before: Some("b1".into()),
                written: 2,
                total: 5
            }),
            "interrupted: 2 of 5 files of the restore written, the rest untouched. Run `rewind \
             restore t1` to finish it, or `rewind undo` to go back to the state before it (b1)"
        );
        assert_eq!(
            message(&Error::ConcurrentGc("remote restore")),
            "a `rewind gc` ran in another process while this restore --remote was being \
             written; nothing was stored: run it again"
        );
        assert_eq!(
            message(&Error::NoCommand),
            "rewind run needs a command after --"
        );
    }
}
