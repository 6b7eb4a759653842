//! When to take an automatic snapshot: once the tree has been quiet for the policy's quiet
//! period after a change, and never sooner than the floor after the previous one. Kept apart
//! from the daemon's loop so the rule can be read (and tested) on its own.

use std::time::{Duration, Instant};

use super::watchlist::AutoPolicy;

/// One workspace's automatic-snapshot state.
#[derive(Clone, Debug, Default)]
pub struct AutoState {
    /// The latest change not yet covered by an automatic snapshot.
    pub pending_since: Option<Instant>,
    /// The latest change seen.
    pub last_change: Option<Instant>,
    /// When the previous automatic snapshot started.
    pub last_snapshot: Option<Instant>,
    /// A snapshot is being taken.
    pub running: bool,
}

impl AutoState {
    /// A change was seen at `now`.
    pub fn changed(&mut self, now: Instant) {
        self.pending_since.get_or_insert(now);
        self.last_change = Some(now);
    }

    /// When the next snapshot is due (None: nothing pending, or one running).
    pub fn due(&self, policy: &AutoPolicy) -> Option<Instant> {
        if self.running {
            return None;
        }
        self.pending_since?;
        let quiet = self.last_change? + Duration::from_millis(policy.quiet_ms);
        let floor = self
            .last_snapshot
            .map(|t| t + Duration::from_millis(policy.floor_ms));
        Some(floor.map_or(quiet, |f| f.max(quiet)))
    }

    /// A snapshot starts at `now`: what changed so far is covered by it.
    pub fn start(&mut self, now: Instant) {
        self.pending_since = None;
        self.last_snapshot = Some(now);
        self.running = true;
    }

    /// The snapshot finished; `ok` false puts the changes back as pending.
    pub fn finish(&mut self, ok: bool, started: Instant) {
        self.running = false;
        if !ok {
            self.pending_since.get_or_insert(started);
            self.last_change.get_or_insert(started);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_period_restarts_with_each_change_and_floor_holds() {
        let p = AutoPolicy {
            quiet_ms: 2000,
            floor_ms: 10_000,
        };
        let t0 = Instant::now();
        let mut s = AutoState::default();
        assert_eq!(s.due(&p), None, "nothing changed: nothing due");
        s.changed(t0);
        assert_eq!(s.due(&p), Some(t0 + Duration::from_secs(2)));
        s.changed(t0 + Duration::from_secs(1));
        assert_eq!(s.due(&p), Some(t0 + Duration::from_secs(3)));
        s.start(t0 + Duration::from_secs(3));
        assert_eq!(s.due(&p), None, "running");
        s.finish(true, t0 + Duration::from_secs(3));
        assert_eq!(s.due(&p), None, "covered");
        s.changed(t0 + Duration::from_secs(4));
        assert_eq!(s.due(&p), Some(t0 + Duration::from_secs(13)), "floor");
    }
}
