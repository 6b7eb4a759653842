//! `restore`, `op log`, `undo`, `redo`.

use std::io::{BufWriter, Write};

use super::args::{OpArgs, OpCommand, RestoreArgs};
use super::output::{self, format_time, paint};
use super::{CliResult, Ctx};
use rewind::diff::{ChangeStatus, FileChange};
use rewind::restore::{OpInfo, RestoreOptions, RestoreReport};
use rewind::store::tree::Kind;

fn letter(c: &FileChange) -> &'static str {
    match c.status {
        ChangeStatus::Added => "A",
        ChangeStatus::Deleted => "D",
        ChangeStatus::Modified | ChangeStatus::ModeChanged => "M",
        ChangeStatus::TypeChanged => "T",
        ChangeStatus::Renamed => "R",
    }
}

fn print_report(ctx: &Ctx, r: &RestoreReport, dry_run: bool, verb: &str) -> std::io::Result<()> {
    if ctx.json {
        return output::print_json(&rewind::wire::Restore::new(r, dry_run));
    }
    let mut out = BufWriter::new(std::io::stdout().lock());
    if dry_run {
        for c in &r.plan {
            let dir = if c.new.or(c.old).is_some_and(|s| s.kind == Kind::Dir) {
                "/"
            } else {
                ""
            };
            writeln!(out, "{}\t{}{dir}", letter(c), output::path_text(&c.path))?;
        }
        for k in &r.kept {
            writeln!(
                out,
                "kept\t{} (not looked at by the snapshot)",
                output::path_text(k)
            )?;
        }
        return out.flush();
    }
    if !ctx.quiet {
        writeln!(
            out,
            "{verb} {}: {} written, {} removed, {} kept, {:.2} s (undo with `rewind undo`; the previous state is {})",
            paint(ctx.color, output::id_style(), &r.target.short()),
            written_text(r),
            r.deleted,
            r.kept.len(),
            r.seconds,
            r.before.map(|b| b.short()).unwrap_or_default()
        )?;
    }
    out.flush()
}

/// `rewind restore`.
pub fn restore(ctx: &Ctx, a: RestoreArgs) -> CliResult {
    let store = ctx.open_store(a.remote.is_some())?;
    let root = ctx.workspace_root(&store)?;
    if let Some(name) = &a.remote
        && a.paths.is_empty()
        && !a.interactive
        && !a.dry_run
        && super::remote::is_empty_dir(&root)?
    {
        return super::remote::restore_empty(
            ctx,
            &store,
            &root,
            name,
            a.rev.as_deref().unwrap_or("@"),
        );
    }
    let rev = a.rev.as_deref().unwrap_or("@");
    let target = match (&a.remote, a.turn) {
        (_, Some(turn)) => turn_start(&store, &root, a.session.as_deref(), turn)?,
        (Some(name), None) => super::remote::pull_for_restore(ctx, &store, name, rev)?,
        (None, None) => super::inspect::resolve(ctx, &store, &store.reader()?, rev)?,
    };
    if a.interactive {
        return restore_hunks(ctx, &store, &root, target, &a.paths);
    }
    let opts = RestoreOptions {
        paths: ctx.workspace_paths(Some(&root), &a.paths)?,
        dry_run: a.dry_run,
        force: a.force,
        from_workspace: a.from_workspace,
    };
    let bar = super::progress::Bar::new(ctx);
    let _interrupt = rewind::interrupt::Guard::install()?;
    let r = rewind::restore::restore(&store, &root, target, &opts, &OpInfo::default(), &bar)?;
    print_report(ctx, &r, a.dry_run, "restored")?;
    Ok(0)
}

/// `--turn N [--session ID]`: the snapshot an agent hook took when turn N's prompt was
/// submitted; the session defaults to that of the newest snapshot a hook recorded.
fn turn_start(
    store: &rewind::store::Store,
    root: &std::path::Path,
    session: Option<&str>,
    turn: u64,
) -> Result<rewind::id::Id, rewind::Error> {
    let reader = store.reader()?;
    let ws = reader
        .workspace(root)?
        .ok_or_else(|| rewind::Error::NoSnapshots(root.to_path_buf()))?;
    let session = match session {
        Some(s) => s.to_string(),
        None => rewind::history::latest_session(&reader, ws.id())?
            .ok_or_else(|| rewind::Error::NoAgentSession(root.to_path_buf()))?,
    };
    rewind::history::turn_start(&reader, ws.id(), &session, turn)
}

