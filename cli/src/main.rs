//! The command-line interface. Each submodule parses one command family's arguments, calls the
//! library and hands the result to a printer (human or JSON); no logic of its own.
//!
//! Exit codes: 0 success; 1 "yes, there are differences / violations / conflicts" answers
//! (diff --exit-code, check, revert, apply, overlay accept); 2 rewind itself failed (bad input,
//! store errors); 75 another process held a lock or remote the command needed (retry it).
//! `rewind run` exits with its command's code, and 125 when rewind failed around it.

fn main() {
    std::process::exit(run_cli());
}

/// Set by the panic hook when the database panicked: redb trusts its pages and may panic on a
/// damaged one instead of returning an error.
static STORE_PANICKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Keeps the database's panics off stderr (they are reported as a damaged store instead, see
/// `run_cli`); every other panic is printed as usual, since it is a bug of rewind's own.
fn quiet_store_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.location().is_some_and(|l| l.file().contains("redb")) {
            STORE_PANICKED.store(true, std::sync::atomic::Ordering::SeqCst);
            return;
        }
        default(info);
    }));
}

mod apply;
mod args;
#[cfg(feature = "daemon")]
mod daemon;
mod diff;
mod events;
mod export;
mod hints;
mod hook;
mod hook_settings;
mod hunk_prompt;
mod inspect;
mod maintain;
mod mcp;
mod output;
mod overlay;
mod progress;
#[cfg(feature = "remote")]
mod remote;
#[cfg(not(feature = "remote"))]
#[path = "remote_off.rs"]
mod remote;
mod restore;
mod run;
mod serve;
mod shell;
mod snap;
mod tag;
mod who;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use args::Cli;
use args::Command;
use rewind::error::Error;
use rewind::files::RelPath;
use rewind::store::{Store, StoreOptions};

/// Exit code when rewind itself fails.
pub const EXIT_ERROR: i32 = 2;
/// Exit code when files conflict (revert, apply --3way, overlay accept): nothing was written
/// where they did, and the conflicts are listed.
pub const EXIT_CONFLICT: i32 = 1;
/// Exit code when a signal (SIGINT) stopped a command part way, as a shell reports it.
pub const EXIT_INTERRUPTED: i32 = 130;
/// Exit code when another process held what was needed (a lock, a remote, a gc): the same
/// command later may succeed. sysexits.h's EX_TEMPFAIL, which retry loops already know.
pub const EXIT_BUSY: i32 = 75;

/// An error on the way out: the library's, or a failed write to the terminal.
#[derive(Debug)]
pub enum CliError {
    /// From the library.
    Lib(Error),
    /// Writing output failed (a closed pipe is handled before this is shown).
    Io(io::Error),
}

impl From<Error> for CliError {
    fn from(e: Error) -> Self {
        CliError::Lib(e)
    }
}
impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        CliError::Io(e)
    }
}

/// What a command returns: its exit code.
pub type CliResult = Result<i32, CliError>;

/// The per-user default store directory (`~/.local/share/rewind`), when neither --store nor
/// `$REWIND_STORE` names one.
fn default_store_dir() -> Result<PathBuf, Error> {
    dirs::data_dir().map(|d| d.join("rewind")).ok_or_else(|| {
        Error::Invalid(
            "cannot find a per-user data directory: set REWIND_STORE or pass --store DIR".into(),
        )
    })
}

/// What may not become a workspace without --force, besides `/`: the home directory, since
/// snapshotting it by accident would copy a whole disk into the store.
pub fn refused_workspaces() -> Vec<PathBuf> {
    dirs::home_dir().into_iter().collect()
}

/// Settings every command shares.
pub struct Ctx {
    /// The parsed global options.
    pub store_dir: Option<PathBuf>,
    /// `-C`.
    pub workspace: Option<PathBuf>,
    /// `--json`.
    pub json: bool,
    /// `-q`.
    pub quiet: bool,
    /// `--events`: progress as JSON lines on stderr.
    pub events: bool,
    /// Lock timeout.
    pub lock_timeout: Duration,
    /// Colours on stdout.
    pub color: bool,
    /// Leave the store without redb's close at exit (`StoreOptions::skip_close`).
    pub skip_close: bool,
}

