//! The library's error type.
//!
//! Every variant says what went wrong *and* names the thing it went wrong with (a path, a
//! revision, an object id), because the CLI prints these messages as they are: a user should be
//! able to act on one without reading the source.

use std::io;
use std::path::PathBuf;

/// Convenience alias used throughout the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in rewind. A caller that branches on the failure asks
/// [`Error::kind`]; the variants say exactly what went wrong, and new ones come (hence
/// `#[non_exhaustive]`). Where a lower error caused it, [`std::error::Error::source`] gives it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error on a named path.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory the operation was on.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },

    /// The store directory exists but holds no `store.redb`.
    #[error("no rewind store at {}", .0.display())]
    NoStore(PathBuf),

    /// The file is not a rewind store (another redb database, or not a database at all).
    #[error("{} is not a rewind store ({why}); refusing to touch it", path.display())]
    NotAStore {
        /// The offending file.
        path: PathBuf,
        /// What gave it away.
        why: String,
    },

    /// The store was written by a newer rewind, with a schema version above the one this build
    /// reads (see [`crate::store::format`]).
    #[error(
        "store {} has schema version {found}, this rewind reads versions up to {expected}: it \
         was written by a newer rewind; upgrade rewind", path.display()
    )]
    SchemaVersion {
        /// The store file.
        path: PathBuf,
        /// The version recorded in the store.
        found: u32,
        /// The newest version this build reads (the one it writes).
        expected: u32,
    },

    /// The store lists format features this build does not know: a newer rewind wrote records
    /// this one cannot read (see [`crate::store::format`]).
    #[error(
        "store {} uses format features this rewind does not know ({}): it was written by a \
         newer rewind; upgrade rewind", path.display(), features.join(", ")
    )]
    UnknownFeatures {
        /// The store file.
        path: PathBuf,
        /// The features it lists that this build does not know.
        features: Vec<String>,
    },

    /// The store is not writable.
    #[error("store {} is read-only ({why}); check its permissions", path.display())]
    ReadOnlyStore {
        /// The store directory.
        path: PathBuf,
        /// The underlying cause.
        why: String,
    },

    /// Another process held the store's write lock for longer than the lock timeout.
    #[error(
        "timed out after {0:?} waiting for another rewind process ({1}) to finish writing to the store"
    )]
    LockTimeout(std::time::Duration, String),

    /// An error from the embedded database.
    #[error("store database error")]
    Db(#[source] redb::Error),

    /// The file system holding the store is full (or the user's quota is used up). redb
    /// commits atomically, so the failed write left the store as it was.
    #[error(
        "the disk holding the store is full ({0}); nothing was stored and the store is as it \
         was: free some space"
    )]
    DiskFull(#[source] io::Error),

    /// A stored object failed to decode or its content does not match its id.
    #[error("damaged {kind} {id}: {why}")]
    Corrupt {
        /// "blob", "chunk", "tree", "snapshot", ...
        kind: &'static str,
        /// The object's id, in hex.
        id: String,
        /// What is wrong with it.
        why: String,
    },

    /// The store's database file is damaged where a read went: the database gave up on a page
    /// it could not make sense of. Nothing was written.
    #[error(
        "the store {} is damaged ({why}); nothing was changed: check the store, and restore \
         what is lost from a remote or a backup", path.display()
    )]
    Damaged {
        /// The store directory.
        path: PathBuf,
        /// Where the database gave up.
        why: String,
    },

    /// A page of the store's database file does not match the checksum the database recorded for
    /// it, or does not decode: the file was changed outside rewind (a disk fault, a stray
    /// write, a copy cut short). What that page holds cannot be read; nothing was written.
    #[error(
        "the store's database file is damaged{}: {why}; nothing was changed",
        table.as_ref().map(|t| format!(" in table `{t}`")).unwrap_or_default()
    )]
    DamagedPage {
        /// The table whose page is damaged, when the database knows it.
        table: Option<String>,
        /// What the database found (the page, what is wrong with it).
        why: String,
    },

    /// A record could not be serialized for the store (or a remote); nothing was written.
    #[error("cannot encode the {what}: {why}")]
    Encode {
        /// What was being encoded: "tree", "snapshot", "operation", ...
        what: &'static str,
        /// The serializer's complaint.
        why: String,
    },

    /// An object that something refers to is not in the store.
    #[error("missing {kind} {id} in the store")]
    Missing {
        /// "blob", "chunk", "tree", ...
        kind: &'static str,
        /// The object's id, in hex.
        id: String,
    },

    /// The workspace directory does not exist.
    #[error("workspace {} does not exist", .0.display())]
    NoWorkspace(PathBuf),

    /// The workspace path names something that is not a directory.
    #[error("workspace {} is not a directory", .0.display())]
    NotADirectory(PathBuf),

    /// Snapshotting `/` or the home directory needs the caller's explicit `force`.
    #[error("refusing to use {} as a workspace: it is the root or your home directory", .0.display())]
    DangerousWorkspace(PathBuf),

    /// The workspace is the store's directory or lies inside it: its snapshots would hold the
    /// store, and a restore would replace the store's own files. Never allowed.
    #[error("refusing to use {} as a workspace: it is inside the store {}", .workspace.display(), .store.display())]
    WorkspaceInStore {
        /// The workspace, canonical.
        workspace: PathBuf,
        /// The store's directory, canonical.
        store: PathBuf,
    },

    /// A revision named nothing.
    #[error(
        "unknown revision '{0}': expected a snapshot id prefix (4+ hex digits), a tag, @ or @~N"
    )]
    UnknownRevision(String),

    /// A hex prefix matched more than one snapshot.
    #[error("ambiguous revision '{prefix}': it matches {}", candidates.join(", "))]
    AmbiguousRevision {
        /// What the user typed.
        prefix: String,
        /// Some of the snapshots it matches (short ids).
        candidates: Vec<String>,
    },

    /// `@` was used but the workspace has no snapshot yet.
    #[error("workspace {} has no snapshot yet", .0.display())]
    NoSnapshots(PathBuf),

    /// A turn was asked for but no agent hook recorded a session in the workspace.
    #[error("workspace {} has no snapshot recorded by an agent hook", .0.display())]
    NoAgentSession(PathBuf),

    /// An agent session has no snapshot marking the start of the turn asked for.
    #[error("session '{session}' has no start of turn {turn} (its turns: {available})")]
    NoSuchTurn {
        /// The session id.
        session: String,
        /// The turn asked for.
        turn: u64,
        /// The turns that were recorded, as a list for people (`1-4, 6` or `none`).
        available: String,
    },

    /// A path was looked up in a snapshot and is not there.
    #[error("{path} is not in snapshot {snapshot}")]
    PathNotInSnapshot {
        /// The path, as given.
        path: String,
        /// The snapshot's short id.
        snapshot: String,
    },

    /// A configuration file of the store (config.toml, remotes.toml) does not parse or holds
    /// what this build does not take; nothing was done.
    #[error("{}: {why}", path.display())]
    BadConfig {
        /// The file.
        path: PathBuf,
        /// What is wrong, from the parser.
        why: String,
    },

    /// A value a front end parsed is malformed (a flag's size, a KEY=VALUE pair, a request
    /// field...). The library itself returns the variants that name what was wrong; this one
    /// is for the CLI's and the server's own input checks.
    #[error("{0}")]
    Invalid(String),

    /// A workspace-relative path (or a tree entry name) breaks [`crate::files::RelPath`]'s rules.
    #[error("invalid path '{path}': {why}")]
    BadPath {
        /// The path, as given (lossy for non-UTF-8 bytes).
        path: String,
        /// Which rule it breaks.
        why: BadPath,
    },

    /// A patch could not be parsed.
    #[error("cannot read the patch: {0}")]
    PatchParse(String),

    /// A patch does not apply; nothing was written.
    #[error("{path}: {why} (nothing was changed)")]
    PatchFailed {
        /// The file (workspace-relative) it failed on.
        path: String,
        /// What went wrong, naming the hunk where there is one.
        why: String,
        /// The option that would get past the refusal, if one would.
        remedy: Option<Remedy>,
    },

    /// A three-way merge of a patch into a file conflicts, and conflict markers were not asked
    /// for; nothing was written.
    #[error("{path}: three-way merge conflicts at {} (nothing was changed)", lines_list(.lines))]
    Conflict {
        /// The file (workspace-relative).
        path: String,
        /// The workspace's conflicting lines, 1-based and inclusive.
        lines: Vec<(usize, usize)>,
    },

    /// Moving a tag that points elsewhere needs `force`.
    #[error("tag '{name}' already points at {target}")]
    TagExists {
        /// The tag.
        name: String,
        /// The short id it points at now.
        target: String,
    },

    /// No tag of that name.
    #[error("no tag named '{0}'")]
    NoTag(String),

    /// A new snapshot was to get a tag that exists already.
    #[error("tag '{0}' already exists")]
    TagTaken(String),

    /// A restore would overwrite files the workspace ignores (so no snapshot holds them).
    #[error(
        "restoring would overwrite files that the workspace ignores, so no snapshot holds them: {}",
        paths.join(", ")
    )]
    WouldOverwriteIgnored {
        /// The paths, for display.
        paths: Vec<String>,
    },

    /// A snapshot of another workspace was to be restored into this one.
    #[error(
        "snapshot {snapshot} belongs to workspace {owner}, not to {here}; restoring it would \
         replace these files with another project's"
    )]
    ForeignSnapshot {
        /// The snapshot's short id.
        snapshot: String,
        /// The workspace it was taken of.
        owner: String,
        /// The directory restored into, described.
        here: String,
    },

    /// An undo (or redo) would overwrite paths changed since the operation ran.
    #[error(
        "refusing to {action} operation {op}: these paths changed since it ran: {}",
        paths.join(", ")
    )]
    ChangedSince {
        /// "undo" or "redo".
        action: &'static str,
        /// The operation's id.
        op: u64,
        /// The changed paths, for display.
        paths: Vec<String>,
    },

    /// An overlay changed since the state a reject (or its undo) expected.
    #[error("overlay {0} changed since")]
    OverlayChanged(u64),

    /// The namespace overlay backend was asked for and the kernel does not allow it.
    #[error("the namespace backend is unavailable here: {0}")]
    NamespaceUnavailable(String),

    /// Another process held an overlay's lock for longer than the lock timeout.
    #[error("gave up after {seconds:.1}s {what}")]
    OverlayBusy {
        /// How long it waited.
        seconds: f64,
        /// What it was waiting for.
        what: String,
    },

    /// A hunk id that the overlay does not have pending.
    #[error("no pending hunk '{hunk}' in overlay {overlay}")]
    UnknownHunk {
        /// The id as given.
        hunk: String,
        /// The overlay.
        overlay: u64,
    },

    /// A run number the overlay has not recorded.
    #[error("overlay {overlay} has no run {run} ({})", if *.runs == 0 { "no command has run in it".to_string() } else { format!("its runs are 1 to {}", .runs) })]
    UnknownRun {
        /// The number as given.
        run: u32,
        /// The overlay.
        overlay: u64,
        /// How many runs it recorded.
        runs: u32,
    },

    /// A run number the range between two snapshots does not have.
    #[error("{a}..{b} has no run {run} ({})", if *.runs == 0 { "no run or agent tool call is recorded between them".to_string() } else { format!("its runs are 1 to {}", .runs) })]
    UnknownRangeRun {
        /// The number as given.
        run: u32,
        /// The older snapshot (short id).
        a: String,
        /// The newer snapshot (short id).
        b: String,
        /// How many runs and tool calls the range holds.
        runs: u32,
    },

    /// Two snapshots that are not an older and a newer snapshot of the workspace's log, where
    /// the log between them is followed.
    #[error(
        "{a}..{b} is not a range of this workspace's log: {a} must be an older snapshot of \
         the workspace than {b}"
    )]
    NotALogRange {
        /// The snapshot given as the older (short id).
        a: String,
        /// The snapshot given as the newer (short id).
        b: String,
    },

    /// gc found a reachable object it cannot read, and deleted nothing rather than guess.
    #[error("gc stopped, nothing was deleted: {kind} {id} (reached from {referrer}) is {why}")]
    GcDamaged {
        /// "tree", "blob"...
        kind: &'static str,
        /// The object's short id.
        id: String,
        /// What reaches it.
        referrer: String,
        /// What is wrong with it.
        why: String,
    },

    /// A remote of that name is configured already.
    #[error("remote '{name}' already exists ({url})")]
    RemoteExists {
        /// The name.
        name: String,
        /// Its configured URL.
        url: String,
    },

    /// No remote of that name is configured.
    #[error("no remote '{0}'")]
    NoRemote(String),

    /// An undo or redo names a state (snapshot) that was forgotten since.
    #[error(
        "cannot {action} operation {op} ({kind}): its {which} state, snapshot {snapshot}, was \
         forgotten, so there is nothing to compare with or go back to"
    )]
    StateForgotten {
        /// "undo" or "redo".
        action: &'static str,
        /// The operation.
        op: u64,
        /// Its kind.
        kind: String,
        /// "before" or "after".
        which: &'static str,
        /// The forgotten snapshot's short id.
        snapshot: String,
    },

    /// The undo or redo of a reject names an overlay that was dropped since.
    #[error("overlay {0} was dropped, so its reject cannot be taken back")]
    RejectedOverlayGone(u64),

    /// A command run (`run::RunOptions::command`) was given no program.
    #[error("no command to run")]
    NoCommand,

    /// A hunk id that none of the hunks it was looked for among has.
    #[error("no hunk '{hunk}' in {among}")]
    NoSuchHunk {
        /// The id as given.
        hunk: String,
        /// Where it was looked for.
        among: HunkSet,
    },

    /// A hunk the user edited that does not apply to the hunk it edits (or no longer does: its
    /// file changed since).
    #[error("the edited hunk {hunk} does not apply: {why}")]
    BadHunkEdit {
        /// The id of the hunk edited.
        hunk: String,
        /// What is wrong with the edit.
        why: String,
    },

    /// An ignore glob (of a scan, or of the ignored paths copied into an overlay) is malformed.
    #[error("bad {} {}: {why}", list.noun(), glob.as_ref().map(|g| format!("glob '{g}'")).unwrap_or_else(|| "globs".into()))]
    BadGlob {
        /// Which list it was in.
        list: GlobList,
        /// The glob, when one glob is to blame.
        glob: Option<String>,
        /// The matcher's complaint.
        why: String,
    },

    /// A path handed to the kernel holds a NUL byte, which no path can.
    #[error("{0} contains a NUL byte")]
    NulInPath(String),

    /// A path rewind was to write is not a clean workspace-relative path (empty, absolute,
    /// `..`): refused before anything was written.
    #[error("refusing to write the unsafe path '{0}'")]
    UnsafePath(String),

    /// A directory on the way to a path to write is something else (a file, a symlink): nothing
    /// is written through it.
    #[error("refusing to write below {}: it is not a directory (a symlink?) in the workspace", .0.display())]
    NotADirectoryOnTheWay(PathBuf),

    /// A path named to be written has no parent directory.
    #[error("{} has no parent", .0.display())]
    NoParent(PathBuf),

    /// A path named as a file is something else (a directory, a device, a fifo).
    #[error("{} is not a regular file", .0.display())]
    NotAFile(PathBuf),

    /// A directory was named where a file is needed.
    #[error("{0} is a directory; name a file")]
    IsADirectory(String),

    /// A file named explicitly could not be stored (it could when walked: then it is skipped).
    #[error("{}: {reason} ({detail})", path.display())]
    FileNotStored {
        /// The file.
        path: PathBuf,
        /// Why, in a word or two (unreadable, too large...).
        reason: &'static str,
        /// The details.
        detail: String,
    },

    /// A tag name that could be mistaken for something else, or that no file system could
    /// carry.
    #[error(
        "invalid tag name '{0}': use 1-200 characters, no spaces or control characters, not \
         starting with '@', '-' or '/', no empty, '.' or '..' component between slashes, not \
         'live', and not only hex digits"
    )]
    BadTagName(String),

    /// A tag this snapshot was to carry was created by another process meanwhile.
    #[error("tag '{0}' was created by another process meanwhile")]
    TagRaced(String),

    /// An operation that did not change the workspace was named to be undone.
    #[error("operation {op} ({kind}) did not change workspace {}: there is nothing to take back", workspace.display())]
    OpChangedNothing {
        /// The operation.
        op: u64,
        /// Its kind.
        kind: String,
        /// The workspace.
        workspace: PathBuf,
    },

    /// An operation records no state to go back to.
    #[error("operation {0} has no state to go back to")]
    OpWithoutState(u64),

    /// A line range outside the file.
    #[error("line range {first},{last} is outside the file's {lines} lines")]
    LineRange {
        /// The first line asked for (1-based).
        first: usize,
        /// The last line asked for.
        last: usize,
        /// The lines the file has.
        lines: usize,
    },

    /// A run has no scratch file of that name.
    #[error("the run {run} has no scratch file {path}")]
    NoScratchFile {
        /// The run (short id).
        run: String,
        /// The path asked for.
        path: String,
    },

    /// An overlay named for a run belongs to another workspace.
    #[error("overlay {overlay} belongs to workspace {}, not {}", owner.display(), workspace.display())]
    OverlayOfOtherWorkspace {
        /// The overlay.
        overlay: u64,
        /// Its workspace.
        owner: PathBuf,
        /// The workspace the run is in.
        workspace: PathBuf,
    },

    /// Snapshots named to be forgotten are protected (tagged, within the undo depth, an
    /// overlay's base...); nothing was forgotten.
    #[error("cannot forget {}: nothing was forgotten", .0.join(", "))]
    ForgetRefused(Vec<String>),

    /// An overlay name that could be taken for an id, or that is not a plain word.
    #[error(
        "invalid overlay name '{0}': use 1-64 letters, digits, '-', '_' or '.', not only digits"
    )]
    BadOverlayName(String),

    /// A remote name that is not a plain word.
    #[error(
        "invalid remote name '{0}': use 1-64 letters, digits, '-', '_' or '.', not starting with '-'"
    )]
    BadRemoteName(String),

    /// A remote URL of a scheme rewind cannot open.
    #[error("unsupported remote URL '{url}': {forms}")]
    BadRemoteUrl {
        /// The URL as given.
        url: String,
        /// The forms rewind takes.
        forms: &'static str,
    },

    /// A workspace whose path is not UTF-8 cannot be mapped to a remote's (the mapping is kept
    /// in TOML).
    #[error("{}: a workspace mapped to a remote's needs a UTF-8 path", .0.display())]
    NonUtf8Workspace(PathBuf),

    /// A restore from a remote goes into an empty directory only.
    #[error(
        "{} is not empty: a restore from a remote straight into it needs an empty directory",
        .0.display()
    )]
    RestoreTargetNotEmpty(PathBuf),

    /// Something appeared at a path a restore from a remote was about to move into place.
    #[error("{} appeared while restoring into {}: left alone, the restore is not in place", path.display(), into.display())]
    AppearedWhileRestoring {
        /// The path.
        path: PathBuf,
        /// The restore's target directory.
        into: PathBuf,
    },

    /// A remote's key object names key-derivation parameters that do not work.
    #[error("remote key: {0}")]
    KeyDerivation(String),

    /// A metadata selector with no pair would select every snapshot.
    #[error("a metadata selector needs at least one KEY=VALUE pair")]
    EmptySelector,

    /// No change of the workspace carries the selected metadata.
    #[error("no snapshot carries {0}")]
    NothingSelected(String),

    /// The live side of a comparison was asked for without a workspace.
    #[error("a diff against the live workspace needs a workspace")]
    LiveNeedsWorkspace,

    /// The run's signal forwarding is installed once per process.
    #[error("another rewind run in this process already handles signals")]
    SignalsTaken,

    /// A revision relative to a workspace (`@`, `@~N`) was used without one.
    #[error("'{0}' needs a workspace")]
    NeedsWorkspace(String),

    /// `forget` was given neither snapshots nor a keep policy.
    #[error("nothing to forget: give a keep policy (last N, within a duration) or snapshot ids")]
    NothingToForget,

    /// `forget` was given both snapshots and a keep policy.
    #[error("give either snapshot ids or a keep policy, not both")]
    ForgetIdsAndPolicy,

    /// No overlay with that id or name.
    #[error("no overlay '{0}' in this store")]
    NoOverlay(String),

    /// An overlay with that name exists already.
    #[error("an overlay named '{0}' already exists")]
    OverlayExists(String),

    /// The overlay was dropped by another process while this one worked on it.
    #[error("overlay {0} was dropped meanwhile")]
    OverlayDropped(u64),

    /// No operation with that id in the workspace's log.
    #[error("no operation {op} in workspace {}", workspace.display())]
    NoOperation {
        /// The operation id asked for.
        op: u64,
        /// The workspace.
        workspace: PathBuf,
    },

    /// Nothing left to undo (or redo) in the workspace.
    #[error("{}", if *redo { "nothing to redo" } else { "nothing to undo in this workspace" })]
    NothingToUndo {
        /// Whether it was a redo.
        redo: bool,
    },

    /// `@~N` reaches further back than the workspace's history.
    #[error("'{rev}': the workspace has only {available} snapshot(s)")]
    RevisionOutOfRange {
        /// The revision as given.
        rev: String,
        /// How many snapshots the workspace has.
        available: usize,
    },

    /// Paths given to a restore that name nothing in the snapshot or the workspace.
    #[error(
        "path(s) did not match anything in the snapshot or the workspace: {}",
        paths.join(", ")
    )]
    UnmatchedPaths {
        /// The paths, for display.
        paths: Vec<String>,
    },

    /// A zip archive names its entries in UTF-8: these paths (or their symlink targets) are not.
    #[error(
        "a zip archive cannot hold names that are not UTF-8: {}",
        paths.join(", ")
    )]
    ZipNames {
        /// The paths, lossily decoded for display.
        paths: Vec<String>,
    },

    /// The kernel refused to make an overlayfs whiteout (unprivileged whiteouts need Linux 5.8).
    #[error(
        "cannot hide a path the workspace added since the overlay's base ({}: {why}); the \
         kernel must allow unprivileged whiteouts (Linux 5.8+)",
        path.display()
    )]
    WhiteoutUnsupported {
        /// The whiteout's path.
        path: PathBuf,
        /// The system error.
        #[source]
        why: io::Error,
    },

    /// The store sits inside the workspace, where overlayfs cannot take its upper layer from.
    #[error(
        "the store {} lies inside the workspace {}: overlayfs cannot take its upper layer from \
         inside its lower one",
        store.display(),
        workspace.display()
    )]
    StoreInsideWorkspace {
        /// The store directory.
        store: PathBuf,
        /// The workspace.
        workspace: PathBuf,
    },

    /// A failure inside rewind itself (a worker thread panicked, a walk failed), not caused by
    /// the input.
    #[error("{0}")]
    Internal(String),

    /// An artifact key was refused.
    #[error("invalid artifact key \"{0}\": {1}")]
    InvalidArtifactKey(String, String),

    /// `artifact put` without `force` on a key that exists.
    #[error("artifact '{0}' already exists")]
    ArtifactExists(String),

    /// No artifact under that key.
    #[error("no artifact '{0}' in the store")]
    NoArtifact(String),

    /// A file contract (`--allow`, `--forbid`, `--contract FILE`) is malformed.
    #[error("invalid contract: {0}")]
    Contract(String),

    /// rewind was interrupted (SIGINT or SIGTERM) before the command started; nothing ran.
    #[error("interrupted by {0} before the command started; nothing was run")]
    Interrupted(&'static str),

    /// A multi-file write (apply, revert) was interrupted (the process was killed) and the
    /// workspace may be half-written.
    #[error(
        "an interrupted {kind} left {} partly written: the same {kind} again finishes it{}",
        workspace.display(),
        before.as_ref().map(|b| format!(", a restore of {b} goes back to the state before it")).unwrap_or_default()
    )]
    InterruptedWrite {
        /// The interrupted command.
        kind: String,
        /// The workspace.
        workspace: PathBuf,
        /// The snapshot taken before it began writing.
        before: Option<String>,
    },

    /// A restore (or undo, redo) stopped part way at a signal; every file is old or new.
    #[error(
        "interrupted: {written} of {total} files of the {kind} written, the rest untouched. \
         A restore of {target} finishes it, an undo goes back to the state before it{}",
        before.as_ref().map(|b| format!(" ({b})")).unwrap_or_default()
    )]
    RestoreInterrupted {
        /// "restore", "undo", ...
        kind: String,
        /// The snapshot being restored.
        target: String,
        /// The snapshot of the state before.
        before: Option<String>,
        /// Files written before it stopped.
        written: u64,
        /// Files the plan writes.
        total: u64,
    },

    /// The workspace was deleted or replaced while it was being snapshotted.
    #[error(
        "the workspace {} disappeared (or was replaced) during the snapshot; nothing was stored",
        .0.display()
    )]
    WorkspaceVanished(PathBuf),

    /// A `rewind gc` in another process committed while this command relied on objects it had
    /// seen in the store; nothing was written. Running the command again is safe.
    #[error(
        "a garbage collection ran in another process while this {0} was being written; nothing \
         was stored: run it again"
    )]
    ConcurrentGc(&'static str),

    /// Strict mode turned warnings (unreadable files, files that vanished) into an error.
    #[error("snapshot aborted (strict): {0}")]
    Strict(String),

    /// A remote could not be reached, read or written, or holds something unexpected.
    #[error("remote '{remote}': {why}")]
    Remote {
        /// The remote's name.
        remote: String,
        /// What went wrong, naming the object.
        why: String,
    },

    /// An object a snapshot needs is in none of the remote's packs (the remote is damaged).
    #[error("remote '{remote}': {kind} {id} is in no pack on the remote")]
    RemoteObjectMissing {
        /// The remote's name.
        remote: String,
        /// "blob", "tree"...
        kind: &'static str,
        /// The object's id (hex).
        id: String,
    },

    /// A remote gc found the remote damaged, and deletes nothing.
    #[error("remote '{remote}': not collecting: {what}: {why} ({problems} problems)")]
    RemoteDamaged {
        /// The remote's name.
        remote: String,
        /// The first damaged thing.
        what: String,
        /// What is wrong with it.
        why: String,
        /// How many problems were found.
        problems: usize,
    },

    /// An encrypted remote, or a change of its key, needs a password or key file and none
    /// was given (nothing to read it from, and no terminal to ask at).
    #[error("remote '{remote}': {}", if *new {
        "no new password or key file was given"
    } else {
        "it is encrypted, and no password or key file was given"
    })]
    RemotePasswordMissing {
        /// The remote's name.
        remote: String,
        /// Whether what is missing is the new one (a key change).
        new: bool,
    },

    /// A remote opened as what it is not: an encrypted remote configured as unencrypted, or
    /// an unencrypted one opened with a key.
    #[error("remote '{remote}': {why}")]
    RemoteKeyNeeded {
        /// The remote's name.
        remote: String,
        /// What is missing.
        why: String,
        /// Whether the remote is encrypted (false: it is not, but was opened with a key).
        encrypted: bool,
    },

    /// No key object of an encrypted remote opens with the password or key file given.
    #[error("remote '{remote}': the password or key file given {}", if *keys == 1 {
        "does not open its key".to_string()
    } else {
        format!("opens none of its {keys} keys")
    })]
    RemoteWrongKey {
        /// The remote's name.
        remote: String,
        /// How many key objects it has.
        keys: usize,
    },

    /// An object of an encrypted remote fails authentication: damaged, truncated, copied
    /// from another name, or sealed under another key. Nothing from it was used.
    #[error(
        "remote '{remote}': {object} fails authentication (damaged, truncated, moved from \
         another name or sealed with another key); nothing from it was used"
    )]
    RemoteForged {
        /// The remote's name.
        remote: String,
        /// The object (its logical name: `snapshots/<id>`, `blob <id> in pack <id>`...).
        object: String,
    },

    /// Another process holds the remote (a gc while pushing, or a push while collecting).
    #[error(
        "remote '{remote}' is busy: {holder}; try again when it has finished (a lock not \
         refreshed for 30 minutes, or whose process on this host is gone, is ignored)"
    )]
    RemoteBusy {
        /// The remote's name.
        remote: String,
        /// Who holds it.
        holder: String,
    },

    /// The watch daemon: not running, already running, a bad watch list...
    #[error(transparent)]
    Daemon(#[from] DaemonError),
}

