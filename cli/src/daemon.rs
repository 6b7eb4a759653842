//! `daemon start|stop|status|run` and `watch on|off|list`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::output::{self, human_bytes, paint};
use super::{CliResult, Ctx};
use rewind::daemon::watchlist::{AutoPolicy, WatchList};
use rewind::daemon::{DaemonError, DaemonOptions};
use rewind::wire;

/// How long `start` and `stop` wait for the daemon (generous: a loaded machine is slow).
const WAIT: Duration = Duration::from_secs(60);

/// `rewind daemon`.
#[derive(Args, Debug)]
pub struct DaemonArgs {
    #[command(subcommand)]
    pub command: DaemonCommand,
}

/// `rewind daemon` subcommands.
#[derive(Subcommand, Debug)]
pub enum DaemonCommand {
    /// Start the store's watch daemon in the background (nothing to do if one runs)
    Start(DaemonRunArgs),
    /// Stop the store's daemon
    Stop,
    /// The daemon's workspaces, watches, memory, token and overflows (exit 1: none running)
    Status,
    /// Run the daemon in the foreground (for systemd or a supervisor); stops on `daemon stop`
    Run(DaemonRunArgs),
}

/// Limits of the daemon (the hidden ones are for tests).
#[derive(Args, Debug, Clone)]
pub struct DaemonRunArgs {
    /// Events a workspace's journal holds before it resets (walks go full once)
    #[arg(long, value_name = "N")]
    pub max_queued_events: Option<usize>,
    /// Watches one workspace may use; a bigger workspace is not watched
    #[arg(long, value_name = "N")]
    pub max_watches: Option<usize>,
    /// Treat file systems of this statfs type (hex) as ones inotify cannot see (tests)
    #[arg(long, value_name = "HEX", hide = true, value_parser = parse_hex)]
    pub unsupported_fs_type: Vec<i64>,
}

/// `rewind watch`.
#[derive(Args, Debug)]
pub struct WatchArgs {
    #[command(subcommand)]
    pub command: WatchCommand,
}

/// `rewind watch` subcommands.
#[derive(Subcommand, Debug)]
pub enum WatchCommand {
    /// Have the daemon watch the workspace (walks ask it; --auto takes snapshots)
    On(WatchOnArgs),
    /// Stop watching the workspace
    Off(WatchDirArg),
    /// The watched workspaces
    List,
}

/// `watch on`.
#[derive(Args, Debug)]
pub struct WatchOnArgs {
    /// Take a snapshot (label=auto) once the tree has been quiet this long after a change
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub auto: Option<Duration>,
    /// Never take automatic snapshots closer together than this
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration, default_value = "10s", requires = "auto")]
    pub floor: Duration,
    /// The workspace [default: -C DIR, else the current one]
    pub dir: Option<PathBuf>,
}

/// `watch off`.
#[derive(Args, Debug)]
pub struct WatchDirArg {
    /// The workspace [default: -C DIR, else the current one]
    pub dir: Option<PathBuf>,
}

fn store_dir(ctx: &Ctx) -> Result<PathBuf, rewind::Error> {
    // The daemon serves an existing store; opening it checks that it is one.
    Ok(ctx.open_store(false)?.dir().to_path_buf())
}

fn parse_hex(s: &str) -> Result<i64, String> {
    i64::from_str_radix(s.trim_start_matches("0x"), 16).map_err(|_| format!("'{s}' is not hex"))
}

fn options(a: &DaemonRunArgs) -> DaemonOptions {
    let mut o = DaemonOptions::default();
    if let Some(n) = a.max_queued_events {
        o.max_queued_events = n;
    }
    if let Some(n) = a.max_watches {
        o.max_watches = n;
    }
    o.unsupported_fs = a.unsupported_fs_type.clone();
    o
}

