//! `xsd:dateTime` (XML Schema Part 2 §3.2.7): an instant with an optional UTC offset.

use std::fmt;

use osprey_xml::{XmlReader, XmlWriter};

use crate::{DecodeError, TypeDesc, XmlType};

/// A date and time as XML Schema writes it: `2026-11-22T10:30:00.25Z`.
///
/// Kept as seconds and nanoseconds since 1970-01-01T00:00:00 in the written local
/// time, plus the offset when one was given, so that a value round-trips exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DateTime {
    /// Seconds since the epoch, in the value's own (offset) time.
    pub local_seconds: i64,
    /// Fraction of the second, in nanoseconds.
    pub nanos: u32,
    /// Offset from UTC in minutes (`Some(0)` for `Z`); `None` when the value had none.
    pub offset_minutes: Option<i16>,
}

impl DateTime {
    /// The instant `unix_seconds` after the epoch, in UTC.
    pub fn from_unix(unix_seconds: i64, nanos: u32) -> Self {
        DateTime {
            local_seconds: unix_seconds,
            nanos,
            offset_minutes: Some(0),
        }
    }

    /// Seconds since the Unix epoch in UTC (an absent offset is taken as UTC).
    pub fn unix_seconds(&self) -> i64 {
        self.local_seconds - 60 * i64::from(self.offset_minutes.unwrap_or(0))
    }

    /// Parses the XSD lexical form.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'));
        let (neg, s) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let b = s.as_bytes();
        let year_len = b.iter().position(|&c| c == b'-')?;
        if year_len < 4 || b.len() < year_len + 15 {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let t = s.get(r)?;
            t.bytes()
                .all(|c| c.is_ascii_digit())
                .then(|| t.parse().ok())?
        };
        let mut year = num(0..year_len)?;
        if neg {
            year = -year;
        }
        let rest = &b[year_len..];
        if rest[0] != b'-'
            || rest[3] != b'-'
            || rest[6] != b'T'
            || rest[9] != b':'
            || rest[12] != b':'
        {
            return None;
        }
        let at = year_len;
        let (month, day) = (num(at + 1..at + 3)?, num(at + 4..at + 6)?);
        let (hour, minute, second) = (
            num(at + 7..at + 9)?,
            num(at + 10..at + 12)?,
            num(at + 13..at + 15)?,
        );
        if !(1..=12).contains(&month)
            || day < 1
            || day > days_in_month(year, month)
            || hour > 24
            || minute > 59
            || second > 59
            || (hour == 24 && (minute, second) != (0, 0))
        {
            return None;
        }
        let mut tail = &s[at + 15..];
        let mut nanos = 0u32;
        if let Some(frac) = tail.strip_prefix('.') {
            let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                return None;
            }
            for (i, d) in frac.bytes().take(9).take(digits).enumerate() {
                nanos += u32::from(d - b'0') * 10u32.pow(8 - i as u32);
            }
            tail = &frac[digits..];
        }
        let offset_minutes = match tail {
            "" => None,
            "Z" => Some(0),
            _ => {
                let sign = match tail.as_bytes()[0] {
                    b'+' => 1,
                    b'-' => -1,
                    _ => return None,
                };
                let tb = tail.as_bytes();
                if tb.len() != 6 || tb[3] != b':' {
                    return None;
                }
                let h: i16 = tail[1..3].parse().ok()?;
                let m: i16 = tail[4..6].parse().ok()?;
                if h > 14 || m > 59 {
                    return None;
                }
                Some(sign * (h * 60 + m))
            }
        };
        let days = days_from_civil(year, month, day);
        Some(DateTime {
            local_seconds: days * 86_400 + hour * 3600 + minute * 60 + second,
            nanos,
            offset_minutes,
        })
    }
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.local_seconds.div_euclid(86_400);
        let secs = self.local_seconds.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        if y < 0 {
            write!(f, "-{:04}", -y)?;
        } else {
            write!(f, "{y:04}")?;
        }
        write!(
            f,
            "-{m:02}-{d:02}T{:02}:{:02}:{:02}",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        )?;
        if self.nanos > 0 {
            let frac = format!("{:09}", self.nanos);
            write!(f, ".{}", frac.trim_end_matches('0'))?;
        }
        match self.offset_minutes {
            None => Ok(()),
            Some(0) => f.write_str("Z"),
            Some(o) => write!(
                f,
                "{}{:02}:{:02}",
                if o < 0 { '-' } else { '+' },
                o.abs() / 60,
                o.abs() % 60
            ),
        }
    }
}

impl XmlType for DateTime {
    fn schema() -> &'static TypeDesc {
        static DESC: TypeDesc = TypeDesc::Builtin("dateTime");
        &DESC
    }
    fn encode(&self, w: &mut XmlWriter) {
        w.text(&self.to_string());
    }
    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        Self::from_text(&r.read_text()?)
    }
    const TEXT_ONLY: bool = true;
    fn from_text(text: &str) -> Result<Self, DecodeError> {
        DateTime::parse(text).ok_or_else(|| DecodeError::invalid(text, "xsd:dateTime"))
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian calendar).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xsd_forms_round_trip() {
        for s in [
            "2026-11-22T10:30:00Z",
            "1970-01-01T00:00:00",
            "2000-02-29T23:59:59.125+05:30",
            "-0044-03-15T12:00:00-01:00",
        ] {
            assert_eq!(
                DateTime::parse(s).map(|d| d.to_string()).as_deref(),
                Some(s)
            );
        }
        assert_eq!(
            DateTime::parse("1970-01-02T00:00:00Z").map(|d| d.unix_seconds()),
            Some(86_400)
        );
        assert_eq!(DateTime::parse("2001-02-29T00:00:00Z"), None);
        assert_eq!(DateTime::parse("2001-01-01 00:00:00Z"), None);
        assert_eq!(DateTime::parse("garbage"), None);
    }
}
