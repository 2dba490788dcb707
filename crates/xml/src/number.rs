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

/// Appends the [`format_f32`] text of `v` to `out`.
pub(crate) fn push_f32(v: f32, out: &mut Vec<u8>) {
    if !push_short_decimal(v, out) {
        out.extend_from_slice(format_f32(v, &mut ryu::Buffer::new()).as_bytes());
    }
}

/// Appends the [`format_f64`] text of `v` to `out`.
pub(crate) fn push_f64(v: f64, out: &mut Vec<u8>) {
    out.extend_from_slice(format_f64(v, &mut ryu::Buffer::new()).as_bytes());
}

/// Writes `v` as ryu would when it is `n / 10^k` for an integer `0 < |n| < 2^24` and
/// `k <= 3` (values such as `19.5`, `0.25` or `1234.0`, the common ones in messages), and
/// returns true; otherwise writes nothing and returns false.
///
/// Why this is ryu's output: with `k` the smallest such power, `n` ends in a non-zero digit
/// (or `k = 0`), and `|v| < 2^24 / 10^k` makes half of `v`'s ulp smaller than `10^-k`. So
/// the interval of reals that round to `v` holds no number with fewer decimals, nor another
/// with `k` decimals: `v`'s exact decimal expansion is the shortest that reads back as `v`,
/// which is what ryu writes; at these magnitudes (0.001 to below 2^24) ryu writes it
/// without an exponent, and integers with a trailing `.0`. The products are exact: `v` has
/// a 24-bit significand and 1000 a 7-bit one, and f64 carries 53 bits.
fn push_short_decimal(v: f32, out: &mut Vec<u8>) -> bool {
    const EXACT: f64 = 16_777_216.0;
    let v = f64::from(v);
    for (k, scale) in [1.0, 10.0, 100.0, 1000.0].into_iter().enumerate() {
        let scaled = v * scale;
        if scaled.abs() >= EXACT || scaled == 0.0 {
            return false;
        }
        // Below 2^24 in magnitude, the conversion to i64 truncates exactly, and gives
        // back `scaled` only when it is an integer (without `fract`, a libm call here).
        #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
        let n = scaled as i64;
        #[allow(clippy::cast_precision_loss)]
        if n as f64 == scaled {
            push_scaled(n, k, out);
            return true;
        }
    }
    false
}

/// Writes `n / 10^k` in plain decimal notation (`k = 0`: `n.0`).
fn push_scaled(n: i64, k: usize, out: &mut Vec<u8>) {
    if n < 0 {
        out.push(b'-');
    }
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(n.unsigned_abs()).as_bytes();
    if k == 0 {
        out.extend_from_slice(digits);
        out.extend_from_slice(b".0");
    } else if digits.len() > k {
        let (int, frac) = digits.split_at(digits.len() - k);
        out.extend_from_slice(int);
        out.push(b'.');
        out.extend_from_slice(frac);
    } else {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', k - digits.len()));
        out.extend_from_slice(digits);
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
    const POW10: [f32; 11] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10];
    if let Some((negative, m, k)) = short_decimal(s, 1 << 24, POW10.len() - 1) {
        // Exact: m <= 2^24.
        #[allow(clippy::cast_precision_loss)]
        let v = m as f32 / POW10[k];
        return Some(if negative { -v } else { v });
    }
    parse_f64_like(s, |t| t.parse::<f32>().ok(), f32::INFINITY, f32::NAN)
}

/// Parses an `xsd:double`, as [`parse_f32`].
pub fn parse_f64(s: &str) -> Option<f64> {
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    if let Some((negative, m, k)) = short_decimal(s, 1 << 53, POW10.len() - 1) {
        // Exact: m <= 2^53.
        #[allow(clippy::cast_precision_loss)]
        let v = m as f64 / POW10[k];
        return Some(if negative { -v } else { v });
    }
    parse_f64_like(s, |t| t.parse::<f64>().ok(), f64::INFINITY, f64::NAN)
}

