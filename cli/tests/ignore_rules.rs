//! Ignore rules beyond the workspace's own files: `run --ignore`, the store's config.toml list,
//! and the default list of well-known caches (which the config switches off).

use crate::common;

use std::fs;

use common::*;
use serde_json::Value;

fn snap_paths(e: &Env) -> Vec<String> {
    let v: Value = serde_json::from_str(&e.ok(&["ls", "@", "-r", "--json"])).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|o| o["path"].as_str().unwrap().to_string())
        .collect()
}

fn caches(e: &Env) {
    e.write("src/main.py", b"print(1)\n");
    e.write("node_modules/left-pad/index.js", b"x\n");
    e.write("src/__pycache__/main.cpython-312.pyc", b"\0pyc");
    e.write(".venv/bin/python", b"#!\n");
    e.write("target/debug/app", b"\0elf");
    // Source in a directory named like a cache, deeper than Cargo puts its output
    e.write("drivers/target/core.c", b"int x;\n");
}

#[test]
fn well_known_caches_are_left_out_by_default_and_kept_by_restore() {
    let e = Env::new();
    caches(&e);
    e.ok(&["init"]);
    e.ok(&["snapshot"]);
    let paths = snap_paths(&e);
    assert!(paths.contains(&"src/main.py".to_string()), "{paths:?}");
    assert!(
        paths.contains(&"drivers/target/core.c".to_string()),
        "only the root's target/ is a default cache: {paths:?}"
    );
    for p in ["node_modules", "src/__pycache__", ".venv", "target"] {
        assert!(!paths.iter().any(|x| x.starts_with(p)), "{p} in {paths:?}");
    }
    // status does not list them, and a restore leaves them alone.
    assert!(e.ok(&["status"]).contains("no changes"));
    e.write("src/main.py", b"print(2)\n");
    e.ok(&["restore", "@"]);
    assert!(e.path("node_modules/left-pad/index.js").exists());
    assert!(e.path("target/debug/app").exists());
    let shown: Value = serde_json::from_str(&e.ok(&["show", "@", "--json"])).unwrap();
    assert!(
        shown["ignore_globs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g == "node_modules/"),
        "the snapshot records what it left out: {shown}"
    );
}

#[test]
fn the_store_config_switches_the_defaults_off_and_adds_its_own_globs() {
    let e = Env::new();
    caches(&e);
    e.write("data/big.csv", b"1,2\n");
    e.ok(&["init"]);
    fs::write(
        e.store.join("config.toml"),
        "[ignore]\ndefault_caches = false\nglobs = [\"*.csv\"]\n",
    )
    .unwrap();
    e.ok(&["snapshot"]);
    let paths = snap_paths(&e);
    assert!(
        paths.contains(&"node_modules/left-pad/index.js".to_string()),
        "{paths:?}"
    );
    assert!(paths.contains(&"target/debug/app".to_string()), "{paths:?}");
    assert!(!paths.contains(&"data/big.csv".to_string()), "{paths:?}");
    // A typo is an error naming the file.
    fs::write(e.store.join("config.toml"), "[ignore]\nglob = []\n").unwrap();
    let (code, err) = e.fails(&["snapshot"]);
    assert_eq!(code, 2);
    assert!(err.contains("config.toml"), "{err}");
}

#[test]
fn run_ignore_leaves_paths_out_of_both_snapshots() {
    let e = Env::new();
    e.write("a.txt", b"a\n");
    e.ok(&["init"]);
    let out = e.ok(&[
        "run",
        "--json",
        "--ignore",
        "logs/",
        "--",
        "sh",
        "-c",
        "mkdir -p logs; echo x > logs/run.log; echo b > a.txt",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let files: Vec<&str> = v["diff"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["a.txt"], "{v}");
}
