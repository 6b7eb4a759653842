//! The tools: each parses its arguments, calls the library on tokio's blocking pool and
//! answers with a wire type (structured) and its text rendering, or a tool error.

use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::common::{schema_for_empty_input, schema_for_input};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::State;
use super::params::*;
use crate::hints;
use rewind::error::{Error, Result};
use rewind::overlay as ov;
use rewind::store::Reader;
use rewind::{Id, NoProgress, RelPath, Rev, wire};

/// Most changes a checkpoint lists (the count is always whole).
const CHECKPOINT_CHANGES: usize = 200;

/// The MCP server: the session's state and its tool table.
#[derive(Clone)]
pub struct Server {
    pub(crate) st: Arc<State>,
    pub(super) tool_router: ToolRouter<Server>,
}

impl Server {
    /// A server over `st`.
    pub(crate) fn new(st: Arc<State>) -> Self {
        Server {
            st,
            tool_router: Self::tool_router(),
        }
    }

    /// Parses `args` as `P` (an argument that does not fit is a tool error naming it), runs `f`
    /// off the async threads; its value as structured content with `text`'s rendering, its
    /// error as a tool error with the hint the CLI would give.
    async fn call<P, T>(
        &self,
        args: JsonObject,
        f: fn(&State, P) -> Result<T>,
        text: fn(&T) -> String,
    ) -> CallToolResult
    where
        P: DeserializeOwned + Send + 'static,
        T: Serialize + Send + 'static,
    {
        let p: P = match serde_path_to_error::deserialize(serde_json::Value::Object(args)) {
            Ok(p) => p,
            Err(e) if e.path().iter().next().is_some() => {
                return tool_error(&Error::Invalid(format!(
                    "invalid argument `{}`: {}",
                    e.path(),
                    e.inner()
                )));
            }
            Err(e) => {
                return tool_error(&Error::Invalid(format!("invalid arguments: {}", e.inner())));
            }
        };
        let st = self.st.clone();
        let out = match tokio::task::spawn_blocking(move || f(&st, p)).await {
            Ok(r) => r,
            Err(e) => Err(Error::Invalid(format!("the tool failed: {e}"))),
        };
        match out.and_then(|v| {
            let value = serde_json::to_value(&v)
                .map_err(|e| Error::Invalid(format!("encoding the result: {e}")))?;
            Ok((text(&v), value))
        }) {
            Ok((t, value)) => {
                let mut r = CallToolResult::structured(value);
                r.content = vec![ContentBlock::text(t)];
                r
            }
            Err(e) => tool_error(&e),
        }
    }
}

/// The input schema of arguments `T`: the tools take their arguments as a JSON object and parse
/// them themselves, so that a bad argument is a tool error rather than a protocol error.
fn input<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    schema_for_input::<T>().unwrap_or_else(|_| schema_for_empty_input())
}

/// A library error as a tool error: the message and the hint, as text.
pub(crate) fn tool_error(e: &Error) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(hints::message(e))])
}

/// The run result's schema (schemas/run-result.schema.json) as the `run` tool's output schema.
fn run_schema() -> Arc<JsonObject> {
    let text = include_str!("../../../schemas/run-result.schema.json");
    Arc::new(
        serde_json::from_str::<JsonObject>(text).unwrap_or_else(|_| {
            // Only reachable if the file in the repository is broken (a test parses it).
            let mut o = JsonObject::new();
            o.insert("type".into(), "object".into());
            o
        }),
    )
}

