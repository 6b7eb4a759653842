//! `rewind hook AGENT` fed the agents' documented event JSON on a real workspace and store;
//! `hook install|uninstall` on real settings files; `log --session` and `restore --turn`.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::common::{Env, json, rewind_bin};

/// Runs `rewind --store STORE hook AGENT` from a directory outside the workspace (the
/// workspace comes from the event's cwd), feeding `event` on stdin: (exit code, stdout,
/// stderr).
fn hook_with(store: &Path, agent: &str, event: &[u8]) -> (i32, String, String) {
    let mut cmd = rewind_bin();
    cmd.arg("--store")
        .arg(store)
        .args(["hook", agent])
        .current_dir(std::env::temp_dir());
    let out = crate::common::with_stdin(cmd, event);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Feeds one event, asserting exit code 0 and the stdout the agent expects.
fn hook(env: &Env, agent: &str, event: Value, stdout: &str) {
    let (code, out, err) = hook_with(&env.store, agent, event.to_string().as_bytes());
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, stdout, "stdout of {agent} {event}");
}

/// The snapshots of a session, newest first.
fn session_log(env: &Env, session: &str) -> Vec<Value> {
    json(env, &["log", "--session", session])
        .as_array()
        .expect("log array")
        .clone()
}

fn meta<'a>(row: &'a Value, key: &str) -> Option<&'a str> {
    row["meta"][key].as_str()
}

fn ws(env: &Env) -> String {
    env.ws.display().to_string()
}

/// Claude Code's documented input (code.claude.com/docs/en/hooks): common fields on every
/// event, plus the event's own.
fn claude(env: &Env, session: &str, event: &str, extra: Value) -> Value {
    let mut v = json!({
        "session_id": session,
        "transcript_path": "/home/user/.claude/projects/p/00893aaf.jsonl",
        "cwd": ws(env),
        "permission_mode": "default",
        "hook_event_name": event,
    });
    for (k, x) in extra.as_object().expect("object") {
        v[k] = x.clone();
    }
    v
}

#[test]
fn claude_events_record_session_turn_event_and_tool() {
    let env = Env::new();
    env.write("src/main.rs", b"fn main() {}\n");
    let s = "abc123";
    hook(
        &env,
        "claude",
        claude(&env, s, "SessionStart", json!({"source": "startup"})),
        "",
    );
    hook(
        &env,
        "claude",
        claude(&env, s, "UserPromptSubmit", json!({"prompt": "add a test"})),
        "",
    );
    env.write("src/main.rs", b"fn main() { println!(\"hi\"); }\n");
    let big = "x".repeat(10_000);
    hook(
        &env,
        "claude",
        claude(
            &env,
            s,
            "PostToolUse",
            json!({
                "tool_name": "Write",
                "tool_input": {"file_path": env.path("src/main.rs").display().to_string(), "content": big},
                "tool_response": {"filePath": env.path("src/main.rs").display().to_string(), "success": true},
                "tool_use_id": "toolu_01ABC123"
            }),
        ),
        "",
    );
    // A read-only tool records nothing, even with the tree changed since.
    env.write("notes.txt", b"typed by the user\n");
    hook(
        &env,
        "claude",
        claude(
            &env,
            s,
            "PostToolUse",
            json!({"tool_name": "Read", "tool_input": {"file_path": "src/main.rs"}, "tool_response": {}}),
        ),
        "",
    );
    hook(
        &env,
        "claude",
        claude(&env, s, "Stop", json!({"stop_hook_active": false})),
        "",
    );
    // Nothing changed since the last snapshot: a second Stop records nothing.
    hook(
        &env,
        "claude",
        claude(&env, s, "Stop", json!({"stop_hook_active": false})),
        "",
    );

    let rows = session_log(&env, s);
    let labels: Vec<&str> = rows.iter().map(|r| meta(r, "label").unwrap()).collect();
    assert_eq!(
        labels,
        ["turn-end", "tool", "turn-start", "session-start"],
        "{rows:#?}"
    );
    let turns: Vec<&str> = rows.iter().map(|r| meta(r, "turn").unwrap()).collect();
    assert_eq!(turns, ["1", "1", "1", "0"]);
    for r in &rows {
        assert_eq!(meta(r, "agent"), Some("claude"));
        assert_eq!(meta(r, "session"), Some(s));
    }
    let tool = &rows[1];
    assert_eq!(meta(tool, "event"), Some("PostToolUse"));
    assert_eq!(meta(tool, "tool"), Some("Write"));
    let input = meta(tool, "tool_input").unwrap();
    assert!(input.starts_with("{\"content\":\"xxx"), "{input}");
    assert!(
        input.len() <= 1024 + "…".len(),
        "tool input kept whole: {}",
        input.len()
    );
    assert!(input.ends_with('…'));
    // The tool's snapshot holds the tool's change; the turn-end one the user's file too.
    let cat = env.ok(&["cat", tool["id"].as_str().unwrap(), "src/main.rs"]);
    assert!(cat.contains("println"), "{cat}");
    assert_eq!(
        env.ok(&["cat", rows[0]["id"].as_str().unwrap(), "notes.txt"]),
        "typed by the user\n"
    );
    assert_eq!(rows[0]["message"], "claude turn 1: Stop");
}

