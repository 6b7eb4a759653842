//! `rewind hook AGENT`: a snapshot per coding-agent event, and `rewind hook install|uninstall`.
//!
//! The agent runs `rewind hook AGENT` with its hook event as JSON on stdin (the shapes are in
//! [`Event::parse`], with where each is documented). The hook records a snapshot of the
//! workspace carrying the agent's session id, the turn number, the event, and the tool with its
//! input, as snapshot metadata; `rewind log --session ID` lists them and `rewind restore --turn
//! N` goes back to the start of a turn.
//!
//! A hook must never get in the agent's way: whatever goes wrong (unreadable JSON, a missing
//! field, an unreachable store) is written to `hooks.log` in the store directory and to stderr,
//! the exit code is 0, and stdout carries only what the agent expects (nothing, or the
//! documented "go on" JSON).
//!
//! Turns: the turn counter of a session is incremented by the event that starts a turn (the
//! user's prompt: Claude Code's and Codex's `UserPromptSubmit`, Gemini CLI's `BeforeAgent`,
//! Cursor's `beforeSubmitPrompt`), and that event's snapshot is always recorded, labelled
//! `turn-start`: the workspace as the prompt found it. The other events record a snapshot only
//! when the tree changed (`if_changed`), and tools that cannot change files (reads, searches,
//! web fetches) record nothing at all. The counter lives in a small file per session under
//! `hooks/turns/` in the store directory, written by the turn-start event only; sessions are
//! separate files, so concurrent sessions never share one. Within one session, the agents run
//! the prompt hook before any tool of that turn, so the counter has one writer at a time. Were
//! the file lost, the counter is recovered from the session's snapshots (their highest turn).

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use serde_json::Value;

use super::{CliResult, Ctx};
use rewind::Error;
use rewind::history::{SESSION_KEY, TURN_KEY, TURN_START_LABEL};
use rewind::snapshot::SnapshotOptions;

/// `hook`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct HookArgs {
    #[command(subcommand)]
    pub command: Option<HookCommand>,
    /// The agent whose hook event arrives on stdin
    #[arg(value_enum, required = true)]
    pub agent: Option<Agent>,
}

/// `hook` subcommands.
#[derive(Subcommand, Debug)]
pub enum HookCommand {
    /// Add rewind's hooks to the agent's settings (merged with what is there; idempotent)
    Install(InstallArgs),
    /// Remove the hooks `install` added, and nothing else
    Uninstall(InstallArgs),
}

/// `hook install` and `hook uninstall`.
#[derive(Args, Debug)]
pub struct InstallArgs {
    /// The agent
    #[arg(value_enum)]
    pub agent: Agent,
    /// The user's settings (e.g. ~/.claude/settings.json) instead of the project's
    #[arg(long)]
    pub user: bool,
}

/// The agents rewind has hooks for.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Agent {
    /// Claude Code
    Claude,
    /// Gemini CLI
    Gemini,
    /// Cursor
    Cursor,
    /// OpenAI Codex
    Codex,
}

impl Agent {
    /// The name used on the command line and in snapshot metadata.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Gemini => "gemini",
            Agent::Cursor => "cursor",
            Agent::Codex => "codex",
        }
    }
}

/// `rewind hook ...`.
pub fn hook(ctx: &Ctx, a: HookArgs) -> CliResult {
    match (a.command, a.agent) {
        (Some(HookCommand::Install(i)), _) => super::hook_settings::install(ctx, &i),
        (Some(HookCommand::Uninstall(i)), _) => super::hook_settings::uninstall(ctx, &i),
        (None, Some(agent)) => Ok(on_event(ctx, agent)),
        (None, None) => Err(Error::Invalid("hook needs an AGENT or a subcommand".into()).into()),
    }
}

/// What an event means for the workspace's history, whatever the agent calls it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// The user submitted a prompt: a new turn starts.
    TurnStart,
    /// A tool ran (or, for `Before`, is about to run).
    Tool,
    /// Before a tool runs (not installed by default; recorded if the tree changed).
    BeforeTool,
    /// The agent finished its turn.
    TurnEnd,
    /// A session started.
    SessionStart,
    /// Anything else the agent sends: recorded if the tree changed.
    Other,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::TurnStart => TURN_START_LABEL,
            Kind::Tool => "tool",
            Kind::BeforeTool => "before-tool",
            Kind::TurnEnd => "turn-end",
            Kind::SessionStart => "session-start",
            Kind::Other => "hook",
        }
    }
}

/// Tool input kept in the metadata, at most (the rest is cut at a character boundary).
const TOOL_INPUT_MAX: usize = 1024;

