//! Which rewind processes have a store open, so one that has to wait can say whom it waits
//! for. redb's write lock is an open-file-description lock, whose owner `fcntl` cannot name;
//! so each process leaves a small file `procs/<pid>-<n>` in the store directory holding its
//! command line while its handle is open. A process that died without removing its file is
//! recognised (its pid is gone) and the file removed by the next reader.

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The directory inside a store directory.
const DIR: &str = "procs";

/// This process's entry; removed when dropped.
pub(crate) struct Registration {
    path: PathBuf,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Records that this process has the store in `store_dir` open, running `command`. `None`
/// when the directory cannot be written (a read-only store): waiting then names no one.
pub(crate) fn register(store_dir: &Path, command: &[String]) -> Option<Registration> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = store_dir.join(DIR);
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .ok()?;
    let path = dir.join(format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&path)
        .ok()?;
    let line = match command.split_first() {
        None => "a program using the rewind library".to_string(),
        // `rewind snapshot`, not the binary's full path.
        Some((bin, rest)) => std::iter::once(
            Path::new(bin)
                .file_name()
                .map_or_else(|| bin.clone(), |n| n.to_string_lossy().into_owned()),
        )
        .chain(rest.iter().cloned())
        .collect::<Vec<_>>()
        .join(" "),
    };
    f.write_all(line.as_bytes()).ok()?;
    Some(Registration { path })
}

/// The other live processes that have the store open, as "pid N, COMMAND" joined by "; ",
/// or a phrase saying none is known.
pub fn describe_others(store_dir: &Path) -> String {
    let found = others(store_dir);
    if found.is_empty() {
        return "no other rewind process found: another program holds it".into();
    }
    found
        .iter()
        .map(|(pid, c)| format!("pid {pid}, {c}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Whether another live rewind process has the store open.
pub fn others_alive(store_dir: &Path) -> bool {
    !others(store_dir).is_empty()
}

/// The other live processes registered in the store, with their commands, sorted; the
/// registrations of dead ones are removed on the way.
fn others(store_dir: &Path) -> Vec<(u32, String)> {
    let me = std::process::id();
    let mut found = Vec::new();
    let Ok(entries) = fs::read_dir(store_dir.join(DIR)) else {
        return found;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        if !alive(pid) {
            let _ = fs::remove_file(e.path());
            continue;
        }
        let command = fs::read_to_string(e.path()).unwrap_or_default();
        found.push((pid, command));
    }
    found.sort();
    found.dedup();
    found
}

fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}
