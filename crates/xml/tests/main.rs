//! Integration tests of the XML layer: namespaces, refused constructs, limits, the writer.

use osprey_xml::{Limits, Scope, XmlError, XmlEvent, XmlReader, XmlWriter};
use proptest::prelude::*;

/// Reads the whole document, returning the first error.
fn read_all(doc: &[u8], limits: &Limits) -> Result<Vec<String>, XmlError> {
    let mut r = XmlReader::new(doc, limits)?;
    let mut out = Vec::new();
    loop {
        match r.next_event()? {
            XmlEvent::Start(s) => out.push(format!("<{{{}}}{}", s.ns(), s.local())),
            XmlEvent::End => out.push(">".into()),
            XmlEvent::Text(t) => out.push(format!("'{t}'")),
            XmlEvent::Eof => return Ok(out),
        }
    }
}

#[test]
fn prefixes_and_default_namespaces_resolve() {
    let doc = br#"<?xml version="1.0" encoding="utf-8"?>
<s:E xmlns:s="urn:s" xmlns="urn:d"><a x="1" s:y="2"><b xmlns="">t</b></a></s:E>"#;
    let mut r = XmlReader::new(doc, &Limits::default()).unwrap();
    let e = r.next_child().unwrap().unwrap();
    assert!(e.is("urn:s", "E"));
    let _a = r.next_child().unwrap().unwrap();
    let attrs: Vec<_> = r
        .attributes()
        .iter()
        .map(|a| (a.ns.to_string(), a.local, a.value.to_string()))
        .collect();
    assert_eq!(
        attrs,
        vec![
            ("".into(), "x", "1".into()),
            ("urn:s".into(), "y", "2".into())
        ]
    );
    let b = r.next_child().unwrap().unwrap();
    assert!(b.is("", "b"));
    assert_eq!(r.read_text().unwrap(), "t");
}

