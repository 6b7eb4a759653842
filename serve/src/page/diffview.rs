//! Diffs on the page: a file's change as a block of hunks with syntax colouring (shared by the
//! diff view and the overlay review), and the view of a diff between any two points of a
//! workspace (`/w/{id}/diff?from=REV&to=REV`, `live` for the workspace as it is now).

use std::fmt::Write;

use axum::extract::{Path, Query, State};
use axum::response::Html;
use rewind::diff::{ChangeStatus, FileChange};
use rewind::hunks::ReviewHunk;
use rewind::store::tree::Kind;
use rewind::{DiffRequest, Rev};
use serde::Deserialize;

use super::highlight::{self, State as HlState};
use super::{Crumb, PageError, home, html, layout, render};
use crate::AppState;

/// Lines of hunks one page shows in all; files past it are listed with a note (their whole-file
/// buttons still work), so a huge change cannot make the browser unusable.
pub(super) const LINE_BUDGET: usize = 20_000;

/// The two points of `/w/{id}/diff`.
#[derive(Deserialize)]
pub(super) struct Points {
    from: Option<String>,
    to: Option<String>,
    /// Only this file (or directory): the link a file too large for the whole page offers.
    path: Option<String>,
}

pub(super) async fn page(
    State(state): State<AppState>,
    Path(id): Path<u64>,
    Query(q): Query<Points>,
) -> Result<Html<String>, PageError> {
    render(state, move |store| view(store, id, q)).await
}

fn view(store: &rewind::Store, id: u64, q: Points) -> Result<String, PageError> {
    let ws = home::workspace_record(store, id)?;
    let root = home::root_of(&ws);
    let from = q
        .from
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "@".into());
    let to =
        q.to.filter(|s| !s.is_empty())
            .unwrap_or_else(|| "live".into());
    let reader = store.reader()?;
    let rev = |s: &str| -> Result<Rev, PageError> {
        if s == "live" {
            Ok(Rev::Live)
        } else {
            Ok(Rev::Snapshot(rewind::revision::resolve(
                &reader,
                s,
                Some(&root),
            )?))
        }
    };
    let (a, b) = (rev(&from)?, rev(&to)?);
    drop(reader);
    let only = only_path(q.path.as_deref())?;
    let d = rewind::diff(
        store,
        a,
        b,
        Some(&root),
        &DiffRequest {
            paths: only.into_iter().collect(),
            ..DiffRequest::default()
        },
    )?;

    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>Diff <span class=\"mono\">{}</span> → <span class=\"mono\">{}</span></h1>",
        html::escape(&point_label(&from, a)),
        html::escape(&point_label(&to, b)),
    );
    body.push_str(&home::compare_form(store, &ws, &from, &to)?);
    summary(&mut body, &d.changes);
    if d.changes.is_empty() {
        body.push_str("<p class=\"empty\">No changes between these two points.</p>");
    }
    let mut budget = LINE_BUDGET;
    for (index, c) in d.changes.iter().enumerate() {
        let old = d.content(c, true)?;
        let new = d.content(c, false)?;
        let hunks = texts_of(c, &old, &new).map(|(o, n)| rewind::hunks::file_hunks(&c.path, o, n));
        file_block(
            &mut body,
            &FileBlock {
                index,
                change: c,
                hunks: hunks.as_deref(),
                actions: String::new(),
                sizes: Some((old.len(), new.len())),
                alone: Some(format!(
                    "/w/{id}/diff?from={}&to={}&path={}",
                    query_value(&from),
                    query_value(&to),
                    query_value(&String::from_utf8_lossy(&c.path))
                )),
            },
            &|_| String::new(),
            &mut budget,
        );
    }
    let label = String::from_utf8_lossy(ws.path()).into_owned();
    Ok(layout(
        &format!("diff {from}..{to}"),
        &[
            Crumb {
                href: Some(format!("/w/{id}")),
                label,
            },
            Crumb {
                href: None,
                label: format!("diff {from} → {to}"),
            },
        ],
        &body,
    ))
}

/// A point as the heading names it: the revision typed, with the snapshot it resolved to.
fn point_label(typed: &str, rev: Rev) -> String {
    match rev {
        Rev::Live => "live workspace".into(),
        Rev::Snapshot(id) if id.short() == typed || id.hex() == typed => id.short(),
        Rev::Snapshot(id) => format!("{typed} ({})", id.short()),
    }
}

