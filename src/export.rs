//! Exporting a snapshot (or some of its paths) as a tar or zip archive, streamed: each file is
//! read from the store as it is written out, so nothing is held whole in memory, nothing is
//! written to the disk and the output need not be seekable (a pipe). Modes (executable or not)
//! and symlinks are kept; every entry's time is the snapshot's (trees record no per-file
//! times).

use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;

use crate::error::{Error, Result};
use crate::files::RelPath;
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

/// An archive format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// POSIX ustar with GNU long names: names and symlink targets kept as bytes.
    Tar,
    /// Zip, deflated, written as a stream (sizes in data descriptors, zip64 for large files):
    /// names and symlink targets must be UTF-8.
    Zip,
}

impl Format {
    /// Its usual name (and file extension).
    pub fn name(self) -> &'static str {
        match self {
            Format::Tar => "tar",
            Format::Zip => "zip",
        }
    }
}

/// Writes snapshot `snapshot` as an archive of `format` to `out`: see [`tar()`] and [`zip()`].
pub fn archive(
    reader: &Reader,
    snapshot: &Id,
    paths: &[RelPath],
    format: Format,
    out: &mut dyn Write,
    progress: &dyn Progress,
) -> Result<ExportReport> {
    match format {
        Format::Tar => tar(reader, snapshot, paths, out, progress),
        Format::Zip => zip(reader, snapshot, paths, out, progress),
    }
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
    let record = reader.snapshot_record(snapshot)?;
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

/// Writes snapshot `snapshot` as a zip archive to `out`, which need not be seekable: the whole
/// tree, or only what lies at or below `paths`. Files are deflated with their Unix modes
/// (0644, or 0755 when executable), symlinks stored as Unix symlinks, directories with 0755.
/// Zip names are UTF-8, so a selection holding a name or a symlink target that is not fails
/// naming them, before anything is written, as do paths that match nothing.
pub fn zip(
    reader: &Reader,
    snapshot: &Id,
    paths: &[RelPath],
    out: &mut dyn Write,
    progress: &dyn Progress,
) -> Result<ExportReport> {
    use ::zip::write::SimpleFileOptions;
    let record = reader.snapshot_record(snapshot)?;
    let entries = select(reader, &record.root, paths)?;
    // Names and targets as text, all checked before the first byte goes out.
    let mut named = Vec::with_capacity(entries.len());
    let mut not_utf8 = Vec::new();
    for (path, e) in &entries {
        let target = match e.kind {
            Kind::Symlink => Some(reader.read_blob(&e.id)?),
            _ => None,
        };
        let name = std::str::from_utf8(path);
        let text = target.as_deref().map(std::str::from_utf8).transpose();
        match (name, text) {
            (Ok(n), Ok(t)) => named.push((n, t.map(str::to_owned), e)),
            _ => not_utf8.push(String::from_utf8_lossy(path).into_owned()),
        }
    }
    if !not_utf8.is_empty() {
        return Err(Error::ZipNames { paths: not_utf8 });
    }
    let (bytes, files) = entries
        .iter()
        .filter(|(_, e)| e.kind != Kind::Dir)
        .fold((0, 0), |(b, n), (_, e)| (b + e.size, n + 1));
    progress.start("export", bytes, files);
    let base = SimpleFileOptions::default().last_modified_time(zip_time(record.time_ns));
    let mut report = ExportReport::default();
    let mut w = ::zip::ZipWriter::new_stream(out);
    for (name, target, e) in named {
        match (e.kind, target) {
            (Kind::Dir, _) => {
                w.add_directory(format!("{name}/"), base.unix_permissions(0o755))
                    .map_err(zip_err)?;
                report.dirs += 1;
            }
            (Kind::Symlink, Some(target)) => {
                w.add_symlink(name, target, base.unix_permissions(0o777))
                    .map_err(zip_err)?;
                report.symlinks += 1;
                progress.advance(e.size, 1);
            }
            _ => {
                let mode = if e.kind == Kind::Executable {
                    0o755
                } else {
                    0o644
                };
                let options = base
                    .unix_permissions(mode)
                    .compression_method(::zip::CompressionMethod::Deflated)
                    // Sizes go in a data descriptor after the data (the output cannot seek
                    // back), whose width is fixed when the entry starts: zip64 from the size
                    // the tree records.
                    .large_file(e.size >= u64::from(u32::MAX));
                w.start_file(name, options).map_err(zip_err)?;
                let mut blob = reader.blob_reader(&e.id)?;
                std::io::copy(&mut blob, &mut w).map_err(io)?;
                report.files += 1;
                report.bytes += e.size;
                progress.advance(e.size, 1);
            }
        }
    }
    w.finish().map_err(zip_err)?.flush().map_err(io)?;
    progress.finish();
    Ok(report)
}

/// The snapshot's time (UTC) as a zip time, clamped to what zip can hold (1980..=2107).
fn zip_time(time_ns: i64) -> ::zip::DateTime {
    use chrono::{Datelike, Timelike};
    let t =
        chrono::DateTime::from_timestamp(time_ns.div_euclid(1_000_000_000), 0).unwrap_or_default();
    let field = |v: u32| u8::try_from(v).unwrap_or(0);
    let (date, time) = match t.year() {
        ..1980 => ((1980, 1, 1), (0, 0, 0)),
        2108.. => ((2107, 12, 31), (23, 59, 58)),
        y => (
            (
                u16::try_from(y).unwrap_or(1980),
                field(t.month()),
                field(t.day()),
            ),
            (field(t.hour()), field(t.minute()), field(t.second())),
        ),
    };
    ::zip::DateTime::from_date_and_time(date.0, date.1, date.2, time.0, time.1, time.2)
        .unwrap_or_default()
}

fn zip_err(e: ::zip::result::ZipError) -> Error {
    match e {
        ::zip::result::ZipError::Io(e) => io(e),
        e => io(std::io::Error::other(e)),
    }
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
