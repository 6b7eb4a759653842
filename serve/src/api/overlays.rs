//! Overlays: create, list, diff with hunk ids, run a command inside, accept or reject by path
//! or by hunk, drop.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use rewind::BackendChoice;
use rewind::overlay as ov;
use rewind::wire::{Overlay, OverlayAccept, OverlayCreated, OverlayReject};
use serde::Deserialize;

use super::edits::body;
use super::{blocking, root_of, snapshot_id, workspace};
use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::guard::Caller;
use crate::paths;

/// A backend by name (`auto` when none).
pub(crate) fn backend(name: Option<&str>) -> ApiResult<BackendChoice> {
    match name {
        None | Some("auto") => Ok(BackendChoice::Auto),
        Some("copy") => Ok(BackendChoice::Copy),
        Some("namespace") => Ok(BackendChoice::Namespace),
        Some(o) => Err(ApiError::bad_request(format!(
            "backend {o:?}: auto, copy or namespace"
        ))),
    }
}

/// `GET /v1/overlays`.
pub async fn list(State(st): State<AppState>) -> ApiResult<Json<Vec<Overlay>>> {
    blocking(&st, |st| {
        let store = st.store();
        let all = ov::list(store)?
            .iter()
            .map(|r| Overlay::new(store, r))
            .collect::<rewind::Result<Vec<_>>>()?;
        Ok(Json(all))
    })
    .await
}

/// `GET /v1/workspaces/{ws}/overlays`.
pub async fn list_of_workspace(
    State(st): State<AppState>,
    Path(ws): Path<u64>,
) -> ApiResult<Json<Vec<Overlay>>> {
    blocking(&st, move |st| {
        let store = st.store();
        let w = workspace(store, ws)?;
        let all = ov::list(store)?
            .iter()
            .filter(|r| r.workspace() == w.path())
            .map(|r| Overlay::new(store, r))
            .collect::<rewind::Result<Vec<_>>>()?;
        Ok(Json(all))
    })
    .await
}

/// `POST /v1/workspaces/{ws}/overlays` body.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct CreateBody {
    name: Option<String>,
    backend: Option<String>,
    rev: Option<String>,
}

/// `POST /v1/workspaces/{ws}/overlays`.
pub async fn create(
    State(st): State<AppState>,
    Path(ws): Path<u64>,
    caller: Caller,
    b: Bytes,
) -> ApiResult<(StatusCode, Json<OverlayCreated>)> {
    let b: CreateBody = body(&b)?;
    let backend = backend(b.backend.as_deref())?;
    blocking(&st, move |st| {
        let store = &st.store_for(&caller, caller.command(&[]))?;
        let w = workspace(store, ws)?;
        let root = root_of(&w);
        let from = match &b.rev {
            Some(r) => Some(snapshot_id(store, &root, r)?),
            None => None,
        };
        let opts = rewind::CreateOptions {
            from,
            name: b.name,
            backend,
            ..rewind::CreateOptions::default()
        };
        let c = ov::create(store, &root, &opts, &rewind::NoProgress)?;
        Ok((StatusCode::CREATED, Json(OverlayCreated::new(store, &c)?)))
    })
    .await
}

/// `GET /v1/overlays/{ov}`.
pub async fn show(State(st): State<AppState>, Path(key): Path<String>) -> ApiResult<Json<Overlay>> {
    blocking(&st, move |st| {
        let r = ov::find(st.store(), &key)?;
        Ok(Json(Overlay::new(st.store(), &r)?))
    })
    .await
}

/// `DELETE /v1/overlays/{ov}`.
pub async fn drop_overlay(
    State(st): State<AppState>,
    Path(key): Path<String>,
    caller: Caller,
) -> ApiResult<Json<rewind::wire::OverlayDropped>> {
    blocking(&st, move |st| {
        let store = &st.store_for(&caller, caller.command(&[]))?;
        let r = ov::find(store, &key)?;
        r.drop_overlay(store)?;
        Ok(Json(rewind::wire::OverlayDropped { dropped: r.id() }))
    })
    .await
}

