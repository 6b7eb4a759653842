//! Argument definitions (clap derive).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// rewind: snapshots, diffs, patches and rollbacks for any directory, without git.
#[derive(Parser, Debug)]
#[command(
    name = "rewind",
    version,
    about = "Snapshots of any directory, without git: take one before you (or an agent, or a \
             build) change things, then see what changed, restore, undo, or revert part of it",
    long_about = None,
    after_help = "Start with `rewind init` in a directory, then `rewind snapshot`; `rewind status`, \
                  `rewind diff` and `rewind log` show what changed, `rewind restore REV` and \
                  `rewind undo` take it back.",
    max_term_width = 100
)]
pub struct Cli {
    /// The store directory [default: $REWIND_STORE, else ~/.local/share/rewind]
    #[arg(long, global = true, value_name = "DIR", help_heading = GLOBAL)]
    pub store: Option<PathBuf>,
    /// The workspace [default: the nearest registered ancestor of the current directory, else
    /// the current directory]
    #[arg(short = 'C', global = true, value_name = "DIR", help_heading = GLOBAL)]
    pub directory: Option<PathBuf>,
    /// Machine-readable output on stdout
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub json: bool,
    /// Print less
    #[arg(short, long, global = true, help_heading = GLOBAL)]
    pub quiet: bool,
    /// Progress as JSON lines on stderr, for tools (`run`: its events too)
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub events: bool,
    /// Seconds to wait for another process writing to the store
    #[arg(long, global = true, default_value_t = 600.0, value_name = "SECS", help_heading = GLOBAL)]
    pub lock_timeout: f64,
    /// When to use colours
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, help_heading = GLOBAL)]
    pub color: ColorChoice,
    #[command(subcommand)]
    pub command: Command,
}

/// The heading of the options every command takes, listed after a command's own.
const GLOBAL: &str = "Global options";

/// `--color`.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// The commands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Register the workspace in the store (creating the store if needed)
    Init(InitArgs),
    /// Take a snapshot of the workspace
    #[command(alias = "snap")]
    Snapshot(SnapshotArgs),
    /// List the workspace's snapshots, newest first
    Log(LogArgs),
    /// Show one snapshot's details
    Show(ShowArgs),
    /// For each line of a file, the snapshot (and its session, tool or run) that wrote it
    Blame(super::who::BlameArgs),
    /// List a directory of a snapshot
    Ls(LsArgs),
    /// Print a file of a snapshot (raw bytes)
    Cat(CatArgs),
    /// Write a snapshot (or some of its paths) as a tar or zip archive: rewind export @ > tree.tar
    Export(super::export::ExportArgs),
    /// Which snapshots hold paths matching a glob, and when each changed
    Find(super::export::FindArgs),
    /// Create, move (--force) or delete (-d) a tag
    Tag(TagArgs),
    /// List tags
    Tags,
    /// What changed between the latest snapshot and the live workspace
    Status(StatusArgs),
    /// Show changes between two snapshots, or a snapshot and the live workspace
    Diff(DiffArgs),
    /// Make the workspace (or some paths) equal to a snapshot; undoable
    Restore(RestoreArgs),
    /// The operation log
    Op(OpArgs),
    /// Take back the latest operation that changed the workspace (or operation OP)
    Undo(UndoArgs),
    /// Take back the latest undo
    Redo(RedoArgs),
    /// Remove snapshot records by a retention policy or by id (then `gc` frees their data)
    Forget(ForgetArgs),
    /// Delete trees, blobs and chunks that no snapshot, artifact or cache reaches; compact
    Gc(GcArgs),
    /// Store size and where its bytes go
    Stats,
    /// Check that every object decodes and every reference resolves (--full: and every hash)
    Verify(VerifyArgs),
    /// Apply a unified diff (rewind's, git's, GNU diff's) to the workspace, all files or none
    Apply(ApplyArgs),
    /// Undo the changes between snapshots A and B, keeping everything else
    Revert(RevertArgs),
    /// Run a command between two snapshots and report what it changed
    Run(super::run::RunArgs),
    /// Check that only allowed files changed between two snapshots
    Check(super::run::CheckArgs),
    /// Named blobs in the store: patches, logs, build outputs
    Artifact(super::run::ArtifactArgs),
    /// The files a `run --scratch` command left in its scratch directory
    Scratch(super::run::ScratchArgs),
    /// Isolated workspaces: run commands in an overlay, then accept or reject their changes
    Overlay(super::overlay::OverlayArgs),
    /// Remotes on object storage (S3 or a directory): add, ls, rm
    #[cfg(feature = "remote")]
    Remote(super::remote::RemoteArgs),
    /// Send snapshots (and tags, artifacts) to a remote: only what it lacks
    #[cfg(feature = "remote")]
    Push(super::remote::PushArgs),
    /// Bring snapshots (and tags, artifacts) from a remote: only what the store lacks
    #[cfg(feature = "remote")]
    Pull(super::remote::PullArgs),
    /// The store's watch daemon: start, stop, status, run in the foreground
    #[cfg(feature = "daemon")]
    Daemon(super::daemon::DaemonArgs),
    /// Serve the store over HTTP: a JSON API, server-sent events and a review page
    Serve(super::serve::ServeArgs),
    /// Serve the workspace to an AI agent: a Model Context Protocol server on stdio
    Mcp(super::mcp::McpArgs),
    /// Have the daemon watch a workspace (faster walks, automatic snapshots) or stop
    #[cfg(feature = "daemon")]
    Watch(super::daemon::WatchArgs),
    /// What happens in the workspace (changes, snapshots, operations) as the daemon sees it
    Events(super::events::EventsArgs),
    /// Record a coding agent's hook event (JSON on stdin) as a snapshot; install or uninstall
    /// the agent's hooks
    Hook(super::hook::HookArgs),
    /// Print a shell's completion script (bash, zsh, fish, ...)
    Completions(super::shell::CompletionsArgs),
    /// Print the man page (roff), or write every command's page into a directory
    Man(super::shell::ManArgs),
}

