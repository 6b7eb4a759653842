//! Reading commands: `log`, `show`, `ls`, `cat`.

use std::collections::HashMap;
use std::io::Write;

use super::args::{CatArgs, LogArgs, LsArgs, ShowArgs};
use super::output::{self, format_time, human_bytes, paint, path_str};
use super::{CliResult, Ctx};
use rewind::store::tree::Kind;
use rewind::store::{Reader, Store};
use rewind::{Error, Id, revision};

/// Resolves a revision, finding the workspace only when the revision needs one.
pub fn resolve(ctx: &Ctx, store: &Store, reader: &Reader, rev: &str) -> Result<Id, Error> {
    let root = if rev.starts_with('@') {
        Some(ctx.workspace_root(store)?)
    } else {
        None
    };
    revision::resolve(reader, rev, root.as_deref())
}

fn tags_by_id(reader: &Reader) -> Result<HashMap<Id, Vec<String>>, Error> {
    let mut m: HashMap<Id, Vec<String>> = HashMap::new();
    for (name, id) in reader.tags()? {
        m.entry(id).or_default().push(name);
    }
    Ok(m)
}

/// A `--since`/`--until` time: RFC 3339 (to the second; `until` covers that whole second), or
/// a duration before now.
pub fn parse_time(flag: &str, s: &str, end_of_second: bool) -> Result<i64, Error> {
    let bad = || {
        Error::Invalid(format!(
            "invalid {flag} '{s}': use an RFC 3339 time (2026-11-24T06:00:00Z) or a duration ago (2h, 3d)"
        ))
    };
    let t = match humantime::parse_rfc3339_weak(s) {
        Ok(t) => t,
        Err(_) => {
            let d = humantime::parse_duration(s).map_err(|_| bad())?;
            std::time::SystemTime::now()
                .checked_sub(d)
                .ok_or_else(bad)?
        }
    };
    let ns = t
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    Ok(if end_of_second && ns % 1_000_000_000 == 0 {
        ns.saturating_add(999_999_999)
    } else {
        ns
    })
}

/// `rewind log`.
pub fn log(ctx: &Ctx, a: LogArgs) -> CliResult {
    let store = ctx.open_store(false)?;
    let root = ctx.workspace_root(&store)?;
    let reader = store.reader()?;
    let ws = reader.snapshotted_workspace(&root)?;
    if a.paths.len() > 1 {
        return Err(Error::Invalid("log takes one PATH after --".into()).into());
    }
    let query = rewind::history::LogQuery {
        limit: if a.max_count == 0 {
            usize::MAX
        } else {
            a.max_count
        },
        path: ctx.workspace_paths(Some(&root), &a.paths)?.pop(),
        meta: {
            let mut m = output::parse_meta(&a.meta)?;
            if let Some(s) = &a.session {
                m.push((rewind::history::SESSION_KEY.to_string(), s.clone()));
            }
            m
        },
        label: a.label.clone(),
        since_ns: a
            .since
            .as_deref()
            .map(|s| parse_time("--since", s, false))
            .transpose()?,
        until_ns: a
            .until
            .as_deref()
            .map(|s| parse_time("--until", s, true))
            .transpose()?,
    };
    let page = rewind::history::log_page(&store, &reader, ws.id(), &query, a.all)?;
    let entries = &page.entries;
    let tags = tags_by_id(&reader)?;
    let none = Vec::new();
    if ctx.json {
        let v: Vec<rewind::wire::LogEntry> = entries
            .iter()
            .map(|e| rewind::wire::LogEntry::new(e, tags.get(&e.id).unwrap_or(&none)))
            .collect();
        output::print_json(&v)?;
        return Ok(0);
    }
    let mut out = std::io::stdout().lock();
    // The marker's column is kept on every row when one has it, so times stay aligned.
    let marker_width = if entries.iter().any(|e| e.restored) {
        " restored".len()
    } else {
        0
    };
    for e in entries {
        let (id, r) = (&e.id, &e.record);
        let t = tags
            .get(id)
            .map(|t| format!(" ({})", t.join(", ")))
            .unwrap_or_default();
        let label = r
            .meta("label")
            .map(|l| format!(" [{l}]"))
            .unwrap_or_default();
        let restored = if e.restored {
            paint(
                ctx.color,
                anstyle::Style::new().fg_color(Some(anstyle::AnsiColor::Cyan.into())),
                " restored",
            )
        } else {
            " ".repeat(marker_width)
        };
        let change = match &e.change {
            Some(c) => match &c.old_path {
                Some(old) => format!(
                    "{:<8} {} -> {}  ",
                    c.status.name(),
                    output::path_text(old),
                    output::path_text(&c.path)
                ),
                None => format!("{:<8} {}  ", c.status.name(), output::path_text(&c.path)),
            },
            None => String::new(),
        };
        writeln!(
            out,
            "{}{}  {}  {}{:>7} {:<5} {:>10}{}{}  {}",
            paint(ctx.color, output::id_style(), &id.short()),
            restored,
            format_time(r.time_ns()),
            change,
            r.stats().files,
            if r.stats().files == 1 {
                "file"
            } else {
                "files"
            },
            human_bytes(r.stats().bytes),
            paint(ctx.color, output::bold(), &t),
            label,
            r.message()
        )?;
    }
    drop(out);
    if !ctx.quiet {
        log_footer(&page);
    }
    Ok(0)
}

