//! ISO 8601 timestamps as instants, time zones honoured. Parsing only: the
//! rules about which instant may follow which live in `validate`.
//!
//! The accepted forms are ISO 8601's extended format as RFC 3339 profiles
//! it, with what ISO 8601 itself also allows (seconds left out, a comma
//! before the fraction, `+hh` and `+hhmm` zones), a lowercase `t` or `z`
//! and a space for the `T` (RFC 3339, section 5.6), blanks before the zone
//! (YAML 1.1 timestamps), a date alone, and nothing looser:
//!
//! ```text
//! instant  = date [ ("T" | "t" | " ") time ]
//! date     = YYYY "-" MM "-" DD
//! time     = hh ":" mm [ ":" ss [ ("." | ",") 1*DIGIT ] ] *(" " | TAB) [ zone ]
//! zone     = "Z" | "z" | ("+" | "-") hh [ [ ":" ] mm ]
//! ```
//!
//! Every field is exactly its width in ASCII digits (no sign, no other
//! script's digits), ASCII whitespace around the whole value is ignored, and
//! no zone means UTC. Ranges: month 1-12, day 1 to the month's length (leap
//! years honoured), hour 0-23, minute 0-59, second 0-60 (RFC 3339 allows a
//! leap second), zone hours 0-23 and minutes 0-59. A fraction keeps its
//! first nine digits (nanoseconds).

/// The first and the last instant `text` can mean: the same instant for a
/// date and time, and for a date alone its whole day (in UTC, as a time
/// without a zone is), since `completed_at: 2026-01-31` says "that day",
/// not "at midnight". `None` where `parse_instant` refuses the text.
pub fn parse_period(text: &str) -> Option<((i64, u32), (i64, u32))> {
    let first = parse_instant(text)?;
    // The grammar's one form without a time is ten bytes long.
    if text.trim_ascii().len() == "YYYY-MM-DD".len() {
        return Some((first, (first.0 + 86_399, 999_999_999)));
    }
    Some((first, first))
}

/// Seconds since the epoch (with a fraction in nanoseconds) of an ISO 8601
/// date or date-time in the forms the module documents: `2026-01-02`,
/// `2026-01-02T03:04:05Z`, `2026-01-02 03:04:05.5+02:00`. `None` for
/// anything else.
pub fn parse_instant(text: &str) -> Option<(i64, u32)> {
    // Every byte of the grammar is ASCII, so reading bytes one at a time
    // never splits a character: a byte of a multi-byte character simply
    // matches nothing and the text is refused.
    let mut s = Scanner(text.trim_ascii().as_bytes());
    let year = s.digits(4)?;
    s.expect(b"-")?;
    let month = s.digits(2)?;
    s.expect(b"-")?;
    let day = s.digits(2)?;
    if !(1..=12).contains(&month) || !(1..=days_in_month(year, month)).contains(&day) {
        return None;
    }
    let midnight = days_from_civil(year, month, day) * 86_400;
    if s.is_empty() {
        return Some((midnight, 0));
    }
    s.expect(b"Tt ")?;
    let hour = s.digits(2)?;
    s.expect(b":")?;
    let minute = s.digits(2)?;
    let (second, nanos) = if s.expect(b":").is_some() {
        let second = s.digits(2)?;
        let nanos = match s.expect(b".,") {
            Some(_) => s.fraction()?,
            None => 0,
        };
        (second, nanos)
    } else {
        (0, 0)
    };
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    // YAML 1.1 timestamps allow blanks before the zone
    // (`2001-12-14 21:59:43.10 -05:00`).
    s.skip(b" \t");
    let offset = match s.expect(b"Zz+-") {
        None | Some(b'Z' | b'z') => 0,
        Some(sign) => {
            let zone_hours = s.digits(2)?;
            let zone_minutes = if s.is_empty() {
                0
            } else {
                // `+hh:mm` and `+hhmm` are both ISO 8601.
                let _ = s.expect(b":");
                s.digits(2)?
            };
            if zone_hours > 23 || zone_minutes > 59 {
                return None;
            }
            let offset = zone_hours * 3600 + zone_minutes * 60;
            if sign == b'-' {
                -offset
            } else {
                offset
            }
        }
    };
    if !s.is_empty() {
        return None;
    }
    Some((
        midnight + hour * 3600 + minute * 60 + second - offset,
        nanos,
    ))
}

/// The bytes of a timestamp not read yet.
struct Scanner<'a>(&'a [u8]);

