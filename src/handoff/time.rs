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
//! no zone means UTC (validation warns about a time without one: its author
//! may have meant their own clock). Ranges: month 1-12, day 1 to the month's length (leap
//! years honoured), hour 0-23, minute 0-59, second 0-60 (RFC 3339 allows a
//! leap second), zone hours 0-23 and minutes 0-59. A fraction keeps its
//! first nine digits (nanoseconds).

/// The current time in seconds since the epoch: what validation holds
/// timestamps against (`Rules::now`). Read by the commands that validate,
/// once per run, never inside the rules.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

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
    let parts = Parts::read(text)?;
    if parts.out_of_range().is_some() {
        return None;
    }
    let Parts {
        year,
        month,
        day,
        hour,
        minute,
        second,
        nanos,
        zone,
        ..
    } = parts;
    let offset = zone.map_or(0, |(sign, hours, minutes)| {
        sign * (hours * 3600 + minutes * 60)
    });
    let midnight = days_from_civil(year, month, day) * 86_400;
    Some((
        midnight + hour * 3600 + minute * 60 + second - offset,
        nanos,
    ))
}

/// What is wrong with a timestamp written in one of the accepted forms
/// whose fields do not make an instant (`2026-02-30`, `24:00`), in words
/// an author can act on; `None` when the text is an instant, or is in
/// none of the forms.
pub fn out_of_range(text: &str) -> Option<String> {
    Parts::read(text)?.out_of_range()
}

/// Whether `text`, an instant `parse_instant` reads, has a time but no
/// zone: the module reads it as UTC, which the author may not have meant.
pub fn lacks_zone(text: &str) -> bool {
    Parts::read(text).is_some_and(|parts| parts.has_time && parts.zone.is_none())
}

/// The offset from UTC, in seconds, of a date and time written with a
/// zone (`Z` is 0); `None` for a date alone or a time without a zone.
pub fn zone_seconds(text: &str) -> Option<i64> {
    let parts = Parts::read(text)?;
    let (sign, hours, minutes) = parts.zone.filter(|_| parts.has_time)?;
    Some(sign * (hours * 3600 + minutes * 60))
}

/// `secs` since the epoch as a UTC timestamp, `2026-01-31T14:05:00Z`, the
/// form the validation messages ask for.
pub fn utc_text(secs: i64) -> String {
    let (days, in_day) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        in_day / 3600,
        in_day % 3600 / 60,
        in_day % 60
    )
}

/// The fields of a timestamp in one of the accepted forms, not yet held
/// to their ranges.
struct Parts {
    year: i64,
    month: i64,
    day: i64,
    has_time: bool,
    hour: i64,
    minute: i64,
    second: i64,
    nanos: u32,
    /// Sign (1 or -1), hours and minutes; `None` when no zone is written
    /// (`Z` is a zone: UTC).
    zone: Option<(i64, i64, i64)>,
}

impl Parts {
    fn read(text: &str) -> Option<Parts> {
        // Every byte of the grammar is ASCII, so reading bytes one at a time
        // never splits a character: a byte of a multi-byte character simply
        // matches nothing and the text is refused.
        let mut s = Scanner(text.trim_ascii().as_bytes());
        let year = s.digits(4)?;
        s.expect(b"-")?;
        let month = s.digits(2)?;
        s.expect(b"-")?;
        let day = s.digits(2)?;
        let mut parts = Parts {
            year,
            month,
            day,
            has_time: false,
            hour: 0,
            minute: 0,
            second: 0,
            nanos: 0,
            zone: None,
        };
        if s.is_empty() {
            return Some(parts);
        }
        s.expect(b"Tt ")?;
        parts.has_time = true;
        parts.hour = s.digits(2)?;
        s.expect(b":")?;
        parts.minute = s.digits(2)?;
        if s.expect(b":").is_some() {
            parts.second = s.digits(2)?;
            if s.expect(b".,").is_some() {
                parts.nanos = s.fraction()?;
            }
        }
        // YAML 1.1 timestamps allow blanks before the zone
        // (`2001-12-14 21:59:43.10 -05:00`).
        s.skip(b" \t");
        parts.zone = match s.expect(b"Zz+-") {
            None => None,
            Some(b'Z' | b'z') => Some((1, 0, 0)),
            Some(sign) => {
                let hours = s.digits(2)?;
                let minutes = if s.is_empty() {
                    0
                } else {
                    // `+hh:mm` and `+hhmm` are both ISO 8601.
                    let _ = s.expect(b":");
                    s.digits(2)?
                };
                Some((if sign == b'-' { -1 } else { 1 }, hours, minutes))
            }
        };
        s.is_empty().then_some(parts)
    }