/// What the list left out, on stderr: rows past `-n`, and bookkeeping snapshots.
fn log_footer(page: &rewind::history::LogPage) {
    let mut parts = Vec::new();
    if page.more > 0 {
        if page.more_exact {
            parts.push(format!("{} more; -n 0 for all", page.more));
        } else {
            parts.push("more; -n 0 for all".to_string());
        }
    }
    if page.hidden > 0 {
        parts.push(format!(
            "{} taken around actions hidden; --all to show",
            output::count(page.hidden, "snapshot")
        ));
    }
    if !parts.is_empty() {
        eprintln!("({})", parts.join("; "));
    }
}

/// `rewind show`.
pub fn show(ctx: &Ctx, a: ShowArgs) -> CliResult {
    let store = ctx.open_store(false)?;
    let reader = store.reader()?;
    let id = resolve(ctx, &store, &reader, &a.rev)?;
    let r = reader.snapshot(&id)?;
    let tags = tags_by_id(&reader)?.remove(&id).unwrap_or_default();
    if ctx.json {
        drop(reader);
        output::print_json(&rewind::wire::SnapshotShown::new(&store, &r, &tags)?)?;
        return Ok(0);
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "snapshot  {}",
        paint(ctx.color, output::id_style(), &id.hex())
    )?;
    writeln!(out, "workspace {}", path_str(r.workspace()))?;
    writeln!(out, "time      {}", format_time(r.time_ns()))?;
    if let Some(p) = r.parent() {
        writeln!(out, "parent    {}", p.short())?;
    }
    if !tags.is_empty() {
        writeln!(out, "tags      {}", tags.join(", "))?;
    }
    writeln!(
        out,
        "contents  {}, {}, {}, {}",
        output::count(r.stats().files as usize, "file"),
        output::count(r.stats().dirs as usize, "dir"),
        output::count(r.stats().symlinks as usize, "symlink"),
        human_bytes(r.stats().bytes)
    )?;
    for (k, v) in r.meta_pairs() {
        writeln!(out, "meta      {k}={v}")?;
    }
    if !r.scan().ignore_globs.is_empty() {
        writeln!(out, "ignored   {}", r.scan().ignore_globs.join(" "))?;
    }
    for s in r.skipped() {
        writeln!(out, "skipped   {}", output::skipped_text(s))?;
    }
    if !r.message().is_empty() {
        writeln!(out, "\n    {}", r.message())?;
    }
    Ok(0)
}

/// `rewind ls`.
pub fn ls(ctx: &Ctx, a: LsArgs) -> CliResult {
    let store = ctx.open_store(false)?;
    let reader = store.reader()?;
    let id = resolve(ctx, &store, &reader, &a.rev)?;
    let snap = reader.snapshot(&id)?;
    let path_bytes = trim_slashes(a.path.as_deref().map(output::arg_bytes).unwrap_or_default());
    let entry =
        reader
            .lookup(&snap.root(), path_bytes)?
            .ok_or_else(|| Error::PathNotInSnapshot {
                path: output::path_text(path_bytes),
                snapshot: id.short(),
            })?;
    let mut rows = Vec::new();
    if entry.kind == Kind::Dir {
        reader.walk_tree(&entry.id, path_bytes, a.recursive, &mut |p, e| {
            rows.push((p.to_vec(), e.clone()));
            Ok(())
        })?;
    } else {
        rows.push((path_bytes.to_vec(), entry));
    }
    if ctx.json {
        let mut v = Vec::with_capacity(rows.len());
        for (p, e) in &rows {
            let mut entry = rewind::wire::TreeEntry::new(p, e.kind, e.size, &e.id);
            if e.kind == Kind::Symlink {
                entry.target = Some(path_str(&reader.read_blob(&e.id)?));
            }
            v.push(entry);
        }
        output::print_json(&v)?;
        return Ok(0);
    }
    let mut out = std::io::stdout().lock();
    for (p, e) in rows {
        let mut name = output::path_text(&p);
        if e.kind == Kind::Dir {
            name.push('/');
        }
        if e.kind == Kind::Symlink {
            name = format!("{name} -> {}", output::path_text(&reader.read_blob(&e.id)?));
        }
        let id_hex = e.id.hex();
        writeln!(
            out,
            "{:<10} {:>12}  {}  {}",
            e.kind.name(),
            e.size,
            &id_hex[..12],
            name
        )?;
    }
    Ok(0)
}

