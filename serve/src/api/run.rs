//! `run` through the API: a command between two snapshots (or inside an overlay). Its progress
//! goes to `/v1/events` as `run` events as it happens; its result is the run-result schema
//! (schemas/run-result.schema.json), returned when it ends (`wait`, the default) or kept for
//! `GET /v1/runs/{run}`.

use std::path::PathBuf;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::edits::body;
use super::{blocking, root_of, workspace};
use crate::AppState;
use crate::error::{ApiError, ApiResult};

/// `POST /v1/workspaces/{ws}/run` body.
#[derive(Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunBody {
    command: Vec<String>,
    message: Option<String>,
    meta: std::collections::BTreeMap<String, String>,
    /// Run in a new overlay (accepted when the command succeeds), as `run --isolate`.
    isolate: bool,
    /// Restore the before snapshot when the command fails.
    rollback_on_failure: bool,
    /// Put the patch into the result.
    capture_patch: bool,
    /// Answer when the run ends (true) or at once with the run's id (false).
    wait: bool,
}

impl Default for RunBody {
    fn default() -> Self {
        RunBody {
            command: Vec::new(),
            message: None,
            meta: Default::default(),
            isolate: false,
            rollback_on_failure: false,
            capture_patch: false,
            wait: true,
        }
    }
}

/// `POST /v1/workspaces/{ws}/run`.
pub async fn run(State(st): State<AppState>, Path(ws): Path<u64>, b: Bytes) -> ApiResult<Response> {
    let b: RunBody = body(&b)?;
    if b.command.is_empty() {
        return Err(ApiError::bad_request("`command` is empty"));
    }
    let root = blocking(&st, move |st| Ok(root_of(&workspace(st.store(), ws)?))).await?;
    let opts = rewind::RunOptions {
        command: b.command.into_iter().map(Into::into).collect(),
        cwd: Some(root.clone()),
        message: b.message.unwrap_or_default(),
        meta: b.meta.into_iter().collect(),
        rollback_on_failure: b.rollback_on_failure,
        capture_patch: b.capture_patch,
        isolate: b.isolate.then(rewind::Isolate::default),
        ..Default::default()
    };
    if b.wait {
        return Ok(start(&st, root, opts, true).await?.into_response());
    }
    let Json(v) = start(&st, root, opts, false).await?;
    Ok((StatusCode::ACCEPTED, Json(v)).into_response())
}

/// Starts a run on the blocking pool: with `wait`, answers with its result; else with
/// `{"run": ID}` at once.
pub(crate) async fn start(
    st: &AppState,
    root: PathBuf,
    opts: rewind::RunOptions,
    wait: bool,
) -> ApiResult<Json<Value>> {
    let id = st.runs().begin(&root);
    let dir = st.store().dir().to_path_buf();
    let st2 = st.clone();
    let ws_text = root.display().to_string();
    let task = tokio::task::spawn_blocking(move || {
        let open = || {
            rewind::Store::open(
                &dir,
                rewind::StoreOptions {
                    create: false,
                    ..Default::default()
                },
            )
        };
        let result = rewind::run(&open, &root, &opts, &mut |e| {
            let mut v = json!(e);
            v["run"] = json!(id);
            st2.events().publish_run(&ws_text, v);
        });
        let out = match result {
            Ok(r) => {
                let v = json!(r.reported());
                st2.runs().finish(id, Ok(v.clone()));
                Ok(v)
            }
            Err(e) => {
                let e = ApiError::from(e);
                st2.runs()
                    .finish(id, Err(json!({"code": e.code, "error": e.message})));
                Err(e)
            }
        };
        st2.events()
            .publish_run(&ws_text, json!({"event": "run_finished", "run": id}));
        out
    });
    if !wait {
        return Ok(Json(json!({"run": id, "status": "running"})));
    }
    let v = task
        .await
        .map_err(|e| ApiError::internal(format!("the run failed: {e}")))??;
    Ok(Json(v))
}

/// `GET /v1/runs/{run}`: `{"run", "status": "running"|"finished"|"failed", "result"|"error"}`.
pub async fn show(State(st): State<AppState>, Path(id): Path<u64>) -> ApiResult<Json<Value>> {
    st.runs().get(id).map(Json).ok_or_else(|| {
        ApiError::not_found(format!("no run {id} (runs are kept while the server runs)"))
    })
}
