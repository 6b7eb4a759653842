//! Thinning automatic snapshots like a time machine: every one while they are young, then
//! one an hour, then one a day, then none. Which to keep is decided here, on times alone;
//! `crate::forget` applies it (and keeps protected snapshots whatever this says).

use serde::Deserialize;

/// The thinning schedule (`[retention]` in config.toml, `auto_*` keys), in seconds of age.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub struct Thinning {
    /// Every snapshot younger than this is kept.
    pub keep_all_secs: u64,
    /// Up to this age, the newest snapshot of each clock hour is kept.
    pub hourly_secs: u64,
    /// Up to this age, the newest snapshot of each day (UTC) is kept; older ones go.
    pub daily_secs: u64,
}

impl Default for Thinning {
    fn default() -> Self {
        Thinning {
            keep_all_secs: 3600,
            hourly_secs: 24 * 3600,
            daily_secs: 7 * 24 * 3600,
        }
    }
}

const HOUR_NS: i64 = 3600 * 1_000_000_000;
const DAY_NS: i64 = 24 * HOUR_NS;

impl Thinning {
    /// For snapshots taken at `times_ns` (any order), whether each is kept at `now_ns`.
    pub fn keep(&self, times_ns: &[i64], now_ns: i64) -> Vec<bool> {
        let secs = |s: u64| (s as i64).saturating_mul(1_000_000_000);
        let (all, hourly, daily) = (
            secs(self.keep_all_secs),
            secs(self.hourly_secs),
            secs(self.daily_secs),
        );
        // The newest snapshot per bucket wins: (bucket kind, bucket number) -> index.
        let mut newest: rustc_hash::FxHashMap<(u8, i64), usize> = Default::default();
        let mut keep = vec![false; times_ns.len()];
        for (i, &t) in times_ns.iter().enumerate() {
            let age = now_ns.saturating_sub(t);
            let bucket = if age < all {
                keep[i] = true;
                continue;
            } else if age < hourly {
                (0, t.div_euclid(HOUR_NS))
            } else if age < daily {
                (1, t.div_euclid(DAY_NS))
            } else {
                continue;
            };
            let e = newest.entry(bucket).or_insert(i);
            if times_ns[*e] < t {
                *e = i;
            }
        }
        for i in newest.into_values() {
            keep[i] = true;
        }
        keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn young_all_then_hourly_then_daily_then_none() {
        let t = Thinning::default();
        let now = 100 * DAY_NS;
        let min = 60 * 1_000_000_000i64;
        let times = vec![
            now - 5 * min,               // young: kept
            now - 10 * min,              // young: kept
            now - 2 * HOUR_NS - 5 * min, // same hour as the next: only the newer is kept
            now - 2 * HOUR_NS - 10 * min,
            now - 3 * DAY_NS - HOUR_NS,     // a day bucket of its own
            now - 3 * DAY_NS - 2 * HOUR_NS, // the same day, older: dropped
            now - 8 * DAY_NS,               // too old
        ];
        let keep = t.keep(&times, now);
        assert_eq!(keep, vec![true, true, true, false, true, false, false]);
    }

    #[test]
    fn with_no_hourly_or_daily_span_only_the_young_are_kept() {
        let t = Thinning {
            keep_all_secs: 10,
            hourly_secs: 10,
            daily_secs: 10,
        };
        let now = 50 * 1_000_000_000;
        let times: Vec<i64> = (0..50).map(|s| s * 1_000_000_000).collect();
        let keep = t.keep(&times, now);
        // Ages 1..=9 s are younger than 10 s; age 10 and older fall in no span.
        let kept: Vec<usize> = (0..50).filter(|&i| keep[i]).collect();
        assert_eq!(kept, (41..50).collect::<Vec<_>>());
    }
}