/// `revert`.
#[derive(Args, Debug)]
pub struct RevertArgs {
    /// The snapshot before the change
    #[arg(required_unless_present = "meta")]
    pub a: Option<String>,
    /// The snapshot after the change
    #[arg(required_unless_present = "meta")]
    pub b: Option<String>,
    /// Instead of A..B: take back every run or agent tool call whose snapshot carries this
    /// KEY=VALUE metadata (e.g. session=ID; repeatable: all must match), newest first, keeping
    /// everyone else's edits
    #[arg(long = "meta", value_name = "KEY=VALUE", conflicts_with_all = ["a", "b", "hunks", "paths"])]
    pub meta: Vec<String>,
    /// Show what would be done; change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// What to do when a file changed since B and the revert conflicts with it
    #[arg(long, value_enum, default_value_t = ConflictMode::Fail)]
    pub conflict: ConflictMode,
    /// Only this hunk of A..B (an id from `rewind diff A B --json --hunks`; repeatable)
    #[arg(long = "hunk", value_name = "ID", conflicts_with = "paths")]
    pub hunks: Vec<String>,
    /// Only what run or agent tool call N of A..B did, even where it shares a hunk with
    /// another (numbers from `rewind diff A B --by-run`)
    #[arg(long = "run", value_name = "N", conflicts_with_all = ["hunks", "paths"])]
    pub run: Option<u32>,
    /// Only these paths
    #[arg(last = true, value_name = "PATH")]
    pub paths: Vec<OsString>,
}

