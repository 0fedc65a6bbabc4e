//! ISO 8601 timestamps as instants, time zones honoured.

/// Seconds since the epoch (with a fraction in nanoseconds) of an ISO 8601
/// date or date-time: `2026-01-02`, `2026-01-02T03:04:05Z`,
/// `2026-01-02 03:04:05.5+02:00`. No zone means UTC.
#[expect(
    clippy::many_single_char_names,
    reason = "short names for a compact date parser"
)]
pub fn parse_instant(text: &str) -> Option<(i64, u32)> {
    let text = text.trim();
    let b = text.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(range)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let mut secs = days_from_civil(year, month, day) * 86_400;
    let mut nanos = 0u32;
    let mut rest = &text[10..];
    if rest.is_empty() {
        return Some((secs, 0));
    }
    rest = rest.strip_prefix(['T', 't', ' '])?;
    let t = rest.as_bytes();
    if t.len() < 5 || t[2] != b':' {
        return None;
    }
    let hour: i64 = rest.get(0..2)?.parse().ok()?;
    let minute: i64 = rest.get(3..5)?.parse().ok()?;
    let mut i = 5;
    let mut second = 0;
    if t.get(5) == Some(&b':') {
        second = rest.get(6..8)?.parse().ok()?;
        i = 8;
        if t.get(8) == Some(&b'.') || t.get(8) == Some(&b',') {
            let digits: String = rest[9..].chars().take_while(char::is_ascii_digit).collect();
            if digits.is_empty() {
                return None;
            }
            let padded = format!("{digits:0<9}");
            nanos = padded[..9].parse().ok()?;
            i = 9 + digits.len();
        }
    }
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    secs += hour * 3600 + minute * 60 + second;
    let zone = rest[i..].trim_start();
    let offset = match zone {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = match zone.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let z = &zone[1..];
            let (h, m) = match z.len() {
                2 => (z.parse::<i64>().ok()?, 0),
                4 => (z[..2].parse::<i64>().ok()?, z[2..].parse::<i64>().ok()?),
                5 if z.as_bytes()[2] == b':' => {
                    (z[..2].parse::<i64>().ok()?, z[3..].parse::<i64>().ok()?)
                }
                _ => return None,
            };
            if h > 23 || m > 59 {
                return None;
            }
            sign * (h * 3600 + m * 60)
        }
    };
    Some((secs - offset, nanos))
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_honour_zones() {
        assert_eq!(parse_instant("1970-01-01T00:00:00Z"), Some((0, 0)));
        assert_eq!(
            parse_instant("2026-11-22T15:30:00Z"),
            Some((1_795_361_400, 0))
        );
        assert_eq!(
            parse_instant("2026-11-22T17:30:00+02:00"),
            parse_instant("2026-11-22T15:30:00Z")
        );
        assert_eq!(
            parse_instant("2026-11-22 10:30-0500"),
            Some((1_795_361_400, 0))
        );
        assert_eq!(parse_instant("2026-11-22"), Some((1_795_305_600, 0)));
        assert_eq!(
            parse_instant("2024-02-29T00:00:00.25Z"),
            Some((1_709_164_800, 250_000_000))
        );
        for bad in [
            "2026-13-01",
            "2025-02-29",
            "2026-11-22T25:00",
            "yesterday",
            "2026-11-22T10:30+2",
            "2026/11/22",
        ] {
            assert_eq!(parse_instant(bad), None, "{bad}");
        }
    }
}