/// `GET /v1/overlays/{ov}/diff`: the pending changes, each text change with hunk ids.
pub async fn diff(
    State(st): State<AppState>,
    Path(key): Path<String>,
) -> ApiResult<Json<rewind::wire::OverlayDiff>> {
    blocking(&st, move |st| {
        let store = st.store();
        let mut r = ov::find(store, &key)?;
        let od = r.diff(store, true)?;
        let dopts = rewind::diff::DiffOptions::default();
        Ok(Json(rewind::wire::OverlayDiff::new(
            store, &r, &od, &dopts, None,
        )?))
    })
    .await
}

/// `GET /v1/overlays/{ov}/runs`: the pending hunks grouped by the command run in the overlay
/// that made them (`overlay diff --by-run`); accept and reject take a run's number.
pub async fn runs(
    State(st): State<AppState>,
    Path(key): Path<String>,
) -> ApiResult<Json<rewind::wire::OverlayRuns>> {
    blocking(&st, move |st| {
        let store = st.store();
        let mut r = ov::find(store, &key)?;
        let od = r.diff(store, false)?;
        let groups = r.by_run(store, &od.diff)?;
        Ok(Json(rewind::wire::OverlayRuns::new(r.id(), groups)))
    })
    .await
}

/// `POST /v1/overlays/{ov}/accept` and `/reject` body.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct PickBody {
    paths: Vec<String>,
    paths_bytes: Vec<String>,
    hunks: Vec<String>,
    policy: Option<String>,
    include_ignored: bool,
    run: Option<u32>,
}

/// `POST /v1/overlays/{ov}/accept`: everything pending, some paths, or some hunks.
pub async fn accept(
    State(st): State<AppState>,
    Path(key): Path<String>,
    caller: Caller,
    b: Bytes,
) -> ApiResult<Json<OverlayAccept>> {
    use rewind::carry::ConflictPolicy as P;
    let b: PickBody = body(&b)?;
    if b.run.is_some() && !(b.paths.is_empty() && b.paths_bytes.is_empty() && b.hunks.is_empty()) {
        return Err(ApiError::bad_request(
            "`run` takes the place of `paths` and `hunks`: give one or the other",
        ));
    }
    let paths = paths::named_paths(&b.paths, &b.paths_bytes)?;
    let policy = match b.policy.as_deref() {
        // As the CLI's accept: a conflicting path is listed in `conflicts` (path, regions,
        // why) and stays pending while the rest is accepted.
        None | Some("skip") => P::Skip,
        Some("abort") | Some("fail") => P::Fail,
        Some("markers") => P::Markers,
        Some("ours") => P::Ours,
        Some("theirs") => P::Theirs,
        Some(o) => {
            return Err(ApiError::bad_request(format!(
                "policy {o:?}: abort, skip, markers, ours or theirs"
            )));
        }
    };
    blocking(&st, move |st| {
        let store = &st.store_for(&caller, caller.command(&[]))?;
        let mut r = ov::find(store, &key)?;
        let opts = rewind::AcceptOptions {
            paths,
            policy,
            include_ignored: b.include_ignored,
            hunks: b.hunks,
            edited: Vec::new(),
            run: b.run,
        };
        let rep = r.accept(store, &opts)?;
        Ok(Json(OverlayAccept::new(r.id(), &rep)))
    })
    .await
}

/// `POST /v1/overlays/{ov}/reject`: sets paths or hunks back to the base inside the overlay.
pub async fn reject(
    State(st): State<AppState>,
    Path(key): Path<String>,
    caller: Caller,
    b: Bytes,
) -> ApiResult<Json<OverlayReject>> {
    let b: PickBody = body(&b)?;
    if b.run.is_some() && !(b.paths.is_empty() && b.paths_bytes.is_empty() && b.hunks.is_empty()) {
        return Err(ApiError::bad_request(
            "`run` takes the place of `paths` and `hunks`: give one or the other",
        ));
    }
    if b.policy.is_some() || b.include_ignored {
        return Err(ApiError::bad_request(
            "reject takes only paths, hunks and run",
        ));
    }
    let paths = paths::named_paths(&b.paths, &b.paths_bytes)?;
    blocking(&st, move |st| {
        let store = &st.store_for(&caller, caller.command(&[]))?;
        let mut r = ov::find(store, &key)?;
        let rep = match b.run {
            Some(n) => r.reject_run(store, n)?,
            None => r.reject(store, &paths, &b.hunks)?,
        };
        Ok(Json(OverlayReject::new(r.id(), &rep)))
    })
    .await
}

