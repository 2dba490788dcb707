//! Number and boolean lexical forms of XML Schema (XSD 1.0 Part 2 §3.2).

/// Formats an `xsd:float` into `buf`, returning the text (`INF`, `-INF`, `NaN` for the
/// special values, shortest round-trip digits otherwise).
pub fn format_f32(v: f32, buf: &mut ryu::Buffer) -> &str {
    if v.is_finite() {
        buf.format_finite(v)
    } else {
        special(v.is_nan(), v.is_sign_negative())
    }
}

/// Formats an `xsd:double` like [`format_f32`].
pub fn format_f64(v: f64, buf: &mut ryu::Buffer) -> &str {
    if v.is_finite() {
        buf.format_finite(v)
    } else {
        special(v.is_nan(), v.is_sign_negative())
    }
}

fn special(nan: bool, negative: bool) -> &'static str {
    match (nan, negative) {
        (true, _) => "NaN",
        (false, true) => "-INF",
        (false, false) => "INF",
    }
}

/// Parses an `xsd:float`; surrounding XML whitespace is allowed (the type collapses it).
/// Rust's own spellings that XSD does not have (`inf`, `infinity`, `nan`) are refused.
pub fn parse_f32(s: &str) -> Option<f32> {
    parse_f64_like(s, |t| t.parse::<f32>().ok(), f32::INFINITY, f32::NAN)
}

/// Parses an `xsd:double`, as [`parse_f32`].
pub fn parse_f64(s: &str) -> Option<f64> {
    parse_f64_like(s, |t| t.parse::<f64>().ok(), f64::INFINITY, f64::NAN)
}

fn parse_f64_like<T: std::ops::Neg<Output = T>>(
    s: &str,
    parse: impl Fn(&str) -> Option<T>,
    inf: T,
    nan: T,
) -> Option<T> {
    let t = s.trim_matches(is_xml_space);
    match t {
        "INF" | "+INF" => Some(inf),
        "-INF" => Some(-inf),
        "NaN" => Some(nan),
        // Only digits, sign, point and exponent reach Rust's parser.
        _ if !t.is_empty()
            && t.bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E')) =>
        {
            parse(t)
        }
        _ => None,
    }
}

/// Parses an `xsd:boolean`: `true`, `false`, `1` or `0`.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s.trim_matches(is_xml_space) {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

fn is_xml_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_use_xsd_spellings() {
        let mut b = ryu::Buffer::new();
        assert_eq!(format_f32(0.5, &mut b), "0.5");
        assert_eq!(format_f32(f32::INFINITY, &mut b), "INF");
        assert_eq!(format_f64(f64::NEG_INFINITY, &mut b), "-INF");
        assert_eq!(format_f64(f64::NAN, &mut b), "NaN");
        assert_eq!(parse_f32(" 19.5 "), Some(19.5));
        assert_eq!(parse_f32("-INF"), Some(f32::NEG_INFINITY));
        assert_eq!(parse_f64("1e3"), Some(1000.0));
        assert!(parse_f64("NaN").is_some_and(f64::is_nan));
        assert_eq!(parse_f32("inf"), None);
        assert_eq!(parse_f32("abc"), None);
        assert_eq!(parse_f32(""), None);
    }

    #[test]
    fn booleans_accept_the_four_lexical_forms() {
        assert_eq!(parse_bool("true"), Some(true));
        assert_eq!(parse_bool("0"), Some(false));
        assert_eq!(parse_bool("yes"), None);
    }
}