#[tool_router]
impl Server {
    /// Take a snapshot of the workspace now.
    #[tool(
        description = "Take a snapshot (checkpoint) of the whole workspace now, including files changed by shell commands. Returns the snapshot (id, short_id, time) and the paths changed since the previous one. Cheap: unchanged files are not read.",
        input_schema = input::<CheckpointParams>(),
        output_schema = schema_for_output::<wire::Checkpoint>()
    )]
    async fn checkpoint(&self, Parameters(a): Parameters<JsonObject>) -> CallToolResult {
        self.call(a, checkpoint, super::render::checkpoint).await
    }

    /// The workspace's snapshots.
    #[tool(
        description = "List the workspace's snapshots, newest first, with optional filters: limit, metadata key=value, tag, since (RFC 3339 or a duration ago like 2h), path changed.",
        input_schema = input::<ListParams>(),
        output_schema = schema_for_output::<wire::SnapshotList>()
    )]
    async fn list_checkpoints(&self, Parameters(a): Parameters<JsonObject>) -> CallToolResult {
        self.call(a, list, super::render::list).await
    }

    /// Status or diff.
    #[tool(
        description = "What changed between two points: `from` and `to` are revisions (`@` latest snapshot, `@~1`, a tag, an id prefix) or `live` (the working tree); default `@` to `live` (the status). format `stat`: paths with line counts; `patch`: also hunks with ids and the unified diff (from `live` to a snapshot: the ids restore takes).",
        input_schema = input::<ChangesParams>(),
        output_schema = schema_for_output::<wire::Changes>()
    )]
    async fn changes(&self, Parameters(a): Parameters<JsonObject>) -> CallToolResult {
        self.call(a, changes, super::render::changes).await
    }

    /// Restore.
    #[tool(
        description = "Make the workspace (or some paths, or some hunks) equal to a snapshot (default `@`). With dry_run, change nothing and list what would be overwritten, deleted or created. Undoable (undo): the live state is snapshotted first.",
        input_schema = input::<RestoreParams>(),
        output_schema = schema_for_output::<wire::Restore>()
    )]
    async fn restore(&self, Parameters(a): Parameters<JsonObject>) -> CallToolResult {
        self.call(a, restore, super::render::restore).await
    }

    /// Undo.
    #[tool(
        description = "Take back the latest operation that changed the workspace (a restore, a run, an accept, an undo...) or operation `op`.",
        input_schema = input::<UndoParams>(),
        output_schema = schema_for_output::<wire::Undo>()
    )]
    async fn undo(&self, Parameters(a): Parameters<JsonObject>) -> CallToolResult {
        self.call(a, undo_tool, super::render::undo).await
    }

    /// Redo.
    #[tool(
        description = "Take back the latest undo.",
        input_schema = input::<RedoParams>(),
        output_schema = schema_for_output::<wire::Undo>()
    )]
    async fn redo(&self, Parameters(a): Parameters<JsonObject>) -> CallToolResult {
        self.call(a, redo_tool, super::render::undo).await
    }

    /// Run a command between two snapshots.
    #[tool(
        description = "Run a command in the workspace between two snapshots and report what it changed (the run-result schema): exit code, before/after snapshot ids, the files changed, optionally the patch; rollback_on_failure restores the before state when it fails; isolate runs it in an overlay.",
        input_schema = input::<RunParams>(),
        output_schema = run_schema()
    )]
    async fn run(&self, Parameters(a): Parameters<JsonObject>) -> CallToolResult {
        self.call(a, run, super::render::run).await
    }

    /// Create an overlay.
    #[tool(
        description = "Create an overlay: an isolated copy of the workspace to run commands in (its `path`), whose changes are then reviewed (overlay_diff) and accepted or rejected by path or hunk.",
        input_schema = input::<OverlayCreateParams>(),
        output_schema = schema_for_output::<wire::OverlayCreated>()
    )]
    async fn overlay_create(&self, Parameters(a): Parameters<JsonObject>) -> CallToolResult {
        self.call(a, overlay_create, super::render::overlay).await
    }

    /// An overlay's pending changes.
    #[tool(
        description = "The changes pending in an overlay (from its base to its state now), each text change with hunk ids that overlay_accept and overlay_reject take.",
        input_schema = input::<OverlayDiffParams>(),
        output_schema = schema_for_output::<wire::OverlayDiff>()
    )]
    async fn overlay_diff(&self, Parameters(a): Parameters<JsonObject>) -> CallToolResult {
        self.call(a, overlay_diff, super::render::overlay_diff)
            .await
    }

    /// An overlay's pending changes by run.
    #[tool(
        description = "An overlay's pending hunks grouped by the command run in it that made them (runs' edits sharing a hunk are cut apart); overlay_accept and overlay_reject take a run number or these hunk ids.",
        input_schema = input::<OverlayRunsParams>(),
        output_schema = schema_for_output::<wire::OverlayRuns>()
    )]
    async fn overlay_runs(&self, Parameters(a): Parameters<JsonObject>) -> CallToolResult {
        self.call(a, overlay_runs, super::render::overlay_runs)
            .await
    }

    /// The change between two snapshots by run.
    #[tool(
        description = "The change between two snapshots of the workspace grouped by the run or agent tool call that made each line (edits of two tool calls sharing a hunk are cut apart), with each unit's snapshot and metadata (session, turn, tool). `revert` takes a run number or these hunk ids.",
        input_schema = input::<ByRunParams>(),
        output_schema = schema_for_output::<wire::RangeRuns>()
    )]
    async fn changes_by_run(&self, Parameters(a): Parameters<JsonObject>) -> CallToolResult {
        self.call(a, changes_by_run, super::render::changes_by_run)
            .await
    }

    /// Revert a change range.
    #[tool(
        description = "Take back the change between two snapshots (`from`..`to`), or only one run or tool call of it (`run`, from changes_by_run), some hunks or some paths, three ways onto the live files: later edits are kept. Conflicts are reported per file and then nothing is written. Undoable.",
        input_schema = input::<RevertParams>(),
        output_schema = schema_for_output::<wire::Revert>()
    )]
    async fn revert(&self, Parameters(a): Parameters<JsonObject>) -> CallToolResult {
        self.call(a, revert, super::render::revert).await
    }

    /// Accept.
    #[tool(
        description = "Accept an overlay's changes into the workspace: all pending, some paths, or some hunks (ids from overlay_diff). Undoable.",
        input_schema = input::<OverlayAcceptParams>(),
        output_schema = schema_for_output::<wire::OverlayAccept>()
    )]
    async fn overlay_accept(&self, Parameters(a): Parameters<JsonObject>) -> CallToolResult {
        self.call(a, overlay_accept, super::render::accept).await
    }

    /// Reject.
    #[tool(
        description = "Reject an overlay's changes: set paths or hunks (ids from overlay_diff) back to the base inside the overlay; the workspace is untouched.",
        input_schema = input::<OverlayRejectParams>(),
        output_schema = schema_for_output::<wire::OverlayReject>()
    )]
    async fn overlay_reject(&self, Parameters(a): Parameters<JsonObject>) -> CallToolResult {
        self.call(a, overlay_reject, super::render::reject).await
    }
}