/// `rewind daemon ...`.
pub fn daemon(ctx: &Ctx, a: DaemonArgs) -> CliResult {
    let dir = store_dir(ctx)?;
    match a.command {
        DaemonCommand::Run(r) => {
            let opts = options(&r);
            let log: Arc<dyn Fn(&str) + Send + Sync> = Arc::new(|line: &str| {
                eprintln!("{} {line}", output::format_time(rewind::files::now_ns()))
            });
            rewind::daemon::run(&dir, opts, log)?;
            Ok(0)
        }
        DaemonCommand::Start(r) => start(ctx, &dir, &r),
        DaemonCommand::Stop => {
            let stopped = match rewind::daemon::stop(&dir, WAIT) {
                Ok(_) => true,
                Err(rewind::Error::Daemon(DaemonError::NotRunning(_))) => false,
                Err(e) => return Err(e.into()),
            };
            let answer = wire::DaemonStopped {
                stopped,
                running: false,
            };
            if ctx.json {
                output::print_json(&answer)?;
            } else if !ctx.quiet {
                if answer.stopped {
                    println!("stopped the rewind daemon for {}", dir.display());
                } else {
                    println!("no rewind daemon was running for {}", dir.display());
                }
            }
            Ok(0)
        }
        DaemonCommand::Status => match rewind::daemon::status(&dir) {
            Ok(status) => {
                if ctx.json {
                    output::print_json(&wire::DaemonStatusShown::Running {
                        running: true,
                        status,
                    })?;
                } else {
                    print_status(ctx, &status);
                }
                Ok(0)
            }
            Err(rewind::Error::Daemon(DaemonError::NotRunning(_))) => {
                if ctx.json {
                    output::print_json(&wire::DaemonStatusShown::NotRunning {
                        running: false,
                        store: dir.display().to_string(),
                    })?;
                } else if !ctx.quiet {
                    println!(
                        "no rewind daemon is running for {} (start one: rewind daemon start)",
                        dir.display()
                    );
                }
                Ok(1)
            }
            Err(e) => Err(e.into()),
        },
    }
}

