//! Progress reporting from long operations. The library only calls these hooks; the CLI decides
//! whether to draw a bar (on a terminal) or nothing.

/// Receives progress from long-running operations.
pub trait Progress: Sync {
    /// A phase starts; `total` is in bytes (0 if unknown).
    fn start(&self, _phase: &str, _total: u64) {}
    /// `n` more bytes are done.
    fn advance(&self, _n: u64) {}
    /// The phase is over.
    fn finish(&self) {}
}

/// Reports nothing.
pub struct NoProgress;

impl Progress for NoProgress {}
