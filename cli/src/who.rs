//! Who changed what: `blame`.

use std::ffi::OsString;
use std::io::Write;

use clap::Args;

use super::output::{self, format_time, paint};
use super::{CliResult, Ctx};
use rewind::Error;
use rewind::Snapshot;
use rewind::blame::{BlameOptions, author};

/// `blame`.
#[derive(Args, Debug)]
pub struct BlameArgs {
    /// The file (relative to the current directory)
    pub path: OsString,
    /// Blame the file as this snapshot has it [default: the live file]
    pub rev: Option<String>,
    /// Only lines A to B (1-based, inclusive): `-L 10,20`
    #[arg(short = 'L', value_name = "A,B")]
    pub lines: Option<String>,
}

/// `-L a,b`.
fn parse_range(s: &str) -> Result<(usize, usize), Error> {
    let bad = || Error::Invalid(format!("invalid -L '{s}': use A,B with 1 <= A <= B"));
    let (a, b) = s.split_once(',').ok_or_else(bad)?;
    let a: usize = a.trim().parse().map_err(|_| bad())?;
    let b: usize = b.trim().parse().map_err(|_| bad())?;
    if a == 0 || b < a {
        return Err(bad());
    }
    Ok((a, b))
}

/// What wrote a snapshot, in a few words.
pub(crate) fn who(r: &Snapshot) -> String {
    let a = author(r);
    if let Some(s) = a.session {
        let short: String = s.chars().take(8).collect();
        let mut w = format!("{} {short}", a.agent.unwrap_or("session"));
        if let Some(t) = a.turn {
            w.push_str(&format!(" t{t}"));
        }
        if let Some(t) = a.tool {
            w.push_str(&format!(" {t}"));
        }
        return w;
    }
    if let Some(c) = a.command {
        return format!("run: {c}");
    }
    match (a.label, r.message()) {
        (_, m) if !m.is_empty() => m.to_string(),
        (Some(l), _) => l.to_string(),
        (None, _) => String::new(),
    }
}