#[test]
fn entities_and_cdata_merge_into_one_text() {
    let got = read_all(
        b"<a>x &lt; y &amp;&#65;&#x42;<![CDATA[<z>]]></a>",
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(got, vec!["<{}a", "'x < y &AB<z>'", ">"]);
}

#[test]
fn doctype_is_refused_so_billion_laughs_cannot_expand() {
    let doc = br#"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]><a>&lol2;</a>"#;
    assert_eq!(
        read_all(doc, &Limits::default()),
        Err(XmlError::DoctypeForbidden)
    );
}

#[test]
fn external_entity_is_refused() {
    let doc = br#"<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>"#;
    assert_eq!(
        read_all(doc, &Limits::default()),
        Err(XmlError::DoctypeForbidden)
    );
    let undeclared = read_all(b"<a>&x;</a>", &Limits::default());
    assert_eq!(
        undeclared,
        Err(XmlError::UndeclaredEntity { name: "x".into() })
    );
}

#[test]
fn processing_instructions_are_refused() {
    let r = read_all(b"<a><?php evil() ?></a>", &Limits::default());
    assert_eq!(r, Err(XmlError::ProcessingInstructionForbidden));
}

#[test]
fn non_utf8_encodings_are_refused() {
    assert!(matches!(
        read_all(b"<a>\xff</a>", &Limits::default()),
        Err(XmlError::InvalidUtf8 { offset: 3 })
    ));
    let latin = br#"<?xml version="1.0" encoding="ISO-8859-1"?><a/>"#;
    assert!(matches!(
        read_all(latin, &Limits::default()),
        Err(XmlError::UnsupportedEncoding { .. })
    ));
}

#[test]
fn deep_nesting_stops_at_the_depth_limit() {
    let doc = format!("{}{}", "<a>".repeat(100_000), "</a>".repeat(100_000));
    let err = read_all(doc.as_bytes(), &Limits::default()).unwrap_err();
    assert_eq!(
        err,
        XmlError::LimitExceeded {
            limit: "nesting depth",
            max: 64
        }
    );
}

#[test]
fn every_limit_is_enforced() {
    let tight = Limits {
        max_message_size: 1000,
        max_elements: 3,
        max_attributes: 2,
        max_name_len: 8,
        max_text_len: 5,
        ..Limits::default()
    };
    let cases: [(&[u8], &str); 5] = [
        (&[b' '; 1001], "message size"),
        (b"<a><b/><b/><b/></a>", "element count"),
        (br#"<a x="1" y="2" z="3"/>"#, "attribute count"),
        (b"<abcdefghij/>", "name length"),
        (b"<a>123456</a>", "text length"),
    ];
    for (doc, limit) in cases {
        match read_all(doc, &tight) {
            Err(XmlError::LimitExceeded { limit: l, .. }) => assert_eq!(l, limit),
            other => panic!("{limit}: {other:?}"),
        }
    }
}

#[test]
fn truncated_and_malformed_documents_fail() {
    assert_eq!(
        read_all(b"<a><b>", &Limits::default()),
        Err(XmlError::UnexpectedEof)
    );
    assert!(matches!(
        read_all(b"<a></b>", &Limits::default()),
        Err(XmlError::Malformed { .. })
    ));
    assert!(read_all(b"<a/><b/>", &Limits::default()).is_err());
    assert!(read_all(b"", &Limits::default()).is_err());
    assert!(matches!(
        read_all(b"<p:a/>", &Limits::default()),
        Err(XmlError::UndeclaredPrefix { .. })
    ));
    assert!(read_all(br#"<a x="1" x="2"/>"#, &Limits::default()).is_err());
}

#[test]
fn fragment_reader_sees_outer_bindings() {
    let doc = r#"<s:E xmlns:s="urn:s"><s:B><s:P>1</s:P></s:B></s:E>"#;
    let start = doc.find("<s:P").unwrap();
    let end = doc.find("</s:B>").unwrap();
    let mut scope = Scope::default();
    scope.bind("s", "urn:s");
    let mut r = XmlReader::fragment(&doc[start..end], start, &scope, &Limits::default());
    let XmlEvent::Start(p) = r.next_event().unwrap() else {
        panic!()
    };
    assert!(p.is("urn:s", "P"));
    assert_eq!(p.offset(), start);
    assert_eq!(r.read_text().unwrap(), "1");
    assert_eq!(r.next_event().unwrap(), XmlEvent::Eof);
}

#[test]
fn writer_closes_empty_elements_and_tracks_default_namespace() {
    let mut w = XmlWriter::new();
    w.start_prefixed("s", "E");
    w.declare("s", "urn:s");
    w.start("urn:a", "x");
    w.attribute("k", "a\"b");
    w.start("urn:a", "y");
    w.end();
    w.start("urn:b", "z");
    w.text("1<2");
    w.end();
    w.end();
    w.end();
    assert_eq!(
        w.as_str(),
        r#"<s:E xmlns:s="urn:s"><x xmlns="urn:a" k="a&quot;b"><y/><z xmlns="urn:b">1&lt;2</z></x></s:E>"#
    );
}

proptest! {
    #[test]
    fn text_and_attributes_round_trip(text in "[^\u{0}-\u{8}\u{b}\u{c}\u{e}-\u{1f}\u{fffe}\u{ffff}]{0,64}", attr in "[ -~\t\n]{0,32}") {
        let mut w = XmlWriter::new();
        w.start("urn:t", "a");
        w.attribute("v", &attr);
        w.text(&text);
        w.end();
        let bytes = w.into_bytes();
        let mut r = XmlReader::new(&bytes, &Limits::default()).unwrap();
        let XmlEvent::Start(_) = r.next_event().unwrap() else { panic!() };
        prop_assert_eq!(r.attribute("", "v"), Some(attr.as_str()));
        prop_assert_eq!(r.read_text().unwrap(), text.as_str());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = read_all(&bytes, &Limits::default());
    }
}

/// `skim_element_text` finds plain character data, and nothing else.
#[test]
fn skimming_reports_plain_text_only() {
    let limits = Limits::default();
    let skim = |doc: &str| {
        let mut r = XmlReader::new(doc.as_bytes(), &limits).unwrap();
        r.next_child().unwrap().unwrap();
        r.next_child().unwrap().unwrap();
        let span = r.skim_element_text().unwrap();
        span.map(|s| doc[s].to_owned())
    };
    assert_eq!(skim("<r><a>text</a></r>").as_deref(), Some("text"));
    assert_eq!(skim("<r><a> v w </a></r>").as_deref(), Some(" v w "));
    assert_eq!(skim("<r><a/></r>").as_deref(), Some(""));
    assert_eq!(skim("<r><a x='1'>t</a><b/></r>").as_deref(), Some("t"));
    for not_plain in [
        "<r><a>x&amp;y</a></r>",
        "<r><a>&#65;</a></r>",
        "<r><a><b/></a></r>",
        "<r><a>x<b>y</b></a></r>",
        "<r><a>x<!--c-->y</a></r>",
        "<r><a><![CDATA[x]]></a></r>",
    ] {
        assert_eq!(skim(not_plain), None, "{not_plain}");
    }
}

#[test]
fn attributes_are_unique_by_expanded_name_and_values_are_normalised() {
    let l = Limits::default();
    for dup in [
        &br#"<a x="1" x="2"/>"#[..],
        br#"<a xmlns:p="urn:p" xmlns:q="urn:p" p:x="1" q:x="2"/>"#,
        br#"<a xmlns:p="urn:p" xmlns:p="urn:q"/>"#,
        br#"<a xmlns="urn:p" xmlns="urn:q"/>"#,
    ] {
        assert!(
            read_all(dup, &l).is_err(),
            "{} was accepted",
            String::from_utf8_lossy(dup)
        );
    }
    // The same prefix may be declared again on a child.
    assert!(read_all(br#"<a xmlns:p="urn:p"><b xmlns:p="urn:q"/></a>"#, &l).is_ok());
    // Values with references or whitespace still go through normalisation.
    let mut r = XmlReader::new(br#"<a x="1&amp;2" y="a&#9;b&#10;" z="p	q"/>"#, &l).unwrap();
    r.next_child().unwrap().unwrap();
    assert_eq!(r.attribute("", "x"), Some("1&2"));
    assert_eq!(r.attribute("", "y"), Some("a\tb\n"));
    assert_eq!(r.attribute("", "z"), Some("p q"));
}

#[test]
fn read_text_takes_plain_text_and_everything_else_alike() {
    let l = Limits::default();
    // (document, the child's text or the error it must give)
    let cases: [(&[u8], Result<&str, ()>); 10] = [
        (b"<a><b>plain</b></a>", Ok("plain")),
        (b"<a><b>plain</b  ></a>", Ok("plain")),
        (b"<a><b></b></a>", Ok("")),
        (b"<a><b/></a>", Ok("")),
        (b"<a><b>x &amp; y</b></a>", Ok("x & y")),
        (b"<a><b>x<!-- c -->y</b></a>", Ok("xy")),
        (b"<a><b>x<![CDATA[<y>]]></b></a>", Ok("x<y>")),
        (b"<a><b>plain</bc></a>", Err(())),
        (b"<a><b>plain</a></b>", Err(())),
        (b"<a><b>plain<c/></b></a>", Err(())),
    ];
    for (doc, want) in cases {
        let mut r = XmlReader::new(doc, &l).unwrap();
        r.next_child().unwrap().unwrap();
        r.next_child().unwrap().unwrap();
        let got = r.read_text();
        let shown = String::from_utf8_lossy(doc);
        match want {
            Ok(text) => {
                assert_eq!(got.as_deref(), Ok(text), "{shown}");
                // The reader is back in <a>, which closes next.
                assert_eq!(r.depth(), 1, "{shown}");
                assert_eq!(r.next_child(), Ok(None), "{shown}");
                r.finish().unwrap();
            }
            Err(()) => assert!(got.is_err(), "{shown} gave {got:?}"),
        }
    }
    // The text limit holds on the short path too.
    let small = Limits {
        max_text_len: 3,
        ..Limits::default()
    };
    let mut r = XmlReader::new(b"<a>four</a>", &small).unwrap();
    r.next_child().unwrap().unwrap();
    assert!(matches!(
        r.read_text(),
        Err(XmlError::LimitExceeded {
            limit: "text length",
            ..
        })
    ));
}

/// Reads every child of the root with `next_child_expecting("b")` (or `next_child`),
/// each child's text, and the end: what it saw, or the first error.
fn children(doc: &[u8], limits: &Limits, expecting: bool) -> Result<Vec<String>, XmlError> {
    let mut r = XmlReader::new(doc, limits)?;
    r.next_child()?.ok_or(XmlError::UnexpectedEof)?;
    let mut seen = Vec::new();
    loop {
        let child = if expecting {
            r.next_child_expecting("b")?
        } else {
            r.next_child()?
        };
        let Some(c) = child else { break };
        let attributes: Vec<String> = r.attributes().iter().map(|a| a.local.to_owned()).collect();
        seen.push(format!(
            "{{{}}}{} @{} {attributes:?} depth {} text {:?}",
            c.ns(),
            c.local(),
            c.offset(),
            r.depth(),
            r.read_text()?
        ));
    }
    r.finish()?;
    Ok(seen)
}

/// Children of a root element written every way the quick paths must tell apart from
/// the ones they take: prefixes, attributes, whitespace, other names and namespaces,
/// references, comments, children, and documents cut short.
const CHILD_DOCS: [&[u8]; 17] = [
    br#"<a xmlns="urn:x"><b>1</b><b>2</b></a>"#,
    br#"<a xmlns="urn:x"><b/><b></b></a>"#,
    br#"<a xmlns="urn:x"><bc>1</bc><b>2</b></a>"#,
    br#"<a xmlns="urn:y"><b>1</b></a>"#,
    br#"<a><b>1</b></a>"#,
    br#"<a xmlns:p="urn:x"><p:b>1</p:b></a>"#,
    br#"<a xmlns="urn:x"><b c="1">1</b></a>"#,
    br#"<a xmlns="urn:x"> <b>1</b> <b> 2 </b> </a>"#,
    br#"<a xmlns="urn:x"><b >1</b></a>"#,
    br#"<a xmlns="urn:x"><b>1</b ></a>"#,
    br#"<a xmlns="urn:x"><b xmlns="urn:y">1</b></a>"#,
    br#"<a xmlns="urn:x"><b>1</c></a>"#,
    br#"<a xmlns="urn:x"><b>1&amp;2</b><b>x&#13;</b></a>"#,
    br#"<a xmlns="urn:x"><b><c/></b></a>"#,
    br#"<a xmlns="urn:x"><b>1<!-- c --></b></a>"#,
    br#"<a xmlns="urn:x"><b>1</b>"#,
    br#"<a xmlns="urn:x"><b>"#,
];

#[test]
fn an_expected_child_reads_as_any_child_does() {
    let l = Limits::default();
    let docs = CHILD_DOCS;
    for doc in docs {
        assert_eq!(
            children(doc, &l, true),
            children(doc, &l, false),
            "{}",
            String::from_utf8_lossy(doc)
        );
    }
    // The limits hold on the quick path too.
    let shallow = Limits {
        max_depth: 1,
        ..Limits::default()
    };
    let few = Limits {
        max_elements: 2,
        ..Limits::default()
    };
    for limits in [shallow, few] {
        let doc = br#"<a xmlns="urn:x"><b>1</b><b>2</b></a>"#;
        assert!(matches!(
            children(doc, &limits, true),
            Err(XmlError::LimitExceeded { .. })
        ));
    }
}

/// Reads every child of the root as a leaf `b` when `leaf_expecting("b")` takes it whole,
/// else the general way: each child's namespace, name and text, and the end.
fn leaves(doc: &[u8], limits: &Limits, quick: bool) -> Result<Vec<String>, XmlError> {
    let mut r = XmlReader::new(doc, limits)?;
    r.next_child()?.ok_or(XmlError::UnexpectedEof)?;
    let default_ns = ["urn:x", "urn:y", ""]
        .into_iter()
        .find(|ns| r.default_namespace_is(ns))
        .expect("one of the test documents' namespaces");
    let mut seen = Vec::new();
    loop {
        if quick {
            if let Some(text) = r.leaf_expecting("b")? {
                seen.push(format!("{{{default_ns}}}b {text:?} depth {}", r.depth()));
                continue;
            }
        }
        let Some(c) = r.next_child()? else { break };
        let text = r.read_text()?;
        seen.push(format!(
            "{{{}}}{} {text:?} depth {}",
            c.ns(),
            c.local(),
            r.depth()
        ));
    }
    r.finish()?;
    Ok(seen)
}

#[test]
fn a_leaf_read_whole_reads_as_it_does_in_steps() {
    let l = Limits::default();
    let docs = CHILD_DOCS;
    for doc in docs {
        let shown = String::from_utf8_lossy(doc);
        match leaves(doc, &l, false) {
            // Leaves expected as such: each with its own namespace and text.
            Ok(seen) => assert_eq!(leaves(doc, &l, true), Ok(seen), "{shown}"),
            // Anything else (a leaf with a child): the same error.
            Err(e) => assert_eq!(leaves(doc, &l, true), Err(e), "{shown}"),
        }
    }
    // The limits hold on the quick path too.
    let limits = [
        Limits {
            max_depth: 1,
            ..Limits::default()
        },
        Limits {
            max_elements: 2,
            ..Limits::default()
        },
        Limits {
            max_text_len: 1,
            ..Limits::default()
        },
    ];
    for limits in limits {
        let doc = br#"<a xmlns="urn:x"><b>1</b><b>22</b></a>"#;
        let quick = leaves(doc, &limits, true);
        assert!(
            matches!(quick, Err(XmlError::LimitExceeded { .. })),
            "{quick:?}"
        );
        assert_eq!(quick, leaves(doc, &limits, false));
    }
}

proptest! {
    /// `start_static` writes what `start` writes, and `leaf_static` what `start`, the text
    /// and `end` write, whatever the order of namespaces: opens (a namespace of four, and a
    /// prefixed element now and then), leaves (empty or not) and closes at random.
    #[test]
    fn start_static_writes_what_start_writes(steps in proptest::collection::vec(0u8..11, 0..64)) {
        const NS: [&str; 4] = ["urn:a", "urn:b", "", "urn:a:longer"];
        let (mut plain, mut fast) = (XmlWriter::new(), XmlWriter::new());
        let mut open = 0;
        for step in steps {
            match step {
                0..=3 => {
                    plain.start(NS[usize::from(step)], "e");
                    fast.start_static(NS[usize::from(step)], "e");
                    open += 1;
                }
                4 => {
                    plain.start_prefixed("p", "q");
                    fast.start_prefixed("p", "q");
                    open += 1;
                }
                7..=10 => {
                    let (ns, text) = (NS[usize::from(step - 7)], ["", "a<b"][usize::from(step % 2)]);
                    plain.start(ns, "leaf");
                    plain.text(text);
                    plain.end();
                    fast.leaf_static(ns, "leaf", |w| w.text(text));
                }
                _ if open > 0 => {
                    plain.end();
                    fast.end();
                    open -= 1;
                }
                _ => {}
            }
        }
        for _ in 0..open {
            plain.end();
            fast.end();
        }
        prop_assert_eq!(plain.as_str(), fast.as_str());
    }
}

/// Found by the `xml_reader` fuzz target (2026-11-23), where the quick-xml oracle resolved
/// the raw value: a namespace name is the declaration's normalised value (Namespaces in XML
/// 1.0 §3), so a literal newline or tab in it reads as a space, a reference as its character.
#[test]
fn issue_2_namespace_declarations_are_normalised_like_attribute_values() {
    let l = Limits::default();
    let mut r = XmlReader::new(b"<g xmlns=\" a\n\tb&#10;c\"/>", &l).unwrap();
    let g = r.next_child().unwrap().unwrap();
    assert_eq!(g.ns(), " a  b\nc");
    assert_eq!(r.next_child(), Ok(None));
    r.finish().unwrap();
}
