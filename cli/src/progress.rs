//! Progress on stderr: a bar counting files (or objects) and bytes once a job has run for about
//! a second, drawn only on a terminal; or, with `--events`, one JSON object per line for tools.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use rewind::progress::Progress;
#[cfg(feature = "remote")]
use rewind::remote::TransferProgress;

use super::Ctx;

/// A job that ends sooner than this shows no bar: it would only flicker.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Events are written at most this often (plus a phase's start and end).
const EVENT_EVERY: Duration = Duration::from_millis(250);

/// Makes the draw target a phase draws to.
type Target = Box<dyn Fn() -> ProgressDrawTarget + Send + Sync>;

/// Where progress goes.
enum Sink {
    /// Nowhere (quiet, --json, or stderr is not a terminal: indicatif checks the last).
    Hidden,
    /// A bar on what the target makes, once the phase has run `after`.
    Bar { target: Target, after: Duration },
    /// JSON lines on stderr.
    Events,
}

/// One phase's counts, shared with the bar's style (its `items` key reads them).
#[derive(Default)]
struct Counts {
    items: AtomicU64,
    total_items: AtomicU64,
    bytes: AtomicU64,
    total_bytes: AtomicU64,
}

/// The phase in progress.
struct Phase {
    name: String,
    started: Instant,
    last_event: Instant,
    bar: ProgressBar,
    shown: bool,
}

/// Reports a job's progress as its [`Sink`] says; one per command, a phase at a time.
pub struct Bar {
    sink: Sink,
    counts: Arc<Counts>,
    phase: Mutex<Option<Phase>>,
    /// Whether the current phase's bar is drawn, read without the lock on every advance.
    due: AtomicBool,
}

impl Bar {
    /// Progress for a command run with `ctx`'s global options: JSON events with `--events`,
    /// else nothing when quiet or under `--json`, else a bar on stderr when it is a terminal.
    pub fn new(ctx: &Ctx) -> Bar {
        let sink = if ctx.events {
            Sink::Events
        } else if ctx.quiet || ctx.json {
            Sink::Hidden
        } else {
            Sink::Bar {
                target: Box::new(ProgressDrawTarget::stderr),
                after: show_after(),
            }
        };
        Bar::with(sink)
    }

    fn with(sink: Sink) -> Bar {
        Bar {
            sink,
            counts: Arc::default(),
            phase: Mutex::new(None),
            due: AtomicBool::new(false),
        }
    }

    fn phase(&self) -> std::sync::MutexGuard<'_, Option<Phase>> {
        self.phase.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn begin(&self, name: &str, bytes: u64, items: u64) {
        let c = &self.counts;
        c.items.store(0, Relaxed);
        c.bytes.store(0, Relaxed);
        c.total_items.store(items, Relaxed);
        c.total_bytes.store(bytes, Relaxed);
        let bar = ProgressBar::with_draw_target(
            Some(if bytes > 0 { bytes } else { items }),
            ProgressDrawTarget::hidden(),
        );
        bar.set_style(self.style(name, bytes > 0));
        bar.set_message(name.to_string());
        let now = Instant::now();
        let old = self.phase().replace(Phase {
            name: name.to_string(),
            started: now,
            last_event: now,
            bar,
            shown: false,
        });
        if let Some(old) = old {
            old.bar.finish_and_clear();
        }
        self.due.store(false, Relaxed);
        self.event(name, false);
    }

    /// The bar's look: bytes with the item count beside them, or items alone when the phase
    /// counts no bytes.
    fn style(&self, phase: &str, bytes: bool) -> ProgressStyle {
        let unit = unit(phase);
        let template = if bytes {
            "{msg:>10} [{bar:30.cyan/blue}] {items} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}"
        } else {
            "{msg:>10} [{bar:30.cyan/blue}] {items} eta {eta}"
        };
        let counts = self.counts.clone();
        let items = move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
            let total = counts.total_items.load(Relaxed);
            let done = counts.items.load(Relaxed);
            let _ = if total > 0 {
                write!(w, "{done}/{total} {unit}")
            } else {
                write!(w, "{done} {unit}")
            };
        };
        match ProgressStyle::with_template(template) {
            Ok(s) => s
                .with_key("eta", eta)
                .with_key("items", items)
                .progress_chars("=> "),
            Err(_) => ProgressStyle::default_bar(),
        }
    }

    fn step(&self, bytes: u64, items: u64) {
        self.counts.bytes.fetch_add(bytes, Relaxed);
        self.counts.items.fetch_add(items, Relaxed);
        match &self.sink {
            Sink::Hidden => {}
            Sink::Bar { target, after } => {
                let by = if self.counts.total_bytes.load(Relaxed) > 0 {
                    bytes
                } else {
                    items
                };
                if self.due.load(Relaxed) {
                    if let Some(p) = &*self.phase() {
                        p.bar.inc(by);
                    }
                    return;
                }
                let mut guard = self.phase();
                let Some(p) = guard.as_mut() else { return };
                p.bar.inc(by);
                if !p.shown && p.started.elapsed() >= *after {
                    p.shown = true;
                    p.bar.set_draw_target(target());
                    self.due.store(true, Relaxed);
                }
            }
            Sink::Events => {
                let name = {
                    let mut guard = self.phase();
                    let Some(p) = guard.as_mut() else { return };
                    if p.last_event.elapsed() < EVENT_EVERY {
                        return;
                    }
                    p.last_event = Instant::now();
                    p.name.clone()
                };
                self.event(&name, false);
            }
        }
    }

    fn end(&self) {
        let Some(p) = self.phase().take() else { return };
        p.bar.finish_and_clear();
        self.due.store(false, Relaxed);
        self.event(&p.name, true);
    }

    /// With `--events`: one line of JSON on stderr, flushed at once.
    fn event(&self, phase: &str, done: bool) {
        if !matches!(self.sink, Sink::Events) {
            return;
        }
        let c = &self.counts;
        let line = rewind::wire::ProgressEvent {
            event: "progress".into(),
            phase: phase.to_string(),
            unit: unit(phase).to_string(),
            items: c.items.load(Relaxed),
            total_items: c.total_items.load(Relaxed),
            bytes: c.bytes.load(Relaxed),
            total_bytes: c.total_bytes.load(Relaxed),
            done,
        };
        let mut err = std::io::stderr().lock();
        let _ = serde_json::to_writer(&mut err, &line);
        let _ = writeln!(err);
        let _ = err.flush();
    }
}

