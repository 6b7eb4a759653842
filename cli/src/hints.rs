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

/// What is printed for a library error: the message (the library's, or a rewording in this
/// CLI's terms where the library names a setting the user gave as a flag), the errors that
/// caused it, and hints, each printed on its own line, naming what to run or pass.
pub struct Report {
    /// The error's sentence.
    pub message: String,
    /// The lower errors that caused it, outermost first.
    pub causes: Vec<String>,
    /// What to do about it, in this CLI's terms.
    pub hints: Vec<String>,
}

/// The [`Report`] of `e`.
pub fn report(e: &Error) -> Report {
    Report {
        message: headline(e),
        causes: e.causes(),
        hints: hints(e),
    }
}

/// The whole report on one line, for a reader that gets one string (an MCP tool's error, a
/// hook's log line, another message that quotes it): the message, `: ` and each cause, then
/// the hints in parentheses.
pub fn message(e: &Error) -> String {
    let r = report(e);
    let mut s = r.message;
    for cause in r.causes {
        s.push_str(": ");
        s.push_str(&cause);
    }
    if !r.hints.is_empty() {
        s.push_str(&format!(" ({})", r.hints.join("; ")));
    }
    s
}

/// The error's sentence: the library's, except where it speaks of a setting this CLI takes as a
/// flag, or of a step the user takes with a command.
fn headline(e: &Error) -> String {
    match e {
        Error::Strict(why) => format!("snapshot aborted (--strict): {why}"),
        Error::BadGlob { list, glob, why } => {
            let flag = match list {
                GlobList::Ignore => "--ignore",
                GlobList::Recorded => "ignore",
                GlobList::WithIgnored => "--with-ignored",
                GlobList::Find => "find",
            };
            match glob {
                Some(g) => format!("bad {flag} glob '{g}': {why}"),
                None => format!("bad {flag} globs: {why}"),
            }
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
        Error::ConcurrentGc(what) => {
            let what = match *what {
                "remote restore" => "restore --remote",
                w => w,
            };
            format!(
                "a `rewind gc` ran in another process while this {what} was being written; \
                 nothing was stored: run it again"
            )
        }
        Error::NoCommand => "rewind run needs a command after --".into(),
        Error::NothingToForget => {
            "nothing to forget: give a policy (--keep-last N, --keep-daily N, --keep-within DURATION, ...) or snapshot ids".into()
        }
        Error::ForgetIdsAndPolicy => {
            "give either snapshot ids or a policy (--keep-*), not both".into()
        }
        _ => e.to_string(),
    }
}

/// What to do about `e`, in this CLI's flags and commands; none where the message says it all.
pub fn hints(e: &Error) -> Vec<String> {
    let one = |h: &str| vec![h.to_string()];
    match e {
        Error::NoStore(_) => one("run `rewind init`, or pass --store DIR"),
        Error::ReadOnlyStore { .. } => one("pass another --store"),
        Error::DiskFull(_) => vec![
            "`rewind forget` then `rewind gc` frees rewind's own space".into(),
            "or put the store elsewhere with --store DIR or REWIND_STORE".into(),
        ],
        Error::DangerousWorkspace(_) => one("pass --force if you mean it"),
        Error::ArtifactExists(_) => one("pass --force to replace it"),
        Error::TagExists { .. } => one("pass --force to move it"),
        Error::TagTaken(tag) => vec![format!("delete it first with `rewind tag -d {tag}`")],
        Error::WouldOverwriteIgnored { .. } => {
            one("move them away, or pass --force to overwrite them")
        }
        Error::ForeignSnapshot { .. } => one(
            "pass --from-workspace to do it anyway, or -C DIR to restore into its own workspace",
        ),
        Error::ChangedSince { .. } => one("pass --force to overwrite them"),
        Error::OverlayChanged(_) => one("pass --force to overwrite its changes"),
        Error::NamespaceUnavailable(_) => one("use --backend copy"),
        Error::OverlayBusy { .. } => one("a longer --lock-timeout waits longer"),
        Error::UnknownRun { overlay, .. } => vec![format!(
            "runs are listed by `rewind overlay diff {overlay} --by-run`"
        )],
        Error::UnknownHunk { overlay, .. } => vec![format!(
            "ids are listed by `rewind overlay diff {overlay} --json`"
        )],
        Error::NoSuchHunk {
            among: HunkSet::Between { .. },
            ..
        } => one("see `rewind diff A B --json --hunks`"),
        Error::ZipNames { .. } => one(
            "export them as tar (`--format tar`, the default), which keeps names as bytes, or leave \
             them out with `-- PATH...`",
        ),
        Error::RemoteObjectMissing { remote, .. } | Error::RemoteDamaged { remote, .. } => {
            vec![format!("see `rewind verify --remote {remote}`")]
        }
        Error::RemoteForged { remote, .. } => {
            vec![format!("see `rewind verify --remote {remote} --full`")]
        }
        Error::RemotePasswordMissing { new: false, .. } => one(
            "set REWIND_REMOTE_PASSWORD or REWIND_REMOTE_PASSWORD_FILE, or run it at a terminal \
             to be asked",
        ),
        Error::RemotePasswordMissing { new: true, .. } => one(
            "set REWIND_REMOTE_NEW_PASSWORD, give --new-password-file PATH or --new-key-file \
             PATH, or run it at a terminal to be asked",
        ),
        Error::RemoteKeyNeeded {
            remote,
            encrypted: true,
            ..
        } => one(&format!(
            "add it as an encrypted remote: `rewind remote rm {remote}`, then `rewind remote \
             add {remote} URL --encrypt` (with `--key-file PATH` for a key file)"
        )),
        Error::RemoteKeyNeeded {
            encrypted: false, ..
        } => one("encrypt into an empty bucket or prefix, or add this one without --encrypt"),
        Error::RemoteWrongKey { remote, .. } => vec![
            "check REWIND_REMOTE_PASSWORD, the password file or the key file".into(),
            format!("`rewind remote passwd {remote}` (with the current password) changes it"),
        ],
        Error::GcDamaged { .. } => one("run `rewind verify --full` to see what is damaged"),
        Error::DamagedPage { .. } => vec![
            "`rewind verify` lists what can still be read and which snapshots are lost".into(),
            "`rewind restore` of the other snapshots still works".into(),
            "restore what is lost from a remote (`rewind pull`, `rewind restore --remote`) or a \
             backup of the store"
                .into(),
        ],
        Error::NoSnapshots(_) => one("run `rewind snapshot` first"),
        Error::NoAgentSession(_) => one("install one with `rewind hook install AGENT`"),
        Error::NoSuchTurn { session, .. } => {
            vec![format!("see `rewind log --session {session}`")]
        }
        Error::NoOverlay(_) | Error::OverlayExists(_) => one("see `rewind overlay list`"),
        Error::NoOperation { .. } => one("see `rewind op log`"),
        Error::NoArtifact(_) => one("see `rewind artifact ls`"),
        Error::RemoteExists { name, .. } => {
            vec![format!("remove it first with `rewind remote rm {name}`")]
        }
        Error::NoRemote(name) => vec![
            format!("add it with `rewind remote add {name} URL`"),
            "`rewind remote ls` lists the remotes".into(),
        ],
        Error::StateForgotten { .. } => one("snapshots are forgotten by `rewind forget`"),
        Error::RejectedOverlayGone(_) => one("`rewind undo OP` picks another operation"),
        Error::NeedsWorkspace(_) => one("use -C DIR"),
        Error::WhiteoutUnsupported { .. } => one("or use --backend copy"),
        Error::StoreInsideWorkspace { .. } => one("use a store elsewhere, or --backend copy"),
        Error::PatchFailed {
            remedy: Some(remedy),
            ..
        } => one(match remedy {
            Remedy::Force | Remedy::ForceInReason => "use --force",
            Remedy::ForceToOverwrite => "use --force to overwrite",
            Remedy::ThreeWay => "try --3way",
            Remedy::Base => "no base for a three-way merge: pass --base REV",
            Remedy::Reverse => "to undo it, apply with -R",
        }),
        Error::Conflict { .. } => one("use --conflict=markers to write markers"),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    //! Each hinted error as printed: the message, then a `hint:` line per hint.

    use super::{message, report};
    use rewind::Error;
    use rewind::error::{GlobList, Remedy};
    use std::path::PathBuf;

    /// The lines the CLI prints after `error:`.
    fn shown(e: &Error) -> String {
        let r = report(e);
        let mut lines = vec![r.message];
        lines.extend(r.causes.into_iter().map(|c| format!("caused by: {c}")));
        lines.extend(r.hints.into_iter().map(|h| format!("hint: {h}")));
        lines.join("\n")
    }

    fn patch(why: &str, remedy: Remedy) -> String {
        shown(&Error::PatchFailed {
            path: "f".into(),
            why: why.into(),
            remedy: Some(remedy),
        })
    }

    #[test]
    fn store_and_workspace_errors_name_their_flags() {
        assert_eq!(
            shown(&Error::NoStore(PathBuf::from("/s"))),
            "no rewind store at /s\nhint: run `rewind init`, or pass --store DIR"
        );
        assert_eq!(
            shown(&Error::ReadOnlyStore {
                path: PathBuf::from("/s"),
                why: "EROFS".into()
            }),
            "store /s is read-only (EROFS); check its permissions\nhint: pass another --store"
        );
        let full = shown(&Error::DiskFull(std::io::Error::from_raw_os_error(28)));
        assert_eq!(
            full,
            "the disk holding the store is full (No space left on device (os error 28)); \
             nothing was stored and the store is as it was: free some space\n\
             hint: `rewind forget` then `rewind gc` frees rewind's own space\n\
             hint: or put the store elsewhere with --store DIR or REWIND_STORE"
        );
        assert_eq!(
            shown(&Error::DangerousWorkspace(PathBuf::from("/"))),
            "refusing to use / as a workspace: it is the root or your home directory\n\
             hint: pass --force if you mean it"
        );
        assert_eq!(
            shown(&Error::ArtifactExists("k".into())),
            "artifact 'k' already exists\nhint: pass --force to replace it"
        );
        assert_eq!(
            shown(&Error::Strict("2 unreadable".into())),
            "snapshot aborted (--strict): 2 unreadable"
        );
        assert_eq!(
            shown(&Error::NeedsWorkspace("@~1".into())),
            "'@~1' needs a workspace\nhint: use -C DIR"
        );
    }

    /// A database error keeps its cause, printed on a line of its own.
    #[test]
    fn causes_are_a_chain_not_repeated() {
        let db = Error::Db(redb::Error::Corrupted("page 7 does not decode".into()));
        assert_eq!(
            shown(&db),
            "store database error\ncaused by: DB corrupted: page 7 does not decode"
        );
        // An I/O error's message names its cause already: not said twice.
        let io = Error::io("/s/f", std::io::Error::from_raw_os_error(13));
        assert_eq!(shown(&io), "/s/f: Permission denied (os error 13)");
        // One line, for readers of one string.
        assert_eq!(
            message(&Error::NoStore(PathBuf::from("/s"))),
            "no rewind store at /s (run `rewind init`, or pass --store DIR)"
        );
    }

    #[test]
    fn tag_restore_undo_and_forget_refusals() {
        assert_eq!(
            shown(&Error::TagExists {
                name: "v1".into(),
                target: "abcd1234".into()
            }),
            "tag 'v1' already points at abcd1234\nhint: pass --force to move it"
        );
        assert_eq!(
            shown(&Error::TagTaken("v1".into())),
            "tag 'v1' already exists\nhint: delete it first with `rewind tag -d v1`"
        );
        assert_eq!(
            shown(&Error::WouldOverwriteIgnored {
                paths: vec!["a".into(), "b".into()]
            }),
            "restoring would overwrite files that the workspace ignores, so no snapshot holds \
             them: a, b\nhint: move them away, or pass --force to overwrite them"
        );
        assert_eq!(
            shown(&Error::ForeignSnapshot {
                snapshot: "abcd".into(),
                owner: "/w".into(),
                here: "workspace /x".into()
            }),
            "snapshot abcd belongs to workspace /w, not to workspace /x; restoring it would \
             replace these files with another project's\nhint: pass --from-workspace to do it \
             anyway, or -C DIR to restore into its own workspace"
        );
        assert_eq!(
            shown(&Error::ChangedSince {
                action: "undo",
                op: 7,
                paths: vec!["a".into(), "b".into()]
            }),
            "refusing to undo operation 7: these paths changed since it ran: a, b\nhint: pass \
             --force to overwrite them"
        );
        assert_eq!(
            shown(&Error::NothingToForget),
            "nothing to forget: give a policy (--keep-last N, --keep-daily N, --keep-within DURATION, ...) or snapshot ids"
        );
        assert_eq!(
            shown(&Error::ForgetIdsAndPolicy),
            "give either snapshot ids or a policy (--keep-*), not both"
        );
    }

    #[test]
    fn overlay_refusals() {
        assert_eq!(
            shown(&Error::NamespaceUnavailable("no userns".into())),
            "the namespace backend is unavailable here: no userns\nhint: use --backend copy"
        );
        assert_eq!(
            shown(&Error::OverlayBusy {
                seconds: 2.0,
                what: "waiting for the overlay's lock".into()
            }),
            "gave up after 2.0s waiting for the overlay's lock\nhint: a longer --lock-timeout \
             waits longer"
        );
        assert_eq!(
            shown(&Error::OverlayChanged(3)),
            "overlay 3 changed since\nhint: pass --force to overwrite its changes"
        );
        assert_eq!(
            shown(&Error::UnknownHunk {
                hunk: "h1".into(),
                overlay: 3
            }),
            "no pending hunk 'h1' in overlay 3\nhint: ids are listed by `rewind overlay diff 3 \
             --json`"
        );
    }

    #[test]
    fn namespace_refusals() {
        assert_eq!(
            shown(&Error::WhiteoutUnsupported {
                path: PathBuf::from("/o/x"),
                why: std::io::Error::from_raw_os_error(1),
            }),
            "cannot hide a path the workspace added since the overlay's base (/o/x: Operation \
             not permitted (os error 1)); the kernel must allow unprivileged whiteouts (Linux \
             5.8+)\nhint: or use --backend copy"
        );
        assert_eq!(
            shown(&Error::StoreInsideWorkspace {
                store: PathBuf::from("/w/.s"),
                workspace: PathBuf::from("/w"),
            }),
            "the store /w/.s lies inside the workspace /w: overlayfs cannot take its upper \
             layer from inside its lower one\nhint: use a store elsewhere, or --backend copy"
        );
    }

    #[test]
    fn globs() {
        let bad = |list, glob: Option<&str>| {
            shown(&Error::BadGlob {
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
            "f: binary patch: the file differs from the one the patch was made against \
             (nothing was changed)\nhint: use --force"
        );
        assert_eq!(
            patch(
                "the patch creates this file, but it exists with other content",
                Remedy::ForceToOverwrite
            ),
            "f: the patch creates this file, but it exists with other content (nothing was \
             changed)\nhint: use --force to overwrite"
        );
        // The reason's own parenthesis is left as the library wrote it.
        assert_eq!(
            patch(
                "the patch deletes this file, but it differs from what the patch expects (3 bytes would remain)",
                Remedy::ForceInReason
            ),
            "f: the patch deletes this file, but it differs from what the patch expects (3 \
             bytes would remain) (nothing was changed)\nhint: use --force"
        );
        assert_eq!(
            patch("hunk 1 failed", Remedy::ThreeWay),
            "f: hunk 1 failed (nothing was changed)\nhint: try --3way"
        );
        assert_eq!(
            patch("hunk 1 failed", Remedy::Base),
            "f: hunk 1 failed (nothing was changed)\nhint: no base for a three-way merge: pass \
             --base REV"
        );
        assert_eq!(
            shown(&Error::Conflict {
                path: "f".into(),
                lines: vec![(1, 2), (5, 5)]
            }),
            "f: three-way merge conflicts at lines 1-2, lines 5-5 (nothing was changed)\nhint: \
             use --conflict=markers to write markers"
        );
    }

    /// Report data and errors whose hint moved out of the library name this CLI's commands.
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
            shown(&Error::NoSuchHunk {
                hunk: "h1".into(),
                among: HunkSet::Between {
                    a: "aaaa".into(),
                    b: "bbbb".into()
                }
            }),
            "no hunk 'h1' in the modified files of aaaa..bbbb\nhint: see `rewind diff A B \
             --json --hunks`"
        );
        assert_eq!(
            shown(&Error::NoSuchHunk {
                hunk: "h1".into(),
                among: HunkSet::LiveAgainst
            }),
            "no hunk 'h1' in the workspace's changes against that snapshot (they moved since?)"
        );
        assert_eq!(
            shown(&Error::RemoteObjectMissing {
                remote: "r".into(),
                kind: "blob",
                id: "ab".into()
            }),
            "remote 'r': blob ab is in no pack on the remote\nhint: see `rewind verify --remote \
             r`"
        );
        assert_eq!(
            shown(&Error::RemoteDamaged {
                remote: "r".into(),
                what: "pack p".into(),
                why: "missing".into(),
                problems: 2
            }),
            "remote 'r': not collecting: pack p: missing (2 problems)\nhint: see `rewind verify \
             --remote r`"
        );
        assert_eq!(
            compact_skipped(&CompactSkipped::Busy),
            "another process is using the store; run `rewind gc` again when it is idle"
        );
        assert_eq!(
            shown(&Error::GcDamaged {
                kind: "blob",
                id: "ab".into(),
                referrer: "tree cd".into(),
                why: "missing".into()
            }),
            "gc stopped, nothing was deleted: blob ab (reached from tree cd) is missing\nhint: \
             run `rewind verify --full` to see what is damaged"
        );
        assert_eq!(
            shown(&Error::NoSnapshots(PathBuf::from("/w"))),
            "workspace /w has no snapshot yet\nhint: run `rewind snapshot` first"
        );
        assert_eq!(
            shown(&Error::NoOverlay("x".into())),
            "no overlay 'x' in this store\nhint: see `rewind overlay list`"
        );
        assert_eq!(
            shown(&Error::NoOperation {
                op: 3,
                workspace: PathBuf::from("/w")
            }),
            "no operation 3 in workspace /w\nhint: see `rewind op log`"
        );
        assert_eq!(
            shown(&Error::RemoteWrongKey {
                remote: "r".into(),
                keys: 2
            }),
            "remote 'r': the password or key file given opens none of its 2 keys\nhint: check \
             REWIND_REMOTE_PASSWORD, the password file or the key file\nhint: `rewind remote \
             passwd r` (with the current password) changes it"
        );
        assert_eq!(
            shown(&Error::RemoteForged {
                remote: "r".into(),
                object: "refs/v1".into()
            }),
            "remote 'r': refs/v1 fails authentication (damaged, truncated, moved from another \
             name or sealed with another key); nothing from it was used\nhint: see `rewind \
             verify --remote r --full`"
        );
        assert_eq!(
            shown(&Error::RemoteExists {
                name: "r".into(),
                url: "s3://b".into()
            }),
            "remote 'r' already exists (s3://b)\nhint: remove it first with `rewind remote rm r`"
        );
        assert_eq!(
            shown(&Error::NoRemote("r".into())),
            "no remote 'r'\nhint: add it with `rewind remote add r URL`\nhint: `rewind remote \
             ls` lists the remotes"
        );
        assert_eq!(
            shown(&Error::RejectedOverlayGone(7)),
            "overlay 7 was dropped, so its reject cannot be taken back\nhint: `rewind undo OP` \
             picks another operation"
        );
        assert_eq!(
            shown(&Error::InterruptedWrite {
                kind: "apply".into(),
                workspace: PathBuf::from("/w"),
                before: Some("abcd".into())
            }),
            "an interrupted `rewind apply` left /w partly written: run the same `rewind apply` \
             again to finish it, or `rewind restore abcd` to go back to the state before it"
        );
        assert_eq!(
            shown(&Error::ConcurrentGc("remote restore")),
            "a `rewind gc` ran in another process while this restore --remote was being \
             written; nothing was stored: run it again"
        );
        assert_eq!(
            shown(&Error::NoCommand),
            "rewind run needs a command after --"
        );
    }

    /// The library's own messages name no command of this CLI.
    #[test]
    fn the_library_names_no_command() {
        for e in [
            Error::ConcurrentGc("snapshot"),
            Error::NoStore(PathBuf::from("/s")),
            Error::NoSnapshots(PathBuf::from("/w")),
        ] {
            let text = e.to_string();
            assert!(!text.contains("`rewind "), "{text}");
        }
    }
}
