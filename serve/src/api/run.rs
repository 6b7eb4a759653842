//! `run` through the API: a command between two snapshots (or inside an overlay), with every
//! option `rewind run` takes. Its progress goes to `/v1/events` as `run` events as it happens;
//! its result is the run-result schema (schemas/run-result.schema.json), with each file's hunks
//! when asked, returned when it ends (`wait`, the default) or kept for `GET /v1/runs/{run}`.

use std::path::PathBuf;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use rewind::contract::{Contract, OnViolation};
use rewind::run::isolate::AcceptWhen;
use serde::Deserialize;

use super::edits::body;
use super::{blocking, root_of, workspace};
use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::guard::Caller;

/// The body of both run routes (`POST /v1/workspaces/{ws}/run`, `POST /v1/overlays/{ov}/run`):
/// the options of `rewind run`, by the names of its flags.
#[derive(Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunBody {
    command: Vec<String>,
    message: Option<String>,
    meta: std::collections::BTreeMap<String, String>,
    /// Run in a new overlay (accepted when the command succeeds), as `run --isolate`.
    isolate: bool,
    /// With `isolate`: when to accept (`on-success`, `never`, `always`).
    accept: Option<String>,
    /// With `isolate`: the backend of the overlay it creates (`auto`, `copy`, `namespace`).
    backend: Option<String>,
    /// With `isolate`: run in this overlay (created under this name the first time).
    overlay: Option<String>,
    /// With `isolate`: keep the overlay after a full accept.
    keep: bool,
    /// Restore the before snapshot when the command fails.
    rollback_on_failure: bool,
    /// Put the patch into the result.
    capture_patch: bool,
    /// Largest patch kept inline (bytes); above it the patch is stored as an artifact.
    max_patch_bytes: Option<u64>,
    /// Which paths the command may change (the contract file's fields).
    contract: Contract,
    /// `report`, `revert` or `fail` (wins over the contract's).
    on_violation: Option<OnViolation>,
    /// Extra gitignore-style globs both snapshots leave out.
    ignore: Vec<String>,
    /// Give the command a scratch directory (`REWIND_SCRATCH`), kept with the run.
    scratch: bool,
    /// Per-file deadline for line diffs, seconds.
    diff_timeout: Option<f64>,
    /// Give each changed file of the result its hunks (ids that accept, reject and revert
    /// take): one call instead of a run and a diff.
    hunks: bool,
    /// Answer when the run ends (true) or at once with the run's id (false, status 202).
    wait: bool,
}

impl Default for RunBody {
    fn default() -> Self {
        RunBody {
            command: Vec::new(),
            message: None,
            meta: Default::default(),
            isolate: false,
            accept: None,
            backend: None,
            overlay: None,
            keep: false,
            rollback_on_failure: false,
            capture_patch: false,
            max_patch_bytes: None,
            contract: Contract::default(),
            on_violation: None,
            ignore: Vec::new(),
            scratch: false,
            diff_timeout: None,
            hunks: false,
            wait: true,
        }
    }
}

/// A checked run request: the library's options, and what the server does around the run.
pub(crate) struct Planned {
    opts: rewind::RunOptions,
    scratch: bool,
    hunks: bool,
    wait: bool,
}

