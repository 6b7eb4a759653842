//! `rewind mcp`: a Model Context Protocol server on stdio (the official SDK, rmcp), bound to one
//! workspace and store chosen at start. Tools take, list, compare and restore snapshots, run a
//! command between two and review overlays; resources expose snapshots and their files. Every
//! tool answers with a wire type (`rewind::wire`) as `structuredContent` and a text rendering;
//! a library error is a tool error (`isError`), never a crash.
//!
//! stdout carries the protocol only: at start the protocol's descriptors are moved aside and
//! fd 1 becomes stderr, fd 0 `/dev/null`, so neither the library nor a `run` command's output
//! can corrupt a message, and a command cannot read the client's requests.

mod params;
mod render;
mod resources;
mod tools;

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use rewind::error::Error;
use rewind::store::Store;

use super::{CliError, CliResult, Ctx};

/// `rewind mcp`.
#[derive(Args, Debug)]
pub struct McpArgs {}

/// What every tool call works on: the store (open for the session) and the workspace.
pub(crate) struct State {
    pub store: Store,
    pub root: PathBuf,
    /// To reopen the store (`run` closes it while its command runs).
    pub ctx: Ctx,
}

/// `rewind mcp`: serves until the client closes stdin.
pub fn mcp(ctx: &Ctx, _a: McpArgs) -> CliResult {
    let candidate = match &ctx.workspace {
        Some(d) => d.clone(),
        None => std::env::current_dir().map_err(|e| Error::io(".", e))?,
    };
    // `/` or the home directory is refused before the store is created, as `snapshot` does.
    rewind::workspace::canonical(&candidate, false, &super::refused_workspaces())?;
    let own = Ctx {
        store_dir: ctx.store_dir.clone(),
        workspace: ctx.workspace.clone(),
        json: false,
        // Notices ("waiting for another rewind process") go to stderr, the client's log.
        quiet: ctx.quiet,
        events: false,
        lock_timeout: ctx.lock_timeout,
        color: false,
        skip_close: ctx.skip_close,
    };
    let store = own.open_store(true)?;
    let root = own.workspace_root(&store)?;
    let (input, output) = protocol_stdio().map_err(|e| Error::io("stdio", e))?;
    let state = Arc::new(State {
        store,
        root,
        ctx: own,
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        use rmcp::ServiceExt;
        let server = tools::Server::new(state);
        let input = tokio::fs::File::from_std(std::fs::File::from(input));
        let output = tokio::fs::File::from_std(std::fs::File::from(output));
        let running = server
            .serve((input, output))
            .await
            .map_err(|e| Error::Invalid(format!("the MCP session did not start: {e}")))?;
        running
            .waiting()
            .await
            .map_err(|e| Error::Invalid(format!("the MCP session failed: {e}")))?;
        Ok::<(), Error>(())
    })
    .map_err(CliError::Lib)?;
    Ok(0)
}

/// The protocol's input and output, moved off fds 0 and 1 (close-on-exec, so commands do not
/// inherit them); fd 0 becomes `/dev/null` and fd 1 a copy of stderr.
fn protocol_stdio() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let dup = |fd: i32| -> std::io::Result<OwnedFd> {
        // SAFETY: fcntl(F_DUPFD_CLOEXEC) on a descriptor the process owns; the new descriptor
        // is checked and owned by the returned value alone.
        let n = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `n` is a fresh descriptor nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(n) })
    };
    let input = dup(0)?;
    let output = dup(1)?;
    let null = std::fs::File::open("/dev/null")?;
    // SAFETY: dup2 onto the standard descriptors, which stay open (now other files).
    if unsafe { libc::dup2(null.as_raw_fd(), 0) } < 0 || unsafe { libc::dup2(2, 1) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((input, output))
}