/// `p` without leading and trailing slashes.
fn trim_slashes(mut p: &[u8]) -> &[u8] {
    while let [b'/', rest @ ..] = p {
        p = rest;
    }
    while let [rest @ .., b'/'] = p {
        p = rest;
    }
    p
}

/// `rewind cat`.
pub fn cat(ctx: &Ctx, a: CatArgs) -> CliResult {
    let store = ctx.open_store(false)?;
    let reader = store.reader()?;
    let id = resolve(ctx, &store, &reader, &a.rev)?;
    let snap = reader.snapshot(&id)?;
    let path = trim_slashes(output::arg_bytes(&a.path));
    let entry = reader
        .lookup(&snap.root(), path)?
        .ok_or_else(|| Error::PathNotInSnapshot {
            path: output::path_text(path),
            snapshot: id.short(),
        })?;
    if entry.kind == Kind::Dir {
        return Err(Error::Invalid(format!(
            "{} is a directory in {}: use `rewind ls`",
            output::path_text(path),
            id.short()
        ))
        .into());
    }
    if ctx.json {
        let bytes = reader.read_blob(&entry.id)?;
        output::print_json(&rewind::wire::FileContent::new(
            &id, path, entry.kind, entry.size, &entry.id, bytes,
        ))?;
        return Ok(0);
    }
    let mut out = std::io::stdout().lock();
    reader.write_blob(&entry.id, &mut out)?;
    out.flush()?;
    Ok(0)
}