/// `forget`.
#[derive(Args, Debug)]
pub struct ForgetArgs {
    /// Keep each workspace's latest N snapshots
    #[arg(long, value_name = "N")]
    pub keep_last: Option<usize>,
    /// Keep the snapshots within this span of the latest one (e.g. 7d, 12h, 30m)
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub keep_within: Option<std::time::Duration>,
    /// Keep the newest snapshot of each of the last N hours that have one (N or unlimited)
    #[arg(long, value_name = "N")]
    pub keep_hourly: Option<rewind::retention::Keep>,
    /// The same per day (UTC)
    #[arg(long, value_name = "N")]
    pub keep_daily: Option<rewind::retention::Keep>,
    /// The same per ISO week (Monday to Sunday)
    #[arg(long, value_name = "N")]
    pub keep_weekly: Option<rewind::retention::Keep>,
    /// The same per month
    #[arg(long, value_name = "N")]
    pub keep_monthly: Option<rewind::retention::Keep>,
    /// The same per year
    #[arg(long, value_name = "N")]
    pub keep_yearly: Option<rewind::retention::Keep>,
    /// Keep the newest snapshot of each hour within this span of the latest one
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub keep_within_hourly: Option<std::time::Duration>,
    /// The same per day
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub keep_within_daily: Option<std::time::Duration>,
    /// The same per week
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub keep_within_weekly: Option<std::time::Duration>,
    /// The same per month
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub keep_within_monthly: Option<std::time::Duration>,
    /// The same per year
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub keep_within_yearly: Option<std::time::Duration>,
    /// Forget the oldest unprotected snapshots (any workspace) and collect their data until the
    /// store takes at most SIZE (e.g. 5G); `[retention] max_store_bytes` does it after each
    /// snapshot
    #[arg(long, value_name = "SIZE")]
    pub max_size: Option<String>,
    /// Apply the policy to each group of a workspace's snapshots sharing these metadata
    /// values (e.g. session), not to the workspace's snapshots as one
    #[arg(long, value_name = "KEY", value_delimiter = ',')]
    pub group_by: Vec<String>,
    /// Keep tagged snapshots. Always on: a tag keeps its snapshot until `rewind tag -d`;
    /// accepted so that restic-style scripts read naturally
    #[arg(long)]
    pub keep_tagged: bool,
    /// Apply the policy to every workspace in the store, not only this one
    #[arg(long)]
    pub all_workspaces: bool,
    /// How many of a workspace's latest undoable operations keep their snapshots
    /// (default: the store's config.toml, else 20)
    #[arg(long, value_name = "N")]
    pub undo_depth: Option<usize>,
    /// Show what would be forgotten; change nothing
    #[arg(long, short = 'n')]
    pub dry_run: bool,
    /// Forget exactly these snapshots (ids, tags are refused, @~N)
    #[arg(value_name = "SNAPSHOT")]
    pub snapshots: Vec<String>,
}

/// `gc`.
#[derive(Args, Debug)]
pub struct GcArgs {
    /// Show what gc would do, with its exact numbers; change nothing (it does all of gc's
    /// work, then discards it, so it takes as long)
    #[arg(long, short = 'n')]
    pub dry_run: bool,
    /// Collect on this remote instead: delete what no remote snapshot reaches
    #[arg(long, value_name = "NAME", conflicts_with = "dry_run")]
    pub remote: Option<String>,
    /// Leave blob encodings as they are: no dictionary training, no recompression of small
    /// blobs at a denser level (a faster gc; the store stays larger)
    #[arg(long)]
    pub no_recompress: bool,
    /// zstd level for the recompression (default 6): higher is denser and slower. Blobs
    /// already on the current dictionary are not recompressed again
    #[arg(long, value_name = "N", conflicts_with = "no_recompress",
          value_parser = clap::value_parser!(i32).range(1..=19))]
    pub level: Option<i32>,
}

/// `verify`.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Also re-read every blob, chunk, tree and snapshot and check its hash
    #[arg(long)]
    pub full: bool,
    /// Check this remote instead (--full: download every pack and check every object)
    #[arg(long, value_name = "NAME")]
    pub remote: Option<String>,
}

/// `--conflict`.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum ConflictMode {
    /// Fail the whole apply.
    Fail,
    /// Write git-style conflict markers.
    Markers,
}

/// `apply`.
#[derive(Args, Debug)]
pub struct ApplyArgs {
    /// The patch file, or - for standard input
    #[arg(default_value = "-")]
    pub patch: PathBuf,
    /// Check that it applies; change nothing
    #[arg(long)]
    pub check: bool,
    /// Apply the inverse patch
    #[arg(short = 'R', long)]
    pub reverse: bool,
    /// Strip N leading path components
    #[arg(short = 'p', default_value_t = 1, value_name = "N")]
    pub strip: usize,
    /// Merge three ways when a hunk does not apply and its base is known
    #[arg(long = "3way")]
    pub three_way: bool,
    /// The snapshot the patch was made against (implies --3way)
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// What to do with merge conflicts
    #[arg(long, value_enum, default_value_t = ConflictMode::Fail)]
    pub conflict: ConflictMode,
    /// Create or delete over files whose content differs from what the patch expects
    #[arg(long)]
    pub force: bool,
    /// Most context lines ignored at each end of a hunk [default: 0 for a git-style patch, as
    /// git apply; 2 for a traditional one, as GNU patch]
    #[arg(long, value_name = "N")]
    pub fuzz: Option<usize>,
}

