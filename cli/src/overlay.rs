//! `overlay`: argument parsing and printing only; the work is in [`rewind::overlay`].

use std::ffi::OsString;

use clap::{Args, Subcommand, ValueEnum};

use super::args::DiffArgs;
use super::output::{self, format_time, paint, path_str};
use super::{CliResult, Ctx, hints};
use rewind::carry::ConflictPolicy;
use rewind::overlay::{self as ov, AcceptOptions, BackendChoice, CreateOptions, Overlay};
use rewind::run::isolate::AcceptWhen;

/// `--backend`.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum BackendArg {
    /// namespace where the kernel allows it, else copy
    Auto,
    /// overlayfs in a private user and mount namespace (Linux)
    Namespace,
    /// a materialized copy of the base (reflinked where possible)
    Copy,
}

impl From<BackendArg> for BackendChoice {
    fn from(b: BackendArg) -> Self {
        match b {
            BackendArg::Auto => BackendChoice::Auto,
            BackendArg::Namespace => BackendChoice::Namespace,
            BackendArg::Copy => BackendChoice::Copy,
        }
    }
}

/// `run --isolate --accept`.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum AcceptArg {
    /// when the command exits 0 and breaks no contract
    OnSuccess,
    /// never: keep the overlay for inspection
    Never,
    /// whatever the outcome
    Always,
}

impl From<AcceptArg> for AcceptWhen {
    fn from(a: AcceptArg) -> Self {
        match a {
            AcceptArg::OnSuccess => AcceptWhen::OnSuccess,
            AcceptArg::Never => AcceptWhen::Never,
            AcceptArg::Always => AcceptWhen::Always,
        }
    }
}

/// `overlay`.
#[derive(Args, Debug)]
pub struct OverlayArgs {
    #[command(subcommand)]
    pub command: OverlayCommand,
}

/// `overlay` subcommands.
#[derive(Subcommand, Debug)]
pub enum OverlayCommand {
    /// Create an overlay of the workspace; prints its id
    Create(OverlayCreateArgs),
    /// List overlays with their pending changes
    List,
    /// Run a command inside an overlay (from the same relative directory); --json prints the
    /// run result. `exec` is the same: the way to use file tools on a namespace overlay
    #[command(visible_alias = "exec")]
    Run(OverlayRunArgs),
    /// Open $SHELL inside an overlay
    Shell(OverlayShellArgs),
    /// Print the overlay's directory (copy backend)
    Path(OverlayPathArgs),
    /// Show the overlay's pending changes
    Diff(OverlayDiffArgs),
    /// Merge the overlay's changes into the workspace (all, or the given paths)
    Accept(OverlayAcceptArgs),
    /// Put the base version back inside the overlay (all, or the given paths)
    Reject(OverlayRejectArgs),
    /// Delete an overlay (the workspace is not touched)
    Drop(OverlayDropArgs),
}

/// `overlay create`.
#[derive(Args, Debug)]
pub struct OverlayCreateArgs {
    /// Start from this snapshot [default: a new snapshot of the workspace]
    #[arg(long, value_name = "REV")]
    pub from: Option<String>,
    /// A name, usable wherever the id is
    #[arg(long)]
    pub name: Option<String>,
    /// The backend
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
    /// Copy backend: also copy ignored paths matching GLOB (repeatable)
    #[arg(long = "with-ignored", value_name = "GLOB")]
    pub with_ignored: Vec<String>,
}

