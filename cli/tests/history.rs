//! History: `log` tells a snapshot from a return to it, answers queries (`-- PATH` with change
//! kinds and renames, `--meta`, `--label`, `--since/--until`); `snapshot --if-changed`; the run
//! result says why rewind exited as it did.

use crate::common;

use std::fs;

use common::*;
use serde_json::Value;

fn json(e: &Env, args: &[&str]) -> Value {
    serde_json::from_str(&e.ok(args)).expect("json")
}

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn log_marks_a_return_to_a_snapshot_apart_from_the_snapshot() {
    let e = Env::new();
    e.write("f.txt", b"one\n");
    e.ok(&["init"]);
    let one = e.ok(&["snapshot", "-q", "-m", "one"]).trim().to_string();
    e.write("f.txt", b"two\n");
    e.ok(&["snapshot", "-m", "two"]);
    e.ok(&["restore", &one]);
    let log = json(&e, &["log", "--json"]);
    let rows = log.as_array().unwrap();
    // Each snapshot once (time order); the one the workspace returned to is marked.
    let of_one: Vec<&Value> = rows
        .iter()
        .filter(|r| r["id"].as_str().unwrap().starts_with(&one))
        .collect();
    assert_eq!(of_one.len(), 1, "{log}");
    assert_eq!(of_one[0]["restored"], true, "{log}");
    assert!(
        rows.iter()
            .filter(|r| !r["id"].as_str().unwrap().starts_with(&one))
            .all(|r| r["restored"] == false),
        "{log}"
    );
    let text = e.ok(&["log"]);
    let marked: Vec<&str> = text.lines().filter(|l| l.contains("restored")).collect();
    assert_eq!(marked.len(), 1, "{text}");
    assert!(marked[0].starts_with(&one[..12]), "{text}");
}

#[test]
fn log_of_a_path_lists_the_snapshots_that_changed_it_following_renames() {
    let e = Env::new();
    e.write("keep.txt", b"k\n");
    e.ok(&["init"]);
    e.ok(&["snapshot", "-m", "s0"]);
    e.write("src/a.rs", b"a\n");
    e.ok(&["snapshot", "-m", "added"]);
    e.write("keep.txt", b"k2\n");
    e.ok(&["snapshot", "-m", "unrelated"]);
    e.write("src/a.rs", b"a2\n");
    e.ok(&["snapshot", "-m", "edited"]);
    fs::rename(e.path("src/a.rs"), e.path("src/b.rs")).unwrap();
    e.ok(&["snapshot", "-m", "renamed"]);
    e.write("src/b.rs", b"b3\n");
    e.ok(&["snapshot", "-m", "edited again"]);
    fs::remove_file(e.path("src/b.rs")).unwrap();
    e.ok(&["snapshot", "-m", "deleted"]);

    let v = json(&e, &["log", "--json", "--", "src/b.rs"]);
    let got: Vec<(String, String, Option<String>)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["message"].as_str().unwrap().to_string(),
                r["change"]["status"].as_str().unwrap().to_string(),
                r["change"]["old_path"].as_str().map(str::to_string),
            )
        })
        .collect();
    let s = |x: &str| x.to_string();
    assert_eq!(
        got,
        vec![
            (s("deleted"), s("deleted"), None),
            (s("edited again"), s("modified"), None),
            (s("renamed"), s("renamed"), Some(s("src/a.rs"))),
            (s("edited"), s("modified"), None),
            (s("added"), s("added"), None),
        ],
        "{v}"
    );
    assert_eq!(v[0]["change"]["path"], "src/b.rs");
    assert_eq!(
        v[3]["change"]["path"], "src/a.rs",
        "older rows name the old path"
    );
    let text = e.ok(&["log", "--", "src/b.rs"]);
    assert_eq!(text.lines().count(), 5, "{text}");
    assert!(text.contains("renamed  src/a.rs -> src/b.rs"), "{text}");
    // -n limits the answers, not the snapshots looked at.
    assert_eq!(
        json(&e, &["log", "--json", "-n", "2", "--", "src/b.rs"])
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // A path never there: no rows, no error.
    assert_eq!(
        json(&e, &["log", "--json", "--", "nope"]),
        serde_json::json!([])
    );
}

