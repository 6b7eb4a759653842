//! Syntax-aware colouring of diff lines: keywords, strings, comments and numbers for the
//! languages rewind's users write, chosen by file extension.
//!
//! Hand-written rather than a highlighting crate: the page needs four token classes, not
//! grammars, and the well-kept crates (syntect, tree-sitter) bring megabytes of grammars and a
//! regex engine for it. A diff shows lines out of context, so the tokenizer is line-based and
//! carries only the state a line can leave open (a block comment, a multi-line string) from one
//! line of a hunk to the next; a hunk starting inside such a construct is coloured as code,
//! which is what `git diff` with a colouring pager shows too.

use super::html::escape_into;

/// How one language spells comments, strings and keywords.
pub struct Lang {
    /// Starts of comments that run to the end of the line.
    line_comment: &'static [&'static str],
    /// A comment's start and end that may span lines.
    block_comment: Option<(&'static str, &'static str)>,
    /// Quote characters of strings that end on their line (unless escaped).
    quotes: &'static [u8],
    /// Delimiters of strings that may span lines (`"""`, a backtick).
    long_strings: &'static [&'static str],
    /// Words coloured as keywords, sorted for binary search.
    keywords: &'static [&'static str],
}

/// What a line leaves open for the next one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum State {
    /// Plain code.
    #[default]
    Code,
    /// Inside a block comment.
    Comment,
    /// Inside a multi-line string closed by the language's `long_strings[i]`.
    LongString(usize),
}

const RUST: Lang = Lang {
    line_comment: &["//"],
    block_comment: Some(("/*", "*/")),
    quotes: b"\"",
    long_strings: &[],
    keywords: &[
        "Self", "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else",
        "enum", "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod",
        "move", "mut", "pub", "ref", "return", "self", "static", "struct", "super", "trait",
        "true", "type", "unsafe", "use", "where", "while",
    ],
};

const PYTHON: Lang = Lang {
    line_comment: &["#"],
    block_comment: None,
    quotes: b"\"'",
    long_strings: &["\"\"\"", "'''"],
    keywords: &[
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
        "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
        "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return",
        "self", "try", "while", "with", "yield",
    ],
};

const JS: Lang = Lang {
    line_comment: &["//"],
    block_comment: Some(("/*", "*/")),
    quotes: b"\"'",
    long_strings: &["`"],
    keywords: &[
        "as",
        "async",
        "await",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "default",
        "delete",
        "do",
        "else",
        "enum",
        "export",
        "extends",
        "false",
        "finally",
        "for",
        "from",
        "function",
        "if",
        "implements",
        "import",
        "in",
        "instanceof",
        "interface",
        "let",
        "new",
        "null",
        "of",
        "private",
        "protected",
        "public",
        "readonly",
        "return",
        "static",
        "super",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "type",
        "typeof",
        "undefined",
        "var",
        "void",
        "while",
        "yield",
    ],
};

const ELIXIR: Lang = Lang {
    line_comment: &["#"],
    block_comment: None,
    quotes: b"\"'",
    long_strings: &["\"\"\""],
    keywords: &[
        "after",
        "alias",
        "and",
        "case",
        "catch",
        "cond",
        "def",
        "defimpl",
        "defmacro",
        "defmodule",
        "defp",
        "defprotocol",
        "defstruct",
        "do",
        "else",
        "end",
        "false",
        "fn",
        "for",
        "if",
        "import",
        "in",
        "nil",
        "not",
        "or",
        "quote",
        "raise",
        "receive",
        "require",
        "rescue",
        "true",
        "try",
        "unless",
        "unquote",
        "use",
        "when",
        "with",
    ],
};

const GO: Lang = Lang {
    line_comment: &["//"],
    block_comment: Some(("/*", "*/")),
    quotes: b"\"'",
    long_strings: &["`"],
    keywords: &[
        "break",
        "case",
        "chan",
        "const",
        "continue",
        "default",
        "defer",
        "else",
        "fallthrough",
        "false",
        "for",
        "func",
        "go",
        "goto",
        "if",
        "import",
        "interface",
        "map",
        "nil",
        "package",
        "range",
        "return",
        "select",
        "struct",
        "switch",
        "true",
        "type",
        "var",
    ],
};

