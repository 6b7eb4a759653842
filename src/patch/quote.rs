//! Git's C-style path quoting (`"a/caf\303\251 x"`), undone to raw bytes.

/// Unquotes a git-quoted string starting at `s[0] == b'"'`. Returns the
/// unquoted bytes and the number of input bytes consumed (including both
/// quotes), or `None` if the quoting is malformed.
pub(crate) fn unquote(s: &[u8]) -> Option<(Vec<u8>, usize)> {
    if s.first() != Some(&b'"') {
        return None;
    }
    let mut out = Vec::new();
    let mut i = 1;
    while i < s.len() {
        match s[i] {
            b'"' => return Some((out, i + 1)),
            b'\\' => {
                let c = *s.get(i + 1)?;
                i += 2;
                let byte = match c {
                    b'a' => 0x07,
                    b'b' => 0x08,
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'v' => 0x0b,
                    b'f' => 0x0c,
                    b'r' => b'\r',
                    b'"' => b'"',
                    b'\\' => b'\\',
                    b'0'..=b'3' => {
                        let d1 = *s.get(i)?;
                        let d2 = *s.get(i + 1)?;
                        if !(b'0'..=b'7').contains(&d1) || !(b'0'..=b'7').contains(&d2) {
                            return None;
                        }
                        i += 2;
                        ((c - b'0') << 6) | ((d1 - b'0') << 3) | (d2 - b'0')
                    }
                    _ => return None,
                };
                out.push(byte);
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::unquote;

    #[test]
    fn escapes() {
        let (p, n) = unquote(br#""a/caf\303\251 x\t\"q\"\\\n" rest"#).unwrap_or_default();
        assert_eq!(p, b"a/caf\xc3\xa9 x\t\"q\"\\\n");
        assert_eq!(n, 28);
    }

    #[test]
    fn malformed() {
        assert_eq!(unquote(b"\"abc"), None);
        assert_eq!(unquote(b"\"a\\q\""), None);
        assert_eq!(unquote(b"\"a\\9\""), None);
        assert_eq!(unquote(b"\"a\\3"), None);
        assert_eq!(unquote(b"abc"), None);
    }
}
