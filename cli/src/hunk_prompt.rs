//! `overlay accept -p` and `restore -p`: the hunk-by-hunk walk on a terminal, like
//! `git add -p`. Only the questions live here; the hunks and the writes are the library's.

use std::io::{BufRead, IsTerminal, Write};

use anstyle::{AnsiColor, Style};

use super::output::{paint, path_str};
use super::{CliError, Ctx};
use rewind::fs::RelPath;
use rewind::overlay::{self as ov, OverlayRecord};
use rewind::store::Store;

const HELP: &str = "y - take this hunk
n - do not take this hunk
q - quit; take what was chosen so far
a - take this hunk and all later hunks in the file
d - do not take this hunk nor any later hunk in the file
s - split the current hunk into smaller hunks
? - print help
";

/// What the user chose: hunk ids, and changes without line hunks taken whole. None when
/// nothing was chosen.
pub type Chosen = Option<(Vec<String>, Vec<RelPath>)>;

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
    rec: &mut OverlayRecord,
    paths: &[RelPath],
) -> Result<Chosen, CliError> {
    need_terminal(&format!(
        "pick hunks with --hunk ID (ids from `rewind overlay diff {} --json`)",
        rec.id
    ))?;
    let od = ov::overlay_diff(store, rec, false)?;
    let reviews = ov::review_hunks(store, rec, &od.diff)?;
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
pub fn walk(ctx: &Ctx, items: &[Item], verb: &str) -> Result<Chosen, CliError> {
    let mut ids = Vec::new();
    let mut whole = Vec::new();
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
                Answer::Yes | Answer::All => whole.push(RelPath::parse(item.path)?),
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
                "({}/{}) {verb} this hunk [y,n,q,a,d,s,?]? ",
                i + 1,
                pending.len()
            );
            match ask(&mut input, &mut out, &prompt)? {
                Answer::Yes => ids.push(h.id.clone()),
                Answer::No => {}
                Answer::Quit => break 'files,
                Answer::All => {
                    ids.extend(pending[i..].iter().map(|h| h.id.clone()));
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
                Answer::Help => {
                    out.write_all(HELP.as_bytes())?;
                    continue;
                }
            }
            i += 1;
        }
    }
    if ids.is_empty() && whole.is_empty() {
        writeln!(out, "nothing chosen")?;
        return Ok(None);
    }
    Ok(Some((ids, whole)))
}

enum Answer {
    Yes,
    No,
    Quit,
    All,
    Done,
    Split,
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
            "?" => Answer::Help,
            _ => {
                out.write_all(HELP.as_bytes())?;
                continue;
            }
        });
    }
}

fn print_hunk(
    out: &mut dyn Write,
    h: &rewind::hunks::ReviewHunk,
    color: bool,
) -> std::io::Result<()> {
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
