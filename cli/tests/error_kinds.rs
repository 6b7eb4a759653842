//! A failed command's report: the message on the `error:` line, each hint on a `hint:` line of
//! its own, the exit code, and with `--json` the error's kind (what a script branches on).

use serde_json::Value;

use crate::common::Env;

/// Runs `args` with `--json`, expecting failure: (exit code, stderr, the JSON on stdout).
fn failing_json(env: &Env, args: &[&str]) -> (i32, String, Value) {
    let out = env
        .cmd()
        .arg("--json")
        .args(args)
        .output()
        .expect("spawn rewind");
    assert!(!out.status.success(), "rewind {args:?} succeeded");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "rewind {args:?}: stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        json,
    )
}

#[test]
fn each_kind_exits_2_and_says_its_kind() {
    let env = Env::new();
    env.write("a.txt", b"one\n");
    env.ok(&["snapshot", "-q"]);
    env.write("a.txt", b"two\n");
    env.ok(&["snapshot", "-q"]);
    env.ok(&["tag", "v1", "@"]);

    let cases: [(&[&str], &str); 4] = [
        (&["show", "ffffffff"], "not_found"),
        (&["tag", "-d", "nope"], "not_found"),
        (&["forget"], "invalid"),
        (&["tag", "v1", "@~1"], "conflict"),
    ];
    for (args, kind) in cases {
        let (code, err, json) = failing_json(&env, args);
        assert_eq!(code, 2, "rewind {args:?}: {err}");
        assert_eq!(json["kind"], kind, "rewind {args:?}: {json}");
        assert_eq!(
            json["error"].as_str().map(|e| err.contains(e)),
            Some(true),
            "the JSON error is the printed message: {json} / {err}"
        );
    }
}

#[test]
fn hints_are_lines_of_their_own() {
    let env = Env::new();
    env.write("a.txt", b"one\n");
    env.ok(&["snapshot", "-q"]);
    env.write("a.txt", b"two\n");
    env.ok(&["snapshot", "-q"]);
    env.ok(&["tag", "v1", "@"]);
    let (code, err) = env.fails(&["tag", "v1", "@~1"]);
    assert_eq!(code, 2);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("rewind: error: tag 'v1' already points at ")
            && !lines[0].contains("--force"),
        "the message, without the hint: {err}"
    );
    assert_eq!(lines[1], "rewind: hint: pass --force to move it");

    let (_, _, json) = failing_json(&env, &["tag", "v1", "@~1"]);
    assert_eq!(
        json["hints"],
        serde_json::json!(["pass --force to move it"])
    );
    assert_eq!(json["causes"], serde_json::json!([]));

    // A deleted tag that does not exist is "not found", named as such.
    let (code, err) = env.fails(&["tag", "-d", "nope"]);
    assert_eq!(code, 2);
    assert_eq!(err.trim(), "rewind: error: no tag named 'nope'");
}
