//! The CLI's wording of library errors: the library says what went wrong, and where a flag of
//! this CLI gets past it (or names what to give), the hint naming that flag is added here. The
//! printed text is what rewind has always printed; the library's own messages name no flag.

use crate::Error;
use crate::error::{GlobList, Remedy};

/// The message printed for `e`.
pub fn message(e: &Error) -> String {
    match e {
        Error::NoStore(_) => format!("{e}: run `rewind init` or pass --store DIR"),
        Error::ReadOnlyStore { .. } => format!("{e} or pass another --store"),
        Error::DiskFull(_) => {
            format!("{e}, or put the store elsewhere with --store DIR or REWIND_STORE")
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
        Error::NeedsWorkspace(_) => format!("{e} (use -C DIR)"),
        Error::NothingToForget => {
            "nothing to forget: give --keep-last N, --keep-within DURATION, or snapshot ids".into()
        }
        Error::ForgetIdsAndPolicy => {
            "give either snapshot ids or a policy (--keep-last, --keep-within), not both".into()
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
