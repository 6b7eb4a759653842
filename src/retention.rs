//! Which snapshots a retention policy keeps, decided on times alone; `crate::forget` applies
//! it (and keeps protected snapshots whatever this says).
//!
//! Two kinds: [`Thinning`], the time machine schedule for automatic snapshots (every one while
//! young, then one an hour, then one a day, then none), and [`Policy`], restic's `--keep-*`
//! policy for any snapshots.
//!
//! [`Policy`] follows restic's documented semantics (`restic forget`): snapshots are walked
//! newest first; `last` keeps the newest N; each calendar rule (hourly, daily, weekly, monthly,
//! yearly) keeps the newest snapshot of each of the newest N periods that hold one (weeks run
//! Monday to Sunday, ISO 8601); `within` keeps every snapshot within a span of the group's
//! *latest snapshot* (not of the clock), and each `within_*` rule keeps the newest snapshot of
//! every period within its span of the latest snapshot. A snapshot kept by any rule is kept
//! (the rules are ORed). When a counted rule has counts left at the oldest snapshot, the oldest
//! is kept too, so the history kept is as long as the counts allow. Snapshots dated after
//! "now" are kept and take no part.
//!
//! Where rewind differs: periods are UTC, not local time, so a store shared between machines in
//! different zones judges alike; durations are humantime's (`7d`, `12h`, `1month`, `1y`: `m` is
//! minutes), measured in exact seconds rather than calendar months.

use std::time::Duration;

use chrono::{DateTime, Datelike, Timelike, Utc};
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

/// How many periods a [`Policy`] rule keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// The newest N.
    Count(usize),
    /// All of them (restic's `unlimited`).
    Unlimited,
}

impl std::str::FromStr for Keep {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        if s == "unlimited" {
            return Ok(Keep::Unlimited);
        }
        s.parse::<usize>()
            .map(Keep::Count)
            .map_err(|_| format!("'{s}' is neither a count nor 'unlimited'"))
    }
}

/// restic's retention policy (see the module documentation for its semantics).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    /// The newest N snapshots.
    pub last: Option<Keep>,
    /// The newest snapshot of each of the newest N hours that hold one.
    pub hourly: Option<Keep>,
    /// Per day.
    pub daily: Option<Keep>,
    /// Per ISO week (Monday to Sunday).
    pub weekly: Option<Keep>,
    /// Per month.
    pub monthly: Option<Keep>,
    /// Per year.
    pub yearly: Option<Keep>,
    /// Every snapshot within this span of the latest.
    pub within: Option<Duration>,
    /// The newest snapshot of each hour within this span of the latest.
    pub within_hourly: Option<Duration>,
    /// Per day.
    pub within_daily: Option<Duration>,
    /// Per week.
    pub within_weekly: Option<Duration>,
    /// Per month.
    pub within_monthly: Option<Duration>,
    /// Per year.
    pub within_yearly: Option<Duration>,
}

/// A calendar period a snapshot falls in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Period {
    Hour,
    Day,
    Week,
    Month,
    Year,
}

impl Period {
    fn name(self) -> &'static str {
        match self {
            Period::Hour => "hourly",
            Period::Day => "daily",
            Period::Week => "weekly",
            Period::Month => "monthly",
            Period::Year => "yearly",
        }
    }

    /// A number naming the period `t` falls in (UTC).
    fn of(self, t: &DateTime<Utc>) -> i64 {
        let (y, m, d, h) = (
            i64::from(t.year()),
            i64::from(t.month()),
            i64::from(t.day()),
            i64::from(t.hour()),
        );
        match self {
            Period::Hour => ((y * 100 + m) * 100 + d) * 100 + h,
            Period::Day => (y * 100 + m) * 100 + d,
            Period::Week => {
                let w = t.iso_week();
                i64::from(w.year()) * 100 + i64::from(w.week())
            }
            Period::Month => y * 100 + m,
            Period::Year => y,
        }
    }
}

impl Policy {
    /// Whether no rule is set (an empty policy keeps everything; `forget` refuses it). A count
    /// of 0 is no rule, as in restic.
    pub fn is_empty(&self) -> bool {
        self.counts().iter().all(|(k, _)| k.is_none())
            && self.within.is_none()
            && self.spans().iter().all(|(d, _)| d.is_none())
    }

