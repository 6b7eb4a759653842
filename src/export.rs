//! Exporting a snapshot (or some of its paths) as a tar archive, streamed: each file is read
//! from the store as it is written out, so nothing is held whole in memory and nothing is
//! written to the disk. Modes (executable or not) and symlinks are kept; every entry's time is
//! the snapshot's (trees record no per-file times).

use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;

use crate::error::{Error, Result};
use crate::fs::RelPath;
use crate::id::Id;
use crate::progress::Progress;
use crate::store::Reader;
use crate::store::tree::{Kind, TreeEntry};

/// What an export wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportReport {
    /// Regular files (executable or not).
    pub files: u64,
    /// Symlinks.
    pub symlinks: u64,
    /// Directories.
    pub dirs: u64,
    /// Bytes of file content.
    pub bytes: u64,
}

/// Writes snapshot `snapshot` as a tar archive (POSIX ustar with GNU long names) to `out`:
/// the whole tree, or only what lies at or below `paths`. Fails naming the paths that match
/// nothing in the snapshot, before anything is written.
pub fn tar(
    reader: &Reader,
    snapshot: &Id,
    paths: &[RelPath],
    out: &mut dyn Write,
    progress: &dyn Progress,
) -> Result<ExportReport> {
    let record = reader.snapshot(snapshot)?;
    let mtime = u64::try_from(record.time_ns / 1_000_000_000).unwrap_or(0);
    let entries = select(reader, &record.root, paths)?;
    let (bytes, files) = entries
        .iter()
        .filter(|(_, e)| e.kind != Kind::Dir)
        .fold((0, 0), |(b, n), (_, e)| (b + e.size, n + 1));
    progress.start("export", bytes, files);
    let mut report = ExportReport::default();
    let mut builder = ::tar::Builder::new(out);
    builder.mode(::tar::HeaderMode::Deterministic);
    for (path, e) in &entries {
        let name = std::path::Path::new(OsStr::from_bytes(path));
        let mut h = ::tar::Header::new_gnu();
        h.set_mtime(mtime);
        h.set_uid(0);
        h.set_gid(0);
        match e.kind {
            Kind::Dir => {
                h.set_entry_type(::tar::EntryType::Directory);
                h.set_mode(0o755);
                h.set_size(0);
                builder
                    .append_data(&mut h, name, std::io::empty())
                    .map_err(io)?;
                report.dirs += 1;
            }
            Kind::Symlink => {
                let target = reader.read_blob(&e.id)?;
                h.set_entry_type(::tar::EntryType::Symlink);
                h.set_mode(0o777);
                h.set_size(0);
                builder
                    .append_link(
                        &mut h,
                        name,
                        std::path::Path::new(OsStr::from_bytes(&target)),
                    )
                    .map_err(io)?;
                report.symlinks += 1;
                progress.advance(e.size, 1);
            }
            Kind::File | Kind::Executable => {
                h.set_entry_type(::tar::EntryType::Regular);
                h.set_mode(if e.kind == Kind::Executable {
                    0o755
                } else {
                    0o644
                });
                h.set_size(e.size);
                let blob = reader.blob_reader(&e.id)?;
                builder.append_data(&mut h, name, blob).map_err(io)?;
                report.files += 1;
                report.bytes += e.size;
                progress.advance(e.size, 1);
            }
        }
    }
    builder.into_inner().map_err(io)?.flush().map_err(io)?;
    progress.finish();
    Ok(report)
}

/// The entries to export, in path order (parents before their children): everything, or what
/// lies at or below `paths` with the directories leading to them.
fn select(reader: &Reader, root: &Id, paths: &[RelPath]) -> Result<Vec<(Vec<u8>, TreeEntry)>> {
    let mut out = Vec::new();
    if paths.is_empty() {
        reader.walk_tree(root, b"", true, &mut |p, e| {
            out.push((p.to_vec(), e.clone()));
            Ok(())
        })?;
        return Ok(out);
    }
    let mut missing = Vec::new();
    let mut seen = rustc_hash::FxHashSet::default();
    for p in paths {
        let Some(entry) = reader.lookup(root, p.as_bytes())? else {
            missing.push(String::from_utf8_lossy(p.as_bytes()).into_owned());
            continue;
        };
        // The directories above it, so that the archive unpacks with their modes.
        let bytes = p.as_bytes();
        for (i, _) in bytes.iter().enumerate().filter(|(_, b)| **b == b'/') {
            let dir = &bytes[..i];
            if seen.insert(dir.to_vec())
                && let Some(d) = reader.lookup(root, dir)?
            {
                out.push((dir.to_vec(), d));
            }
        }
        if seen.insert(bytes.to_vec()) {
            out.push((bytes.to_vec(), entry.clone()));
        }
        if entry.kind == Kind::Dir {
            reader.walk_tree(&entry.id, bytes, true, &mut |p, e| {
                if seen.insert(p.to_vec()) {
                    out.push((p.to_vec(), e.clone()));
                }
                Ok(())
            })?;
        }
    }
    if !missing.is_empty() {
        return Err(Error::UnmatchedPaths { paths: missing });
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

fn io(e: std::io::Error) -> Error {
    Error::io("the archive", e)
}
