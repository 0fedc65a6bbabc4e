//! Durations as people write them: `500ms`, `90s`, `10m`, `1h`, `1m30s`,
//! `1m 30s`.

use std::time::Duration;

/// Parses a duration; the error says what was expected.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("a duration cannot be empty".to_string());
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(format!("`{text}` is not a duration"));
        }
        let number: u64 = rest[..digits]
            .parse()
            .map_err(|_| format!("`{text}` is too large"))?;
        // Spaces may stand between a number and its unit and between the
        // parts (`10 m`, `1m 30s`), as people write them.
        rest = rest[digits..].trim_start();
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c.is_whitespace())
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = rest[unit_len..].trim_start();
        let part = match unit {
            "ms" => Duration::from_millis(number),
            "s" => Duration::from_secs(number),
            "m" => Duration::from_secs(number.saturating_mul(60)),
            "h" => Duration::from_secs(number.saturating_mul(3600)),
            "" => return Err(format!("`{text}` needs a unit: ms, s, m or h")),
            fraction if fraction.starts_with(['.', ',']) => {
                return Err(format!(
                    "`{text}` has a fraction: write it in whole numbers of a smaller unit (`1500ms`, `1m30s`)"
                ))
            }
            other => {
                return Err(format!(
                    "`{other}` is not a unit of time: use ms, s, m or h"
                ))
            }
        };
        total = total.saturating_add(part);
    }
    if total.is_zero() {
        return Err("a timeout of zero would stop every check at once".to_string());
    }
    within_limit(total, text)
}

/// The longest timeout: a check that may run for more than a week is one
/// that never ends.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 3600);

/// `duration`, unless it is longer than `MAX_TIMEOUT`.
pub fn within_limit(duration: Duration, text: &str) -> Result<Duration, String> {
    if duration > MAX_TIMEOUT {
        return Err(format!(
            "`{text}` is longer than a week, the longest timeout (\"168h\")"
        ));
    }
    Ok(duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1m 30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("10 m"), Ok(Duration::from_secs(600)));
        assert!(parse_duration("5 sec").unwrap_err().contains("`sec`"));
        assert!(parse_duration("1 m 30").unwrap_err().contains("unit"));
        assert_eq!(parse_duration("168h"), Ok(MAX_TIMEOUT));
        assert!(parse_duration("2562047788015215h")
            .unwrap_err()
            .contains("longer than a week"));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("10").unwrap_err().contains("unit"));
        assert!(parse_duration("5d").unwrap_err().contains("`d`"));
        assert!(parse_duration("1.5s")
            .unwrap_err()
            .contains("has a fraction"));
        assert!(parse_duration("0s").is_err());
    }
}
