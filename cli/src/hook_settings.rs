//! `rewind hook install|uninstall AGENT`: rewind's entries in the agent's hook settings.
//!
//! The settings files and their shapes, from each agent's documentation:
//! - Claude Code (code.claude.com/docs/en/hooks, "Configuration"): `.claude/settings.json` in
//!   the project, `~/.claude/settings.json` for the user; `{"hooks": {EVENT: [{"matcher": ...,
//!   "hooks": [{"type": "command", "command": ...}]}]}}`, the matcher left out to match every
//!   tool.
//! - Codex (developers.openai.com/codex/hooks, "Where Codex looks for hooks"):
//!   `<repo>/.codex/hooks.json` or `~/.codex/hooks.json`, the same shape as Claude Code's.
//!   (Codex also reads inline `[hooks]` tables of config.toml; rewind writes hooks.json, which
//!   keeps the user's config.toml untouched.)
//! - Gemini CLI (geminicli.com/docs/hooks/reference, "Configuration schema"):
//!   `.gemini/settings.json` or `~/.gemini/settings.json`; `{"hooks": {EVENT: [{"matcher": ...,
//!   "hooks": [{"name": ..., "type": "command", "command": ...}]}]}}`.
//! - Cursor (cursor.com/docs/hooks): `.cursor/hooks.json` or `~/.cursor/hooks.json`;
//!   `{"version": 1, "hooks": {EVENT: [{"command": ...}]}}`.
//!
//! Every other key, event and hook is kept, in its order; rewind's entries are recognised by
//! their command (`.../rewind [--store DIR] hook AGENT`), so installing twice adds nothing and
//! uninstalling removes exactly them (and the containers they alone filled). The file is
//! written back with the indentation it had, so a file in the usual two-space layout comes back
//! byte for byte after an uninstall.

use std::path::{Path, PathBuf};

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use super::hook::{Agent, InstallArgs};
use super::output;
use super::{CliResult, Ctx};
use rewind::Error;

