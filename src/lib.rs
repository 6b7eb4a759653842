//! rewind: a content-addressed snapshot store for working directories, as a library a program
//! can embed. The `rewind` binary (the `rewind-cli` package) only parses arguments and prints.
//!
//! # The API
//!
//! The crate root re-exports what an embedder needs; each lives in the module named beside it,
//! whose documentation says more:
//!
//! | what | functions | options and results |
//! |---|---|---|
//! | a store | [`Store::open`], [`Store::reader`] | [`StoreOptions`], [`Reader`], [`Id`] |
//! | snapshots | [`snapshot()`] | [`SnapshotOptions`], [`SnapshotOutcome`], [`SnapshotReport`] |
//! | paths in a workspace | [`RelPath::parse`] | [`RelPath`] (what every path option takes) |
//! | diffs | [`diff()`] | [`Rev`], [`DiffRequest`], [`Diff`], [`FileChange`] |
//! | restores | [`restore()`] | [`RestoreOptions`], [`OpInfo`], [`RestoreReport`] |
//! | command runs | [`run()`] | [`RunOptions`], [`RunResult`], [`Isolate`] |
//! | overlays | [`overlay::create`], [`overlay::find`], [`Overlay::diff`], [`Overlay::accept`] | [`Overlay`], [`CreateOptions`], [`AcceptOptions`], [`BackendChoice`] |
//! | errors | | [`Error`], [`Result`] |
//! | progress | | [`Progress`] (implement it), [`NoProgress`] |
//!
//! The other public modules (apply, revert, undo, gc, forget, verify, remotes...) are the
//! operations the CLI drives, one module each. The store's encodings (blob records, tables,
//! the pending-write journal), the scan and the daemon's journal are private; `internals`
//! (hidden from these docs) exposes the decoders to the fuzz target and tests, and is not
//! part of the API.
//!
//! Library data names no CLI flag or command: where a caller's choice would get past a
//! refusal, errors and reports carry it typed ([`error::Remedy`], [`carry::Settle`],
//! [`error::HunkSet`]...), and the CLI words the hint. Nor does the library read `HOME` or the
//! current directory: [`StoreOptions::refused_workspaces`] and [`RunOptions::cwd`] take them.
//!
//! The library reads no environment variable and changes no process-global state (umask,
//! current directory); what the CLI takes from `REWIND_*` variables are fields of the option
//! structs. Signal handlers are installed only where asked for ([`RunOptions::forward_signals`],
//! [`interrupt::Guard`]).
//!
//! # Layers
//!
//! Modules form layers without cycles (paths and fs safety, store, scan, diff/patch,
//! operations); ARCHITECTURE.md lists them and a test enforces the list.
//!
//! # Example
//!
//! ```
//! use rewind::{DiffRequest, Rev, RestoreOptions, RunOptions, SnapshotOptions, Store, StoreOptions};
//! use rewind::{BackendChoice, CreateOptions, AcceptOptions, Isolate, NoProgress, OpInfo};
//!
//! # fn main() -> rewind::Result<()> {
//! let tmp = tempfile::tempdir().unwrap();
//! let ws = tmp.path().join("ws");
//! std::fs::create_dir(&ws).unwrap();
//! std::fs::write(ws.join("notes.txt"), "one\n").unwrap();
//!
//! // A store in a directory of its own, and a first snapshot.
//! let store = Store::open(&tmp.path().join("store"), StoreOptions::default())?;
//! let first = rewind::snapshot(&store, &ws, &SnapshotOptions::default(), &NoProgress)?;
//! let first = first.report.id.expect("not a dry run");
//!
//! // Change the workspace, and compare it with the snapshot.
//! std::fs::write(ws.join("notes.txt"), "two\n").unwrap();
//! let d = rewind::diff(&store, Rev::Snapshot(first), Rev::Live, Some(&ws), &DiffRequest::default())?;
//! assert_eq!(d.changes.len(), 1, "diff");
//! assert_eq!(d.changes[0].path, b"notes.txt");
//!
//! // Put the snapshot back (the live state is snapshotted first, so this is undoable).
//! let r = rewind::restore(&store, &ws, first, &RestoreOptions::default(), &OpInfo::default(), &NoProgress)?;
//! assert!(r.before.is_some());
//! assert_eq!(std::fs::read(ws.join("notes.txt")).unwrap(), b"one\n");
//!
//! // Run a command between two snapshots: the result says what it changed.
//! let dir = tmp.path().join("store");
//! let open = || Store::open(&dir, StoreOptions::default());
//! drop(store);
//! let opts = RunOptions {
//!     command: vec!["sh".into(), "-c".into(), "echo three > notes.txt".into()],
//!     cwd: Some(ws.clone()),
//!     ..RunOptions::default()
//! };
//! let result = rewind::run(&open, &ws, &opts, &mut |_event| {})?;
//! assert!(result.success());
//! assert_eq!(result.diff.files_changed, 1, "run");
//!
//! // The same in an overlay: the workspace is untouched until the change is accepted.
//! let store = open()?;
//! let created = rewind::overlay::create(
//!     &store,
//!     &ws,
//!     &CreateOptions { backend: BackendChoice::Copy, ..CreateOptions::default() },
//!     &NoProgress,
//! )?;
//! drop(store);
//! let opts = RunOptions {
//!     command: vec!["sh".into(), "-c".into(), "echo four > notes.txt".into()],
//!     cwd: Some(ws.clone()),
//!     isolate: Some(Isolate {
//!         overlay: Some(created.overlay.id().to_string()),
//!         existing: true,
//!         accept: rewind::run::isolate::AcceptWhen::Never,
//!         keep: true,
//!         ..Isolate::default()
//!     }),
//!     ..RunOptions::default()
//! };
//! rewind::run(&open, &ws, &opts, &mut |_event| {})?;
//! assert_eq!(std::fs::read(ws.join("notes.txt")).unwrap(), b"three\n");
//! let store = open()?;
//! let mut rec = rewind::overlay::find(&store, &created.overlay.id().to_string())?;
//! assert_eq!(rec.diff(&store, false)?.diff.changes.len(), 1, "overlay");
//! let all = AcceptOptions {
//!     paths: Vec::new(),
//!     policy: rewind::carry::ConflictPolicy::Fail,
//!     include_ignored: false,
//!     hunks: Vec::new(),
//!     edited: Vec::new(),
//!     run: None,
//! };
//! rec.accept(&store, &all)?;
//! assert_eq!(std::fs::read(ws.join("notes.txt")).unwrap(), b"four\n");
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]
// A public type reachable only through a private module could not be named by an embedder.
#![warn(unnameable_types)]

