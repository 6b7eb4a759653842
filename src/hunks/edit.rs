//! Hunks the user edited, as `e` in `git add -p` edits them: a hunk written out as a patch,
//! read back, checked against the hunk it came from, and taken in its place. An edit may keep
//! a `-` line (as context), leave out a `+` line or add new ones; the old lines it keeps must
//! be the file's, and what it changes must lie within the hunk, so that an edit applies
//! exactly where the hunk would have.

use rustc_hash::FxHashMap;

use super::ReviewHunk;
use crate::error::{Error, HunkSet, Result};

/// A hunk as the user edited it: taken instead of the hunk of the same id, when that hunk's
/// file still holds the old lines the edit kept (checked again when it is applied).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditedHunk {
    /// The id of the hunk it edits.
    pub id: String,
    /// Its lines, each with its mark: ' ', '-' or '+' (line endings kept).
    lines: Vec<(u8, Vec<u8>)>,
}

impl EditedHunk {
    /// The edit as bytes (marks and lines), for keys that must tell two edits apart.
    pub(crate) fn key(&self) -> Vec<u8> {
        let mut k = self.id.as_bytes().to_vec();
        for (mark, text) in &self.lines {
            k.push(*mark);
            k.extend_from_slice(text);
        }
        k
    }
}

/// The marker a patch puts after a line that has no final newline.
const NO_NEWLINE: &[u8] = b"\\ No newline at end of file\n";

impl ReviewHunk {
    /// The hunk as a patch to edit: its `@@` header, then its lines as bytes (a line without
    /// a final newline followed by the `\ No newline at end of file` marker). What
    /// [`ReviewHunk::read_edit`] reads back.
    pub fn edit_text(&self) -> Vec<u8> {
        let mut out = format!(
            "@@ -{},{} +{},{} @@\n",
            self.old_start, self.old_lines, self.new_start, self.new_lines
        )
        .into_bytes();
        for (mark, text) in &self.raw {
            out.push(*mark);
            out.extend_from_slice(text);
            if !text.ends_with(b"\n") {
                out.push(b'\n');
                out.extend_from_slice(NO_NEWLINE);
            }
        }
        out
    }

    /// Reads back an edit of [`ReviewHunk::edit_text`]: lines starting with `#` and `@@`
    /// are dropped, an empty line is an empty context line (editors strip trailing blanks).
    /// `None` when no line is left (the edit abandoned, as git takes it); an error saying why
    /// when the edit does not apply to this hunk.
    pub fn read_edit(&self, text: &[u8]) -> Result<Option<EditedHunk>> {
        let bad = |why: String| Error::BadHunkEdit {
            hunk: self.id.clone(),
            why,
        };
        let mut lines: Vec<(u8, Vec<u8>)> = Vec::new();
        for (n, line) in text.split_inclusive(|&b| b == b'\n').enumerate() {
            match line.first() {
                Some(b'#') => {}
                Some(b'@') if line.starts_with(b"@@") => {}
                Some(b'\\') => match lines.last_mut() {
                    Some((_, prev)) if prev.ends_with(b"\n") => {
                        prev.pop();
                    }
                    _ => return Err(bad(format!("line {} marks no line", n + 1))),
                },
                Some(b'\n') => lines.push((b' ', b"\n".to_vec())),
                Some(&mark @ (b' ' | b'-' | b'+')) => {
                    let mut l = line[1..].to_vec();
                    // The file's last line, when the editor left off its newline: a line
                    // without one is said with the marker.
                    if !l.ends_with(b"\n") {
                        l.push(b'\n');
                    }
                    lines.push((mark, l));
                }
                Some(&c) => {
                    return Err(bad(format!(
                        "line {} starts with '{}': each line starts with ' ', '-' or '+'",
                        n + 1,
                        (c as char).escape_default()
                    )));
                }
                None => {}
            }
        }
        if lines.is_empty() {
            return Ok(None);
        }
        replacement(self, &lines).map_err(bad)?;
        Ok(Some(EditedHunk {
            id: self.id.clone(),
            lines,
        }))
    }
}

/// Where an edit goes in its file: the old lines `[from, to)` (0-based) it replaces, and
/// what replaces them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Replacement {
    pub(crate) from: usize,
    pub(crate) to: usize,
    pub(crate) bytes: Vec<u8>,
}

