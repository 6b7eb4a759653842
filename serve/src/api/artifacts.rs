//! Artifacts: named blobs in the store. PUT and GET stream: the body goes to the store chunk
//! by chunk and comes back the same way, so a multi-GiB artifact never sits in memory.

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use futures::TryStreamExt;
use serde_json::{Value, json};
use tokio_util::io::{StreamReader, SyncIoBridge};

use super::{blocking, query_all};
use crate::AppState;
use crate::error::ApiResult;

fn record_json(key: &str, r: &rewind::artifact::ArtifactRecord) -> Value {
    let meta: serde_json::Map<String, Value> = r
        .meta
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    json!({"key": key, "size": r.size, "created_ns": r.created_ns, "id": r.blob.hex(), "meta": meta})
}

/// `GET /v1/artifacts`.
pub async fn list(State(st): State<AppState>) -> ApiResult<Json<Value>> {
    blocking(&st, |st| {
        let all = rewind::artifact::list(st.store())?;
        Ok(Json(Value::Array(
            all.iter().map(|(k, r)| record_json(k, r)).collect(),
        )))
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
    let rec = blocking(&st, move |st| {
        Ok(rewind::artifact::get_record(st.store(), &k)?)
    })
    .await?;
    let st2 = st.clone();
    Ok(super::read::ranged(
        &headers,
        rec.size,
        "application/octet-stream",
        move |skip, len, w| {
            let reader = st2.store().reader().map_err(std::io::Error::other)?;
            let mut b = reader
                .blob_reader(&rec.blob)
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
) -> ApiResult<(StatusCode, Json<Value>)> {
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
        let mut v = record_json(&r.key, &r.record);
        v["replaced"] = json!(r.replaced);
        v["stored_bytes"] = json!(r.stored_bytes);
        Ok((StatusCode::CREATED, Json(v)))
    })
    .await
}

/// `DELETE /v1/artifacts/{*key}`.
pub async fn remove(State(st): State<AppState>, Path(key): Path<String>) -> ApiResult<Json<Value>> {
    blocking(&st, move |st| {
        rewind::artifact::remove(st.store(), &key)?;
        Ok(Json(json!({"removed": key})))
    })
    .await
}
