//! `apply`.

use std::io::Read;

use super::args::{ApplyArgs, ConflictMode, RevertArgs};
use super::output::{self, path_text};
use super::{CliResult, Ctx};
use rewind::Error;
use rewind::apply::{ApplyPatchOptions, ApplyReport, apply_patch};

/// `rewind apply`.
pub fn apply(ctx: &Ctx, a: ApplyArgs) -> CliResult {
    let mut input = Vec::new();
    if a.patch.as_os_str() == "-" {
        std::io::stdin()
            .read_to_end(&mut input)
            .map_err(|e| Error::io("<stdin>", e))?;
    } else {
        input = std::fs::read(&a.patch).map_err(|e| Error::io(&a.patch, e))?;
    }
    let store = ctx.open_store(true)?;
    let root = ctx.workspace_root(&store)?;
    let base = match &a.base {
        Some(rev) => {
            let reader = store.reader()?;
            Some(super::inspect::resolve(ctx, &store, &reader, rev)?)
        }
        None => None,
    };
    let opts = ApplyPatchOptions {
        strip: a.strip,
        reverse: a.reverse,
        check: a.check,
        three_way: a.three_way || base.is_some(),
        base,
        conflict_markers: a.conflict == ConflictMode::Markers,
        force: a.force,
        max_fuzz: a.fuzz,
    };
    let report = apply_patch(&store, &root, &input, &opts)?;
    if ctx.json {
        output::print_json(&rewind::wire::Applied::new(&report, a.check))?;
    } else if !ctx.quiet {
        print_human(&report, a.check);
    }
    let conflicts: usize = report.files.iter().map(|f| f.conflicts).sum();
    Ok(if conflicts > 0 { 1 } else { 0 })
}

fn print_human(r: &ApplyReport, check: bool) {
    print_files(&r.files);
    if check {
        println!(
            "the patch applies cleanly ({}); nothing was changed",
            super::output::count(r.files.len(), "file")
        );
    } else if let Some(op) = r.op {
        println!(
            "{} {} (operation {op}; `rewind undo` takes it back)",
            if r.resumed {
                "finished an interrupted apply of"
            } else {
                "applied"
            },
            super::output::count(r.files.len(), "file")
        );
    }
}

/// `rewind revert A B`. Conflicts are listed (with `--json`, under `conflicts`) and exit 1,
/// as overlay accept's do; nothing is written then, dry run or not.
pub fn revert(ctx: &Ctx, a: RevertArgs) -> CliResult {
    if !a.meta.is_empty() {
        return super::who::revert_meta(ctx, &a.meta, a.dry_run);
    }
    let (Some(rev_a), Some(rev_b)) = (&a.a, &a.b) else {
        return Err(Error::Invalid("revert needs A and B".into()).into());
    };
    let store = ctx.open_store(false)?;
    let root = ctx.workspace_root(&store)?;
    let reader = store.reader()?;
    let ida = super::inspect::resolve(ctx, &store, &reader, rev_a)?;
    let idb = super::inspect::resolve(ctx, &store, &reader, rev_b)?;
    drop(reader);
    let paths = ctx.workspace_paths(Some(&root), &a.paths)?;
    let markers = a.conflict == ConflictMode::Markers;
    let r = if let Some(n) = a.run {
        let ws = store.reader()?.snapshotted_workspace(&root)?;
        rewind::review_runs::revert_run(&store, &root, ws.id(), ida, idb, n, markers, a.dry_run)?
    } else if a.hunks.is_empty() {
        rewind::revert::revert_report(&store, &root, ida, idb, &paths, markers, a.dry_run)?
    } else {
        rewind::revert::revert_hunks_report(&store, &root, ida, idb, &a.hunks, markers, a.dry_run)?
    };
    if ctx.json {
        output::print_json(&rewind::wire::Revert::new(&r, a.dry_run))?;
    } else if !ctx.quiet {
        // A conflicting path is listed once, with its reason.
        let files: Vec<_> = r
            .files
            .iter()
            .filter(|f| f.action != "conflict")
            .cloned()
            .collect();
        print_files(&files);
        for c in &r.conflicts {
            println!(
                "conflict {}: {}",
                path_text(&c.path),
                super::hints::conflict_why(c)
            );
        }
        match r.op {
            Some(op) => println!(
                "reverted {}..{} (operation {op}; `rewind undo` takes it back)",
                ida.short(),
                idb.short()
            ),
            None if !r.conflicts.is_empty() && a.dry_run => println!(
                "dry run: {}; nothing was changed",
                super::output::count(r.conflicts.len(), "conflict")
            ),
            None if !r.conflicts.is_empty() => {}
            None if a.dry_run => println!("dry run: nothing was changed"),
            None => println!("nothing to revert"),
        }
    }
    if !r.conflicts.is_empty() && !a.dry_run {
        output::error_line(
            &format!(
                "revert {}..{}: {} ({}): nothing was changed (--conflict=markers writes conflict markers instead)",
                ida.short(),
                idb.short(),
                super::output::count(r.conflicts.len(), "conflict"),
                output::paths_text(r.conflicts.iter().map(|c| c.path.as_slice()))
            ),
            false,
        );
    }
    let conflicts = r.conflicts.len() + r.files.iter().map(|f| f.conflicts).sum::<usize>();
    Ok(if conflicts > 0 { 1 } else { 0 })
}

fn print_files(files: &[rewind::apply::FileOutcome]) {
    for f in files {
        let mut notes: Vec<String> = f
            .hunks
            .iter()
            .filter(|h| h.offset != 0 || h.fuzz != 0)
            .map(|h| {
                format!(
                    "hunk {} at offset {:+}{}",
                    h.index,
                    h.offset,
                    if h.fuzz > 0 {
                        format!(" with fuzz {}", h.fuzz)
                    } else {
                        String::new()
                    }
                )
            })
            .collect();
        if f.merged {
            notes.push("merged three ways".into());
        }
        let action = match f.action {
            "already-applied" => {
                notes.push("already applied; nothing to change".into());
                "create"
            }
            "submodule" => {
                notes.push("left alone: a submodule's files belong to its own repository".into());
                "skip"
            }
            a => a,
        };
        if f.conflicts > 0 {
            notes.push(format!("{} conflict(s) left as markers", f.conflicts));
        }
        let name = match &f.old_path {
            Some(old) => format!("{} -> {}", path_text(old), path_text(&f.path)),
            None => path_text(&f.path),
        };
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join(", "))
        };
        println!("{action:<7} {name}{notes}");
    }
}
