//! The store's workspaces (`/`) and one workspace (`/w/{id}`): its overlays, snapshots and
//! operation log, undo and redo, and a form to compare any two points.

use std::fmt::Write;

use axum::extract::{Path, State};
use axum::response::Html;
use rewind::Overlay;
use rewind::Workspace;
use serde_json::json;

use super::html::{self, Action};
use super::{Crumb, PageError, api, layout, render};
use crate::AppState;

/// Snapshots and operations one workspace page lists.
const LIST_LIMIT: usize = 200;

pub(super) async fn index(State(state): State<AppState>) -> Result<Html<String>, PageError> {
    render(state, index_view).await
}

pub(super) async fn workspace(
    State(state): State<AppState>,
    Path(id): Path<u64>,
) -> Result<Html<String>, PageError> {
    render(state, move |store| workspace_view(store, id)).await
}

/// The workspace record with this id.
pub(super) fn workspace_record(store: &rewind::Store, id: u64) -> Result<Workspace, PageError> {
    Ok(crate::api::workspace(store, id)?)
}

pub(super) use crate::api::root_of;

fn index_view(store: &rewind::Store) -> Result<String, PageError> {
    let reader = store.reader()?;
    // A copy overlay's files are snapshotted as a workspace of their own: store internals.
    let internal = rewind::overlay::overlays_dir(store);
    let workspaces: Vec<Workspace> = reader
        .workspaces()?
        .into_iter()
        .filter(|w| !root_of(w).starts_with(&internal))
        .collect();
    let overlays = rewind::overlay::list(store)?;
    let mut body = String::from("<h1>Workspaces</h1>");
    if workspaces.is_empty() {
        body.push_str(
            "<p class=\"empty\">No workspace in this store yet: <code>rewind snapshot</code> in a \
             directory registers it.</p>",
        );
    } else {
        body.push_str(
            "<table class=\"list\" id=\"workspaces\"><tr><th>workspace</th><th>latest snapshot</th>\
             <th>message</th><th>overlays</th></tr>",
        );
        for ws in &workspaces {
            let latest = reader.snapshot_log(ws.id(), 1)?.into_iter().next();
            let ovs = overlays
                .iter()
                .filter(|o| o.workspace() == ws.path())
                .count();
            let _ = write!(
                body,
                "<tr data-ws=\"{id}\"><td><a class=\"mono\" href=\"/w/{id}\">{}</a></td><td>{}</td>\
                 <td>{}</td><td class=\"num\">{ovs}</td></tr>",
                html::path(ws.path()),
                latest
                    .as_ref()
                    .map(|r| html::time(r.time_ns()))
                    .unwrap_or_else(|| "<span class=\"muted\">none</span>".into()),
                latest
                    .as_ref()
                    .map(|r| html::escape(r.message()))
                    .unwrap_or_default(),
                id = ws.id(),
            );
        }
        body.push_str("</table>");
    }
    if !overlays.is_empty() {
        body.push_str("<h2>Overlays</h2>");
        overlay_table(&mut body, store, &overlays, &workspaces);
    }
    Ok(layout("workspaces", &[], &body))
}

/// The overlays' table: id, name, workspace, backend, base, pending changes, a review link.
fn overlay_table(
    out: &mut String,
    store: &rewind::Store,
    overlays: &[Overlay],
    workspaces: &[Workspace],
) {
    out.push_str(
        "<table class=\"list\" id=\"overlays\"><tr><th>overlay</th><th>workspace</th><th>backend</th>\
         <th>base</th><th>created</th><th class=\"num\">pending</th><th></th></tr>",
    );
    for o in overlays {
        // Never waits: a busy overlay shows the count of its last computed state.
        let (pending, running) = o.pending_now(store);
        let ws = workspaces.iter().find(|w| w.path() == o.workspace());
        let _ = write!(
            out,
            "<tr data-overlay=\"{id}\"><td><a href=\"/overlay/{id}\">{id}{}</a>{}</td><td class=\"mono\">{}</td>\
             <td>{}</td><td class=\"mono\">{}</td><td>{}</td><td class=\"num\">{}</td>\
             <td><a href=\"/overlay/{id}\">review</a></td></tr>",
            o.name()
                .map(|n| format!(" · {}", html::escape(n)))
                .unwrap_or_default(),
            if running {
                " <span class=\"tag\">running</span>"
            } else {
                ""
            },
            ws.map(|w| format!("<a href=\"/w/{}\">{}</a>", w.id(), html::path(w.path())))
                .unwrap_or_else(|| html::path(o.workspace())),
            o.backend().name(),
            o.base().short(),
            html::time(o.created_ns()),
            pending.map_or_else(|| "?".into(), |n| n.to_string()),
            id = o.id(),
        );
    }
    out.push_str("</table>");
}

