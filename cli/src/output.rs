//! Shared printing helpers: colour decisions, sizes, times, JSON.

use std::io::{self, IsTerminal, Write};

use anstyle::{AnsiColor, Style};
use rewind::wire::{ErrorBody, ErrorCode};
use serde::Serialize;

use super::args::ColorChoice;

/// Whether stdout gets colours: `--color`, then NO_COLOR, then whether it is a terminal.
pub fn stdout_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => auto_color(Stream::Stdout),
    }
}

/// The stream colours would go to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Stream {
    /// Command output.
    Stdout,
    /// Messages: errors, warnings, `run`'s summary.
    Stderr,
}

/// Whether `stream` gets colours when `--color` does not decide: NO_COLOR unset or empty, and
/// the stream a terminal. On stdout `TERM=dumb` turns them off too; stderr's messages have
/// never looked at TERM, and still do not.
pub fn auto_color(stream: Stream) -> bool {
    if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return false;
    }
    match stream {
        Stream::Stdout => {
            std::env::var_os("TERM").is_none_or(|t| t != "dumb") && io::stdout().is_terminal()
        }
        Stream::Stderr => io::stderr().is_terminal(),
    }
}

/// Wraps `text` in `style` when colours are on.
pub fn paint(on: bool, style: Style, text: &str) -> String {
    if on {
        format!("{style}{text}{style:#}")
    } else {
        text.to_string()
    }
}

/// Yellow, for ids.
pub fn id_style() -> Style {
    Style::new().fg_color(Some(AnsiColor::Yellow.into()))
}

/// Bold.
pub fn bold() -> Style {
    Style::new().bold()
}

/// Prints a failure of the CLI's own (not a library error: writing its output, starting a
/// command) for people on stderr, and for tools as the error object on stdout.
pub fn error_line(msg: &str, json: bool) {
    let color = auto_color(Stream::Stderr);
    let label = paint(
        color,
        Style::new().bold().fg_color(Some(AnsiColor::Red.into())),
        "error:",
    );
    eprintln!("rewind: {label} {msg}");
    if json {
        let _ = print_json(&ErrorBody::new(ErrorCode::Unavailable, msg));
    }
}

/// The error object of a library error in this CLI's words: its sentence (reworded where the
/// library speaks of a setting the CLI takes as a flag) and its hints.
pub fn error_body(e: &rewind::Error) -> ErrorBody {
    let r = crate::hints::report(e);
    ErrorBody {
        error: r.message,
        causes: r.causes,
        hints: r.hints,
        ..ErrorBody::from(e)
    }
}

/// A library error on stderr: the message, each cause on a `caused by:` line and each hint on a
/// `hint:` line; with `json` also its [`ErrorBody`] on stdout.
pub fn error_report(e: &rewind::Error, json: bool) {
    let r = error_body(e);
    let color = auto_color(Stream::Stderr);
    let label = paint(
        color,
        Style::new().bold().fg_color(Some(AnsiColor::Red.into())),
        "error:",
    );
    let hint = paint(
        color,
        Style::new().fg_color(Some(AnsiColor::Cyan.into())),
        "hint:",
    );
    let mut text = format!("rewind: {label} {}\n", r.error);
    for cause in &r.causes {
        text.push_str(&format!("rewind: caused by: {cause}\n"));
    }
    for h in &r.hints {
        text.push_str(&format!("rewind: {hint} {h}\n"));
    }
    eprint!("{text}");
    if json {
        let _ = print_json(&r);
    }
}

/// A warning on stderr.
pub fn warn(msg: &str) {
    let color = auto_color(Stream::Stderr);
    eprintln!(
        "rewind: {} {msg}",
        paint(
            color,
            Style::new().fg_color(Some(AnsiColor::Yellow.into())),
            "warning:"
        )
    );
}

