//! The text rendering of each tool's result (MCP's `content`, beside `structuredContent`):
//! short, for a model or a person to read.

use std::fmt::Write;

use rewind::wire;

fn snapshot_line(s: &wire::Snapshot) -> String {
    let mut t = format!("{}  {}  {} files", s.short_id, s.time, s.files);
    if !s.message.is_empty() {
        let _ = write!(t, "  {}", s.message);
    }
    if !s.tags.is_empty() {
        let _ = write!(t, "  ({})", s.tags.join(", "));
    }
    for (k, v) in &s.meta {
        let _ = write!(t, "  {k}={v}");
    }
    t
}

fn change_line(c: &wire::Change) -> String {
    let mut t = format!("{:<9}{}", c.status.name(), c.paths.path);
    if let Some(old) = &c.paths.old_path {
        t = format!("{:<9}{old} -> {}", c.status.name(), c.paths.path);
    }
    if let (Some(i), Some(d)) = (c.insertions, c.deletions) {
        if c.binary == Some(true) {
            t.push_str("  (binary)");
        } else {
            let _ = write!(t, "  +{i} -{d}");
        }
    }
    t
}

/// `checkpoint`.
pub fn checkpoint(c: &wire::Checkpoint) -> String {
    let mut t = match (c.created, c.unchanged) {
        (false, _) => format!("unchanged since {}: nothing recorded", c.snapshot.short_id),
        (true, true) => format!("checkpoint {} (unchanged)", c.snapshot.id),
        (true, false) => format!(
            "checkpoint {}: {} paths changed",
            c.snapshot.id, c.files_changed
        ),
    };
    for ch in c.changes.iter().flatten() {
        let _ = write!(t, "\n{}", change_line(ch));
    }
    if c.changes_truncated {
        t.push_str("\n...");
    }
    for s in &c.skipped {
        let reason = serde_json::to_value(s.reason).unwrap_or_default();
        let _ = write!(
            t,
            "\nskipped {} ({}): {}",
            s.path,
            reason.as_str().unwrap_or_default(),
            s.detail
        );
    }
    t
}