/// A JSON value that keeps its objects' key order (serde_json's `Value` sorts them).
#[derive(Clone, Debug, PartialEq)]
enum J {
    Null,
    Bool(bool),
    Num(serde_json::Number),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl<'de> Deserialize<'de> for J {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<J, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = J;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> Result<J, E> {
                Ok(J::Null)
            }
            fn visit_bool<E>(self, b: bool) -> Result<J, E> {
                Ok(J::Bool(b))
            }
            fn visit_i64<E>(self, n: i64) -> Result<J, E> {
                Ok(J::Num(n.into()))
            }
            fn visit_u64<E>(self, n: u64) -> Result<J, E> {
                Ok(J::Num(n.into()))
            }
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<J, E> {
                serde_json::Number::from_f64(n)
                    .map(J::Num)
                    .ok_or_else(|| E::custom("a number JSON cannot hold"))
            }
            fn visit_str<E>(self, s: &str) -> Result<J, E> {
                Ok(J::Str(s.to_string()))
            }
            fn visit_string<E>(self, s: String) -> Result<J, E> {
                Ok(J::Str(s))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<J, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element()? {
                    v.push(x);
                }
                Ok(J::Arr(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<J, A::Error> {
                let mut v = Vec::new();
                while let Some((k, x)) = a.next_entry()? {
                    v.push((k, x));
                }
                Ok(J::Obj(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for J {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            J::Null => s.serialize_unit(),
            J::Bool(b) => s.serialize_bool(*b),
            J::Num(n) => n.serialize(s),
            J::Str(x) => s.serialize_str(x),
            J::Arr(v) => {
                let mut seq = s.serialize_seq(Some(v.len()))?;
                for x in v {
                    seq.serialize_element(x)?;
                }
                seq.end()
            }
            J::Obj(v) => {
                let mut map = s.serialize_map(Some(v.len()))?;
                for (k, x) in v {
                    map.serialize_entry(k, x)?;
                }
                map.end()
            }
        }
    }
}

impl J {
    fn get_mut(&mut self, key: &str) -> Option<&mut J> {
        match self {
            J::Obj(v) => v.iter_mut().find(|(k, _)| k == key).map(|(_, x)| x),
            _ => None,
        }
    }

    /// The value at `key`, inserted (at the end) as `make()` when missing.
    fn entry(&mut self, key: &str, make: impl FnOnce() -> J) -> Option<&mut J> {
        let J::Obj(v) = self else { return None };
        let at = match v.iter().position(|(k, _)| k == key) {
            Some(i) => i,
            None => {
                v.push((key.to_string(), make()));
                v.len() - 1
            }
        };
        Some(&mut v[at].1)
    }

    fn str_at(&self, key: &str) -> Option<&str> {
        match self {
            J::Obj(v) => v.iter().find(|(k, _)| k == key).and_then(|(_, x)| match x {
                J::Str(s) => Some(s.as_str()),
                _ => None,
            }),
            _ => None,
        }
    }
}

/// Where and how one agent keeps its hooks.
struct Spec {
    /// The settings file, relative to the project (or the home directory with --user).
    file: &'static str,
    /// The events rewind hooks.
    events: &'static [&'static str],
    /// Cursor's flat entries (`{"command": ...}`) instead of matcher groups.
    flat: bool,
}

fn spec(agent: Agent) -> Spec {
    match agent {
        // PreToolUse is left out: PostToolUse sees every change a tool makes, and a hook
        // before each tool would double the cost of every call.
        Agent::Claude => Spec {
            file: ".claude/settings.json",
            events: &["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"],
            flat: false,
        },
        Agent::Codex => Spec {
            file: ".codex/hooks.json",
            events: &["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"],
            flat: false,
        },
        Agent::Gemini => Spec {
            file: ".gemini/settings.json",
            events: &["SessionStart", "BeforeAgent", "AfterTool", "AfterAgent"],
            flat: false,
        },
        Agent::Cursor => Spec {
            file: ".cursor/hooks.json",
            events: &[
                "beforeSubmitPrompt",
                "afterFileEdit",
                "afterShellExecution",
                "afterMCPExecution",
                "stop",
            ],
            flat: true,
        },
    }
}

/// Quotes a word for the POSIX shell the agents run hook commands with.
fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:@%,=".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The first word of a shell command, unquoted (enough for the commands rewind writes and
/// the plain `rewind hook AGENT` a person would).
fn first_word(cmd: &str) -> &str {
    let cmd = cmd.trim_start();
    for q in ['\'', '"'] {
        if let Some(rest) = cmd.strip_prefix(q) {
            return rest.split(q).next().unwrap_or("");
        }
    }
    cmd.split_whitespace().next().unwrap_or("")
}

/// Whether `cmd` is rewind's hook command for `agent`.
fn is_rewind_command(cmd: &str, agent: Agent) -> bool {
    let program = first_word(cmd).rsplit('/').next().unwrap_or("");
    program == "rewind" && cmd.trim_end().ends_with(&format!(" hook {}", agent.name()))
}

/// The command rewind installs: this binary, the store when one was named, `hook AGENT`.
fn hook_command(ctx: &Ctx, agent: Agent) -> Result<String, Error> {
    let exe = std::env::current_exe().map_err(|e| Error::io("current executable", e))?;
    let mut cmd = shell_quote(&exe.to_string_lossy());
    let named =
        ctx.store_dir.is_some() || std::env::var_os("REWIND_STORE").is_some_and(|v| !v.is_empty());
    if named {
        let dir = ctx.store_path()?;
        let dir = if dir.is_absolute() {
            dir
        } else {
            std::env::current_dir()
                .map_err(|e| Error::io(".", e))?
                .join(dir)
        };
        cmd.push_str(" --store ");
        cmd.push_str(&shell_quote(&dir.to_string_lossy()));
    }
    cmd.push_str(" hook ");
    cmd.push_str(agent.name());
    Ok(cmd)
}

/// The settings file `install`/`uninstall` work on.
fn settings_path(ctx: &Ctx, a: &InstallArgs) -> Result<PathBuf, Error> {
    let base = if a.user {
        dirs::home_dir()
            .ok_or_else(|| Error::Invalid("cannot find the home directory for --user".into()))?
    } else {
        match &ctx.workspace {
            Some(d) => d.clone(),
            None => std::env::current_dir().map_err(|e| Error::io(".", e))?,
        }
    };
    Ok(base.join(spec(a.agent).file))
}

/// A settings file as read: its document, its indentation, whether it ended with a newline.
struct Settings {
    doc: J,
    indent: String,
    newline: bool,
    existed: bool,
}

fn read_settings(path: &Path) -> Result<Settings, Error> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Settings {
                doc: J::Obj(Vec::new()),
                indent: "  ".into(),
                newline: true,
                existed: false,
            });
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    let doc: J = if text.trim().is_empty() {
        J::Obj(Vec::new())
    } else {
        serde_json::from_str(&text).map_err(|e| {
            Error::Invalid(format!(
                "{} is not valid JSON ({e}); leaving it alone",
                path.display()
            ))
        })?
    };
    if !matches!(doc, J::Obj(_)) {
        return Err(Error::Invalid(format!(
            "{} does not hold a JSON object; leaving it alone",
            path.display()
        )));
    }
    // The indentation of the first indented line, so the file keeps its layout.
    let indent = text
        .lines()
        .skip(1)
        .map(|l| &l[..l.len() - l.trim_start().len()])
        .find(|w| !w.is_empty())
        .unwrap_or("  ")
        .to_string();
    Ok(Settings {
        doc,
        indent,
        newline: text.ends_with('\n') || text.trim().is_empty(),
        existed: true,
    })
}

fn write_settings(path: &Path, s: &Settings) -> Result<(), Error> {
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(s.indent.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    s.doc
        .serialize(&mut ser)
        .map_err(|e| Error::Invalid(format!("writing {}: {e}", path.display())))?;
    if s.newline {
        out.push(b'\n');
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    rewind::files::write_atomic(path, rewind::files::Kind::File, &mut out.as_slice())
}

fn not_an(path: &Path, what: &str, kind: &str) -> Error {
    Error::Invalid(format!(
        "{}: {what} is not a JSON {kind}; leaving the file alone",
        path.display()
    ))
}

/// What install did to one event.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Change {
    Added,
    Updated,
    Unchanged,
}

impl Change {
    fn name(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Updated => "updated",
            Change::Unchanged => "unchanged",
        }
    }
}

/// Adds rewind's hook to `event`'s list, or updates the command of the one already there.
fn install_event(list: &mut Vec<J>, flat: bool, agent: Agent, cmd: &str) -> Change {
    for group in list.iter_mut() {
        let found: Option<&mut J> = if flat {
            group
                .str_at("command")
                .is_some_and(|c| is_rewind_command(c, agent))
                .then_some(group)
        } else {
            match group.get_mut("hooks") {
                Some(J::Arr(hs)) => hs.iter_mut().find(|h| {
                    h.str_at("command")
                        .is_some_and(|c| is_rewind_command(c, agent))
                }),
                _ => None,
            }
        };
        if let Some(h) = found {
            if h.str_at("command") == Some(cmd) {
                return Change::Unchanged;
            }
            if let Some(c) = h.get_mut("command") {
                *c = J::Str(cmd.to_string());
            }
            return Change::Updated;
        }
    }
    let handler = |extra: Vec<(String, J)>| {
        let mut v = extra;
        v.push(("type".into(), J::Str("command".into())));
        v.push(("command".into(), J::Str(cmd.to_string())));
        J::Obj(v)
    };
    list.push(match (flat, agent) {
        (true, _) => J::Obj(vec![("command".into(), J::Str(cmd.to_string()))]),
        (false, Agent::Gemini) => J::Obj(vec![(
            "hooks".into(),
            J::Arr(vec![handler(vec![(
                "name".into(),
                J::Str("rewind".into()),
            )])]),
        )]),
        (false, _) => J::Obj(vec![("hooks".into(), J::Arr(vec![handler(Vec::new())]))]),
    });
    Change::Added
}

/// `rewind hook install AGENT`.
pub fn install(ctx: &Ctx, a: &InstallArgs) -> CliResult {
    let path = settings_path(ctx, a)?;
    let sp = spec(a.agent);
    let cmd = hook_command(ctx, a.agent)?;
    let mut s = read_settings(&path)?;
    if sp.flat
        && s.doc.get_mut("version").is_none()
        && let J::Obj(v) = &mut s.doc
    {
        v.insert(0, ("version".into(), J::Num(1.into())));
    }
    let hooks = s
        .doc
        .entry("hooks", || J::Obj(Vec::new()))
        .ok_or_else(|| not_an(&path, "the document", "object"))?;
    if !matches!(hooks, J::Obj(_)) {
        return Err(not_an(&path, "\"hooks\"", "object").into());
    }
    let mut changes = Vec::new();
    for event in sp.events {
        let list = hooks
            .entry(event, || J::Arr(Vec::new()))
            .ok_or_else(|| not_an(&path, "\"hooks\"", "object"))?;
        let J::Arr(list) = list else {
            return Err(not_an(&path, &format!("\"hooks\".\"{event}\""), "array").into());
        };
        changes.push((*event, install_event(list, sp.flat, a.agent, &cmd)));
    }
    let changed = changes.iter().any(|(_, c)| *c != Change::Unchanged);
    if changed {
        write_settings(&path, &s)?;
    }
    if ctx.json {
        output::print_json(&rewind::wire::HooksInstalled {
            agent: a.agent.name().to_string(),
            file: path.display().to_string(),
            command: cmd.clone(),
            changed,
            events: changes
                .iter()
                .map(|(e, c)| rewind::wire::HookEvent {
                    event: e.to_string(),
                    status: c.name().to_string(),
                })
                .collect(),
        })?;
    } else if !ctx.quiet {
        if changed {
            let list: Vec<String> = changes
                .iter()
                .map(|(e, c)| format!("{e} ({})", c.name()))
                .collect();
            println!(
                "installed rewind's {} hooks in {}: {}",
                a.agent.name(),
                path.display(),
                list.join(", ")
            );
        } else {
            println!(
                "rewind's {} hooks are already in {}: nothing changed",
                a.agent.name(),
                path.display()
            );
        }
        if a.agent == Agent::Codex {
            println!("Codex runs a new hook only once you have reviewed and trusted it");
        }
    }
    Ok(0)
}

/// Removes rewind's handlers from one event's list; returns how many.
fn uninstall_event(list: &mut Vec<J>, flat: bool, agent: Agent) -> usize {
    let ours = |h: &J| {
        h.str_at("command")
            .is_some_and(|c| is_rewind_command(c, agent))
    };
    let before = list.len();
    if flat {
        list.retain(|h| !ours(h));
        return before - list.len();
    }
    let mut removed = 0;
    list.retain_mut(|group| {
        let Some(J::Arr(hs)) = group.get_mut("hooks") else {
            return true;
        };
        let n = hs.len();
        hs.retain(|h| !ours(h));
        removed += n - hs.len();
        // A group rewind emptied goes with its last hook.
        !(hs.is_empty() && n > 0)
    });
    removed
}

/// `rewind hook uninstall AGENT`.
pub fn uninstall(ctx: &Ctx, a: &InstallArgs) -> CliResult {
    let path = settings_path(ctx, a)?;
    let sp = spec(a.agent);
    let mut s = read_settings(&path)?;
    let mut removed = 0;
    let mut deleted = false;
    if s.existed
        && let Some(J::Obj(events)) = s.doc.get_mut("hooks")
    {
        events.retain_mut(|(_, list)| {
            let J::Arr(items) = list else { return true };
            let n = uninstall_event(items, sp.flat, a.agent);
            removed += n;
            !(n > 0 && items.is_empty())
        });
        let emptied = events.is_empty();
        if removed > 0
            && emptied
            && let J::Obj(top) = &mut s.doc
        {
            top.retain(|(k, _)| k != "hooks");
        }
    }
    if removed > 0 {
        // A file that held nothing but rewind's hooks was made by install: it goes.
        let leftover = match &s.doc {
            J::Obj(top) => top
                .iter()
                .all(|(k, v)| sp.flat && k == "version" && *v == J::Num(1.into())),
            _ => false,
        };
        if leftover {
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
            deleted = true;
        } else {
            write_settings(&path, &s)?;
        }
    }
    if ctx.json {
        output::print_json(&rewind::wire::HooksRemoved {
            agent: a.agent.name().to_string(),
            file: path.display().to_string(),
            changed: removed > 0,
            removed,
            deleted_file: deleted,
        })?;
    } else if !ctx.quiet {
        if removed == 0 {
            println!(
                "no rewind {} hook in {}: nothing changed",
                a.agent.name(),
                path.display()
            );
        } else if deleted {
            println!(
                "removed rewind's {} hooks ({removed}) and {}, which held nothing else",
                a.agent.name(),
                path.display()
            );
        } else {
            println!(
                "removed rewind's {} hooks ({removed}) from {}",
                a.agent.name(),
                path.display()
            );
        }
    }
    Ok(0)
}
