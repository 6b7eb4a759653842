//! The server's handler: its description, the tools (from the router), and the resources:
//! `rewind://snapshot/{id}` (a snapshot and its top-level entries) and
//! `rewind://snapshot/{id}/file/{path}` (a file's content, or a directory's entries). `{id}`
//! takes any revision (`@`, a tag, an id prefix). The latest snapshots are listed.

use rmcp::model::{
    Implementation, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool_handler};

use super::State;
use super::tools::Server;
use crate::hints;
use rewind::store::tree::Kind;
use rewind::wire;

/// Snapshots `resources/list` names, newest first.
const LISTED: usize = 50;

const PREFIX: &str = "rewind://snapshot/";

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("rewind", env!("CARGO_PKG_VERSION")))
        .with_instructions(format!(
            "Snapshots of the workspace {}: `checkpoint` before and after changes (it sees \
             every file, including what shell commands changed), `changes` to see what \
             changed, `restore` (dry_run first) or `undo` to go back, `run` to run a command \
             between two snapshots, overlays to try changes in isolation and accept them by \
             hunk.",
            self.st.root.display()
        ))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let st = self.st.clone();
        let rows = blocking(move || latest(&st)).await?;
        Ok(ListResourcesResult::with_all_items(rows))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(format!("{PREFIX}{{id}}"), "snapshot")
                .with_description(
                    "A snapshot (id, time, message, metadata) and its top-level entries; {id} is any revision: @, @~1, a tag, an id prefix",
                )
                .with_mime_type("application/json"),
            ResourceTemplate::new(format!("{PREFIX}{{id}}/file/{{path}}"), "snapshot file")
                .with_description(
                    "A file as it was in a snapshot (text, or base64 for binary content); a directory's entries as JSON",
                ),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let st = self.st.clone();
        let uri = request.uri;
        let contents = blocking(move || read(&st, &uri)).await?;
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

/// Runs `f` off the async threads.
async fn blocking<T, F>(f: F) -> Result<T, ErrorData>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ErrorData> + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ErrorData::internal_error(format!("reading failed: {e}"), None))?
}

fn lib_error(e: &rewind::Error) -> ErrorData {
    match e {
        rewind::Error::Missing { .. }
        | rewind::Error::UnknownRevision(_)
        | rewind::Error::RevisionOutOfRange { .. }
        | rewind::Error::NoSnapshots(_) => ErrorData::resource_not_found(hints::message(e), None),
        _ => ErrorData::internal_error(hints::message(e), None),
    }
}

/// The latest snapshots as resources.
fn latest(st: &State) -> Result<Vec<Resource>, ErrorData> {
    let reader = st.store.reader().map_err(|e| lib_error(&e))?;
    let Some(ws) = reader.workspace(&st.root).map_err(|e| lib_error(&e))? else {
        return Ok(Vec::new());
    };
    let ids = reader.history(ws.id(), LISTED).map_err(|e| lib_error(&e))?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let rec = reader.snapshot(&id).map_err(|e| lib_error(&e))?;
        let name = if rec.message().is_empty() {
            format!("snapshot {}", id.short())
        } else {
            format!("snapshot {}: {}", id.short(), rec.message())
        };
        out.push(
            Resource::new(format!("{PREFIX}{}", id.hex()), name)
                .with_description(wire::time_text(rec.time_ns()))
                .with_mime_type("application/json"),
        );
    }
    Ok(out)
}

/// Percent-decoding of a URI's path part (clients escape spaces and non-ASCII bytes), to
/// bytes: a path need not be UTF-8.
fn percent_decode(s: &str) -> Vec<u8> {
    percent_encoding::percent_decode_str(s).collect()
}

fn read(st: &State, uri: &str) -> Result<ResourceContents, ErrorData> {
    let not_found = || {
        ErrorData::resource_not_found(
            format!(
                "{uri}: not a rewind resource (rewind://snapshot/ID or rewind://snapshot/ID/file/PATH)"
            ),
            None,
        )
    };
    let rest = uri.strip_prefix(PREFIX).ok_or_else(not_found)?;
    let (rev, path) = match rest.split_once("/file/") {
        Some((r, p)) => (r, Some(percent_decode(p))),
        None => (rest.trim_end_matches('/'), None),
    };
    let rev = String::from_utf8_lossy(&percent_decode(rev)).into_owned();
    let reader = st.store.reader().map_err(|e| lib_error(&e))?;
    let id = rewind::revision::resolve(&reader, &rev, Some(&st.root)).map_err(|e| lib_error(&e))?;
    let rec = reader.snapshot(&id).map_err(|e| lib_error(&e))?;
    let tags: Vec<String> = reader
        .tags()
        .map_err(|e| lib_error(&e))?
        .into_iter()
        .filter(|(_, t)| *t == id)
        .map(|(n, _)| n)
        .collect();
    let listing = |tree: &rewind::Id, dir: &[u8]| -> Result<ResourceContents, ErrorData> {
        let mut entries = Vec::new();
        for e in &reader.tree(tree).map_err(|e| lib_error(&e))?.entries {
            let path = rewind::files::child_path(dir, &e.name);
            let mut entry = wire::TreeEntry::new(&path, e.kind, e.size, &e.id);
            if e.kind == Kind::Symlink {
                let target = reader.read_blob(&e.id).map_err(|e| lib_error(&e))?;
                entry.target = Some(wire::path_text(&target));
            }
            entries.push(wire::LinkedTreeEntry {
                entry,
                uri: format!("{PREFIX}{}/file/{}", id.hex(), wire::path_text(&path)),
            });
        }
        let v = wire::SnapshotDirectory {
            snapshot: wire::Snapshot::new(&rec, &tags),
            path: wire::path_text(dir),
            path_bytes: wire::path_bytes(dir),
            entries,
        };
        let text = serde_json::to_string(&v)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(ResourceContents::text(text, uri).with_mime_type("application/json"))
    };
    let Some(path) = path else {
        return listing(&rec.root(), b"");
    };
    let path = rewind::RelPath::parse(path.trim_ascii_end().strip_suffix(b"/").unwrap_or(&path))
        .map_err(|e| ErrorData::invalid_params(hints::message(&e), None))?;
    let entry = reader
        .lookup(&rec.root(), &path)
        .map_err(|e| lib_error(&e))?
        .ok_or_else(|| {
            ErrorData::resource_not_found(
                format!("{}: not in snapshot {}", wire::path_text(&path), id.short()),
                None,
            )
        })?;
    if entry.kind == Kind::Dir {
        return listing(&entry.id, &path);
    }
    let bytes = reader.read_blob(&entry.id).map_err(|e| lib_error(&e))?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) if !rewind::diff::is_binary(text.as_bytes()) => ResourceContents::text(text, uri),
        Ok(text) => blob(text.into_bytes(), uri),
        Err(e) => blob(e.into_bytes(), uri),
    })
}

fn blob(bytes: Vec<u8>, uri: &str) -> ResourceContents {
    use base64::Engine;
    ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(bytes), uri)
        .with_mime_type("application/octet-stream")
}
