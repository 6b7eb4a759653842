//! `rewind serve`: the store over HTTP (the server itself is the `rewind-serve` crate).

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;

use super::{CliError, CliResult, Ctx};
use rewind_serve::{Listen, ServeOptions};

/// `rewind serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The address to listen on [default: 127.0.0.1:7878]; any address but loopback requires
    /// the bearer token (written to serve.token in the store directory)
    #[arg(long, value_name = "ADDR", conflicts_with = "socket")]
    pub listen: Option<SocketAddr>,
    /// Listen on a Unix socket instead of TCP
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Require the token on loopback and on the socket too
    #[arg(long)]
    pub require_token: bool,
}

/// `rewind serve`.
pub fn serve(ctx: &Ctx, a: ServeArgs) -> CliResult {
    let store = ctx.open_store(false)?;
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
        require_token: a.require_token,
        lock_timeout: ctx.lock_timeout,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let json = ctx.json;
    let quiet = ctx.quiet;
    rt.block_on(rewind_serve::serve_with(opts, |b| {
        // One line as soon as it listens: a program that started the server reads it to learn
        // the port (with --listen 127.0.0.1:0).
        let token = b.token_file.as_ref().map(|p| p.display().to_string());
        let page = match (&b.token, b.url.starts_with("http")) {
            (_, false) => None,
            (Some(t), true) => Some(format!("{}/login?token={t}", b.url)),
            (None, true) => Some(format!("{}/", b.url)),
        };
        let mut out = std::io::stdout().lock();
        if json {
            let v = serde_json::json!({"listening": b.url, "token_file": token, "page": page});
            let _ = writeln!(out, "{v}");
        } else if !quiet {
            let _ = match &token {
                Some(t) => writeln!(out, "rewind: serving on {} (token required: {t})", b.url),
                None => writeln!(out, "rewind: serving on {}", b.url),
            };
            if let Some(p) = &page {
                let _ = writeln!(out, "review page: {p}");
            }
        }
        let _ = out.flush();
    }))
    .map_err(|e| match e {
        rewind_serve::ServeError::Lib(e) => CliError::Lib(e),
        rewind_serve::ServeError::Io { what, source } => {
            CliError::Lib(rewind::Error::io(what, source))
        }
    })?;
    Ok(0)
}