/// Pretty JSON on stdout, newline-terminated.
pub fn print_json<T: Serialize + ?Sized>(value: &T) -> io::Result<()> {
    let mut out = io::stdout().lock();
    // Keep the I/O error's kind: a closed pipe (`rewind ... --json | head`) is not an error.
    serde_json::to_writer_pretty(&mut out, value).map_err(|e| match e.io_error_kind() {
        Some(kind) => io::Error::new(kind, e),
        None => io::Error::other(e),
    })?;
    writeln!(out)
}

pub use rewind::stats::human_bytes;

/// Nanoseconds since the epoch as RFC 3339 (UTC, seconds).
pub fn format_time(ns: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// A path for JSON's `path` keys (lossy for non-UTF-8 bytes).
pub fn path_str(p: &[u8]) -> String {
    String::from_utf8_lossy(p).into_owned()
}

/// A path for people: as is when it is printable UTF-8, else quoted as git quotes it
/// (`"src/caf\351"`), so the exact bytes can be read back (git's unquoting undoes it).
pub fn path_text(p: &[u8]) -> String {
    let printable = std::str::from_utf8(p)
        .is_ok_and(|s| !s.chars().any(|c| c.is_control() || c == '"' || c == '\\'));
    if printable {
        return path_str(p);
    }
    // Quoted output is ASCII, so this conversion is exact.
    path_str(&rewind::diff::quote::quote_path(b"", p))
}

/// An OS string argument as the bytes it is made of.
pub fn arg_bytes(s: &std::ffi::OsStr) -> &[u8] {
    std::os::unix::ffi::OsStrExt::as_bytes(s)
}

/// Parses sizes like `100`, `64K`, `100M`, `2G`, `1.5GiB`.
pub fn parse_size(s: &str) -> Result<u64, rewind::Error> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => {
            return Err(rewind::Error::Invalid(format!(
                "invalid size '{s}': use a number with an optional K, M, G or T suffix"
            )));
        }
    };
    let v: f64 = num
        .parse()
        .map_err(|_| rewind::Error::Invalid(format!("invalid size '{s}'")))?;
    Ok((v * mult as f64) as u64)
}

/// Parses `KEY=VALUE`.
pub fn parse_meta(items: &[String]) -> Result<Vec<(String, String)>, rewind::Error> {
    items
        .iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(rewind::Error::Invalid(format!(
                "invalid --meta '{kv}': expected KEY=VALUE"
            ))),
        })
        .collect()
}

/// Seconds from the command line as a duration; negative means zero and values too large to
/// represent (or infinite) mean "practically forever" instead of a panic.
pub fn seconds(s: f64) -> std::time::Duration {
    std::time::Duration::try_from_secs_f64(s.max(0.0))
        .unwrap_or(std::time::Duration::from_secs(u64::MAX / 4))
}

/// A skipped path for people: `path (reason: detail)`.
pub fn skipped_text(s: &rewind::store::snapshot::Skipped) -> String {
    format!("{} ({}: {})", path_text(&s.path), s.reason.name(), s.detail)
}

/// `n` and a noun, plural unless `n` is 1: "1 file", "3 files".
pub fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// A snapshot's message as it ends a line, after `gap`: nothing when it has none (no trailing
/// space).
pub fn message_suffix(gap: &str, message: &str) -> String {
    match message {
        "" => String::new(),
        m => format!("{gap}{m}"),
    }
}

/// Paths for people, git-quoted where needed, joined with ", ".
pub fn paths_text<'a>(paths: impl IntoIterator<Item = &'a [u8]>) -> String {
    paths
        .into_iter()
        .map(path_text)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `REWIND_OVERLAY_PROBE=fail` treats the namespace backend as unavailable (tests of the
/// fallback; machines where the probe itself misbehaves): the reason given to the library.
pub fn namespace_refused() -> Option<String> {
    (std::env::var("REWIND_OVERLAY_PROBE").as_deref() == Ok("fail"))
        .then(|| "REWIND_OVERLAY_PROBE=fail".to_string())
}
