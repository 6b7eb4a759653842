//! `rewind serve`: the store over HTTP (the server itself is the `rewind-serve` crate).

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;

use super::{CliError, CliResult, Ctx};
use rewind_serve::{Listen, ServeOptions};

/// `rewind serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The address to listen on; anything but loopback requires the bearer token
    #[arg(long, value_name = "ADDR", conflicts_with = "socket")]
    pub listen: Option<SocketAddr>,
    /// Listen on a Unix socket instead of TCP
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
}

/// `rewind serve`.
pub fn serve(ctx: &Ctx, a: ServeArgs) -> CliResult {
    let store = ctx.open_store(true)?;
    let store_dir = store.dir().to_path_buf();
    drop(store);
    let listen = match (a.listen, a.socket) {
        (_, Some(path)) => Listen::Unix(path),
        (Some(addr), None) => Listen::Tcp(addr),
        (None, None) => Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], 7878))),
    };
    let opts = ServeOptions {
        store_dir,
        listen,
        require_token: false,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(rewind_serve::serve(opts))
        .map_err(|e| CliError::Io(std::io::Error::other(e.to_string())))?;
    Ok(0)
}