/// One agent event, read from the agent's JSON.
#[derive(Debug)]
struct Event {
    agent: Agent,
    name: String,
    kind: Kind,
    session: String,
    cwd: Option<PathBuf>,
    tool: Option<String>,
    /// Compact JSON, cut to [`TOOL_INPUT_MAX`].
    tool_input: Option<String>,
    /// Codex's own turn id, kept beside rewind's turn number.
    agent_turn_id: Option<String>,
    /// Nothing can have changed (a read-only tool): no snapshot.
    read_only: bool,
}

/// Tools that never write into the workspace, by agent: their events record nothing.
/// Claude Code: its tools reference (Read, Glob, Grep, LS, WebFetch, WebSearch, TodoWrite, ...).
/// Gemini CLI: docs/tools (read_file, read_many_files, list_directory, glob,
/// search_file_content, google_web_search, web_fetch; save_memory writes ~/.gemini, not the
/// workspace). Codex and Cursor: their tool hooks fire for shell commands, patches and MCP
/// tools, any of which may write, so none is skipped (Cursor's beforeReadFile is read-only).
fn read_only_tool(agent: Agent, tool: &str) -> bool {
    match agent {
        Agent::Claude => matches!(
            tool,
            "Read"
                | "Glob"
                | "Grep"
                | "LS"
                | "WebFetch"
                | "WebSearch"
                | "TodoWrite"
                | "TodoRead"
                | "NotebookRead"
                | "ExitPlanMode"
                | "BashOutput"
                | "ListMcpResourcesTool"
                | "ReadMcpResourceTool"
                | "AskUserQuestion"
        ),
        Agent::Gemini => matches!(
            tool,
            "read_file"
                | "read_many_files"
                | "list_directory"
                | "glob"
                | "search_file_content"
                | "grep_search"
                | "google_web_search"
                | "web_fetch"
                | "save_memory"
                | "write_todos"
        ),
        Agent::Cursor | Agent::Codex => false,
    }
}