    /// The first field out of its range, as what to do about it.
    fn out_of_range(&self) -> Option<String> {
        const MONTHS: [&str; 12] = [
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ];
        let Parts {
            year,
            month,
            day,
            hour,
            minute,
            second,
            ..
        } = *self;
        let named = usize::try_from(month - 1).ok().and_then(|i| MONTHS.get(i));
        let Some(name) = named else {
            return Some(format!(
                "there is no month {month:02}: months run from 01 to 12"
            ));
        };
        let days = days_in_month(year, month);
        if !(1..=days).contains(&day) {
            return Some(format!(
                "there is no day {day:02} in {name} {year:04}: it has {days} days"
            ));
        }
        if hour > 23 {
            return Some(format!(
                "there is no hour {hour:02}: hours run from 00 to 23 (midnight at the end of a day is 00:00 of the next)"
            ));
        }
        if minute > 59 {
            return Some(format!(
                "there is no minute {minute:02}: minutes run from 00 to 59"
            ));
        }
        if second > 60 {
            return Some(format!(
                "there is no second {second:02}: seconds run from 00 to 59 (60 for a leap second)"
            ));
        }
        match self.zone {
            Some((_, hours, minutes)) if hours > 23 || minutes > 59 => Some(format!(
                "there is no time zone offset {hours:02}:{minutes:02}: offsets run from 00:00 to 23:59"
            )),
            _ => None,
        }
    }
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

/// The date of a day counted from 1970-01-01: `days_from_civil` undone
/// (Howard Hinnant's algorithm). The state's timestamps and run ids are
/// written with it too.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_text_undoes_parse_instant() {
        for text in [
            "1970-01-01T00:00:00Z",
            "2000-02-29T23:59:59Z",
            "2026-11-20T08:00:00Z",
            "1969-12-31T23:59:59Z",
            "2400-12-31T12:30:05Z",
        ] {
            let (secs, _) = parse_instant(text).unwrap();
            assert_eq!(utc_text(secs), text);
        }
        let (secs, _) = parse_instant("2026-11-20T09:00:00+01:00").unwrap();
        assert_eq!(utc_text(secs), "2026-11-20T08:00:00Z");
        assert_eq!(zone_seconds("2026-11-20T09:00:00+01:00"), Some(3600));
        assert_eq!(zone_seconds("2026-11-20T09:00:00Z"), Some(0));
        assert_eq!(zone_seconds("2026-11-20T09:00:00"), None);
        assert_eq!(zone_seconds("2026-11-20"), None);
    }

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
    fn a_field_out_of_its_range_is_named() {
        for (text, said) in [
            ("2026-02-30", "no day 30 in February 2026: it has 28 days"),
            (
                "2024-02-30T10:00:00Z",
                "no day 30 in February 2024: it has 29 days",
            ),
            ("2026-13-01", "no month 13"),
            ("2026-00-01", "no month 00"),
            ("2026-11-24T24:00:00Z", "no hour 24"),
            ("2026-11-24T10:60Z", "no minute 60"),
            ("2026-11-24T10:00:61Z", "no second 61"),
            ("2026-11-24T10:00:00+24:00", "no time zone offset 24:00"),
        ] {
            assert_eq!(parse_instant(text), None, "{text:?}");
            let reason = out_of_range(text).unwrap_or_default();
            assert!(reason.contains(said), "{text:?}: {reason:?}");
        }
        // An instant, and a text in none of the forms, have no such reason.
        for text in [
            "2026-11-24T23:59:60Z",
            "2026-11-24",
            "yesterday",
            "2026-1-1",
        ] {
            assert_eq!(out_of_range(text), None, "{text:?}");
        }
    }

    #[test]
    fn a_time_without_a_zone_is_told_apart() {
        for text in [
            "2026-11-24T10:00:00",
            "2026-11-24 10:00",
            "2026-11-24t10:00:00.5",
        ] {
            assert!(lacks_zone(text), "{text:?}");
        }
        for text in [
            "2026-11-24",
            "2026-11-24T10:00:00Z",
            "2026-11-24T10:00:00z",
            "2026-11-24T10:00:00+0100",
            "2026-11-24 10:00:00 -05:00",
            "not a time",
        ] {
            assert!(!lacks_zone(text), "{text:?}");
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