/// What kind of failure an [`Error`] is: what a caller branches on (the CLI's exit code, the
/// HTTP status), where the variant says exactly what went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// What was named does not exist: a revision, a path in a snapshot, an overlay, a store.
    NotFound,
    /// The input is malformed or not allowed: a bad glob, a dangerous workspace, a bad key.
    Invalid,
    /// The request conflicts with the current state: a tag that exists, a patch that does not
    /// apply, files changed since; nothing was written.
    Conflict,
    /// Another process holds what is needed (a lock, a remote, a concurrent gc): the same
    /// request later may succeed.
    Busy,
    /// Stored data is damaged: an object that does not decode, a database page, a remote pack.
    Damaged,
    /// The machine refused: I/O, a full disk, a read-only store, a kernel feature, a network,
    /// a store written by a newer rewind, a signal.
    Environment,
    /// A failure inside rewind itself, not caused by the input.
    Internal,
}

impl ErrorKind {
    /// A stable name in snake case (`not_found`, `invalid`...), for machine-readable output.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not_found",
            ErrorKind::Invalid => "invalid",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Busy => "busy",
            ErrorKind::Damaged => "damaged",
            ErrorKind::Environment => "environment",
            ErrorKind::Internal => "internal",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What would get a refused patch through, in library terms; the CLI names its flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remedy {
    /// Forcing the write (`ApplyOptions::force`).
    Force,
    /// Forcing the write, which overwrites the file.
    ForceToOverwrite,
    /// Forcing, named inside the reason's own parenthesis.
    ForceInReason,
    /// A three-way merge (`ApplyOptions::three_way`).
    ThreeWay,
    /// A base revision for the three-way merge (`ApplyOptions::base`).
    Base,
    /// Applying the patch in reverse (`ApplyOptions::reverse`): its reverse applies cleanly,
    /// so it looks applied already.
    Reverse,
}

/// The hunks a [`Error::NoSuchHunk`] id was looked for among.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HunkSet {
    /// The modified files between two snapshots (a revert by hunk); short ids.
    #[error("the modified files of {a}..{b}")]
    Between {
        /// The older snapshot.
        a: String,
        /// The newer snapshot.
        b: String,
    },
    /// The workspace's changes against a snapshot (a restore by hunk).
    #[error("the workspace's changes against that snapshot (they moved since?)")]
    LiveAgainst,
}