/// `restore`.
#[derive(Args, Debug)]
pub struct RestoreArgs {
    /// The snapshot to restore
    #[arg(required_unless_present = "turn")]
    pub rev: Option<String>,
    /// Instead of REV: the workspace as agent turn N found it, before the agent acted on the
    /// prompt (the snapshot `rewind hook` took when the prompt was submitted)
    #[arg(long, value_name = "N", conflicts_with_all = ["rev", "remote"])]
    pub turn: Option<u64>,
    /// With --turn: the agent session [default: the session of the newest hook snapshot]
    #[arg(long, value_name = "ID", requires = "turn")]
    pub session: Option<String>,
    /// Take REV from this remote, pulling what the store lacks (the store is created if need be)
    #[arg(long, value_name = "NAME")]
    pub remote: Option<String>,
    /// Print the plan, change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Allow / or the home directory as the workspace, overwriting ignored files, and a
    /// snapshot of another workspace
    #[arg(long)]
    pub force: bool,
    /// Allow a snapshot of another workspace (a store-wide tag, say) to replace this
    /// directory's files
    #[arg(long)]
    pub from_workspace: bool,
    /// Choose hunk by hunk on the terminal which of the snapshot's lines to bring back (modified
    /// files only), like `git checkout -p`
    #[arg(short = 'p', long = "patch", conflicts_with = "dry_run")]
    pub interactive: bool,
    /// Only these paths
    #[arg(last = true, value_name = "PATH")]
    pub paths: Vec<OsString>,
}

/// `op`.
#[derive(Args, Debug)]
pub struct OpArgs {
    #[command(subcommand)]
    pub command: OpCommand,
}

/// `op` subcommands.
#[derive(Subcommand, Debug)]
pub enum OpCommand {
    /// List operations, newest first
    Log {
        /// Show at most N operations
        #[arg(short = 'n', long, default_value_t = 50)]
        max_count: usize,
        /// All workspaces, not just this one
        #[arg(long)]
        all: bool,
        /// Every stored row, the bookkeeping snapshots around an action included
        #[arg(long)]
        raw: bool,
    },
}

/// `undo`.
#[derive(Args, Debug)]
pub struct UndoArgs {
    /// The operation id [default: the latest that changed the workspace]
    pub op: Option<u64>,
    /// Overwrite changes made since the operation
    #[arg(long)]
    pub force: bool,
}

/// `redo`.
#[derive(Args, Debug)]
pub struct RedoArgs {
    /// Overwrite changes made since the undo
    #[arg(long)]
    pub force: bool,
}

/// `status`.
#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Do not pair deleted and added files with the same content as renames
    #[arg(long)]
    pub no_renames: bool,
    /// Only these paths
    #[arg(last = true, value_name = "PATH")]
    pub paths: Vec<OsString>,
}

