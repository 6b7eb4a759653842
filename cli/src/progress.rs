//! A progress bar on stderr (only drawn when stderr is a terminal).

use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use rewind::progress::Progress;

/// Jobs smaller than this finish before a bar is worth drawing.
const MIN_BYTES: u64 = 64 << 20;

/// Makes the draw target a phase draws to.
type Target = Box<dyn Fn() -> ProgressDrawTarget + Send + Sync>;

/// Draws an indicatif bar for byte-counted phases, a fresh one per phase (a finished indicatif
/// bar does not draw again).
pub struct Bar {
    bar: Mutex<ProgressBar>,
    /// None when quiet.
    target: Option<Target>,
}

impl Bar {
    /// A bar that stays hidden when `quiet` or when stderr is not a terminal.
    pub fn new(quiet: bool) -> Bar {
        Bar::to(if quiet {
            None
        } else {
            Some(Box::new(ProgressDrawTarget::stderr))
        })
    }

    /// A bar drawing to what `target` makes (None: never drawn).
    fn to(target: Option<Target>) -> Bar {
        Bar {
            bar: Mutex::new(ProgressBar::hidden()),
            target,
        }
    }

    fn current(&self) -> std::sync::MutexGuard<'_, ProgressBar> {
        self.bar.lock().unwrap_or_else(|p| p.into_inner())
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
    fn start(&self, phase: &str, total: u64) {
        // Built hidden with its style, message and length, then shown: the first frame drawn is
        // a styled one with this phase's numbers.
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template(
            "{msg:>10} [{bar:30.cyan/blue}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
        ) {
            bar.set_style(style.with_key("eta", eta).progress_chars("=> "));
        }
        bar.set_message(phase.to_string());
        if let Some(make) = &self.target
            && total >= MIN_BYTES
        {
            bar.set_draw_target(make());
        }
        let old = std::mem::replace(&mut *self.current(), bar);
        old.finish_and_clear();
    }
    fn advance(&self, n: u64) {
        self.current().inc(n);
    }
    fn finish(&self) {
        self.current().finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use indicatif::{ProgressDrawTarget, TermLike};

    use super::Bar;
    use rewind::progress::Progress;

    /// A terminal that records what is written to it.
    #[derive(Debug, Clone, Default)]
    struct Screen(Arc<Mutex<Vec<String>>>);

    impl TermLike for Screen {
        fn width(&self) -> u16 {
            120
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

    #[test]
    fn the_first_frame_is_styled_and_shows_no_eta_yet() {
        let screen = Screen::default();
        let s = screen.clone();
        let bar = Bar::to(Some(Box::new(move || {
            ProgressDrawTarget::term_like(Box::new(s.clone()))
        })));
        // A small phase first: never drawn.
        bar.start("walk", 1000);
        bar.advance(1000);
        bar.finish();
        assert!(screen.0.lock().unwrap().is_empty());
        bar.start("restore", 1 << 30);
        bar.advance(1 << 20);
        bar.finish();
        let frames = screen.0.lock().unwrap().clone();
        let first = frames.first().expect("a frame was drawn");
        assert!(
            first.contains("restore") && first.contains('['),
            "{frames:?}"
        );
        assert!(first.contains("eta -"), "{frames:?}");
        assert!(
            frames.iter().all(|f| f.contains("restore")),
            "an unstyled frame: {frames:?}"
        );
    }
}
