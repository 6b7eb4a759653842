//! `e` at the hunk prompt of `overlay accept -p` and `restore -p`, as in `git add -p`: the hunk
//! opens in `$EDITOR` (here a script that edits it as a person would), and what comes back is
//! taken instead of the hunk; an edit that does not apply is said and offered again, an
//! emptied one leaves the hunk to ask again, and nothing is written from a file that changed
//! meanwhile. On a real pseudo-terminal.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use crate::common::Env;
use crate::overlay_hunks::{EDIT, base_text, big_hunks, on_terminal_editing, setup_with};

/// An editor: a shell script whose `$1` is the file to edit.
fn editor(env: &Env, name: &str, body: &str) -> PathBuf {
    let p = env.tmp.path().join(name);
    fs::write(&p, format!("#!/bin/sh\nset -e\n{body}\n")).unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn big(env: &Env) -> String {
    fs::read_to_string(env.path("big.txt")).unwrap()
}

/// EDIT's middle hunk (`line 20` -> `TWENTY`, `extra`), edited: its first `+` line changed,
/// its second left out. The other hunks are declined.
#[test]
fn accept_p_takes_the_hunk_as_edited() {
    for backend in crate::common::backends() {
        let (env, id) = setup_with(backend, EDIT);
        let hunks = big_hunks(&env, &id);
        assert_eq!(hunks.len(), 3);
        let ed = editor(
            &env,
            "ed.sh",
            r#"sed -i -e 's/^+TWENTY$/+twenty (edited)/' -e '/^+extra$/d' "$1""#,
        );
        let args = ["overlay", "accept", id.as_str(), "-p"];
        let (code, screen) = on_terminal_editing(&env, &args, &["?", "n", "e", "n", "n"], &ed);
        assert_eq!(code, 0, "{backend}: {screen}");
        assert!(
            screen.contains("e - manually edit the current hunk"),
            "{screen}"
        );
        assert!(screen.contains("[y,n,q,a,d,s,e,?]? "), "{screen}");
        assert_eq!(
            fs::read(env.path("big.txt")).unwrap(),
            base_text()
                .replace("line 20\n", "twenty (edited)\n")
                .into_bytes(),
            "{backend}: {screen}"
        );
        assert!(!env.path("new.txt").exists());
        // The edited hunk counts as accepted; the declined ones stay pending.
        assert_eq!(
            big_hunks(&env, &id),
            vec![hunks[0].clone(), hunks[2].clone()],
            "{backend}"
        );
        env.ok(&["undo"]);
        assert_eq!(big(&env), base_text(), "{backend}");
        assert_eq!(big_hunks(&env, &id), hunks, "{backend}: pending again");
    }
}

/// A first edit that changes a context line does not apply: said, offered again (`y`), and
/// the second edit is taken. Saying `n` instead discards it and asks about the hunk again.
#[test]
fn an_edit_that_does_not_apply_is_offered_again() {
    let (env, id) = setup_with("copy", EDIT);
    let ed = editor(
        &env,
        "twice.sh",
        r#"n=$(cat "$0.count" 2>/dev/null || echo 0); echo $((n+1)) > "$0.count"
if [ "$n" = 0 ]; then
  sed -i 's/^ line 19$/ line nineteen/' "$1"
else
  sed -i -e 's/^ line nineteen$/ line 19/' -e 's/^+TWENTY$/+TWENTY!/' "$1"
fi"#,
    );
    let args = ["overlay", "accept", id.as_str(), "-p"];
    let (code, screen) = on_terminal_editing(&env, &args, &["n", "e", "y", "n", "n"], &ed);
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("does not apply"), "{screen}");
    assert!(screen.contains("Edit again"), "{screen}");
    assert_eq!(
        fs::read(env.path("big.txt")).unwrap(),
        base_text()
            .replace("line 20\n", "TWENTY!\nextra\n")
            .into_bytes(),
        "{screen}"
    );

    // Discarded: the hunk is asked about again, and declined; nothing is written.
    let (env, id) = setup_with("copy", EDIT);
    let bad = editor(
        &env,
        "bad.sh",
        r#"sed -i 's/^ line 19$/ line nineteen/' "$1""#,
    );
    let args = ["overlay", "accept", id.as_str(), "-p"];
    let (code, screen) = on_terminal_editing(&env, &args, &["n", "e", "n", "n", "n", "n"], &bad);
    assert_eq!(code, 0, "{screen}");
    assert_eq!(
        screen.matches("(2/3) Accept this hunk").count(),
        2,
        "asked again: {screen}"
    );
    assert!(screen.contains("nothing chosen"), "{screen}");
    assert_eq!(big(&env), base_text());
}

/// An emptied edit aborts the edit, as in git: the hunk is asked about again, unchanged.
#[test]
fn an_emptied_edit_leaves_the_hunk_to_ask_again() {
    let (env, id) = setup_with("copy", EDIT);
    let empty = editor(&env, "empty.sh", r#": > "$1""#);
    let args = ["overlay", "accept", id.as_str(), "-p"];
    let (code, screen) = on_terminal_editing(&env, &args, &["n", "e", "y", "n", "n"], &empty);
    assert_eq!(code, 0, "{screen}");
    assert_eq!(
        screen.matches("(2/3) Accept this hunk").count(),
        2,
        "{screen}"
    );
    assert_eq!(
        big(&env),
        base_text().replace("line 20\n", "TWENTY\nextra\n"),
        "the hunk taken whole by the second answer: {screen}"
    );
}

/// A workspace snapshotted as `s`, then changed by EDIT.
fn restore_setup() -> (Env, String) {
    let env = Env::new();
    env.write("big.txt", base_text().as_bytes());
    env.ok(&["snapshot", "-q", "--tag", "s"]);
    env.ok(&["run", "--", "sh", "-c", EDIT]);
    let edited = big(&env);
    (env, edited)
}

/// `restore -p`, `e` on the middle hunk (`-TWENTY -extra +line 20`): `-extra` kept as
/// context, so the restore brings `line 20` back and keeps `extra`.
#[test]
fn restore_p_restores_the_hunk_as_edited() {
    let (env, edited) = restore_setup();
    let ed = editor(&env, "keep.sh", r#"sed -i 's/^-extra$/ extra/' "$1""#);
    let (code, screen) = on_terminal_editing(&env, &["restore", "s", "-p"], &["n", "e", "n"], &ed);
    assert_eq!(code, 0, "{screen}");
    assert_eq!(
        fs::read(env.path("big.txt")).unwrap(),
        edited
            .replace("TWENTY\nextra\n", "extra\nline 20\n")
            .into_bytes(),
        "{screen}"
    );
    env.ok(&["undo"]);
    assert_eq!(big(&env), edited);
}

/// The file changes in the hunk's lines while the editor is open: the restore refuses and
/// writes nothing, the change made meanwhile is kept.
#[test]
fn restore_p_writes_nothing_when_the_file_changed_meanwhile() {
    let (env, edited) = restore_setup();
    let ed = editor(
        &env,
        "race.sh",
        &format!(
            r#"sed -i 's/^-extra$/ extra/' "$1"
sed -i 's/^line 19$/nineteen/' '{}'"#,
            env.path("big.txt").display()
        ),
    );
    let (code, screen) = on_terminal_editing(&env, &["restore", "s", "-p"], &["n", "e", "n"], &ed);
    assert_eq!(code, 2, "{screen}");
    assert!(screen.contains("no hunk"), "{screen}");
    assert_eq!(big(&env), edited.replace("line 19\n", "nineteen\n"));
}
