//! Reading: workspaces, snapshots and their log, trees, file content (streamed, with ranges),
//! the operation log.

use std::io::{self, Read, Seek};

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rewind::history::LogQuery;
use rewind::store::tree::Kind;

use super::{blocking, query_all, root_of, snapshot_id, tags_by_id, text, workspace};
use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::paths;
use rewind::wire::{ErrorCode, LogEntry, SnapshotShown, Workspace};

/// `GET /v1/health`.
pub async fn health(State(st): State<AppState>) -> Json<rewind::wire::Health> {
    Json(rewind::wire::Health {
        ok: true,
        version: env!("CARGO_PKG_VERSION").to_string(),
        store: st.store().dir().display().to_string(),
    })
}

/// `GET /v1/workspaces`.
pub async fn workspaces(State(st): State<AppState>) -> ApiResult<Json<Vec<Workspace>>> {
    blocking(&st, |st| {
        let store = st.store();
        let all = store.reader()?.workspaces()?;
        let out = all
            .iter()
            .map(|w| Workspace::new(store, w))
            .collect::<rewind::Result<Vec<_>>>()?;
        Ok(Json(out))
    })
    .await
}

/// `GET /v1/workspaces/{ws}`.
pub async fn workspace_get(
    State(st): State<AppState>,
    Path(ws): Path<u64>,
) -> ApiResult<Json<Workspace>> {
    blocking(&st, move |st| {
        let w = workspace(st.store(), ws)?;
        Ok(Json(Workspace::new(st.store(), &w)?))
    })
    .await
}

fn num<T: std::str::FromStr>(q: Option<&str>, key: &str) -> ApiResult<Option<T>> {
    match query_all(q, key).last() {
        None => Ok(None),
        Some(v) => v
            .parse()
            .map(Some)
            .map_err(|_| ApiError::bad_request(format!("{key}={v}: not a number"))),
    }
}

/// `GET /v1/workspaces/{ws}/sessions`: what `log --by-session` lists: each agent session
/// that recorded snapshots, the most recently active first, with the lines it added and
/// removed and whether they are still in the live tree.
pub async fn sessions(
    State(st): State<AppState>,
    Path(ws): Path<u64>,
) -> ApiResult<Json<Vec<rewind::wire::Session>>> {
    blocking(&st, move |st| {
        let store = st.store();
        let w = workspace(store, ws)?;
        let list = rewind::session::sessions(store, &super::root_of(&w), w.id())?;
        Ok(Json(list.iter().map(rewind::wire::Session::from).collect()))
    })
    .await
}

/// `GET /v1/workspaces/{ws}/runs?from=A&to=B`: what `diff A B --by-run` shows: the change
/// between two snapshots grouped by the run or agent tool call that made each line.
pub async fn runs(
    State(st): State<AppState>,
    Path(ws): Path<u64>,
    RawQuery(q): RawQuery,
) -> ApiResult<Json<rewind::wire::RangeRuns>> {
    let q = q.as_deref();
    let one = |k: &str| {
        query_all(q, k)
            .pop()
            .ok_or_else(|| ApiError::bad_request(format!("{k}=REV is required")))
    };
    let (from, to) = (one("from")?, one("to")?);
    blocking(&st, move |st| {
        let store = st.store();
        let w = workspace(store, ws)?;
        let root = root_of(&w);
        let a = snapshot_id(store, &root, &from)?;
        let b = snapshot_id(store, &root, &to)?;
        let by = rewind::review_runs::by_run(store, w.id(), a, b)?;
        Ok(Json(rewind::wire::RangeRuns::new(&a, &b, by)))
    })
    .await
}

/// `GET /v1/workspaces/{ws}/snapshots?limit=&meta=k=v&path=&since_ns=&until_ns=&label=`.
pub async fn snapshots(
    State(st): State<AppState>,
    Path(ws): Path<u64>,
    RawQuery(q): RawQuery,
) -> ApiResult<Json<Vec<LogEntry>>> {
    let q = q.as_deref();
    let meta = super::query_meta(q)?;
    let path = paths::named_paths(&query_all(q, "path"), &query_all(q, "path_bytes"))?.pop();
    let query = LogQuery {
        limit: num(q, "limit")?.unwrap_or(50),
        path,
        meta,
        label: query_all(q, "label").pop(),
        since_ns: num(q, "since_ns")?,
        until_ns: num(q, "until_ns")?,
    };
    blocking(&st, move |st| {
        let store = st.store();
        let w = workspace(store, ws)?;
        let reader = store.reader()?;
        let tags = tags_by_id(store)?;
        let rows = rewind::history::log(store, &reader, w.id(), &query)?;
        let out: Vec<LogEntry> = rows
            .iter()
            .map(|e| LogEntry::new(e, tags.get(&e.id).map_or(&[], Vec::as_slice)))
            .collect();
        Ok(Json(out))
    })
    .await
}

