//! `tag` and `tags`.

use std::io::Write;

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
            output::print_json(&rewind::wire::TagDeleted { deleted: a.name })?;
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
        output::print_json(&rewind::wire::Tag::new(&store.reader()?, &a.name, &id)?)?;
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
    let rows = rewind::wire::Tag::list(&store.reader()?)?;
    if ctx.json {
        output::print_json(&rows)?;
    } else {
        let mut out = std::io::stdout().lock();
        let width = rows.iter().map(|r| r.tag.len()).max().unwrap_or(0);
        for t in rows {
            writeln!(
                out,
                "{}  {:<width$}  {}",
                paint(
                    ctx.color,
                    output::id_style(),
                    t.snapshot
                        .get(..rewind::id::SHORT_HEX)
                        .unwrap_or(&t.snapshot)
                ),
                t.tag,
                t.workspace.as_deref().unwrap_or("(snapshot missing)")
            )?;
        }
    }
    Ok(0)
}
