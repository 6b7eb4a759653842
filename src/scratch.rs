//! Per-run scratch directories (`run --scratch`): a directory outside the workspace, in the
//! store, that the command finds in `REWIND_SCRATCH` for notes, logs and intermediate files.
//! When the command ends its files are stored as artifacts under `scratch/RUN/PATH` (RUN: the
//! after snapshot's short id), so they stay with the run (until `artifact rm`), and the directory
//! is removed. Artifact keys are text: a file whose name is not UTF-8 is stored under its lossy
//! name.

use std::path::{Path, PathBuf};

use crate::error::{Error, IoContext, Result};
use crate::id::Id;
use crate::store::Store;
use crate::store::artifact::Artifact;

/// What was kept of a scratch directory.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ScratchReport {
    /// Where the command saw it (removed now).
    pub dir: String,
    /// The artifact key prefix holding its files.
    pub prefix: String,
    /// Files kept.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
}

/// The artifact key prefix of `run`'s scratch files.
pub fn prefix(run: &Id) -> String {
    format!("scratch/{}/", run.short())
}

/// Makes a fresh, owner-only scratch directory in the store.
pub fn create(store: &Store) -> Result<PathBuf> {
    let base = store.dir().join("scratch");
    std::fs::create_dir_all(&base).at(&base)?;
    let dir = tempfile::Builder::new()
        .prefix("run-")
        .tempdir_in(&base)
        .at(&base)?
        .keep();
    Ok(dir)
}

/// Stores every file below `dir` as an artifact of `run`, then removes `dir`.
pub fn keep(store: &Store, dir: &Path, run: &Id) -> Result<ScratchReport> {
    let mut files = Vec::new();
    collect(dir, dir, &mut files)?;
    files.sort();
    let prefix = prefix(run);
    let mut report = ScratchReport {
        dir: dir.display().to_string(),
        prefix: prefix.clone(),
        ..ScratchReport::default()
    };
    for (rel, path) in &files {
        let key = format!("{prefix}{rel}");
        let put = crate::artifact::put_file(store, &key, path, Vec::new(), true)?;
        report.files += 1;
        report.bytes += put.artifact.size();
    }
    std::fs::remove_dir_all(dir).at(dir)?;
    Ok(report)
}

/// Regular files below `dir` (symlinks and special files are not kept), as (relative name,
/// path).
fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> Result<()> {
    for entry in std::fs::read_dir(dir).at(dir)? {
        let entry = entry.at(dir)?;
        let path = entry.path();
        let ty = entry.file_type().at(&path)?;
        if ty.is_dir() {
            collect(root, &path, out)?;
        } else if ty.is_file() {
            let rel = path.strip_prefix(root).unwrap_or(&path);
            out.push((rel.to_string_lossy().into_owned(), path));
        }
    }
    Ok(())
}

/// `run`'s scratch files: (path inside the scratch directory, artifact), sorted.
pub fn list(store: &Store, run: &Id) -> Result<Vec<(String, Artifact)>> {
    let prefix = prefix(run);
    Ok(crate::artifact::list(store)?
        .into_iter()
        .filter_map(|a| {
            let path = a.key().strip_prefix(&prefix)?.to_string();
            Some((path, a))
        })
        .collect())
}

/// Streams one scratch file of `run` into `out`.
pub fn cat(store: &Store, run: &Id, path: &str, out: &mut dyn std::io::Write) -> Result<u64> {
    let key = format!("{}{}", prefix(run), path.trim_matches('/'));
    match crate::artifact::get(store, &key, out) {
        Err(Error::NoArtifact(_)) => Err(Error::NoScratchFile {
            run: run.short(),
            path: path.to_string(),
        }),
        other => other,
    }
}