/// How long a phase runs before its bar appears: [`SHOW_AFTER`], or `REWIND_TEST_PROGRESS_AFTER_MS`
/// (for tests, which cannot afford jobs of a second).
fn show_after() -> Duration {
    std::env::var("REWIND_TEST_PROGRESS_AFTER_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis)
        .unwrap_or(SHOW_AFTER)
}

/// What a phase's items are.
fn unit(phase: &str) -> &'static str {
    match phase {
        "snapshot" | "restore" | "copy" => "files",
        _ => "objects",
    }
}

/// The ETA, once it means something: the first instants (a cold cache, a first big file) give
/// estimates off by hours.
fn eta(state: &ProgressState, w: &mut dyn std::fmt::Write) {
    if state.elapsed() < Duration::from_secs(3) || state.fraction() < 0.02 {
        let _ = w.write_str("-");
    } else {
        let _ = write!(w, "{:#}", indicatif::HumanDuration(state.eta()));
    }
}

impl Progress for Bar {
    fn start(&self, phase: &str, bytes: u64, items: u64) {
        self.begin(phase, bytes, items);
    }
    fn advance(&self, bytes: u64, items: u64) {
        self.step(bytes, items);
    }
    fn finish(&self) {
        self.end();
    }
}

#[cfg(feature = "remote")]
impl TransferProgress for Bar {
    fn start(&self, phase: &str, bytes: u64, objects: u64) {
        self.begin(phase, bytes, objects);
    }
    fn advance(&self, bytes: u64, objects: u64) {
        self.step(bytes, objects);
    }
    fn finish(&self) {
        self.end();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use indicatif::{ProgressDrawTarget, TermLike};

    use super::{Bar, Sink};
    use rewind::progress::Progress;

    /// A terminal that records what is written to it.
    #[derive(Debug, Clone, Default)]
    struct Screen(Arc<Mutex<Vec<String>>>);

    impl TermLike for Screen {
        fn width(&self) -> u16 {
            160
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(s)
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            if !s.trim().is_empty() {
                self.0.lock().unwrap().push(s.to_string());
            }
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn on(screen: &Screen, after: Duration) -> Bar {
        let s = screen.clone();
        Bar::with(Sink::Bar {
            target: Box::new(move || ProgressDrawTarget::term_like(Box::new(s.clone()))),
            after,
        })
    }

    #[test]
    fn a_quick_phase_draws_nothing() {
        let screen = Screen::default();
        let bar = on(&screen, Duration::from_secs(60));
        bar.start("snapshot", 1 << 30, 10);
        bar.advance(1 << 30, 10);
        bar.finish();
        assert!(screen.0.lock().unwrap().is_empty());
    }

    #[test]
    fn a_long_phase_shows_files_and_bytes_with_no_eta_yet() {
        let screen = Screen::default();
        let bar = on(&screen, Duration::ZERO);
        bar.start("restore", 1000, 4);
        bar.advance(250, 1);
        bar.advance(250, 1);
        bar.finish();
        let frames = screen.0.lock().unwrap().clone();
        let first = frames.first().expect("a frame was drawn");
        assert!(
            first.contains("restore") && first.contains('['),
            "{frames:?}"
        );
        assert!(first.contains("/4 files"), "{frames:?}");
        assert!(
            first.contains("1000 B") || first.contains("1000B"),
            "{frames:?}"
        );
        assert!(first.contains("eta -"), "{frames:?}");
    }
}