impl Ctx {
    /// The store directory: --store, else `$REWIND_STORE`, else the per-user default.
    pub fn store_path(&self) -> Result<PathBuf, Error> {
        Ok(match &self.store_dir {
            Some(d) => d.clone(),
            None => match std::env::var_os("REWIND_STORE").filter(|v| !v.is_empty()) {
                Some(dir) => PathBuf::from(dir),
                None => default_store_dir()?,
            },
        })
    }

    /// Opens the store; `create` makes it when missing.
    pub fn open_store(&self, create: bool) -> Result<Store, Error> {
        let dir = self.store_path()?;
        let dir_shown = dir.display().to_string();
        let quiet = self.quiet;
        // Once per process, however many transactions wait, naming who has the store open.
        let said = std::sync::atomic::AtomicBool::new(false);
        let holders_of = dir.clone();
        let on_wait: Arc<dyn Fn() + Send + Sync> = Arc::new(move || {
            if !quiet && !said.swap(true, std::sync::atomic::Ordering::Relaxed) {
                let who = rewind::store::holders::describe_others(&holders_of);
                eprintln!(
                    "rewind: waiting for another rewind process ({who}) to finish writing to {dir_shown} ..."
                );
            }
        });
        Store::open(
            &dir,
            StoreOptions {
                create,
                lock_timeout: self.lock_timeout,
                on_wait: Some(on_wait),
                on_notice: Some(Arc::new(move |what: &str| {
                    if !quiet {
                        eprintln!("rewind: {what}");
                    }
                })),
                on_warning: Some(Arc::new(|what: &str| output::warn(what))),
                command: std::env::args_os()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect(),
                actor: None,
                refused_workspaces: refused_workspaces(),
                skip_close: self.skip_close,
            },
        )
    }

    /// Paths given after `--`, as workspace-relative byte paths. Relative paths are taken from
    /// the current directory when it lies inside the workspace (as git's pathspecs are), else
    /// from the workspace root; absolute paths must lie inside the workspace. Paths are bytes
    /// (`OsString` arguments), so names that are not UTF-8 work.
    pub fn workspace_paths<S: AsRef<std::ffi::OsStr>>(
        &self,
        root: Option<&Path>,
        paths: &[S],
    ) -> Result<Vec<RelPath>, Error> {
        use std::os::unix::ffi::OsStrExt;
        use std::path::Component;
        let Some(root) = root else {
            return paths
                .iter()
                .map(|p| RelPath::parse(p.as_ref().as_bytes()))
                .collect();
        };
        let cwd = std::env::current_dir().and_then(|d| d.canonicalize()).ok();
        let base = match cwd.as_deref().map(|c| c.strip_prefix(root)) {
            Some(Ok(inside)) => root.join(inside),
            _ => root.to_path_buf(),
        };
        let mut out = Vec::with_capacity(paths.len());
        for p in paths {
            let p = p.as_ref();
            let full = base.join(p);
            // Lexical: `..` climbs what was written, so a symlink in the path is never followed.
            let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
            for c in full.components() {
                match c {
                    Component::Normal(n) => parts.push(n),
                    Component::ParentDir => {
                        parts.pop();
                    }
                    Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
                }
            }
            let normal: PathBuf = std::iter::once(std::ffi::OsStr::new("/"))
                .chain(parts)
                .collect();
            let rel = normal.strip_prefix(root).map_err(|_| {
                Error::Invalid(format!(
                    "{} is outside the workspace {}",
                    output::path_text(p.as_bytes()),
                    root.display()
                ))
            })?;
            out.push(RelPath::from_path(rel)?);
        }
        Ok(out)
    }

    /// The workspace root: `-C DIR`, else the nearest registered ancestor of the current
    /// directory, else the current directory.
    pub fn workspace_root(&self, store: &Store) -> Result<PathBuf, Error> {
        match &self.workspace {
            Some(dir) => rewind::workspace::resolve(dir),
            None => {
                let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
                rewind::workspace::discover(store, &cwd)
            }
        }
    }
}

