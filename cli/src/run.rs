//! `run`, `check` and `artifact`: argument parsing and printing only; the work is in
//! [`rewind::run`], [`rewind::contract`] and [`rewind::artifact`].

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::{self, BufWriter, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};

use super::output::{self, format_time, human_bytes, paint, path_str};
use super::{CliResult, Ctx};
use rewind::contract::{Contract, OnViolation};
use rewind::error::{Error, IoContext};
use rewind::run::{RunEvent, RunOptions, RunResult};

/// Exit code of `rewind run` when rewind itself failed (the command's own codes pass through).
pub const EXIT_RUN_ERROR: i32 = 125;

/// Contract options shared by `run` and `check`.
#[derive(Args, Debug, Clone)]
pub struct ContractArgs {
    /// Only paths matching these globs may change (repeatable; gitignore-style)
    #[arg(long = "allow", value_name = "GLOB")]
    pub allow: Vec<String>,
    /// Paths matching these globs may not change (repeatable)
    #[arg(long = "forbid", value_name = "GLOB")]
    pub forbid: Vec<String>,
    /// No file may be added
    #[arg(long)]
    pub no_new_files: bool,
    /// A TOML file with allow, forbid, no_new_files (and on_violation); flags add to it
    #[arg(long, value_name = "FILE")]
    pub contract: Option<PathBuf>,
}

impl ContractArgs {
    fn load(&self) -> Result<Contract, Error> {
        let mut c = match &self.contract {
            Some(p) => Contract::load(p)?,
            None => Contract::default(),
        };
        c.merge(Contract {
            allow: self.allow.clone(),
            forbid: self.forbid.clone(),
            no_new_files: self.no_new_files,
            on_violation: None,
        });
        Ok(c)
    }
}

/// `--on-violation`.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum OnViolationArg {
    /// List violations in the result
    Report,
    /// Put violating paths back to the before snapshot
    Revert,
    /// Report, and exit non-zero (123 when the command itself succeeded)
    Fail,
}

/// `run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// A message for both snapshots [default: the command line]
    #[arg(short, long, default_value = "", hide_default_value = true)]
    pub message: String,
    /// Attach KEY=VALUE metadata to both snapshots (repeatable)
    #[arg(long = "meta", value_name = "KEY=VALUE")]
    pub meta: Vec<String>,
    /// Leave paths matching a gitignore-style glob out of both snapshots (repeatable)
    #[arg(long = "ignore", value_name = "GLOB")]
    pub ignore: Vec<String>,
    /// Give the command a scratch directory outside the workspace ($REWIND_SCRATCH), kept with
    /// the run afterwards (`rewind scratch ls/cat RUN`)
    #[arg(long, conflicts_with = "isolate")]
    pub scratch: bool,
    /// Write the result JSON to FILE instead of stdout
    #[arg(long, value_name = "FILE")]
    pub result: Option<PathBuf>,
    /// Progress events as JSON lines appended to FILE
    #[arg(long, value_name = "FILE")]
    pub events_file: Option<PathBuf>,
    /// Put the patch in the result (as an artifact above --max-patch-bytes)
    #[arg(long)]
    pub capture_patch: bool,
    /// Largest patch kept inline in the result (e.g. 64K, 1M)
    #[arg(long, default_value = "1M", value_name = "SIZE")]
    pub max_patch_bytes: String,
    /// Restore the before snapshot when the command fails (undo with `rewind undo`)
    #[arg(long)]
    pub rollback_on_failure: bool,
    #[command(flatten)]
    pub contract: ContractArgs,
    /// What to do with contract violations [default: report, or the contract file's]
    #[arg(long, value_enum, value_name = "ACTION")]
    pub on_violation: Option<OnViolationArg>,
    /// Seconds allowed for diffing one file before it counts as a whole replacement
    #[arg(long, default_value_t = 5.0, value_name = "SECS")]
    pub diff_timeout: f64,
    /// Run in an overlay: the workspace is untouched until the changes are accepted
    #[arg(long)]
    pub isolate: bool,
    /// With --isolate: when to accept the changes onto the workspace
    #[arg(long, value_enum, default_value_t = super::overlay::AcceptArg::OnSuccess, requires = "isolate")]
    pub accept: super::overlay::AcceptArg,
    /// With --isolate: the overlay backend
    #[arg(long, value_enum, default_value_t = super::overlay::BackendArg::Auto, requires = "isolate")]
    pub backend: super::overlay::BackendArg,
    /// With --isolate: run in this overlay (id or name), created under that name the first
    /// time: one session, one overlay, across many commands
    #[arg(long, value_name = "NAME", requires = "isolate")]
    pub overlay: Option<String>,
    /// With --isolate: keep the overlay after its changes are accepted
    #[arg(long, requires = "isolate")]
    pub keep: bool,
    /// The command and its arguments
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// `check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The snapshot before
    pub a: String,
    /// The snapshot after
    pub b: String,
    #[command(flatten)]
    pub contract: ContractArgs,
    /// Put the violating paths of the workspace back to A (undoable)
    #[arg(long)]
    pub revert: bool,
}