    fn counts(&self) -> [(Option<Keep>, Option<Period>); 6] {
        let nonzero = |k: Option<Keep>| k.filter(|k| *k != Keep::Count(0));
        [
            (nonzero(self.last), None),
            (nonzero(self.hourly), Some(Period::Hour)),
            (nonzero(self.daily), Some(Period::Day)),
            (nonzero(self.weekly), Some(Period::Week)),
            (nonzero(self.monthly), Some(Period::Month)),
            (nonzero(self.yearly), Some(Period::Year)),
        ]
    }

    fn spans(&self) -> [(Option<Duration>, Period); 5] {
        [
            (self.within_hourly, Period::Hour),
            (self.within_daily, Period::Day),
            (self.within_weekly, Period::Week),
            (self.within_monthly, Period::Month),
            (self.within_yearly, Period::Year),
        ]
    }

    /// For snapshots taken at `times_ns` (any order; of equal times, the later index counts as
    /// the newer), why each is kept at `now_ns`: empty for a snapshot the policy forgets.
    pub fn judge(&self, times_ns: &[i64], now_ns: i64) -> Vec<Vec<String>> {
        let mut reasons: Vec<Vec<String>> = vec![Vec::new(); times_ns.len()];
        let mut order: Vec<usize> = Vec::with_capacity(times_ns.len());
        for (i, &t) in times_ns.iter().enumerate() {
            if t > now_ns {
                reasons[i].push("in the future".into());
            } else {
                order.push(i);
            }
        }
        order.sort_by_key(|&i| std::cmp::Reverse((times_ns[i], i)));
        let Some(&newest) = order.first() else {
            return reasons;
        };
        let latest = times_ns[newest];
        let after =
            |d: Duration| latest.saturating_sub(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        // Per counted rule: what is left, and the period of the last snapshot it kept.
        let mut counted: Vec<(Option<usize>, Option<Period>, Option<i64>)> = self
            .counts()
            .into_iter()
            .filter_map(|(k, p)| {
                k.map(|k| match k {
                    Keep::Count(n) => (Some(n), p, None),
                    Keep::Unlimited => (None, p, None),
                })
            })
            .collect();
        let mut spanned: Vec<(i64, Period, Option<i64>)> = self
            .spans()
            .into_iter()
            .filter_map(|(d, p)| d.map(|d| (after(d), p, None)))
            .collect();
        let last_nr = order.len() - 1;
        for (nr, &i) in order.iter().enumerate() {
            let t = times_ns[i];
            let when = DateTime::<Utc>::from_timestamp_nanos(t);
            let why = &mut reasons[i];
            if let Some(d) = self.within
                && t > after(d)
            {
                why.push(format!("within {}", humantime::format_duration(d)));
            }
            for (left, period, last) in counted.iter_mut() {
                if *left == Some(0) {
                    continue;
                }
                let val = match period {
                    Some(p) => p.of(&when),
                    None => nr as i64,
                };
                if *last != Some(val) || nr == last_nr {
                    let name = period.map_or("last", |p| p.name());
                    why.push(if *last == Some(val) {
                        format!("oldest {name} snapshot")
                    } else {
                        format!("{name} snapshot")
                    });
                    *last = Some(val);
                    if let Some(n) = left {
                        *n -= 1;
                    }
                }
            }
            for (since, period, last) in spanned.iter_mut() {
                if t <= *since {
                    continue;
                }
                let val = period.of(&when);
                if *last != Some(val) || nr == last_nr {
                    why.push(format!("{} within", period.name()));
                    *last = Some(val);
                }
            }
        }
        reasons
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

    // restic's documented examples (doc/060_forget.rst, "Removing snapshots according to a
    // policy"), and the rules its notes state, as a table.

    fn at(s: &str) -> i64 {
        chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S")
            .map(|t| t.and_utc().timestamp_nanos_opt().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn kept(p: &Policy, times: &[i64], now: i64) -> Vec<usize> {
        let r = p.judge(times, now);
        (0..times.len()).filter(|&i| !r[i].is_empty()).collect()
    }

    #[test]
    fn restic_twelve_sundays_keep_daily_four() {
        let times: Vec<i64> = [
            "2019-09-01",
            "2019-09-08",
            "2019-09-15",
            "2019-09-22",
            "2019-09-29",
            "2019-10-06",
            "2019-10-13",
            "2019-10-20",
            "2019-10-27",
            "2019-11-03",
            "2019-11-10",
            "2019-11-17",
        ]
        .iter()
        .map(|d| at(&format!("{d} 11:00:00")))
        .collect();
        let p = Policy {
            daily: Some(Keep::Count(4)),
            ..Policy::default()
        };
        let now = at("2019-11-18 09:00:00");
        assert_eq!(kept(&p, &times, now), vec![8, 9, 10, 11]);
        let r = p.judge(&times, now);
        assert_eq!(r[11], vec!["daily snapshot".to_string()]);
    }

    #[test]
    fn restic_a_century_of_dailies() {
        // "one backup every day for 100 years ... --keep-daily 7 --keep-weekly 5
        // --keep-monthly 12 --keep-yearly 75 would keep the most recent 7 daily snapshots and 4
        // last-day-of-the-week ones ... 12 or 11 last-day-of-the-month snapshots ... 75 or 74
        // last-day-of-the-year snapshots"
        // Ending on a Sunday, as the docs' count assumes (the 7 dailies then hold one weekly).
        let first = at("1920-01-01 11:00:00");
        let times: Vec<i64> = (0..36523).map(|d| first + d * DAY_NS).collect();
        assert_eq!(
            DateTime::<Utc>::from_timestamp_nanos(times[36522]).date_naive(),
            chrono::NaiveDate::from_ymd_opt(2019, 12, 29).unwrap_or_default()
        );
        let p = Policy {
            daily: Some(Keep::Count(7)),
            weekly: Some(Keep::Count(5)),
            monthly: Some(Keep::Count(12)),
            yearly: Some(Keep::Count(75)),
            ..Policy::default()
        };
        let now = *times.last().unwrap_or(&0) + HOUR_NS;
        let r = p.judge(&times, now);
        let n = times.len();
        let has = |i: usize, why: &str| r[i].iter().any(|w| w == why);
        let only = |why: &str| -> Vec<usize> {
            (0..n)
                .filter(|&i| has(i, why) && (n - 7..n).all(|d| d != i))
                .collect()
        };
        assert!((n - 7..n).all(|i| has(i, "daily snapshot")));
        let weekly = only("weekly snapshot");
        assert_eq!(weekly.len(), 4);
        let day = |i: usize| DateTime::<Utc>::from_timestamp_nanos(times[i]);
        assert!(
            weekly
                .iter()
                .all(|&i| day(i).weekday() == chrono::Weekday::Sun)
        );
        let monthly: Vec<usize> = only("monthly snapshot")
            .into_iter()
            .filter(|i| !weekly.contains(i))
            .collect();
        assert!((11..=12).contains(&monthly.len()), "{}", monthly.len());
        assert!(
            monthly
                .iter()
                .all(|&i| day(i).month() != day(i + 1).month())
        );
        let yearly = (0..n).filter(|&i| has(i, "yearly snapshot")).count();
        assert_eq!(yearly, 75);
        let total = (0..n).filter(|&i| !r[i].is_empty()).count();
        assert!(
            (7 + 4 + 11 + 74..=7 + 4 + 12 + 75).contains(&total),
            "{total}"
        );
    }

    #[test]
    fn restic_keep_within_counts_from_the_latest_snapshot_not_the_clock() {
        let latest = at("2020-06-10 12:00:00");
        let times: Vec<i64> = (0..240).map(|h| latest - h * HOUR_NS).collect();
        let p = Policy {
            within: Some(Duration::from_secs((7 * 24 + 3) * 3600)),
            ..Policy::default()
        };
        // A month after the latest: the clock would keep none.
        let k = kept(&p, &times, latest + 30 * DAY_NS);
        assert_eq!(k, (0..7 * 24 + 3).collect::<Vec<_>>());
    }

    #[test]
    fn restic_within_daily_keeps_the_newest_of_each_day_in_the_span() {
        let latest = at("2020-06-10 12:00:00");
        let times: Vec<i64> = (0..24 * 20).map(|h| latest - h * HOUR_NS).collect();
        let p = Policy {
            within_daily: Some(Duration::from_secs(7 * 24 * 3600)),
            ..Policy::default()
        };
        let k = kept(&p, &times, latest);
        // Today's 12:00 (newest of its day), then 23:00 of each of the 7 days before (2020-06-03
        // from 13:00 on is within 7 days; its 12:00 is exactly 7 days back, not within).
        assert_eq!(k.len(), 8);
        assert!(
            k.iter()
                .skip(1)
                .all(|&i| (times[i] / HOUR_NS).rem_euclid(24) == 23)
        );
    }

    #[test]
    fn restic_oldest_is_kept_while_counts_are_left() {
        let times = [
            at("2020-01-01 08:00:00"),
            at("2020-01-01 09:00:00"),
            at("2020-01-01 10:00:00"),
        ];
        let p = Policy {
            daily: Some(Keep::Count(2)),
            ..Policy::default()
        };
        let r = p.judge(&times, at("2020-01-02 00:00:00"));
        assert_eq!(r[2], vec!["daily snapshot".to_string()]);
        assert!(r[1].is_empty());
        assert_eq!(r[0], vec!["oldest daily snapshot".to_string()]);
    }

    #[test]
    fn restic_weeks_run_monday_to_sunday() {
        let times = [
            at("2019-11-17 23:00:00"), // Sunday
            at("2019-11-17 23:59:00"), // Sunday
            at("2019-11-18 00:00:00"), // Monday: a new week
        ];
        let p = Policy {
            weekly: Some(Keep::Count(2)),
            ..Policy::default()
        };
        assert_eq!(kept(&p, &times, at("2019-11-19 00:00:00")), vec![1, 2]);
    }

    #[test]
    fn restic_rules_are_ored_and_unlimited_keeps_every_period() {
        // Three snapshots a day for 30 days: the newest of each day.
        let first = at("2019-09-01 08:00:00");
        let times: Vec<i64> = (0..90)
            .map(|i| first + (i / 3) * DAY_NS + (i % 3) * HOUR_NS)
            .collect();
        let p = Policy {
            hourly: Some(Keep::Count(1)),
            daily: Some(Keep::Unlimited),
            weekly: Some(Keep::Count(1)),
            ..Policy::default()
        };
        let r = p.judge(&times, first + 31 * DAY_NS);
        let k: Vec<usize> = (0..90).filter(|&i| !r[i].is_empty()).collect();
        // Every day's newest, and (counts being left) the oldest.
        let days = (0..30).map(|d| d * 3 + 2);
        assert_eq!(k, std::iter::once(0).chain(days).collect::<Vec<_>>());
        assert_eq!(r[0], ["oldest daily snapshot"]);
        // The newest, 2019-09-30 (a Monday), is the hourly, daily and weekly snapshot at once.
        assert_eq!(
            r[89],
            ["hourly snapshot", "daily snapshot", "weekly snapshot"]
        );
    }

    #[test]
    fn restic_future_snapshots_are_kept_and_count_for_nothing() {
        let now = at("2020-01-10 00:00:00");
        let times = [
            at("2020-01-08 00:00:00"),
            at("2020-01-09 00:00:00"),
            at("2020-02-01 00:00:00"),
        ];
        let p = Policy {
            last: Some(Keep::Count(1)),
            ..Policy::default()
        };
        let r = p.judge(&times, now);
        assert!(r[0].is_empty());
        assert_eq!(r[1], vec!["last snapshot".to_string()]);
        assert_eq!(r[2], vec!["in the future".to_string()]);
    }

    #[test]
    fn a_count_of_zero_is_no_rule() {
        let p = Policy {
            last: Some(Keep::Count(0)),
            ..Policy::default()
        };
        assert!(p.is_empty());
        assert_eq!("unlimited".parse::<Keep>(), Ok(Keep::Unlimited));
        assert!("many".parse::<Keep>().is_err());
    }
}
