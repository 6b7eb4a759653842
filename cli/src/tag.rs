//! `tag` and `tags`.

use std::io::Write;

use serde_json::json;

use super::args::TagArgs;
use super::output::{self, paint};
use super::{CliResult, Ctx};
use rewind::revision;

/// `rewind tag NAME [REV]`, `rewind tag -d NAME`.
pub fn tag(ctx: &Ctx, a: TagArgs) -> CliResult {
    let store = ctx.open_store(false)?;
    if a.delete {
        if !store.delete_tag(&a.name)? {
            return Err(rewind::Error::NoTag(a.name).into());
        }
        if ctx.json {
            output::print_json(&json!({ "deleted": a.name }))?;
        } else if !ctx.quiet {
            println!("deleted tag {}", a.name);
        }
        return Ok(0);
    }
    let rev = a.rev.as_deref().unwrap_or("@");
    let root = if rev.starts_with('@') {
        Some(ctx.workspace_root(&store)?)
    } else {
        None
    };
    let id = revision::resolve(&store.reader()?, rev, root.as_deref())?;
    store.set_tag(&a.name, &id, a.force)?;
    if ctx.json {
        output::print_json(&json!({ "tag": a.name, "snapshot": id.hex() }))?;
    } else if !ctx.quiet {
        println!(
            "{} -> {}",
            a.name,
            paint(ctx.color, output::id_style(), &id.short())
        );
    }
    Ok(0)
}

/// `rewind tags`.
pub fn tags(ctx: &Ctx) -> CliResult {
    let store = ctx.open_store(false)?;
    let reader = store.reader()?;
    let tags = reader.tags()?;
    // Tags are store-wide: each names its snapshot's workspace, so a restore in the wrong
    // directory is caught by eye too.
    let mut rows = Vec::with_capacity(tags.len());
    for (n, id) in tags {
        let ws = match reader.snapshot(&id) {
            Ok(r) => Some(output::path_str(&r.workspace)),
            Err(rewind::Error::Missing { .. }) => None,
            Err(e) => return Err(e.into()),
        };
        rows.push((n, id, ws));
    }
    if ctx.json {
        let v: Vec<_> = rows
            .iter()
            .map(|(n, id, ws)| json!({ "tag": n, "snapshot": id.hex(), "workspace": ws }))
            .collect();
        output::print_json(&v)?;
    } else {
        let mut out = std::io::stdout().lock();
        let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
        for (n, id, ws) in rows {
            writeln!(
                out,
                "{}  {n:<width$}  {}",
                paint(ctx.color, output::id_style(), &id.short()),
                ws.as_deref().unwrap_or("(snapshot missing)")
            )?;
        }
    }
    Ok(0)
}
