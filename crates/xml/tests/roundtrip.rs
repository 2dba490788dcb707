//! Property test of the tokenizer and reader together: random documents (prefixed and
//! default-namespace elements, attributes, text with every escape, CDATA, comments,
//! `<a/>` and `<a></a>`) are written out as XML and must read back as exactly the tree
//! they came from, and as quick-xml, an independent reader, reads them.

mod oracle;

use oracle::{read, read_with_quick_xml, Event};
use proptest::prelude::*;

const NAMESPACES: [(&str, &str); 3] = [("", "urn:d"), ("p", "urn:p"), ("q", "urn:q")];

#[derive(Debug, Clone)]
enum Node {
    Element(Element),
    Text(String),
    CData(String),
    Comment(String),
}

#[derive(Debug, Clone)]
struct Element {
    ns: usize,
    local: String,
    attributes: Vec<(String, String)>,
    children: Vec<Node>,
    self_closing: bool,
}

fn name() -> impl Strategy<Value = String> {
    "[a-zA-Z_][a-zA-Z0-9_.\\-]{0,12}|[é中][a-z]{0,3}"
}

/// Text of any XML character, markup characters and line ends included.
fn text() -> impl Strategy<Value = String> {
    "[a-z <>&'\"\t\r\n\u{e9}\u{4e2d}\u{1f600}\\]]{0,24}"
}

fn element(children: impl Strategy<Value = Vec<Node>>) -> impl Strategy<Value = Element> {
    (
        0..NAMESPACES.len(),
        name(),
        proptest::collection::btree_map(name(), text(), 0..4),
        children,
        any::<bool>(),
    )
        .prop_map(|(ns, local, attributes, children, self_closing)| Element {
            ns,
            local,
            // xmlns* names are declarations, not attributes.
            attributes: attributes
                .into_iter()
                .filter(|(k, _)| !k.to_ascii_lowercase().starts_with("xml"))
                .collect(),
            self_closing: self_closing && children.is_empty(),
            children,
        })
}

fn tree() -> impl Strategy<Value = Element> {
    let leaf = prop_oneof![
        text().prop_map(Node::Text),
        // No '>', so no "]]>" inside.
        "[a-z <&\\]]{0,12}".prop_map(Node::CData),
        "[a-z <>&]{0,12}".prop_map(Node::Comment),
        element(Just(Vec::new())).prop_map(Node::Element),
    ];
    let node = leaf.prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            inner.clone(),
            element(proptest::collection::vec(inner, 0..6)).prop_map(Node::Element),
        ]
    });
    element(proptest::collection::vec(node, 0..6))
}

/// Escapes as a careful writer would, using character references for line ends and tabs
/// (which the reader would otherwise normalise) and, in turn, the other escapes.
fn escape(s: &str, attribute: bool, out: &mut String) {
    for (i, c) in s.chars().enumerate() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' if i % 2 == 0 => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\'' if i % 3 == 0 => out.push_str("&apos;"),
            '\r' => out.push_str("&#13;"),
            '\t' | '\n' if attribute => out.push_str(&format!("&#x{:X};", c as u32)),
            '\u{1f600}' if i % 2 == 1 => out.push_str("&#128512;"),
            c => out.push(c),
        }
    }
}

fn write(e: &Element, root: bool, out: &mut String) {
    let prefixed = |ns: usize, local: &str| match NAMESPACES[ns].0 {
        "" => local.to_owned(),
        p => format!("{p}:{local}"),
    };
    let name = prefixed(e.ns, &e.local);
    out.push('<');
    out.push_str(&name);
    if root {
        for (p, uri) in NAMESPACES {
            let attr = if p.is_empty() {
                "xmlns".to_owned()
            } else {
                format!("xmlns:{p}")
            };
            out.push_str(&format!(" {attr}='{uri}'"));
        }
    }
    for (k, v) in &e.attributes {
        out.push_str(&format!("\n  {k} = \""));
        escape(v, true, out);
        out.push('"');
    }
    if e.self_closing {
        out.push_str(" />");
        return;
    }
    out.push('>');
    for child in &e.children {
        match child {
            Node::Element(c) => write(c, false, out),
            Node::Text(t) => escape(t, false, out),
            Node::CData(t) => out.push_str(&format!("<![CDATA[{t}]]>")),
            Node::Comment(t) => out.push_str(&format!("<!--{}-->", t.replace("--", "-"))),
        }
    }
    out.push_str(&format!("</{name} >"));
}

fn expected(e: &Element, out: &mut Vec<Event>) {
    out.push(Event::Start(
        NAMESPACES[e.ns].1.to_owned(),
        e.local.clone(),
        // Unprefixed attributes are in no namespace.
        e.attributes
            .iter()
            .map(|(k, v)| (String::new(), k.clone(), v.clone()))
            .collect(),
    ));
    let mut text = String::new();
    for child in &e.children {
        match child {
            Node::Text(t) | Node::CData(t) => text.push_str(t),
            Node::Comment(_) => {}
            Node::Element(c) => {
                if !text.is_empty() {
                    out.push(Event::Text(std::mem::take(&mut text)));
                }
                expected(c, out);
            }
        }
    }
    if !text.is_empty() {
        out.push(Event::Text(text));
    }
    out.push(Event::End);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn written_documents_read_back_as_their_tree(root in tree(), declaration in any::<bool>()) {
        let mut doc = String::new();
        if declaration {
            doc.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        }
        write(&root, true, &mut doc);
        doc.push_str("\n<!-- after -->\n");
        let mut want = Vec::new();
        expected(&root, &mut want);
        prop_assert_eq!(read_with_quick_xml(&doc).map_err(|e| format!("quick-xml: {e} in {doc}")), Ok(want.clone()));
        prop_assert_eq!(read(&doc).map_err(|e| format!("{e} in {doc}")), Ok(want));
    }

    #[test]
    fn cutting_a_document_short_is_an_error(root in tree(), cut in any::<prop::sample::Index>()) {
        let mut doc = String::new();
        write(&root, true, &mut doc);
        let mut at = cut.index(doc.len());
        while !doc.is_char_boundary(at) {
            at -= 1;
        }
        prop_assert!(read(&doc[..at]).is_err(), "{} was accepted", &doc[..at]);
    }
}
