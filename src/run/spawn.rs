//! Starting the command and waiting for it, with the run's signal handling.

use std::io::{self};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use crate::error::{Error, Result};

use super::{EXIT_CANNOT_EXECUTE, EXIT_NOT_FOUND, RunEvent, RunOptions, signals};

/// How the command ended.
pub(crate) struct Outcome {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub spawn_error: Option<String>,
}

pub(super) fn run_command(
    opts: &RunOptions,
    cwd: &Path,
    events: &mut dyn FnMut(&RunEvent),
) -> Result<(Outcome, f64)> {
    let mut cmd = Command::new(&opts.command[0]);
    cmd.args(&opts.command[1..]).current_dir(cwd);
    if let Some(dir) = &opts.scratch {
        cmd.env("REWIND_SCRATCH", dir);
    }
    run_prepared(cmd, opts, events)
}

/// Runs a prepared command (in an overlay, say) with the run's signal handling, timed: returns
/// how it ended and its duration in seconds, and reports the end as `CommandFinished`.
pub(crate) fn run_prepared(
    cmd: Command,
    opts: &RunOptions,
    events: &mut dyn FnMut(&RunEvent),
) -> Result<(Outcome, f64)> {
    let started = Instant::now();
    let outcome = wait_for(cmd, opts, events)?;
    let seconds = started.elapsed().as_secs_f64();
    events(&RunEvent::CommandFinished {
        exit_code: outcome.exit_code,
        signal: outcome.signal,
        seconds,
    });
    Ok((outcome, seconds))
}

/// Spawns `cmd` and waits for it, forwarding signals as the run's options say.
fn wait_for(
    mut cmd: Command,
    opts: &RunOptions,
    events: &mut dyn FnMut(&RunEvent),
) -> Result<Outcome> {
    let own_group = opts.forward_signals && !signals::terminal_foreground();
    if own_group {
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.kind() == io::ErrorKind::NotFound {
                EXIT_NOT_FOUND
            } else {
                EXIT_CANNOT_EXECUTE
            };
            return Ok(Outcome {
                exit_code: Some(code),
                signal: None,
                spawn_error: Some(format!("{}: {e}", opts.command[0].to_string_lossy())),
            });
        }
    };
    events(&RunEvent::CommandStarted { pid: child.id() });
    let pid = child.id() as libc::pid_t;
    if opts.forward_signals {
        signals::set_child(pid, own_group);
        // Wait without reaping, so the pid cannot be reused while the handler may still send
        // it a signal; then forget it, then reap.
        signals::wait_exited(pid);
        signals::set_child(0, false);
    }
    let status = child
        .wait()
        .map_err(|e| Error::io(opts.command[0].clone(), e))?;
    Ok(Outcome {
        exit_code: status.code(),
        signal: status.signal(),
        spawn_error: None,
    })
}