/// `GET /v1/workspaces/{ws}/snapshots/{rev}`: the snapshot and what changed since its parent.
pub async fn show(
    State(st): State<AppState>,
    Path((ws, rev)): Path<(u64, String)>,
) -> ApiResult<Json<SnapshotShown>> {
    blocking(&st, move |st| {
        let store = st.store();
        let w = workspace(store, ws)?;
        let root = root_of(&w);
        let id = snapshot_id(store, &root, &rev)?;
        let rec = store.reader()?.snapshot(&id)?;
        let tags = tags_by_id(store)?;
        let shown = SnapshotShown::new(store, &rec, tags.get(&id).map_or(&[], Vec::as_slice))?;
        Ok(Json(shown))
    })
    .await
}

/// `GET /v1/workspaces/{ws}/tree/{rev}?path=DIR`.
pub async fn tree(
    State(st): State<AppState>,
    Path((ws, rev)): Path<(u64, String)>,
    RawQuery(q): RawQuery,
) -> ApiResult<Json<rewind::wire::Tree>> {
    let dir = match query_all(q.as_deref(), "path").last() {
        Some(p) if !p.is_empty() => paths::rel_path(p)?.into_bytes(),
        _ => Vec::new(),
    };
    blocking(&st, move |st| {
        let store = st.store();
        let w = workspace(store, ws)?;
        let id = snapshot_id(store, &root_of(&w), &rev)?;
        let reader = store.reader()?;
        let mut tree_id = reader.snapshot(&id)?.root();
        if !dir.is_empty() {
            match reader.lookup(&tree_id, &dir)? {
                Some(e) if e.kind == Kind::Dir => tree_id = e.id,
                Some(_) => {
                    return Err(ApiError::bad_request(format!(
                        "{}: not a directory",
                        text(&dir)
                    )));
                }
                None => {
                    return Err(ApiError::not_found(format!(
                        "{}: not in {}",
                        text(&dir),
                        id.short()
                    )));
                }
            }
        }
        let mut entries = Vec::new();
        for e in &reader.tree(&tree_id)?.entries {
            let path = rewind::files::child_path(&dir, &e.name);
            let mut entry = rewind::wire::TreeEntry::new(&path, e.kind, e.size, &e.id);
            if e.kind == Kind::Symlink {
                entry.target = Some(text(&reader.read_blob(&e.id)?));
            }
            entries.push(entry);
        }
        Ok(Json(rewind::wire::Tree {
            rev: id.hex(),
            path: text(&dir),
            path_bytes: rewind::wire::path_bytes(&dir),
            entries,
        }))
    })
    .await
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Dir => "dir",
        k => k.name(),
    }
}

/// A single byte range, `bytes=A-B`, `bytes=A-` or `bytes=-N`, against a body of `size`:
/// Ok(None) without a Range header, Err for one that cannot be satisfied.
fn range(headers: &HeaderMap, size: u64) -> Result<Option<(u64, u64)>, ()> {
    let Some(h) = headers.get(header::RANGE) else {
        return Ok(None);
    };
    let spec = h.to_str().map_err(|_| ())?;
    let spec = spec.strip_prefix("bytes=").ok_or(())?;
    if spec.contains(',') {
        // Several ranges: served whole, as RFC 9110 allows.
        return Ok(None);
    }
    let (a, b) = spec.split_once('-').ok_or(())?;
    let (start, end) = match (a.trim(), b.trim()) {
        ("", n) => {
            let n: u64 = n.parse().map_err(|_| ())?;
            if n == 0 {
                return Err(());
            }
            (size.saturating_sub(n), size.saturating_sub(1))
        }
        (a, "") => (a.parse().map_err(|_| ())?, size.saturating_sub(1)),
        (a, b) => (
            a.parse().map_err(|_| ())?,
            b.parse::<u64>()
                .map_err(|_| ())?
                .min(size.saturating_sub(1)),
        ),
    };
    if start >= size || end < start {
        return Err(());
    }
    Ok(Some((start, end)))
}