#[test]
fn gemini_events_answer_json_and_skip_read_only_tools() {
    let env = Env::new();
    env.write("a.txt", b"one\n");
    let base = |event: &str, extra: Value| {
        let mut v = json!({
            "session_id": "g-1",
            "transcript_path": "/tmp/t.json",
            "cwd": ws(&env),
            "hook_event_name": event,
            "timestamp": "2026-11-27T00:00:00.000Z",
        });
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    // geminicli.com/docs/hooks/reference: stdout must be JSON only.
    hook(
        &env,
        "gemini",
        base("SessionStart", json!({"source": "startup"})),
        "{}\n",
    );
    hook(
        &env,
        "gemini",
        base("BeforeAgent", json!({"prompt": "fix a"})),
        "{}\n",
    );
    env.write("a.txt", b"two\n");
    hook(
        &env,
        "gemini",
        base(
            "AfterTool",
            json!({"tool_name": "write_file", "tool_input": {"file_path": "a.txt", "content": "two\n"},
                   "tool_response": {"llmContent": "ok", "returnDisplay": "ok"}}),
        ),
        "{}\n",
    );
    env.write("b.txt", b"by hand\n");
    hook(
        &env,
        "gemini",
        base(
            "AfterTool",
            json!({"tool_name": "read_file", "tool_input": {"file_path": "a.txt"}}),
        ),
        "{}\n",
    );
    hook(
        &env,
        "gemini",
        base(
            "AfterAgent",
            json!({"prompt": "fix a", "prompt_response": "done", "stop_hook_active": false}),
        ),
        "{}\n",
    );
    let rows = session_log(&env, "g-1");
    let got: Vec<(&str, &str, Option<&str>)> = rows
        .iter()
        .map(|r| {
            (
                meta(r, "label").unwrap(),
                meta(r, "event").unwrap(),
                meta(r, "tool"),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("turn-end", "AfterAgent", None),
            ("tool", "AfterTool", Some("write_file")),
            ("turn-start", "BeforeAgent", None),
            ("session-start", "SessionStart", None),
        ]
    );
    assert!(rows.iter().all(|r| meta(r, "agent") == Some("gemini")));
}

#[test]
fn cursor_events_use_conversation_id_and_workspace_roots() {
    let env = Env::new();
    env.write("app.ts", b"let a = 1;\n");
    // cursor.com/docs/hooks: conversation_id, generation_id, hook_event_name, workspace_roots.
    let base = |event: &str, extra: Value| {
        let mut v = json!({
            "conversation_id": "c-9",
            "generation_id": "gen-1",
            "hook_event_name": event,
            "workspace_roots": [ws(&env)],
        });
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    hook(
        &env,
        "cursor",
        base(
            "beforeSubmitPrompt",
            json!({"prompt": "rename a", "attachments": []}),
        ),
        "{\"continue\":true}\n",
    );
    env.write("app.ts", b"let b = 1;\n");
    hook(
        &env,
        "cursor",
        base(
            "afterFileEdit",
            json!({"file_path": env.path("app.ts").display().to_string(),
                   "edits": [{"old_string": "let a", "new_string": "let b"}]}),
        ),
        "{}\n",
    );
    env.write("out.log", b"built\n");
    hook(
        &env,
        "cursor",
        base(
            "afterShellExecution",
            json!({"command": "make > out.log", "output": ""}),
        ),
        "{}\n",
    );
    hook(
        &env,
        "cursor",
        base("stop", json!({"status": "completed"})),
        "{}\n",
    );
    let rows = session_log(&env, "c-9");
    let got: Vec<(&str, Option<&str>)> = rows
        .iter()
        .map(|r| (meta(r, "label").unwrap(), meta(r, "tool")))
        .collect();
    assert_eq!(
        got,
        [
            ("tool", Some("shell")),
            ("tool", Some("edit")),
            ("turn-start", None)
        ],
        "the stop saw nothing new: {rows:#?}"
    );
    assert_eq!(
        meta(&rows[0], "tool_input"),
        Some("{\"command\":\"make > out.log\"}")
    );
}

#[test]
fn codex_events_keep_codex_turn_id() {
    let env = Env::new();
    env.write("lib.py", b"x = 1\n");
    // developers.openai.com/codex/hooks: Claude Code's field names plus turn_id and model.
    let base = |event: &str, extra: Value| {
        let mut v = json!({
            "session_id": "019d036d-0000",
            "transcript_path": null,
            "cwd": ws(&env),
            "hook_event_name": event,
            "model": "gpt-5-codex",
        });
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    hook(
        &env,
        "codex",
        base(
            "UserPromptSubmit",
            json!({"turn_id": "019d036d-c7fa", "prompt": "bump x"}),
        ),
        "",
    );
    env.write("lib.py", b"x = 2\n");
    hook(
        &env,
        "codex",
        base(
            "PostToolUse",
            json!({"turn_id": "019d036d-c7fa", "tool_name": "apply_patch",
                   "tool_input": {"command": "*** Begin Patch"}, "tool_use_id": "call_1"}),
        ),
        "",
    );
    let rows = session_log(&env, "019d036d-0000");
    assert_eq!(rows.len(), 2, "{rows:#?}");
    assert_eq!(meta(&rows[0], "tool"), Some("apply_patch"));
    assert_eq!(meta(&rows[0], "agent_turn_id"), Some("019d036d-c7fa"));
    assert_eq!(meta(&rows[1], "label"), Some("turn-start"));
}

#[test]
fn broken_events_exit_zero_and_are_logged() {
    let env = Env::new();
    env.write("a", b"a\n");
    let log = env.store.join("hooks.log");
    let cases: [(&str, &[u8], &str); 4] = [
        ("claude", b"{not json", "not JSON"),
        (
            "claude",
            br#"{"hook_event_name":"PostToolUse","cwd":"/tmp"}"#,
            "no session_id",
        ),
        (
            "cursor",
            br#"{"conversation_id":"c"}"#,
            "no hook_event_name",
        ),
        ("gemini", b"[1,2]", "not a JSON object"),
    ];
    for (agent, event, why) in cases {
        let (code, out, err) = hook_with(&env.store, agent, event);
        assert_eq!(code, 0, "{agent} {err}");
        assert!(err.contains(why), "{why}: {err}");
        let expected = match agent {
            "claude" => "",
            _ => "{}\n",
        };
        assert_eq!(out, expected);
        let logged = fs::read_to_string(&log).expect("hooks.log");
        assert!(logged.lines().last().unwrap().contains(why), "{logged}");
    }
    assert_eq!(fs::read_to_string(&log).unwrap().lines().count(), 4);
    // Nothing was recorded.
    assert!(!env.store.join("store.redb").exists());

    // An unreachable store: a regular file where the store directory should be.
    let blocked = env.tmp.path().join("blocked");
    fs::write(&blocked, b"not a directory").unwrap();
    let event = json!({"session_id": "s", "cwd": ws(&env), "hook_event_name": "AfterTool",
                       "tool_name": "write_file", "tool_input": {}});
    let (code, out, err) = hook_with(&blocked, "gemini", event.to_string().as_bytes());
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "{}\n");
    assert!(err.contains("rewind hook:"), "{err}");
    assert!(err.contains("could not write hooks.log"), "{err}");
}

#[test]
fn concurrent_sessions_keep_their_own_turns_and_restore_by_turn() {
    let env = Env::new();
    env.write("f.txt", b"v0\n");
    let prompt = |s: &str| claude(&env, s, "UserPromptSubmit", json!({"prompt": "go"}));
    let edit = |s: &str| {
        claude(
            &env,
            s,
            "PostToolUse",
            json!({"tool_name": "Edit", "tool_input": {"file_path": "f.txt"}}),
        )
    };
    // Session A: turns 1 and 2; session B interleaved: turn 1.
    hook(&env, "claude", prompt("A"), "");
    env.write("f.txt", b"v1\n");
    hook(&env, "claude", edit("A"), "");
    hook(&env, "claude", prompt("B"), "");
    env.write("f.txt", b"v2\n");
    hook(&env, "claude", edit("B"), "");
    hook(&env, "claude", prompt("A"), "");
    env.write("f.txt", b"v3\n");
    hook(&env, "claude", edit("A"), "");

    let turns = |s: &str| -> Vec<String> {
        session_log(&env, s)
            .iter()
            .map(|r| format!("{}:{}", meta(r, "label").unwrap(), meta(r, "turn").unwrap()))
            .collect()
    };
    assert_eq!(
        turns("A"),
        ["tool:2", "turn-start:2", "tool:1", "turn-start:1"]
    );
    assert_eq!(turns("B"), ["tool:1", "turn-start:1"]);

    // The default session is the newest hook snapshot's: A. Turn 2 started at v2.
    env.ok(&["restore", "--turn", "2"]);
    assert_eq!(fs::read_to_string(env.path("f.txt")).unwrap(), "v2\n");
    env.ok(&["restore", "--turn", "1", "--session", "A"]);
    assert_eq!(fs::read_to_string(env.path("f.txt")).unwrap(), "v0\n");
    env.ok(&["restore", "--turn", "1", "--session", "B"]);
    assert_eq!(fs::read_to_string(env.path("f.txt")).unwrap(), "v1\n");
    // Undoable like any restore.
    env.ok(&["undo"]);
    assert_eq!(fs::read_to_string(env.path("f.txt")).unwrap(), "v0\n");

    let (code, err) = env.fails(&["restore", "--turn", "5", "--session", "A"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("session 'A' has no start of turn 5 (its turns: 1-2)"),
        "{err}"
    );
    let (code, err) = env.fails(&["restore", "--turn", "1", "--session", "nobody"]);
    assert_eq!(code, 2);
    assert!(err.contains("its turns: none"), "{err}");

    // A restore puts an old snapshot back at the head of the history; the next prompt of A
    // is still turn 3, not a second turn 2.
    hook(&env, "claude", prompt("A"), "");
    assert_eq!(turns("A")[0], "turn-start:3");
    // Lost counter files: the turn is recovered from the snapshots.
    fs::remove_dir_all(env.store.join("hooks")).unwrap();
    hook(&env, "claude", prompt("A"), "");
    assert_eq!(turns("A")[0], "turn-start:4");
}

#[test]
fn restore_turn_without_any_hook_snapshot_says_so() {
    let env = Env::new();
    env.write("a", b"a\n");
    env.ok(&["snapshot", "-q"]);
    let (code, err) = env.fails(&["restore", "--turn", "1"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no snapshot recorded by an agent hook"),
        "{err}"
    );
    assert!(err.contains("rewind hook install"), "{err}");
    let (code, _) = env.fails(&["restore", "@", "--turn", "1"]);
    assert_eq!(code, 2, "REV and --turn together are refused");
}

#[test]
fn log_session_lists_only_that_session() {
    let env = Env::new();
    env.write("a", b"a\n");
    env.ok(&["snapshot", "-q", "-m", "by hand"]);
    hook(
        &env,
        "claude",
        claude(&env, "one", "UserPromptSubmit", json!({"prompt": "p"})),
        "",
    );
    hook(
        &env,
        "claude",
        claude(&env, "two", "UserPromptSubmit", json!({"prompt": "p"})),
        "",
    );
    let one = session_log(&env, "one");
    assert_eq!(one.len(), 1);
    assert_eq!(meta(&one[0], "session"), Some("one"));
    assert_eq!(json(&env, &["log"]).as_array().unwrap().len(), 3);
    assert!(session_log(&env, "three").is_empty());
    let human = env.ok(&["log", "--session", "two"]);
    assert!(
        human.contains("[turn-start]  claude turn 1: UserPromptSubmit"),
        "{human}"
    );
}

/// Settings files as their agents document them, each with the user's own hooks and keys.
fn existing_settings(agent: &str) -> (&'static str, Value) {
    match agent {
        "claude" => (
            ".claude/settings.json",
            json!({"permissions": {"allow": ["Bash(npm run lint)"]},
                   "hooks": {"PostToolUse": [{"matcher": "Write|Edit",
                       "hooks": [{"type": "command", "command": "npx prettier --write"}]}]},
                   "model": "opus"}),
        ),
        "codex" => (
            ".codex/hooks.json",
            json!({"hooks": {"Stop": [{"hooks": [{"type": "command",
                "command": "python3 .codex/hooks/stop.py", "timeout": 10}]}]}}),
        ),
        "gemini" => (
            ".gemini/settings.json",
            json!({"general": {"vimMode": true},
                   "hooks": {"BeforeTool": [{"matcher": "run_shell_command",
                       "hooks": [{"name": "guard", "type": "command", "command": "./guard.sh"}]}]}}),
        ),
        _ => (
            ".cursor/hooks.json",
            json!({"version": 1, "hooks": {"afterFileEdit": [{"command": "./format.sh"}]}}),
        ),
    }
}

/// Every hook command in a settings document, for any of the two shapes.
fn commands(doc: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (event, list) in doc["hooks"].as_object().unwrap() {
        for entry in list.as_array().unwrap() {
            match entry.get("hooks") {
                Some(hs) => {
                    for h in hs.as_array().unwrap() {
                        out.push((event.clone(), h["command"].as_str().unwrap().to_string()));
                    }
                }
                None => out.push((
                    event.clone(),
                    entry["command"].as_str().unwrap().to_string(),
                )),
            }
        }
    }
    out
}

#[test]
fn install_merges_is_idempotent_and_uninstall_gives_the_file_back() {
    for agent in ["claude", "codex", "gemini", "cursor"] {
        let env = Env::new();
        let (rel, doc) = existing_settings(agent);
        let path = env.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let original = format!("{}\n", serde_json::to_string_pretty(&doc).unwrap());
        fs::write(&path, &original).unwrap();

        let r = json(&env, &["hook", "install", agent]);
        assert_eq!(r["changed"], true, "{r}");
        let installed = fs::read_to_string(&path).unwrap();
        let v: Value = serde_json::from_str(&installed).unwrap();
        // Every other key is kept, and the user's own hooks.
        for (k, x) in doc.as_object().unwrap() {
            if k != "hooks" {
                assert_eq!(&v[k], x, "{agent}: {k}");
            }
        }
        let cmds = commands(&v);
        for c in commands(&doc) {
            assert!(cmds.contains(&c), "{agent}: lost {c:?}");
        }
        let ours: Vec<&(String, String)> = cmds
            .iter()
            .filter(|(_, c)| c.ends_with(&format!(" hook {agent}")))
            .collect();
        assert!(ours.len() >= 4, "{agent}: {cmds:?}");
        assert!(
            ours.iter().all(|(_, c)| c.contains(" --store ")),
            "{ours:?}"
        );

        // Twice: nothing added, the file untouched.
        let r = json(&env, &["hook", "install", agent]);
        assert_eq!(r["changed"], false, "{r}");
        assert_eq!(fs::read_to_string(&path).unwrap(), installed, "{agent}");

        let r = json(&env, &["hook", "uninstall", agent]);
        assert_eq!(r["removed"].as_u64().unwrap(), ours.len() as u64, "{r}");
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            original,
            "{agent}: not the original"
        );
        let r = json(&env, &["hook", "uninstall", agent]);
        assert_eq!(r["changed"], false);
        assert_eq!(fs::read_to_string(&path).unwrap(), original);
    }
}

#[test]
fn install_into_no_file_creates_it_and_uninstall_removes_it() {
    let env = Env::new();
    env.ok(&["hook", "install", "cursor"]);
    let v: Value =
        serde_json::from_str(&fs::read_to_string(env.path(".cursor/hooks.json")).unwrap()).unwrap();
    assert_eq!(v["version"], 1);
    assert_eq!(
        v["hooks"]["beforeSubmitPrompt"].as_array().unwrap().len(),
        1
    );
    let out = env.ok(&["hook", "uninstall", "cursor"]);
    assert!(out.contains("held nothing else"), "{out}");
    assert!(!env.path(".cursor/hooks.json").exists());
}

#[test]
fn install_keeps_other_layouts_semantically_and_refuses_bad_json() {
    let env = Env::new();
    let path = env.path(".claude/settings.json");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    // Four-space indentation and an inline array: the content comes back, the indentation too.
    let original = "{\n    \"env\": {\"A\": \"1\"},\n    \"model\": \"opus\"\n}";
    fs::write(&path, original).unwrap();
    env.ok(&["hook", "install", "claude"]);
    let installed = fs::read_to_string(&path).unwrap();
    assert!(
        installed.contains("\n    \"hooks\": {\n        \"SessionStart\""),
        "{installed}"
    );
    env.ok(&["hook", "uninstall", "claude"]);
    let back: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    let want: Value = serde_json::from_str(original).unwrap();
    assert_eq!(back, want);

    fs::write(&path, "{\"hooks\": [1,").unwrap();
    let (code, err) = env.fails(&["hook", "install", "claude"]);
    assert_eq!(code, 2);
    assert!(err.contains("not valid JSON"), "{err}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "{\"hooks\": [1,");
}

#[test]
fn installed_command_runs_as_the_agent_would() {
    // The command install wrote, run through a shell in the workspace as Claude Code does.
    let env = Env::new();
    env.write("a.txt", b"a\n");
    env.ok(&["hook", "install", "claude"]);
    let v: Value =
        serde_json::from_str(&fs::read_to_string(env.path(".claude/settings.json")).unwrap())
            .unwrap();
    let cmd = v["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let mut child = std::process::Command::new("sh")
        .args(["-c", &cmd])
        .current_dir(&env.ws)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let event = claude(&env, "sh-1", "UserPromptSubmit", json!({"prompt": "hi"}));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    assert_eq!(session_log(&env, "sh-1").len(), 1);
}
