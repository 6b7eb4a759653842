//! The runs this server started, by id: running, then their result (kept while the server
//! runs, the latest 1,000).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

use rewind::wire::{ErrorBody, RunResult, RunState};

/// Keep at most this many finished runs.
const KEEP: usize = 1000;

/// The registry.
#[derive(Default)]
pub struct Runs {
    inner: Mutex<(u64, BTreeMap<u64, RunState>)>,
}

impl Runs {
    fn lock(&self) -> std::sync::MutexGuard<'_, (u64, BTreeMap<u64, RunState>)> {
        // A panic while holding it leaves a map that is still whole.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new run in `root`: its id.
    pub fn begin(&self, root: &Path) -> u64 {
        let mut g = self.lock();
        g.0 += 1;
        let id = g.0;
        g.1.insert(id, RunState::running(id, root.display().to_string()));
        while g.1.len() > KEEP {
            let Some(oldest) = g.1.keys().next().copied() else {
                break;
            };
            g.1.remove(&oldest);
        }
        id
    }

    /// The run ended: its result, or the error that stopped it.
    pub fn finish(&self, id: u64, outcome: Result<RunResult, ErrorBody>) {
        if let Some(s) = self.lock().1.get_mut(&id) {
            s.finish(outcome);
        }
    }

    /// A run's state.
    pub fn get(&self, id: u64) -> Option<RunState> {
        self.lock().1.get(&id).cloned()
    }
}