/// Workspace-relative paths as a client gives them (relative, or absolute inside the
/// workspace).
fn paths(st: &State, p: &[String]) -> Result<Vec<RelPath>> {
    st.ctx.workspace_paths(Some(&st.root), p)
}

/// A revision of the workspace, or `live`.
fn rev(st: &State, reader: &Reader, text: &str) -> Result<Rev> {
    if text == "live" {
        return Ok(Rev::Live);
    }
    rewind::revision::resolve(reader, text, Some(&st.root)).map(Rev::Snapshot)
}

/// The tags naming `id`.
fn tags_of(reader: &Reader, id: &Id) -> Result<Vec<String>> {
    Ok(reader
        .tags()?
        .into_iter()
        .filter(|(_, t)| t == id)
        .map(|(n, _)| n)
        .collect())
}

fn checkpoint(st: &State, p: CheckpointParams) -> Result<wire::Checkpoint> {
    let opts = rewind::SnapshotOptions {
        message: p.message.unwrap_or_default(),
        meta: p.metadata.into_iter().collect(),
        tags: p.tags,
        if_changed: p.if_changed,
        ..rewind::SnapshotOptions::default()
    };
    let started = std::time::Instant::now();
    let r = rewind::snapshot(&st.store, &st.root, &opts, &NoProgress)?.report;
    let id =
        r.id.ok_or_else(|| Error::Invalid("the snapshot recorded no id".into()))?;
    let reader = st.store.reader()?;
    let rec = reader.snapshot(&id)?;
    let snapshot = wire::Snapshot::new(&rec, &tags_of(&reader, &id)?);
    let (files_changed, changes) = match r.parent {
        _ if r.unchanged || !r.created => (0, Some(Vec::new())),
        Some(parent) => {
            let d = rewind::diff(
                &st.store,
                Rev::Snapshot(parent),
                Rev::Snapshot(id),
                None,
                &rewind::DiffRequest {
                    renames: true,
                    rename_score: rewind::diff::similar::DEFAULT_RENAME_SCORE,
                    paths: Vec::new(),
                },
            )?;
            let listed = d
                .changes
                .iter()
                .take(CHECKPOINT_CHANGES)
                .map(wire::Change::from)
                .collect();
            (d.changes.len() as u64, Some(listed))
        }
        None => (r.stats.files + r.stats.symlinks, None),
    };
    if std::env::var_os("REWIND_TRACE").is_some() {
        // As `snapshot` does, plus what the checkpoint adds (reading back, the diff).
        eprintln!(
            "rewind: checkpoint phases: {}, then {:.1} ms",
            crate::snap::phases_text(&r.phases),
            (started.elapsed().as_secs_f64() - r.seconds) * 1000.0
        );
    }
    Ok(wire::Checkpoint {
        snapshot,
        created: r.created,
        unchanged: r.unchanged,
        changes_truncated: changes
            .as_ref()
            .is_some_and(|c: &Vec<wire::Change>| (c.len() as u64) < files_changed),
        files_changed,
        changes,
        files_read: r.files_read,
        stored_bytes: r.stored_bytes,
        skipped: r.skipped.iter().map(wire::Skipped::from).collect(),
        seconds: r.seconds,
    })
}