/// `POST /v1/overlays/{ov}/run`: a command inside the overlay, with `rewind run`'s options
/// (but the isolate ones); the run result.
pub async fn run(
    State(st): State<AppState>,
    Path(key): Path<String>,
    caller: Caller,
    b: Bytes,
) -> ApiResult<Response> {
    let (id, root) = blocking(&st, move |st| {
        let r = ov::find(st.store(), &key)?;
        Ok((r.id(), r.workspace_path()))
    })
    .await?;
    let p = super::run::plan(&b, Some(id))?;
    super::run::start(&st, &caller, root, p).await
}

/// `POST /v1/overlays/{ov}/split` body.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct SplitBody {
    hunk: String,
}

/// `POST /v1/overlays/{ov}/split`: the parts of a pending hunk, cut at the unchanged lines
/// between its runs of changes (as `s` in `accept -p`); each part's id is taken by accept and
/// reject like a hunk's. A hunk with one run of changes comes back as its only part.
pub async fn split(
    State(st): State<AppState>,
    Path(key): Path<String>,
    b: Bytes,
) -> ApiResult<Json<rewind::wire::OverlaySplit>> {
    let b: SplitBody = body(&b)?;
    if b.hunk.is_empty() {
        return Err(ApiError::bad_request("`hunk` is empty"));
    }
    blocking(&st, move |st| {
        let store = st.store();
        let mut r = ov::find(store, &key)?;
        let od = r.diff(store, true)?;
        let all = r.review_hunks(store, &od.diff)?;
        for (c, hs) in od.diff.changes.iter().zip(all) {
            let Some(h) = hs.into_iter().flatten().find(|h| h.id == b.hunk) else {
                continue;
            };
            let mut parts = rewind::hunks::split(&c.path, &h);
            for p in &mut parts {
                p.pending = h.pending;
            }
            return Ok(Json(rewind::wire::OverlaySplit::new(
                r.id(),
                &c.path,
                h.id,
                parts,
            )));
        }
        Err(rewind::Error::UnknownHunk {
            hunk: b.hunk,
            overlay: r.id(),
        }
        .into())
    })
    .await
}

/// `POST /v1/overlays/{ov}/snapshots` body.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct SnapshotBody {
    message: Option<String>,
    meta: std::collections::BTreeMap<String, String>,
}

/// `POST /v1/overlays/{ov}/snapshots`: a checkpoint of the overlay's state now, with a message
/// and metadata; restore or diff it by id (it is not in the workspace's log).
pub async fn snapshot(
    State(st): State<AppState>,
    Path(key): Path<String>,
    caller: Caller,
    b: Bytes,
) -> ApiResult<(StatusCode, Json<rewind::wire::OverlaySnapshot>)> {
    let b: SnapshotBody = body(&b)?;
    blocking(&st, move |st| {
        let store = &st.store_for(&caller, caller.command(&[]))?;
        let mut r = ov::find(store, &key)?;
        let meta: Vec<(String, String)> = b.meta.into_iter().collect();
        let id = r.snapshot_state(store, &b.message.unwrap_or_default(), &meta)?;
        let rec = store.reader()?.snapshot(&id)?;
        Ok((
            StatusCode::CREATED,
            Json(rewind::wire::OverlaySnapshot {
                overlay: r.id(),
                snapshot: rewind::wire::Snapshot::new(&rec, &[]),
            }),
        ))
    })
    .await
}
