//! `rewind blame` on real stores: runs, agent-hook snapshots, renames, the live file, -L, and
//! bad input.

use serde_json::Value;

use crate::common::{Env, json, snap, tool_snap};

/// The `after` snapshot of each run, oldest first, with its message.
fn run_afters(env: &Env) -> Vec<(String, String)> {
    let log = json(env, &["log", "--label", "after"]);
    let mut v: Vec<(String, String)> = log
        .as_array()
        .expect("log array")
        .iter()
        .map(|r| {
            (
                r["id"].as_str().expect("id").to_string(),
                r["message"].as_str().expect("message").to_string(),
            )
        })
        .collect();
    v.reverse();
    v
}

fn lines(b: &Value) -> &Vec<Value> {
    b["lines"].as_array().expect("lines")
}

#[test]
fn every_line_names_the_run_that_wrote_it() {
    let env = Env::new();
    env.write("f.txt", b"a\nb\nc\nd\ne\n");
    env.write("other.txt", b"x\n");
    env.ok(&["init"]);
    let base = snap(&env, "base");
    // Each run writes one line; the last one rewrites a line an earlier run wrote.
    let scripts = [
        "sed -i 's/^b$/B1/' f.txt",
        "sed -i 's/^d$/D2/' f.txt; echo y >> other.txt",
        "printf 'f\\n' >> f.txt",
        "sed -i 's/^B1$/B4/' f.txt",
    ];
    for s in scripts {
        env.ok(&["run", "-q", "--", "sh", "-c", s]);
    }
    let afters = run_afters(&env);
    assert_eq!(afters.len(), 4);
    for (i, (_, m)) in afters.iter().enumerate() {
        assert!(m.contains(scripts[i]), "{m}");
    }
    let b = json(&env, &["blame", "f.txt"]);
    let want = [
        ("a", base.as_str()),
        ("B4", afters[3].0.as_str()),
        ("c", base.as_str()),
        ("D2", afters[1].0.as_str()),
        ("e", base.as_str()),
        ("f", afters[2].0.as_str()),
    ];
    let got = lines(&b);
    assert_eq!(got.len(), want.len(), "{b}");
    for (l, (text, id)) in got.iter().zip(want) {
        assert_eq!(l["text"], text, "{b}");
        assert!(
            l["snapshot"].as_str().expect("snapshot").starts_with(id),
            "{l} vs {id}"
        );
        let s = &b["snapshots"][l["snapshot"].as_str().expect("id")];
        if id != base {
            assert_eq!(s["label"], "after");
            assert!(
                s["command"].as_str().expect("command").contains("sh -c"),
                "{s}"
            );
        }
    }

    // Text output: one row per line, the run's command shown.
    let text = env.ok(&["blame", "f.txt"]);
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 6, "{text}");
    assert!(
        rows[3].contains("run: sh -c") && rows[3].ends_with("4) D2"),
        "{text}"
    );
    assert!(rows[0].starts_with(&base[..12]), "{text}");

    // An edit no snapshot has is blamed on none; -L narrows.
    env.write("f.txt", b"a\nB4\nc\nlive\ne\nf\n");
    let b = json(&env, &["blame", "f.txt", "-L", "3,4"]);
    let got = lines(&b);
    assert_eq!(got.len(), 2);
    assert_eq!(
        (got[0]["line"].as_u64(), got[1]["line"].as_u64()),
        (Some(3), Some(4))
    );
    assert!(got[0]["snapshot"].as_str().expect("id").starts_with(&base));
    assert_eq!(got[1]["snapshot"], Value::Null, "{b}");
    assert!(env.ok(&["blame", "f.txt"]).contains("not snapshotted"));

    // A snapshot's version: at the second run, D2 was that run's and B1 the first's.
    let b = json(&env, &["blame", "f.txt", &afters[1].0]);
    let got = lines(&b);
    assert_eq!(got[1]["text"], "B1");
    assert_eq!(got[1]["snapshot"].as_str(), Some(afters[0].0.as_str()));
    assert_eq!(got[3]["snapshot"].as_str(), Some(afters[1].0.as_str()));
}

