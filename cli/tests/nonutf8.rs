//! Paths that are not UTF-8: every command that takes a path takes one, text output quotes it
//! as git does, and JSON carries the exact bytes beside the lossy `path`.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::process::Output;

use common::*;
use serde_json::Value;

const NAME: &[u8] = b"src/caf\xe9";

fn raw(e: &Env, args: &[&OsStr]) -> Output {
    e.cmd().args(args).output().expect("spawn rewind")
}

fn ok(e: &Env, args: &[&OsStr]) -> Vec<u8> {
    let out = raw(e, args);
    assert!(
        out.status.success(),
        "rewind {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn s(x: &str) -> &OsStr {
    OsStr::new(x)
}

/// The file named by `path_bytes` (base64) when present, else by `path`.
fn json_path(o: &Value) -> Vec<u8> {
    use base64::Engine;
    match o.get("path_bytes").and_then(Value::as_str) {
        Some(b) => base64::engine::general_purpose::STANDARD
            .decode(b)
            .expect("path_bytes is base64"),
        None => o["path"].as_str().expect("path").as_bytes().to_vec(),
    }
}

#[test]
fn every_path_command_takes_a_non_utf8_name() {
    let e = Env::new();
    let name = OsStr::from_bytes(NAME);
    write_file(&e.ws, NAME, b"one\n");
    e.write("src/plain.txt", b"plain\n");
    e.ok(&["init"]);
    e.ok(&["snapshot", "-m", "one", "--tag", "one"]);
    write_file(&e.ws, NAME, b"two\n");
    e.ok(&["snapshot", "-m", "two", "--tag", "two"]);

    // cat, ls
    assert_eq!(ok(&e, &[s("cat"), s("@"), name]), b"two\n");
    assert_eq!(ok(&e, &[s("cat"), s("@~1"), name]), b"one\n");
    let ls = ok(&e, &[s("ls"), s("@"), name]);
    assert!(
        String::from_utf8_lossy(&ls).contains("\"src/caf\\351\""),
        "ls quotes as git does: {}",
        String::from_utf8_lossy(&ls)
    );
    let ls_json: Value =
        serde_json::from_slice(&ok(&e, &[s("--json"), s("ls"), s("@"), s("src")])).unwrap();
    let paths: Vec<Vec<u8>> = ls_json.as_array().unwrap().iter().map(json_path).collect();
    assert!(paths.contains(&NAME.to_vec()), "{ls_json}");
    assert!(paths.contains(&b"src/plain.txt".to_vec()), "{ls_json}");
    let plain = ls_json
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["path"] == "src/plain.txt")
        .unwrap();
    assert!(plain.get("path_bytes").is_none(), "only when needed");

    // log -- PATH: both snapshots changed it
    let log: Value =
        serde_json::from_slice(&ok(&e, &[s("--json"), s("log"), s("--"), name])).unwrap();
    let rows = log.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{log}");
    assert_eq!(json_path(&rows[0]["change"]), NAME);
    assert_eq!(rows[1]["change"]["status"], "added");

    // status -- and diff -- (live and between snapshots)
    write_file(&e.ws, NAME, b"three\n");
    e.write("src/plain.txt", b"changed\n");
    let st = ok(&e, &[s("status"), s("--"), name]);
    assert_eq!(
        String::from_utf8_lossy(&st),
        "modified \"src/caf\\351\"\n",
        "status names only the asked path, quoted"
    );
    let st: Value =
        serde_json::from_slice(&ok(&e, &[s("--json"), s("status"), s("--"), name])).expect("json");
    let changes = st["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(json_path(&changes[0]), NAME);
    let d = ok(&e, &[s("diff"), s("--"), name]);
    let d = String::from_utf8_lossy(&d);
    assert!(d.contains("+three"), "{d}");
    assert!(!d.contains("changed"), "only the asked path: {d}");
    let d = ok(&e, &[s("diff"), s("@~1"), s("@"), s("--"), name]);
    assert!(String::from_utf8_lossy(&d).contains("+two"));
    let dj: Value =
        serde_json::from_slice(&ok(&e, &[s("--json"), s("diff"), s("--"), name])).unwrap();
    assert_eq!(json_path(&dj["files"][0]), NAME);

    // restore -- (only that path)
    ok(&e, &[s("restore"), s("@~1"), s("--"), name]);
    assert_eq!(fs::read(e.ws.join(name)).unwrap(), b"one\n");
    assert_eq!(fs::read(e.path("src/plain.txt")).unwrap(), b"changed\n");

    // revert -- (undo one -> two for that path only)
    e.ok(&["restore", "two"]);
    ok(&e, &[s("revert"), s("one"), s("two"), s("--"), name]);
    assert_eq!(fs::read(e.ws.join(name)).unwrap(), b"one\n");

    // apply a patch that names the file (git-quoted), then read it back
    e.ok(&["restore", "two"]);
    let patch = ok(&e, &[s("diff"), s("two"), s("one")]);
    assert!(
        String::from_utf8_lossy(&patch).contains("\"a/src/caf\\351\""),
        "{}",
        String::from_utf8_lossy(&patch)
    );
    let pfile = e.tmp.path().join(OsStr::from_bytes(b"p\xe9.diff"));
    fs::write(&pfile, &patch).unwrap();
    ok(&e, &[s("apply"), pfile.as_os_str()]);
    assert_eq!(fs::read(e.ws.join(name)).unwrap(), b"one\n");

    // artifact put FILE
    ok(
        &e,
        &[s("artifact"), s("put"), s("the-patch"), pfile.as_os_str()],
    );
    assert_eq!(ok(&e, &[s("artifact"), s("get"), s("the-patch")]), patch);

    // a path that is not there is named, quoted, in the error
    let out = raw(&e, &[s("cat"), s("@"), OsStr::from_bytes(b"nope\xff")]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"nope\\377\""), "{err}");
}