fn workspace_view(store: &rewind::Store, id: u64) -> Result<String, PageError> {
    let ws = workspace_record(store, id)?;
    let reader = store.reader()?;
    let snaps = reader.snapshot_log(ws.id(), LIST_LIMIT)?;
    let tags = reader.tags()?;
    let ops = rewind::store::oplog::fold_actions(reader.ops(Some(ws.path()), LIST_LIMIT)?);
    let undone = rewind::undo::undone_ops(store, ws.path())?;
    let overlays: Vec<Overlay> = rewind::overlay::list(store)?
        .into_iter()
        .filter(|o| o.workspace() == ws.path())
        .collect();
    drop(reader);

    let mut body = format!("<h1 class=\"mono\">{}</h1>", html::path(ws.path()));
    body.push_str("<div class=\"toolbar\">");
    body.push_str(&undo_buttons(id));
    let _ = write!(
        body,
        "<a class=\"button\" href=\"/w/{id}/diff?from=%40&amp;to=live\">changes since the latest snapshot</a></div>"
    );
    body.push_str(&compare_form(store, &ws, "@", "live")?);
    if !overlays.is_empty() {
        body.push_str("<h2>Overlays</h2>");
        overlay_table(&mut body, store, &overlays, std::slice::from_ref(&ws));
    }
    body.push_str("<div class=\"cols\"><div>");
    let _ = write!(body, "<h2>Snapshots</h2>");
    if snaps.is_empty() {
        body.push_str("<p class=\"empty\">No snapshot yet.</p>");
    } else {
        body.push_str(
            "<table class=\"list\" id=\"snapshots\"><tr><th>snapshot</th><th>time</th><th>message</th>\
             <th class=\"num\">files</th><th>diff</th></tr>",
        );
        for rec in &snaps {
            let sid = &rec.id();
            let mut labels = String::new();
            for (t, _) in tags.iter().filter(|(_, tid)| tid == sid) {
                let _ = write!(labels, "<span class=\"tag\">{}</span>", html::escape(t));
            }
            for (k, v) in rec.meta_pairs() {
                let _ = write!(
                    labels,
                    "<span class=\"tag\">{}={}</span>",
                    html::escape(k),
                    html::escape(v)
                );
            }
            let parent = rec
                .parent()
                .map(|p| {
                    format!(
                        "<a href=\"/w/{id}/diff?from={}&amp;to={}\">parent</a> · ",
                        p.hex(),
                        sid.hex()
                    )
                })
                .unwrap_or_default();
            let _ = write!(
                body,
                "<tr data-snapshot=\"{hex}\"><td class=\"mono\">{short}</td><td>{}</td>\
                 <td><div class=\"cmd\" title=\"{message}\">{message}{labels}</div></td>\
                 <td class=\"num\">{}</td><td>{parent}<a href=\"/w/{id}/diff?from={hex}&amp;to=live\">live</a></td></tr>",
                html::time(rec.time_ns()),
                rec.stats().files,
                message = html::escape(rec.message()),
                hex = sid.hex(),
                short = sid.short(),
            );
        }
        body.push_str("</table>");
    }
    body.push_str("</div><div><h2>Operation log</h2>");
    if ops.is_empty() {
        body.push_str("<p class=\"empty\">No operation yet.</p>");
    } else {
        body.push_str(
            "<table class=\"list\" id=\"oplog\"><tr><th class=\"num\">op</th><th>what</th><th>time</th><th>diff</th></tr>",
        );
        for row in &ops {
            let op = &row.op;
            let mut what = html::escape(&row.kind);
            if let Some(t) = &row.target {
                let _ = write!(what, " <a href=\"/overlay/{0}\">{0}</a>", html::escape(t));
            }
            if undone.contains(&op.id()) {
                what.push_str(" <span class=\"tag undone\">undone</span>");
            }
            let diff = match (op.before(), op.after()) {
                (Some(b), Some(a)) if b != a => format!(
                    "<a href=\"/w/{id}/diff?from={}&amp;to={}\">changes</a>",
                    b.hex(),
                    a.hex()
                ),
                _ => String::new(),
            };
            let _ = write!(
                body,
                "<tr data-op=\"{}\"><td class=\"num\">{}</td><td>{what}\
                 <div class=\"muted mono cmd\" title=\"{cmd}\">{cmd}</div></td>\
                 <td>{}</td><td>{diff}</td></tr>",
                op.id(),
                op.id(),
                html::time(op.time_ns()),
                cmd = html::escape(&match &op.actor() {
                    Some(a) => format!("{} (by {a})", op.command().join(" ")),
                    None => op.command().join(" "),
                }),
            );
        }
        body.push_str("</table>");
    }
    body.push_str("</div></div>");
    Ok(layout(
        &String::from_utf8_lossy(ws.path()),
        &[Crumb {
            href: None,
            label: String::from_utf8_lossy(ws.path()).into_owned(),
        }],
        &body,
    ))
}

