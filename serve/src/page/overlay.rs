//! An overlay's review (`/overlay/{id}`): its pending changes against its base, file by file
//! and hunk by hunk, each with accept and reject; the workspace's undo and redo beside them.
//!
//! Accepting merges into the workspace (one undoable operation per click); rejecting puts the
//! base version back inside the overlay. A hunk accepted already is shown dimmed and marked;
//! the file stays listed until all of it is settled, as `overlay diff --json` shows it.

use std::fmt::Write;

use axum::extract::{Path, Query, State};
use axum::response::Html;
use rewind::hunks::ReviewHunk;
use serde_json::json;

use super::diffview::{FileBlock, LINE_BUDGET, file_block, only_path, query_value, summary};
use super::html::{self, Action};
use super::{Crumb, PageError, api, home, layout, render};
use crate::AppState;

/// The query of `/overlay/{id}`.
#[derive(serde::Deserialize)]
pub(super) struct Only {
    /// Only this file (or directory): the link a file too large for the whole page offers.
    path: Option<String>,
}

pub(super) async fn page(
    State(state): State<AppState>,
    Path(key): Path<String>,
    Query(q): Query<Only>,
) -> Result<Html<String>, PageError> {
    render(state, move |store| view(store, &key, q)).await
}

fn view(store: &rewind::Store, key: &str, q: Only) -> Result<String, PageError> {
    let mut rec = rewind::overlay::find(store, key)?;
    let mut od = rec.diff(store, true)?;
    if let Some(only) = only_path(q.path.as_deref())? {
        od.diff
            .changes
            .retain(|c| rewind::diff::tree::is_under(&c.path, &only));
    }
    let hunks = rec.review_hunks(store, &od.diff)?;
    let ws = store.reader()?.workspace(&rec.workspace_path())?;
    let id = rec.id();
    let name = rec.name().map(|n| format!(" · {n}")).unwrap_or_default();

    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>Overlay {id}{}</h1><p class=\"muted\">on <span class=\"mono\">{}</span>, \
         {} backend, base <span class=\"mono\">{}</span>, state <span class=\"mono\">{}</span>{}</p>",
        html::escape(&name),
        html::path(rec.workspace()),
        rec.backend().name(),
        rec.base().short(),
        od.state.short(),
        if rec.running(store) {
            " <span class=\"tag\">a command is running in it</span>"
        } else {
            ""
        },
    );
    body.push_str("<div class=\"toolbar\">");
    let everything = json!({});
    if !od.diff.changes.is_empty() {
        body.push_str(
            &Action {
                label: "Accept all",
                class: "accept",
                key: None,
                url: &api::accept(id),
                body: &everything,
                done: "Accepted every pending change.",
                title: "merge every pending change into the workspace",
            }
            .render(),
        );
        body.push_str(
            &Action {
                label: "Reject all",
                class: "reject",
                key: None,
                url: &api::reject(id),
                body: &everything,
                done: "Rejected every pending change.",
                title: "put the base version back inside the overlay, everywhere",
            }
            .render(),
        );
    }
    if let Some(ws) = &ws {
        body.push_str(&home::undo_buttons(ws.id()));
        let _ = write!(
            body,
            "<a class=\"button\" href=\"/w/{}\">workspace</a>",
            ws.id()
        );
    }
    body.push_str("</div>");

    summary(&mut body, &od.diff.changes);
    if od.diff.changes.is_empty() {
        body.push_str(
            "<p class=\"empty\" id=\"nothing-pending\">Nothing pending: every change of this \
             overlay is accepted or rejected.</p>",
        );
    }
    let mut budget = LINE_BUDGET;
    for (index, (c, hs)) in od.diff.changes.iter().zip(&hunks).enumerate() {
        let path = String::from_utf8_lossy(&c.path).into_owned();
        let by_path = json!({ "paths": [path] });
        let mut actions = Action {
            label: "Accept file",
            class: "accept",
            key: Some("accept"),
            url: &api::accept(id),
            body: &by_path,
            done: &format!("Accepted {path}."),
            title: "merge this whole file into the workspace (A)",
        }
        .render();
        actions.push_str(
            &Action {
                label: "Reject file",
                class: "reject",
                key: Some("reject"),
                url: &api::reject(id),
                body: &by_path,
                done: &format!("Rejected {path}."),
                title: "put this file's base version back in the overlay (R)",
            }
            .render(),
        );
        let hunk_actions = |h: &ReviewHunk| -> String {
            if !h.pending {
                return String::new();
            }
            let by_hunk = json!({ "hunks": [h.id] });
            let accept = Action {
                label: "Accept",
                class: "accept",
                key: Some("accept"),
                url: &api::accept(id),
                body: &by_hunk,
                done: &format!("Accepted a hunk of {path}."),
                title: "merge this hunk into the workspace (a)",
            };
            let reject = Action {
                label: "Reject",
                class: "reject",
                key: Some("reject"),
                url: &api::reject(id),
                body: &by_hunk,
                done: &format!("Rejected a hunk of {path}."),
                title: "take this hunk out of the overlay (r)",
            };
            accept.render() + &reject.render()
        };
        file_block(
            &mut body,
            &FileBlock {
                index,
                change: c,
                hunks: hs.as_deref(),
                actions,
                sizes: None,
                alone: Some(format!("/overlay/{id}?path={}", query_value(&path))),
            },
            &hunk_actions,
            &mut budget,
        );
    }
    if !od.ignored.is_empty() {
        body.push_str(
            "<h2>Ignored paths written in the overlay</h2><p class=\"muted\">Build outputs and the \
             like: not part of the review; <code>rewind overlay accept --include-ignored</code> \
             copies them.</p><ul class=\"summary\">",
        );
        for p in &od.ignored {
            let _ = write!(body, "<li>{}</li>", html::path(p));
        }
        body.push_str("</ul>");
    }
    let mut crumbs = Vec::new();
    if let Some(ws) = &ws {
        crumbs.push(Crumb {
            href: Some(format!("/w/{}", ws.id())),
            label: String::from_utf8_lossy(ws.path()).into_owned(),
        });
    }
    crumbs.push(Crumb {
        href: None,
        label: format!("overlay {id}{name}"),
    });
    Ok(layout(&format!("overlay {id}"), &crumbs, &body))
}