/// Where edit `lines` of hunk `h` goes, or why it does not apply.
fn replacement(
    h: &ReviewHunk,
    lines: &[(u8, Vec<u8>)],
) -> std::result::Result<Replacement, String> {
    fn old_side(ls: &[(u8, Vec<u8>)]) -> Vec<&[u8]> {
        ls.iter()
            .filter(|(m, _)| *m != b'+')
            .map(|(_, t)| t.as_slice())
            .collect()
    }
    if old_side(lines) != old_side(&h.raw) {
        return Err(
            "its context and '-' lines are not the hunk's: keep them as they were, or make a \
             '-' line a ' ' line"
                .into(),
        );
    }
    for mark in [b'-', b'+'] {
        let side: Vec<&Vec<u8>> = lines
            .iter()
            .filter(|(m, _)| *m == b' ' || *m == mark)
            .map(|(_, t)| t)
            .collect();
        if side.iter().rev().skip(1).any(|t| !t.ends_with(b"\n")) {
            return Err("only the last line of a hunk can lack a newline".into());
        }
    }
    let lead = lines.iter().take_while(|(m, _)| *m == b' ').count();
    let trail = lines[lead..]
        .iter()
        .rev()
        .take_while(|(m, _)| *m == b' ')
        .count();
    let span = &lines[lead..lines.len() - trail];
    // The hunk's first old line, 0-based (a hunk without old lines starts after its line).
    let first = h.old_start.saturating_sub(usize::from(h.old_lines > 0));
    let from = first + lead;
    let to = from + span.iter().filter(|(m, _)| *m != b'+').count();
    if !span.is_empty() && (from < h.old_range.0 || to > h.old_range.1) {
        return Err(
            "it changes lines outside the hunk (the context it shares with the hunks beside it)"
                .into(),
        );
    }
    Ok(Replacement {
        from,
        to,
        bytes: span
            .iter()
            .filter(|(m, _)| *m != b'-')
            .flat_map(|(_, t)| t.iter().copied())
            .collect(),
    })
}

/// The edits of `edits` that edit hunks of `hunks` (one file's), resolved to where they go
/// in that file; edits of other files' hunks are left out. Fails when one does not apply to
/// its hunk any more (the file changed since it was edited).
pub(crate) fn resolve(
    hunks: &[ReviewHunk],
    edits: &[EditedHunk],
) -> Result<FxHashMap<String, Replacement>> {
    let mut out = FxHashMap::default();
    for e in edits {
        if let Some(h) = hunks.iter().find(|h| h.id == e.id) {
            let r = replacement(h, &e.lines).map_err(|why| Error::BadHunkEdit {
                hunk: e.id.clone(),
                why,
            })?;
            out.insert(e.id.clone(), r);
        }
    }
    Ok(out)
}

/// Fails naming the first edit whose hunk none of `hunks` is.
pub(crate) fn check_edits<'a>(
    edits: &[EditedHunk],
    hunks: impl Iterator<Item = &'a ReviewHunk>,
    among: HunkSet,
) -> Result<()> {
    let ids: Vec<String> = edits.iter().map(|e| e.id.clone()).collect();
    super::check_ids(&ids, hunks, among)
}

#[cfg(test)]
mod tests {
    use super::super::{file_hunks, select_edited, split};
    use super::*;

    fn text(n: usize, f: &dyn Fn(usize) -> String) -> Vec<u8> {
        (1..=n).map(f).collect::<String>().into_bytes()
    }

    fn old() -> Vec<u8> {
        text(30, &|i| format!("line {i}\n"))
    }

    /// Applies `edit` (the hunk's edit text, changed) to the only hunk of old -> new.
    fn applied(old: &[u8], new: &[u8], edit: &dyn Fn(String) -> String) -> Result<Vec<u8>> {
        let hs = file_hunks(b"f", old, new);
        assert_eq!(hs.len(), 1);
        let t = String::from_utf8(hs[0].edit_text()).unwrap();
        let e = hs[0].read_edit(edit(t).as_bytes())?.expect("an edit");
        let r = resolve(&hs, &[e])?;
        Ok(select_edited(old, new, &hs, &|_| false, &r))
    }