fn list(st: &State, p: ListParams) -> Result<wire::SnapshotList> {
    let limit = p.limit.unwrap_or(20);
    let reader = st.store.reader()?;
    let Some(ws) = reader.workspace(&st.root)? else {
        return Ok(wire::SnapshotList {
            snapshots: Vec::new(),
        });
    };
    let tagged = match &p.tag {
        Some(t) => match reader.tags()?.into_iter().find(|(n, _)| n == t) {
            Some((_, id)) => Some(id),
            None => return Err(Error::NoTag(t.clone())),
        },
        None => None,
    };
    let path = match &p.path {
        Some(x) => paths(st, std::slice::from_ref(x))?.pop(),
        None => None,
    };
    let query = rewind::history::LogQuery {
        // A tag names one snapshot anywhere in the history: look through all of it.
        limit: if tagged.is_some() { usize::MAX } else { limit },
        path,
        meta: p.metadata.into_iter().collect(),
        label: None,
        since_ns: p
            .since
            .as_deref()
            .map(|s| crate::inspect::parse_time("since", s, false))
            .transpose()?,
        until_ns: None,
    };
    let tags = reader.tags()?;
    let rows = rewind::history::log(&st.store, &reader, ws.id(), &query)?;
    let snapshots = rows
        .iter()
        .filter(|e| tagged.is_none_or(|t| t == e.id))
        .take(limit)
        .map(|e| {
            let names: Vec<String> = tags
                .iter()
                .filter(|(_, t)| *t == e.id)
                .map(|(n, _)| n.clone())
                .collect();
            wire::Snapshot::new(&e.record, &names)
        })
        .collect();
    Ok(wire::SnapshotList { snapshots })
}

fn changes(st: &State, p: ChangesParams) -> Result<wire::Changes> {
    let reader = st.store.reader()?;
    let a = rev(st, &reader, p.from.as_deref().unwrap_or("@"))?;
    let b = rev(st, &reader, p.to.as_deref().unwrap_or("live"))?;
    drop(reader);
    let req = rewind::DiffRequest {
        renames: true,
        rename_score: rewind::diff::similar::DEFAULT_RENAME_SCORE,
        paths: paths(st, &p.paths)?,
    };
    let d = rewind::diff(&st.store, a, b, Some(&st.root), &req)?;
    let dopts = rewind::diff::DiffOptions {
        context: p.context.unwrap_or(3),
        timeout: Some(Duration::from_secs(5)),
    };
    let patch = p.format == Format::Patch;
    let popts = rewind::diff::PatchOptions {
        diff: dopts,
        color: false,
        binary: false,
    };
    let patch_opts = patch.then_some(&popts);
    wire::Changes::build(
        &d,
        wire::rev_text(a),
        wire::rev_text(b),
        &dopts,
        patch_opts,
        &mut |_, c| {
            if patch {
                wire::change_hunks(&d, c)
            } else {
                Ok(None)
            }
        },
    )
}

