//! Validation of an element's content against a type description, without building a
//! value: what the generated decoders check, for a handler that validates before the
//! operation (or on another machine, where the service's Rust types are not at hand).

use osprey_xml::{parse_bool, parse_f32, parse_f64, XmlReader};

use crate::{DateTime, DecodeError, MaxOccurs, TypeDesc};

/// Checks the content of the element whose start tag `r` has just read, through its end
/// tag, against `ty`. Errors carry the path below that element, like the decoders'.
///
/// # Errors
/// [`DecodeError`]: an unexpected or missing element, an invalid value, or bad XML.
pub fn validate_content(r: &mut XmlReader<'_>, ty: &TypeDesc) -> Result<(), DecodeError> {
    match ty {
        TypeDesc::Builtin(name) => {
            let text = r.read_text()?;
            check_builtin(name, &text)
        }
        TypeDesc::Enumeration(e) => {
            let text = r.read_text()?;
            let t = text.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'));
            if e.values.contains(&t) {
                Ok(())
            } else {
                Err(DecodeError::invalid(&text, e.name))
            }
        }
        TypeDesc::AnyContent => Ok(r.skip_element()?),
        TypeDesc::Complex(c) => {
            let mut child = r.next_child()?;
            for f in c.fields {
                let fty = (f.ty)();
                let max = match f.max_occurs {
                    MaxOccurs::One => 1,
                    MaxOccurs::Unbounded => u32::MAX,
                };
                let mut n = 0;
                while n < max {
                    let Some(s) = &child else { break };
                    // An xsd:any particle takes elements of any name.
                    if !matches!(fty, TypeDesc::AnyContent) && !s.is(c.namespace, f.name) {
                        break;
                    }
                    validate_content(r, fty).map_err(|e| e.in_element(f.name))?;
                    n += 1;
                    child = r.next_child()?;
                }
                if n < f.min_occurs {
                    return Err(DecodeError::missing(f.name, child));
                }
            }
            match child {
                Some(s) => Err(DecodeError::unexpected(&s)),
                None => Ok(()),
            }
        }
    }
}

/// Whether `text` is a valid value of built-in type `name` (types Osprey does not bind
/// are accepted as text).
fn check_builtin(name: &'static str, text: &str) -> Result<(), DecodeError> {
    let t = text.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'));
    let ok = match name {
        "byte" => t.parse::<i8>().is_ok(),
        "short" => t.parse::<i16>().is_ok(),
        "int" => t.parse::<i32>().is_ok(),
        "long" => t.parse::<i64>().is_ok(),
        "unsignedByte" => t.parse::<u8>().is_ok(),
        "unsignedShort" => t.parse::<u16>().is_ok(),
        "unsignedInt" => t.parse::<u32>().is_ok(),
        "unsignedLong" => t.parse::<u64>().is_ok(),
        "float" => parse_f32(text).is_some(),
        "double" => parse_f64(text).is_some(),
        "boolean" => parse_bool(text).is_some(),
        "dateTime" => DateTime::parse(text).is_some(),
        "base64Binary" => {
            use base64::Engine as _;
            let compact: String = t.split_ascii_whitespace().collect();
            base64::engine::general_purpose::STANDARD
                .decode(compact)
                .is_ok()
        }
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(DecodeError::invalid(text, name))
    }
}

#[cfg(test)]
mod tests {
    use osprey_xml::Limits;

    use super::*;
    use crate::{XmlElement, XmlType};

    #[derive(crate::XmlType, Debug, Clone, PartialEq)]
    #[xml(namespace = "urn:v", element = "node")]
    struct Node {
        n: i32,
        tag: Vec<String>,
        when: Option<DateTime>,
        next: Option<Box<Node>>,
    }

    fn check(xml: &str) -> Result<(), String> {
        let mut r = XmlReader::new(xml.as_bytes(), &Limits::default()).unwrap();
        let root = r.next_child().unwrap().unwrap();
        assert!(root.is(Node::NS, Node::LOCAL));
        validate_content(&mut r, Node::schema()).map_err(|e| e.in_element(Node::LOCAL).to_string())
    }

    #[test]
    fn what_the_decoder_accepts_the_validator_accepts() {
        let ok = r#"<node xmlns="urn:v"><n>1</n><tag>a</tag><tag>b</tag><when>2026-11-22T10:00:00Z</when><next><n>2</n></next></node>"#;
        check(ok).unwrap();
        crate::decode_element::<Node>(ok.as_bytes(), &Limits::default()).unwrap();
    }

    #[test]
    fn errors_name_the_element_and_its_path() {
        let bad_int = r#"<node xmlns="urn:v"><n>1</n><next><n>x</n></next></node>"#;
        let e = check(bad_int).unwrap_err();
        assert!(e.contains("/node/next/n"), "{e}");
        let missing = r#"<node xmlns="urn:v"><tag>a</tag></node>"#;
        assert!(check(missing).unwrap_err().contains("expected n"));
        let extra = r#"<node xmlns="urn:v"><n>1</n><when>2026-11-22T10:00:00Z</when><when>2026-11-22T10:00:00Z</when></node>"#;
        assert!(check(extra).unwrap_err().contains("unexpected element"));
        let date = r#"<node xmlns="urn:v"><n>1</n><when>soon</when></node>"#;
        assert!(check(date).unwrap_err().contains("dateTime"));
    }
}