/// `artifact`.
#[derive(Args, Debug)]
pub struct ArtifactArgs {
    #[command(subcommand)]
    pub command: ArtifactCommand,
}

/// `artifact` subcommands.
#[derive(Subcommand, Debug)]
pub enum ArtifactCommand {
    /// Store a file (or standard input) under KEY
    Put {
        /// The key (1-255 bytes, no control characters)
        key: String,
        /// The file, or - for standard input
        #[arg(default_value = "-")]
        file: PathBuf,
        /// Attach KEY=VALUE metadata (repeatable)
        #[arg(long = "meta", value_name = "KEY=VALUE")]
        meta: Vec<String>,
        /// Replace an existing artifact
        #[arg(long)]
        force: bool,
    },
    /// Write an artifact to standard output (or a file)
    Get {
        /// The key
        key: String,
        /// Write to FILE instead of standard output (- is standard output)
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// List artifacts
    Ls,
    /// Delete an artifact (its content stays while anything else uses it)
    Rm {
        /// The key
        key: String,
    },
}

/// `scratch`.
#[derive(Args, Debug)]
pub struct ScratchArgs {
    #[command(subcommand)]
    pub command: ScratchCommand,
}

/// `scratch` subcommands.
#[derive(Subcommand, Debug)]
pub enum ScratchCommand {
    /// List a run's scratch files (RUN: its after snapshot)
    Ls {
        /// The run's after snapshot (an id, tag, @)
        run: String,
    },
    /// Print one scratch file of a run
    Cat {
        /// The run's after snapshot
        run: String,
        /// The file, relative to the scratch directory
        path: String,
    },
}

/// `rewind scratch`.
pub fn scratch(ctx: &Ctx, a: ScratchArgs) -> CliResult {
    let store = ctx.open_store(false)?;
    let reader = store.reader()?;
    let rev = match &a.command {
        ScratchCommand::Ls { run } | ScratchCommand::Cat { run, .. } => run,
    };
    let run = super::inspect::resolve(ctx, &store, &reader, rev)?;
    drop(reader);
    match a.command {
        ScratchCommand::Ls { .. } => {
            let files = rewind::scratch::list(&store, &run)?;
            if ctx.json {
                let v: Vec<rewind::wire::ScratchFile> = files
                    .iter()
                    .map(|(p, r)| rewind::wire::ScratchFile::new(&run, p, r))
                    .collect();
                output::print_json(&v)?;
            } else {
                let mut out = BufWriter::new(io::stdout().lock());
                for (p, r) in &files {
                    writeln!(out, "{:>10}  {p}", human_bytes(r.size()))?;
                }
                out.flush()?;
            }
        }
        ScratchCommand::Cat { path, .. } => {
            let mut out = io::stdout().lock();
            rewind::scratch::cat(&store, &run, &path, &mut out)?;
            out.flush()?;
        }
    }
    Ok(0)
}

/// `rewind run`. Errors end with [`EXIT_RUN_ERROR`], so they are never confused with the
/// command's own exit codes.
pub fn run(ctx: &Ctx, a: RunArgs) -> CliResult {
    let result_file = a.result.clone();
    match run_inner(ctx, a) {
        Ok(code) => Ok(code),
        Err(e) => {
            let body = match e {
                super::CliError::Lib(e) => {
                    output::error_report(&e, ctx.json && result_file.is_none());
                    output::error_body(&e)
                }
                super::CliError::Io(e) => {
                    let msg = format!("writing output: {e}");
                    output::error_line(&msg, ctx.json && result_file.is_none());
                    rewind::wire::ErrorBody::new(rewind::wire::ErrorCode::Unavailable, msg)
                }
            };
            if let Some(path) = &result_file {
                let _ = write_atomic(path, &body);
            }
            Ok(EXIT_RUN_ERROR)
        }
    }
}

fn run_inner(ctx: &Ctx, a: RunArgs) -> CliResult {
    // Where the result goes is checked before the command runs: found unwritable afterwards,
    // the command would have run and its operation been recorded for a result nobody gets.
    if let Some(path) = &a.result {
        check_writable(path).map_err(|e| {
            Error::Invalid(format!(
                "--result {}: cannot write the result there ({}); nothing was run",
                path.display(),
                super::hints::message(&e)
            ))
        })?;
    }
    let contract = a.contract.load()?;
    let on_violation = match a.on_violation {
        Some(OnViolationArg::Report) => OnViolation::Report,
        Some(OnViolationArg::Revert) => OnViolation::Revert,
        Some(OnViolationArg::Fail) => OnViolation::Fail,
        None => contract.on_violation.unwrap_or_default(),
    };
    let (root, cwd) = {
        let store = ctx.open_store(true)?;
        // The run retention reads config.toml once the command is over, and a mistake in it
        // never fails a run (the result's `retention.error` says it): said here too, once,
        // whatever the output mode, so a typo does not silently keep every run snapshot.
        if let Err(e) = rewind::config::Config::load(store.dir()) {
            output::warn(&format!(
                "{}; the run retention will not run",
                super::hints::message(&e)
            ));
        }
        let root = ctx.workspace_root(&store)?;
        // With -C the command starts in that directory (as with `git -C`); otherwise where
        // the user is, which may be below the workspace root.
        let cwd = match &ctx.workspace {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().map_err(|e| Error::io(".", e))?,
        };
        (root, Some(cwd))
    };
    let opts = RunOptions {
        command: a.command,
        cwd,
        message: a.message,
        meta: output::parse_meta(&a.meta)?,
        capture_patch: a.capture_patch,
        max_patch_bytes: output::parse_size(&a.max_patch_bytes)?,
        rollback_on_failure: a.rollback_on_failure,
        contract,
        on_violation,
        diff_timeout: super::output::seconds(a.diff_timeout.max(0.001)),
        forward_signals: true,
        isolate: a.isolate.then(|| rewind::run::isolate::Isolate {
            backend: a.backend.into(),
            accept: a.accept.into(),
            overlay: a.overlay.clone(),
            existing: false,
            keep: a.keep,
            namespace_refused: output::namespace_refused(),
        }),
        no_watch: std::env::var_os("REWIND_NO_WATCH").is_some(),
        ignore_globs: a.ignore,
        scratch: if a.scratch {
            Some(rewind::scratch::create(&ctx.open_store(true)?)?)
        } else {
            None
        },
    };
    let mut events_file = match &a.events_file {
        Some(p) => Some(OpenOptions::new().create(true).append(true).open(p).at(p)?),
        None => None,
    };
    let mut event_error = None;
    let mut on_event = |ev: &RunEvent| {
        let Ok(line) = serde_json::to_string(ev) else {
            return;
        };
        if ctx.events {
            eprintln!("{line}");
        }
        if let Some(f) = &mut events_file
            && let Err(e) = writeln!(f, "{line}")
        {
            event_error.get_or_insert(e);
        }
    };
    let open = || ctx.open_store(true);
    let r = rewind::run::run(&open, &root, &opts, &mut on_event)?;
    if let (Some(e), Some(p)) = (event_error, &a.events_file) {
        output::warn(&format!("writing events to {}: {e}", p.display()));
    }
    let scratch = match &opts.scratch {
        Some(dir) => {
            let store = ctx.open_store(true)?;
            Some(rewind::scratch::keep(&store, dir, &r.after)?)
        }
        None => None,
    };
    let mut reported = rewind::wire::RunResult::from(&r);
    reported.scratch = scratch.map(Into::into);
    // Through a Value, as it always was: its keys come out sorted.
    let reported = serde_json::to_value(&reported)
        .map_err(|e| Error::Invalid(format!("encoding the result: {e}")))?;
    match (&a.result, ctx.json) {
        (Some(path), _) => write_atomic(path, &reported)?,
        (None, true) => output::print_json(&reported)?,
        (None, false) => {}
    }
    // With --json on stdout, the result says it all; with --events, stderr holds JSON lines
    // only; otherwise a line for people on stderr.
    let json_on_stdout = ctx.json && a.result.is_none();
    let events_on_stderr = ctx.events;
    if !ctx.quiet && !json_on_stdout && !events_on_stderr {
        print_summary(&r);
    }
    if rewind::run::signals::killed() && !events_on_stderr {
        output::warn(&format!(
            "interrupted: a second signal killed the command's process group; the run is recorded as interrupted (operation {}), and `rewind undo` takes back what it changed",
            r.op
        ));
    }
    Ok(r.exit_code())
}

/// The human summary, on stderr: stdout belongs to the command.
fn print_summary(r: &RunResult) {
    let color = output::auto_color(output::Stream::Stderr);
    let ended = match (&r.spawn_error, r.exit_code, r.signal) {
        (Some(e), _, _) => format!("could not start ({e})"),
        (_, _, Some(sig)) => format!("killed by {}", rewind::run::signals::name(sig)),
        (_, Some(c), _) => format!("exit {c}"),
        _ => "ended".into(),
    };
    eprintln!(
        "rewind: {} -> {}: {ended}, {}, {:.2} s",
        paint(color, output::id_style(), &r.before.short()),
        paint(color, output::id_style(), &r.after.short()),
        rewind::diff::stat::summary_line(r.diff.files_changed, r.diff.insertions, r.diff.deletions)
            .trim(),
        r.total_seconds
    );
    for s in r.skipped.iter().filter(|s| s.warn) {
        output::warn(&format!(
            "{}: {} ({})",
            path_str(&s.path),
            s.reason.name(),
            s.detail
        ));
    }
    for v in &r.violations {
        eprintln!(
            "rewind: violation: {} {} ({})",
            path_str(&v.path),
            v.reason.name().replace('_', " "),
            v.status.name()
        );
    }
    if let Some(k) = &r.patch_ref {
        eprintln!(
            "rewind: patch ({}) stored as artifact '{k}'",
            human_bytes(r.patch_bytes.unwrap_or(0))
        );
    }
    if !r.reverted.is_empty() {
        eprintln!(
            "rewind: reverted {} to {} (undo with `rewind undo`)",
            output::count(r.reverted.len(), "path"),
            r.before.short()
        );
    }
    if let Some(o) = &r.overlay {
        if let Some(why) = &o.fallback {
            eprintln!("rewind: namespace overlays unavailable ({why}); used the copy backend");
        }
        if !o.conflicts.is_empty() {
            eprintln!(
                "rewind: {} path(s) conflict with the workspace and stay pending in overlay {}: {}",
                o.conflicts.len(),
                o.id,
                o.conflicts
                    .iter()
                    .map(|p| path_str(p))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if o.accepted {
            eprintln!("rewind: accepted onto the workspace (undo with `rewind undo`)");
        }
        if o.kept {
            eprintln!(
                "rewind: overlay {} kept: `rewind overlay diff {}`, `accept`, or `drop`",
                o.id, o.id
            );
        }
    }
    if r.rolled_back {
        eprintln!(
            "rewind: rolled back to {}; the failed state is {} (undo with `rewind undo`)",
            r.before.short(),
            r.after.short()
        );
    }
}

/// Fails unless [`write_atomic`] can write `path`: it is not a directory, and a temporary
/// file can be made beside it (made and removed at once, so the command never sees it in the
/// workspace).
fn check_writable(path: &Path) -> Result<(), Error> {
    if path.is_dir() {
        return Err(Error::io(
            path,
            io::Error::new(io::ErrorKind::IsADirectory, "is a directory"),
        ));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    tempfile::Builder::new()
        .prefix(".rewind-result-")
        .tempfile_in(dir)
        .at(dir)?
        .close()
        .at(dir)
}

/// Writes JSON to `path` through a temporary sibling renamed into place, so a reader never
/// sees half a result.
fn write_atomic<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), Error> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".rewind-result-")
        .tempfile_in(dir)
        .at(dir)?;
    serde_json::to_writer_pretty(&mut tmp, value)
        .map_err(|e| Error::io(path, io::Error::other(e)))?;
    tmp.write_all(b"\n").at(path)?;
    std::fs::set_permissions(
        tmp.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .at(path)?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// `rewind check`.
pub fn check(ctx: &Ctx, a: CheckArgs) -> CliResult {
    let contract = a.contract.load()?;
    let store = ctx.open_store(false)?;
    let reader = store.reader()?;
    let ida = super::inspect::resolve(ctx, &store, &reader, &a.a)?;
    let idb = super::inspect::resolve(ctx, &store, &reader, &a.b)?;
    let workspace = if a.revert {
        Some(match &ctx.workspace {
            Some(_) => ctx.workspace_root(&store)?,
            // The workspace A was taken of, wherever the user is.
            None => PathBuf::from(std::ffi::OsStr::from_bytes(
                reader.snapshot(&ida)?.workspace(),
            )),
        })
    } else {
        None
    };
    drop(reader);
    let r = rewind::run::check(&store, ida, idb, &contract, workspace.as_deref())?;
    let code = if r.violations.is_empty() { 0 } else { 1 };
    if ctx.json {
        output::print_json(&rewind::wire::ContractCheck::new(&r, !contract.is_empty()))?;
        return Ok(code);
    }
    let mut out = BufWriter::new(io::stdout().lock());
    if r.violations.is_empty() {
        if !ctx.quiet && contract.is_empty() {
            writeln!(
                out,
                "no rules to check between {} and {} (give --allow, --forbid, --no-new-files or --contract FILE)",
                ida.short(),
                idb.short()
            )?;
        } else if !ctx.quiet {
            writeln!(
                out,
                "no violations between {} and {}",
                ida.short(),
                idb.short()
            )?;
        }
    } else {
        for v in &r.violations {
            writeln!(
                out,
                "{:<20} {}",
                v.reason.name(),
                output::path_text(&v.path)
            )?;
        }
        if !r.reverted.is_empty() && !ctx.quiet {
            writeln!(
                out,
                "reverted {} to {} (undo with `rewind undo`)",
                output::count(r.reverted.len(), "path"),
                ida.short()
            )?;
        }
    }
    out.flush()?;
    Ok(code)
}

/// `rewind artifact`.
pub fn artifact(ctx: &Ctx, a: ArtifactArgs) -> CliResult {
    match a.command {
        ArtifactCommand::Put {
            key,
            file,
            meta,
            force,
        } => {
            let meta = output::parse_meta(&meta)?;
            let store = ctx.open_store(true)?;
            let r = if file.as_os_str() == "-" {
                let stdin = io::stdin();
                let mut lock = stdin.lock();
                rewind::artifact::put(&store, &key, &mut lock, meta, force)?
            } else {
                rewind::artifact::put_file(&store, &key, &file, meta, force)?
            };
            if ctx.json {
                output::print_json(&rewind::wire::ArtifactStored::from(&r))?;
            } else if !ctx.quiet {
                println!(
                    "{}  {}, {} stored{}",
                    r.artifact.key(),
                    human_bytes(r.artifact.size()),
                    human_bytes(r.stored_bytes),
                    if r.replaced { ", replaced" } else { "" }
                );
            }
            Ok(0)
        }
        ArtifactCommand::Get { key, output: dest } => {
            let store = ctx.open_store(false)?;
            // `-o -` is standard output, as `-` is for `put`'s input.
            match dest.filter(|p| p.as_os_str() != "-") {
                Some(p) => {
                    rewind::artifact::get_to_file(&store, &key, &p)?;
                }
                None => {
                    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
                    rewind::artifact::get(&store, &key, &mut out)?;
                    out.flush()?;
                }
            }
            Ok(0)
        }
        ArtifactCommand::Ls => {
            let store = ctx.open_store(false)?;
            let list = rewind::artifact::list(&store)?;
            if ctx.json {
                let v: Vec<rewind::wire::Artifact> =
                    list.iter().map(rewind::wire::Artifact::new).collect();
                output::print_json(&v)?;
                return Ok(0);
            }
            let mut out = BufWriter::new(io::stdout().lock());
            for a in &list {
                let meta: Vec<String> = a
                    .meta_pairs()
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                writeln!(
                    out,
                    "{}  {:>10}  {}  {}",
                    format_time(a.created_ns()),
                    human_bytes(a.size()),
                    a.key(),
                    meta.join(" ")
                )?;
            }
            out.flush()?;
            Ok(0)
        }
        ArtifactCommand::Rm { key } => {
            let store = ctx.open_store(false)?;
            rewind::artifact::remove(&store, &key)?;
            if !ctx.quiet && !ctx.json {
                println!("removed artifact {key}");
            } else if ctx.json {
                output::print_json(&rewind::wire::ArtifactRemoved { removed: key })?;
            }
            Ok(0)
        }
    }
}