/// A command line clap refused: its message (and under `--json`, `{"error": ..., "kind": ...}`
/// on stdout with the whole message, uncoloured), with a hint where a new user is likely to
/// trip; `--help` and `--version` print and exit 0. The arguments are read as bytes: one that
/// is not UTF-8 is what brought some of these errors here. A usage error of `run` exits 125,
/// as every failure of rewind's own there does, so it is never taken for the command's code.
fn usage_error(e: clap::Error) -> i32 {
    use clap::error::{ContextKind, ErrorKind};
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let options = args.iter().take_while(|a| *a != "--");
    let json = options.clone().any(|a| a == "--json");
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return 0;
    }
    let code = if subcommand_of(&args) == Some("run") {
        run::EXIT_RUN_ERROR
    } else {
        EXIT_ERROR
    };
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        let _ = e.print();
    } else {
        // Prefixed as every other error of rewind's is, so a script or a person scanning
        // stderr finds it the same way.
        let rendered = e.render();
        let text = if output::auto_color(output::Stream::Stderr) {
            rendered.ansi().to_string()
        } else {
            rendered.to_string()
        };
        eprint!("rewind: {text}");
    }
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        if json {
            let _ = output::print_json(&rewind::wire::ErrorBody::new(
                rewind::wire::ErrorCode::Usage,
                "a command is required",
            ));
        }
        return code;
    }
    // clap's own refusal of a non-UTF-8 value (from a parser other than `args::Text`) names
    // no argument: name the first one that is not UTF-8.
    let text = e.render().to_string();
    let unnamed = (e.kind() == ErrorKind::InvalidUtf8 && !text.contains(args::NOT_UTF8))
        .then(|| std::env::args_os().skip(1).find(|a| a.to_str().is_none()))
        .flatten()
        .map(|a| {
            format!(
                "the argument {}{}",
                output::path_text(output::arg_bytes(&a)),
                args::NOT_UTF8
            )
        });
    if let Some(line) = &unnamed {
        eprintln!("rewind: {line}");
    }
    // `rewind run python3 x.py`: the command must follow `--`.
    if e.kind() == ErrorKind::UnknownArgument
        && options.clone().any(|a| a == "run")
        && !args.iter().any(|a| a == "--")
        && let Some(clap::error::ContextValue::String(bad)) = e.get(ContextKind::InvalidArg)
        && let Some(at) = args.iter().position(|a| a == bad)
    {
        eprintln!(
            "rewind: hint: the command to run goes after `--`: rewind run -- {}",
            args[at..].join(" ")
        );
    }
    if json {
        let mut v = usage_json(&text);
        if let Some(line) = unnamed {
            v.error = format!("{}\n{line}", v.error);
        }
        let _ = output::print_json(&v);
    }
    code
}

/// The subcommand a command line names (None when clap cannot tell).
fn subcommand_of(args: &[String]) -> Option<&'static str> {
    use clap::CommandFactory;
    let m = Cli::command()
        .ignore_errors(true)
        .try_get_matches_from(args)
        .ok()?;
    let name = m.subcommand_name()?;
    ["run"].into_iter().find(|n| *n == name)
}

/// A usage error as JSON: clap's whole message without colours or the `error: ` label (the
/// argument it is about is on its second line, "the following required arguments were not
/// provided:" alone says nothing).
fn usage_json(rendered: &str) -> rewind::wire::ErrorBody {
    let text = rendered.trim().trim_start_matches("error: ");
    rewind::wire::ErrorBody::new(rewind::wire::ErrorCode::Usage, text)
}

/// Runs the CLI with the process's arguments; returns the exit code.
fn run_cli() -> i32 {
    let cli = match args::parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    rewind::interrupt::set_test_interrupt_after(
        std::env::var("REWIND_TEST_INTERRUPT_AFTER")
            .ok()
            .and_then(|v| v.parse().ok()),
    );
    let color = output::stdout_color(cli.color);
    let ctx = Ctx {
        store_dir: cli.store.clone(),
        workspace: cli.directory.clone(),
        json: cli.json,
        quiet: cli.quiet,
        events: cli.events,
        lock_timeout: output::seconds(cli.lock_timeout),
        color,
        // The commands an editor or agent runs all the time skip redb's close: it would only
        // re-sync what every commit already made durable (four fdatasyncs). The others keep
        // it, which also trims the file (see `StoreOptions::skip_close`).
        skip_close: matches!(
            cli.command,
            Command::Snapshot(_)
                | Command::Status(_)
                | Command::Diff(_)
                | Command::Log(_)
                | Command::Run(_)
                | Command::Hook(_)
        ),
    };
    quiet_store_panics();
    let store_dir = ctx.store_dir.clone().or_else(|| {
        std::env::var_os("REWIND_STORE")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    });
    let dispatched =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(&ctx, cli.command)));
    let result = match dispatched {
        Ok(r) => r,
        Err(payload) if STORE_PANICKED.load(std::sync::atomic::Ordering::SeqCst) => {
            let why = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a database page does not decode".into());
            Err(CliError::Lib(Error::Damaged {
                path: store_dir.unwrap_or_default(),
                why: format!("the database could not read a page: {why}"),
            }))
        }
        Err(payload) => std::panic::resume_unwind(payload),
    };
    match result {
        Ok(code) => code,
        Err(CliError::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => 0,
        Err(CliError::Lib(Error::Io { source, .. }))
            if source.kind() == io::ErrorKind::BrokenPipe =>
        {
            0
        }
        Err(CliError::Lib(e)) => {
            output::error_report(&e, ctx.json);
            exit_code(&e)
        }
        Err(CliError::Io(e)) => {
            output::error_line(&format!("writing output: {e}"), ctx.json);
            EXIT_ERROR
        }
    }
}

