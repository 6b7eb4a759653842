//! `status` and `diff`.

use std::io::{BufWriter, Write};

use anstyle::{AnsiColor, Style};

use super::args::{DiffArgs, StatusArgs};
use super::output::{self, paint, path_text};
use super::{CliResult, Ctx};
use rewind::compare::{Diff, DiffRequest, Rev, diff as compute};
use rewind::diff::render::FileStat;
use rewind::diff::similar::DEFAULT_RENAME_SCORE;
use rewind::diff::stat::{self, BinarySizes, StatEntry, Status};
use rewind::diff::text::DiffOptions;
use rewind::diff::{ChangeStatus, FileChange};
use rewind::store::Store;
use rewind::wire::{Changes, rev_text};
use rewind::{Error, revision};

fn parse_rev(ctx: &Ctx, store: &Store, rev: &str) -> Result<Rev, Error> {
    if rev == "live" {
        return Ok(Rev::Live);
    }
    let reader = store.reader()?;
    super::inspect::resolve(ctx, store, &reader, rev).map(Rev::Snapshot)
}

/// `-M<n>` / `--find-renames=<n>`: git's similarity threshold, `50%` (percent) or `5`
/// (a fraction: digits after a decimal point, so `5` is 50% and `05` 5%).
pub fn rename_score(s: &str) -> Result<u8, String> {
    let bad = || format!("'{s}': a similarity like 50% (or git's fraction digits, 5 for 50%)");
    let n: u64 = match s.strip_suffix('%') {
        Some(p) => p.parse().map_err(|_| bad())?,
        None if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            // git reads "-M5" as 0.5 and "-M55" as 0.55.
            let digits = &s[..s.len().min(2)];
            let v: u64 = digits.parse().map_err(|_| bad())?;
            if digits.len() == 1 { v * 10 } else { v }
        }
        None => return Err(bad()),
    };
    if n > 100 {
        return Err(bad());
    }
    Ok(n as u8)
}

fn stat_status(d: &Diff, c: &FileChange) -> rewind::Result<Status> {
    Ok(match c.status {
        ChangeStatus::Added => Status::Added,
        ChangeStatus::Deleted => Status::Deleted,
        ChangeStatus::Modified | ChangeStatus::ModeChanged => Status::Modified,
        ChangeStatus::TypeChanged => Status::TypeChanged,
        ChangeStatus::Renamed => Status::Renamed {
            similarity: d.similarity(c)?,
        },
    })
}

fn stat_entries<'a>(d: &'a Diff, stats: &[FileStat]) -> rewind::Result<Vec<StatEntry<'a>>> {
    d.changes
        .iter()
        .zip(stats)
        .map(|(c, s)| {
            Ok(StatEntry {
                path: &c.path,
                old_path: c.old_path.as_deref(),
                status: stat_status(d, c)?,
                insertions: s.insertions,
                deletions: s.deletions,
                binary: s.binary.then_some(BinarySizes {
                    old: s.old_size,
                    new: s.new_size,
                }),
            })
        })
        .collect()
}

