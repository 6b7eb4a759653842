//! Capturing a run's patch: inline up to a cap, spilled to a temporary file and stored as an
//! artifact beyond it, so a huge patch is never held whole.

use std::io::{self, Read, Seek, Write};

use crate::compare::Diff;
use crate::diff::PatchOptions;
use crate::diff::text::DiffOptions;
use crate::error::{Error, Result};
use crate::id::Id;
use crate::store::Store;

/// The artifact key a run's patch is stored under.
pub fn patch_key(before: Id, after: Id) -> String {
    format!("patch/{}-{}", before.short(), after.short())
}

/// Writes the patch into memory up to `cap` bytes and spills to a temporary file beyond, so a
/// huge patch is never held whole. Returns (inline patch, artifact key, length).
pub(super) fn capture_patch(
    store: &Store,
    d: &Diff,
    dopts: &DiffOptions,
    cap: u64,
    before: Id,
    after: Id,
) -> Result<(Option<String>, Option<String>, Option<u64>)> {
    let mut spill = Spill {
        mem: Vec::new(),
        file: None,
        cap,
        len: 0,
    };
    d.write_patch(
        &mut spill,
        &PatchOptions {
            diff: *dopts,
            color: false,
            // A captured patch must apply anywhere, binary changes included.
            binary: true,
        },
    )?;
    let len = spill.len;
    match spill.file {
        None => Ok((
            Some(String::from_utf8_lossy(&spill.mem).into_owned()),
            None,
            Some(len),
        )),
        Some(mut f) => {
            f.flush().map_err(|e| Error::io("<patch spill file>", e))?;
            f.rewind().map_err(|e| Error::io("<patch spill file>", e))?;
            let key = patch_key(before, after);
            let mut r = io::BufReader::with_capacity(1 << 16, f);
            crate::artifact::put(
                store,
                &key,
                &mut r as &mut dyn Read,
                vec![
                    ("kind".into(), "patch".into()),
                    ("before".into(), before.hex()),
                    ("after".into(), after.hex()),
                ],
                true,
            )?;
            Ok((None, Some(key), Some(len)))
        }
    }
}

/// Memory up to a cap, then a temporary file (unlinked at once, gone when dropped).
struct Spill {
    mem: Vec<u8>,
    file: Option<std::fs::File>,
    cap: u64,
    len: u64,
}

impl Write for Spill {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.len += buf.len() as u64;
        if let Some(f) = &mut self.file {
            f.write_all(buf)?;
        } else if self.len > self.cap {
            let mut f = tempfile::tempfile()?;
            f.write_all(&self.mem)?;
            f.write_all(buf)?;
            self.mem = Vec::new();
            self.file = Some(f);
        } else {
            self.mem.extend_from_slice(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}