/// Parses a run body; `overlay` is the overlay of `POST /v1/overlays/{ov}/run` (which takes
/// no isolate options: it is isolated already).
pub(crate) fn plan(b: &Bytes, overlay: Option<u64>) -> ApiResult<Planned> {
    let b: RunBody = body(b)?;
    if b.command.is_empty() {
        return Err(ApiError::bad_request("`command` is empty"));
    }
    let isolate_opts = b.accept.is_some() || b.backend.is_some() || b.overlay.is_some() || b.keep;
    if overlay.is_some() && (b.isolate || isolate_opts || b.rollback_on_failure) {
        return Err(ApiError::bad_request(
            "an overlay's run takes no isolate, accept, backend, overlay, keep or rollback_on_failure",
        ));
    }
    if overlay.is_none() && !b.isolate && isolate_opts {
        return Err(ApiError::bad_request(
            "accept, backend, overlay and keep need `isolate: true`",
        ));
    }
    // An overlay's state is snapshotted with its base's ignore rules: extra globs would be
    // applied to neither snapshot, so they are refused rather than silently dropped.
    if (b.isolate || overlay.is_some()) && !b.ignore.is_empty() {
        return Err(ApiError::bad_request(
            "ignore is not available with isolate or in an overlay (its state keeps the base's ignore rules)",
        ));
    }
    if (b.isolate || overlay.is_some()) && b.scratch {
        return Err(ApiError::bad_request(
            "scratch is not available with isolate or in an overlay",
        ));
    }
    let accept = match b.accept.as_deref() {
        None | Some("on-success") => AcceptWhen::OnSuccess,
        Some("never") => AcceptWhen::Never,
        Some("always") => AcceptWhen::Always,
        Some(o) => {
            return Err(ApiError::bad_request(format!(
                "accept {o:?}: on-success, never or always"
            )));
        }
    };
    let backend = super::overlays::backend(b.backend.as_deref())?;
    let diff_timeout = match b.diff_timeout {
        None => rewind::RunOptions::default().diff_timeout,
        Some(s) if s.is_finite() && s > 0.0 => std::time::Duration::from_secs_f64(s.min(1e6)),
        Some(s) => {
            return Err(ApiError::bad_request(format!(
                "diff_timeout {s}: a positive number of seconds"
            )));
        }
    };
    let on_violation = b
        .on_violation
        .or(b.contract.on_violation)
        .unwrap_or_default();
    // Globs are checked here so a bad one is a 400 before anything runs.
    rewind::contract::Checker::new(&b.contract)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let isolate = match overlay {
        Some(id) => Some(rewind::Isolate {
            overlay: Some(id.to_string()),
            existing: true,
            accept: AcceptWhen::Never,
            keep: true,
            ..Default::default()
        }),
        None => b.isolate.then(|| rewind::Isolate {
            backend,
            accept,
            overlay: b.overlay.clone(),
            keep: b.keep,
            ..Default::default()
        }),
    };
    Ok(Planned {
        opts: rewind::RunOptions {
            command: b.command.into_iter().map(Into::into).collect(),
            message: b.message.unwrap_or_default(),
            meta: b.meta.into_iter().collect(),
            rollback_on_failure: b.rollback_on_failure,
            capture_patch: b.capture_patch,
            max_patch_bytes: b
                .max_patch_bytes
                .unwrap_or(rewind::RunOptions::default().max_patch_bytes),
            contract: b.contract,
            on_violation,
            diff_timeout,
            isolate,
            ignore_globs: b.ignore,
            ..Default::default()
        },
        scratch: b.scratch,
        hunks: b.hunks,
        wait: b.wait,
    })
}

/// `POST /v1/workspaces/{ws}/run`.
pub async fn run(
    State(st): State<AppState>,
    Path(ws): Path<u64>,
    caller: Caller,
    b: Bytes,
) -> ApiResult<Response> {
    let mut p = plan(&b, None)?;
    let root = blocking(&st, move |st| Ok(root_of(&workspace(st.store(), ws)?))).await?;
    p.opts.cwd = Some(root.clone());
    start(&st, &caller, root, p).await
}

