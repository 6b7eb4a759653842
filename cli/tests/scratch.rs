//! `run --scratch`: a per-run directory outside the workspace, kept with the run.

use crate::common;

use common::*;
use serde_json::Value;

#[test]
fn a_runs_scratch_files_are_kept_apart_from_the_workspace_and_listed_by_run() {
    let e = Env::new();
    e.write("a.txt", b"a\n");
    e.ok(&["init"]);
    let out = e.ok(&[
        "run",
        "--json",
        "--scratch",
        "--",
        "sh",
        "-c",
        "test -d \"$REWIND_SCRATCH\" && case \"$REWIND_SCRATCH\" in \"$PWD\"*) exit 9;; esac; \
         echo notes > \"$REWIND_SCRATCH/notes.txt\"; mkdir \"$REWIND_SCRATCH/d\"; \
         echo y > \"$REWIND_SCRATCH/d/y\"; echo b > a.txt",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["exit_code"], 0, "{v}");
    let schema: Value =
        serde_json::from_str(include_str!("../../schemas/run-result.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let files: Vec<&str> = v["diff"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["a.txt"], "scratch files are not workspace changes");
    let after = v["after"].as_str().unwrap();
    let sc = &v["scratch"];
    assert_eq!(sc["files"], 2, "{v}");
    let dir = sc["dir"].as_str().unwrap();
    assert!(!std::path::Path::new(dir).exists(), "moved into the store");

    let ls = e.ok(&["scratch", "ls", after]);
    assert_eq!(
        ls.lines()
            .map(|l| l.split_whitespace().last().unwrap())
            .collect::<Vec<_>>(),
        ["d/y", "notes.txt"],
        "{ls}"
    );
    let lj: Value =
        serde_json::from_str(&e.ok(&["scratch", "ls", &after[..12], "--json"])).unwrap();
    assert_eq!(lj.as_array().unwrap().len(), 2);
    let typed: Vec<rewind::wire::ScratchFile> =
        serde_json::from_value(lj.clone()).expect("ScratchFile rows");
    assert_eq!(typed[0].path, "d/y", "{lj}");
    assert!(
        typed[0].key.starts_with("scratch/") && typed[0].key.ends_with("/d/y"),
        "{lj}"
    );
    assert_eq!(typed[0].size, 2, "{lj}");
    assert_eq!(e.ok(&["scratch", "cat", after, "notes.txt"]), "notes\n");
    assert_eq!(e.ok(&["scratch", "cat", "@", "d/y"]), "y\n");
    let (code, err) = e.fails(&["scratch", "cat", after, "missing"]);
    assert_eq!(code, 2);
    assert!(err.contains("missing"), "{err}");
    // A run without --scratch has none.
    e.ok(&["run", "--", "true"]);
    assert_eq!(e.ok(&["scratch", "ls", "@"]), "");
}