/// `list_checkpoints`.
pub fn list(l: &wire::SnapshotList) -> String {
    if l.snapshots.is_empty() {
        return "no checkpoints".into();
    }
    l.snapshots
        .iter()
        .map(snapshot_line)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `changes`.
pub fn changes(c: &wire::Changes) -> String {
    let short = |s: &str| s.get(..12).unwrap_or(s).to_string();
    let mut t = format!(
        "{} -> {}: {} files changed, +{} -{}",
        short(&c.old),
        short(&c.new),
        c.totals.files_changed,
        c.totals.insertions,
        c.totals.deletions
    );
    for f in &c.files {
        let _ = write!(t, "\n{}", change_line(f));
        for h in f.hunks.iter().flatten() {
            let _ = write!(
                t,
                "\n  hunk {} @@ -{},{} +{},{} @@",
                h.id, h.old_start, h.old_lines, h.new_start, h.new_lines
            );
        }
    }
    if let Some(p) = &c.patch {
        let _ = write!(t, "\n\n{p}");
    }
    t
}

/// `restore`.
pub fn restore(r: &wire::Restore) -> String {
    let short = |s: &str| s.get(..12).unwrap_or(s).to_string();
    let mut t = if r.dry_run {
        format!(
            "would restore {}: overwrite {}, delete {}, create {}",
            short(&r.target),
            r.overwrites,
            r.deletes,
            r.creates
        )
    } else {
        format!(
            "restored {}: {} written, {} removed (undo to go back to {})",
            short(&r.target),
            r.written,
            r.deleted,
            r.before.as_deref().map(short).unwrap_or_default()
        )
    };
    for p in &r.plan {
        let _ = write!(t, "\n{:<10}{}", p.action, p.path);
    }
    for f in &r.edited {
        let _ = write!(t, "\n{:<10}{}", f.action, f.paths.path);
    }
    t
}

/// `undo` and `redo`.
pub fn undo(u: &wire::Undo) -> String {
    let mut t = format!(
        "{} operation {} ({}): {} paths",
        if u.redo { "redid" } else { "undid" },
        u.undone.id,
        u.undone.kind,
        u.plan.len()
    );
    for p in &u.plan {
        let _ = write!(t, "\n{:<10}{}", p.action, p.path);
    }
    t
}

/// `run`: the result is the run-result object; the text says the outcome.
pub fn run(v: &serde_json::Value) -> String {
    let files = v["diff"]["files"].as_array().map_or(0, Vec::len);
    let mut t = format!(
        "exit code {}, {} files changed, before {} after {}",
        v["exit_code"],
        files,
        v["before"].as_str().unwrap_or("-"),
        v["after"].as_str().unwrap_or("-")
    );
    if let Some(p) = v["patch"].as_str() {
        let _ = write!(t, "\n\n{p}");
    }
    t
}

/// `overlay_create`.
pub fn overlay(c: &wire::OverlayCreated) -> String {
    let o = &c.overlay;
    let mut t = format!(
        "overlay {} ({}) from {}; its files: {}",
        o.id,
        o.backend,
        o.base.get(..12).unwrap_or(&o.base),
        o.path.as_deref().unwrap_or("-")
    );
    if let Some(why) = &c.fallback {
        let _ = write!(
            t,
            " (a copy: namespace overlays are unavailable here: {why})"
        );
    }
    t
}

/// `overlay_diff`.
pub fn overlay_diff(d: &wire::OverlayDiff) -> String {
    format!("overlay {}: {}", d.overlay, changes(&d.changes))
}

/// `overlay_runs`.
pub fn overlay_runs(r: &wire::OverlayRuns) -> String {
    let mut t = format!("overlay {}: pending changes by run", r.overlay);
    for g in &r.runs {
        let who = match g.run {
            Some(0) => "outside any run".to_string(),
            Some(n) => format!("run {n}: {}", g.command.as_deref().unwrap_or("")),
            None => "interleaved runs".to_string(),
        };
        run_group(&mut t, &who, &g.files);
    }
    t
}

/// One group of changes by run, a line: who made them, and how many files and hunks (a file
/// without line hunks is taken whole: one).
fn run_group(t: &mut String, who: &str, files: &[wire::OverlayRunFile]) {
    let hunks: usize = files
        .iter()
        .map(|f| f.hunks.as_ref().map_or(1, Vec::len))
        .sum();
    let _ = write!(t, "\n{who} ({} files, {hunks} hunks)", files.len());
}

/// `overlay_accept`.
pub fn accept(a: &wire::OverlayAccept) -> String {
    let mut t = format!(
        "accepted from overlay {}: {} files, {} conflicts",
        a.overlay,
        a.files.len(),
        a.conflicts.len()
    );
    for f in &a.files {
        let _ = write!(t, "\n{:<10}{}", f.action, f.paths.path);
    }
    for c in &a.conflicts {
        let _ = write!(t, "\nconflict  {} ({})", c.path, c.why);
    }
    t
}

/// `overlay_reject`.
pub fn reject(r: &wire::OverlayReject) -> String {
    let mut t = format!("rejected in overlay {}:", r.overlay);
    for p in &r.rejected {
        let _ = write!(t, "\n{p}");
    }
    t
}

/// `changes_by_run`.
pub fn changes_by_run(r: &wire::RangeRuns) -> String {
    let short = |h: &str| h.chars().take(12).collect::<String>();
    let mut t = format!("{}..{}: changes by run", short(&r.a), short(&r.b));
    for g in &r.runs {
        let who = match g.run {
            Some(0) => "outside any run or tool call".to_string(),
            Some(n) => match r.units.iter().find(|u| u.run == n) {
                Some(u) => format!("run {n}: {} {}", u.short_id, u.message),
                None => format!("run {n}"),
            },
            None => "interleaved runs".to_string(),
        };
        run_group(&mut t, &who, &g.files);
    }
    t
}

/// `revert`.
pub fn revert(r: &wire::Revert) -> String {
    let verb = if r.dry_run {
        "would revert"
    } else {
        "reverted"
    };
    let mut t = format!(
        "{verb}: {} files, {} conflicts",
        r.files.len(),
        r.conflicts.len()
    );
    for f in &r.files {
        let _ = write!(t, "\n{:<10}{}", f.action, f.paths.path);
    }
    for c in &r.conflicts {
        let _ = write!(t, "\nconflict  {} ({})", c.path, c.why);
    }
    if !r.conflicts.is_empty() {
        t.push_str("\nnothing was written");
    }
    t
}
