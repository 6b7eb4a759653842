//! Artifacts: named blobs in the store. PUT and GET stream: the body goes to the store chunk
//! by chunk and comes back the same way, so a multi-GiB artifact never sits in memory.

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use futures::TryStreamExt;
use rewind::wire::{Artifact, ArtifactStored};
use tokio_util::io::{StreamReader, SyncIoBridge};

use super::{blocking, query_all};
use crate::AppState;
use crate::error::ApiResult;

/// `GET /v1/artifacts`.
pub async fn list(State(st): State<AppState>) -> ApiResult<Json<Vec<Artifact>>> {
    blocking(&st, |st| {
        let all = rewind::artifact::list(st.store())?;
        Ok(Json(all.iter().map(Artifact::new).collect()))
    })
    .await
}

/// `GET /v1/artifacts/{*key}`: the bytes, streamed (Range honoured).
pub async fn get(
    State(st): State<AppState>,
    Path(key): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let k = key.clone();
    let a = blocking(&st, move |st| Ok(rewind::artifact::find(st.store(), &k)?)).await?;
    let st2 = st.clone();
    Ok(super::read::ranged(
        &headers,
        a.size(),
        "application/octet-stream",
        move |skip, len, w| {
            let reader = st2.store().reader().map_err(std::io::Error::other)?;
            let mut b = reader
                .blob_reader(&a.blob())
                .map_err(std::io::Error::other)?;
            super::read::copy_range(&mut b, skip, len, w)
        },
    ))
}

/// `PUT /v1/artifacts/{*key}?force=true&meta=k=v`: the body, streamed into the store.
pub async fn put(
    State(st): State<AppState>,
    Path(key): Path<String>,
    RawQuery(q): RawQuery,
    body: Body,
) -> ApiResult<(StatusCode, Json<ArtifactStored>)> {
    let q = q.as_deref();
    let force = matches!(query_all(q, "force").pop().as_deref(), Some("true" | "1"));
    let meta = super::query_meta(q)?;
    // The library's rule, the CLI's too; checked before the body is read.
    rewind::artifact::check_key(&key)?;
    let stream = body.into_data_stream().map_err(std::io::Error::other);
    let reader = StreamReader::new(stream);
    blocking(&st, move |st| {
        let mut input = SyncIoBridge::new(reader);
        let r = rewind::artifact::put(st.store(), &key, &mut input, meta, force)?;
        Ok((StatusCode::CREATED, Json(ArtifactStored::from(&r))))
    })
    .await
}

/// `DELETE /v1/artifacts/{*key}`.
pub async fn remove(
    State(st): State<AppState>,
    Path(key): Path<String>,
) -> ApiResult<Json<rewind::wire::ArtifactRemoved>> {
    blocking(&st, move |st| {
        rewind::artifact::remove(st.store(), &key)?;
        Ok(Json(rewind::wire::ArtifactRemoved { removed: key }))
    })
    .await
}