fn restore(st: &State, p: RestoreParams) -> Result<wire::Restore> {
    let target = rewind::revision::resolve(
        &st.store.reader()?,
        p.rev.as_deref().unwrap_or("@"),
        Some(&st.root),
    )?;
    if !p.hunks.is_empty() {
        if p.dry_run || !p.paths.is_empty() {
            return Err(Error::Invalid(
                "a restore by hunk takes neither paths nor dry_run (the hunks are the preview: `changes` with format patch)".into(),
            ));
        }
        let r = rewind::hunks::restore_hunks(&st.store, &st.root, target, &p.hunks, &[])?;
        return Ok(wire::Restore::from_hunks(
            st.root.display().to_string(),
            target.hex(),
            &r,
        ));
    }
    let opts = rewind::RestoreOptions {
        paths: paths(st, &p.paths)?,
        dry_run: p.dry_run,
        ..rewind::RestoreOptions::default()
    };
    let r = rewind::restore(
        &st.store,
        &st.root,
        target,
        &opts,
        &rewind::OpInfo::default(),
        &NoProgress,
    )?;
    Ok(wire::Restore::new(&r, p.dry_run))
}

fn undo_tool(st: &State, p: UndoParams) -> Result<wire::Undo> {
    undo(st, false, p.op, p.force)
}

fn redo_tool(st: &State, p: RedoParams) -> Result<wire::Undo> {
    undo(st, true, None, p.force)
}

fn undo(st: &State, redo: bool, op: Option<u64>, force: bool) -> Result<wire::Undo> {
    let (target, r) = rewind::undo::undo(&st.store, &st.root, redo, op, force, &NoProgress)?;
    Ok(wire::Undo::new(&target, &r, redo))
}

fn run(st: &State, p: RunParams) -> Result<serde_json::Value> {
    if p.command.is_empty() {
        return Err(Error::Invalid(
            "`command` is empty: give the program and its arguments".into(),
        ));
    }
    let opts = rewind::RunOptions {
        command: p.command.into_iter().map(Into::into).collect(),
        cwd: Some(st.root.clone()),
        message: p.message.unwrap_or_default(),
        meta: p.metadata.into_iter().collect(),
        rollback_on_failure: p.rollback_on_failure,
        capture_patch: p.capture_patch,
        isolate: p.isolate.then(rewind::Isolate::default),
        ..rewind::RunOptions::default()
    };
    let open = || st.ctx.open_store(true);
    let r = rewind::run(&open, &st.root, &opts, &mut |_| {})?;
    serde_json::to_value(wire::RunResult::from(&r))
        .map_err(|e| Error::Invalid(format!("encoding the run result: {e}")))
}

fn overlay_create(st: &State, p: OverlayCreateParams) -> Result<wire::OverlayCreated> {
    let from = match &p.rev {
        Some(r) => Some(rewind::revision::resolve(
            &st.store.reader()?,
            r,
            Some(&st.root),
        )?),
        None => None,
    };
    let c = ov::create(
        &st.store,
        &st.root,
        &rewind::CreateOptions {
            from,
            name: p.name,
            backend: match p.backend {
                Backend::Auto => rewind::BackendChoice::Auto,
                Backend::Copy => rewind::BackendChoice::Copy,
                Backend::Namespace => rewind::BackendChoice::Namespace,
            },
            with_ignored: Vec::new(),
            namespace_refused: crate::output::namespace_refused(),
        },
        &NoProgress,
    )?;
    wire::OverlayCreated::new(&st.store, &c)
}