fn str_field(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

fn cut(s: String, max: usize) -> String {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

fn compact(v: &Value) -> String {
    cut(v.to_string(), TOOL_INPUT_MAX)
}

impl Event {
    /// Reads the agent's event JSON.
    ///
    /// - Claude Code (code.claude.com/docs/en/hooks, "Hook input"): every event carries
    ///   `session_id`, `transcript_path`, `cwd`, `hook_event_name`; `PreToolUse`/`PostToolUse`
    ///   add `tool_name`, `tool_input` (and `tool_response`), `UserPromptSubmit` adds `prompt`,
    ///   `SessionStart` adds `source`.
    /// - Codex (developers.openai.com/codex/hooks, "Common input fields"): the same names
    ///   (`session_id`, `cwd`, `hook_event_name`, `tool_name`, `tool_input`), plus `turn_id` on
    ///   turn-scoped events and `model`.
    /// - Gemini CLI (geminicli.com/docs/hooks/reference, "Base input schema"): `session_id`,
    ///   `transcript_path`, `cwd`, `hook_event_name`, `timestamp`; `BeforeTool`/`AfterTool` add
    ///   `tool_name`, `tool_input`; `BeforeAgent` adds `prompt`.
    /// - Cursor (cursor.com/docs/hooks): `conversation_id`, `generation_id`,
    ///   `hook_event_name`, `workspace_roots`; `afterFileEdit` adds `file_path` and `edits`,
    ///   `afterShellExecution` `command` and `output`, `afterMCPExecution` `tool_name` and
    ///   `tool_input`, `beforeSubmitPrompt` `prompt`.
    fn parse(agent: Agent, bytes: &[u8]) -> Result<Event, String> {
        let v: Value =
            serde_json::from_slice(bytes).map_err(|e| format!("the event is not JSON ({e})"))?;
        if !v.is_object() {
            return Err("the event is not a JSON object".into());
        }
        let name =
            str_field(&v, "hook_event_name").ok_or("the event has no hook_event_name string")?;
        let session_field = if agent == Agent::Cursor {
            "conversation_id"
        } else {
            "session_id"
        };
        let session = str_field(&v, session_field)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| format!("the {name} event has no {session_field} string"))?;
        let cwd = match agent {
            Agent::Cursor => v
                .get("workspace_roots")
                .and_then(Value::as_array)
                .and_then(|r| r.first())
                .and_then(Value::as_str)
                .map(PathBuf::from),
            _ => str_field(&v, "cwd").map(PathBuf::from),
        };
        let kind = match (agent, name.as_str()) {
            (Agent::Claude | Agent::Codex, "UserPromptSubmit")
            | (Agent::Gemini, "BeforeAgent")
            | (Agent::Cursor, "beforeSubmitPrompt") => Kind::TurnStart,
            (Agent::Claude | Agent::Codex, "PostToolUse" | "PostToolUseFailure")
            | (Agent::Gemini, "AfterTool")
            | (
                Agent::Cursor,
                "afterFileEdit"
                | "afterShellExecution"
                | "afterMCPExecution"
                | "postToolUse"
                | "postToolUseFailure",
            ) => Kind::Tool,
            (Agent::Claude | Agent::Codex, "PreToolUse")
            | (Agent::Gemini, "BeforeTool")
            | (
                Agent::Cursor,
                "beforeShellExecution" | "beforeMCPExecution" | "beforeReadFile" | "preToolUse",
            ) => Kind::BeforeTool,
            (Agent::Claude | Agent::Codex, "Stop" | "SubagentStop")
            | (Agent::Gemini, "AfterAgent")
            | (Agent::Cursor, "stop" | "subagentStop") => Kind::TurnEnd,
            (Agent::Claude | Agent::Codex | Agent::Gemini, "SessionStart")
            | (Agent::Cursor, "sessionStart") => Kind::SessionStart,
            _ => Kind::Other,
        };
        let (tool, input) = match (agent, name.as_str()) {
            (Agent::Cursor, "afterFileEdit") => (
                Some("edit".to_string()),
                str_field(&v, "file_path").map(|p| serde_json::json!({ "file_path": p })),
            ),
            (Agent::Cursor, "afterShellExecution" | "beforeShellExecution") => (
                Some("shell".to_string()),
                str_field(&v, "command").map(|c| serde_json::json!({ "command": c })),
            ),
            (Agent::Cursor, "beforeReadFile") => (
                Some("read".to_string()),
                str_field(&v, "file_path").map(|p| serde_json::json!({ "file_path": p })),
            ),
            _ => (str_field(&v, "tool_name"), v.get("tool_input").cloned()),
        };
        let read_only = match (kind, &tool) {
            (Kind::Tool | Kind::BeforeTool, Some(t)) => {
                read_only_tool(agent, t) || (agent == Agent::Cursor && t == "read")
            }
            _ => false,
        };
        Ok(Event {
            agent,
            name,
            kind,
            session,
            cwd,
            tool,
            tool_input: input.as_ref().map(compact),
            agent_turn_id: str_field(&v, "turn_id"),
            read_only,
        })
    }
}

/// What the agent expects on stdout from a hook that lets everything go on.
/// Claude Code and Codex: nothing (their `UserPromptSubmit` would add any stdout to the
/// model's context). Gemini CLI: a JSON object ("Silence is mandatory" besides the final JSON).
/// Cursor: `{"continue": true}` for `beforeSubmitPrompt`, an empty object otherwise.
fn agent_reply(agent: Agent, event_name: Option<&str>) -> &'static str {
    match agent {
        Agent::Claude | Agent::Codex => "",
        Agent::Gemini => "{}\n",
        Agent::Cursor if event_name == Some("beforeSubmitPrompt") => "{\"continue\":true}\n",
        Agent::Cursor => "{}\n",
    }
}

/// Handles one event; always exit code 0.
fn on_event(ctx: &Ctx, agent: Agent) -> i32 {
    let mut input = Vec::new();
    let stdin = std::io::stdin();
    let read = if stdin.is_terminal() {
        Err("expects the agent's hook event as JSON on stdin".to_string())
    } else {
        stdin
            .lock()
            .read_to_end(&mut input)
            .map_err(|e| format!("reading stdin: {e}"))
    };
    let event = read.and_then(|_| Event::parse(agent, &input));
    let name = event.as_ref().ok().map(|e| e.name.clone());
    let outcome = match &event {
        Ok(e) if e.read_only => Ok(()),
        Ok(e) => record(ctx, e).map_err(|e| super::hints::message(&e)),
        Err(why) => Err(why.clone()),
    };
    if let Err(why) = outcome {
        let session = event.as_ref().ok().map(|e| e.session.as_str());
        log_failure(ctx, agent, name.as_deref(), session, &why);
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(agent_reply(agent, name.as_deref()).as_bytes());
    let _ = out.flush();
    0
}

/// Appends a line to `hooks.log` in the store directory and says it on stderr.
fn log_failure(ctx: &Ctx, agent: Agent, event: Option<&str>, session: Option<&str>, why: &str) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    let line = format!(
        "{} {} {} session={}: {}\n",
        super::output::format_time(now),
        agent.name(),
        event.unwrap_or("-"),
        session.unwrap_or("-"),
        why.replace('\n', " ")
    );
    eprint!("rewind hook: {line}");
    let written = ctx.store_path().ok().and_then(|dir| {
        std::fs::create_dir_all(&dir).ok()?;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("hooks.log"))
            .ok()?;
        f.write_all(line.as_bytes()).ok()
    });
    if written.is_none() {
        eprintln!("rewind hook: (could not write hooks.log in the store directory)");
    }
}