/// `overlay run`.
#[derive(Args, Debug)]
pub struct OverlayRunArgs {
    /// Overlay id or name
    pub id: String,
    /// The command and its arguments
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// `overlay shell`.
#[derive(Args, Debug)]
pub struct OverlayShellArgs {
    /// Overlay id or name
    pub id: String,
}

/// `overlay path`.
#[derive(Args, Debug)]
pub struct OverlayPathArgs {
    /// Overlay id or name
    pub id: String,
}

/// `overlay diff`.
#[derive(Args, Debug)]
pub struct OverlayDiffArgs {
    /// Overlay id or name
    pub id: String,
    /// Per file +/- counts
    #[arg(long, group = "format")]
    pub stat: bool,
    /// Status letters and paths
    #[arg(long, group = "format")]
    pub name_status: bool,
    /// The patch (the default; with --json, include it)
    #[arg(long)]
    pub patch: bool,
    /// Group the hunks by the command run in the overlay that made them (the ids `--run`
    /// and `--hunk` take; runs' edits sharing a hunk are cut apart)
    #[arg(long, conflicts_with_all = ["stat", "name_status", "patch"])]
    pub by_run: bool,
}

/// `overlay accept`.
#[derive(Args, Debug)]
pub struct OverlayAcceptArgs {
    /// Overlay id or name
    pub id: String,
    /// On conflicting lines, write conflict markers instead of leaving the file pending
    #[arg(long, value_name = "MODE", value_parser = ["skip", "markers"], default_value = "skip")]
    pub conflict: String,
    /// On a conflict, keep the workspace's version
    #[arg(long, conflicts_with = "theirs")]
    pub ours: bool,
    /// On a conflict, take the overlay's version
    #[arg(long)]
    pub theirs: bool,
    /// Accept changes to paths the workspace ignores too
    #[arg(long)]
    pub include_ignored: bool,
    /// Only this hunk (an id from `overlay diff --json`; repeatable): the rest of its file
    /// stays pending
    #[arg(long = "hunk", value_name = "ID")]
    pub hunks: Vec<String>,
    /// Choose hunk by hunk on the terminal, like `git add -p`
    #[arg(short = 'p', long = "patch", conflicts_with = "hunks")]
    pub interactive: bool,
    /// Only what run N made (numbers from `overlay diff --by-run`), also where another
    /// run's edits share its hunks
    #[arg(long, value_name = "N", conflicts_with_all = ["hunks", "interactive", "paths"])]
    pub run: Option<u32>,
    /// Only these paths
    #[arg(last = true, value_name = "PATH")]
    pub paths: Vec<OsString>,
}

/// `overlay reject`.
#[derive(Args, Debug)]
pub struct OverlayRejectArgs {
    /// Overlay id or name
    pub id: String,
    /// Only this hunk (an id from `overlay diff --json`; repeatable)
    #[arg(long = "hunk", value_name = "ID")]
    pub hunks: Vec<String>,
    /// Only what run N made (numbers from `overlay diff --by-run`)
    #[arg(long, value_name = "N", conflicts_with_all = ["hunks", "paths"])]
    pub run: Option<u32>,
    /// Only these paths
    #[arg(last = true, value_name = "PATH")]
    pub paths: Vec<OsString>,
}

/// `overlay drop`.
#[derive(Args, Debug)]
pub struct OverlayDropArgs {
    /// Overlay id or name
    pub id: String,
}

/// `rewind overlay ...`.
pub fn overlay(ctx: &Ctx, a: OverlayArgs) -> CliResult {
    match a.command {
        OverlayCommand::Create(a) => create(ctx, a),
        OverlayCommand::List => list(ctx),
        OverlayCommand::Run(a) => run(ctx, a),
        OverlayCommand::Shell(a) => shell(ctx, a),
        OverlayCommand::Path(a) => path(ctx, a),
        OverlayCommand::Diff(a) => diff(ctx, a),
        OverlayCommand::Accept(a) => accept(ctx, a),
        OverlayCommand::Reject(a) => reject(ctx, a),
        OverlayCommand::Drop(a) => drop_one(ctx, a),
    }
}

/// `overlay create`.
fn create(ctx: &Ctx, a: OverlayCreateArgs) -> CliResult {
    let OverlayCreateArgs {
        from,
        name,
        backend,
        with_ignored,
    } = a;
    let store = ctx.open_store(true)?;
    let root = ctx.workspace_root(&store)?;
    let from = match from {
        Some(r) => Some(rewind::revision::resolve(
            &store.reader()?,
            &r,
            Some(&root),
        )?),
        None => None,
    };
    let bar = super::progress::Bar::new(ctx);
    let c = ov::create(
        &store,
        &root,
        &CreateOptions {
            from,
            name,
            backend: backend.into(),
            with_ignored,
            namespace_refused: output::namespace_refused(),
        },
        &bar,
    )?;
    if let Some(why) = &c.fallback
        && !ctx.quiet
    {
        output::warn(&format!(
            "namespace overlays are unavailable here ({why}); using the copy backend"
        ));
    }
    if ctx.json {
        output::print_json(&rewind::wire::OverlayCreated::new(&store, &c)?)?;
    } else {
        println!("{}", c.overlay.id());
    }
    Ok(0)
}

/// `overlay list`.
fn list(ctx: &Ctx) -> CliResult {
    let store = ctx.open_store(false)?;
    let records = ov::list(&store)?;
    if ctx.json {
        let v = records
            .iter()
            .map(|r| rewind::wire::Overlay::new(&store, r))
            .collect::<rewind::Result<Vec<_>>>()?;
        output::print_json(&v)?;
        return Ok(0);
    }
    let mut rows = Vec::new();
    for rec in records {
        let (pending, running) = rec.pending_now(&store);
        rows.push((rec, pending, running));
    }
    {
        if !rows.is_empty() && !ctx.quiet {
            println!(
                "{:<4} {:<12} {:<9} {:<12}  {:<20}  {:<9}  WORKSPACE",
                "ID", "NAME", "BACKEND", "BASE", "CREATED", "PENDING"
            );
        }
        for (r, p, running) in &rows {
            println!(
                "{:<4} {:<12} {:<9} {}  {}  {:<9}{}  {}",
                r.id(),
                r.name().unwrap_or("-"),
                r.backend().name(),
                paint(ctx.color, output::id_style(), &r.base().short()),
                format_time(r.created_ns()),
                format!("{} pending", p.map_or("?".into(), |n| n.to_string())),
                if *running { " (running)" } else { "" },
                path_str(r.workspace())
            );
        }
    }
    Ok(0)
}

/// `overlay run`.
fn run(ctx: &Ctx, a: OverlayRunArgs) -> CliResult {
    let OverlayRunArgs { id, command } = a;
    run_in(ctx, &id, command)
}

/// `overlay shell`.
fn shell(ctx: &Ctx, a: OverlayShellArgs) -> CliResult {
    let OverlayShellArgs { id } = a;
    let shell = std::env::var_os("SHELL").unwrap_or_else(|| "/bin/sh".into());
    run_in(ctx, &id, vec![shell])
}

/// `overlay path`.
fn path(ctx: &Ctx, a: OverlayPathArgs) -> CliResult {
    let OverlayPathArgs { id } = a;
    let store = ctx.open_store(false)?;
    let rec = ov::find(&store, &id)?;
    let path = match rec.files_dir(&store) {
        Some(dir) => dir,
        None => {
            return Err(rewind::Error::Invalid(format!(
                "overlay {} uses the namespace backend: its files are only visible inside it (`rewind overlay exec {} -- CMD`, or `rewind overlay shell {}`)",
                rec.id(), rec.id(), rec.id()
            ))
            .into());
        }
    };
    if ctx.json {
        output::print_json(&rewind::wire::OverlayPath {
            id: rec.id(),
            path: path.display().to_string(),
        })?;
    } else {
        println!("{}", path.display());
    }
    Ok(0)
}

/// `overlay diff`.
fn diff(ctx: &Ctx, a: OverlayDiffArgs) -> CliResult {
    let OverlayDiffArgs {
        id,
        stat,
        name_status,
        patch,
        by_run,
    } = a;
    let store = ctx.open_store(false)?;
    let mut rec = ov::find(&store, &id)?;
    if by_run {
        return print_by_run(ctx, &store, &mut rec);
    }
    let od = rec.diff(&store, true)?;
    if !ctx.json && !ctx.quiet && !od.ignored.is_empty() {
        output::warn(&format!(
            "ignored paths written in the overlay, not shown (copy them with accept --include-ignored): {}",
            output::paths_text(od.ignored.iter().map(Vec::as_slice))
        ));
    }
    let args = DiffArgs {
        revs: Vec::new(),
        stat,
        numstat: false,
        name_status,
        summary: false,
        shortstat: false,
        patch,
        binary: false,
        context: 3,
        exit_code: false,
        no_renames: false,
        find_renames: None,
        diff_timeout: 5.0,
        hunks: true,
        by_run: false,
        paths: Vec::new(),
    };
    if ctx.json {
        // Each text change with its hunks' ids, for `accept`/`reject --hunk`.
        let (dopts, popts) = super::diff::options(ctx, &args);
        let v = rewind::wire::OverlayDiff::new(&store, &rec, &od, &dopts, patch.then_some(&popts))?;
        output::print_json(&v)?;
        return Ok(0);
    }
    super::diff::print(ctx, &od.diff, &args)
}

/// `overlay accept`.
fn accept(ctx: &Ctx, a: OverlayAcceptArgs) -> CliResult {
    let OverlayAcceptArgs {
        id,
        conflict,
        ours,
        theirs,
        include_ignored,
        mut hunks,
        interactive,
        run,
        paths,
    } = a;
    let store = ctx.open_store(false)?;
    let mut rec = ov::find(&store, &id)?;
    let root = rec.workspace_path();
    let policy = if ours {
        ConflictPolicy::Ours
    } else if theirs {
        ConflictPolicy::Theirs
    } else if conflict == "markers" {
        ConflictPolicy::Markers
    } else {
        ConflictPolicy::Skip
    };
    let mut paths = ctx.workspace_paths(Some(&root), &paths)?;
    let mut edited = Vec::new();
    if interactive {
        match super::hunk_prompt::choose(ctx, &store, &mut rec, &paths)? {
            Some(c) => (hunks, edited, paths) = (c.ids, c.edited, c.whole),
            None => return Ok(0),
        }
    }
    let r = rec.accept(
        &store,
        &AcceptOptions {
            paths,
            policy,
            include_ignored,
            hunks,
            edited,
            run,
        },
    )?;
    // Conflicts left pending or written as markers both exit 1, as `apply` does.
    let marked = r.files.iter().any(|f| f.conflicts > 0);
    let code = if r.conflicts.is_empty() && !marked {
        0
    } else {
        1
    };
    if ctx.json {
        output::print_json(&rewind::wire::OverlayAccept::new(rec.id(), &r))?;
        return Ok(code);
    }
    if !ctx.quiet {
        for f in r.files.iter().filter(|f| f.action != "conflict") {
            let note = if f.conflicts > 0 {
                format!(
                    " ({} marked)",
                    output::count(f.conflicts, "conflict region")
                )
            } else {
                String::new()
            };
            println!("{:<9} {}{note}", f.action, output::path_text(&f.path));
        }
        for c in &r.conflicts {
            println!(
                "{} {}: {}",
                paint(ctx.color, output::bold(), "conflict "),
                output::path_text(&c.path),
                hints::conflict_why(c)
            );
        }
        if !r.ignored.is_empty() {
            output::warn(&format!(
                "{} left in the overlay (use --include-ignored): {}",
                output::count(r.ignored.len(), "ignored path"),
                output::paths_text(r.ignored.iter().map(Vec::as_slice))
            ));
        }
        if !r.ignored_copied.is_empty() {
            eprintln!(
                "rewind: copied {} into the workspace ({}); no snapshot holds ignored files, so `undo` leaves them",
                output::count(r.ignored_files as usize, "ignored file"),
                output::paths_text(r.ignored_copied.iter().map(Vec::as_slice))
            );
        }
        if let Some(op) = r.op {
            eprintln!("rewind: accepted as operation {op} (undo with `rewind undo`)");
        }
        if !r.conflicts.is_empty() {
            eprintln!(
                "rewind: {} conflicting path(s) left untouched and pending; retry with --conflict=markers, --ours or --theirs",
                r.conflicts.len()
            );
        }
    }
    Ok(code)
}

/// `overlay reject`.
fn reject(ctx: &Ctx, a: OverlayRejectArgs) -> CliResult {
    let OverlayRejectArgs {
        id,
        hunks,
        run,
        paths,
    } = a;
    let store = ctx.open_store(false)?;
    let mut rec = ov::find(&store, &id)?;
    let paths = ctx.workspace_paths(Some(&rec.workspace_path()), &paths)?;
    let r = match run {
        Some(n) => rec.reject_run(&store, n)?,
        None => rec.reject(&store, &paths, &hunks)?,
    };
    if ctx.json {
        output::print_json(&rewind::wire::OverlayReject::new(rec.id(), &r))?;
    } else if !ctx.quiet {
        for p in &r.paths {
            println!("rejected  {}", output::path_text(p));
        }
    }
    Ok(0)
}

/// `overlay drop`.
fn drop_one(ctx: &Ctx, a: OverlayDropArgs) -> CliResult {
    let OverlayDropArgs { id } = a;
    let store = ctx.open_store(false)?;
    let rec = ov::find(&store, &id)?;
    rec.drop_overlay(&store)?;
    if ctx.json {
        output::print_json(&rewind::wire::OverlayDropped { dropped: rec.id() })?;
    } else if !ctx.quiet {
        eprintln!("rewind: dropped overlay {}", rec.id());
    }
    Ok(0)
}

/// Runs a command in the overlay (the run of `run --isolate`, on this overlay, accepting
/// nothing); exits with its code. With --json, prints the run result.
fn run_in(ctx: &Ctx, id: &str, argv: Vec<OsString>) -> CliResult {
    let (key, root) = {
        let store = ctx.open_store(false)?;
        let rec = ov::find(&store, id)?;
        (rec.id().to_string(), rec.workspace_path())
    };
    let opts = rewind::run::RunOptions {
        command: argv,
        // The command starts where the user is, relative to the workspace (its root when
        // the user is outside it).
        cwd: std::env::current_dir().ok(),
        forward_signals: true,
        isolate: Some(rewind::run::isolate::Isolate {
            overlay: Some(key),
            existing: true,
            accept: AcceptWhen::Never,
            keep: true,
            ..Default::default()
        }),
        no_watch: std::env::var_os("REWIND_NO_WATCH").is_some(),
        ..Default::default()
    };
    let open = || ctx.open_store(false);
    let r = rewind::run::run(&open, &root, &opts, &mut |_| {})?;
    if let Some(e) = &r.spawn_error {
        output::error_line(e, ctx.json);
    }
    if ctx.json {
        output::print_json(&rewind::wire::RunResult::from(&r))?;
    }
    Ok(r.exit_code())
}

/// `overlay diff --by-run`: the pending hunks under the run that made them.
fn print_by_run(ctx: &Ctx, store: &rewind::Store, rec: &mut Overlay) -> CliResult {
    let od = rec.diff(store, false)?;
    let groups = rec.by_run(store, &od.diff)?;
    let runs = rewind::wire::OverlayRuns::new(rec.id(), groups);
    if ctx.json {
        output::print_json(&runs)?;
        return Ok(0);
    }
    if ctx.quiet {
        return Ok(0);
    }
    for g in &runs.runs {
        let title = match (g.run, &g.command) {
            (Some(0), _) => "made outside any run".to_string(),
            (Some(n), Some(cmd)) => format!(
                "run {n}: {cmd} (finished {})",
                g.finished.as_deref().unwrap_or("?")
            ),
            (Some(n), None) => format!("run {n}"),
            (None, _) => "runs' edits interleaved (take them by --hunk)".to_string(),
        };
        super::who::print_run_group(ctx, &title, &g.files);
    }
    Ok(0)
}