const C: Lang = Lang {
    line_comment: &["//"],
    block_comment: Some(("/*", "*/")),
    quotes: b"\"'",
    long_strings: &[],
    keywords: &[
        "auto",
        "bool",
        "break",
        "case",
        "char",
        "class",
        "const",
        "continue",
        "default",
        "delete",
        "do",
        "double",
        "else",
        "enum",
        "extern",
        "false",
        "final",
        "float",
        "for",
        "goto",
        "if",
        "import",
        "inline",
        "int",
        "long",
        "namespace",
        "new",
        "null",
        "nullptr",
        "package",
        "private",
        "protected",
        "public",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "struct",
        "switch",
        "template",
        "this",
        "throw",
        "throws",
        "true",
        "try",
        "typedef",
        "union",
        "unsigned",
        "using",
        "virtual",
        "void",
        "volatile",
        "while",
    ],
};

const SHELL: Lang = Lang {
    line_comment: &["#"],
    block_comment: None,
    quotes: b"\"'",
    long_strings: &[],
    keywords: &[
        "case", "do", "done", "elif", "else", "esac", "exit", "export", "fi", "for", "function",
        "if", "in", "local", "readonly", "return", "set", "then", "until", "while",
    ],
};

const RUBY: Lang = Lang {
    line_comment: &["#"],
    block_comment: None,
    quotes: b"\"'",
    long_strings: &[],
    keywords: &[
        "begin", "class", "def", "do", "else", "elsif", "end", "ensure", "false", "if", "module",
        "nil", "require", "rescue", "return", "self", "then", "true", "unless", "until", "when",
        "while", "yield",
    ],
};

/// TOML, YAML, INI and the like: comments, strings and numbers, `true`/`false`.
const CONFIG: Lang = Lang {
    line_comment: &["#"],
    block_comment: None,
    quotes: b"\"'",
    long_strings: &[],
    keywords: &["false", "null", "true"],
};

const JSON: Lang = Lang {
    line_comment: &[],
    block_comment: None,
    quotes: b"\"",
    long_strings: &[],
    keywords: &["false", "null", "true"],
};

const CSS: Lang = Lang {
    line_comment: &[],
    block_comment: Some(("/*", "*/")),
    quotes: b"\"'",
    long_strings: &[],
    keywords: &["!important", "@import", "@media"],
};

const SQL: Lang = Lang {
    line_comment: &["--"],
    block_comment: Some(("/*", "*/")),
    quotes: b"'",
    long_strings: &[],
    keywords: &[
        "AND", "AS", "BY", "CREATE", "DELETE", "FROM", "GROUP", "INSERT", "INTO", "JOIN", "NOT",
        "NULL", "ON", "OR", "ORDER", "SELECT", "SET", "TABLE", "UPDATE", "VALUES", "WHERE", "and",
        "as", "by", "create", "delete", "from", "group", "insert", "into", "join", "not", "null",
        "on", "or", "order", "select", "set", "table", "update", "values", "where",
    ],
};

const HTML: Lang = Lang {
    line_comment: &[],
    block_comment: Some(("<!--", "-->")),
    quotes: b"\"'",
    long_strings: &[],
    keywords: &[],
};