/// The common case of a float's text, a plain decimal such as `19.5` or `-0.25` (sign,
/// digits, an optional point and digits, at least one digit, no exponent, no
/// whitespace), as (negative, m, k) for the value `m / 10^k`, when `m <= max_m` and
/// `k <= max_k`; else `None`, and the full parser decides.
///
/// With `m` and `10^k` both exact in the target type (`max_m` is 2^24 for f32 and 2^53
/// for f64; `10^k` is exact up to 10^10 and 10^22), one IEEE division gives the correctly
/// rounded value, the same as the full parser's (Clinger's fast path).
fn short_decimal(s: &str, max_m: u64, max_k: usize) -> Option<(bool, u64, usize)> {
    let b = s.as_bytes();
    let (negative, mut i) = match b.first()? {
        b'-' => (true, 1),
        b'+' => (false, 1),
        _ => (false, 0),
    };
    let (mut m, mut digits, mut k, mut point) = (0u64, 0usize, 0usize, false);
    while let Some(&c) = b.get(i) {
        match c {
            b'0'..=b'9' => {
                m = m.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
                if m > max_m {
                    return None;
                }
                digits += 1;
                k += usize::from(point);
            }
            b'.' if !point => point = true,
            _ => return None,
        }
        i += 1;
    }
    (digits > 0 && k <= max_k).then_some((negative, m, k))
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

    fn pushed(v: f32) -> String {
        let mut out = Vec::new();
        push_f32(v, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_short_decimal_path_writes_what_ryu_writes() {
        let mut b = ryu::Buffer::new();
        // Values with up to three decimals, around zero and up to past 2^24, where the
        // short path stops, and their neighbours one ulp away (which it must leave to ryu).
        let ranges = [
            (-20_000i64, 20_000i64),
            (16_776_000, 16_778_500),
            (-16_778_500, -16_776_000),
        ];
        for (from, to) in ranges {
            for n in from..to {
                for scale in [1.0f32, 10.0, 100.0, 1000.0] {
                    #[allow(clippy::cast_precision_loss)]
                    let v = n as f32 / scale;
                    for w in [
                        v,
                        f32::from_bits(v.to_bits() + 1),
                        f32::from_bits(v.to_bits().saturating_sub(1)),
                    ] {
                        assert_eq!(pushed(w), format_f32(w, &mut b), "{w:e}");
                    }
                }
            }
        }
        for v in [
            0.0f32,
            -0.0,
            0.001,
            0.0005,
            1e-7,
            1e7,
            1.5e7,
            3e38,
            f32::MIN_POSITIVE,
            f32::NAN,
            f32::INFINITY,
        ] {
            assert_eq!(pushed(v), format_f32(v, &mut b), "{v:e}");
            assert_eq!(pushed(-v), format_f32(-v, &mut b), "{:e}", -v);
        }
        assert_eq!(pushed(19.5), "19.5");
        assert_eq!(pushed(-0.025), "-0.025");
        assert_eq!(pushed(7.0), "7.0");
    }

    proptest::proptest! {
        #[test]
        fn any_float_is_written_as_ryu_writes_it(bits in proptest::prelude::any::<u32>()) {
            let v = f32::from_bits(bits);
            let mut b = ryu::Buffer::new();
            proptest::prop_assert_eq!(pushed(v), format_f32(v, &mut b));
        }

        #[test]
        fn plain_decimals_parse_as_the_full_parser_parses_them(s in "[+-]?[0-9]{0,12}([.][0-9]{0,12})?") {
            let ours32 = parse_f32(&s).map(f32::to_bits);
            proptest::prop_assert_eq!(ours32, s.parse::<f32>().ok().map(f32::to_bits));
            let ours64 = parse_f64(&s).map(f64::to_bits);
            proptest::prop_assert_eq!(ours64, s.parse::<f64>().ok().map(f64::to_bits));
        }

        #[test]
        fn short_decimals_parse_as_the_full_parser_parses_them(m in 0u64..(1 << 53), k in 0usize..23, negative in proptest::prelude::any::<bool>()) {
            let digits = format!("{m:0>width$}", width = k + 1);
            let (int, frac) = digits.split_at(digits.len() - k);
            let s = format!("{}{int}.{frac}", if negative { "-" } else { "" });
            proptest::prop_assert_eq!(parse_f64(&s).map(f64::to_bits), s.parse::<f64>().ok().map(f64::to_bits));
            proptest::prop_assert_eq!(parse_f32(&s).map(f32::to_bits), s.parse::<f32>().ok().map(f32::to_bits));
        }
    }

    #[test]
    fn booleans_accept_the_four_lexical_forms() {
        assert_eq!(parse_bool("true"), Some(true));
        assert_eq!(parse_bool("0"), Some(false));
        assert_eq!(parse_bool("yes"), None);
    }
}
