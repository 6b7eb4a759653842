//! `tag` and `tags`.

use serde_json::json;

use super::args::TagArgs;
use super::output::{self, paint};
use super::{CliResult, Ctx};
use crate::revision;

/// `rewind tag NAME [REV]`, `rewind tag -d NAME`.
pub fn tag(ctx: &Ctx, a: TagArgs) -> CliResult {
    let store = ctx.open_store(false)?;
    if a.delete {
        if !store.delete_tag(&a.name)? {
            return Err(crate::Error::Invalid(format!("no tag named '{}'", a.name)).into());
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
    let tags = store.reader()?.tags()?;
    if ctx.json {
        let v: Vec<_> = tags
            .iter()
            .map(|(n, id)| json!({ "tag": n, "snapshot": id.hex() }))
            .collect();
        output::print_json(&v)?;
    } else {
        for (n, id) in tags {
            println!("{}  {n}", paint(ctx.color, output::id_style(), &id.short()));
        }
    }
    Ok(0)
}