/// Both sides as text when the change has line hunks: regular files (no rename), neither side
/// binary, contents differing.
fn texts_of<'a>(c: &FileChange, old: &'a [u8], new: &'a [u8]) -> Option<(&'a [u8], &'a [u8])> {
    let is_file = |e: &Option<rewind::diff::EntryState>| {
        e.is_none_or(|e| matches!(e.kind, Kind::File | Kind::Executable))
    };
    let text = is_file(&c.old)
        && is_file(&c.new)
        && c.old_path.is_none()
        && old != new
        && !rewind::diff::is_binary(old)
        && !rewind::diff::is_binary(new);
    text.then_some((old, new))
}

/// The one-letter status `--name-status` prints.
pub(super) fn letter(s: ChangeStatus) -> char {
    match s {
        ChangeStatus::Added => 'A',
        ChangeStatus::Deleted => 'D',
        ChangeStatus::Modified | ChangeStatus::ModeChanged => 'M',
        ChangeStatus::TypeChanged => 'T',
        ChangeStatus::Renamed => 'R',
    }
}

/// The list of changed files at the top of a diff, each a link to its block.
pub(super) fn summary(out: &mut String, changes: &[FileChange]) {
    if changes.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<p class=\"muted\">{} file{} changed</p><ul class=\"summary\">",
        changes.len(),
        if changes.len() == 1 { "" } else { "s" }
    );
    for (i, c) in changes.iter().enumerate() {
        let l = letter(c.status);
        let _ = write!(
            out,
            "<li><span class=\"st st-{l}\">{l}</span><a href=\"#f{i}\">{}</a></li>",
            display_path(c)
        );
    }
    out.push_str("</ul>");
}

/// `old → new` for a rename, else the path; escaped.
fn display_path(c: &FileChange) -> String {
    match &c.old_path {
        Some(old) => format!("{} → {}", html::path(old), html::path(&c.path)),
        None => html::path(&c.path),
    }
}

/// One file of a diff as the page shows it.
pub(super) struct FileBlock<'a> {
    /// Its place in the diff: the anchor `#fN` the summary links to.
    pub index: usize,
    /// The change.
    pub change: &'a FileChange,
    /// Its hunks; None when it has no line hunks (binary, symlink, rename, mode).
    pub hunks: Option<&'a [ReviewHunk]>,
    /// Buttons for the whole file (HTML).
    pub actions: String,
    /// The sizes of both sides, when known, for the note on a file without hunks.
    pub sizes: Option<(usize, usize)>,
    /// A page showing this file alone, linked when it does not fit on this one.
    pub alone: Option<String>,
}

/// The `path` query of a page: a workspace-relative path, checked as the API checks one.
pub(super) fn only_path(path: Option<&str>) -> Result<Option<rewind::files::RelPath>, PageError> {
    match path.filter(|p| !p.is_empty()) {
        Some(p) => Ok(Some(rewind::files::RelPath::parse(p.as_bytes())?)),
        None => Ok(None),
    }
}

