//! Runs as units of review: `overlay diff --by-run` lists each pending hunk under the command
//! run that made it, and `accept --run N` / `reject --run N` take exactly that run's lines,
//! also where two runs' edits share one hunk (lines 10 and 12, or adjacent lines 10 and 11).
//! An unknown run number fails and changes nothing. Both backends, real binary and store.

use crate::common;

use common::{Env, backends, list_disk};
use serde_json::Value;

fn json(env: &Env, args: &[&str]) -> Value {
    serde_json::from_str(&env.ok(args)).expect("json")
}

fn base_text() -> String {
    (1..=40).map(|i| format!("line {i}\n")).collect()
}

/// The base with the given lines (1-based) replaced.
fn edited(pairs: &[(usize, &str)]) -> String {
    (1..=40)
        .map(|i| match pairs.iter().find(|(n, _)| *n == i) {
            Some((_, s)) => format!("{s}\n"),
            None => format!("line {i}\n"),
        })
        .collect()
}

/// A workspace whose big.txt holds 40 lines, and an overlay where run 1 replaces line `a`
/// and run 2 replaces line `b`, each by one `overlay run` (one tool call each).
fn two_runs(backend: &str, a: usize, b: usize) -> (Env, String) {
    let env = Env::new();
    env.write("big.txt", base_text().as_bytes());
    env.ok(&["snapshot", "-q"]);
    let id = env
        .ok(&["overlay", "create", "--backend", backend])
        .trim()
        .to_string();
    for (n, word) in [(a, "FIRST"), (b, "SECOND")] {
        let script = format!("sed -i 's/^line {n}$/{word}/' big.txt");
        env.ok(&["overlay", "run", &id, "--", "sh", "-c", &script]);
    }
    (env, id)
}

/// A run's group: (run, [(path, [changed lines])]).
type Group = (Value, Vec<(String, Vec<String>)>);

/// `overlay diff --by-run --json`'s groups.
fn by_run(env: &Env, id: &str) -> Vec<Group> {
    let v = json(env, &["--json", "overlay", "diff", id, "--by-run"]);
    assert_eq!(
        v["overlay"].as_u64().map(|n| n.to_string()),
        Some(id.into())
    );
    v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let files = g["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    let changed = f["hunks"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .flat_map(|h| h["lines"].as_array().unwrap().iter())
                        .map(|l| l.as_str().unwrap().to_string())
                        .filter(|l| !l.starts_with(' '))
                        .collect();
                    (f["path"].as_str().unwrap().to_string(), changed)
                })
                .collect();
            (g["run"].clone(), files)
        })
        .collect()
}

fn lines(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn big(env: &Env) -> String {
    String::from_utf8(std::fs::read(env.path("big.txt")).unwrap()).unwrap()
}

#[test]
fn by_run_lists_each_runs_lines_and_accept_run_takes_only_them() {
    for backend in backends() {
        // Lines 10 and 12: one hunk of the overlay's diff, two tool calls.
        let (env, id) = two_runs(backend, 10, 12);
        let d = json(&env, &["--json", "overlay", "diff", &id]);
        assert_eq!(
            d["files"][0]["hunks"].as_array().unwrap().len(),
            1,
            "{backend}: the two runs' edits share one hunk: {d}"
        );
        assert_eq!(
            by_run(&env, &id),
            vec![
                (
                    Value::from(1),
                    vec![("big.txt".into(), lines(&["-line 10\n", "+FIRST\n"]))]
                ),
                (
                    Value::from(2),
                    vec![("big.txt".into(), lines(&["-line 12\n", "+SECOND\n"]))]
                ),
            ],
            "{backend}"
        );
        let v = json(&env, &["--json", "overlay", "diff", &id, "--by-run"]);
        assert_eq!(
            v["runs"][0]["command"],
            "sh -c sed -i 's/^line 10$/FIRST/' big.txt"
        );
        assert!(v["runs"][1]["before"].is_string() && v["runs"][1]["after"].is_string());

        env.ok(&["overlay", "accept", &id, "--run", "1"]);
        assert_eq!(
            big(&env),
            edited(&[(10, "FIRST")]),
            "{backend}: only run 1's edit"
        );
        assert_eq!(
            by_run(&env, &id),
            vec![(
                Value::from(2),
                vec![("big.txt".into(), lines(&["-line 12\n", "+SECOND\n"]))]
            )],
            "{backend}: run 2 is still pending"
        );
        env.ok(&["overlay", "accept", &id, "--run", "2"]);
        assert_eq!(big(&env), edited(&[(10, "FIRST"), (12, "SECOND")]));
        assert!(by_run(&env, &id).is_empty(), "{backend}: nothing pending");
        // Both accepts were operations: two undos give the base back.
        env.ok(&["undo"]);
        assert_eq!(big(&env), edited(&[(10, "FIRST")]));
        env.ok(&["undo"]);
        assert_eq!(big(&env), base_text());
    }
}

#[test]
fn adjacent_lines_of_two_runs_are_each_acceptable_alone() {
    for backend in backends() {
        // Lines 10 and 11: no unchanged line between them, so only the run boundary cuts.
        let (env, id) = two_runs(backend, 10, 11);
        env.ok(&["overlay", "accept", &id, "--run", "2"]);
        assert_eq!(
            big(&env),
            edited(&[(11, "SECOND")]),
            "{backend}: run 2 alone"
        );
        env.ok(&["overlay", "accept", &id, "--run", "1"]);
        assert_eq!(
            big(&env),
            edited(&[(10, "FIRST"), (11, "SECOND")]),
            "{backend}"
        );

        // Reject takes one run out of the overlay and leaves the other's adjacent line.
        let (env, id) = two_runs(backend, 10, 11);
        env.ok(&["overlay", "reject", &id, "--run", "1"]);
        assert_eq!(
            by_run(&env, &id),
            vec![(
                Value::from(2),
                vec![("big.txt".into(), lines(&["-line 11\n", "+SECOND\n"]))]
            )],
            "{backend}: only run 2 is left"
        );
        env.ok(&["overlay", "accept", &id]);
        assert_eq!(big(&env), edited(&[(11, "SECOND")]), "{backend}");
    }
}

#[test]
fn an_unknown_run_is_an_error_and_changes_nothing() {
    let (env, id) = two_runs("copy", 10, 12);
    let ws_before = list_disk(&env.ws);
    let pending = by_run(&env, &id);
    for verb in ["accept", "reject"] {
        let (code, err) = env.fails(&["overlay", verb, &id, "--run", "3"]);
        assert_ne!(code, 0);
        assert!(
            err.contains("has no run 3") && err.contains("1 to 2"),
            "{verb}: {err}"
        );
        assert_eq!(
            list_disk(&env.ws),
            ws_before,
            "{verb}: the workspace is untouched"
        );
        assert_eq!(
            by_run(&env, &id),
            pending,
            "{verb}: the overlay is untouched"
        );
    }
    // --run with paths or hunks is refused by the parser.
    env.fails(&["overlay", "accept", &id, "--run", "1", "--hunk", "abc"]);
    // An overlay nothing ran in says so.
    let other = env.ok(&["overlay", "create", "--backend", "copy"]);
    let (_, err) = env.fails(&["overlay", "accept", other.trim(), "--run", "1"]);
    assert!(err.contains("no command has run in it"), "{err}");
}
