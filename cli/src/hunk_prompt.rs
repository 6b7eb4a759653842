//! `overlay accept -p` and `restore -p`: the hunk-by-hunk walk on a terminal, like
//! `git add -p`. Only the questions live here; the hunks and the writes are the library's.

use std::io::{BufRead, IsTerminal, Write};
use std::process::Command;

use anstyle::{AnsiColor, Style};

use super::output::{paint, path_str};
use super::{CliError, Ctx};
use rewind::Overlay;
use rewind::files::RelPath;
use rewind::hunks::{EditedHunk, ReviewHunk};
use rewind::store::Store;

const HELP: &str = "y - take this hunk
n - do not take this hunk
q - quit; take what was chosen so far
a - take this hunk and all later hunks in the file
d - do not take this hunk nor any later hunk in the file
s - split the current hunk into smaller hunks
e - manually edit the current hunk
? - print help
";

/// What the user chose (when anything).
#[derive(Default)]
pub struct Chosen {
    /// Hunks taken as they are.
    pub ids: Vec<String>,
    /// Hunks taken as the user edited them (`e`).
    pub edited: Vec<EditedHunk>,
    /// Changes without line hunks, taken whole.
    pub whole: Vec<RelPath>,
}

/// One file to ask about: its hunks, or None for a change taken whole (binary, symlink...).
pub struct Item<'a> {
    /// Workspace-relative path.
    pub path: &'a [u8],
    /// Its status ("modified", "added"...), shown for a change without hunks.
    pub status: &'a str,
    /// Its pending hunks.
    pub hunks: Option<Vec<&'a rewind::hunks::ReviewHunk>>,
}

/// Fails unless stdin and stdout are a terminal, saying what to use instead.
pub fn need_terminal(instead: &str) -> Result<(), CliError> {
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        return Ok(());
    }
    Err(rewind::Error::Invalid(format!(
        "-p asks questions on a terminal; without one, {instead}"
    ))
    .into())
}

/// Walks the overlay's pending hunks (below `paths`, when given) asking about each one.
pub fn choose(
    ctx: &Ctx,
    store: &Store,
    rec: &mut Overlay,
    paths: &[RelPath],
) -> Result<Option<Chosen>, CliError> {
    need_terminal(&format!(
        "pick hunks with --hunk ID (ids from `rewind overlay diff {} --json`)",
        rec.id()
    ))?;
    let od = rec.diff(store, false)?;
    let reviews = rec.review_hunks(store, &od.diff)?;
    let items: Vec<Item> = od
        .diff
        .changes
        .iter()
        .zip(&reviews)
        .filter(|(c, _)| {
            paths.is_empty()
                || paths
                    .iter()
                    .any(|q| rewind::diff::tree::is_under(&c.path, q))
        })
        .map(|(c, h)| Item {
            path: &c.path,
            status: c.status.name(),
            hunks: h.as_ref().map(|h| h.iter().filter(|h| h.pending).collect()),
        })
        .collect();
    walk(ctx, &items, "Accept")
}

/// Asks about every hunk of `items` ("Accept this hunk", with `verb`), like `git add -p`.
pub fn walk(ctx: &Ctx, items: &[Item], verb: &str) -> Result<Option<Chosen>, CliError> {
    let mut chosen = Chosen::default();
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    let color = ctx.color;
    'files: for item in items {
        let p = path_str(item.path);
        writeln!(
            out,
            "{}",
            paint(
                color,
                super::output::bold(),
                &format!("diff --git a/{p} b/{p}")
            )
        )?;
        let Some(pending) = &item.hunks else {
            writeln!(out, "{} {p} (no line hunks)", item.status)?;
            let prompt = format!("{verb} this change [y,n,q,?]? ");
            match ask(&mut input, &mut out, &prompt)? {
                Answer::Yes | Answer::All => chosen.whole.push(RelPath::parse(item.path)?),
                Answer::Quit => break 'files,
                _ => {}
            }
            continue;
        };
        // Owned, since `s` replaces a hunk with its parts.
        let mut pending: Vec<rewind::hunks::ReviewHunk> =
            pending.iter().map(|h| (*h).clone()).collect();
        let mut i = 0;
        while i < pending.len() {
            let h = &pending[i];
            print_hunk(&mut out, h, color)?;
            let prompt = format!(
                "({}/{}) {verb} this hunk [y,n,q,a,d,s,e,?]? ",
                i + 1,
                pending.len()
            );
            match ask(&mut input, &mut out, &prompt)? {
                Answer::Yes => chosen.ids.push(h.id.clone()),
                Answer::No => {}
                Answer::Quit => break 'files,
                Answer::All => {
                    chosen.ids.extend(pending[i..].iter().map(|h| h.id.clone()));
                    break;
                }
                Answer::Done => break,
                Answer::Split => {
                    let parts = rewind::hunks::split(item.path, h);
                    if parts.len() < 2 {
                        writeln!(out, "Sorry, cannot split this hunk")?;
                    } else {
                        writeln!(out, "Split into {} hunks.", parts.len())?;
                        pending.splice(i..=i, parts);
                    }
                    continue;
                }
                Answer::Edit => match edit(&mut input, &mut out, h, verb)? {
                    Some(e) => chosen.edited.push(e),
                    // Abandoned: asked again, as git does.
                    None => continue,
                },
                Answer::Help => {
                    out.write_all(HELP.as_bytes())?;
                    continue;
                }
            }
            i += 1;
        }
    }
    if chosen.ids.is_empty() && chosen.edited.is_empty() && chosen.whole.is_empty() {
        writeln!(out, "nothing chosen")?;
        return Ok(None);
    }
    Ok(Some(chosen))
}

