//! The everyday CLI as a new user meets it: progress, a quiet log, counts and words, help,
//! completions, export and find.

use serde_json::Value;

use crate::common::Env;

/// Runs `rewind --store S -C WS ARGS...` with stdin, stdout and stderr on a real
/// pseudo-terminal (python3's pty module), with `vars` set; returns (exit code, what the
/// terminal showed).
pub fn on_terminal(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> (i32, String) {
    const DRIVER: &str = r#"
import os, pty, select, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
seen = b""
while True:
    ready, _, _ = select.select([fd], [], [], 120)
    if not ready:
        break
    try:
        data = os.read(fd, 65536)
    except OSError:
        break
    if not data:
        break
    seen += data
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(seen)
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let mut cmd = std::process::Command::new("python3");
    cmd.arg("-c")
        .arg(DRIVER)
        .arg(env!("CARGO_BIN_EXE_rewind"))
        .arg("--store")
        .arg(&env.store)
        .arg("-C")
        .arg(&env.ws)
        .args(args)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "160");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("python3");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// `n` small files under `dir/`.
fn small_files(env: &Env, dir: &str, n: usize) {
    for i in 0..n {
        env.write(
            &format!("{dir}/f{i:05}.txt"),
            format!("file {i}\n").as_bytes(),
        );
    }
}

mod progress {
    use super::*;

    /// A job of many small files (far below the old 64 MiB threshold) that runs past the
    /// delay shows a bar counting files and bytes, on snapshot and restore alike.
    #[test]
    fn small_files_show_progress_on_a_terminal() {
        let env = Env::new();
        small_files(&env, "src", 400);
        env.ok(&["init"]);
        let fast = [("REWIND_TEST_PROGRESS_AFTER_MS", "0")];
        let (code, screen) = on_terminal(&env, &["snapshot", "-m", "one"], &fast);
        assert_eq!(code, 0, "{screen}");
        assert!(screen.contains("snapshot ["), "a bar: {screen}");
        assert!(screen.contains("/400 files"), "files counted: {screen}");
        std::fs::remove_dir_all(env.path("src")).unwrap();
        let (code, screen) = on_terminal(&env, &["restore", "@"], &fast);
        assert_eq!(code, 0, "{screen}");
        assert!(screen.contains("restore ["), "a bar: {screen}");
        assert!(screen.contains("/400 files"), "files counted: {screen}");
        // Quiet: none.
        small_files(&env, "more", 50);
        let (code, screen) = on_terminal(&env, &["-q", "snapshot"], &fast);
        assert_eq!(code, 0, "{screen}");
        assert!(!screen.contains("snapshot ["), "{screen}");
    }

    /// A job quicker than the delay shows no bar.
    #[test]
    fn a_quick_job_shows_no_bar() {
        let env = Env::new();
        small_files(&env, "src", 20);
        env.ok(&["init"]);
        let (code, screen) = on_terminal(&env, &["snapshot"], &[]);
        assert_eq!(code, 0, "{screen}");
        assert!(!screen.contains('['), "{screen}");
    }

    fn events(stderr: &str) -> Vec<Value> {
        stderr
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["event"] == "progress")
            .collect()
    }

    /// `--events`: JSON lines on stderr, a start and an end per phase, whatever stderr is,
    /// beside `--json`'s result on stdout.
    #[test]
    fn events_are_json_lines_on_stderr() {
        let env = Env::new();
        small_files(&env, "src", 120);
        env.ok(&["init"]);
        let out = env
            .cmd()
            .args(["--events", "--json", "snapshot"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let result: Value = serde_json::from_slice(&out.stdout).expect("stdout is the result");
        assert!(result["id"].is_string(), "{result}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let ev = events(&stderr);
        let snap: Vec<&Value> = ev.iter().filter(|e| e["phase"] == "snapshot").collect();
        assert!(snap.len() >= 2, "{stderr}");
        assert_eq!(snap[0]["done"], false, "{stderr}");
        assert_eq!(snap[0]["total_items"], 120, "{stderr}");
        assert_eq!(snap[0]["unit"], "files", "{stderr}");
        let last = snap.last().unwrap();
        assert_eq!(last["done"], true, "{stderr}");
        assert_eq!(last["items"], 120, "{stderr}");
        assert_eq!(last["bytes"], last["total_bytes"], "{stderr}");
        // verify counts objects.
        let out = env
            .cmd()
            .args(["--events", "verify", "--full"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        let ev = events(&stderr);
        let end = ev
            .iter()
            .find(|e| e["phase"] == "verify" && e["done"] == true)
            .unwrap_or_else(|| panic!("{stderr}"));
        assert!(end["items"].as_u64().unwrap() > 0, "{stderr}");
        assert_eq!(end["items"], end["total_items"], "{stderr}");
    }
}

mod quiet_log {
    use super::*;

    fn log_out(env: &Env, args: &[&str]) -> (String, String) {
        let out = env.cmd().arg("log").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// By default the log shows the snapshots a person took and each run once (its after
    /// snapshot); `--all` shows the ones rewind took around a restore and a run too.
    #[test]
    fn bookkeeping_snapshots_are_hidden_unless_all() {
        let env = Env::new();
        env.write("f.txt", b"one\n");
        env.ok(&["init"]);
        let one = env.ok(&["snapshot", "-q", "-m", "one"]).trim().to_string();
        env.write("f.txt", b"two\n");
        env.ok(&["snapshot", "-m", "two"]);
        env.ok(&["restore", &one]);
        env.ok(&["run", "--", "sh", "-c", "echo three > f.txt"]);
        let (text, err) = log_out(&env, &[]);
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows.len(), 3, "one, two and the run: {text}");
        assert!(
            !text.contains("[pre-restore]") && !text.contains("[before]"),
            "{text}"
        );
        assert!(text.contains("[after]"), "{text}");
        assert!(err.contains("--all"), "says what it hid: {err}");
        let json: Value = serde_json::from_str(&env.ok(&["log", "--json"])).unwrap();
        assert_eq!(json.as_array().unwrap().len(), 3, "{json}");
        let (all, err) = log_out(&env, &["--all"]);
        assert!(
            all.contains("[pre-restore]") && all.contains("[before]"),
            "{all}"
        );
        assert!(all.lines().count() > 3, "{all}");
        assert!(!err.contains("--all"), "{err}");
        // Asked for by label: shown.
        let (before, _) = log_out(&env, &["--label", "before"]);
        assert_eq!(before.lines().count(), 1, "{before}");
    }

    /// The `restored` marker keeps its column on every row: times line up.
    #[test]
    fn the_restored_marker_does_not_shift_the_columns() {
        let env = Env::new();
        env.write("f.txt", b"one\n");
        env.ok(&["init"]);
        let one = env.ok(&["snapshot", "-q", "-m", "one"]).trim().to_string();
        env.write("f.txt", b"two\n");
        env.ok(&["snapshot", "-m", "two"]);
        env.ok(&["restore", &one]);
        let (text, _) = log_out(&env, &[]);
        let at: Vec<usize> = text
            .lines()
            .map(|l| l.find(" 20").unwrap_or_else(|| panic!("a time in {l:?}")))
            .collect();
        assert!(text.contains("restored"), "{text}");
        assert!(
            at.windows(2).all(|w| w[0] == w[1]),
            "times at {at:?}:\n{text}"
        );
    }

    /// `-n` says what it cut; `-n 0` lists everything.
    #[test]
    fn the_limit_says_how_many_more() {
        let env = Env::new();
        env.ok(&["init"]);
        for i in 0..5 {
            env.write("f.txt", format!("{i}\n").as_bytes());
            env.ok(&["snapshot", "-m", &format!("s{i}")]);
        }
        let (text, err) = log_out(&env, &["-n", "2"]);
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(err.contains("3 more; -n 0 for all"), "{err}");
        let (text, err) = log_out(&env, &["-n", "0"]);
        assert_eq!(text.lines().count(), 5, "{text}");
        assert!(!err.contains("more"), "{err}");
        let (_, err) = log_out(&env, &["-n", "2", "--", "f.txt"]);
        assert!(err.contains("more; -n 0 for all"), "{err}");
    }
}

mod words {
    use super::*;

    /// One of a thing is "1 file", not "1 files".
    #[test]
    fn one_thing_is_singular() {
        let env = Env::new();
        env.write("only.txt", b"x\n");
        env.ok(&["init"]);
        let out = env.ok(&["snapshot"]);
        assert!(out.contains(" 1 file,"), "{out}");
        assert!(!out.contains("1 files"), "{out}");
        let show = env.ok(&["show"]);
        assert!(
            show.contains("1 file,") && !show.contains("1 files"),
            "{show}"
        );
        let log = env.ok(&["log"]);
        assert!(
            log.contains(" 1 file ") && !log.contains("1 files"),
            "{log}"
        );
    }

    /// A restore counts what it wrote as the snapshot does: a symlink is not a file.
    #[test]
    fn restore_counts_symlinks_apart() {
        let env = Env::new();
        env.write("a.txt", b"a\n");
        env.write("b.txt", b"b\n");
        crate::common::make_symlink(&env.ws, b"link", b"a.txt");
        env.ok(&["init"]);
        let id = env.ok(&["snapshot", "-q"]).trim().to_string();
        for f in ["a.txt", "b.txt", "link"] {
            std::fs::remove_file(env.path(f)).unwrap();
        }
        let out = env.ok(&["restore", &id]);
        assert!(out.contains("2 files and 1 symlink written"), "{out}");
        let json: Value = serde_json::from_str(&env.ok(&["--json", "undo"])).unwrap();
        assert!(json.is_object());
    }

    /// `init` a second time says the workspace was already registered.
    #[test]
    fn init_twice_says_already_registered() {
        let env = Env::new();
        let first = env.ok(&["init"]);
        assert!(first.starts_with("registered workspace"), "{first}");
        let again = env.ok(&["init"]);
        assert!(again.starts_with("already registered"), "{again}");
        let json: Value = serde_json::from_str(&env.ok(&["--json", "init"])).unwrap();
        assert_eq!(json["newly_registered"], false, "{json}");
    }

    /// `check` without rules says there were none to check, not "no violations".
    #[test]
    fn check_without_rules_says_so() {
        let env = Env::new();
        env.write("f.txt", b"x\n");
        env.ok(&["init"]);
        env.ok(&["snapshot"]);
        let out = env.ok(&["check", "@", "@"]);
        assert!(out.contains("no rules"), "{out}");
        assert!(!out.contains("no violations"), "{out}");
        let out = env.ok(&["check", "@", "@", "--forbid", "*.lock"]);
        assert!(out.contains("no violations"), "{out}");
    }

    /// A fifo is warned about once, by the first snapshot that meets it, not by every later
    /// snapshot, status and run.
    #[test]
    fn a_fifo_is_warned_about_once() {
        let env = Env::new();
        env.write("f.txt", b"x\n");
        env.ok(&["init"]);
        env.ok(&["snapshot"]);
        let fifo = env.path("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let first = env.cmd().arg("snapshot").output().unwrap();
        let err = String::from_utf8_lossy(&first.stderr);
        assert!(err.contains("pipe"), "warned the first time: {err}");
        for args in [&["snapshot"][..], &["status"], &["run", "--", "true"]] {
            let out = env.cmd().args(args).output().unwrap();
            assert!(out.status.success());
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!all.contains("pipe"), "{args:?} again: {all}");
        }
        // The JSON still lists it.
        let json: Value = serde_json::from_str(&env.ok(&["--json", "snapshot"])).unwrap();
        assert_eq!(json["skipped"].as_array().unwrap().len(), 1, "{json}");
    }
}

mod overlay_list {
    use super::*;

    /// `overlay list` names its columns.
    #[test]
    fn the_list_has_a_header() {
        let env = Env::new();
        env.write("f.txt", b"x\n");
        env.ok(&["init"]);
        env.ok(&["snapshot"]);
        env.ok(&["overlay", "create", "--backend", "copy"]);
        let out = env.ok(&["overlay", "list"]);
        let mut lines = out.lines();
        let header = lines.next().unwrap_or_default();
        assert!(
            header.starts_with("ID") && header.contains("PENDING") && header.contains("WORKSPACE"),
            "{out}"
        );
        let row = lines.next().unwrap_or_else(|| panic!("a row: {out}"));
        assert_eq!(
            header.find("PENDING"),
            row.find(" pending").map(|at| at - 1),
            "the pending column under its header:\n{out}"
        );
        // The JSON is unchanged: an array of overlays.
        let json: Value = serde_json::from_str(&env.ok(&["--json", "overlay", "list"])).unwrap();
        assert_eq!(json.as_array().unwrap().len(), 1, "{json}");
    }
}

mod export_find {
    use super::*;
    use crate::common::{list_disk, make_symlink, set_exec};

    /// `export @ > tree.tar` unpacks (with the system's tar) to the snapshot's files, modes and
    /// symlinks; `-- PATH` exports only that part.
    #[test]
    fn export_streams_a_tar_that_unpacks_to_the_snapshot() {
        let env = Env::new();
        env.write("src/main.rs", b"fn main() {}\n");
        env.write("run.sh", b"#!/bin/sh\necho hi\n");
        set_exec(&env.path("run.sh"), true);
        env.write("deep/er/data.bin", &crate::common::noise(7, 300_000));
        make_symlink(&env.ws, b"latest", b"src/main.rs");
        env.ok(&["init"]);
        let id = env.ok(&["snapshot", "-q"]).trim().to_string();
        let expected = list_disk(&env.ws);
        // Changed after the snapshot: the export is of the snapshot, not the workspace.
        env.write("src/main.rs", b"changed\n");
        let out = env.cmd().args(["export", &id]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let tar = env.tmp.path().join("tree.tar");
        std::fs::write(&tar, &out.stdout).unwrap();
        let into = env.tmp.path().join("unpacked");
        std::fs::create_dir(&into).unwrap();
        let st = std::process::Command::new("tar")
            .arg("-xf")
            .arg(&tar)
            .arg("-C")
            .arg(&into)
            .status()
            .unwrap();
        assert!(st.success());
        assert_eq!(list_disk(&into), expected);
        // Some paths, to a file.
        let part = env.tmp.path().join("part.tar");
        env.ok(&[
            "export",
            &id,
            "-o",
            part.to_str().unwrap(),
            "--",
            "src",
            "run.sh",
        ]);
        let listed = std::process::Command::new("tar")
            .arg("-tf")
            .arg(&part)
            .output()
            .unwrap();
        let names = String::from_utf8_lossy(&listed.stdout);
        let mut names: Vec<&str> = names.lines().map(|n| n.trim_end_matches('/')).collect();
        names.sort();
        assert_eq!(names, ["run.sh", "src", "src/main.rs"], "{names:?}");
        // A path the snapshot lacks: refused, nothing written.
        let none = env.tmp.path().join("none.tar");
        let (code, err) = env.fails(&["export", &id, "-o", none.to_str().unwrap(), "--", "nope"]);
        assert_eq!(code, 2);
        assert!(err.contains("nope"), "{err}");
        assert!(!none.exists());
    }

    /// Unpacks zip archive `zip` with Info-ZIP's unzip (which restores Unix modes and
    /// symlinks) into a fresh directory, and lists what it made.
    fn unzip(env: &Env, zip: &std::path::Path, name: &str) -> crate::common::Listing {
        let into = env.tmp.path().join(name);
        std::fs::create_dir(&into).unwrap();
        let out = std::process::Command::new("unzip")
            .arg("-q")
            .arg(zip)
            .arg("-d")
            .arg(&into)
            .output()
            .expect("unzip (apt-get install unzip)");
        assert!(
            out.status.success(),
            "unzip: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        list_disk(&into)
    }

    /// `export @ --format zip > tree.zip` is a zip written to a pipe that unzip unpacks to the
    /// snapshot's files, exec bits and symlinks; `-o FILE.zip` picks zip by itself; `-- PATH`
    /// exports only that part; a bad revision or a name zip cannot hold fails with nothing
    /// written.
    #[test]
    fn export_streams_a_zip_that_unzips_to_the_snapshot() {
        let env = Env::new();
        env.write("src/main.rs", b"fn main() {}\n");
        env.write("run.sh", b"#!/bin/sh\necho hi\n");
        set_exec(&env.path("run.sh"), true);
        env.write("deep/er/data.bin", &crate::common::noise(7, 3_000_000));
        env.write("empty", b"");
        env.write("caf\u{e9}/na\u{ef}ve.txt", "d\u{e9}j\u{e0} vu\n".as_bytes());
        make_symlink(&env.ws, b"latest", b"src/main.rs");
        make_symlink(&env.ws, b"deep/up", b"../run.sh");
        env.ok(&["init"]);
        let id = env.ok(&["snapshot", "-q"]).trim().to_string();
        let expected = list_disk(&env.ws);
        env.write("src/main.rs", b"changed\n");
        // To a pipe (stdout is one here): the stream needs no seeking.
        let out = env
            .cmd()
            .args(["export", &id, "--format", "zip"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(&out.stdout[..4], b"PK\x03\x04", "a zip, not a tar");
        let zip = env.tmp.path().join("tree.zip");
        std::fs::write(&zip, &out.stdout).unwrap();
        assert_eq!(unzip(&env, &zip, "all"), expected);

        // -o FILE.zip: zip without --format; --json reports it.
        let part = env.tmp.path().join("part.zip");
        let report = env.ok(&[
            "--json",
            "export",
            &id,
            "-o",
            part.to_str().unwrap(),
            "--",
            "src",
            "deep/up",
        ]);
        let report: Value = serde_json::from_str(&report).unwrap();
        assert_eq!(report["format"], "zip", "{report}");
        assert_eq!(
            (report["files"].as_u64(), report["symlinks"].as_u64()),
            (Some(1), Some(1))
        );
        let got = unzip(&env, &part, "part");
        let names: Vec<String> = got
            .keys()
            .map(|k| String::from_utf8_lossy(k).into())
            .collect();
        assert_eq!(names, ["deep", "deep/up", "src", "src/main.rs"]);
        assert_eq!(got[&b"deep/up"[..]], expected[&b"deep/up"[..]]);
        assert_eq!(got[&b"src/main.rs"[..]].1, b"fn main() {}\n");

        // A bad revision: an error, and nothing on stdout nor on disk.
        let out = env
            .cmd()
            .args(["export", "no-such-rev", "--format", "zip"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(out.stdout.is_empty(), "{} bytes written", out.stdout.len());
        assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-rev"));
        let none = env.tmp.path().join("none.zip");
        let (code, err) = env.fails(&["export", "no-such-rev", "-o", none.to_str().unwrap()]);
        assert_eq!(code, 2, "{err}");
        assert!(!none.exists());
    }

    /// A large file is streamed into either archive, not held whole: the export's peak
    /// resident memory (its own, from wait4) stays well below the file's size.
    #[test]
    fn export_streams_a_large_file_in_bounded_memory() {
        const PEAK: &str = r#"
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE)
n = 0
while True:
    b = p.stdout.read(1 << 16)
    if not b:
        break
    n += len(b)
_, status, ru = os.wait4(p.pid, 0)
print(n, ru.ru_maxrss, os.waitstatus_to_exitcode(status))
"#;
        let env = Env::new();
        let size = 96 << 20;
        env.write("big.bin", &crate::common::noise(3, size));
        env.ok(&["init"]);
        env.ok(&["snapshot", "-q"]);
        for format in ["zip", "tar"] {
            let out = std::process::Command::new("python3")
                .arg("-c")
                .arg(PEAK)
                .arg(env!("CARGO_BIN_EXE_rewind"))
                .arg("--store")
                .arg(&env.store)
                .arg("-C")
                .arg(&env.ws)
                .args(["export", "@", "-q", "--format", format])
                .output()
                .expect("python3");
            let text = String::from_utf8_lossy(&out.stdout);
            let v: Vec<u64> = text
                .split_whitespace()
                .map(|x| x.parse().unwrap())
                .collect();
            assert_eq!(
                v[2],
                0,
                "{format}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(v[0] > size as u64, "{format}: {} bytes", v[0]);
            // KiB. The whole file alone would be 96 MiB.
            assert!(v[1] < 64 << 10, "{format}: peak {} KiB", v[1]);
        }
    }

    /// A name that is not UTF-8: zip cannot name it, so a zip export refuses (naming it,
    /// writing nothing) and says tar keeps it; tar does.
    #[test]
    fn zip_export_refuses_names_that_are_not_utf8_and_tar_keeps_them() {
        let env = Env::new();
        env.write("ok.txt", b"fine\n");
        crate::common::write_file(&env.ws, b"bad-\xff.txt", b"latin1\n");
        env.ok(&["init"]);
        let id = env.ok(&["snapshot", "-q"]).trim().to_string();
        let out = env
            .cmd()
            .args(["export", &id, "--format", "zip"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(out.stdout.is_empty(), "nothing written");
        assert!(
            err.contains("bad-\u{fffd}.txt") && err.contains("UTF-8"),
            "{err}"
        );
        assert!(err.contains("tar"), "the hint names tar: {err}");
        // The rest exports fine.
        env.ok(&[
            "export",
            &id,
            "-o",
            env.tmp.path().join("ok.zip").to_str().unwrap(),
            "--",
            "ok.txt",
        ]);
        let tar = env.tmp.path().join("all.tar");
        env.ok(&["export", &id, "-o", tar.to_str().unwrap()]);
        let bytes = std::fs::read(&tar).unwrap();
        assert!(
            bytes.windows(9).any(|w| w == b"bad-\xff.txt"),
            "the name as bytes"
        );
    }

    /// `find GLOB` lists each matching path with the snapshots that held each version.
    #[test]
    fn find_tells_which_snapshots_hold_a_path_and_when_it_changed() {
        let env = Env::new();
        env.write("src/a.rs", b"one\n");
        env.write("README", b"r\n");
        env.ok(&["init"]);
        let s1 = env.ok(&["snapshot", "-q"]).trim().to_string();
        env.write("notes.txt", b"n\n");
        let s2 = env.ok(&["snapshot", "-q"]).trim().to_string();
        env.write("src/a.rs", b"two\n");
        let s3 = env.ok(&["snapshot", "-q"]).trim().to_string();
        std::fs::remove_file(env.path("src/a.rs")).unwrap();
        env.ok(&["snapshot", "-q"]);
        let v: Value = serde_json::from_str(&env.ok(&["--json", "find", "*.rs"])).unwrap();
        let found = v.as_array().unwrap();
        assert_eq!(found.len(), 1, "{v}");
        assert_eq!(found[0]["path"], "src/a.rs");
        let versions = found[0]["versions"].as_array().unwrap();
        assert_eq!(versions.len(), 2, "{v}");
        let id = |v: &Value| v.as_str().unwrap()[..12].to_string();
        assert_eq!(id(&versions[0]["first"]), s1, "{v}");
        assert_eq!(id(&versions[0]["last"]), s2, "{v}");
        assert_eq!(versions[0]["snapshots"], 2, "{v}");
        assert_eq!(id(&versions[1]["first"]), s3, "{v}");
        assert_eq!(versions[1]["snapshots"], 1, "{v}");
        let text = env.ok(&["find", "src/*.rs"]);
        assert!(text.starts_with("src/a.rs\n"), "{text}");
        assert!(text.contains("in 2 snapshots"), "{text}");
        // Nothing matches: exit 1, said so.
        let out = env.cmd().args(["find", "*.py"]).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains("*.py"));
        // A bad glob: a clear error.
        let (code, err) = env.fails(&["find", "a[b"]);
        assert_eq!(code, 2);
        assert!(err.contains("a[b"), "{err}");
    }
}

mod help {
    use super::*;

    /// The top-level help says what rewind is for, not how it is built.
    #[test]
    fn top_level_help_says_what_rewind_is_for() {
        let env = Env::new();
        let out = env.ok(&["--help"]);
        let first = out.lines().next().unwrap_or_default();
        assert!(first.contains("Snapshots of any directory"), "{out}");
        assert!(!out.contains("argument parsing"), "{out}");
    }

    /// A command's own options come first, the global ones after under their own heading.
    #[test]
    fn a_commands_own_options_come_before_the_global_ones() {
        let env = Env::new();
        let out = env.ok(&["snapshot", "--help"]);
        let own = out.find("--message").expect("own option");
        let global = out
            .find("Global options:")
            .unwrap_or_else(|| panic!("{out}"));
        let store = out.find("--store").expect("global option");
        assert!(own < global && global < store, "{out}");
    }

    /// clap's errors carry the `rewind:` prefix every other error has.
    #[test]
    fn usage_errors_have_the_rewind_prefix() {
        let env = Env::new();
        let (code, err) = env.fails(&["snapshot", "--no-such-flag"]);
        assert_eq!(code, 2);
        assert!(err.starts_with("rewind: error:"), "{err}");
    }

    /// On a terminal too, and the help is coloured there unless NO_COLOR.
    #[test]
    fn help_on_a_terminal() {
        let env = Env::new();
        let (code, screen) = on_terminal(&env, &["log", "--help"], &[]);
        assert_eq!(code, 0, "{screen}");
        let own = screen
            .find("--max-count")
            .unwrap_or_else(|| panic!("{screen}"));
        let global = screen
            .find("Global options")
            .unwrap_or_else(|| panic!("{screen}"));
        assert!(own < global, "{screen}");
        let (_, err) = on_terminal(&env, &["log", "--bogus"], &[]);
        assert!(err.trim_start().starts_with("rewind: "), "{err}");
    }
}

mod shell {
    use super::*;

    #[test]
    fn completions_for_bash_zsh_and_fish() {
        let env = Env::new();
        let bash = env.ok(&["completions", "bash"]);
        assert!(
            bash.contains("_rewind()") && bash.contains("snapshot"),
            "{bash}"
        );
        assert!(bash.contains("complete -F _rewind"), "{bash}");
        let zsh = env.ok(&["completions", "zsh"]);
        assert!(zsh.starts_with("#compdef rewind"), "{zsh}");
        let fish = env.ok(&["completions", "fish"]);
        assert!(fish.contains("complete -c rewind"), "{fish}");
        assert!(fish.contains("export"), "{fish}");
        let (code, err) = env.fails(&["completions", "tcsh"]);
        assert_eq!(code, 2);
        assert!(err.contains("tcsh"), "{err}");
        // bash accepts the script.
        let script = env.tmp.path().join("rewind.bash");
        std::fs::write(&script, &bash).unwrap();
        let checked = std::process::Command::new("bash")
            .arg("-n")
            .arg(&script)
            .status()
            .unwrap();
        assert!(checked.success());
    }

    #[test]
    fn a_man_page_and_one_per_command() {
        let env = Env::new();
        let page = env.ok(&["man"]);
        assert!(page.contains(".TH rewind"), "{page}");
        assert!(page.contains("snapshot"), "{page}");
        let dir = env.tmp.path().join("man1");
        env.ok(&["man", "--out-dir", dir.to_str().unwrap()]);
        let snap = std::fs::read_to_string(dir.join("rewind-snapshot.1")).unwrap();
        assert!(snap.contains("\\-\\-message"), "{snap}");
        // man renders it, where man is installed.
        if std::process::Command::new("man")
            .arg("--version")
            .output()
            .is_ok()
        {
            let out = std::process::Command::new("man")
                .arg("-l")
                .arg(dir.join("rewind.1"))
                .env("MANPAGER", "cat")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// Right after `watch on`, the daemon's journal cannot vouch for the tree until a snapshot
/// records its token: `watch on` says so and what to run, rather than leaving `status` to walk
/// the whole tree without a word.
#[test]
fn watch_on_says_how_to_start_using_the_journal() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    env.ok(&["snapshot", "-q"]);
    let out = env.ok(&["watch", "on"]);
    assert!(out.contains("watching "), "{out}");
    assert!(
        out.contains("from the next snapshot on") && out.contains("`rewind snapshot`"),
        "{out}"
    );
    env.ok(&["watch", "off"]);
}
