//! Generated binding: round trips, schema descriptions and decoding errors with paths.

use osprey_binding::{
    decode_element, encode_element, Base64Binary, DateTime, DecodeError, MaxOccurs, TypeDesc,
    XmlType,
};
use osprey_xml::Limits;
use proptest::prelude::*;

#[derive(XmlType, Debug, Clone, PartialEq)]
#[xml(namespace = "urn:t")]
enum Colour {
    #[xml(rename = "red")]
    Red,
    Green,
}

#[derive(XmlType, Debug, Clone, PartialEq)]
#[xml(namespace = "urn:t")]
struct Node {
    value: i32,
    next: Option<Box<Node>>,
}

#[derive(XmlType, Debug, Clone, PartialEq)]
#[xml(namespace = "urn:t", element = "everything")]
struct Everything {
    an_int: i32,
    a_long: i64,
    a_float: f32,
    a_double: f64,
    a_bool: bool,
    a_string: String,
    #[xml(rename = "when")]
    a_date: DateTime,
    bytes: Base64Binary,
    colour: Colour,
    maybe: Option<String>,
    many: Vec<i32>,
    list: Option<Node>,
}

fn list(values: &[i32]) -> Option<Node> {
    values.iter().rev().fold(None, |next, &value| {
        Some(Node {
            value,
            next: next.map(Box::new),
        })
    })
}

fn decode(xml: &str) -> Result<Everything, DecodeError> {
    decode_element::<Everything>(xml.as_bytes(), &Limits::default())
}

fn everything() -> impl Strategy<Value = Everything> {
    (
        (
            any::<i32>(),
            any::<i64>(),
            any::<f32>().prop_filter("NaN != NaN", |f| !f.is_nan()),
            any::<f64>().prop_filter("NaN", |f| !f.is_nan()),
        ),
        (
            any::<bool>(),
            "[^\u{0}-\u{8}\u{b}\u{c}\u{e}-\u{1f}\u{fffe}\u{ffff}]{0,20}",
            -10_000_000_000i64..10_000_000_000,
            0u32..1_000_000_000,
        ),
        (
            proptest::collection::vec(any::<u8>(), 0..40),
            any::<bool>(),
            proptest::option::of("[a-z]{0,5}"),
            proptest::collection::vec(any::<i32>(), 0..5),
            proptest::collection::vec(any::<i32>(), 0..30),
        ),
    )
        .prop_map(
            |(
                (an_int, a_long, a_float, a_double),
                (a_bool, a_string, secs, nanos),
                (bytes, red, maybe, many, nodes),
            )| Everything {
                an_int,
                a_long,
                a_float,
                a_double,
                a_bool,
                a_string,
                a_date: DateTime::from_unix(secs, nanos),
                bytes: Base64Binary(bytes),
                colour: if red { Colour::Red } else { Colour::Green },
                maybe,
                many,
                list: list(&nodes),
            },
        )
}

proptest! {
    #[test]
    fn decode_of_encode_is_identity(value in everything()) {
        let xml = encode_element(&value);
        prop_assert_eq!(decode(&xml).unwrap(), value);
    }

    #[test]
    fn decoder_never_panics_on_mutated_input(value in everything(), cut in 0usize..400, byte in any::<u8>()) {
        let mut xml = encode_element(&value).into_bytes();
        let at = cut % xml.len();
        xml[at] = byte;
        let _ = decode_element::<Everything>(&xml, &Limits::default());
        xml.truncate(at);
        let _ = decode_element::<Everything>(&xml, &Limits::default());
    }
}

const GOOD: &str = r#"<everything xmlns="urn:t"><anInt>1</anInt><aLong>2</aLong><aFloat>1.5</aFloat><aDouble>2.5</aDouble><aBool>true</aBool><aString>s</aString><when>2026-01-01T00:00:00Z</when><bytes>AAE=</bytes><colour>red</colour><many>3</many><many>4</many></everything>"#;

#[test]
fn good_document_decodes() {
    let v = decode(GOOD).unwrap();
    assert_eq!(
        (v.an_int, v.colour, v.many, v.bytes.0),
        (1, Colour::Red, vec![3, 4], vec![0, 1])
    );
}

#[test]
fn wrong_type_names_value_type_and_path() {
    let err = decode(&GOOD.replace("<anInt>1</anInt>", "<anInt>abc</anInt>")).unwrap_err();
    let DecodeError::InvalidValue {
        value,
        xsd_type,
        path,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (value.as_str(), *xsd_type, path.to_string()),
        ("abc", "xsd:int", "everything/anInt".into())
    );
}