    #[test]
    fn an_unchanged_edit_is_the_hunk_and_edits_change_what_is_taken() {
        let old = old();
        let new = String::from_utf8(old.clone())
            .unwrap()
            .replace("line 10\nline 11\n", "TEN\nELEVEN\nadded\n")
            .into_bytes();
        assert_eq!(applied(&old, &new, &|t| t).unwrap(), new);
        // A '-' line kept as context, a '+' line left out, one line added.
        let got = applied(&old, &new, &|t| {
            t.replace("-line 10\n", " line 10\n")
                .replace("+ELEVEN\n", "")
                .replace("+added\n", "+added\n+mine\n")
        })
        .unwrap();
        let want = String::from_utf8(old.clone())
            .unwrap()
            .replace("line 11\n", "TEN\nadded\nmine\n");
        assert_eq!(String::from_utf8(got).unwrap(), want);
        // Everything made context: nothing changes.
        let none = applied(&old, &new, &|t| {
            t.lines()
                .filter(|l| !l.starts_with('+'))
                .map(|l| format!("{}\n", l.replacen('-', " ", 1)))
                .collect()
        })
        .unwrap();
        assert_eq!(none, old);
        // Comments and a stripped empty context line are fine.
        let hs = file_hunks(b"f", b"a\n\nb\nc\n", b"a\n\nB\nc\n");
        let t = String::from_utf8(hs[0].edit_text())
            .unwrap()
            .replace(" \n", "\n");
        let e = hs[0]
            .read_edit(format!("# note\n{t}# end\n").as_bytes())
            .unwrap();
        assert!(e.is_some());
    }

    #[test]
    fn edits_that_do_not_apply_say_why_and_an_empty_edit_is_none() {
        let old = old();
        let new = String::from_utf8(old.clone())
            .unwrap()
            .replace("line 10\n", "TEN\n")
            .into_bytes();
        let h = &file_hunks(b"f", &old, &new)[0];
        let t = String::from_utf8(h.edit_text()).unwrap();
        assert_eq!(h.read_edit(b"").unwrap(), None);
        assert_eq!(
            h.read_edit(b"# only a comment\n@@ -1 +1 @@\n").unwrap(),
            None
        );
        for (edit, why) in [
            (t.replace(" line 9\n", " line nine\n"), "context and '-'"),
            (t.replace("-line 10\n", ""), "context and '-'"),
            (t.replace("+TEN\n", "*TEN\n"), "starts with '*'"),
            (
                t.replace("+TEN\n", "+TEN\n\\ No newline at end of file\n"),
                "newline",
            ),
        ] {
            let err = h.read_edit(edit.as_bytes()).unwrap_err().to_string();
            assert!(err.contains(why), "{err}");
            assert!(err.contains(&h.id), "{err}");
        }
    }

    #[test]
    fn a_missing_final_newline_survives_the_round_trip_and_bytes_stay_bytes() {
        let old = b"a\nb\nc".to_vec();
        let new = b"a\nb\nC".to_vec();
        assert_eq!(applied(&old, &new, &|t| t).unwrap(), new);
        let got = applied(&old, &new, &|t| t.replace("+C\n", "+C\n+D\n")).unwrap();
        assert_eq!(got, b"a\nb\nC\nD");
        // Not UTF-8: the edit text holds the bytes themselves.
        let old = b"x\n\xff\xfe\ny\n".to_vec();
        let new = b"x\n\xff\xfd\ny\n".to_vec();
        let hs = file_hunks(b"f", &old, &new);
        let e = hs[0].read_edit(&hs[0].edit_text()).unwrap().unwrap();
        let r = resolve(&hs, &[e]).unwrap();
        assert_eq!(select_edited(&old, &new, &hs, &|_| false, &r), new);
    }

    #[test]
    fn a_split_part_is_edited_within_its_own_lines() {
        let old = old();
        let new = String::from_utf8(old.clone())
            .unwrap()
            .replace("line 10\n", "TEN\n")
            .replace("line 12\n", "TWELVE\n")
            .into_bytes();
        let whole = file_hunks(b"f", &old, &new);
        let parts = split(b"f", &whole[0]);
        assert_eq!(parts.len(), 2);
        // The second part, its '+' line changed; the first part taken as it is.
        let t = String::from_utf8(parts[1].edit_text()).unwrap();
        assert!(
            t.contains(" line 10\n"),
            "the first part shows as context: {t}"
        );
        let e = parts[1]
            .read_edit(t.replace("+TWELVE\n", "+twelve\n").as_bytes())
            .unwrap()
            .unwrap();
        let r = resolve(&parts, &[e]).unwrap();
        let got = select_edited(&old, &new, &parts, &|id| id == parts[0].id, &r);
        let want = String::from_utf8(old.clone())
            .unwrap()
            .replace("line 10\n", "TEN\n")
            .replace("line 12\n", "twelve\n");
        assert_eq!(String::from_utf8(got).unwrap(), want);
        // Removing the context line that belongs to the first part: outside this part.
        let err = parts[1]
            .read_edit(t.replace(" line 10\n", "-line 10\n").as_bytes())
            .unwrap_err()
            .to_string();
        assert!(err.contains("outside the hunk"), "{err}");
    }
}
