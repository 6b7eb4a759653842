//! Progress reporting from long operations. The library only calls these hooks; the CLI decides
//! whether to draw a bar (on a terminal), print JSON events, or nothing.

/// Receives progress from long-running operations, counted in bytes and in items (files for a
/// snapshot, a restore or a copy; blobs and chunks for verify and gc).
pub trait Progress: Sync {
    /// A phase starts with `bytes` and `items` to do (either 0 if unknown).
    fn start(&self, _phase: &str, _bytes: u64, _items: u64) {}
    /// `bytes` more bytes and `items` more items are done.
    fn advance(&self, _bytes: u64, _items: u64) {}
    /// The phase is over.
    fn finish(&self) {}
}

/// Reports nothing.
pub struct NoProgress;

impl Progress for NoProgress {}

/// Times the phases of an operation, for the reports that list them (`REWIND_TRACE` prints
/// them): where a slow snapshot, push or restore spent its time.
pub(crate) struct Phases {
    last: std::time::Instant,
    /// (phase, seconds) in order.
    pub done: Vec<(&'static str, f64)>,
}

impl Phases {
    /// Starts timing at `start`.
    pub fn new(start: std::time::Instant) -> Phases {
        Phases {
            last: start,
            done: Vec::new(),
        }
    }

    /// Ends phase `name` now.
    pub fn mark(&mut self, name: &'static str) {
        let now = std::time::Instant::now();
        self.done.push((name, (now - self.last).as_secs_f64()));
        self.last = now;
    }
}
