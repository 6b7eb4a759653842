//! Store maintenance commands: `forget` and `gc`.

use std::io::Write;

use super::args::{ForgetArgs, GcArgs};
use super::output::{self, format_time, human_bytes, paint};
use super::{CliResult, Ctx, hints};
use rewind::forget::ForgetOptions;
use rewind::gc::GcOptions;

/// `rewind forget`.
pub fn forget(ctx: &Ctx, a: ForgetArgs) -> CliResult {
    let store = ctx.open_store(false)?;
    let config = rewind::config::Config::load(store.dir())?;
    let reader = store.reader()?;
    let mut snapshots = Vec::new();
    for rev in &a.snapshots {
        if reader.tag(rev)?.is_some() {
            return Err(rewind::Error::Invalid(format!(
                "'{rev}' is a tag, and a tag keeps its snapshot: delete it first with `rewind tag -d {rev}`"
            ))
            .into());
        }
        snapshots.push(super::inspect::resolve(ctx, &store, &reader, rev)?);
    }
    drop(reader);
    let rules = rewind::retention::Policy {
        hourly: a.keep_hourly,
        daily: a.keep_daily,
        weekly: a.keep_weekly,
        monthly: a.keep_monthly,
        yearly: a.keep_yearly,
        within_hourly: a.keep_within_hourly,
        within_daily: a.keep_within_daily,
        within_weekly: a.keep_within_weekly,
        within_monthly: a.keep_within_monthly,
        within_yearly: a.keep_within_yearly,
        ..Default::default()
    };
    let policy = a.keep_last.is_some() || a.keep_within.is_some() || !rules.is_empty();
    if let Some(size) = &a.max_size {
        if policy || !a.snapshots.is_empty() || a.dry_run {
            return Err(rewind::Error::Invalid(
                "--max-size stands alone (no policy, ids or --dry-run): `rewind stats` shows what it would forget first"
                    .into(),
            )
            .into());
        }
        let max = output::parse_size(size)?;
        let r = rewind::budget::enforce(
            &store,
            max,
            a.undo_depth.unwrap_or(config.retention.undo_depth),
        )?;
        print_budget(ctx, &r)?;
        return Ok(0);
    }
    let workspace = if policy && !a.all_workspaces {
        let root = ctx.workspace_root(&store)?;
        Some(std::os::unix::ffi::OsStrExt::as_bytes(root.as_os_str()).to_vec())
    } else {
        None
    };
    let report = rewind::forget::forget(
        &store,
        &ForgetOptions {
            keep_last: a.keep_last,
            keep_within: a.keep_within,
            policy: rules,
            group_by: a.group_by,
            snapshots,
            workspace,
            labels: Vec::new(),
            undo_depth: a.undo_depth.unwrap_or(config.retention.undo_depth),
            dry_run: a.dry_run,
            ..ForgetOptions::default()
        },
    )?;
    if ctx.json {
        output::print_json(&rewind::wire::Forgotten::from(&report))?;
        return Ok(0);
    }
    let mut out = std::io::stdout().lock();
    let verb = if report.dry_run {
        "would forget"
    } else {
        "forgot"
    };
    if !ctx.quiet {
        for j in &report.forgotten {
            writeln!(
                out,
                "{verb} {} {}{}",
                paint(ctx.color, output::id_style(), &j.id.short()),
                format_time(j.time_ns),
                output::message_suffix(" ", &j.message)
            )?;
        }
        for j in &report.protected {
            writeln!(
                out,
                "keep   {} {} ({})",
                paint(ctx.color, output::id_style(), &j.id.short()),
                format_time(j.time_ns),
                j.reason.as_deref().unwrap_or("protected")
            )?;
        }
    }
    writeln!(
        out,
        "{verb} {}; kept {} by the policy and {} protected{}",
        output::count(report.forgotten.len(), "snapshot"),
        report.kept,
        report.protected.len(),
        if report.forgotten.is_empty() || report.dry_run {
            ""
        } else {
            "; `rewind gc` frees their data"
        }
    )?;
    Ok(0)
}

