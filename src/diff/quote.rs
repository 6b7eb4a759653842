//! git's C-style path quoting with `core.quotePath=true` (git's default).
//!
//! git quotes a path when it contains `"`, `\`, a control character, DEL or
//! any byte >= 0x80; spaces alone never cause quoting. A quoted path is
//! wrapped in double quotes and any `a/` / `b/` prefix goes *inside* them.

/// How git writes one byte inside a quoted path, or `None` if the byte is
/// written as is (and on its own never causes quoting).
fn escape(b: u8) -> Option<Escape> {
    Some(match b {
        0x07 => Escape::Char(b'a'),
        0x08 => Escape::Char(b'b'),
        b'\t' => Escape::Char(b't'),
        b'\n' => Escape::Char(b'n'),
        0x0b => Escape::Char(b'v'),
        0x0c => Escape::Char(b'f'),
        b'\r' => Escape::Char(b'r'),
        b'"' => Escape::Char(b'"'),
        b'\\' => Escape::Char(b'\\'),
        0x00..=0x1f | 0x7f..=0xff => Escape::Octal,
        _ => return None,
    })
}

enum Escape {
    Char(u8),
    Octal,
}

/// Whether git would quote `path`.
pub fn needs_quoting(path: &[u8]) -> bool {
    path.iter().any(|&b| escape(b).is_some())
}

/// Appends `prefix` + `path` to `out`, quoted as a whole if either part needs
/// it (git's `quote_two`), e.g. `"a/t\tb"`.
pub fn push_quoted(out: &mut Vec<u8>, prefix: &[u8], path: &[u8]) {
    if !needs_quoting(prefix) && !needs_quoting(path) {
        out.extend_from_slice(prefix);
        out.extend_from_slice(path);
        return;
    }
    out.push(b'"');
    for &b in prefix.iter().chain(path) {
        match escape(b) {
            None => out.push(b),
            Some(Escape::Char(c)) => out.extend_from_slice(&[b'\\', c]),
            Some(Escape::Octal) => out.extend_from_slice(&[
                b'\\',
                b'0' + (b >> 6),
                b'0' + ((b >> 3) & 7),
                b'0' + (b & 7),
            ]),
        }
    }
    out.push(b'"');
}

/// `prefix` + `path`, quoted if needed; see [`push_quoted`].
pub fn quote_path(prefix: &[u8], path: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(prefix.len() + path.len() + 2);
    push_quoted(&mut out, prefix, path);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_spaces_are_not_quoted() {
        assert_eq!(quote_path(b"a/", b"x y"), b"a/x y");
        assert!(!needs_quoting(b"dir/file.txt"));
    }

    #[test]
    fn escapes() {
        assert_eq!(quote_path(b"a/", b"t\tb"), b"\"a/t\\tb\"");
        assert_eq!(quote_path(b"", b"q\"\\"), b"\"q\\\"\\\\\"");
        assert_eq!(quote_path(b"", "é".as_bytes()), b"\"\\303\\251\"");
        assert_eq!(quote_path(b"", b"\x01\x7f"), b"\"\\001\\177\"");
        assert_eq!(
            quote_path(b"", b"\x07\x08\n\x0b\x0c\r"),
            b"\"\\a\\b\\n\\v\\f\\r\""
        );
    }
}
