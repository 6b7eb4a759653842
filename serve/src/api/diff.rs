//! Status and diff: between any two revisions or the live tree, as JSON with hunks (ids that
//! accept/reject/restore/revert take) or as a patch streamed.

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use rewind::diff::DiffOptions;
use rewind::wire::{Changes, Status, change_hunks, rev_text};
use rewind::{DiffRequest, Rev};

use super::{blocking, query_all, rev, root_of, snapshot_id, workspace};
use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::paths;

/// `GET /v1/workspaces/{ws}/status?path=`.
pub async fn status(
    State(st): State<AppState>,
    Path(ws): Path<u64>,
    RawQuery(q): RawQuery,
) -> ApiResult<Json<Status>> {
    let paths = paths::named_paths(
        &query_all(q.as_deref(), "path"),
        &query_all(q.as_deref(), "path_bytes"),
    )?;
    blocking(&st, move |st| {
        let store = st.store();
        let w = workspace(store, ws)?;
        let root = root_of(&w);
        let head = snapshot_id(store, &root, "@")?;
        let req = DiffRequest {
            renames: true,
            rename_score: rewind::diff::similar::DEFAULT_RENAME_SCORE,
            paths,
        };
        let d = rewind::diff(store, Rev::Snapshot(head), Rev::Live, Some(&root), &req)?;
        Ok(Json(Status::new(&root, &head, &d, &req.paths)))
    })
    .await
}

/// `GET /v1/workspaces/{ws}/diff?from=@&to=live&path=&hunks=true&context=3&format=json|patch`.
pub async fn diff(
    State(st): State<AppState>,
    Path(ws): Path<u64>,
    RawQuery(q): RawQuery,
) -> ApiResult<Response> {
    let q = q.as_deref();
    let one = |k: &str| query_all(q, k).pop();
    let from = one("from").unwrap_or_else(|| "@".into());
    let to = one("to").unwrap_or_else(|| "live".into());
    let paths = paths::named_paths(&query_all(q, "path"), &query_all(q, "path_bytes"))?;
    let hunks = match one("hunks").as_deref() {
        None | Some("true") | Some("1") => true,
        Some("false") | Some("0") => false,
        Some(v) => return Err(ApiError::bad_request(format!("hunks={v}: true or false"))),
    };
    let context: usize = match one("context") {
        None => 3,
        Some(v) => v
            .parse()
            .map_err(|_| ApiError::bad_request(format!("context={v}: not a number")))?,
    };
    let patch = match one("format").as_deref() {
        None | Some("json") => false,
        Some("patch") => true,
        Some(v) => return Err(ApiError::bad_request(format!("format={v}: json or patch"))),
    };
    let dopts = DiffOptions {
        context,
        timeout: Some(std::time::Duration::from_secs(5)),
    };
    let (d, from_r, to_r) = blocking(&st, move |st| {
        let store = st.store();
        let w = workspace(store, ws)?;
        let root = root_of(&w);
        let a = rev(store, &root, &from, true)?;
        let b = rev(store, &root, &to, true)?;
        let d = rewind::diff(
            store,
            a,
            b,
            Some(&root),
            &DiffRequest {
                renames: true,
                rename_score: rewind::diff::similar::DEFAULT_RENAME_SCORE,
                paths,
            },
        )?;
        Ok((d, a, b))
    })
    .await?;
    if patch {
        let popts = rewind::diff::PatchOptions {
            diff: dopts,
            color: false,
            binary: true,
        };
        let body = super::stream::body_from(move |w| {
            d.write_patch(w, &popts)
                .map(drop)
                .map_err(std::io::Error::other)
        });
        let mut r = body.into_response();
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/x-diff; charset=utf-8"),
        );
        return Ok(r);
    }
    let v = blocking(&st, move |_| {
        let v = Changes::build(
            &d,
            rev_text(from_r),
            rev_text(to_r),
            &dopts,
            None,
            &mut |_, c| {
                if hunks { change_hunks(&d, c) } else { Ok(None) }
            },
        )?;
        Ok(v)
    })
    .await?;
    Ok(Json(v).into_response())
}