/// Starts a run on the blocking pool: with `wait`, answers with its result; else 202 with
/// a `RunStarted` at once. The operation log records `caller` and the
/// command it ran.
pub(crate) async fn start(
    st: &AppState,
    caller: &Caller,
    root: PathBuf,
    p: Planned,
) -> ApiResult<Response> {
    let Planned {
        mut opts,
        scratch,
        hunks,
        wait,
    } = p;
    let id = st.runs().begin(&root);
    let dir = st.store().dir().to_path_buf();
    let st2 = st.clone();
    let ws_text = root.display().to_string();
    let mut shown = vec!["--".to_string()];
    shown.extend(
        opts.command
            .iter()
            .map(|a| a.to_string_lossy().into_owned()),
    );
    let sopts = st.store_options(caller, caller.command(&shown));
    let task = tokio::task::spawn_blocking(move || {
        let open = || rewind::Store::open(&dir, sopts.clone());
        let result = (|| -> rewind::Result<rewind::wire::RunResult> {
            if scratch {
                opts.scratch = Some(rewind::scratch::create(st2.store())?);
            }
            let r = rewind::run(&open, &root, &opts, &mut |e| {
                st2.events().publish_run(&ws_text, id, e);
            })?;
            let mut v = rewind::wire::RunResult::from(&r);
            if let Some(dir) = &opts.scratch {
                v.scratch = Some(rewind::scratch::keep(st2.store(), dir, &r.after)?.into());
            }
            if hunks {
                add_hunks(st2.store(), &r, &mut v)?;
            }
            Ok(v)
        })();
        let out = match result {
            Ok(v) => {
                st2.runs().finish(id, Ok(v.clone()));
                Ok(v)
            }
            Err(e) => {
                let e = ApiError::from(e);
                st2.runs().finish(id, Err(e.body.clone()));
                Err(e)
            }
        };
        st2.events().publish_run_finished(&ws_text, id);
        out
    });
    if !wait {
        return Ok((
            StatusCode::ACCEPTED,
            Json(rewind::wire::RunStarted {
                run: id,
                status: rewind::wire::RunStatus::Running,
            }),
        )
            .into_response());
    }
    let v = task
        .await
        .map_err(|e| ApiError::internal(format!("the run failed: {e}")))??;
    Ok(Json(v).into_response())
}

/// Gives each file of a run result's `diff` its `hunks` (null where there are none): an
/// overlay's pending hunks while the overlay exists (the ids its accept and reject take),
/// else the hunks between the before and after snapshots (the ids revert takes).
fn add_hunks(
    store: &rewind::Store,
    r: &rewind::RunResult,
    v: &mut rewind::wire::RunResult,
) -> rewind::Result<()> {
    type Hunks = Option<Vec<rewind::hunks::ReviewHunk>>;
    let mut by_path: std::collections::HashMap<Vec<u8>, Hunks> = Default::default();
    match r.overlay.as_ref().filter(|o| o.kept) {
        Some(o) => {
            let mut rec = rewind::overlay::find(store, &o.id.to_string())?;
            let od = rec.diff(store, true)?;
            let hs = rec.review_hunks(store, &od.diff)?;
            for (c, h) in od.diff.changes.iter().zip(hs) {
                by_path.insert(c.path.clone(), h);
            }
        }
        None => {
            let d = rewind::diff(
                store,
                rewind::Rev::Snapshot(r.before),
                rewind::Rev::Snapshot(r.after),
                None,
                &rewind::DiffRequest {
                    renames: true,
                    rename_score: rewind::diff::similar::DEFAULT_RENAME_SCORE,
                    paths: Vec::new(),
                },
            )?;
            for c in &d.changes {
                by_path.insert(c.path.clone(), rewind::wire::change_hunks(&d, c)?);
            }
        }
    }
    for (f, e) in v.diff.files.iter_mut().zip(&r.diff.files) {
        let hunks = by_path.remove(&e.change.path).flatten();
        f.hunks = Some(hunks.map(|hs| hs.into_iter().map(rewind::wire::Hunk::from).collect()));
    }
    Ok(())
}

/// `GET /v1/runs/{run}`: the run's state, with its result or error once it ended.
pub async fn show(
    State(st): State<AppState>,
    Path(id): Path<u64>,
) -> ApiResult<Json<rewind::wire::RunState>> {
    st.runs().get(id).map(Json).ok_or_else(|| {
        ApiError::not_found(format!("no run {id} (runs are kept while the server runs)"))
    })
}