/// `rewind status`.
pub fn status(ctx: &Ctx, a: StatusArgs) -> CliResult {
    let store = ctx.open_store(false)?;
    let root = ctx.workspace_root(&store)?;
    let head = revision::resolve(&store.reader()?, "@", Some(&root))?;
    let req = DiffRequest {
        renames: !a.no_renames,
        rename_score: DEFAULT_RENAME_SCORE,
        paths: ctx.workspace_paths(Some(&root), &a.paths)?,
    };
    let d = compute(&store, Rev::Snapshot(head), Rev::Live, Some(&root), &req)?;
    let skipped = d.live_skipped(&req.paths);
    if ctx.json {
        output::print_json(&rewind::wire::Status::new(&root, &head, &d, &req.paths))?;
        return Ok(0);
    }
    // The human listing leaves out special files the snapshot already passed over.
    let head_skipped = if skipped.is_empty() {
        Vec::new()
    } else {
        store.reader()?.snapshot(&head)?.skipped().to_vec()
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    let print_skipped = |out: &mut BufWriter<std::io::StdoutLock>| -> std::io::Result<()> {
        if skipped.is_empty() {
            return Ok(());
        }
        let news: Vec<_> = skipped
            .iter()
            .filter(|s| s.worth_warning(&head_skipped))
            .collect();
        if news.is_empty() {
            return Ok(());
        }
        writeln!(out, "\nnot looked at (a snapshot would skip them too):")?;
        for s in news {
            writeln!(out, "skipped  {}", output::skipped_text(s))?;
        }
        Ok(())
    };
    if d.changes.is_empty() {
        if !ctx.quiet {
            writeln!(out, "no changes since {}", head.short())?;
        }
        print_skipped(&mut out)?;
        out.flush()?;
        return Ok(0);
    }
    for c in &d.changes {
        let (letter, color) = match c.status {
            ChangeStatus::Added => ("added", AnsiColor::Green),
            ChangeStatus::Deleted => ("deleted", AnsiColor::Red),
            ChangeStatus::Modified => ("modified", AnsiColor::Yellow),
            ChangeStatus::ModeChanged => ("mode", AnsiColor::Yellow),
            ChangeStatus::TypeChanged => ("type", AnsiColor::Magenta),
            ChangeStatus::Renamed => ("renamed", AnsiColor::Cyan),
        };
        let label = paint(
            ctx.color,
            Style::new().fg_color(Some(color.into())),
            &format!("{letter:<9}"),
        );
        match &c.old_path {
            Some(old) => writeln!(out, "{label}{} -> {}", path_text(old), path_text(&c.path))?,
            None => writeln!(out, "{label}{}", path_text(&c.path))?,
        }
    }
    print_skipped(&mut out)?;
    out.flush()?;
    Ok(0)
}

/// `rewind diff`.
pub fn diff(ctx: &Ctx, a: DiffArgs) -> CliResult {
    let store = ctx.open_store(false)?;
    let old = parse_rev(
        ctx,
        &store,
        a.revs.first().map(String::as_str).unwrap_or("@"),
    )?;
    let new = parse_rev(
        ctx,
        &store,
        a.revs.get(1).map(String::as_str).unwrap_or("live"),
    )?;
    let root = if old == Rev::Live || new == Rev::Live {
        Some(ctx.workspace_root(&store)?)
    } else {
        None
    };
    // Paths name places in the workspace the command runs in, when there is one.
    let path_root = root.clone().or_else(|| ctx.workspace_root(&store).ok());
    let req = DiffRequest {
        renames: !a.no_renames,
        rename_score: a.find_renames.unwrap_or(DEFAULT_RENAME_SCORE),
        paths: ctx.workspace_paths(path_root.as_deref(), &a.paths)?,
    };
    if a.by_run {
        return by_run(ctx, &store, old, new);
    }
    let d = compute(&store, old, new, root.as_deref(), &req)?;
    if ctx.json {
        let hunks = match (a.hunks, old, new) {
            (false, _, _) => false,
            (true, Rev::Snapshot(_), Rev::Snapshot(_)) => true,
            _ => {
                return Err(rewind::Error::Invalid(
                    "--hunks needs two snapshots (for the workspace's own changes, `rewind restore REV -p`)".into(),
                )
                .into());
            }
        };
        let (dopts, popts) = options(ctx, &a);
        let changes = Changes::build(
            &d,
            rev_text(old),
            rev_text(new),
            &dopts,
            a.patch.then_some(&popts),
            &mut |_, c| {
                if hunks {
                    rewind::wire::change_hunks(&d, c)
                } else {
                    Ok(None)
                }
            },
        )?;
        output::print_json(&changes)?;
        return Ok(exit_code(&d, &a));
    }
    print(ctx, &d, &a)
}

/// The line diff's and the patch's options `a` asks for.
pub fn options(ctx: &Ctx, a: &DiffArgs) -> (DiffOptions, rewind::diff::PatchOptions) {
    let dopts = DiffOptions {
        context: a.context,
        timeout: Some(super::output::seconds(a.diff_timeout.max(0.001))),
    };
    let popts = rewind::diff::PatchOptions {
        diff: dopts,
        color: ctx.color && !ctx.json,
        binary: a.binary,
    };
    (dopts, popts)
}

/// The exit code: 1 for changes with `--exit-code`.
pub fn exit_code(d: &Diff, a: &DiffArgs) -> i32 {
    if a.exit_code && !d.changes.is_empty() {
        1
    } else {
        0
    }
}

/// Prints a diff for people in the format `a` asks for.
pub fn print(ctx: &Ctx, d: &Diff, a: &DiffArgs) -> CliResult {
    let (dopts, popts) = options(ctx, a);
    let code = exit_code(d, a);
    let mut out = BufWriter::new(std::io::stdout().lock());
    if a.summary {
        let stats = vec![FileStat::default(); d.changes.len()];
        let mode = |s: &Option<rewind::diff::EntryState>| s.map_or(0, |e| e.kind.git_mode());
        let modes: Vec<(u32, u32)> = d
            .changes
            .iter()
            .map(|c| (mode(&c.old), mode(&c.new)))
            .collect();
        stat::write_summary(&mut out, &stat_entries(d, &stats)?, &modes)?;
    } else if a.stat || a.numstat || a.shortstat {
        let stats = d.stats(&dopts)?;
        let entries = stat_entries(d, &stats)?;
        if a.stat {
            stat::write_stat(&mut out, &entries, 80)?;
        } else if a.numstat {
            stat::write_numstat(&mut out, &entries)?;
        } else {
            let ins = stats.iter().map(|s| s.insertions).sum();
            let del = stats.iter().map(|s| s.deletions).sum();
            out.write_all(stat::summary_line(entries.len(), ins, del).as_bytes())?;
        }
    } else if a.name_status {
        let stats = vec![FileStat::default(); d.changes.len()];
        stat::write_name_status(&mut out, &stat_entries(d, &stats)?)?;
    } else {
        d.write_patch(&mut out, &popts)?;
    }
    out.flush()?;
    Ok(code)
}

/// `diff A B --by-run`: the change between two snapshots of the workspace under the run or
/// tool call that made it.
fn by_run(ctx: &Ctx, store: &rewind::Store, old: Rev, new: Rev) -> CliResult {
    let (Rev::Snapshot(a), Rev::Snapshot(b)) = (old, new) else {
        return Err(rewind::Error::Invalid(
            "--by-run needs two snapshots of the workspace (take one of the live tree with `rewind snapshot`)".into(),
        )
        .into());
    };
    let root = ctx.workspace_root(store)?;
    let ws = store.reader()?.snapshotted_workspace(&root)?;
    let by = rewind::review_runs::by_run(store, ws.id(), a, b)?;
    let who: Vec<String> = by
        .units
        .iter()
        .map(|u| super::who::who(&u.record))
        .collect();
    let runs = rewind::wire::RangeRuns::new(&a, &b, by);
    if ctx.json {
        super::output::print_json(&runs)?;
        return Ok(0);
    }
    if ctx.quiet {
        return Ok(0);
    }
    for g in &runs.runs {
        let unit = g.run.and_then(|n| runs.units.iter().find(|u| u.run == n));
        let title = match (g.run, unit) {
            (Some(0), _) => "made outside any run or tool call".to_string(),
            (Some(n), Some(u)) => format!(
                "run {n}: {} {} {}",
                u.short_id,
                u.time,
                who.get(n as usize - 1).map_or("", String::as_str)
            ),
            (Some(n), None) => format!("run {n}"),
            (None, _) => "runs' edits interleaved (take them back by --hunk)".to_string(),
        };
        super::who::print_run_group(ctx, &title, &g.files);
    }
    Ok(0)
}
