//! `rewind export` and `rewind find`: a snapshot as an archive, and paths across snapshots.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::Args;

use super::output::{self, format_time, human_bytes, paint};
use super::{CliResult, Ctx};
use rewind::Error;
use rewind::export::Format;
use rewind::find::FindQuery;

/// `rewind export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The snapshot to export
    pub rev: String,
    /// Write the archive to FILE instead of standard output
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The archive's format [default: zip for -o FILE.zip, else tar]
    #[arg(long, value_enum)]
    pub format: Option<ArchiveFormat>,
    /// Only these paths (and what lies below them)
    #[arg(last = true, value_name = "PATH")]
    pub paths: Vec<OsString>,
}

/// An archive format, as `--format` names it.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchiveFormat {
    /// POSIX tar (names kept as bytes)
    Tar,
    /// Zip, deflated (names must be UTF-8)
    Zip,
}

/// `rewind find`.
#[derive(Args, Debug)]
pub struct FindArgs {
    /// A glob: without `/`, matched against names at any depth (`*.rs`); with one, against
    /// the whole path (`src/**/*.rs`)
    pub glob: String,
    /// Match directories too
    #[arg(long)]
    pub dirs: bool,
}

/// `rewind export REV [-o FILE] [--format tar|zip] [-- PATH...]`: an archive, streamed.
pub fn export(ctx: &Ctx, a: ExportArgs) -> CliResult {
    let is_zip = |f: &PathBuf| f.extension().is_some_and(|e| e.eq_ignore_ascii_case("zip"));
    let format = match a.format {
        Some(ArchiveFormat::Zip) => Format::Zip,
        Some(ArchiveFormat::Tar) => Format::Tar,
        None if a.output.as_ref().is_some_and(is_zip) => Format::Zip,
        None => Format::Tar,
    };
    if a.output.is_none() && std::io::stdout().is_terminal() {
        return Err(Error::Invalid(format!(
            "refusing to write a {0} archive to the terminal: redirect it (> tree.{0}) or pass -o FILE",
            format.name()
        ))
        .into());
    }
    let store = ctx.open_store(false)?;
    let reader = store.reader()?;
    let id = super::inspect::resolve(ctx, &store, &reader, &a.rev)?;
    let root = ctx.workspace_root(&store).ok();
    let paths = ctx.workspace_paths(root.as_deref(), &a.paths)?;
    let bar = super::progress::Bar::new(ctx);
    let report = match &a.output {
        Some(file) => {
            // Written beside the target and renamed into place: a failed export leaves no
            // half archive under the name asked for.
            let dir = match file.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let mut tmp = tempfile::Builder::new()
                .prefix(".rewind-export-")
                .tempfile_in(&dir)
                .map_err(|e| Error::io(&dir, e))?;
            let mut w = std::io::BufWriter::new(tmp.as_file_mut());
            let r = rewind::export::archive(&reader, &id, &paths, format, &mut w, &bar)?;
            w.flush().map_err(|e| Error::io(file, e))?;
            drop(w);
            tmp.persist(file).map_err(|e| Error::io(file, e.error))?;
            r
        }
        None => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            rewind::export::archive(&reader, &id, &paths, format, &mut out, &bar)?
        }
    };
    if ctx.json && a.output.is_some() {
        output::print_json(&rewind::wire::Exported::new(&id, format, &report))?;
    } else if !ctx.quiet {
        eprintln!(
            "rewind: exported {}: {}, {}, {} ({})",
            id.short(),
            output::count(report.files as usize, "file"),
            output::count(report.symlinks as usize, "symlink"),
            output::count(report.dirs as usize, "dir"),
            human_bytes(report.bytes)
        );
    }
    Ok(0)
}

/// `rewind find GLOB`: each matching path, and the snapshots that held each of its versions.
pub fn find(ctx: &Ctx, a: FindArgs) -> CliResult {
    let store = ctx.open_store(false)?;
    let root = ctx.workspace_root(&store)?;
    let reader = store.reader()?;
    let ws = reader.snapshotted_workspace(&root)?;
    let found = rewind::find::find(
        &reader,
        ws.id(),
        &FindQuery {
            glob: a.glob.clone(),
            dirs: a.dirs,
        },
    )?;
    if ctx.json {
        let v: Vec<rewind::wire::FoundPath> =
            found.iter().map(rewind::wire::FoundPath::from).collect();
        output::print_json(&v)?;
        return Ok(if found.is_empty() { 1 } else { 0 });
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for f in &found {
        writeln!(
            out,
            "{}",
            paint(ctx.color, output::bold(), &output::path_text(&f.path))
        )?;
        for v in &f.versions {
            let span = if v.snapshots == 1 {
                format!(
                    "in {}",
                    paint(ctx.color, output::id_style(), &v.first.0.short())
                )
            } else {
                format!(
                    "in {} snapshots, {} .. {}",
                    v.snapshots,
                    paint(ctx.color, output::id_style(), &v.first.0.short()),
                    paint(ctx.color, output::id_style(), &v.last.0.short()),
                )
            };
            writeln!(
                out,
                "  {}  {:>10}  {}",
                format_time(v.first.1),
                human_bytes(v.size),
                span
            )?;
        }
    }
    out.flush()?;
    if found.is_empty() && !ctx.quiet {
        eprintln!("rewind: no snapshot holds a path matching {}", a.glob);
    }
    Ok(if found.is_empty() { 1 } else { 0 })
}
