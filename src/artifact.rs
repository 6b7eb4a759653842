//! Artifacts, the library's face: put content from a file or a stream, get it back to a writer
//! or a file, list and remove. Storage details (chunking, batching, the table) are in
//! `crate::store::artifact`.
//!
//! The record as stored is private to the crate, so that its encoding can change: an embedder
//! reads [`Artifact`], which wraps it.
//!
//! ```
//! fn shown(a: &rewind::Artifact) -> (&str, rewind::Id, u64) {
//!     (a.key(), a.blob(), a.size())
//! }
//! ```
//!
//! ```compile_fail,E0603
//! fn size(r: &rewind::artifact::ArtifactRecord) -> u64 {
//!     r.size
//! }
//! ```

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

use crate::error::{Error, IoContext, Result};
use crate::store::Store;
// At its old public path the record is now a private name (the doc test above relies on it:
// naming it from outside is E0603, not an unknown path); the crate's own readers use it.
pub(crate) use crate::store::artifact::ArtifactRecord;
pub use crate::store::artifact::{Artifact, MAX_KEY_LEN, PutReport, validate_key};

/// Checks the key of a new artifact, for every caller alike (the CLI, the HTTP API, runs):
/// [`validate_key`], and no empty, `.` or `..` component, not absolute, the rule
/// [`crate::files::RelPath`] states and tag names follow too. Keys are names, not paths, but
/// clients map them to files (`artifact get -o`, a scratch directory), so no new key may climb
/// out of a directory. Existing keys are not re-checked: [`get`] and [`remove`] take any key
/// [`validate_key`] accepts, so one stored before this rule can still be read and removed.
pub fn check_key(key: &str) -> Result<()> {
    validate_key(key)?;
    crate::files::RelPath::new(key.as_bytes())
        .map(|_| ())
        .map_err(|why| Error::InvalidArtifactKey(key.escape_debug().to_string(), why.to_string()))
}

/// Stores `input` under `key` (see `crate::store::artifact::put`), after [`check_key`].
pub fn put(
    store: &Store,
    key: &str,
    input: &mut dyn Read,
    meta: Vec<(String, String)>,
    force: bool,
) -> Result<PutReport> {
    check_key(key)?;
    crate::store::artifact::put(store, key, input, meta, force)
}

/// Stores the file at `path` under `key`, streamed.
pub fn put_file(
    store: &Store,
    key: &str,
    path: &Path,
    meta: Vec<(String, String)>,
    force: bool,
) -> Result<PutReport> {
    // Checked before opening, so a bad key is reported as such even when the file is missing.
    check_key(key)?;
    let mut f = File::open(path).at(path)?;
    put(store, key, &mut ReadAt(&mut f, path), meta, force)
}

/// The artifact `key`.
pub fn find(store: &Store, key: &str) -> Result<Artifact> {
    validate_key(key)?;
    store
        .reader()?
        .artifact(key)?
        .ok_or_else(|| Error::NoArtifact(key.to_string()))
}

/// Streams the content of `key` into `out` (one chunk in memory at a time); returns its length.
pub fn get(store: &Store, key: &str, out: &mut dyn Write) -> Result<u64> {
    let a = find(store, key)?;
    store.reader()?.write_blob(&a.blob(), out)
}

/// Writes the content of `key` to the file `dest`: through a temporary sibling renamed into
/// place, so `dest` is never left half written (and a failed get keeps the old file).
pub fn get_to_file(store: &Store, key: &str, dest: &Path) -> Result<u64> {
    let a = find(store, key)?;
    let dir = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".rewind-tmp-")
        .tempfile_in(dir)
        .at(dir)?;
    let n = {
        let mut w = io::BufWriter::with_capacity(1 << 16, tmp.as_file_mut());
        let n = store.reader()?.write_blob(&a.blob(), &mut w)?;
        w.flush().at(dest)?;
        n
    };
    // tempfile creates 0600; give the file the mode it had, or an ordinary 0644.
    let mode = std::fs::metadata(dest)
        .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o7777)
        .unwrap_or(0o644);
    std::fs::set_permissions(
        tmp.path(),
        std::os::unix::fs::PermissionsExt::from_mode(mode),
    )
    .at(tmp.path())?;
    tmp.persist(dest).map_err(|e| Error::io(dest, e.error))?;
    Ok(n)
}

/// Every artifact, sorted by key.
pub fn list(store: &Store) -> Result<Vec<Artifact>> {
    store.reader()?.artifacts()
}

/// Removes `key`; an unknown key is an error (so a typo is not silently "removed").
pub fn remove(store: &Store, key: &str) -> Result<()> {
    if crate::store::artifact::remove(store, key)? {
        Ok(())
    } else {
        Err(Error::NoArtifact(key.to_string()))
    }
}

/// A reader whose errors name the file they came from.
struct ReadAt<'a>(&'a mut File, &'a Path);

impl Read for ReadAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0
            .read(buf)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.1.display())))
    }
}