fn start(ctx: &Ctx, dir: &Path, r: &DaemonRunArgs) -> CliResult {
    if let Ok(v) = rewind::daemon::call(dir, &rewind::daemon::Request::Status) {
        if ctx.json {
            output::print_json(&wire::DaemonStarted {
                started: false,
                running: true,
                pid: v["pid"].as_u64(),
            })?;
        } else if !ctx.quiet {
            println!("a rewind daemon is already running (pid {})", v["pid"]);
        }
        return Ok(0);
    }
    let p = rewind::daemon::paths(dir);
    rewind::daemon::watchlist::make_private_dir(&p.dir)?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&p.log)
        .map_err(|e| rewind::Error::io(&p.log, e))?;
    let exe = std::env::current_exe().map_err(|e| rewind::Error::io("rewind", e))?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("--store").arg(dir).args(["daemon", "run"]);
    if let Some(n) = r.max_queued_events {
        cmd.arg("--max-queued-events").arg(n.to_string());
    }
    if let Some(n) = r.max_watches {
        cmd.arg("--max-watches").arg(n.to_string());
    }
    for t in &r.unsupported_fs_type {
        cmd.arg("--unsupported-fs-type").arg(format!("{t:x}"));
    }
    cmd.stdin(std::process::Stdio::null())
        .stdout(log.try_clone().map_err(|e| rewind::Error::io(&p.log, e))?)
        .stderr(log)
        .current_dir("/");
    // A session of its own: the terminal's signals (Ctrl-C in the shell that started it) are
    // not its business.
    // SAFETY: setsid is async-signal-safe and touches only the child.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| rewind::Error::io("rewind daemon run", e))?;
    let begun = std::time::Instant::now();
    let status = loop {
        if let Ok(v) = rewind::daemon::call(dir, &rewind::daemon::Request::Status) {
            break v;
        }
        // It exited: another daemon won the race (then it answers), or it failed (its log
        // says why).
        if let Ok(Some(_)) = child.try_wait() {
            if let Ok(v) = rewind::daemon::call(dir, &rewind::daemon::Request::Status) {
                break v;
            }
            let log_text = std::fs::read_to_string(&p.log).unwrap_or_default();
            return Err(rewind::Error::from(DaemonError::StartFailed {
                last: log_text.lines().last().unwrap_or("").to_string(),
                log: p.log.clone(),
            })
            .into());
        }
        if begun.elapsed() > WAIT {
            return Err(rewind::Error::from(DaemonError::Timeout {
                store: dir.to_path_buf(),
                what: "start",
                secs: WAIT.as_secs(),
                log: p.log.clone(),
            })
            .into());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if ctx.json {
        output::print_json(&wire::DaemonStarted {
            started: true,
            running: true,
            pid: status["pid"].as_u64(),
        })?;
    } else if !ctx.quiet {
        println!(
            "started the rewind daemon (pid {}) for {}; log: {}",
            status["pid"],
            dir.display(),
            p.log.display()
        );
    }
    Ok(0)
}

fn print_status(ctx: &Ctx, v: &wire::DaemonStatus) {
    println!(
        "rewind daemon pid {} for {}, up {:.0} s, {} resident, token {}",
        v.pid,
        v.store,
        v.uptime_secs,
        human_bytes(v.memory_rss_bytes.unwrap_or(0)),
        v.token.seq,
    );
    if v.workspaces.is_empty() {
        println!("no workspace watched (rewind watch on)");
    }
    for w in &v.workspaces {
        let name = paint(ctx.color, output::bold(), &w.workspace);
        match &w.broken {
            Some(why) => println!("  {name}: not watched: {why}"),
            None => {
                let auto = match &w.auto {
                    Some(a) => format!(
                        ", auto after {} ms quiet (floor {} ms, {} taken)",
                        a.quiet_ms, a.floor_ms, a.taken
                    ),
                    None => String::new(),
                };
                println!(
                    "  {name}: {} directories watched, {} events, {} overflows{auto}",
                    w.watches, w.events, w.overflows
                );
            }
        }
    }
}

/// `rewind watch ...`.
pub fn watch(ctx: &Ctx, a: WatchArgs) -> CliResult {
    let store = ctx.open_store(true)?;
    let dir = store.dir().to_path_buf();
    let mut list = WatchList::load(&dir)?;
    let root_of = |d: &Option<PathBuf>| -> Result<PathBuf, rewind::Error> {
        match d {
            Some(d) => rewind::workspace::resolve(d),
            None => ctx.workspace_root(&store),
        }
    };
    let running = rewind::daemon::is_running(&dir);
    match a.command {
        WatchCommand::On(on) => {
            let root = root_of(&on.dir)?;
            let auto = on.auto.map(|q| AutoPolicy {
                quiet_ms: q.as_millis() as u64,
                floor_ms: on.floor.as_millis() as u64,
            });
            list.set(&root, auto)?;
            list.save(&dir)?;
            rewind::daemon::reload(&dir);
            if ctx.json {
                output::print_json(&wire::WatchOn {
                    workspace: root.display().to_string(),
                    watched: true,
                    auto: auto.as_ref().map(wire::WatchAuto::from),
                    daemon_running: running,
                })?;
            } else if !ctx.quiet {
                let auto_text = match auto {
                    Some(p) => format!(
                        ", automatic snapshots after {} quiet (at most one per {})",
                        humantime::format_duration(Duration::from_millis(p.quiet_ms)),
                        humantime::format_duration(Duration::from_millis(p.floor_ms))
                    ),
                    None => String::new(),
                };
                println!("watching {}{auto_text}", root.display());
                if !running {
                    println!("no daemon is running yet: start one with `rewind daemon start`");
                }
                // The daemon's journal vouches for a directory only from a walk it saw start:
                // until a snapshot records the daemon's token with the stat cache, `status`
                // walks the whole tree.
                println!(
                    "walks use the daemon's journal from the next snapshot on: `rewind snapshot` now to start"
                );
            }
        }
        WatchCommand::Off(off) => {
            let root = root_of(&off.dir)?;
            let was = list.remove(&root);
            list.save(&dir)?;
            rewind::daemon::reload(&dir);
            if ctx.json {
                output::print_json(&wire::WatchOff {
                    workspace: root.display().to_string(),
                    watched: false,
                    was_watched: was,
                })?;
            } else if !ctx.quiet {
                if was {
                    println!("stopped watching {}", root.display());
                } else {
                    println!("{} was not watched", root.display());
                }
            }
        }
        WatchCommand::List => {
            if ctx.json {
                output::print_json(&wire::WatchList::new(&list.workspaces, running))?;
            } else {
                for w in &list.workspaces {
                    match w.auto {
                        Some(p) => println!(
                            "{}  auto: {} quiet, floor {}",
                            w.path,
                            humantime::format_duration(Duration::from_millis(p.quiet_ms)),
                            humantime::format_duration(Duration::from_millis(p.floor_ms))
                        ),
                        None => println!("{}", w.path),
                    }
                }
                if !running && !ctx.quiet && !list.workspaces.is_empty() {
                    println!("(no daemon running: rewind daemon start)");
                }
            }
        }
    }
    Ok(0)
}