#[test]
fn log_filters_by_meta_label_and_time() {
    let e = Env::new();
    e.write("f", b"1");
    e.ok(&["init"]);
    e.ok(&[
        "snapshot",
        "-m",
        "a",
        "--meta",
        "task=1",
        "--meta",
        "label=before",
    ]);
    e.write("f", b"2");
    e.ok(&["snapshot", "-m", "b", "--meta", "task=2"]);
    e.write("f", b"3");
    e.ok(&[
        "snapshot",
        "-m",
        "c",
        "--meta",
        "task=1",
        "--meta",
        "label=after",
    ]);
    let msgs = |v: Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| r["message"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        msgs(json(&e, &["log", "--json", "--meta", "task=1"])),
        ["c", "a"]
    );
    assert_eq!(
        msgs(json(
            &e,
            &["log", "--json", "--meta", "task=1", "--label", "before"]
        )),
        ["a"]
    );
    assert_eq!(
        msgs(json(&e, &["log", "--json", "--label", "after"])),
        ["c"]
    );
    let all = json(&e, &["log", "--json"]);
    let t_c = all[0]["time"].as_str().unwrap().to_string();
    // --since/--until take RFC 3339 times (inclusive, to the second) or a duration ago. (`a`
    // carries a run's before label, which `log` hides without --all.)
    assert!(msgs(json(&e, &["log", "--json", "--since", &t_c])).contains(&"c".to_string()));
    assert_eq!(
        msgs(json(
            &e,
            &["log", "--json", "--all", "--until", "2999-01-01T00:00:00Z"]
        )),
        ["c", "b", "a"]
    );
    assert_eq!(
        msgs(json(&e, &["log", "--json", "--all", "--since", "1h"])),
        ["c", "b", "a"]
    );
    assert_eq!(
        msgs(json(
            &e,
            &["log", "--json", "--until", "2000-01-01T00:00:00Z"]
        )),
        Vec::<String>::new()
    );
    let (code, err) = e.fails(&["log", "--since", "yesterday-ish"]);
    assert_eq!(code, 2);
    assert!(err.contains("--since"), "{err}");
    let (_, err) = e.fails(&["log", "--meta", "novalue"]);
    assert!(err.contains("KEY=VALUE"), "{err}");
}

#[test]
fn snapshot_if_changed_adds_nothing_for_an_unchanged_tree() {
    let e = Env::new();
    e.write("f", b"1");
    e.ok(&["init"]);
    let first = json(&e, &["snapshot", "--json", "--if-changed"]);
    assert_eq!(first["created"], true);
    let again = json(&e, &["snapshot", "--json", "--if-changed"]);
    assert_eq!(again["created"], false, "{again}");
    assert_eq!(again["id"], first["id"]);
    assert_eq!(json(&e, &["log", "--json"]).as_array().unwrap().len(), 1);
    let text = e.ok(&["snapshot", "--if-changed"]);
    assert!(text.contains("unchanged"), "{text}");
    e.write("f", b"2");
    let changed = json(&e, &["snapshot", "--json", "--if-changed"]);
    assert_eq!(changed["created"], true);
    assert_ne!(changed["id"], first["id"]);
    // Without the flag a snapshot is always recorded (an explicit request).
    e.ok(&["snapshot"]);
    assert_eq!(json(&e, &["log", "--json"]).as_array().unwrap().len(), 3);
    assert_eq!(ids(&json(&e, &["log", "--json"])).len(), 3);
}

#[test]
fn the_run_result_says_why_rewind_exited_123() {
    let e = Env::new();
    e.write("Cargo.toml", b"x\n");
    e.ok(&["init"]);
    let run = |args: &[&str]| -> (i32, Value) {
        let out = e.cmd().args(args).output().unwrap();
        (
            out.status.code().unwrap(),
            serde_json::from_slice(&out.stdout).unwrap(),
        )
    };
    let (code, v) = run(&["run", "--json", "--", "sh", "-c", "exit 123"]);
    assert_eq!(code, 123);
    assert_eq!(v["rewind_exit_code"], 123);
    assert_eq!(v["exit_reason"], "command");
    let (code, v) = run(&[
        "run",
        "--json",
        "--forbid",
        "Cargo.toml",
        "--on-violation=fail",
        "--",
        "sh",
        "-c",
        "echo y >> Cargo.toml",
    ]);
    assert_eq!(code, 123);
    assert_eq!(v["rewind_exit_code"], 123);
    assert_eq!(v["exit_reason"], "contract_violation");
    assert_eq!(v["exit_code"], 0);
}
