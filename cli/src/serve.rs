//! `rewind serve`: the store over HTTP (the server itself is the `rewind-serve` crate).

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;

use super::{CliError, CliResult, Ctx};
use rewind_serve::{Listen, ServeOptions};

/// `rewind serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The address to listen on [default: 127.0.0.1:7878]
    #[arg(long, value_name = "ADDR", conflicts_with = "socket")]
    pub listen: Option<SocketAddr>,
    /// Listen on a Unix socket (created mode 0600) instead of TCP
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Serve without the token: only with --socket, whose owner-only mode is then the guard
    #[arg(long, conflicts_with = "require_token")]
    pub no_token: bool,
    /// The token is always required (unless --no-token): accepted for older scripts
    #[arg(long, hide = true)]
    pub require_token: bool,
    /// Also answer requests whose Host header is NAME or NAME:PORT (a reverse proxy's name);
    /// repeatable. Other names are refused, as DNS rebinding would use them
    #[arg(long, value_name = "NAME")]
    pub allow_host: Vec<String>,
    /// Refuse every request that would change anything (runs, apply, restore, accept, ...)
    #[arg(long)]
    pub read_only: bool,
    /// Refuse the requests that run a command (run, overlay run)
    #[arg(long)]
    pub no_run: bool,
    /// Append a line per request (time, peer, method and path, status, milliseconds) to PATH;
    /// `-` for stderr. The query is never logged (it may carry the token)
    #[arg(long, value_name = "PATH")]
    pub log: Option<PathBuf>,
}

/// `rewind serve`.
pub fn serve(ctx: &Ctx, a: ServeArgs) -> CliResult {
    if a.no_token && a.socket.is_none() {
        return Err(CliError::Lib(rewind::Error::Invalid(
            "--no-token is allowed only with --socket: over TCP every local user, and every web \
             page open in a browser, could reach the server and run commands as you; a socket's \
             0600 mode is the guard instead"
                .into(),
        )));
    }
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
        no_token: a.no_token,
        allow_hosts: a.allow_host,
        read_only: a.read_only,
        no_run: a.no_run,
        lock_timeout: ctx.lock_timeout,
        access_log: a.log,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let json = ctx.json;
    let quiet = ctx.quiet;
    rt.block_on(rewind_serve::serve_with(opts, |b| {
        // One line as soon as it listens: a program that started the server reads it to learn
        // the port (with --listen 127.0.0.1:0). It never holds the token: output is logged
        // and piped, and the token is a password.
        let token_file = b.token_file.as_ref().map(|p| p.display().to_string());
        let http = b.url.starts_with("http");
        let page = http.then(|| format!("{}/", b.url));
        let mut out = std::io::stdout().lock();
        if json {
            let v = rewind::wire::Listening {
                listening: b.url.clone(),
                token_file: token_file.clone(),
                page,
            };
            let _ = serde_json::to_writer(&mut out, &v);
            let _ = writeln!(out);
        } else if !quiet {
            let _ = match &token_file {
                Some(t) => writeln!(out, "rewind: serving on {} (token in {t})", b.url),
                None => writeln!(out, "rewind: serving on {} (no token)", b.url),
            };
        }
        let _ = out.flush();
        // The review page's sign-in link holds the token: shown only to a person at a
        // terminal, never into a pipe or a log file.
        if quiet || !http {
            return;
        }
        let mut err = std::io::stderr().lock();
        let _ = match (&b.token, &token_file) {
            (Some(t), _) if err.is_terminal() => {
                writeln!(err, "review page: {}/login?token={t}", b.url)
            }
            (_, Some(f)) => writeln!(
                err,
                "rewind: review page {}/ signs in with the token in {f}",
                b.url
            ),
            _ => writeln!(err, "review page: {}/", b.url),
        };
    }))
    .map_err(|e| match e {
        rewind_serve::ServeError::Lib(e) => CliError::Lib(e),
        rewind_serve::ServeError::Unsafe(why) => CliError::Lib(rewind::Error::Invalid(why)),
        rewind_serve::ServeError::Io { what, source } => {
            CliError::Lib(rewind::Error::io(what, source))
        }
    })?;
    Ok(0)
}