#[test]
fn missing_element_is_named() {
    let err = decode(&GOOD.replace("<aBool>true</aBool>", "")).unwrap_err();
    let DecodeError::UnexpectedElement {
        found,
        expected,
        path,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (found.local(), *expected, path.to_string()),
        ("aString", Some("aBool"), "everything".into())
    );
    let err = decode(r#"<everything xmlns="urn:t"><anInt>1</anInt></everything>"#).unwrap_err();
    assert!(
        matches!(err, DecodeError::MissingElement { name: "aLong", .. }),
        "{err:?}"
    );
}

#[test]
fn extra_element_is_named_with_its_path() {
    let deep = GOOD.replace(
        "<many>3</many>",
        "<list><value>1</value><next><value>2</value><bogus/></next></list>",
    );
    let err = decode(&deep).unwrap_err();
    // `list` was moved before `many`, so the sequence order is broken there: the decoder
    // reports the first element that is out of place.
    assert!(
        matches!(&err, DecodeError::UnexpectedElement { .. }),
        "{err:?}"
    );
    let nested = GOOD.replace(
        "</many></everything>",
        "</many><list><value>1</value><next><value>2</value><bogus/></next></list></everything>",
    );
    let DecodeError::UnexpectedElement { found, path, .. } = decode(&nested).unwrap_err() else {
        panic!()
    };
    assert_eq!(
        (found.local(), path.to_string()),
        ("bogus", "everything/list/next".into())
    );
}

#[test]
fn wrong_namespace_is_an_unexpected_element() {
    let err = decode(&GOOD.replace(
        r#"<everything xmlns="urn:t">"#,
        r#"<everything xmlns="urn:other">"#,
    ))
    .unwrap_err();
    assert!(matches!(
        err,
        DecodeError::UnexpectedElement {
            expected: Some("everything"),
            ..
        }
    ));
}

/// `GOOD` with every element written with the prefix `t`: no child is a plain leaf.
fn prefixed(doc: &str) -> String {
    doc.replace("</", "\u{0}")
        .replace('<', "<t:")
        .replace('\u{0}', "</t:")
        .replacen(r#"xmlns="urn:t""#, r#"xmlns:t="urn:t""#, 1)
}

#[test]
fn leaves_read_whole_decode_as_leaves_read_in_steps() {
    // Unprefixed children are read as leaves in one step; prefixed ones the general way.
    let plain = GOOD
        .replace("<aString>s</aString>", "<aString>a &amp; b</aString>")
        .replace("</colour>", "</colour><maybe/>");
    let quick = decode(&plain).unwrap();
    assert_eq!(quick, decode(&prefixed(&plain)).unwrap());
    assert_eq!(
        (quick.a_string.as_str(), quick.maybe.as_deref()),
        ("a & b", Some(""))
    );
    // A wrong value is named with its path either way.
    let wrong = GOOD.replace("<aFloat>1.5</aFloat>", "<aFloat>x</aFloat>");
    for doc in [wrong.clone(), prefixed(&wrong)] {
        let err = decode(&doc).unwrap_err();
        assert!(
            matches!(&err, DecodeError::InvalidValue { path, .. } if path.to_string() == "everything/aFloat"),
            "{err:?}"
        );
    }
    // Unprefixed children of a prefixed parent are in no namespace: not the fields.
    let err = decode(
        &GOOD
            .replacen(
                r#"<everything xmlns="urn:t">"#,
                r#"<t:everything xmlns:t="urn:t">"#,
                1,
            )
            .replace("</everything>", "</t:everything>"),
    )
    .unwrap_err();
    let DecodeError::UnexpectedElement {
        found, expected, ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (found.ns(), found.local(), *expected),
        ("", "anInt", Some("anInt"))
    );
}

#[test]
fn schema_describes_fields_and_recursion() {
    let TypeDesc::Complex(c) = Everything::schema() else {
        panic!()
    };
    assert!(c.anonymous);
    let names: Vec<_> = c
        .fields
        .iter()
        .map(|f| (f.name, f.min_occurs, f.max_occurs))
        .collect();
    assert_eq!(names[0], ("anInt", 1, MaxOccurs::One));
    assert!(names.contains(&("when", 1, MaxOccurs::One)));
    assert!(names.contains(&("maybe", 0, MaxOccurs::One)));
    assert!(names.contains(&("many", 0, MaxOccurs::Unbounded)));
    let TypeDesc::Complex(node) = Node::schema() else {
        panic!()
    };
    let next_ty = (node.fields[1].ty)();
    assert!(
        std::ptr::eq(next_ty, Node::schema()),
        "Box<Node> refers back to Node"
    );
    assert!(matches!(Colour::schema(), TypeDesc::Enumeration(e) if e.values == ["red", "Green"]));
}