#[test]
fn hook_snapshots_name_session_turn_and_tool() {
    let env = Env::new();
    env.write("src/lib.rs", b"one\ntwo\nthree\n");
    env.ok(&["init"]);
    let base = snap(&env, "base");
    env.write("src/lib.rs", b"one\nTWO\nthree\n");
    let s1 = env
        .ok(&[
            "snapshot",
            "-q",
            "-m",
            "claude turn 1: PostToolUse Edit",
            "--meta",
            "agent=claude",
            "--meta",
            "session=sess-aaaa-1111",
            "--meta",
            "turn=1",
            "--meta",
            "label=tool",
            "--meta",
            "tool=Edit",
        ])
        .trim()
        .to_string();
    env.write("src/lib.rs", b"one\nTWO\nthree\nfour\n");
    let s2 = env
        .ok(&[
            "snapshot",
            "-q",
            "--meta",
            "agent=cursor",
            "--meta",
            "session=sess-bbbb-2222",
            "--meta",
            "turn=3",
            "--meta",
            "label=tool",
            "--meta",
            "tool=Write",
        ])
        .trim()
        .to_string();
    let b = json(&env, &["blame", "src/lib.rs"]);
    let ids: Vec<&str> = lines(&b)
        .iter()
        .map(|l| &l["snapshot"].as_str().expect("id")[..12])
        .collect();
    assert_eq!(ids, [&base[..12], &s1[..12], &base[..12], &s2[..12]]);
    let full = |short: &str| {
        lines(&b)
            .iter()
            .filter_map(|l| l["snapshot"].as_str())
            .find(|id| id.starts_with(short))
            .expect("blamed")
            .to_string()
    };
    assert_eq!(b["snapshots"][full(&s1)]["session"], "sess-aaaa-1111");
    assert_eq!(b["snapshots"][full(&s1)]["turn"], "1");
    assert_eq!(b["snapshots"][full(&s2)]["tool"], "Write");
    let text = env.ok(&["blame", "src/lib.rs"]);
    let rows: Vec<&str> = text.lines().collect();
    assert!(rows[1].contains("claude sess-aaa t1 Edit"), "{text}");
    assert!(rows[3].contains("cursor sess-bbb t3 Write"), "{text}");
    // From a subdirectory, the path is relative to it.
    let sub = env.ws.join("src");
    let out = crate::common::rewind_bin()
        .arg("--store")
        .arg(&env.store)
        .args(["--json", "blame", "lib.rs"])
        .current_dir(&sub)
        .output()
        .expect("spawn");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn renames_are_followed() {
    let env = Env::new();
    env.write("old.txt", b"first\nsecond\n");
    env.ok(&["init"]);
    let base = snap(&env, "base");
    std::fs::rename(env.path("old.txt"), env.path("new.txt")).expect("mv");
    snap(&env, "moved");
    env.write("new.txt", b"first\nsecond\nthird\n");
    let edit = snap(&env, "edit");
    let b = json(&env, &["blame", "new.txt"]);
    let got = lines(&b);
    assert!(
        got[0]["snapshot"].as_str().expect("id").starts_with(&base),
        "{b}"
    );
    assert_eq!(got[0]["original_path"], "old.txt", "{b}");
    assert!(
        got[2]["snapshot"].as_str().expect("id").starts_with(&edit),
        "{b}"
    );
}

/// Each snapshot `blame --json` names is the snapshot object the log prints (`wire::Snapshot`),
/// plus who wrote it.
#[test]
fn blamed_snapshots_are_the_logs_snapshot_object() {
    let env = Env::new();
    env.write("f.txt", b"one\n");
    env.ok(&["init"]);
    env.ok(&[
        "snapshot",
        "-m",
        "first",
        "--tag",
        "v1",
        "--meta",
        "label=after",
    ]);
    let b = json(&env, &["blame", "f.txt"]);
    let log = json(&env, &["log"]);
    let row = &log[0];
    let id = row["id"].as_str().expect("id");
    let blamed = &b["snapshots"][id];
    for key in [
        "id",
        "short_id",
        "time",
        "time_ns",
        "workspace",
        "workspace_id",
        "parent",
        "root",
        "message",
        "meta",
        "tags",
        "files",
        "dirs",
        "symlinks",
        "bytes",
    ] {
        assert_eq!(blamed[key], row[key], "{key}: {b}");
    }
    assert_eq!(blamed["tags"], serde_json::json!(["v1"]), "{b}");
    assert_eq!(blamed["label"], "after", "{b}");
}

#[test]
fn bad_input_is_refused_clearly() {
    let env = Env::new();
    env.write("f.txt", b"a\nb\n");
    env.write("d/x", b"x\n");
    env.ok(&["init"]);
    let s = snap(&env, "base");
    let (code, err) = env.fails(&["blame", "f.txt", "-L", "2,9"]);
    assert_eq!(code, 2);
    assert!(err.contains("outside the file's 2 lines"), "{err}");
    let (code, err) = env.fails(&["blame", "f.txt", "-L", "x"]);
    assert_eq!(code, 2);
    assert!(err.contains("invalid -L 'x'"), "{err}");
    let (_, err) = env.fails(&["blame", "nope.txt", &s]);
    assert!(err.contains("nope.txt"), "{err}");
    let (_, err) = env.fails(&["blame", "nope.txt"]);
    assert!(err.contains("nope.txt"), "{err}");
    let (_, err) = env.fails(&["blame", "d"]);
    assert!(err.contains("directory"), "{err}");
    let (_, err) = env.fails(&["blame", "f.txt", "zzzz"]);
    assert!(err.contains("zzzz"), "{err}");
}

fn ten() -> String {
    (0..10).map(|i| format!("line {i}\n")).collect()
}

fn with(lines: &[(usize, &str)]) -> String {
    let mut v: Vec<String> = (0..10).map(|i| format!("line {i}")).collect();
    for (i, t) in lines {
        v[*i] = t.to_string();
    }
    v.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn revert_meta_takes_back_one_session_and_keeps_the_rest() {
    let env = Env::new();
    env.write("a.txt", ten().as_bytes());
    env.write("b.txt", ten().as_bytes());
    env.ok(&["init"]);
    snap(&env, "base");
    // Session A edits line 1 of a.txt and creates new.txt; B edits line 5; A edits b.txt;
    // the user edits line 8 of a.txt, live.
    env.write("a.txt", with(&[(1, "A1")]).as_bytes());
    env.write("new.txt", b"from A\n");
    tool_snap(&env, "A");
    env.write("a.txt", with(&[(1, "A1"), (5, "B5")]).as_bytes());
    tool_snap(&env, "B");
    env.write("b.txt", with(&[(3, "A3")]).as_bytes());
    tool_snap(&env, "A");
    env.write("a.txt", with(&[(1, "A1"), (5, "B5"), (8, "U8")]).as_bytes());

    // Sessions: A wholly present, B too.
    let s = json(&env, &["log", "--by-session"]);
    let rows = s.as_array().expect("sessions");
    assert_eq!(rows.len(), 2, "{s}");
    assert_eq!(rows[0]["session"], "A");
    assert_eq!(rows[0]["present"], "wholly", "{s}");
    assert_eq!(rows[0]["changes"], 2);
    assert_eq!(
        rows[0]["files"],
        serde_json::json!(["a.txt", "b.txt", "new.txt"])
    );
    assert_eq!(
        (rows[0]["added"].as_u64(), rows[0]["removed"].as_u64()),
        (Some(3), Some(2))
    );

    let before = std::fs::read(env.path("a.txt")).expect("read");
    let dry = json(&env, &["revert", "--meta", "session=A", "--dry-run"]);
    assert_eq!(dry["changes"].as_array().map(Vec::len), Some(2), "{dry}");
    assert_eq!(std::fs::read(env.path("a.txt")).expect("read"), before);

    let r = json(&env, &["revert", "--meta", "session=A"]);
    assert!(r["op"].is_u64(), "{r}");
    assert!(!env.path("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(env.path("a.txt")).expect("read"),
        with(&[(5, "B5"), (8, "U8")])
    );
    assert_eq!(
        std::fs::read_to_string(env.path("b.txt")).expect("read"),
        ten()
    );

    let s = json(&env, &["log", "--by-session"]);
    let a = s
        .as_array()
        .expect("sessions")
        .iter()
        .find(|r| r["session"] == "A")
        .cloned();
    assert_eq!(a.expect("A")["present"], "reverted", "{s}");

    // One operation: undo brings A's work back, with the user's edit.
    env.ok(&["undo"]);
    assert_eq!(
        std::fs::read_to_string(env.path("a.txt")).expect("read"),
        with(&[(1, "A1"), (5, "B5"), (8, "U8")])
    );
    assert!(env.path("new.txt").exists());
}

#[test]
fn revert_meta_reports_overlapping_hunks_and_keeps_them() {
    let env = Env::new();
    env.write("a.txt", ten().as_bytes());
    env.ok(&["init"]);
    snap(&env, "base");
    env.write("a.txt", with(&[(1, "A1"), (6, "A6")]).as_bytes());
    let a = tool_snap(&env, "A");
    // The user rewrites A's line 1 afterwards.
    env.write("a.txt", with(&[(1, "U1"), (6, "A6")]).as_bytes());
    let out = env
        .cmd()
        .args(["--json", "revert", "--meta", "session=A"])
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).expect("json");
    let c = &r["conflicts"].as_array().expect("conflicts")[0];
    assert_eq!(c["path"], "a.txt");
    assert!(c["after"].as_str().expect("after").starts_with(&a), "{r}");
    assert_eq!(
        (c["line"].as_u64(), c["lines"].as_u64()),
        (Some(2), Some(1)),
        "{r}"
    );
    assert_eq!(
        (c["changed"].as_str(), c["live"].as_str()),
        (Some("A1\n"), Some("U1\n"))
    );
    assert_eq!(c["reverted"], "line 1\n");
    // The hunk that does not overlap is taken back; the overlapping one kept.
    assert_eq!(
        std::fs::read_to_string(env.path("a.txt")).expect("read"),
        with(&[(1, "U1")])
    );
    let s = json(&env, &["log", "--by-session"]);
    assert_eq!(s[0]["present"], "reverted", "{s}");

    let (code, err) = env.fails(&["revert", "--meta", "session=nobody"]);
    assert_eq!(code, 2);
    assert!(err.contains("session=nobody"), "{err}");
    let (code, err) = env.fails(&["revert", "--meta", "oops"]);
    assert_eq!(code, 2);
    assert!(err.contains("oops"), "{err}");
}