/// A response of `size` bytes honouring `Range`, its body from `open(skip, len)`.
pub(crate) fn ranged<F>(
    headers: &HeaderMap,
    size: u64,
    content_type: &'static str,
    open: F,
) -> Response
where
    F: FnOnce(u64, u64, &mut super::stream::ChannelWriter) -> io::Result<()> + Send + 'static,
{
    let (status, start, len, content_range) = match range(headers, size) {
        Ok(None) => (StatusCode::OK, 0, size, None),
        Ok(Some((a, b))) => (
            StatusCode::PARTIAL_CONTENT,
            a,
            b - a + 1,
            Some(format!("bytes {a}-{b}/{size}")),
        ),
        Err(()) => {
            let mut r = ApiError::new(
                StatusCode::RANGE_NOT_SATISFIABLE,
                ErrorCode::RangeNotSatisfiable,
                format!("the range cannot be served from {size} bytes"),
            )
            .into_response();
            if let Ok(v) = HeaderValue::from_str(&format!("bytes */{size}")) {
                r.headers_mut().insert(header::CONTENT_RANGE, v);
            }
            return r;
        }
    };
    let body = super::stream::body_from(move |w| open(start, len, w));
    let mut r = (status, body).into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    if let Some(v) = content_range.and_then(|v| HeaderValue::from_str(&v).ok()) {
        h.insert(header::CONTENT_RANGE, v);
    }
    r
}

/// Copies `len` bytes of `r` after skipping `skip`.
pub(crate) fn copy_range(
    r: &mut dyn Read,
    skip: u64,
    len: u64,
    w: &mut dyn io::Write,
) -> io::Result<()> {
    io::copy(&mut r.take(skip), &mut io::sink())?;
    io::copy(&mut r.take(len), w)?;
    Ok(())
}

/// `GET /v1/workspaces/{ws}/files/{rev}/{*path}`: a file's bytes at a snapshot or live.
pub async fn file(
    State(st): State<AppState>,
    Path((ws, rev, path)): Path<(u64, String, String)>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let rel = paths::rel_path(&path)?;
    enum Source {
        Live(std::path::PathBuf),
        Blob(rewind::Id, &'static str),
    }
    let (source, size) = blocking(&st, move |st| {
        let store = st.store();
        let w = workspace(store, ws)?;
        let root = root_of(&w);
        if rev == "live" {
            let full = paths::live_file(&root, &rel)?;
            let size = std::fs::symlink_metadata(&full)
                .map_err(|e| ApiError::internal(e.to_string()))?
                .len();
            return Ok((Source::Live(full), size));
        }
        let id = snapshot_id(store, &root, &rev)?;
        let reader = store.reader()?;
        let root_tree = reader.snapshot(&id)?.root();
        match reader.lookup(&root_tree, &rel)? {
            Some(e) if e.kind == Kind::Dir => Err(ApiError::bad_request(format!(
                "{}: a directory (see /tree)",
                text(&rel)
            ))),
            Some(e) => Ok((Source::Blob(e.id, kind_name(e.kind)), e.size)),
            None => Err(ApiError::not_found(format!(
                "{}: not in snapshot {}",
                text(&rel),
                id.short()
            ))),
        }
    })
    .await?;
    let kind = match &source {
        Source::Live(_) => "file",
        Source::Blob(_, k) => k,
    };
    let st2 = st.clone();
    let mut r = ranged(
        &headers,
        size,
        "application/octet-stream",
        move |skip, len, w| match source {
            Source::Live(p) => {
                use std::os::unix::fs::OpenOptionsExt;
                let mut f = std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(&p)?;
                f.seek(io::SeekFrom::Start(skip))?;
                io::copy(&mut f.take(len), w)?;
                Ok(())
            }
            Source::Blob(id, _) => {
                let reader = st2.store().reader().map_err(io::Error::other)?;
                let mut b = reader.blob_reader(&id).map_err(io::Error::other)?;
                copy_range(&mut b, skip, len, w)
            }
        },
    );
    r.headers_mut()
        .insert("x-rewind-kind", HeaderValue::from_static(kind));
    Ok(r)
}

/// `GET /v1/workspaces/{ws}/ops?limit=`: the operation log, one row per user action.
pub async fn ops(
    State(st): State<AppState>,
    Path(ws): Path<u64>,
    RawQuery(q): RawQuery,
) -> ApiResult<Json<Vec<rewind::wire::Op>>> {
    let limit: usize = num(q.as_deref(), "limit")?.unwrap_or(50);
    blocking(&st, move |st| {
        let store = st.store();
        let w = workspace(store, ws)?;
        // Bookkeeping rows fold into actions: read more than asked for.
        let rows = store
            .reader()?
            .ops(Some(w.path()), limit.saturating_mul(3).max(limit + 2))?;
        let mut actions = rewind::store::oplog::fold_actions(rows);
        actions.truncate(limit);
        Ok(Json(rewind::wire::Op::list(store, &actions)?))
    })
    .await
}
