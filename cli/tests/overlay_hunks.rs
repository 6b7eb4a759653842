//! Per-hunk review of an overlay: `overlay diff --json` lists each file's hunks with stable
//! ids; `accept --hunk` and `reject --hunk` take single hunks, the rest staying pending.
//! Accepting every hunk one by one equals accepting the file, rejecting every hunk equals
//! rejecting the file, and an undo restores the workspace byte for byte. Both backends.
//! The same selection for `revert A B --hunk` and `restore REV -p`.

use crate::common;

use std::fs;

use common::{Env, list_disk};
use serde_json::Value;

fn json(env: &Env, args: &[&str]) -> Value {
    serde_json::from_str(&env.ok(args)).expect("json")
}

/// The entry of `path` in a diff's JSON.
fn file_of<'a>(d: &'a Value, path: &str) -> &'a Value {
    d["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("{path} not in {d}"))
}

pub(crate) fn base_text() -> String {
    (1..=40).map(|i| format!("line {i}\n")).collect()
}

/// Three hunks in big.txt (far apart), one whole new file.
pub(crate) const EDIT: &str = "sed -i -e 's/^line 3$/THREE/' -e 's/^line 20$/TWENTY\\nextra/' -e '/^line 38$/d' big.txt; echo new > new.txt";

fn setup(backend: &str) -> (Env, String) {
    setup_with(backend, EDIT)
}

/// Two changes one line apart (one hunk that `s` splits in two) and one far off.
const SPLIT_EDIT: &str =
    "sed -i -e 's/^line 10$/TEN/' -e 's/^line 12$/TWELVE/' -e 's/^line 30$/THIRTY/' big.txt";

pub(crate) fn setup_with(backend: &str, edit: &str) -> (Env, String) {
    let env = Env::new();
    env.write("big.txt", base_text().as_bytes());
    env.ok(&["snapshot", "-q"]);
    let id = env
        .ok(&["overlay", "create", "--backend", backend])
        .trim()
        .to_string();
    env.ok(&["overlay", "run", &id, "--", "sh", "-c", edit]);
    (env, id)
}

/// (path, [hunk ids]) of the pending changes.
fn hunk_ids(env: &Env, id: &str) -> Vec<(String, Vec<String>)> {
    let d = json(env, &["overlay", "diff", id, "--json"]);
    d["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let ids = f["hunks"]
                .as_array()
                .map(|h| {
                    h.iter()
                        .filter(|h| h["pending"] == true)
                        .map(|h| h["id"].as_str().unwrap().to_string())
                        .collect()
                })
                .unwrap_or_default();
            (f["path"].as_str().unwrap().to_string(), ids)
        })
        .collect()
}

pub(crate) fn big_hunks(env: &Env, id: &str) -> Vec<String> {
    hunk_ids(env, id)
        .into_iter()
        .find(|(p, _)| p == "big.txt")
        .map(|(_, h)| h)
        .unwrap_or_default()
}