fn overlay_diff(st: &State, p: OverlayDiffParams) -> Result<wire::OverlayDiff> {
    let mut rec = ov::find(&st.store, &p.overlay.text())?;
    let od = rec.diff(&st.store, true)?;
    let dopts = rewind::diff::DiffOptions::default();
    let popts = rewind::diff::PatchOptions {
        diff: dopts,
        color: false,
        binary: false,
    };
    wire::OverlayDiff::new(&st.store, &rec, &od, &dopts, p.patch.then_some(&popts))
}

fn overlay_runs(st: &State, p: OverlayRunsParams) -> Result<wire::OverlayRuns> {
    let mut rec = ov::find(&st.store, &p.overlay.text())?;
    let od = rec.diff(&st.store, false)?;
    let groups = rec.by_run(&st.store, &od.diff)?;
    Ok(wire::OverlayRuns::new(rec.id(), groups))
}

/// `from` and `to` (default `@`) as snapshot ids.
fn range(st: &State, from: &str, to: Option<&str>) -> Result<(Id, Id)> {
    let reader = st.store.reader()?;
    let a = rewind::revision::resolve(&reader, from, Some(&st.root))?;
    let b = rewind::revision::resolve(&reader, to.unwrap_or("@"), Some(&st.root))?;
    Ok((a, b))
}

fn changes_by_run(st: &State, p: ByRunParams) -> Result<wire::RangeRuns> {
    let (a, b) = range(st, &p.from, p.to.as_deref())?;
    let ws = st.store.reader()?.snapshotted_workspace(&st.root)?;
    let by = rewind::review_runs::by_run(&st.store, ws.id(), a, b)?;
    Ok(wire::RangeRuns::new(&a, &b, by))
}

fn revert(st: &State, p: RevertParams) -> Result<wire::Revert> {
    let (a, b) = range(st, &p.from, p.to.as_deref())?;
    let chosen = [p.run.is_some(), !p.hunks.is_empty(), !p.paths.is_empty()];
    if chosen.iter().filter(|c| **c).count() > 1 {
        return Err(Error::Invalid(
            "revert takes one of `run`, `hunks` and `paths`".into(),
        ));
    }
    let r = if let Some(n) = p.run {
        let ws = st.store.reader()?.snapshotted_workspace(&st.root)?;
        rewind::review_runs::revert_run(&st.store, &st.root, ws.id(), a, b, n, false, p.dry_run)?
    } else if !p.hunks.is_empty() {
        rewind::revert::revert_hunks_report(&st.store, &st.root, a, b, &p.hunks, false, p.dry_run)?
    } else {
        let paths = paths(st, &p.paths)?;
        rewind::revert::revert_report(&st.store, &st.root, a, b, &paths, false, p.dry_run)?
    };
    Ok(wire::Revert::new(&r, p.dry_run))
}

fn overlay_accept(st: &State, p: OverlayAcceptParams) -> Result<wire::OverlayAccept> {
    use rewind::carry::ConflictPolicy as C;
    let mut rec = ov::find(&st.store, &p.overlay.text())?;
    let root = rec.workspace_path();
    let opts = rewind::AcceptOptions {
        paths: st.ctx.workspace_paths(Some(&root), &p.paths)?,
        policy: match p.policy {
            Policy::Skip => C::Skip,
            Policy::Markers => C::Markers,
            Policy::Ours => C::Ours,
            Policy::Theirs => C::Theirs,
            Policy::Fail => C::Fail,
        },
        include_ignored: p.include_ignored,
        hunks: p.hunks,
        edited: Vec::new(),
        run: p.run,
    };
    let r = rec.accept(&st.store, &opts)?;
    Ok(wire::OverlayAccept::new(rec.id(), &r))
}

fn overlay_reject(st: &State, p: OverlayRejectParams) -> Result<wire::OverlayReject> {
    let mut rec = ov::find(&st.store, &p.overlay.text())?;
    let root = rec.workspace_path();
    let paths = st.ctx.workspace_paths(Some(&root), &p.paths)?;
    let r = match p.run {
        Some(n) => rec.reject_run(&st.store, n)?,
        None => rec.reject(&st.store, &paths, &p.hunks)?,
    };
    Ok(wire::OverlayReject::new(rec.id(), &r))
}
