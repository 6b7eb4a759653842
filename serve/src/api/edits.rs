//! Writing to a workspace: snapshots, restore, revert, apply, undo and redo. Each is one
//! undoable operation of the library (nothing half written on failure).

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use rewind::NoProgress;
use rewind::wire::{Restore, Undo, Workspace, WorkspaceRegistered};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::{blocking, query_all, root_of, snapshot_id, workspace};
use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::guard::Caller;
use crate::paths;

/// A JSON body that may be empty (then every field takes its default).
pub(crate) fn body<T: DeserializeOwned + Default>(b: &Bytes) -> ApiResult<T> {
    if b.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(b).map_err(|e| ApiError::bad_request(format!("the JSON body: {e}")))
}

/// `POST /v1/workspaces/{ws}/snapshots` body.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct TakeBody {
    message: Option<String>,
    meta: std::collections::BTreeMap<String, String>,
    tags: Vec<String>,
}

/// `POST /v1/workspaces/{ws}/snapshots`.
pub async fn take_snapshot(
    State(st): State<AppState>,
    Path(ws): Path<u64>,
    caller: Caller,
    b: Bytes,
) -> ApiResult<(StatusCode, Json<rewind::wire::SnapshotTaken>)> {
    let b: TakeBody = body(&b)?;
    blocking(&st, move |st| {
        let store = &st.store_for(&caller, caller.command(&[]))?;
        let w = workspace(store, ws)?;
        let opts = rewind::SnapshotOptions {
            message: b.message.unwrap_or_default(),
            meta: b.meta.into_iter().collect(),
            tags: b.tags,
            ..rewind::SnapshotOptions::default()
        };
        let out = rewind::snapshot(store, &root_of(&w), &opts, &NoProgress)?;
        Ok((
            StatusCode::CREATED,
            Json(rewind::wire::SnapshotTaken::new(store, &out.report)?),
        ))
    })
    .await
}

/// `POST /v1/workspaces/{ws}/restore` body.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct RestoreBody {
    rev: Option<String>,
    paths: Vec<String>,
    paths_bytes: Vec<String>,
    hunks: Vec<String>,
    dry_run: bool,
}

/// `POST /v1/workspaces/{ws}/restore`: the whole tree, some paths, or single hunks (ids from
/// the diff from `live` to `rev`); with `dry_run`, what it would write.
pub async fn restore(
    State(st): State<AppState>,
    Path(ws): Path<u64>,
    caller: Caller,
    b: Bytes,
) -> ApiResult<Json<Restore>> {
    let b: RestoreBody = body(&b)?;
    let paths = paths::named_paths(&b.paths, &b.paths_bytes)?;
    blocking(&st, move |st| {
        let store = &st.store_for(&caller, caller.command(&[]))?;
        let w = workspace(store, ws)?;
        let root = root_of(&w);
        let target = snapshot_id(store, &root, b.rev.as_deref().unwrap_or("@"))?;
        if !b.hunks.is_empty() {
            if b.dry_run {
                return Err(ApiError::bad_request(
                    "dry_run previews a restore by path; hunks are restored at once",
                ));
            }
            let r = rewind::hunks::restore_hunks(store, &root, target, &b.hunks, &[])?;
            return Ok(Json(Restore::from_hunks(
                root.display().to_string(),
                target.hex(),
                &r,
            )));
        }
        let opts = rewind::RestoreOptions {
            paths,
            dry_run: b.dry_run,
            ..rewind::RestoreOptions::default()
        };
        let r = rewind::restore(
            store,
            &root,
            target,
            &opts,
            &rewind::OpInfo::default(),
            &NoProgress,
        )?;
        Ok(Json(Restore::new(&r, b.dry_run)))
    })
    .await
}

/// `POST /v1/workspaces/{ws}/revert` body.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct RevertBody {
    from: Option<String>,
    to: Option<String>,
    paths: Vec<String>,
    paths_bytes: Vec<String>,
    hunks: Vec<String>,
    run: Option<u32>,
    markers: bool,
    check: bool,
}

/// `POST /v1/workspaces/{ws}/revert`: takes the change from `from` to `to` back out of the live
/// tree (later edits kept), whole, by path, by hunk (ids from the diff `from`..`to`), or what
/// one run or tool call of it did (`run`, numbered as `GET .../runs` numbers them).
pub async fn revert(
    State(st): State<AppState>,
    Path(ws): Path<u64>,
    caller: Caller,
    b: Bytes,
) -> ApiResult<Json<rewind::wire::Revert>> {
    let b: RevertBody = body(&b)?;
    let paths = paths::named_paths(&b.paths, &b.paths_bytes)?;
    blocking(&st, move |st| {
        let store = &st.store_for(&caller, caller.command(&[]))?;
        let w = workspace(store, ws)?;
        let root = root_of(&w);
        let a = snapshot_id(store, &root, b.from.as_deref().unwrap_or("@~1"))?;
        let z = snapshot_id(store, &root, b.to.as_deref().unwrap_or("@"))?;
        let r = if let Some(n) = b.run {
            rewind::review_runs::revert_run(store, &root, w.id(), a, z, n, b.markers, b.check)?
                .or_conflict()?
        } else if b.hunks.is_empty() {
            rewind::revert::revert(store, &root, a, z, &paths, b.markers, b.check)?
        } else {
            rewind::revert::revert_hunks(store, &root, a, z, &b.hunks, b.markers, b.check)?
        };
        Ok(Json(rewind::wire::Revert::new(&r, b.check)))
    })
    .await
}

