//! A workspace's runs and agent tool calls as units of review: `diff A B --by-run` groups the
//! change by the run or tool call that made each line, cutting a hunk two of them share, and
//! `revert A B --run N` takes back one of them, keeping the others' and the user's edits.

use serde_json::Value;

use crate::common::{Env, json, snap, tool_snap};

fn read(env: &Env, rel: &str) -> String {
    String::from_utf8_lossy(&std::fs::read(env.path(rel)).expect("read")).into_owned()
}

/// Twenty numbered lines, with `edits` (0-based line, new text) applied.
fn lines(edits: &[(usize, &str)]) -> String {
    let mut v: Vec<String> = (0..20).map(|i| format!("line {i}")).collect();
    for (i, t) in edits {
        v[*i] = t.to_string();
    }
    v.iter().map(|l| format!("{l}\n")).collect()
}

/// `sed` that rewrites line `i` (0-based) of f.txt to `text`, as a run's command.
fn sed(i: usize, text: &str) -> String {
    format!("sed -i '{}s/.*/{text}/' f.txt", i + 1)
}

/// A group's files: (path, hunk ids).
type Files = Vec<(String, Vec<String>)>;

/// The groups of `diff A B --by-run --json`: (run, files).
fn groups(v: &Value) -> Vec<(Value, Files)> {
    v["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|g| {
            let files = g["files"]
                .as_array()
                .expect("files")
                .iter()
                .map(|f| {
                    let ids = f["hunks"]
                        .as_array()
                        .map(|hs| {
                            hs.iter()
                                .map(|h| h["id"].as_str().expect("id").to_string())
                                .collect()
                        })
                        .unwrap_or_default();
                    (f["path"].as_str().expect("path").to_string(), ids)
                })
                .collect();
            (g["run"].clone(), files)
        })
        .collect()
}

#[test]
fn neighbouring_edits_of_two_runs_are_reviewed_and_taken_back_apart() {
    let env = Env::new();
    env.write("f.txt", lines(&[]).as_bytes());
    env.write("g.txt", b"keep\n");
    env.ok(&["init"]);
    let a = snap(&env, "base");
    // Run 1 edits line 10, run 2 line 11 (adjacent: one hunk of A..B), the user line 3
    // between them, and run 2 also adds a file.
    env.ok(&["run", "-q", "--", "sh", "-c", &sed(10, "ONE")]);
    env.write("f.txt", lines(&[(3, "user"), (10, "ONE")]).as_bytes());
    env.ok(&[
        "run",
        "-q",
        "--",
        "sh",
        "-c",
        &format!("{}; echo new > added.txt", sed(11, "TWO")),
    ]);
    let b = snap(&env, "end");

    // Without --by-run, one hunk holds both runs' lines and the user's: taking one back by
    // hunk would take all three.
    let plain = json(&env, &["diff", &a, &b, "--hunks"]);
    let f = plain["files"]
        .as_array()
        .expect("files")
        .iter()
        .find(|f| f["path"] == "f.txt")
        .expect("f.txt");
    assert_eq!(f["hunks"].as_array().expect("hunks").len(), 1, "{plain}");

    let v = json(&env, &["diff", &a, &b, "--by-run"]);
    let units = v["units"].as_array().expect("units");
    assert_eq!(units.len(), 2, "{v}");
    assert_eq!(units[0]["meta"]["label"], "after");
    assert!(
        units[1]["message"]
            .as_str()
            .expect("message")
            .contains("TWO"),
        "{v}"
    );
    let g = groups(&v);
    let runs: Vec<&Value> = g.iter().map(|(r, _)| r).collect();
    assert_eq!(
        runs,
        [&Value::from(1), &Value::from(2), &Value::from(0)],
        "{v}"
    );
    // Run 1: one hunk of f.txt; run 2: its piece of the shared hunk and the added file whole.
    assert_eq!(g[0].1.len(), 1);
    assert_eq!(g[0].1[0].0, "f.txt");
    assert_eq!(g[0].1[0].1.len(), 1);
    assert_eq!(g[1].1.len(), 2, "{v}");
    assert!(
        g[1].1
            .iter()
            .any(|(p, ids)| p == "added.txt" && ids.is_empty())
    );
    assert_eq!(g[2].1[0].0, "f.txt");

    // Text output names each run and its command.
    let text = env.ok(&["diff", &a, &b, "--by-run"]);
    assert!(text.contains("run 1: "), "{text}");
    assert!(text.contains("run: sh -c"), "{text}");
    assert!(text.contains("added.txt (whole file)"), "{text}");
    assert!(text.contains("made outside any run"), "{text}");

    // The user edits line 15 after B; taking back run 1 keeps run 2's line (adjacent to
    // run 1's), the user's edits, and the file run 2 added.
    env.write(
        "f.txt",
        lines(&[(3, "user"), (10, "ONE"), (11, "TWO"), (15, "later")]).as_bytes(),
    );
    let dry = json(&env, &["revert", &a, &b, "--run", "1", "--dry-run"]);
    assert_eq!(dry["op"], Value::Null, "{dry}");
    assert_eq!(
        read(&env, "f.txt").into_bytes(),
        lines(&[(3, "user"), (10, "ONE"), (11, "TWO"), (15, "later")]).as_bytes()
    );
    let r = json(&env, &["revert", &a, &b, "--run", "1"]);
    assert!(r["op"].is_u64(), "{r}");
    assert_eq!(
        read(&env, "f.txt"),
        lines(&[(3, "user"), (11, "TWO"), (15, "later")])
    );
    assert_eq!(read(&env, "added.txt").into_bytes(), b"new\n");

    // One undoable operation.
    env.ok(&["undo"]);
    assert_eq!(
        read(&env, "f.txt"),
        lines(&[(3, "user"), (10, "ONE"), (11, "TWO"), (15, "later")])
    );

    // Run 2 taken back: its line and the file it added go; run 1's line stays.
    env.ok(&["revert", &a, &b, "--run", "2"]);
    assert_eq!(
        read(&env, "f.txt"),
        lines(&[(3, "user"), (10, "ONE"), (15, "later")])
    );
    assert!(!env.path("added.txt").exists());
    assert_eq!(read(&env, "g.txt").into_bytes(), b"keep\n");
}

