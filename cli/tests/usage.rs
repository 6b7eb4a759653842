//! The command line itself: arguments that are not UTF-8, the one rule for names, exit codes
//! (conflicts, `run`'s usage errors), `--json` usage errors, checks made before `run` runs its
//! command, and typos in config.toml.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::process::Output;

use common::{Env, json, list_disk, snap};

fn os(b: &[u8]) -> &OsStr {
    OsStr::from_bytes(b)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `rewind ARGS` in `env`, whatever it exits with.
fn run(env: &Env, args: &[&OsStr]) -> Output {
    env.cmd().args(args).output().expect("spawn rewind")
}

#[test]
fn text_arguments_that_are_not_utf8_are_refused_naming_the_argument() {
    let env = Env::new();
    env.write("f", b"x\n");
    snap(&env, "first");
    let file = env.path("f");
    let cases: [(Vec<&OsStr>, &str); 4] = [
        (
            vec![os(b"snapshot"), os(b"-m"), os(b"caf\xe9")],
            "--message",
        ),
        (vec![os(b"tag"), os(b"\xffx"), os(b"@")], "<NAME>"),
        (vec![os(b"log"), os(b"--meta"), os(b"k=\xff")], "--meta"),
        (
            vec![os(b"artifact"), os(b"put"), os(b"k\xff"), file.as_os_str()],
            "<KEY>",
        ),
    ];
    for (args, name) in &cases {
        let out = run(&env, args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            err.contains(name) && err.contains("not valid UTF-8"),
            "{args:?} names {name}: {err}"
        );
        // Under --json the error names it too.
        let mut with_json = vec![os(b"--json")];
        with_json.extend(args.iter().copied());
        let out = run(&env, &with_json);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", text(&out.stdout)));
        let msg = v["error"].as_str().unwrap_or_default();
        assert!(msg.contains(name) && msg.contains("not valid UTF-8"), "{v}");
        assert_eq!(
            (&v["code"], &v["kind"]),
            (&"usage".into(), &"invalid".into()),
            "{v}"
        );
    }
    // Nothing was stored by any of them.
    assert_eq!(json(&env, &["log"]).as_array().unwrap().len(), 1);
    assert_eq!(json(&env, &["tags"]), serde_json::json!([]));
    assert_eq!(json(&env, &["artifact", "ls"]), serde_json::json!([]));
    // Paths keep their bytes: a non-UTF-8 file name is an ordinary argument.
    fs::write(env.ws.join(os(b"caf\xe9")), b"latin-1 name\n").unwrap();
    let out = run(&env, &[os(b"status"), os(b"--"), os(b"caf\xe9")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn artifact_keys_and_tag_names_follow_one_rule() {
    let env = Env::new();
    env.write("f", b"x\n");
    snap(&env, "first");
    let file = env.path("f");
    let file = file.to_str().unwrap();
    for (key, why) in [
        ("../x", "'..'"),
        ("/etc/x", "absolute"),
        ("a//b", "empty"),
        ("a/./b", "'.'"),
    ] {
        let (code, err) = env.fails(&["artifact", "put", key, file]);
        assert_eq!(code, 2, "{key}: {err}");
        assert!(
            err.contains("invalid artifact key") && err.contains(why),
            "{key}: {err}"
        );
    }
    for name in ["../x", "/etc/x", "a//b", "x/.."] {
        let (code, err) = env.fails(&["tag", name, "@"]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains("invalid tag name"), "{name}: {err}");
        let (code, err) = env.fails(&["snapshot", "--tag", name]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains("invalid tag name"), "{name}: {err}");
    }
    assert_eq!(json(&env, &["artifact", "ls"]), serde_json::json!([]));
    assert_eq!(json(&env, &["tags"]), serde_json::json!([]));
    // What the rule allows still works: names with slashes.
    env.ok(&["artifact", "put", "logs/build.txt", file]);
    env.ok(&["tag", "release/v1", "@"]);
}

#[test]
fn a_revert_conflict_exits_1_and_its_dry_run_lists_the_conflicts() {
    let env = Env::new();
    env.write("f", b"a\nb\nc\n");
    env.write("g", b"1\n");
    env.ok(&["snapshot", "-q", "--tag", "s1"]);
    env.write("f", b"a\nB\nc\n");
    env.write("g", b"2\n");
    env.ok(&["snapshot", "-q", "--tag", "s2"]);
    env.write("f", b"a\nBB\nc\n");
    let before = list_disk(&env.ws);

    let out = run(
        &env,
        &[
            os(b"--json"),
            os(b"revert"),
            os(b"--dry-run"),
            os(b"s1"),
            os(b"s2"),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["dry_run"], true);
    let conflicts = v["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 1, "{v}");
    assert_eq!(conflicts[0]["path"], "f");
    assert!(
        conflicts[0]["why"].as_str().unwrap().contains("conflict"),
        "{v}"
    );
    assert_eq!(conflicts[0]["regions"], 1, "{v}");
    // g would be restored: the plan of the rest is still shown.
    assert!(
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == "g" && f["action"] == "restore"),
        "{v}"
    );

    let out = run(
        &env,
        &[os(b"revert"), os(b"--dry-run"), os(b"s1"), os(b"s2")],
    );
    assert_eq!(out.status.code(), Some(1));
    let listed = text(&out.stdout);
    assert!(listed.contains("conflict f: "), "{listed}");
    assert!(
        listed.contains("1 conflict; nothing was changed"),
        "{listed}"
    );

    // The revert itself: 1, as overlay accept's conflicts, and nothing written.
    let out = run(&env, &[os(b"revert"), os(b"s1"), os(b"s2")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("1 conflict (f)"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(list_disk(&env.ws), before, "a conflict writes nothing");
    // With markers it is written, conflicts marked, and still exits 1.
    let out = run(
        &env,
        &[
            os(b"revert"),
            os(b"s1"),
            os(b"s2"),
            os(b"--conflict"),
            os(b"markers"),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&fs::read(env.path("f")).unwrap()).contains("<<<<<<<"));
    assert_eq!(fs::read(env.path("g")).unwrap(), b"1\n");
}

#[test]
fn run_usage_errors_exit_125_like_its_other_failures() {
    let env = Env::new();
    for args in [
        &["run"][..],
        &["run", "--bogus", "--", "true"],
        &["run", "true"],
    ] {
        let (code, err) = env.fails(args);
        assert_eq!(code, 125, "{args:?}: {err}");
    }
    // Other commands' usage errors stay 2.
    let (code, _) = env.fails(&["log", "--bogus"]);
    assert_eq!(code, 2);
}

#[test]
fn json_usage_errors_carry_the_whole_message_and_its_kind() {
    let env = Env::new();
    let out = run(&env, &[os(b"--json"), os(b"revert"), os(b"a")]);
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let msg = v["error"].as_str().unwrap();
    assert!(
        msg.contains("the following required arguments were not provided") && msg.contains("<B>"),
        "the missing argument is named: {v}"
    );
    assert!(!msg.contains('\u{1b}'), "no colour codes: {v}");
    assert!(!msg.starts_with("error:"), "{v}");
    assert_eq!(v["code"], "usage", "{v}");
    assert_eq!(v["kind"], "invalid", "{v}");

    let out = run(
        &env,
        &[os(b"--json"), os(b"diff"), os(b"--unified"), os(b"x")],
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["error"].as_str().unwrap().contains("--unified"), "{v}");
    assert_eq!(v["code"], "usage", "{v}");
}

#[test]
fn run_checks_its_result_file_before_running_the_command() {
    let env = Env::new();
    env.write("f", b"x\n");
    env.ok(&["init"]);
    let missing_dir = env.tmp.path().join("no-such-dir/result.json");
    for result in [missing_dir.as_path(), env.tmp.path()] {
        let out = env
            .cmd()
            .arg("run")
            .arg("--result")
            .arg(result)
            .args(["--", "sh", "-c", "echo ran > ran.txt"])
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{err}");
        assert!(
            err.contains("--result") && err.contains("nothing was run"),
            "{err}"
        );
        assert!(
            !env.path("ran.txt").exists(),
            "the command did not run: {err}"
        );
    }
    // No snapshot was taken and no operation recorded.
    assert_eq!(
        json(&env, &["log"]),
        serde_json::json!([]),
        "no snapshot taken"
    );
    let ops = json(&env, &["op", "log"]);
    assert!(!ops.to_string().contains("\"run"), "{ops}");
    // A writable place works, and no probe file is left beside it.
    let result = env.tmp.path().join("r.json");
    env.ok(&["run", "--result", result.to_str().unwrap(), "--", "true"]);
    assert!(result.exists());
    let names: Vec<_> = fs::read_dir(env.tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n.starts_with(".rewind-result-")),
        "{names:?}"
    );
}

#[test]
fn a_typo_in_config_toml_is_named_wherever_it_is_read() {
    let env = Env::new();
    env.write("f", b"x\n");
    snap(&env, "first");
    fs::write(
        env.store.join("config.toml"),
        "[retention]\nrun_keep_lst = 1\n",
    )
    .unwrap();
    // run: one warning before the command, naming the file and the key (the run itself goes
    // on; the result says the retention did not run).
    let out = run(&env, &[os(b"run"), os(b"--"), os(b"true")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("config.toml") && err.contains("run_keep_lst") && err.contains("warning"),
        "{err}"
    );
    // forget, which reads the retention too, refuses it.
    let (code, err) = env.fails(&["forget", "--keep-last", "1"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("config.toml") && err.contains("run_keep_lst"),
        "{err}"
    );
    // A misspelt table would change what snapshots hold: snapshot refuses it too.
    fs::write(
        env.store.join("config.toml"),
        "[ignroe]\nglobs = [\"*.log\"]\n",
    )
    .unwrap();
    let (code, err) = env.fails(&["snapshot"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("config.toml") && err.contains("ignroe"),
        "{err}"
    );
}