/// Takes the event's snapshot.
fn record(ctx: &Ctx, e: &Event) -> Result<(), Error> {
    let refused = super::refused_workspaces();
    let candidate = match (&ctx.workspace, &e.cwd) {
        (Some(d), _) => d.clone(),
        (None, Some(c)) => c.clone(),
        (None, None) => std::env::current_dir().map_err(|err| Error::io(".", err))?,
    };
    // `/` or the home directory is refused before the store is created, as `snapshot` does.
    rewind::workspace::canonical(&candidate, false, &refused)?;
    let store = ctx.open_store(true)?;
    let root = match &ctx.workspace {
        Some(d) => rewind::workspace::resolve(d)?,
        None => rewind::workspace::discover(&store, &candidate)?,
    };
    let turn = turn_for(&store, &root, e)?;
    let mut meta = vec![
        ("agent".to_string(), e.agent.name().to_string()),
        (SESSION_KEY.to_string(), e.session.clone()),
        (TURN_KEY.to_string(), turn.to_string()),
        ("event".to_string(), e.name.clone()),
        ("label".to_string(), e.kind.label().to_string()),
    ];
    if let Some(t) = &e.tool {
        meta.push(("tool".into(), t.clone()));
    }
    if let Some(i) = &e.tool_input {
        meta.push(("tool_input".into(), i.clone()));
    }
    if let Some(t) = &e.agent_turn_id {
        meta.push(("agent_turn_id".into(), t.clone()));
    }
    let message = match &e.tool {
        Some(t) => format!("{} turn {turn}: {} {t}", e.agent.name(), e.name),
        None => format!("{} turn {turn}: {}", e.agent.name(), e.name),
    };
    let opts = SnapshotOptions {
        message,
        meta,
        // The turn's start is always recorded: `restore --turn` needs it even when nothing
        // changed since the last turn.
        if_changed: e.kind != Kind::TurnStart,
        ..SnapshotOptions::default()
    };
    rewind::snapshot(&store, &root, &opts, &rewind::NoProgress)?;
    Ok(())
}

/// The file holding a session's turn counter.
fn turn_file(store: &rewind::store::Store, session: &str) -> PathBuf {
    let key = rewind::Id::of(session.as_bytes()).hex();
    store.dir().join("hooks").join("turns").join(&key[..32])
}

/// The event's turn: the counter plus one for a turn start (stored), the counter otherwise.
fn turn_for(store: &rewind::store::Store, root: &Path, e: &Event) -> Result<u64, Error> {
    let file = turn_file(store, &e.session);
    let current = match std::fs::read_to_string(&file) {
        Ok(s) => s.trim().parse::<u64>().ok(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => return Err(Error::io(&file, err)),
    };
    let current = match current {
        Some(n) => n,
        None => highest_recorded_turn(store, root, &e.session)?,
    };
    if e.kind != Kind::TurnStart {
        return Ok(current);
    }
    let next = current + 1;
    let dir = file
        .parent()
        .ok_or_else(|| Error::Invalid(format!("{} has no parent", file.display())))?;
    std::fs::create_dir_all(dir).map_err(|err| Error::io(dir, err))?;
    rewind::files::write_atomic(
        &file,
        rewind::files::Kind::File,
        &mut format!("{next}\n").as_bytes(),
    )?;
    Ok(next)
}

/// The session's highest turn among its snapshots in the workspace (0 for none): the counter
/// when its file is missing.
fn highest_recorded_turn(
    store: &rewind::store::Store,
    root: &Path,
    session: &str,
) -> Result<u64, Error> {
    let reader = store.reader()?;
    let Some(ws) = reader.workspace(root)? else {
        return Ok(0);
    };
    Ok(
        rewind::history::with_meta(&reader, ws.id(), SESSION_KEY, session)?
            .iter()
            .filter_map(|(_, r)| r.meta(TURN_KEY)?.parse::<u64>().ok())
            .max()
            .unwrap_or(0),
    )
}
