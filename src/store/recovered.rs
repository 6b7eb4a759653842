//! Reading a store this process cannot write, when its file needs redb's recovery.
//!
//! Commands an editor or agent runs all the time skip redb's close (`StoreOptions::skip_close`),
//! so the file they leave is the one a process killed after its last commit leaves: complete,
//! with a header that says "recover me". redb recovers it at the next open with one header
//! write, which a handle without write permission cannot make: `open_read_only` refuses such a
//! file, and a store that is only readable to this user (another user's, a read-only mount)
//! could not be read at all. Here redb opens the file through a backend that reads it and
//! keeps every write in memory: the recovery happens, the file is untouched, and the handle is
//! used for reading only (see `Handle::Recovered`).
//!
//! Such a handle takes no lock on the file (the backend cannot: a read-only descriptor takes no
//! write lock, and redb's shared locks would only matter to writers this user cannot be). A
//! process writing the store meanwhile may reuse pages this one reads: redb's page checksums
//! make that an error, never wrong data.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Mutex;

/// A file read as it is, with the writes made to it kept in memory.
#[derive(Debug)]
pub(super) struct Overlay {
    file: File,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The length the database sees.
    len: u64,
    /// The file's own length: what lies past it reads as zeros.
    file_len: u64,
    /// Writes, in order: a later one wins where they overlap.
    writes: Vec<(u64, Vec<u8>)>,
}

impl Overlay {
    /// An overlay of `file` (opened for reading).
    pub fn new(file: File) -> std::io::Result<Overlay> {
        let len = file.metadata()?.len();
        Ok(Overlay {
            file,
            state: Mutex::new(State {
                len,
                file_len: len,
                writes: Vec::new(),
            }),
        })
    }
}

impl redb::StorageBackend for Overlay {
    fn len(&self) -> std::io::Result<u64> {
        Ok(self.state.lock().unwrap_or_else(|p| p.into_inner()).len)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> std::io::Result<()> {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let end = offset + out.len() as u64;
        if end > state.len {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("read of {offset}..{end} past the end ({})", state.len),
            ));
        }
        // From the file up to its own end, zeros after.
        let from_file = state.file_len.saturating_sub(offset).min(out.len() as u64) as usize;
        self.file.read_exact_at(&mut out[..from_file], offset)?;
        out[from_file..].fill(0);
        for (at, bytes) in &state.writes {
            let (lo, hi) = (offset.max(*at), end.min(at + bytes.len() as u64));
            if lo < hi {
                out[(lo - offset) as usize..(hi - offset) as usize]
                    .copy_from_slice(&bytes[(lo - at) as usize..(hi - at) as usize]);
            }
        }
        Ok(())
    }

    fn set_len(&self, len: u64) -> std::io::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.len = len;
        // A shrink forgets what lay past the new end (a later growth reads zeros there).
        state.file_len = state.file_len.min(len);
        state.writes.retain(|(at, _)| *at < len);
        for (at, bytes) in &mut state.writes {
            bytes.truncate((len - *at).min(bytes.len() as u64) as usize);
        }
        Ok(())
    }

    fn sync_data(&self) -> std::io::Result<()> {
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.writes.push((offset, data.to_vec()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use redb::StorageBackend;

    use super::*;

    #[test]
    fn writes_stay_in_memory_and_read_back_over_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"abcdefgh").unwrap();
        let o = Overlay::new(File::open(&path).unwrap()).unwrap();
        o.write(2, b"XY").unwrap();
        o.write(3, b"Z").unwrap();
        let mut out = [0u8; 8];
        o.read(0, &mut out).unwrap();
        assert_eq!(&out, b"abXZefgh");
        // Growth reads zeros past the file; a shrink forgets what lay past the new end.
        o.set_len(12).unwrap();
        o.write(10, b"QR").unwrap();
        let mut out = [0u8; 12];
        o.read(0, &mut out).unwrap();
        assert_eq!(&out, b"abXZefgh\0\0QR");
        o.write(3, b"123").unwrap();
        o.set_len(4).unwrap();
        o.set_len(8).unwrap();
        let mut out = [0u8; 8];
        o.read(0, &mut out).unwrap();
        assert_eq!(&out, b"abX1\0\0\0\0");
        assert!(
            o.read(6, &mut [0u8; 4]).is_err(),
            "a read past the end fails"
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"abcdefgh",
            "the file is untouched"
        );
    }
}