fn print_budget(ctx: &Ctx, r: &rewind::budget::BudgetReport) -> CliResult {
    if ctx.json {
        output::print_json(&rewind::wire::BudgetEnforced::from(r))?;
        return Ok(0);
    }
    let mut out = std::io::stdout().lock();
    if !ctx.quiet {
        for j in &r.evicted {
            writeln!(
                out,
                "forgot {} {}{}",
                paint(ctx.color, output::id_style(), &j.id.short()),
                format_time(j.time_ns),
                output::message_suffix(" ", &j.message)
            )?;
        }
    }
    writeln!(
        out,
        "forgot {}; the store takes {} of {}{}",
        output::count(r.evicted.len(), "snapshot"),
        human_bytes(r.used_after),
        human_bytes(r.max_bytes),
        if r.used_after > r.max_bytes {
            ": protected snapshots alone exceed it"
        } else {
            ""
        }
    )?;
    Ok(0)
}

/// `rewind gc`.
pub fn gc(ctx: &Ctx, a: GcArgs) -> CliResult {
    let mut store = ctx.open_store(false)?;
    let bar = super::progress::Bar::new(ctx);
    let r = rewind::gc::gc(
        &mut store,
        &GcOptions {
            dry_run: a.dry_run,
            recompress_level: if a.no_recompress {
                None
            } else {
                a.level.or(GcOptions::default().recompress_level)
            },
            ..GcOptions::default()
        },
        &bar,
    )?;
    if ctx.json {
        let mut v = rewind::wire::GcDone::from(&r);
        v.compact_skipped = r.compact_skipped.as_ref().map(hints::compact_skipped);
        output::print_json(&v)?;
        return Ok(0);
    }
    if let Some(why) = &r.compact_skipped {
        let why = hints::compact_skipped(why);
        output::warn(&format!("compaction skipped: {why}"));
    }
    if ctx.quiet {
        return Ok(0);
    }
    let mut out = std::io::stdout().lock();
    let verb = if r.dry_run { "would remove" } else { "removed" };
    writeln!(
        out,
        "{verb} {} trees, {} blobs, {} chunks ({}) unreachable from {} snapshots",
        r.trees_removed,
        r.blobs_removed,
        r.chunks_removed,
        human_bytes(r.bytes_removed),
        r.snapshots
    )?;
    let would = |did: &str, will: &str| {
        if r.dry_run {
            will.to_string()
        } else {
            did.to_string()
        }
    };
    writeln!(
        out,
        "segment log {} -> {} ({} segments {}, {} objects {}, {})",
        human_bytes(r.log_bytes_before),
        human_bytes(r.log_bytes_after),
        r.segments_removed,
        would("dropped", "to drop"),
        r.objects_moved,
        would("moved", "to move"),
        human_bytes(r.bytes_moved)
    )?;
    if r.regroup.blobs > 0 {
        writeln!(
            out,
            "{} {} into {}: {} -> {}",
            would("regrouped", "would regroup"),
            output::count(r.regroup.blobs as usize, "small blob"),
            output::count(r.regroup.groups as usize, "group"),
            human_bytes(r.regroup.bytes_before),
            human_bytes(r.regroup.bytes_after),
        )?;
    }
    if r.dense.blobs > 0 || r.dense.trained.is_some() {
        writeln!(
            out,
            "{} {} blobs with the store's dictionary: {} -> {}{}",
            would("recompressed", "would recompress"),
            r.dense.blobs,
            human_bytes(r.dense.bytes_before),
            human_bytes(r.dense.bytes_after),
            match r.dense.trained {
                Some(id) => format!(" ({} dictionary {id})", would("trained", "would train")),
                None => String::new(),
            }
        )?;
    }
    if let Some(s) = r.stat_cache {
        writeln!(
            out,
            "stat cache {}: {} -> {}",
            would("repacked", "would be repacked"),
            human_bytes(s.bytes_before),
            human_bytes(s.bytes_after),
        )?;
    }
    if !r.dry_run {
        writeln!(
            out,
            "file {} -> {}{} in {:.2} s",
            human_bytes(r.file_bytes_before),
            human_bytes(r.file_bytes_after),
            if r.compacted {
                format!(" (compacted from {})", human_bytes(r.file_bytes_committed))
            } else {
                String::new()
            },
            r.seconds
        )?;
    }
    Ok(0)
}
