//! HTML escaping: every string a user controls (paths, file contents, messages, metadata,
//! command lines) goes through here before it reaches the page.

/// Appends `text` to `out` with `& < > " '` escaped, so it is inert in element content and in
/// quoted attribute values alike.
pub fn escape_into(out: &mut String, text: &str) {
    let mut last = 0;
    for (i, b) in text.bytes().enumerate() {
        let rep = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        out.push_str(&text[last..i]);
        out.push_str(rep);
        last = i + 1;
    }
    out.push_str(&text[last..]);
}

/// `text` escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    escape_into(&mut out, text);
    out
}

/// A path (raw bytes) as the page shows it: lossy UTF-8, escaped.
pub fn path(p: &[u8]) -> String {
    escape(&String::from_utf8_lossy(p))
}

/// A time (ns since the Unix epoch) as `<time>`: UTC text the script turns into the reader's
/// local time.
pub fn time(ns: i64) -> String {
    format!("<time data-ns=\"{ns}\">{}</time>", utc(ns))
}

/// `YYYY-MM-DD HH:MM:SS UTC` (humantime's RFC 3339, as the CLI and the API print times, with
/// a space for the `T`); times before the epoch show as the epoch.
pub fn utc(ns: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns.max(0).unsigned_abs());
    let rfc = humantime::format_rfc3339_seconds(t).to_string();
    format!("{} UTC", rfc.trim_end_matches('Z').replacen('T', " ", 1))
}

/// A button the script turns into an API call: `POST url` with the JSON `body`, then a reload
/// showing `done`. `class` colours it (`accept`, `reject`); `key` is the keyboard action that
/// presses it within its hunk or file (`accept`, `reject`, `undo`).
pub struct Action<'a> {
    /// The button's text.
    pub label: &'a str,
    /// CSS class.
    pub class: &'a str,
    /// The keyboard action, if any.
    pub key: Option<&'a str>,
    /// The API route.
    pub url: &'a str,
    /// The JSON body.
    pub body: &'a serde_json::Value,
    /// The message shown after the reload.
    pub done: &'a str,
    /// A hover text.
    pub title: &'a str,
}

impl Action<'_> {
    /// The `<button>`.
    pub fn render(&self) -> String {
        let mut out = String::from("<button type=\"button\" class=\"");
        escape_into(&mut out, self.class);
        out.push_str("\" data-post=\"");
        escape_into(&mut out, self.url);
        out.push_str("\" data-body=\"");
        escape_into(&mut out, &self.body.to_string());
        out.push_str("\" data-done=\"");
        escape_into(&mut out, self.done);
        out.push_str("\" title=\"");
        escape_into(&mut out, self.title);
        if let Some(k) = self.key {
            out.push_str("\" data-key=\"");
            escape_into(&mut out, k);
        }
        out.push_str("\">");
        escape_into(&mut out, self.label);
        out.push_str("</button>");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape("<script>alert('x' & \"y\")</script>"),
            "&lt;script&gt;alert(&#39;x&#39; &amp; &quot;y&quot;)&lt;/script&gt;"
        );
        assert_eq!(escape("plain é"), "plain é");
    }

    #[test]
    fn utc_times() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_795_952_696_000_000_000), "2026-11-29 11:44:56 UTC");
        assert_eq!(utc(951_782_400_000_000_000), "2000-02-29 00:00:00 UTC");
    }
}
