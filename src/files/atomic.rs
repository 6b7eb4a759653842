//! Writing a workspace file so that it is at every moment either its old or its new content.

use std::io;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{Mode, OFlags};

use super::Kind;
use crate::error::{Error, Result};

/// The prefix of rewind's own temporary files (a file is written beside its target, then
/// renamed over it). A process killed in between leaves one behind; snapshots never take them,
/// and the walk lists them so that the next command writing into the workspace removes them.
pub const TEMP_PREFIX: &str = ".rewind-tmp-";

/// Turns the execute bits on (where the matching read bit is set) or off, keeping the rest.
pub fn exec_mode(mode: u32, exec: bool) -> u32 {
    let perm = mode & 0o7777;
    if exec {
        perm | ((perm & 0o444) >> 2)
    } else {
        perm & !0o111
    }
}

/// Writes a file or symlink (whose target is `data`) through a temporary sibling renamed over
/// `p`, so `p` is at every moment either the old or the new content. A replaced file keeps its
/// permission bits except the execute bits, which follow `kind`; a new file gets what the
/// process umask allows (0666 & !umask, plus execute bits where readable for executables).
///
/// The process umask is never changed (a host program's other threads may be creating files):
/// the file is created with the wanted mode, the kernel applies the umask, and the few modes it
/// changed (or setuid/setgid/sticky bits) are set afterwards on the open file.
///
/// Not fsynced: the rename is atomic against a killed process, not against power loss (see the
/// crash model in ARCHITECTURE.md).
///
/// `p`'s parent is resolved by name, following symlinks: for directories of the store's own.
/// A workspace, which other processes may change meanwhile, is written through
/// [`super::Beneath::write`].
pub fn write_atomic(p: &Path, kind: Kind, data: &mut dyn io::Read) -> Result<()> {
    let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else {
        return Err(Error::NoParent(p.to_path_buf()));
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let fd = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| Error::io(dir, e.into()))?;
    super::beneath::write_in(fd.as_fd(), name.as_bytes(), p, kind, data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    /// The process umask, read without changing it (Linux 4.7+).
    fn umask() -> u32 {
        let status = fs::read_to_string("/proc/self/status").expect("/proc/self/status");
        let line = status
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .expect("a Umask line");
        u32::from_str_radix(line.trim(), 8).expect("octal")
    }

    fn mode(p: &Path) -> u32 {
        fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn modes_follow_the_umask_for_new_files_and_the_old_bits_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let want = 0o666 & !umask();
        let f = dir.path().join("f");
        write_atomic(&f, Kind::File, &mut &b"x"[..]).unwrap();
        assert_eq!(mode(&f), want);
        let x = dir.path().join("x");
        write_atomic(&x, Kind::Executable, &mut &b"x"[..]).unwrap();
        assert_eq!(mode(&x), exec_mode(want, true));
        // A replaced file keeps its bits; only the execute bits follow the kind.
        fs::set_permissions(&f, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&f, Kind::Executable, &mut &b"y"[..]).unwrap();
        assert_eq!(mode(&f), 0o750);
        assert_eq!(fs::read(&f).unwrap(), b"y");
        write_atomic(&f, Kind::File, &mut &b"z"[..]).unwrap();
        assert_eq!(mode(&f), 0o640);
    }
}
