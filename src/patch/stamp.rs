//! Timestamps on `---`/`+++` lines. GNU `diff -N` marks a missing file with the epoch, written
//! in the local zone of whoever made the diff (`1970-01-01 09:00:00 +0900` in Tokyo), so
//! telling a creation or deletion apart needs the instant, not the text.

/// Seconds since the epoch (UTC) a header timestamp names, with `zoned` false when the text has
/// no zone (its instant is then only known to within a day).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub secs: i64,
    pub zoned: bool,
}

/// Parses `YYYY-MM-DD HH:MM:SS[.frac][ ][+-]HHMM` (GNU `diff -u`, also with `+HH:MM` or without a
/// zone) or the ctime form `Thu Jan  1 00:00:00 1970` (old `diff -c`).
pub(crate) fn parse(text: &[u8]) -> Option<Stamp> {
    let text = std::str::from_utf8(text).ok()?.trim();
    iso(text).or_else(|| ctime(text))
}

/// Whether the timestamp is the epoch, the mark of a missing file.
pub(crate) fn is_epoch(text: &[u8]) -> bool {
    match parse(text) {
        Some(Stamp { secs, zoned: true }) => secs == 0,
        // Without a zone the local offset is unknown; no zone is more than 14 hours off UTC.
        Some(Stamp { secs, zoned: false }) => secs.abs() <= 14 * 3600,
        None => false,
    }
}

fn num(s: &str, digits: usize) -> Option<i64> {
    (s.len() == digits && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// Days from 1970-01-01 to the given civil date (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn clock(t: &str) -> Option<i64> {
    let mut it = t.split(':');
    let (h, m, s) = (it.next()?, it.next()?, it.next()?);
    if it.next().is_some() {
        return None;
    }
    let s = s.split_once('.').map_or(s, |(whole, frac)| {
        if frac.bytes().all(|b| b.is_ascii_digit()) {
            whole
        } else {
            ""
        }
    });
    let (h, m, s) = (num(h, 2)?, num(m, 2)?, num(s, 2)?);
    (h < 24 && m < 60 && s <= 60).then_some(h * 3600 + m * 60 + s)
}

fn zone(z: &str) -> Option<i64> {
    let sign = match z.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digits: String = z[1..].chars().filter(|&c| c != ':').collect();
    if z[1..].contains(':') && z.len() != 6 {
        return None;
    }
    let (h, m) = (num(digits.get(..2)?, 2)?, num(digits.get(2..)?, 2)?);
    Some(sign * (h * 3600 + m * 60))
}

fn iso(text: &str) -> Option<Stamp> {
    let mut parts = text.split_ascii_whitespace();
    let date = parts.next()?;
    let time = parts.next()?;
    let (time, mut tz) = match time.find(['+', '-']) {
        Some(i) => (&time[..i], Some(&time[i..])),
        None => (time, None),
    };
    if tz.is_none() {
        tz = parts.next();
    }
    if parts.next().is_some() {
        return None;
    }
    let mut d = date.split('-');
    let (y, m, day) = (num(d.next()?, 4)?, num(d.next()?, 2)?, num(d.next()?, 2)?);
    if d.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&day) {
        return None;
    }
    let base = days_from_civil(y, m, day) * 86_400 + clock(time)?;
    match tz {
        Some(z) => Some(Stamp {
            secs: base - zone(z)?,
            zoned: true,
        }),
        None => Some(Stamp {
            secs: base,
            zoned: false,
        }),
    }
}

fn ctime(text: &str) -> Option<Stamp> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let p: Vec<&str> = text.split_ascii_whitespace().collect();
    let [_, mon, day, time, year] = p.as_slice() else {
        return None;
    };
    let m = MONTHS.iter().position(|x| x == mon)? as i64 + 1;
    let day: i64 = day.parse().ok().filter(|d| (1..=31).contains(d))?;
    let y = num(year, 4)?;
    Some(Stamp {
        secs: days_from_civil(y, m, day) * 86_400 + clock(time)?,
        zoned: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_in_any_zone() {
        assert!(is_epoch(b"1970-01-01 00:00:00.000000000 +0000"));
        assert!(is_epoch(b"1970-01-01 09:00:00.000000000 +0900"));
        assert!(is_epoch(b"1969-12-31 16:00:00.000000000 -0800"));
        assert!(is_epoch(b"1969-12-31 16:00:00 -08:00"));
        assert!(is_epoch(b"Thu Jan  1 00:00:00 1970"));
        assert!(!is_epoch(b"1970-01-01 09:00:00.000000000 +0000"));
        assert!(!is_epoch(b"2024-01-01 10:00:00.000000000 +0000"));
        assert_eq!(
            parse(b"2024-01-01 10:00:00 +0100").map(|s| s.secs),
            Some(1_704_099_600)
        );
        assert_eq!(parse(b"not a date"), None);
    }
}