/// `rewind restore REV -p`: asks about each hunk of the modified files, then restores the
/// chosen ones as one operation.
fn restore_hunks(
    ctx: &Ctx,
    store: &rewind::store::Store,
    root: &std::path::Path,
    target: rewind::id::Id,
    paths: &[std::ffi::OsString],
) -> CliResult {
    super::hunk_prompt::need_terminal("restore by path (`rewind restore REV -- PATH`)")?;
    let paths = ctx.workspace_paths(Some(root), paths)?;
    let review = rewind::hunks::restore_review(store, root, target, &paths)?;
    let items: Vec<super::hunk_prompt::Item> = review
        .iter()
        .map(|(p, h)| super::hunk_prompt::Item {
            path: p,
            status: "modified",
            hunks: Some(h.iter().collect()),
        })
        .collect();
    let Some(chosen) = super::hunk_prompt::walk(ctx, &items, "Restore")? else {
        return Ok(0);
    };
    let r = rewind::hunks::restore_hunks(store, root, target, &chosen.ids, &chosen.edited)?;
    if ctx.json {
        output::print_json(&rewind::wire::Restore::from_hunks(
            root.display().to_string(),
            target.hex(),
            &r,
        ))?;
    } else if !ctx.quiet {
        for f in &r.files {
            println!("restored  {}", output::path_text(&f.path));
        }
        if let Some(op) = r.op {
            println!("operation {op}; `rewind undo` takes it back");
        }
    }
    Ok(0)
}

/// `rewind op log`.
pub fn op(ctx: &Ctx, a: OpArgs) -> CliResult {
    let OpCommand::Log {
        max_count,
        all,
        raw,
    } = a.command;
    let store = ctx.open_store(false)?;
    let ws = if all {
        None
    } else {
        Some(ctx.workspace_root(&store)?)
    };
    let ws_bytes = ws
        .as_ref()
        .map(|p| std::os::unix::ffi::OsStrExt::as_bytes(p.as_os_str()).to_vec());
    // Each action records up to two bookkeeping rows besides its own: read enough to fill
    // max_count actions.
    let fetch = if raw {
        max_count
    } else {
        max_count.saturating_mul(3).saturating_add(2)
    };
    let ops = store.reader()?.ops(ws_bytes.as_deref(), fetch)?;
    let mut rows = if raw {
        ops.into_iter()
            .map(|op| rewind::store::oplog::ActionRow {
                kind: op.kind().to_string(),
                target: None,
                folded: Vec::new(),
                changed_workspace: op.changed_workspace(),
                op,
            })
            .collect()
    } else {
        rewind::store::oplog::fold_actions(ops)
    };
    rows.truncate(max_count);
    if ctx.json {
        output::print_json(&rewind::wire::Op::list(&store, &rows)?)?;
        return Ok(0);
    }
    let mut out = BufWriter::new(std::io::stdout().lock());
    for r in rows {
        let o = &r.op;
        let arrow = format!(
            "{} -> {}",
            o.before().map(|i| i.short()).unwrap_or_else(|| "-".into()),
            o.after().map(|i| i.short()).unwrap_or_else(|| "-".into())
        );
        let rev = o
            .reverses()
            .map(|r| format!(" (op {r})"))
            .unwrap_or_default();
        let kind = match &r.target {
            Some(t) => format!("{} {t}", r.kind),
            None => r.kind.clone(),
        };
        // Who, when not the local user: a server records the caller.
        let by = o
            .actor()
            .as_ref()
            .map(|a| format!("  (by {a})"))
            .unwrap_or_default();
        writeln!(
            out,
            "{:>5}  {}  {:<13} {}{}  {}{by}",
            o.id(),
            format_time(o.time_ns()),
            kind,
            arrow,
            rev,
            o.command()
                .iter()
                .skip(1)
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
        )?;
    }
    out.flush()?;
    Ok(0)
}

/// `rewind undo` and `rewind redo`.
pub fn undo(ctx: &Ctx, op: Option<u64>, force: bool, redo: bool) -> CliResult {
    let store = ctx.open_store(false)?;
    let root = ctx.workspace_root(&store)?;
    let bar = super::progress::Bar::new(ctx);
    let _interrupt = rewind::interrupt::Guard::install()?;
    let (target, r) = rewind::undo::undo(&store, &root, redo, op, force, &bar)?;
    if ctx.json {
        output::print_json(&rewind::wire::Undo::new(&target, &r, redo))?;
    } else if !ctx.quiet {
        println!(
            "{} operation {} ({}): {} written, {} removed",
            if redo { "redid" } else { "undid" },
            target.id(),
            target.kind(),
            written_text(&r),
            r.deleted
        );
    }
    Ok(0)
}

/// What a restore wrote: "236 files", or "236 files and 1 symlink".
fn written_text(r: &rewind::restore::RestoreReport) -> String {
    let files = output::count(
        r.written.saturating_sub(r.symlinks_written) as usize,
        "file",
    );
    match r.symlinks_written {
        0 => files,
        n => format!("{files} and {}", output::count(n as usize, "symlink")),
    }
}