/// Which glob list a [`Error::BadGlob`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlobList {
    /// The scan's extra ignore globs.
    Ignore,
    /// The scan's ignore globs recorded in a snapshot.
    Recorded,
    /// The ignored paths copied into an overlay.
    WithIgnored,
    /// The glob `find` looks for.
    Find,
}

impl GlobList {
    fn noun(self) -> &'static str {
        match self {
            GlobList::Ignore | GlobList::Recorded => "ignore",
            GlobList::WithIgnored => "with-ignored",
            GlobList::Find => "find",
        }
    }
}

fn lines_list(lines: &[(usize, usize)]) -> String {
    lines
        .iter()
        .map(|(a, b)| format!("lines {a}-{b}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Error {
    /// The kind of failure: what decides an exit code or an HTTP status.
    pub fn kind(&self) -> ErrorKind {
        use ErrorKind as K;
        match self {
            Error::NoStore(_)
            | Error::NoWorkspace(_)
            | Error::UnknownRevision(_)
            | Error::NoSnapshots(_)
            | Error::NoAgentSession(_)
            | Error::NoSuchTurn { .. }
            | Error::PathNotInSnapshot { .. }
            | Error::NoRemote(_)
            | Error::NoOverlay(_)
            | Error::OverlayDropped(_)
            | Error::NoOperation { .. }
            | Error::NoArtifact(_)
            | Error::NoTag(_)
            | Error::NoScratchFile { .. }
            | Error::NothingSelected(_)
            | Error::WorkspaceVanished(_) => K::NotFound,
            // A hunk id names no hunk of the diff the request itself named: the request is wrong.
            Error::UnknownHunk { .. }
            | Error::UnknownRun { .. }
            | Error::UnknownRangeRun { .. }
            | Error::NotALogRange { .. }
            | Error::NoSuchHunk { .. }
            | Error::BadHunkEdit { .. }
            | Error::NotAStore { .. }
            | Error::NotADirectory(_)
            | Error::DangerousWorkspace(_)
            | Error::WorkspaceInStore { .. }
            | Error::AmbiguousRevision { .. }
            | Error::Invalid(_)
            | Error::BadConfig { .. }
            | Error::BadPath { .. }
            | Error::PatchParse(_)
            | Error::NoCommand
            | Error::BadGlob { .. }
            | Error::NulInPath(_)
            | Error::UnsafePath(_)
            | Error::NoParent(_)
            | Error::NotAFile(_)
            | Error::IsADirectory(_)
            | Error::BadTagName(_)
            | Error::OpChangedNothing { .. }
            | Error::LineRange { .. }
            | Error::OverlayOfOtherWorkspace { .. }
            | Error::EmptySelector
            | Error::BadOverlayName(_)
            | Error::BadRemoteName(_)
            | Error::BadRemoteUrl { .. }
            | Error::NonUtf8Workspace(_)
            | Error::LiveNeedsWorkspace
            | Error::NeedsWorkspace(_)
            | Error::NothingToForget
            | Error::ForgetIdsAndPolicy
            | Error::RevisionOutOfRange { .. }
            | Error::UnmatchedPaths { .. }
            | Error::ZipNames { .. }
            | Error::StoreInsideWorkspace { .. }
            | Error::InvalidArtifactKey(..)
            | Error::RemoteKeyNeeded { .. }
            | Error::RemotePasswordMissing { .. }
            | Error::RemoteWrongKey { .. }
            | Error::Contract(_)
            | Error::Strict(_) => K::Invalid,
            Error::PatchFailed { .. }
            | Error::Conflict { .. }
            | Error::TagExists { .. }
            | Error::TagTaken(_)
            | Error::WouldOverwriteIgnored { .. }
            | Error::ForeignSnapshot { .. }
            | Error::ChangedSince { .. }
            | Error::OverlayChanged(_)
            | Error::RemoteExists { .. }
            | Error::StateForgotten { .. }
            | Error::RejectedOverlayGone(_)
            | Error::OverlayExists(_)
            | Error::NothingToUndo { .. }
            | Error::NotADirectoryOnTheWay(_)
            | Error::TagRaced(_)
            | Error::ForgetRefused(_)
            | Error::RestoreTargetNotEmpty(_)
            | Error::AppearedWhileRestoring { .. }
            | Error::ArtifactExists(_)
            | Error::InterruptedWrite { .. } => K::Conflict,
            Error::LockTimeout(..)
            | Error::OverlayBusy { .. }
            | Error::ConcurrentGc(_)
            | Error::SignalsTaken
            | Error::RemoteBusy { .. } => K::Busy,
            Error::Corrupt { .. }
            | Error::Damaged { .. }
            | Error::DamagedPage { .. }
            | Error::Missing { .. }
            | Error::GcDamaged { .. }
            | Error::RemoteObjectMissing { .. }
            | Error::RemoteForged { .. }
            | Error::RemoteDamaged { .. }
            | Error::KeyDerivation(_) => K::Damaged,
            Error::Db(e) => match e {
                redb::Error::Corrupted(_) => K::Damaged,
                redb::Error::Io(_) | redb::Error::DatabaseAlreadyOpen => K::Environment,
                _ => K::Internal,
            },
            Error::Io { .. }
            | Error::SchemaVersion { .. }
            | Error::UnknownFeatures { .. }
            | Error::ReadOnlyStore { .. }
            | Error::DiskFull(_)
            | Error::NamespaceUnavailable(_)
            | Error::WhiteoutUnsupported { .. }
            | Error::Interrupted(_)
            | Error::FileNotStored { .. }
            | Error::RestoreInterrupted { .. }
            | Error::Remote { .. } => K::Environment,
            Error::Encode { .. } | Error::Internal(_) | Error::OpWithoutState(_) => K::Internal,
            Error::Daemon(d) => match d {
                DaemonError::NotRunning(_) => K::NotFound,
                DaemonError::AlreadyRunning(_) => K::Conflict,
                DaemonError::Timeout { .. } => K::Busy,
                DaemonError::BadWatchList { .. } => K::Damaged,
                DaemonError::NonUtf8Path(_) | DaemonError::SocketPathTooLong(_) => K::Invalid,
                DaemonError::StartFailed { .. } => K::Environment,
                DaemonError::Protocol(_) => K::Internal,
            },
        }
    }

    /// The errors that caused this one, outermost first, as sentences; a cause whose text the
    /// message (or an outer cause) already holds is left out, so nothing is said twice.
    pub fn causes(&self) -> Vec<String> {
        let mut said = self.to_string();
        let mut out = Vec::new();
        let mut next = std::error::Error::source(self);
        while let Some(e) = next {
            let text = e.to_string();
            if !said.contains(&text) {
                said.push('\n');
                said.push_str(&text);
                out.push(text);
            }
            next = e.source();
        }
        out
    }

    /// The message and its [`causes`](Error::causes) on one line, `: `-separated: for a
    /// reader that gets one string (an HTTP body, a log line).
    pub fn full_message(&self) -> String {
        let mut s = self.to_string();
        for cause in self.causes() {
            s.push_str(": ");
            s.push_str(&cause);
        }
        s
    }

    /// Wraps an I/O error with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// Extension to attach a path to `io::Result`s, so no I/O error reaches the user without one.
pub trait IoContext<T> {
    /// Maps the error to [`Error::Io`] naming `path`.
    fn at(self, path: impl Into<PathBuf>) -> Result<T>;
}

impl<T> IoContext<T> for io::Result<T> {
    fn at(self, path: impl Into<PathBuf>) -> Result<T> {
        self.map_err(|e| Error::io(path, e))
    }
}

impl Error {
    /// The database's report of a damaged page, split into the table it names (the vendored
    /// database prefixes "table `NAME`: " when a table read met the damage) and the rest.
    fn damaged_page(why: String) -> Error {
        let named = why
            .strip_prefix("table `")
            .and_then(|rest| rest.split_once("`: "));
        match named {
            Some((table, rest)) => Error::DamagedPage {
                table: Some(table.to_string()),
                why: rest.to_string(),
            },
            None => Error::DamagedPage { table: None, why },
        }
    }

    /// Whether this error reports damage in the store's own database file (as opposed to a
    /// damaged record, which [`Error::Corrupt`] names).
    pub fn is_damaged_store(&self) -> bool {
        matches!(self, Error::DamagedPage { .. } | Error::Damaged { .. })
    }

    /// Whether this error reports a damaged page met while reading or writing `table`.
    pub fn is_damaged_table(&self, table: &str) -> bool {
        matches!(self, Error::DamagedPage { table: Some(t), .. } if t == table)
    }
}

macro_rules! from_redb {
    ($($t:ty),*) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Self {
                match e.into() {
                    redb::Error::Io(io)
                        if matches!(io.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT)) =>
                    {
                        Error::DiskFull(io)
                    }
                    redb::Error::Corrupted(why) => Error::damaged_page(why),
                    other => Error::Db(other),
                }
            }
        }
    )*};
}
from_redb!(
    redb::Error,
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

/// Why bytes are not a tree entry name or a workspace-relative path (see
/// [`crate::files::RelPath`]). Defined here, below the `files` layer, so [`Error`] can carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadPath {
    /// Nothing at all: a name, or a path where the workspace root is not allowed.
    #[error("empty path")]
    Empty,
    /// Starts with `/`.
    #[error("absolute paths are refused")]
    Absolute,
    /// A `..` component: it would climb out of the workspace.
    #[error("paths with '..' are refused")]
    DotDot,
    /// A `.` component (only stored paths refuse it; what people type drops it).
    #[error("'.' components are refused")]
    Dot,
    /// An empty component (`a//b`, a trailing `/`; only stored paths refuse it).
    #[error("empty components are refused")]
    EmptyComponent,
    /// A `/` inside a single name.
    #[error("a name cannot contain '/'")]
    Slash,
    /// A NUL byte, which no Unix file name can hold.
    #[error("paths cannot contain a NUL byte")]
    Nul,
}