#[test]
fn tool_calls_are_units_and_a_conflict_writes_nothing() {
    let env = Env::new();
    env.write("f.txt", lines(&[]).as_bytes());
    env.ok(&["init"]);
    let a = snap(&env, "base");
    env.write("f.txt", lines(&[(5, "agent one")]).as_bytes());
    tool_snap(&env, "s1");
    env.write(
        "f.txt",
        lines(&[(5, "agent one"), (8, "agent two")]).as_bytes(),
    );
    let b = tool_snap(&env, "s2");
    let v = json(&env, &["diff", &a, &b, "--by-run"]);
    assert_eq!(v["units"][1]["meta"]["session"], "s2", "{v}");
    let g = groups(&v);
    assert_eq!(g.len(), 2, "{v}");

    // The user rewrites tool call 1's line afterwards: taking it back conflicts, and nothing
    // is written.
    let live = lines(&[(5, "user's"), (8, "agent two")]);
    env.write("f.txt", live.as_bytes());
    let out = env
        .cmd()
        .args(["revert", &a, &b, "--run", "1"])
        .output()
        .expect("spawn");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read(&env, "f.txt"), live);
    // Tool call 2's line (in the same hunk of A..B) is still its own: it goes back cleanly.
    env.ok(&["revert", &a, &b, "--run", "2"]);
    assert_eq!(read(&env, "f.txt"), lines(&[(5, "user's")]));
}

#[test]
fn bad_ranges_and_run_numbers_are_refused() {
    let env = Env::new();
    env.write("f.txt", lines(&[]).as_bytes());
    env.ok(&["init"]);
    let a = snap(&env, "base");
    env.ok(&["run", "-q", "--", "sh", "-c", &sed(1, "x")]);
    let b = snap(&env, "end");
    let (_, err) = env.fails(&["revert", &a, &b, "--run", "7"]);
    assert!(
        err.contains("has no run 7") && err.contains("1 to 1"),
        "{err}"
    );
    // Reversed range.
    let (_, err) = env.fails(&["diff", &b, &a, "--by-run"]);
    assert!(err.contains("not a range of this workspace's log"), "{err}");
    // The live tree is not a snapshot.
    let (_, err) = env.fails(&["diff", &a, "--by-run"]);
    assert!(err.contains("--by-run needs two snapshots"), "{err}");
    assert_eq!(read(&env, "f.txt"), lines(&[(1, "x")]));
}