/// `diff`.
#[derive(Args, Debug)]
pub struct DiffArgs {
    /// Old side [default: @] and new side [default: live, the workspace as it is now]
    #[arg(num_args = 0..=2, value_name = "REV")]
    pub revs: Vec<String>,
    /// Per-file +/- counts with bars, and totals
    #[arg(long, group = "format")]
    pub stat: bool,
    /// Per-file added and removed line counts, tab-separated
    #[arg(long, group = "format")]
    pub numstat: bool,
    /// Status letter and path per file
    #[arg(long, group = "format")]
    pub name_status: bool,
    /// Created, deleted and renamed files and mode changes, one line each (as git)
    #[arg(long, group = "format")]
    pub summary: bool,
    /// Only the totals line
    #[arg(long, group = "format")]
    pub shortstat: bool,
    /// With --json: include the patch text
    #[arg(long)]
    pub patch: bool,
    /// Write binary changes as git's `GIT binary patch` (applies with `git apply` and `rewind
    /// apply` anywhere) instead of "Binary files ... differ"
    #[arg(long)]
    pub binary: bool,
    /// Lines of context
    #[arg(short = 'U', long = "unified", default_value_t = 3, value_name = "N")]
    pub context: usize,
    /// Exit with 1 when there are differences
    #[arg(long)]
    pub exit_code: bool,
    /// Do not pair deleted and added files as renames
    #[arg(long)]
    pub no_renames: bool,
    /// Pair a deleted and an added file as a rename when this similar (git's -M: 50% by
    /// default; 100% for exact renames only)
    #[arg(short = 'M', long = "find-renames", value_name = "N%", num_args = 0..=1,
          require_equals = true, default_missing_value = "50%",
          value_parser = crate::diff::rename_score, conflicts_with = "no_renames")]
    pub find_renames: Option<u8>,
    /// Seconds allowed for diffing one file before it is shown as a whole replacement
    #[arg(long, default_value_t = 5.0, value_name = "SECS")]
    pub diff_timeout: f64,
    /// With --json, between two snapshots: each file's hunks with their ids (for `revert
    /// --hunk`)
    #[arg(long)]
    pub hunks: bool,
    /// Between two snapshots of the workspace: the change grouped by the run or agent tool
    /// call that made each line (the numbers `revert A B --run N` takes)
    #[arg(long, group = "format", conflicts_with = "hunks")]
    pub by_run: bool,
    /// Only these paths
    #[arg(last = true, value_name = "PATH")]
    pub paths: Vec<OsString>,
}

/// `init`.
#[derive(Args, Debug)]
pub struct InitArgs {
    /// Allow / or the home directory as a workspace
    #[arg(long)]
    pub force: bool,
}

/// `snapshot`.
#[derive(Args, Debug)]
pub struct SnapshotArgs {
    /// A message to remember the snapshot by
    #[arg(short, long, default_value = "", hide_default_value = true)]
    pub message: String,
    /// Tag the snapshot
    #[arg(long = "tag", value_name = "NAME")]
    pub tags: Vec<String>,
    /// Attach KEY=VALUE metadata (repeatable)
    #[arg(long = "meta", value_name = "KEY=VALUE")]
    pub meta: Vec<String>,
    /// Ignore paths matching a gitignore-style glob (repeatable)
    #[arg(long = "ignore", value_name = "GLOB")]
    pub ignore: Vec<String>,
    /// Skip (and list) files larger than SIZE (e.g. 100M, 2G)
    #[arg(long, value_name = "SIZE")]
    pub max_file_size: Option<String>,
    /// Compute the snapshot without storing anything
    #[arg(long)]
    pub dry_run: bool,
    /// Record nothing when the tree equals the latest snapshot's (prints that snapshot's id,
    /// `"created": false` in JSON): for pollers. Without it a snapshot is always recorded
    #[arg(long)]
    pub if_changed: bool,
    /// Fail on unreadable or vanished files instead of warning
    #[arg(long)]
    pub strict: bool,
    /// zstd compression level for new blobs (1-19)
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(i32).range(1..=19))]
    pub level: i32,
    /// Allow / or the home directory as a workspace
    #[arg(long)]
    pub force: bool,
}

/// `log`.
#[derive(Args, Debug)]
pub struct LogArgs {
    /// Show at most N snapshots (0: all)
    #[arg(short = 'n', long, default_value_t = 50)]
    pub max_count: usize,
    /// Every snapshot, the ones rewind takes around an action (before and after a restore,
    /// undo, apply, accept; a run's before) included
    #[arg(long)]
    pub all: bool,
    /// Only snapshots with this KEY=VALUE metadata (repeatable: all must match)
    #[arg(long = "meta", value_name = "KEY=VALUE")]
    pub meta: Vec<String>,
    /// Only snapshots with this label (`run`'s before, after, after_failure; agent hooks'
    /// turn-start, tool, turn-end, session-start)
    #[arg(long, value_name = "LABEL")]
    pub label: Option<String>,
    /// Only snapshots an agent hook recorded in this session (`rewind hook`)
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only snapshots taken at or after TIME (RFC 3339, e.g. 2026-11-24T06:00:00Z, or a
    /// duration ago, e.g. 2h)
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only snapshots taken at or before TIME (as --since)
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Only the snapshots where PATH changed, with how (renames followed)
    #[arg(last = true, value_name = "PATH")]
    pub paths: Vec<OsString>,
    /// One row per agent session: first and last snapshot, files touched, lines added and
    /// removed, and whether its changes are still in the live tree
    #[arg(long, conflicts_with_all = ["paths", "meta", "label", "session", "since", "until"])]
    pub by_session: bool,
}

/// `show`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The snapshot
    #[arg(default_value = "@")]
    pub rev: String,
}