/// `text` percent-encoded for a URL's query.
pub(super) fn query_value(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// Writes a file's block: header with its status, path and buttons, then its hunks (each with
/// the buttons `hunk_actions` gives it) or a note saying why it has none. Spends `budget` lines.
pub(super) fn file_block(
    out: &mut String,
    f: &FileBlock,
    hunk_actions: &dyn Fn(&ReviewHunk) -> String,
    budget: &mut usize,
) {
    let c = f.change;
    let l = letter(c.status);
    let whole = if f.hunks.is_some() { "" } else { " whole" };
    let _ = write!(
        out,
        "<section class=\"file{whole}\" tabindex=\"-1\" id=\"f{}\" data-path=\"{}\">\
         <header><span class=\"st st-{l}\" title=\"{}\">{l}</span><span class=\"name\">{}</span>\
         <span class=\"actions\">{}</span></header>",
        f.index,
        html::path(&c.path),
        c.status.name(),
        display_path(c),
        f.actions,
    );
    match f.hunks {
        Some(hunks) => {
            let lines: usize = hunks.iter().map(|h| h.lines.len()).sum();
            if lines > *budget {
                let alone = match &f.alone {
                    Some(href) => format!(
                        " <a class=\"alone\" href=\"{}\">Show this file alone</a>",
                        html::escape(href)
                    ),
                    None => String::new(),
                };
                let _ = write!(
                    out,
                    "<p class=\"note\">{} hunks, {lines} lines: too large to show on this page \
                     with the others (the whole file can still be taken or put back).{alone}</p>",
                    hunks.len()
                );
            } else {
                *budget -= lines;
                let lang = highlight::lang_for(&c.path);
                for h in hunks {
                    hunk_block(out, h, &hunk_actions(h), lang);
                }
            }
        }
        None => {
            let _ = write!(
                out,
                "<p class=\"note\">{}</p>",
                html::escape(&no_hunks_note(c, f.sizes))
            );
        }
    }
    out.push_str("</section>");
}

/// Why a change has no hunks to show.
fn no_hunks_note(c: &FileChange, sizes: Option<(usize, usize)>) -> String {
    let kind = |e: &Option<rewind::diff::EntryState>| e.map(|e| e.kind);
    let sym = |k: Option<Kind>| k == Some(Kind::Symlink);
    match c.status {
        ChangeStatus::Renamed => format!(
            "renamed from {}, content unchanged",
            String::from_utf8_lossy(c.old_path())
        ),
        ChangeStatus::ModeChanged => {
            let exec = |k: Option<Kind>| {
                if k == Some(Kind::Executable) {
                    "executable"
                } else {
                    "not executable"
                }
            };
            format!(
                "mode changed: {} → {}",
                exec(kind(&c.old)),
                exec(kind(&c.new))
            )
        }
        ChangeStatus::TypeChanged => "changed between a file and a symlink".into(),
        _ if sym(kind(&c.old)) || sym(kind(&c.new)) => "symlink (taken whole)".into(),
        _ => {
            let size = |e: &Option<rewind::diff::EntryState>| e.map_or(0, |e| e.size);
            let (o, n) = sizes.unwrap_or((size(&c.old) as usize, size(&c.new) as usize));
            match c.status {
                ChangeStatus::Added if n == 0 => "new empty file".into(),
                ChangeStatus::Deleted if o == 0 => "empty file deleted".into(),
                _ => format!("binary file: {o} → {n} bytes (taken whole)"),
            }
        }
    }
}

/// Writes one hunk: its range header (with `actions`), then its lines numbered on both sides,
/// coloured by `lang`. Old-side and new-side lines keep their own tokenizer state (a removed
/// line that opens a comment does not colour the added line after it).
fn hunk_block(out: &mut String, h: &ReviewHunk, actions: &str, lang: Option<&highlight::Lang>) {
    let settled = if h.pending { "" } else { " settled" };
    let _ = write!(
        out,
        "<div class=\"hunk{settled}\" tabindex=\"-1\" data-hunk=\"{}\">\
         <div class=\"hunk-head\"><span>@@ -{},{} +{},{} @@</span>{}\
         <span class=\"actions\">{actions}</span></div><table class=\"code\">",
        html::escape(&h.id),
        h.old_start,
        h.old_lines,
        h.new_start,
        h.new_lines,
        if h.pending {
            ""
        } else {
            "<span class=\"tag\">accepted</span>"
        },
    );
    let (mut old_no, mut new_no) = (h.old_start, h.new_start);
    let (mut old_state, mut new_state) = (HlState::Code, HlState::Code);
    for line in &h.lines {
        let (mark, text) = line.split_at(line.chars().next().map_or(0, char::len_utf8));
        let text = text.strip_suffix('\n').unwrap_or(text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let (class, o, n, state) = match mark {
            "-" => {
                old_no += 1;
                ("del", Some(old_no - 1), None, &mut old_state)
            }
            "+" => {
                new_no += 1;
                ("add", None, Some(new_no - 1), &mut new_state)
            }
            _ => {
                old_no += 1;
                new_no += 1;
                ("ctx", Some(old_no - 1), Some(new_no - 1), &mut new_state)
            }
        };
        let num = |n: Option<usize>| n.map(|n| n.to_string()).unwrap_or_default();
        let _ = write!(
            out,
            "<tr class=\"{class}\"><td class=\"ln\">{}</td><td class=\"ln\">{}</td>\
             <td class=\"mk\">{}</td><td class=\"tx\">",
            num(o),
            num(n),
            html::escape(mark),
        );
        match lang {
            Some(lang) => highlight::line_html(lang, text, state, out),
            None => html::escape_into(out, text),
        }
        if class == "ctx" {
            old_state = new_state;
        }
        out.push_str("</td></tr>");
    }
    out.push_str("</table></div>");
}