/// The language of `path` by its extension (or name), if the page colours it.
pub fn lang_for(path: &[u8]) -> Option<&'static Lang> {
    let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    let name = std::str::from_utf8(name).ok()?;
    match name {
        "Makefile" | "Dockerfile" | "Gemfile" | "Rakefile" => {
            return Some(if name == "Gemfile" || name == "Rakefile" {
                &RUBY
            } else {
                &SHELL
            });
        }
        _ => {}
    }
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "rs" => &RUST,
        "py" | "pyi" => &PYTHON,
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => &JS,
        "ex" | "exs" | "heex" => &ELIXIR,
        "go" => &GO,
        "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" | "hh" | "java" | "kt" | "cs" | "swift"
        | "scala" => &C,
        "sh" | "bash" | "zsh" => &SHELL,
        "rb" => &RUBY,
        "toml" | "yaml" | "yml" | "ini" | "cfg" | "conf" => &CONFIG,
        "json" => &JSON,
        "css" | "scss" => &CSS,
        "sql" => &SQL,
        "html" | "htm" | "xml" | "svg" => &HTML,
        _ => return None,
    })
}

/// Appends `line` to `out` as HTML: escaped, with `<span class="hl-k|hl-s|hl-c|hl-n">` around
/// keywords, strings, comments and numbers. `state` is what the previous line left open and
/// becomes what this one leaves open.
pub fn line_html(lang: &Lang, line: &str, state: &mut State, out: &mut String) {
    let b = line.as_bytes();
    let mut i = 0;
    // The end of what is already written (plain text between tokens is flushed lazily).
    let mut plain = 0;
    let flush = |out: &mut String, from: usize, to: usize| escape_into(out, &line[from..to]);
    let span = |out: &mut String, class: &str, text: &str| {
        out.push_str("<span class=\"hl-");
        out.push_str(class);
        out.push_str("\">");
        escape_into(out, text);
        out.push_str("</span>");
    };
    // A construct left open by the previous line.
    match *state {
        State::Comment => {
            let close = lang.block_comment.map_or("", |(_, c)| c);
            let found = find(line, 0, close);
            let end = found.map_or(b.len(), |e| e + close.len());
            span(out, "c", &line[..end]);
            i = end;
            plain = end;
            if found.is_some() {
                *state = State::Code;
            }
        }
        State::LongString(k) => {
            let close = lang.long_strings.get(k).copied().unwrap_or("");
            let found = find(line, 0, close);
            let end = found.map_or(b.len(), |e| e + close.len());
            span(out, "s", &line[..end]);
            i = end;
            plain = end;
            if found.is_some() {
                *state = State::Code;
            }
        }
        State::Code => {}
    }
    while i < b.len() {
        let rest = &line[i..];
        if let Some(_c) = lang.line_comment.iter().find(|c| rest.starts_with(**c)) {
            flush(out, plain, i);
            span(out, "c", rest);
            plain = b.len();
            break;
        }
        if let Some((open, close)) = lang.block_comment
            && rest.starts_with(open)
        {
            flush(out, plain, i);
            let end = find(line, i + open.len(), close).map(|e| e + close.len());
            let end_at = end.unwrap_or(b.len());
            span(out, "c", &line[i..end_at]);
            if end.is_none() {
                *state = State::Comment;
            }
            i = end_at;
            plain = i;
            continue;
        }
        if let Some(k) = lang.long_strings.iter().position(|d| rest.starts_with(*d)) {
            flush(out, plain, i);
            let d = lang.long_strings[k];
            let end = find(line, i + d.len(), d).map(|e| e + d.len());
            let end_at = end.unwrap_or(b.len());
            span(out, "s", &line[i..end_at]);
            if end.is_none() {
                *state = State::LongString(k);
            }
            i = end_at;
            plain = i;
            continue;
        }
        let c = b[i];
        if lang.quotes.contains(&c) && !(c == b'\'' && is_lifetime(lang, b, i)) {
            flush(out, plain, i);
            let mut j = i + 1;
            while j < b.len() && b[j] != c {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            span(out, "s", &line[i..end]);
            i = end;
            plain = i;
            continue;
        }
        if c.is_ascii_digit() && (i == 0 || !is_word(b[i - 1])) {
            let mut j = i;
            while j < b.len() && (is_word(b[j]) || b[j] == b'.') {
                j += 1;
            }
            flush(out, plain, i);
            span(out, "n", &line[i..j]);
            i = j;
            plain = i;
            continue;
        }
        if is_word(c) || c == b'@' || c == b'!' {
            let mut j = i + 1;
            while j < b.len() && is_word(b[j]) {
                j += 1;
            }
            let word = &line[i..j];
            if (i == 0 || !is_word(b[i - 1])) && lang.keywords.contains(&word) {
                flush(out, plain, i);
                span(out, "k", word);
                plain = j;
            }
            i = j;
            continue;
        }
        // Step over one whole character (the line is UTF-8).
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    flush(out, plain, b.len());
}

/// Rust's `'a` (a lifetime or label) is not a character literal: a quote whose next
/// character is a word character not followed by a closing quote.
fn is_lifetime(lang: &Lang, b: &[u8], i: usize) -> bool {
    std::ptr::eq(lang, &RUST)
        && b.get(i + 1).is_some_and(|&c| is_word(c))
        && b.get(i + 2) != Some(&b'\'')
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

fn find(line: &str, from: usize, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    line.get(from..)?.find(needle).map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hl(path: &str, lines: &[&str]) -> Vec<String> {
        let lang = lang_for(path.as_bytes()).expect("a language");
        let mut state = State::Code;
        lines
            .iter()
            .map(|l| {
                let mut out = String::new();
                line_html(lang, l, &mut state, &mut out);
                out
            })
            .collect()
    }

    #[test]
    fn rust_keywords_strings_comments_numbers() {
        let got = hl(
            "src/a.rs",
            &["let x = \"a<b\"; // </script>", "fn f<'a>() -> u8 { 42 }"],
        );
        assert_eq!(
            got[0],
            "<span class=\"hl-k\">let</span> x = <span class=\"hl-s\">&quot;a&lt;b&quot;</span>; \
             <span class=\"hl-c\">// &lt;/script&gt;</span>"
        );
        assert_eq!(
            got[1],
            "<span class=\"hl-k\">fn</span> f&lt;&#39;a&gt;() -&gt; u8 { <span class=\"hl-n\">42</span> }"
        );
    }

    #[test]
    fn block_comments_and_long_strings_span_lines() {
        let got = hl("x.ts", &["a /* one", "two */ let b = `x", "y` + 1"]);
        assert_eq!(got[0], "a <span class=\"hl-c\">/* one</span>");
        assert_eq!(
            got[1],
            "<span class=\"hl-c\">two */</span> <span class=\"hl-k\">let</span> b = <span class=\"hl-s\">`x</span>"
        );
        assert_eq!(
            got[2],
            "<span class=\"hl-s\">y`</span> + <span class=\"hl-n\">1</span>"
        );
        let py = hl("m.py", &["s = \"\"\"doc", "<b>\"\"\" # c"]);
        assert_eq!(
            py[1],
            "<span class=\"hl-s\">&lt;b&gt;&quot;&quot;&quot;</span> <span class=\"hl-c\"># c</span>"
        );
    }

    #[test]
    fn words_inside_identifiers_are_not_keywords() {
        let got = hl("a.ex", &["defmodule Foo do ifx = 1 end"]);
        assert_eq!(
            got[0],
            "<span class=\"hl-k\">defmodule</span> Foo <span class=\"hl-k\">do</span> ifx = \
             <span class=\"hl-n\">1</span> <span class=\"hl-k\">end</span>"
        );
        assert!(lang_for(b"README").is_none());
        assert!(lang_for(b"notes.txt").is_none());
    }

    #[test]
    fn unterminated_and_multibyte_input_is_kept_whole() {
        for line in ["\"open", "é'", "/*", "x = 'é", "\\", "'\\"] {
            let got = hl("a.rs", &[line]).remove(0);
            let mut plain = String::new();
            escape_into(&mut plain, line);
            let stripped = got
                .replace("<span class=\"hl-s\">", "")
                .replace("<span class=\"hl-c\">", "")
                .replace("<span class=\"hl-n\">", "")
                .replace("<span class=\"hl-k\">", "")
                .replace("</span>", "");
            assert_eq!(stripped, plain, "{line}");
        }
    }
}