/// The workspace's undo and redo buttons.
pub(super) fn undo_buttons(ws: u64) -> String {
    let body = json!({"force": false});
    let undo = Action {
        label: "Undo",
        class: "undo",
        key: Some("undo"),
        url: &api::undo(ws),
        body: &body,
        done: "Undone.",
        title: "take back the workspace's latest operation (u)",
    };
    let redo = Action {
        label: "Redo",
        class: "redo",
        key: None,
        url: &api::redo(ws),
        body: &body,
        done: "Redone.",
        title: "take back the latest undo",
    };
    undo.render() + &redo.render()
}

/// The form choosing two points to compare: the live workspace and the latest snapshots, with
/// `from` and `to` selected (a typed revision not in the list is added as an option).
pub(super) fn compare_form(
    store: &rewind::Store,
    ws: &Workspace,
    from: &str,
    to: &str,
) -> Result<String, PageError> {
    let snaps = store.reader()?.snapshot_log(ws.id(), LIST_LIMIT)?;
    let select = |name: &str, chosen: &str| {
        let mut options: Vec<(String, String)> = vec![
            ("live".into(), "live workspace".into()),
            ("@".into(), "@ (latest snapshot)".into()),
        ];
        for rec in &snaps {
            let msg: String = rec.message().chars().take(60).collect();
            options.push((
                rec.id().hex(),
                format!("{} {} {msg}", rec.id().short(), html::utc(rec.time_ns())),
            ));
        }
        if !options.iter().any(|(v, _)| v == chosen) {
            options.push((chosen.to_string(), chosen.to_string()));
        }
        let mut s = format!("<select name=\"{name}\">");
        for (value, label) in &options {
            let sel = if value == chosen { " selected" } else { "" };
            let _ = write!(
                s,
                "<option value=\"{}\"{sel}>{}</option>",
                html::escape(value),
                html::escape(label)
            );
        }
        s.push_str("</select>");
        s
    };
    Ok(format!(
        "<form class=\"compare\" method=\"get\" action=\"/w/{}/diff\">compare {} → {} \
         <button type=\"submit\" class=\"primary\">Show diff</button></form>",
        ws.id(),
        select("from", from),
        select("to", to),
    ))
}