/// `rewind stats`.
pub fn stats(ctx: &Ctx) -> CliResult {
    let store = ctx.open_store(false)?;
    let st = rewind::stats::stats(&store)?;
    let retention = rewind::config::Config::load(store.dir())?.retention;
    let budget = match retention.max_store_bytes {
        0 => None,
        max => Some(rewind::budget::status(&store, max, retention.undo_depth)?),
    };
    if ctx.json {
        output::print_json(&rewind::wire::Stats::new(&st, budget.as_ref()))?;
        return Ok(0);
    }
    let mut out = std::io::stdout().lock();
    let b = |s: &str| paint(ctx.color, output::bold(), s);
    // The file's length is what `ls -l` shows and what a copy that drops holes writes.
    let holes = if st.sparse_ratio() > 1.01 {
        format!(", {:.2}x: holes", st.sparse_ratio())
    } else {
        String::new()
    };
    writeln!(
        out,
        "{} {}: {} on disk (file {} long{holes})",
        b("store"),
        st.dir.display(),
        human_bytes(st.disk_bytes),
        human_bytes(st.file_bytes)
    )?;
    let features = if st.format.features.is_empty() {
        "no format features".to_string()
    } else {
        format!("format features {}", st.format.features.join(", "))
    };
    writeln!(out, "schema version {}, {features}", st.format.schema)?;
    writeln!(
        out,
        "{} snapshots, {} trees, {} blobs, {} chunks",
        st.snapshots, st.trees, st.content.blobs, st.content.chunks
    )?;
    writeln!(
        out,
        "snapshots and artifacts hold {} in all; {} distinct (dedup {:.1}x), stored as {} (compression {:.2}x)",
        human_bytes(st.logical_bytes),
        human_bytes(st.content.content_bytes),
        st.dedup_ratio(),
        human_bytes(st.content.encoded_bytes),
        st.compression_ratio()
    )?;
    if st.content.groups > 0 {
        writeln!(
            out,
            "{} compressed together in {}",
            output::count(st.content.grouped_blobs as usize, "small blob"),
            output::count(st.content.groups as usize, "group")
        )?;
    }
    for d in &st.content.dictionaries {
        writeln!(
            out,
            "zstd dictionary {} ({}): {} blobs, {} stored as {} ({:.2}x)",
            d.id,
            human_bytes(d.dict_bytes),
            d.blobs,
            human_bytes(d.content_bytes),
            human_bytes(d.encoded_bytes),
            d.content_bytes as f64 / d.encoded_bytes.max(1) as f64
        )?;
    }
    if let Some(bs) = &budget {
        let over = match bs.used_bytes.checked_sub(bs.max_bytes) {
            Some(n) if n > 0 => format!(" (over by {})", human_bytes(n)),
            _ => String::new(),
        };
        writeln!(
            out,
            "{} {}: {} in use{over}; {} evictable, {} protected",
            b("budget"),
            human_bytes(bs.max_bytes),
            human_bytes(bs.used_bytes),
            output::count(bs.evictable, "snapshot"),
            bs.protected.len()
        )?;
        for j in &bs.protected {
            writeln!(
                out,
                "  protected {} {} ({})",
                paint(ctx.color, output::id_style(), &j.id.short()),
                format_time(j.time_ns),
                j.reason.as_deref().unwrap_or("protected")
            )?;
        }
        match &bs.next_eviction {
            Some(j) => writeln!(
                out,
                "  next to go: {} {}{}",
                paint(ctx.color, output::id_style(), &j.id.short()),
                format_time(j.time_ns),
                output::message_suffix(" ", &j.message)
            )?,
            None => writeln!(out, "  nothing can be evicted")?,
        }
    }
    if !st.workspaces.is_empty() {
        writeln!(out, "\n{}", b("workspaces"))?;
        for w in &st.workspaces {
            writeln!(
                out,
                "  {}  {}, latest {} {} ({}), {} in all",
                path_str(&w.path),
                output::count(w.snapshots as usize, "snapshot"),
                output::count(w.latest_files as usize, "file"),
                human_bytes(w.latest_bytes),
                w.latest_ns
                    .map(format_time)
                    .unwrap_or_else(|| "never".into()),
                human_bytes(w.logical_bytes)
            )?;
        }
    }
    writeln!(
        out,
        "\n{:<11} {:>9} {:>11} {:>11} {:>11} {:>11}",
        b("table"),
        "entries",
        "stored",
        "metadata",
        "fragmented",
        "total"
    )?;
    for t in &st.tables {
        writeln!(
            out,
            "{:<11} {:>9} {:>11} {:>11} {:>11} {:>11}",
            t.name,
            t.entries,
            human_bytes(t.stored_bytes),
            human_bytes(t.metadata_bytes),
            human_bytes(t.fragmented_bytes),
            human_bytes(t.stored_bytes + t.metadata_bytes + t.fragmented_bytes)
        )?;
    }
    Ok(0)
}

/// `rewind verify`: exit 1 when anything is wrong.
pub fn verify(ctx: &Ctx, full: bool) -> CliResult {
    let store = ctx.open_store(false)?;
    let bar = super::progress::Bar::new(ctx);
    let r = rewind::verify::verify(&store, full, &bar)?;
    if ctx.json {
        output::print_json(&rewind::wire::Verify::new(&r, full))?;
    } else {
        let mut out = std::io::stdout().lock();
        for p in &r.problems {
            writeln!(
                out,
                "{} {}: {} (referred to by {})",
                p.kind, p.id, p.what, p.referrer
            )?;
        }
        for t in &r.damaged_tables {
            writeln!(
                out,
                "table {t}: listing stopped at a damaged page; what it holds past it is lost"
            )?;
        }
        if !r.damaged_snapshots.is_empty() {
            let ids: Vec<String> = r.damaged_snapshots.iter().map(|id| id.short()).collect();
            writeln!(
                out,
                "{} of {} snapshots reach damage (restore them from a remote or a backup): {}; \
                 the others restore whole",
                ids.len(),
                r.snapshots,
                ids.join(" ")
            )?;
        }
        if !ctx.quiet {
            writeln!(
                out,
                "checked {} snapshots, {} trees, {} blobs, {} chunks{}: {}",
                r.snapshots,
                r.trees,
                r.blobs,
                r.chunks,
                if full {
                    format!(", {} hashed", human_bytes(r.bytes_hashed))
                } else {
                    String::new()
                },
                if r.problems.is_empty() {
                    "no problems".to_string()
                } else {
                    format!("{} problem(s)", r.problems.len())
                }
            )?;
        }
    }
    Ok(if r.problems.is_empty() { 0 } else { 1 })
}
