//! A progress bar on stderr (only drawn when stderr is a terminal).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::progress::Progress;

/// Draws an indicatif bar for byte-counted phases.
pub struct Bar {
    bar: ProgressBar,
}

impl Bar {
    /// A bar that stays hidden when `quiet` or when stderr is not a terminal.
    pub fn new(quiet: bool) -> Bar {
        let target = if quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let bar = ProgressBar::with_draw_target(None, target);
        Bar { bar }
    }
}

impl Progress for Bar {
    fn start(&self, phase: &str, total: u64) {
        // Tiny jobs finish before a bar is worth drawing.
        if total < (64 << 20) {
            self.bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        self.bar.set_length(total);
        self.bar.set_position(0);
        if let Ok(style) = ProgressStyle::with_template(
            "{msg:>10} [{bar:30.cyan/blue}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
        ) {
            self.bar.set_style(style.progress_chars("=> "));
        }
        self.bar.set_message(phase.to_string());
    }
    fn advance(&self, n: u64) {
        self.bar.inc(n);
    }
    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
