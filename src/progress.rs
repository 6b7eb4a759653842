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
