//! Every test that drives the `rewind` binary, as one test binary (one link, one process
//! start-up), with the helpers they share in [`common`]. Modules are named after the file they
//! were; run one with `cargo test -p rewind-cli --test cli -- restore::`.

mod common;
#[path = "../../tests/support/git.rs"]
mod git;

mod api;
mod apply;
mod artifact;
mod badinput;
mod binary_patch;
mod blame;
mod budget;
mod crash;
mod daemon;
mod damage;
mod dict;
mod diff_git;
mod error_kinds;
mod everyday;
mod format;
mod gc;
mod groups;
mod guards;
mod history;
mod hooks;
mod hunk_edit;
mod ignore_rules;
mod ingest;
mod interrupt;
mod mcp;
mod nonutf8;
mod oplog;
mod overlay;
mod overlay_hunks;
mod overlay_isolation;
mod overlay_runs;
mod polish;
mod race;
mod range_runs;
mod remote;
mod remote_crypt;
mod renames_similar;
mod restore;
mod revert_rename;
mod review_page;
mod run;
mod safety;
mod scratch;
mod serve;
mod snapshot;
mod soak;
mod store_fit;
mod usage;
mod verify;
mod warm;