/// The exit code of a command that failed with `e`, by its kind: 2 for every failure (the
/// codes are a documented contract; `--json` says the kind), but a merge conflict (1, as
/// revert's and overlay accept's listed conflicts), a restore a signal stopped part way (130),
/// and a busy lock or remote (75: worth retrying as it is).
fn exit_code(e: &Error) -> i32 {
    match e {
        Error::Conflict { .. } => EXIT_CONFLICT,
        Error::RestoreInterrupted { .. } => EXIT_INTERRUPTED,
        _ if e.kind() == rewind::error::ErrorKind::Busy => EXIT_BUSY,
        _ => EXIT_ERROR,
    }
}

/// Runs the parsed command.
fn dispatch(ctx: &Ctx, command: Command) -> CliResult {
    match command {
        Command::Init(a) => snap::init(ctx, a),
        Command::Snapshot(a) => snap::snapshot(ctx, a),
        Command::Log(a) if a.by_session => who::sessions(ctx),
        Command::Log(a) => inspect::log(ctx, a),
        Command::Show(a) => inspect::show(ctx, a),
        Command::Blame(a) => who::blame(ctx, a),
        Command::Ls(a) => inspect::ls(ctx, a),
        Command::Cat(a) => inspect::cat(ctx, a),
        Command::Tag(a) => tag::tag(ctx, a),
        Command::Tags => tag::tags(ctx),
        Command::Status(a) => diff::status(ctx, a),
        Command::Diff(a) => diff::diff(ctx, a),
        Command::Restore(a) => restore::restore(ctx, a),
        Command::Op(a) => restore::op(ctx, a),
        Command::Undo(a) => restore::undo(ctx, a.op, a.force, false),
        Command::Redo(a) => restore::undo(ctx, None, a.force, true),
        Command::Forget(a) => maintain::forget(ctx, a),
        Command::Gc(a) => match a.remote {
            Some(name) => remote::gc(ctx, &name),
            None => maintain::gc(ctx, a),
        },
        Command::Stats => inspect::stats(ctx),
        Command::Verify(a) => match a.remote {
            Some(name) => remote::verify(ctx, &name, a.full),
            None => inspect::verify(ctx, a.full),
        },
        Command::Apply(a) => apply::apply(ctx, a),
        Command::Revert(a) => apply::revert(ctx, a),
        Command::Run(a) => run::run(ctx, a),
        Command::Check(a) => run::check(ctx, a),
        Command::Artifact(a) => run::artifact(ctx, a),
        Command::Scratch(a) => run::scratch(ctx, a),
        Command::Overlay(a) => overlay::overlay(ctx, a),
        #[cfg(feature = "remote")]
        Command::Remote(a) => remote::remote(ctx, a),
        #[cfg(feature = "remote")]
        Command::Push(a) => remote::push(ctx, a),
        #[cfg(feature = "remote")]
        Command::Pull(a) => remote::pull(ctx, a),
        #[cfg(feature = "daemon")]
        Command::Daemon(a) => daemon::daemon(ctx, a),
        Command::Serve(a) => serve::serve(ctx, a),
        Command::Mcp(a) => mcp::mcp(ctx, a),
        #[cfg(feature = "daemon")]
        Command::Watch(a) => daemon::watch(ctx, a),
        Command::Events(a) => events::events(ctx, a),
        Command::Hook(a) => hook::hook(ctx, a),
        Command::Export(a) => export::export(ctx, a),
        Command::Find(a) => export::find(ctx, a),
        Command::Completions(a) => shell::completions(a),
        Command::Man(a) => shell::man(a),
    }
}
