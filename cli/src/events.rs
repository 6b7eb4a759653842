//! `rewind events`: what happens in a workspace, from the watch daemon.

use clap::Args;

use super::output::{self, paint};
use super::{CliResult, Ctx};
use rewind::daemon::{Client, DaemonError, Request};
use rewind::events::Event;

/// `rewind events`.
#[derive(Args, Debug)]
pub struct EventsArgs {
    /// Keep printing events as they happen (until interrupted)
    #[arg(long, short)]
    pub follow: bool,
    /// With --follow, first print the recent events the daemon still holds
    #[arg(long)]
    pub replay: bool,
    /// Every workspace's events, not only this one's
    #[arg(long)]
    pub all: bool,
}

/// `rewind events`.
pub fn events(ctx: &Ctx, a: EventsArgs) -> CliResult {
    let store = ctx.open_store(false)?;
    let workspace = if a.all {
        None
    } else {
        Some(ctx.workspace_root(&store)?.to_string_lossy().into_owned())
    };
    let dir = store.dir().to_path_buf();
    drop(store);
    let mut client = Client::connect(&dir)
        .map_err(|_| rewind::Error::from(DaemonError::NotRunning(dir.clone())))?;
    client
        .send(&Request::Subscribe {
            workspace,
            replay: a.replay || !a.follow,
            follow: a.follow,
        })
        .map_err(|e| rewind::Error::from(DaemonError::Protocol(e.to_string())))?;
    if a.follow {
        client
            .wait_forever()
            .map_err(|e| rewind::Error::from(DaemonError::Protocol(e.to_string())))?;
    }
    loop {
        let line = match client.read_line() {
            Ok(Some(v)) => v,
            Ok(None) => break,
            Err(e) => return Err(rewind::Error::from(DaemonError::Protocol(e.to_string())).into()),
        };
        if ctx.json {
            // One compact object per line (JSON lines), flushed as it comes.
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            serde_json::to_writer(&mut out, &line).map_err(std::io::Error::from)?;
            out.write_all(b"\n")?;
            out.flush()?;
            continue;
        }
        match serde_json::from_value::<Event>(line.clone()) {
            Ok(e) => println!("{}", human(ctx, &e)),
            // An event kind newer than this client: shown as it came.
            Err(_) => println!("{line}"),
        }
    }
    Ok(0)
}

fn human(ctx: &Ctx, e: &Event) -> String {
    let when = |ns: i64| output::format_time(ns);
    let kind = |k: &str| paint(ctx.color, output::bold(), k);
    match e {
        Event::Changed {
            time_ns,
            paths,
            overlay,
            ..
        } => {
            let inside = overlay.map_or_else(String::new, |o| format!("(overlay {o}) "));
            format!(
                "{} {} {inside}{}",
                when(*time_ns),
                kind("changed"),
                paths.join(" ")
            )
        }
        Event::Snapshot {
            time_ns,
            id,
            label,
            kind: k,
            ..
        } => format!(
            "{} {} {} ({k}{})",
            when(*time_ns),
            kind("snapshot"),
            paint(ctx.color, output::id_style(), id.get(..12).unwrap_or(id)),
            label
                .as_deref()
                .map(|l| format!(", label={l}"))
                .unwrap_or_default()
        ),
        Event::Operation {
            time_ns,
            op,
            kind: k,
            ..
        } => format!("{} {} {op} {k}", when(*time_ns), kind("operation")),
        Event::Watching { time_ns, dirs, .. } => {
            format!("{} {} {dirs} directories", when(*time_ns), kind("watching"))
        }
        Event::Overflow { time_ns, .. } => format!(
            "{} {} (the next walk is a full one)",
            when(*time_ns),
            kind("overflow")
        ),
        Event::Unwatched {
            time_ns, reason, ..
        } => {
            format!("{} {} {reason}", when(*time_ns), kind("unwatched"))
        }
    }
}
