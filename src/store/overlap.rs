//! gc's rewriting passes (regrouping, dictionary recompression) as a pipeline, so compression
//! does not stop for the log's reads and writes: this thread produces the next batch (reading
//! the log) and consumes the previous batch's result (writing the log) while a scoped thread
//! works on the current one on rayon's pool. The tables stay on this thread, which is why the
//! producer and the consumer share one `state`. Two batches in flight bound the memory.

use crate::error::Result;

/// Runs `work` on each batch `produce` gives (with the content bytes it holds, for progress)
/// and hands each result to `consume`, in order, overlapping one batch's work with the next
/// batch's production and the last one's consumption.
pub(crate) fn overlapped<S, I: Send, O: Send>(
    state: &mut S,
    mut produce: impl FnMut(&mut S) -> Result<Option<(I, u64)>>,
    work: impl Fn(I) -> O + Sync,
    mut consume: impl FnMut(&mut S, O, u64) -> Result<()>,
) -> Result<()> {
    let work = &work;
    std::thread::scope(|scope| -> Result<()> {
        let join = |h: std::thread::ScopedJoinHandle<'_, O>| {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
        };
        let mut inflight = None;
        while let Some((input, bytes)) = produce(state)? {
            let next = scope.spawn(move || work(input));
            if let Some((done_bytes, done)) = inflight.replace((bytes, next)) {
                consume(state, join(done), done_bytes)?;
            }
        }
        if let Some((done_bytes, done)) = inflight.take() {
            consume(state, join(done), done_bytes)?;
        }
        Ok(())
    })
}