#[test]
fn overlay_accept_and_reject_take_a_non_utf8_name() {
    let e = Env::new();
    let name = OsStr::from_bytes(NAME);
    write_file(&e.ws, NAME, b"base\n");
    e.write("other.txt", b"base\n");
    e.ok(&["init"]);
    e.ok(&["snapshot"]);
    let id = e
        .ok(&["overlay", "create", "--backend", "copy"])
        .trim()
        .to_string();
    let script = "printf new > \"$(printf 'src/caf\\351')\"; echo new > other.txt";
    e.ok(&["overlay", "run", &id, "--", "sh", "-c", script]);
    let accepted: Value = serde_json::from_slice(&ok(
        &e,
        &[
            s("--json"),
            s("overlay"),
            s("accept"),
            s(&id),
            s("--"),
            name,
        ],
    ))
    .unwrap();
    assert_eq!(json_path(&accepted["files"][0]), NAME, "{accepted}");
    assert_eq!(fs::read(e.ws.join(name)).unwrap(), b"new");
    assert_eq!(fs::read(e.path("other.txt")).unwrap(), b"base\n");
    let id2 = e
        .ok(&["overlay", "create", "--backend", "copy"])
        .trim()
        .to_string();
    // The workspace holds "new" now (and the overlay's base may too): change it again.
    let script2 = "printf newer > \"$(printf 'src/caf\\351')\"; echo newer > other.txt";
    e.ok(&["overlay", "run", &id2, "--", "sh", "-c", script2]);
    let rejected: Value = serde_json::from_slice(&ok(
        &e,
        &[
            s("--json"),
            s("overlay"),
            s("reject"),
            s(&id2),
            s("--"),
            name,
        ],
    ))
    .unwrap();
    // A list of bare paths carries the bytes in a twin list (null where a name is UTF-8).
    use base64::Engine;
    let b = rejected["rejected_bytes"][0]
        .as_str()
        .unwrap_or_else(|| panic!("rejected_bytes: {rejected}"));
    let bytes = base64::engine::general_purpose::STANDARD.decode(b).unwrap();
    assert_eq!(bytes, NAME, "{rejected}");
    let names = e.ok(&["overlay", "diff", &id2, "--name-status"]);
    assert_eq!(names, "M\tother.txt\n");
}

#[test]
fn run_result_carries_the_exact_bytes_and_matches_the_schema() {
    let e = Env::new();
    write_file(&e.ws, NAME, b"base\n");
    e.ok(&["init"]);
    let out = e.ok(&[
        "run",
        "--json",
        "--",
        "sh",
        "-c",
        "printf new > \"$(printf 'src/caf\\351')\"; echo x > ok.txt",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let schema: Value = serde_json::from_str(
        &fs::read_to_string(concat!(
            concat!(env!("CARGO_MANIFEST_DIR"), "/.."),
            "/schemas/run-result.schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{v}");
    let files = v["diff"]["files"].as_array().unwrap();
    let paths: Vec<Vec<u8>> = files.iter().map(json_path).collect();
    assert_eq!(paths, vec![b"ok.txt".to_vec(), NAME.to_vec()]);
    assert!(files[0]["path_bytes"].is_null());
}