impl Scanner<'_> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Takes the next byte when it is one of `set`.
    fn expect(&mut self, set: &[u8]) -> Option<u8> {
        let (&first, rest) = self.0.split_first()?;
        if !set.contains(&first) {
            return None;
        }
        self.0 = rest;
        Some(first)
    }

    /// Takes every leading byte that is one of `set`.
    fn skip(&mut self, set: &[u8]) {
        while self.expect(set).is_some() {}
    }

    /// Takes exactly `width` ASCII digits as a number.
    fn digits(&mut self, width: usize) -> Option<i64> {
        let (field, rest) = self.0.split_at_checked(width)?;
        if !field.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.0 = rest;
        Some(field.iter().fold(0, |n, &d| n * 10 + i64::from(d - b'0')))
    }

    /// Takes one or more ASCII digits as a fraction of a second, in
    /// nanoseconds; digits past the ninth are read and dropped.
    fn fraction(&mut self) -> Option<u32> {
        let count = self.0.iter().take_while(|b| b.is_ascii_digit()).count();
        if count == 0 {
            return None;
        }
        let (field, rest) = self.0.split_at_checked(count)?;
        self.0 = rest;
        let nanos = (0..9).fold(0, |n, i| {
            n * 10 + field.get(i).map_or(0, |&d| u32::from(d - b'0'))
        });
        Some(nanos)
    }
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
    }

    #[test]
    fn every_accepted_form_reads_as_its_instant() {
        for (text, expected) in [
            ("1970-01-01", (0, 0)),
            ("1970-01-01T00:00:00Z", (0, 0)),
            ("1970-01-01t00:00:00z", (0, 0)),
            ("1970-01-01 00:00", (0, 0)),
            ("1970-01-01T00:00Z", (0, 0)),
            ("1970-01-01T01:00:00+01:00", (0, 0)),
            ("1970-01-01T01:00:00+0100", (0, 0)),
            ("1970-01-01T01:00:00+01", (0, 0)),
            ("1969-12-31T23:00:00-01:00", (0, 0)),
            ("1970-01-01T00:00:00-00:00", (0, 0)),
            ("1970-01-01T00:00:00 Z", (0, 0)),
            ("1970-01-01 00:00:00.5 \t+00:00", (0, 500_000_000)),
            ("1970-01-01T00:00:00,123456789123Z", (0, 123_456_789)),
            ("1970-01-01T00:00:00.000000001Z", (0, 1)),
            ("  1970-01-01T00:00:00Z\t\r\n", (0, 0)),
            ("1970-01-01T00:00:60Z", (60, 0)),
            ("1970-01-01T23:59:59+23:59", (59, 0)),
            ("1970-01-01T00:00:00-23:59", (86_340, 0)),
            ("2000-02-29", (951_782_400, 0)),
            ("0000-01-01", (-62_167_219_200, 0)),
            ("9999-12-31T23:59:59Z", (253_402_300_799, 0)),
        ] {
            assert_eq!(parse_instant(text), Some(expected), "{text:?}");
        }
    }

    #[test]
    fn a_date_alone_is_its_whole_day() {
        assert_eq!(
            parse_period("1970-01-02"),
            Some(((86_400, 0), (172_799, 999_999_999)))
        );
        assert_eq!(
            parse_period(" 1970-01-01T00:00:00Z "),
            Some(((0, 0), (0, 0)))
        );
        assert_eq!(parse_period("1970-01-01T00:00"), Some(((0, 0), (0, 0))));
        assert_eq!(parse_period("1970-13-01"), None);
    }

    #[test]
    fn anything_else_is_refused() {
        for text in [
            // Signs where digits belong, and a character inside the zone.
            "2026-11-20T09:00:00+1\u{20ac}",
            "2026-11-20T+9:+0Z",
            "2026-11-20T09:00:00+-1",
            "+026-11-20",
            "2026-+1-20",
            "2026-11-+2",
            "2026-11-20T09:-0",
            "2026-11-20T09:00:+0",
            "2026-11-20T09:00:00.+5Z",
            "2026-11-20T09:00:00+01:+0",
            "2026-11-20T09:00:00++01:00",
            // Digits of other scripts, and look-alike signs.
            "\u{ff12}\u{ff10}\u{ff12}\u{ff16}-11-20",
            "2026-\u{ff11}1-20",
            "2026-11-20T0\u{0669}:00Z",
            "2026-11-20T09:00:00\u{2212}01:00",
            // Wrong widths.
            "26-11-20",
            "20261-11-20",
            "2026-1-20",
            "2026-11-2",
            "2026-11-20T9:00",
            "2026-11-20T09:0",
            "2026-11-20T09:00:0",
            "2026-11-20T09:00:00+1",
            "2026-11-20T10:30+2",
            "2026-11-20T09:00:00+123",
            "2026-11-20T09:00:00+01:0",
            "2026-11-20T09:00:00+01:000",
            "2026-11-20T09:00:00+01000",
            // Out of range.
            "2026-00-10",
            "2026-13-01",
            "2026-11-00",
            "2026-11-31",
            "2025-02-29",
            "1900-02-29",
            "2026-11-20T24:00",
            "2026-11-20T23:60",
            "2026-11-20T23:59:61",
            "2026-11-20T09:00+24:00",
            "2026-11-20T09:00+01:60",
            // Wrong shape.
            "",
            " ",
            "yesterday",
            "2026/11/22",
            "20261122",
            "2026-11-20T",
            "2026-11-20Z",
            "2026-11-20  09:00",
            "2026-11-20T09:00:00.",
            "2026-11-20T09:00:00.Z",
            "2026-11-20T09:00.5",
            "2026-11-20T09:00:00ZZ",
            "2026-11-20T09:00:00Z+01:00",
            "2026-11-20T09:00:00+01:00 x",
            "2026-11-20T09:00:00\u{a0}Z",
            "\u{3000}2026-11-20",
        ] {
            assert_eq!(parse_instant(text), None, "{text:?}");
        }
    }

    #[test]
    fn a_multi_byte_character_anywhere_is_refused_without_a_panic() {
        let valid = "2026-11-20T09:00:00.5+01:00";
        assert!(parse_instant(valid).is_some());
        for other in ['\u{e9}', '\u{20ac}', '\u{1d7d8}', '\u{ff12}'] {
            for (at, old) in valid
                .char_indices()
                .map(|(i, c)| (i, Some(c)))
                .chain([(valid.len(), None)])
            {
                let inserted = format!("{}{other}{}", &valid[..at], &valid[at..]);
                assert_eq!(parse_instant(&inserted), None, "{inserted:?}");
                if let Some(old) = old {
                    let replaced =
                        format!("{}{other}{}", &valid[..at], &valid[at + old.len_utf8()..]);
                    assert_eq!(parse_instant(&replaced), None, "{replaced:?}");
                }
            }
        }
    }
}