/// `rewind blame PATH [REV]`.
pub fn blame(ctx: &Ctx, a: BlameArgs) -> CliResult {
    let store = ctx.open_store(false)?;
    let root = ctx.workspace_root(&store)?;
    let reader = store.reader()?;
    let ws = reader.snapshotted_workspace(&root)?;
    let path = ctx
        .workspace_paths(Some(&root), std::slice::from_ref(&a.path))?
        .pop()
        .ok_or_else(|| Error::Invalid("blame needs a PATH".into()))?;
    let rev = match &a.rev {
        Some(r) => Some(super::inspect::resolve(ctx, &store, &reader, r)?),
        None => None,
    };
    let opts = BlameOptions {
        rev,
        lines: a.lines.as_deref().map(parse_range).transpose()?,
    };
    let b = rewind::blame::blame(&store, &reader, ws.id(), &root, &path, &opts)?;
    let records: std::collections::HashMap<_, _> =
        b.snapshots.iter().map(|(id, r)| (*id, r)).collect();

    if ctx.json {
        let mut tags: std::collections::HashMap<_, Vec<String>> = std::collections::HashMap::new();
        for (name, id) in reader.tags()? {
            tags.entry(id).or_default().push(name);
        }
        output::print_json(&rewind::wire::Blame::new(&b, &tags))?;
        return Ok(0);
    }

    // Columns: id, time, who (cut to a width), line number, text.
    const WHO_WIDTH: usize = 32;
    let width = b.lines.last().map_or(1, |l| l.line.to_string().len());
    let mut out = std::io::stdout().lock();
    for l in &b.lines {
        let (id, time, w) = match &l.origin {
            Some(o) => {
                let r = records[&o.snapshot];
                (o.snapshot.short(), format_time(r.time_ns()), who(r))
            }
            None => (
                "0".repeat(12),
                String::from("(live)"),
                String::from("not snapshotted"),
            ),
        };
        let mut w: String = w
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(WHO_WIDTH)
            .collect();
        let pad = WHO_WIDTH.saturating_sub(w.chars().count());
        w.extend(std::iter::repeat_n(' ', pad));
        let id = paint(ctx.color, output::id_style(), &id);
        write!(out, "{id} {time:<20} {w} {:>width$}) ", l.line)?;
        out.write_all(&l.text)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(0)
}

/// `rewind revert --meta KEY=VALUE...`: takes back every change the selector names.
pub fn revert_meta(ctx: &Ctx, meta: &[String], dry_run: bool) -> CliResult {
    let selector = output::parse_meta(meta)?;
    let store = ctx.open_store(false)?;
    let root = ctx.workspace_root(&store)?;
    let ws = store.reader()?.snapshotted_workspace(&root)?;
    let r = rewind::session::revert_selected(&store, &root, ws.id(), &selector, dry_run)?;
    if ctx.json {
        output::print_json(&rewind::wire::SelectionReverted::new(&r, dry_run))?;
    } else if !ctx.quiet {
        println!(
            "{} to take back, newest first:",
            output::count(r.changes.len(), "change")
        );
        for c in &r.changes {
            println!(
                "  {}..{} {} {}",
                c.before.short(),
                c.after.short(),
                format_time(c.record.time_ns()),
                who(&c.record)
            );
        }
        for f in r.files.iter().filter(|f| f.action != "unchanged") {
            println!("{:<8} {}", f.action, output::path_text(&f.path));
        }
        for c in &r.conflicts {
            let at = match c.lines {
                Some((first, n)) => format!(" lines {first}-{}", first + n.max(1) - 1),
                None => String::new(),
            };
            println!(
                "conflict {}{at} (change {}): {}",
                output::path_text(&c.path),
                c.after.short(),
                c.why
            );
        }
        match r.op {
            Some(op) => println!("taken back (operation {op}; `rewind undo` restores it)"),
            None if dry_run => println!("dry run: nothing was changed"),
            None if !r.conflicts.is_empty() => println!(
                "{}: nothing else to take back; nothing was changed",
                output::count(r.conflicts.len(), "conflict")
            ),
            None => println!("nothing to take back: the live tree has none of it"),
        }
    }
    Ok(if r.conflicts.is_empty() { 0 } else { 1 })
}

/// `rewind log --by-session`.
pub fn sessions(ctx: &Ctx) -> CliResult {
    let store = ctx.open_store(false)?;
    let root = ctx.workspace_root(&store)?;
    let ws = store.reader()?.snapshotted_workspace(&root)?;
    let list = rewind::session::sessions(&store, &root, ws.id())?;
    if ctx.json {
        let v: Vec<rewind::wire::Session> = list.iter().map(rewind::wire::Session::from).collect();
        output::print_json(&v)?;
        return Ok(0);
    }
    let mut out = std::io::stdout().lock();
    for s in &list {
        let agent = s
            .agent
            .as_deref()
            .map(|a| format!(" ({a})"))
            .unwrap_or_default();
        writeln!(
            out,
            "{}{agent}  {} .. {}  {}..{}",
            paint(ctx.color, output::bold(), &s.session),
            format_time(s.first.1),
            format_time(s.last.1),
            s.first.0.short(),
            s.last.0.short()
        )?;
        writeln!(
            out,
            "  {}, {}, +{} -{}, still present: {}",
            output::count(s.changes, "change"),
            output::count(s.files.len(), "file"),
            s.added,
            s.removed,
            s.presence.name()
        )?;
        if !s.files.is_empty() {
            writeln!(
                out,
                "  {}",
                output::paths_text(s.files.iter().map(Vec::as_slice))
            )?;
        }
    }
    out.flush()?;
    Ok(0)
}

/// One group of `diff --by-run` or `overlay diff --by-run`: its title, then each file's hunks
/// with their ids (or "whole file").
pub(crate) fn print_run_group(ctx: &Ctx, title: &str, files: &[rewind::wire::OverlayRunFile]) {
    println!("{}", paint(ctx.color, output::bold(), title));
    for f in files {
        match &f.hunks {
            None => println!("  {} (whole file)", f.path),
            Some(hs) => {
                for h in hs {
                    println!(
                        "  {} @@ -{},{} +{},{} @@ {}",
                        f.path, h.old_start, h.old_lines, h.new_start, h.new_lines, h.id
                    );
                    for l in &h.lines {
                        print!("    {l}");
                        if !l.ends_with('\n') {
                            println!();
                        }
                    }
                }
            }
        }
    }
}