/// `e`: the hunk in the user's editor, as `git add -p` edits it, until the edit applies.
/// None when it was abandoned (emptied, the editor failed, or no second try): the hunk is
/// then asked about again.
fn edit(
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    h: &ReviewHunk,
    verb: &str,
) -> Result<Option<EditedHunk>, CliError> {
    let mut patch = h.edit_text();
    loop {
        let mut file = tempfile::Builder::new()
            .prefix("rewind-hunk-edit-")
            .suffix(".diff")
            .tempfile()
            .map_err(|e| rewind::Error::io(std::env::temp_dir(), e))?;
        let mut text = b"# Manual hunk edit mode -- see bottom for a quick guide.\n".to_vec();
        text.extend_from_slice(&patch);
        text.extend_from_slice(edit_guide(verb).as_bytes());
        file.write_all(&text)
            .and_then(|()| file.flush())
            .map_err(|e| rewind::Error::io(file.path(), e))?;
        out.flush()?;
        if let Err(why) = run_editor(file.path()) {
            writeln!(out, "rewind: {why}; the hunk is left as it was")?;
            return Ok(None);
        }
        let back = std::fs::read(file.path()).map_err(|e| rewind::Error::io(file.path(), e))?;
        match h.read_edit(&back) {
            Ok(e) => return Ok(e),
            Err(e) => {
                writeln!(out, "rewind: {e}")?;
                let again =
                    "Your edited hunk does not apply. Edit again (saying \"no\" discards!) [y/n]? ";
                if !ask_yes_no(input, out, again)? {
                    return Ok(None);
                }
                // The next try starts from this one, its comments written anew.
                patch = back
                    .split_inclusive(|&b| b == b'\n')
                    .filter(|l| !l.starts_with(b"#"))
                    .flatten()
                    .copied()
                    .collect();
            }
        }
    }
}

/// The guide below a hunk to edit, as git writes it (`verb` says what a chosen hunk does).
fn edit_guide(verb: &str) -> String {
    let verb = verb.to_lowercase();
    format!(
        "# ---
# To keep a '-' line as it is (not remove it), make it a ' ' line (context).
# To leave out a '+' line (not add it), delete it.
# Lines starting with # will be removed.
#
# If the patch applies cleanly, the edited hunk will immediately be marked to {verb}.
# If it does not apply cleanly, you will be given an opportunity to edit again.
# If all lines of the hunk are removed, then the edit is aborted and the hunk is
# left unchanged.
"
    )
}

/// Opens `path` in `$VISUAL`, else `$EDITOR`, else `vi`, through the shell as git does (so
/// that an editor with arguments works), on the terminal.
fn run_editor(path: &std::path::Path) -> Result<(), String> {
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|e| !e.trim().is_empty())
        .unwrap_or_else(|| "vi".into());
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$@\""))
        .arg(&editor)
        .arg(path)
        .status()
        .map_err(|e| format!("cannot run the editor '{editor}': {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the editor '{editor}' failed ({status})"))
    }
}

fn ask_yes_no(
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    prompt: &str,
) -> Result<bool, CliError> {
    loop {
        out.write_all(prompt.as_bytes())?;
        out.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            writeln!(out)?;
            return Ok(false);
        }
        match line.trim() {
            "y" => return Ok(true),
            "n" => return Ok(false),
            _ => {}
        }
    }
}

enum Answer {
    Yes,
    No,
    Quit,
    All,
    Done,
    Split,
    Edit,
    Help,
}

fn ask(input: &mut dyn BufRead, out: &mut dyn Write, prompt: &str) -> Result<Answer, CliError> {
    loop {
        out.write_all(prompt.as_bytes())?;
        out.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            // End of input: as q.
            writeln!(out)?;
            return Ok(Answer::Quit);
        }
        return Ok(match line.trim() {
            "y" => Answer::Yes,
            "n" => Answer::No,
            "q" => Answer::Quit,
            "a" => Answer::All,
            "d" => Answer::Done,
            "s" => Answer::Split,
            "e" => Answer::Edit,
            "?" => Answer::Help,
            _ => {
                out.write_all(HELP.as_bytes())?;
                continue;
            }
        });
    }
}

fn print_hunk(out: &mut dyn Write, h: &ReviewHunk, color: bool) -> std::io::Result<()> {
    let header = format!(
        "@@ -{},{} +{},{} @@",
        h.old_start, h.old_lines, h.new_start, h.new_lines
    );
    writeln!(
        out,
        "{}",
        paint(
            color,
            Style::new().fg_color(Some(AnsiColor::Cyan.into())),
            &header
        )
    )?;
    for l in &h.lines {
        let text = l.strip_suffix('\n').unwrap_or(l);
        let style = match l.as_bytes().first() {
            Some(b'-') => Style::new().fg_color(Some(AnsiColor::Red.into())),
            Some(b'+') => Style::new().fg_color(Some(AnsiColor::Green.into())),
            _ => Style::new(),
        };
        writeln!(out, "{}", paint(color, style, text))?;
        if !l.ends_with('\n') {
            writeln!(out, "\\ No newline at end of file")?;
        }
    }
    Ok(())
}