pub mod apply;
pub mod artifact;
pub mod blame;
pub mod budget;
pub mod carry;
pub mod compare;
pub mod config;
pub mod contract;
#[cfg(feature = "daemon")]
pub mod daemon;
/// The watch daemon's client side: what a snapshot and an event subscription ask a daemon
/// (the daemon itself is the `daemon` feature).
#[cfg(not(feature = "daemon"))]
pub mod daemon {
    pub use crate::error::DaemonError;
    pub use crate::scan::daemon_link::{
        Client, DaemonPaths, Narrowing, Request, WalkNarrowing, paths,
    };
    pub use crate::scan::token::Token;
}
pub mod diff;
pub mod error;
pub mod events;
pub mod export;
pub mod files;
pub mod find;
pub mod forget;
pub mod gc;
pub mod history;
pub mod hunks;
pub mod id;
pub(crate) mod ingest;
#[doc(hidden)]
pub mod internals;
pub mod interrupt;
pub mod overlay;
pub mod owners;
pub mod patch;
pub mod progress;
#[cfg(feature = "remote")]
pub mod remote;
/// Without the `remote` feature, only the pack format: its decoder is one of the store's
/// on-disk decoders the fuzz target and the decoder tests exercise (`internals`).
#[cfg(not(feature = "remote"))]
mod remote {
    #[allow(dead_code)]
    pub mod pack;
}
pub mod restore;
pub mod retention;
pub mod revert;
pub mod review_runs;
pub mod revision;
pub mod run;
pub(crate) mod scan;
pub mod scratch;
pub mod session;
pub mod snapshot;
pub mod stats;
pub mod store;
pub mod undo;
pub mod verify;
pub mod wire;
pub mod workspace;

pub use budget::snapshot;
pub use compare::{Diff, DiffRequest, Rev, diff};
pub use diff::FileChange;
pub use error::{Error, Result};
pub use files::RelPath;
pub use id::Id;
pub use overlay::{AcceptOptions, BackendChoice, CreateOptions, Overlay};
pub use progress::{NoProgress, Progress};
pub use restore::{OpInfo, RestoreOptions, RestoreReport, restore};
pub use run::isolate::Isolate;
pub use run::{RunOptions, RunResult, run};
pub use snapshot::{SnapshotOptions, SnapshotOutcome, SnapshotReport};
pub use store::artifact::Artifact;
pub use store::snapshot::{Snapshot, Workspace};
pub use store::{Reader, Store, StoreOptions};