/// `ls`.
#[derive(Args, Debug)]
pub struct LsArgs {
    /// The snapshot
    pub rev: String,
    /// A directory (or file) inside it
    pub path: Option<OsString>,
    /// List subdirectories too
    #[arg(short, long)]
    pub recursive: bool,
}

/// `cat`.
#[derive(Args, Debug)]
pub struct CatArgs {
    /// The snapshot
    pub rev: String,
    /// The file inside it
    pub path: OsString,
}

/// `tag`.
#[derive(Args, Debug)]
pub struct TagArgs {
    /// The tag name
    pub name: String,
    /// The snapshot to tag [default: @]
    pub rev: Option<String>,
    /// Delete the tag
    #[arg(short, long, conflicts_with = "rev")]
    pub delete: bool,
    /// Move an existing tag
    #[arg(short, long)]
    pub force: bool,
}

/// Parses the process's arguments as bytes (`args_os`), never assuming they are UTF-8: paths
/// and `run`'s command are `OsString`/`PathBuf` and keep their bytes, and every plain text
/// argument goes through [`Text`], which refuses a value that is not UTF-8 naming the
/// argument (clap's own message names none).
pub fn parse() -> Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let mut cmd = text_args(Cli::command());
    let mut matches = cmd.try_get_matches_from_mut(attached_rename_score(std::env::args_os()))?;
    Cli::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut cmd))
}

/// git writes diff's similarity attached (`-M50%`); clap reads an optional value of a short
/// flag only after `=`, so `diff`'s `-M<n>` before `--` becomes `-M=<n>`.
fn attached_rename_score(args: impl Iterator<Item = OsString>) -> Vec<OsString> {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let mut in_diff = false;
    let mut options = true;
    args.map(|a| {
        let b = a.as_bytes();
        if b == b"--" {
            options = false;
        } else if b == b"diff" {
            in_diff = true;
        } else if in_diff && options && b.len() > 2 && b.starts_with(b"-M") && b[2] != b'=' {
            let mut v = b"-M=".to_vec();
            v.extend_from_slice(&b[2..]);
            return OsString::from_vec(v);
        }
        a
    })
    .collect()
}

/// `cmd` with [`Text`] in place of clap's plain `String` parser on every argument of every
/// subcommand. Only that parser is replaced: a custom one (possible values, a function) keeps
/// its checks, and a non-UTF-8 value there gets clap's message, which `main`'s usage error
/// completes with the argument it found.
fn text_args(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| {
        // `ValueParser::string()` is the only parser that prints so; `Other` ones print their
        // type.
        if format!("{:?}", a.get_value_parser()) == "ValueParser::string" {
            a.value_parser(Text)
        } else {
            a
        }
    })
    .mut_subcommands(text_args)
}

/// How a refused non-UTF-8 argument is described, after its name.
pub const NOT_UTF8: &str = " is not valid UTF-8";

/// A text argument: its value as a `String`, or an error naming the argument when the bytes
/// are not UTF-8 (a Latin-1 terminal's `café`, say) instead of a panic or an unnamed refusal.
#[derive(Clone, Copy, Debug)]
pub struct Text;

impl clap::builder::TypedValueParser for Text {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        match value.to_str() {
            Some(s) => Ok(s.to_owned()),
            None => {
                let name = match arg {
                    Some(a) if a.get_long().is_none() && a.get_short().is_none() => {
                        format!("the argument {a}")
                    }
                    Some(a) => a.to_string(),
                    None => "an argument".to_string(),
                };
                let shown = super::output::path_text(super::output::arg_bytes(value));
                let msg = format!("{name} ({shown}){NOT_UTF8}: this argument must be text\n");
                Err(clap::Error::raw(clap::error::ErrorKind::InvalidUtf8, msg).with_cmd(cmd))
            }
        }
    }
}
