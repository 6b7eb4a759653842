//! rewind: a content-addressed snapshot store for working directories.
//!
//! The library does all the work; the `rewind` binary only parses arguments and prints.
//! Start with [`Store::open`], take snapshots with [`snapshot::snapshot`], and read them back
//! through a [`store::Reader`]. See ARCHITECTURE.md for the data model and its invariants.

pub mod apply;
pub mod artifact;
pub mod carry;
pub mod cli;
pub mod config;
pub mod contract;
pub mod daemon;
pub mod diff;
pub mod error;
pub mod events;
pub mod forget;
pub mod gc;
pub mod history;
pub mod hunks;
pub mod id;
pub mod interrupt;
pub mod overlay;
pub mod patch;
pub mod progress;
pub mod remote;
pub mod restore;
pub mod retention;
pub mod revert;
pub mod revision;
pub mod run;
pub mod scan;
pub mod scratch;
pub mod snapshot;
pub mod stats;
pub mod store;
pub mod undo;
pub mod util;
pub mod verify;
pub mod workspace;

pub use error::{Error, Result};
pub use id::Id;
pub use snapshot::{SnapshotOptions, SnapshotOutcome, SnapshotReport};
pub use store::{Store, StoreOptions};
