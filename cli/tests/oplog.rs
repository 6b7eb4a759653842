//! The operation log reads one row per user action: the bookkeeping snapshots around an action
//! fold into it, and kinds carry no ids (the target is a field of its own).

use crate::common;

use common::*;
use serde_json::Value;

fn rows(e: &Env, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["op", "log", "--json"];
    args.extend_from_slice(extra);
    serde_json::from_str::<Value>(&e.ok(&args))
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn one_row_per_user_action() {
    let e = Env::new();
    e.write("a.txt", b"a\n");
    e.ok(&["init"]);
    e.ok(&["snapshot", "--tag", "start"]);
    e.ok(&["run", "--", "sh", "-c", "echo b > a.txt"]);
    e.ok(&["restore", "start"]);
    let r = rows(&e, &[]);
    let kinds: Vec<&str> = r.iter().map(|o| o["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["restore", "run", "snapshot"], "{r:?}");
    assert!(!r[1]["folded"].as_array().unwrap().is_empty(), "{:?}", r[1]);
    let raw = rows(&e, &["--raw"]);
    assert!(raw.len() > r.len(), "--raw shows every stored row");
    assert!(raw.iter().any(|o| o["kind"] == "pre-run"));

    let id = e
        .ok(&["overlay", "create", "--backend", "copy"])
        .trim()
        .to_string();
    e.ok(&["overlay", "run", &id, "--", "sh", "-c", "echo c > a.txt"]);
    e.ok(&["overlay", "reject", &id]);
    let r = rows(&e, &[]);
    let rej = r
        .iter()
        .find(|o| o["kind"].as_str().unwrap().starts_with("overlay-reject"))
        .expect("a reject row");
    assert_eq!(rej["kind"], "overlay-reject", "no id in the kind: {rej}");
    assert_eq!(rej["target"], id.as_str(), "{rej}");
    assert_eq!(
        rej["changed_workspace"], false,
        "only the overlay moved: {rej}"
    );
    e.ok(&["undo"]);
    let top = &rows(&e, &[])[0];
    assert_eq!(top["kind"], "undo", "{top}");
    assert_eq!(top["changed_workspace"], false, "undoing a reject: {top}");
    let run = r.iter().find(|o| o["kind"] == "run").unwrap();
    assert_eq!(run["changed_workspace"], true, "{run}");

    // An accept is one row too (stored as the accept and its pre/post snapshots).
    let id = e
        .ok(&["overlay", "create", "--backend", "copy"])
        .trim()
        .to_string();
    e.ok(&["overlay", "run", &id, "--", "sh", "-c", "echo d > a.txt"]);
    let before = rows(&e, &["--raw"]).len();
    e.ok(&["overlay", "accept", &id]);
    let raw_added = rows(&e, &["--raw"]).len() - before;
    let top = &rows(&e, &[])[0];
    assert!(top["kind"].as_str().unwrap().contains("accept"), "{top}");
    assert_eq!(
        top["folded"].as_array().unwrap().len(),
        raw_added - 1,
        "{top}"
    );
}