#[test]
fn diff_json_lists_hunks_with_stable_ids_ranges_and_lines() {
    for backend in crate::common::backends() {
        let (env, id) = setup(backend);
        let d = json(&env, &["overlay", "diff", &id, "--json"]);
        let big = file_of(&d, "big.txt");
        let hunks = big["hunks"].as_array().unwrap();
        assert_eq!(hunks.len(), 3, "{backend}: {big}");
        assert_eq!(hunks[0]["old_start"], 1);
        assert_eq!(hunks[0]["old_lines"], 6);
        assert!(
            hunks[0]["lines"]
                .as_array()
                .unwrap()
                .contains(&Value::from("+THREE\n")),
            "{}",
            hunks[0]
        );
        assert_eq!(hunks[0]["id"].as_str().unwrap().len(), 12);
        // The same ids on the next look.
        assert_eq!(
            big_hunks(&env, &id),
            hunks
                .iter()
                .map(|h| h["id"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        );
        let (code, err) = env.fails(&["overlay", "accept", &id, "--hunk", "000000000000"]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("no pending hunk '000000000000'"), "{err}");
    }
}

#[test]
fn hunks_one_by_one_equal_the_whole_file_and_undo_restores_bytes() {
    for backend in crate::common::backends() {
        // Accepting the whole file: the reference.
        let (whole, wid) = setup(backend);
        whole.ok(&["overlay", "accept", &wid, "--", "big.txt"]);
        let want = fs::read(whole.path("big.txt")).unwrap();

        let (env, id) = setup(backend);
        let hunks = big_hunks(&env, &id);
        assert_eq!(hunks.len(), 3);
        let mut states = vec![list_disk(&env.ws)];
        // Last hunk first: ids do not depend on what was accepted before.
        for (n, h) in hunks.iter().rev().enumerate() {
            env.ok(&["overlay", "accept", &id, "--hunk", h]);
            states.push(list_disk(&env.ws));
            assert_eq!(big_hunks(&env, &id).len(), 2 - n, "{backend}");
        }
        assert_eq!(fs::read(env.path("big.txt")).unwrap(), want, "{backend}");
        let pending: Vec<String> = hunk_ids(&env, &id).into_iter().map(|(p, _)| p).collect();
        assert_eq!(pending, vec!["new.txt"], "{backend}: big.txt is settled");
        assert!(!env.path("new.txt").exists(), "other files untouched");
        // Each accept is one operation; undo walks back byte for byte.
        for expected in states.iter().rev().skip(1) {
            env.ok(&["undo"]);
            assert_eq!(&list_disk(&env.ws), expected, "{backend}");
        }
        assert_eq!(
            fs::read(env.path("big.txt")).unwrap(),
            base_text().as_bytes()
        );
        assert_eq!(big_hunks(&env, &id).len(), 3, "{backend}: pending again");
    }
}

#[test]
fn a_hunk_merges_three_ways_onto_a_workspace_that_moved_on() {
    for backend in crate::common::backends() {
        let (env, id) = setup(backend);
        let hunks = big_hunks(&env, &id);
        let moved = base_text().replace("line 30\n", "workspace 30\n");
        env.write("big.txt", moved.as_bytes());
        env.ok(&["overlay", "accept", &id, "--hunk", &hunks[1]]);
        assert_eq!(
            fs::read_to_string(env.path("big.txt")).unwrap(),
            moved.replace("line 20\n", "TWENTY\nextra\n"),
            "{backend}"
        );
    }
}

#[test]
fn rejecting_every_hunk_equals_rejecting_the_file() {
    for backend in crate::common::backends() {
        let (env, id) = setup(backend);
        let hunks = big_hunks(&env, &id);
        env.ok(&["overlay", "reject", &id, "--hunk", &hunks[0]]);
        let left = big_hunks(&env, &id);
        assert_eq!(
            left,
            hunks[1..].to_vec(),
            "{backend}: the others stay pending"
        );
        let seen = env.ok(&["overlay", "run", &id, "--", "head", "-n", "3", "big.txt"]);
        assert_eq!(seen, "line 1\nline 2\nline 3\n", "{backend}");
        env.ok(&[
            "overlay", "reject", &id, "--hunk", &left[0], "--hunk", &left[1],
        ]);
        let pending: Vec<String> = hunk_ids(&env, &id).into_iter().map(|(p, _)| p).collect();
        assert_eq!(pending, vec!["new.txt"], "{backend}");
        let seen = env.ok(&["overlay", "run", &id, "--", "cat", "big.txt"]);
        assert_eq!(
            seen,
            base_text(),
            "{backend}: the overlay holds the base again"
        );
        // Undo of the last reject brings its two hunks back.
        env.ok(&["undo"]);
        assert_eq!(big_hunks(&env, &id), left, "{backend}");
    }
}

/// Drives `argv` on a real pseudo-terminal (python3's pty module), answering each `]? `
/// prompt with the next of `answers`; returns (exit code, everything the terminal showed).
fn on_terminal(argv: &[&std::ffi::OsStr], answers: &[&str]) -> (i32, String) {
    on_terminal_with(argv, answers, &[])
}

/// [`on_terminal`] with environment variables `vars` set.
fn on_terminal_with(
    argv: &[&std::ffi::OsStr],
    answers: &[&str],
    vars: &[(&str, &std::ffi::OsStr)],
) -> (i32, String) {
    const DRIVER: &str = r#"
import os, pty, select, sys
answers = sys.argv[1].split(",") if sys.argv[1] else []
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
seen, pending, i = b"", b"", 0
while True:
    ready, _, _ = select.select([fd], [], [], 120)
    if not ready:
        break
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    seen += data
    pending += data
    while b"]? " in pending:
        pending = pending.split(b"]? ", 1)[1]
        os.write(fd, (answers[i] if i < len(answers) else "q").encode() + b"\n")
        i += 1
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(seen)
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(DRIVER)
        .arg(answers.join(","))
        .args(argv)
        .env("NO_COLOR", "1")
        .envs(vars.iter().copied())
        .output()
        .expect("python3");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn accept_p_walks_the_hunks_on_a_terminal() {
    for backend in crate::common::backends() {
        let (env, id) = setup(backend);
        let hunks = big_hunks(&env, &id);
        let args = ["overlay", "accept", id.as_str(), "-p"];
        // big.txt: yes, no, help, split (refused), yes; new.txt: no.
        let (code, screen) = on_terminal_args(&env, &args, &["y", "n", "?", "s", "y", "n"]);
        assert_eq!(code, 0, "{backend}: {screen}");
        assert!(screen.contains("(1/3) Accept this hunk"), "{screen}");
        assert!(screen.contains("+THREE"), "{screen}");
        assert!(
            screen.contains("a - take this hunk and all later"),
            "{screen}"
        );
        assert!(screen.contains("s - split the current hunk"), "{screen}");
        assert!(screen.contains("cannot split"), "{screen}");
        let text = fs::read_to_string(env.path("big.txt")).unwrap();
        assert!(
            text.contains("THREE\n") && !text.contains("TWENTY"),
            "{text}"
        );
        assert!(!text.contains("line 38\n"), "the third hunk: {text}");
        assert!(!env.path("new.txt").exists());
        assert_eq!(big_hunks(&env, &id), vec![hunks[1].clone()], "{backend}");
        // q at once: nothing accepted.
        let (code, screen) = on_terminal_args(&env, &args, &["q"]);
        assert_eq!(code, 0, "{screen}");
        assert!(screen.contains("nothing chosen"), "{screen}");
        // Without a terminal: a clear refusal.
        let (code, err) = env.fails(&["overlay", "accept", &id, "-p"]);
        assert_eq!(code, 2);
        assert!(err.contains("--hunk") && err.contains("terminal"), "{err}");
    }
}

/// `rewind --store S -C WS ARGS...` as arguments for [`on_terminal`].
fn argv_of(env: &Env, args: &[&str]) -> Vec<std::ffi::OsString> {
    let mut v: Vec<std::ffi::OsString> = vec![
        env!("CARGO_BIN_EXE_rewind").into(),
        "--store".into(),
        env.store.clone().into(),
        "-C".into(),
        env.ws.clone().into(),
    ];
    v.extend(args.iter().map(std::ffi::OsString::from));
    v
}

fn on_terminal_args(env: &Env, args: &[&str], answers: &[&str]) -> (i32, String) {
    let argv = argv_of(env, args);
    let argv: Vec<&std::ffi::OsStr> = argv.iter().map(|a| a.as_os_str()).collect();
    on_terminal(&argv, answers)
}

/// `rewind ARGS...` in `env` on a pseudo-terminal, with `$EDITOR` set to `editor` (and
/// `$VISUAL` unset).
pub(crate) fn on_terminal_editing(
    env: &Env,
    args: &[&str],
    answers: &[&str],
    editor: &std::path::Path,
) -> (i32, String) {
    let argv = argv_of(env, args);
    let argv: Vec<&std::ffi::OsStr> = argv.iter().map(|a| a.as_os_str()).collect();
    on_terminal_with(
        &argv,
        answers,
        &[("EDITOR", editor.as_os_str()), ("VISUAL", "".as_ref())],
    )
}

/// The pending hunk of big.txt whose lines contain `line`.
fn hunk_with(env: &Env, id: &str, line: &str) -> Value {
    let d = json(env, &["overlay", "diff", id, "--json"]);
    file_of(&d, "big.txt")["hunks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["pending"] == true && h["lines"].as_array().unwrap().contains(&line.into()))
        .unwrap_or_else(|| panic!("no pending hunk with {line:?} in {d}"))
        .clone()
}

#[test]
fn split_parts_are_accepted_and_rejected_like_whole_hunks() {
    let base = base_text();
    let with = |pairs: &[(&str, &str)]| {
        pairs.iter().fold(base.clone(), |t, (a, b)| {
            t.replace(&format!("{a}\n"), &format!("{b}\n"))
        })
    };
    for backend in crate::common::backends() {
        // The whole first hunk accepted: what its parts must add up to.
        let (whole_env, whole_id) = setup_with(backend, SPLIT_EDIT);
        let whole = big_hunks(&whole_env, &whole_id);
        assert_eq!(whole.len(), 2, "{backend}: two hunks before any split");
        whole_env.ok(&["overlay", "accept", &whole_id, "--hunk", &whole[0]]);
        let whole_bytes = fs::read(whole_env.path("big.txt")).unwrap();
        assert_eq!(
            whole_bytes,
            with(&[("line 10", "TEN"), ("line 12", "TWELVE")]).into_bytes()
        );

        // Split the first hunk, take its first part only; the far hunk cannot be split.
        let (env, id) = setup_with(backend, SPLIT_EDIT);
        let args = ["overlay", "accept", id.as_str(), "-p"];
        let (code, screen) = on_terminal_args(&env, &args, &["s", "y", "n", "s", "n"]);
        assert_eq!(code, 0, "{backend}: {screen}");
        assert!(screen.contains("Split into 2 hunks"), "{screen}");
        assert!(screen.contains("(1/3) Accept this hunk"), "{screen}");
        assert!(screen.contains("(3/3) Accept this hunk"), "{screen}");
        assert!(screen.contains("cannot split"), "{screen}");
        assert_eq!(
            fs::read_to_string(env.path("big.txt")).unwrap(),
            with(&[("line 10", "TEN")]),
            "{backend}: only the first part"
        );
        // The second part is pending under its own stable id, beside the far hunk.
        let part = hunk_with(&env, &id, "+TWELVE\n");
        let part_id = part["id"].as_str().unwrap().to_string();
        assert!(!whole.contains(&part_id), "{part}");
        assert!(
            !part["lines"].as_array().unwrap().contains(&"+TEN\n".into()),
            "{part}"
        );
        assert_eq!(
            big_hunks(&env, &id),
            vec![part_id.clone(), whole[1].clone()]
        );
        assert_eq!(
            big_hunks(&env, &id),
            vec![part_id.clone(), whole[1].clone()],
            "stable"
        );
        // Accepting the other part equals accepting the whole hunk.
        env.ok(&["overlay", "accept", &id, "--hunk", &part_id]);
        assert_eq!(
            fs::read(env.path("big.txt")).unwrap(),
            whole_bytes,
            "{backend}"
        );
        assert_eq!(big_hunks(&env, &id), vec![whole[1].clone()]);
        // Undo goes back part by part, byte for byte.
        env.ok(&["undo"]);
        assert_eq!(
            fs::read_to_string(env.path("big.txt")).unwrap(),
            with(&[("line 10", "TEN")])
        );
        assert_eq!(
            big_hunks(&env, &id),
            vec![part_id.clone(), whole[1].clone()]
        );
        env.ok(&["undo"]);
        assert_eq!(fs::read_to_string(env.path("big.txt")).unwrap(), base);
        assert_eq!(big_hunks(&env, &id), whole, "{backend}: all pending again");

        // A part rejected inside the overlay: the part taken earlier stays accepted.
        let (env, id) = setup_with(backend, SPLIT_EDIT);
        on_terminal_args(&env, &args, &["s", "y", "n", "n"]);
        let part_id = hunk_with(&env, &id, "+TWELVE\n")["id"]
            .as_str()
            .unwrap()
            .to_string();
        env.ok(&["overlay", "reject", &id, "--hunk", &part_id]);
        assert_eq!(big_hunks(&env, &id), vec![whole[1].clone()], "{backend}");
        env.ok(&["overlay", "accept", &id]);
        assert_eq!(
            fs::read_to_string(env.path("big.txt")).unwrap(),
            with(&[("line 10", "TEN"), ("line 30", "THIRTY")]),
            "{backend}"
        );
    }
}

/// A workspace snapshotted as `s` then changed by `edit`; `restore s -p` answered with
/// `answers`. Returns the env, the edited big.txt, the exit code and the screen.
fn restore_p(edit: &str, answers: &[&str]) -> (Env, String, i32, String) {
    let env = Env::new();
    env.write("big.txt", base_text().as_bytes());
    env.ok(&["snapshot", "-q", "--tag", "s"]);
    env.ok(&["run", "--", "sh", "-c", edit]);
    let edited = fs::read_to_string(env.path("big.txt")).unwrap();
    let (code, screen) = on_terminal_args(&env, &["restore", "s", "-p"], answers);
    (env, edited, code, screen)
}

#[test]
fn restore_p_splits_a_hunk() {
    let (env, edited, code, screen) = restore_p(SPLIT_EDIT, &["s", "n", "y", "n"]);
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("Split into 2 hunks"), "{screen}");
    assert_eq!(
        fs::read_to_string(env.path("big.txt")).unwrap(),
        edited.replace("TWELVE\n", "line 12\n"),
        "only the second part restored"
    );
    env.ok(&["undo"]);
    assert_eq!(fs::read_to_string(env.path("big.txt")).unwrap(), edited);
}

#[test]
fn revert_takes_single_hunks_of_a_range_and_keeps_later_work() {
    let env = Env::new();
    env.write("big.txt", base_text().as_bytes());
    env.ok(&["snapshot", "-q", "--tag", "a"]);
    env.ok(&["run", "--", "sh", "-c", EDIT]);
    env.ok(&["snapshot", "-q", "--tag", "b"]);
    let d = json(&env, &["diff", "a", "b", "--json", "--hunks"]);
    let big = file_of(&d, "big.txt");
    let ids: Vec<&str> = big["hunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 3, "{big}");
    let later = fs::read_to_string(env.path("big.txt"))
        .unwrap()
        .replace("line 30\n", "later 30\n");
    env.write("big.txt", later.as_bytes());
    let before = list_disk(&env.ws);
    env.ok(&["revert", "a", "b", "--hunk", ids[1]]);
    assert_eq!(
        fs::read_to_string(env.path("big.txt")).unwrap(),
        later.replace("TWENTY\nextra\n", "line 20\n"),
        "the middle hunk undone, the others and the later edit kept"
    );
    assert!(env.path("new.txt").exists());
    env.ok(&["undo"]);
    assert_eq!(list_disk(&env.ws), before, "undo restores byte for byte");
    let (code, err) = env.fails(&["revert", "a", "b", "--hunk", "ffffffffffff"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no hunk 'ffffffffffff'"), "{err}");
    let (code, err) = env.fails(&["--json", "diff", "a", "--hunks"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn restore_p_brings_back_the_chosen_hunks_on_a_terminal() {
    let (env, edited, code, screen) = restore_p(EDIT, &["y", "n", "n"]);
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("(1/3) Restore this hunk"), "{screen}");
    assert_eq!(
        fs::read_to_string(env.path("big.txt")).unwrap(),
        edited.replace("THREE\n", "line 3\n"),
        "only the first hunk restored"
    );
    assert!(env.path("new.txt").exists(), "added files are left alone");
    env.ok(&["undo"]);
    assert_eq!(fs::read_to_string(env.path("big.txt")).unwrap(), edited);
    let (code, err) = env.fails(&["restore", "s", "-p"]);
    assert_eq!(code, 2);
    assert!(err.contains("terminal"), "{err}");
}
