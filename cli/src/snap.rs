//! `init` and `snapshot`.

use super::args::{InitArgs, SnapshotArgs};
use super::output::{self, human_bytes, paint};
use super::{CliResult, Ctx};
use rewind::snapshot as take;
use rewind::snapshot::{SnapshotOptions, SnapshotReport};

/// `rewind init`.
pub fn init(ctx: &Ctx, a: InitArgs) -> CliResult {
    // Refused before the store is created: a refusal leaves nothing behind.
    let root =
        rewind::workspace::canonical(&candidate_root(ctx)?, a.force, &super::refused_workspaces())?;
    let store = ctx.open_store(true)?;
    let known = store.reader()?.workspace(&root)?.is_some();
    let ws = store.register_workspace(&root)?;
    if ctx.json {
        output::print_json(&rewind::wire::WorkspaceRegistered {
            workspace: rewind::wire::Workspace::new(&store, &ws)?,
            newly_registered: !known,
            store: store.dir().display().to_string(),
        })?;
    } else if !ctx.quiet {
        println!(
            "{} {} in store {}",
            if known {
                "already registered: workspace"
            } else {
                "registered workspace"
            },
            root.display(),
            store.dir().display()
        );
    }
    Ok(0)
}

/// The directory a command names before the store is open: `-C DIR`, else the current one
/// (a registered ancestor of it is never `/` or the home directory unless forced before).
fn candidate_root(ctx: &Ctx) -> Result<std::path::PathBuf, rewind::Error> {
    match &ctx.workspace {
        Some(d) => Ok(d.clone()),
        None => std::env::current_dir().map_err(|e| rewind::Error::io(".", e)),
    }
}

/// `rewind snapshot`.
pub fn snapshot(ctx: &Ctx, a: SnapshotArgs) -> CliResult {
    // `/` or the home directory is refused before the store is created.
    rewind::workspace::canonical(&candidate_root(ctx)?, a.force, &super::refused_workspaces())?;
    let store = ctx.open_store(true)?;
    let root = ctx.workspace_root(&store)?;
    let opts = SnapshotOptions {
        message: a.message,
        meta: output::parse_meta(&a.meta)?,
        tags: a.tags,
        ignore_globs: a.ignore,
        max_file_size: a
            .max_file_size
            .as_deref()
            .map(output::parse_size)
            .transpose()?,
        dry_run: a.dry_run,
        strict: a.strict,
        level: a.level,
        force: a.force,
        if_changed: a.if_changed,
        ..SnapshotOptions::default()
    };
    let bar = super::progress::Bar::new(ctx);
    let outcome = take(&store, &root, &opts, &bar)?;
    let r = &outcome.report;
    trace_phases(&r.phases);
    if !ctx.quiet {
        let before = match r.parent {
            Some(p) if !r.skipped.is_empty() => store.reader()?.snapshot(&p)?.skipped().to_vec(),
            _ => Vec::new(),
        };
        for s in r.skipped.iter().filter(|s| s.worth_warning(&before)) {
            output::warn(&format!(
                "{}: {} ({})",
                output::path_text(&s.path),
                s.reason.name().replace('_', " "),
                s.detail
            ));
        }
    }
    if ctx.json {
        output::print_json(&rewind::wire::SnapshotTaken::new(&store, r)?)?;
    } else {
        print_human(ctx, r);
    }
    Ok(0)
}

/// Prints an operation's timed phases to stderr when `REWIND_TRACE` is set.
pub fn trace_phases(phases: &[(&str, f64)]) {
    if std::env::var_os("REWIND_TRACE").is_some() {
        eprintln!("rewind: phases: {}", phases_text(phases));
    }
}

/// Timed phases as `walk 1.2 ms, store 3.4 ms`, for `REWIND_TRACE`.
pub fn phases_text(phases: &[(&str, f64)]) -> String {
    let parts: Vec<String> = phases
        .iter()
        .map(|(n, t)| format!("{n} {:.1} ms", t * 1000.0))
        .collect();
    parts.join(", ")
}

fn print_human(ctx: &Ctx, r: &SnapshotReport) {
    if ctx.quiet {
        if let Some(id) = r.id {
            println!("{}", id.short());
        }
        return;
    }
    let id = match r.id {
        Some(id) => paint(ctx.color, output::id_style(), &id.short()),
        None => "(dry run)".to_string(),
    };
    let unchanged = match (r.unchanged, r.created) {
        (true, false) => ", unchanged: nothing recorded",
        (true, true) => ", unchanged",
        _ => "",
    };
    println!(
        "{id}  {}, {}, {}, {} stored, {:.2} s{unchanged}",
        super::output::count(r.stats.files as usize, "file"),
        human_bytes(r.stats.bytes),
        super::output::count(r.new_blobs as usize, "new blob"),
        human_bytes(r.stored_bytes),
        r.seconds
    );
}