/// Errors of the daemon and its clients.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// No daemon answers on the store's socket.
    #[error("no rewind daemon is running for the store at {}", .0.display())]
    NotRunning(PathBuf),
    /// Another daemon holds the store's daemon lock.
    #[error("a rewind daemon is already running for the store at {}", .0.display())]
    AlreadyRunning(PathBuf),
    /// The daemon did not come up (or go down) in time.
    #[error("the rewind daemon for {} did not {what} within {secs} s (see {})", store.display(), log.display())]
    Timeout {
        /// The store directory.
        store: PathBuf,
        /// "start" or "stop".
        what: &'static str,
        /// How long we waited.
        secs: u64,
        /// Its log file.
        log: PathBuf,
    },
    /// The daemon process exited while starting.
    #[error("the rewind daemon exited at start: {last} (log: {})", log.display())]
    StartFailed {
        /// The log's last line.
        last: String,
        /// The log file.
        log: PathBuf,
    },
    /// The daemon answered something this client does not understand.
    #[error("the rewind daemon answered badly: {0}")]
    Protocol(String),
    /// The watch list file cannot be read.
    #[error("{}: damaged watch list: {why}", path.display())]
    BadWatchList {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// A workspace whose path is not UTF-8 cannot be watched (the protocol speaks UTF-8).
    #[error("cannot watch {}: its path is not UTF-8", .0.display())]
    NonUtf8Path(PathBuf),
    /// A socket path longer than Unix sockets allow.
    #[error("the store path is too long for the daemon's socket ({})", .0.display())]
    SocketPathTooLong(PathBuf),
}