fn flag(q: Option<&str>, key: &str) -> ApiResult<bool> {
    match query_all(q, key).pop().as_deref() {
        None | Some("false") | Some("0") => Ok(false),
        Some("true") | Some("1") | Some("") => Ok(true),
        Some(v) => Err(ApiError::bad_request(format!("{key}={v}: true or false"))),
    }
}

/// `POST /v1/workspaces/{ws}/apply?check=&three_way=&base=&strip=&reverse=&markers=`: the body is the
/// patch. All files or none.
pub async fn apply(
    State(st): State<AppState>,
    Path(ws): Path<u64>,
    RawQuery(q): RawQuery,
    caller: Caller,
    patch: Bytes,
) -> ApiResult<Json<rewind::wire::Applied>> {
    let q = q.as_deref();
    let mut opts = rewind::apply::ApplyPatchOptions {
        check: flag(q, "check")?,
        three_way: flag(q, "three_way")?,
        reverse: flag(q, "reverse")?,
        conflict_markers: flag(q, "markers")?,
        ..rewind::apply::ApplyPatchOptions::default()
    };
    if let Some(v) = query_all(q, "strip").pop() {
        opts.strip = v
            .parse()
            .map_err(|_| ApiError::bad_request(format!("strip={v}: not a number")))?;
    }
    let base = query_all(q, "base").pop();
    blocking(&st, move |st| {
        let store = &st.store_for(&caller, caller.command(&[]))?;
        let w = workspace(store, ws)?;
        let root = root_of(&w);
        if let Some(base) = &base {
            // The snapshot the patch was made against, as `rewind apply --base`.
            opts.base = Some(snapshot_id(store, &root, base)?);
            opts.three_way = true;
        }
        let r = rewind::apply::apply_patch(store, &root, &patch, &opts)?;
        Ok(Json(rewind::wire::Applied::new(&r, opts.check)))
    })
    .await
}

/// `POST /v1/workspaces/{ws}/undo` and `/redo` body.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct UndoBody {
    op: Option<u64>,
    force: bool,
}

async fn undo_or_redo(
    st: AppState,
    ws: u64,
    caller: Caller,
    b: Bytes,
    redo: bool,
) -> ApiResult<Json<Undo>> {
    let b: UndoBody = body(&b)?;
    if redo && b.op.is_some() {
        return Err(ApiError::bad_request(
            "redo takes no op: it takes back the latest undo",
        ));
    }
    blocking(&st, move |st| {
        let store = &st.store_for(&caller, caller.command(&[]))?;
        let w = workspace(store, ws)?;
        let (target, r) =
            rewind::undo::undo(store, &root_of(&w), redo, b.op, b.force, &NoProgress)?;
        Ok(Json(Undo::new(&target, &r, redo)))
    })
    .await
}

/// `POST /v1/workspaces/{ws}/undo`.
pub async fn undo(
    State(st): State<AppState>,
    Path(ws): Path<u64>,
    caller: Caller,
    b: Bytes,
) -> ApiResult<Json<Undo>> {
    undo_or_redo(st, ws, caller, b, false).await
}

/// `POST /v1/workspaces/{ws}/redo`.
pub async fn redo(
    State(st): State<AppState>,
    Path(ws): Path<u64>,
    caller: Caller,
    b: Bytes,
) -> ApiResult<Json<Undo>> {
    undo_or_redo(st, ws, caller, b, true).await
}

/// `POST /v1/workspaces` body.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct InitBody {
    path: String,
    force: bool,
}

/// `POST /v1/workspaces`: registers a directory as a workspace, as `rewind init` does (201;
/// 200 when it was registered already). `/` and the home directory need `force`.
pub async fn init(
    State(st): State<AppState>,
    b: Bytes,
) -> ApiResult<(StatusCode, Json<WorkspaceRegistered>)> {
    let b: InitBody = body(&b)?;
    let dir = std::path::PathBuf::from(&b.path);
    if !dir.is_absolute() {
        return Err(ApiError::bad_request(format!(
            "path {:?}: an absolute directory path",
            b.path
        )));
    }
    blocking(&st, move |st| {
        let store = st.store();
        let mut refused = store.refused_workspaces().to_vec();
        refused.extend(std::env::var_os("HOME").map(std::path::PathBuf::from));
        let root = rewind::workspace::canonical(&dir, b.force, &refused)?;
        let known = store.reader()?.workspace(&root)?.is_some();
        let w = store.register_workspace(&root)?;
        let status = if known {
            StatusCode::OK
        } else {
            StatusCode::CREATED
        };
        Ok((
            status,
            Json(WorkspaceRegistered {
                workspace: Workspace::new(store, &w)?,
                newly_registered: !known,
                store: store.dir().display().to_string(),
            }),
        ))
    })
    .await
}
