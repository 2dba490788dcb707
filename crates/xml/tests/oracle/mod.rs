//! One document read two ways, by Osprey's reader and by quick-xml (an independent
//! implementation), as the same list of events: shared by `tests/roundtrip.rs` and the
//! `xml_reader` fuzz target, which includes this file.

use osprey_xml::{Limits, XmlEvent, XmlReader};

/// What a reader reports: start (namespace, local name, attributes as namespace, local
/// name and value), merged text, end.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Start(String, String, Vec<(String, String, String)>),
    Text(String),
    End,
}

/// The document as Osprey's reader reads it.
pub fn read(doc: &str) -> Result<Vec<Event>, osprey_xml::XmlError> {
    let mut r = XmlReader::new(doc.as_bytes(), &Limits::default())?;
    let mut out = Vec::new();
    let mut open = 0;
    loop {
        match r.next_event()? {
            XmlEvent::Start(s) => {
                open += 1;
                let attributes = r
                    .attributes()
                    .iter()
                    .map(|a| (a.ns.to_string(), a.local.to_owned(), a.value.to_string()))
                    .collect();
                out.push(Event::Start(
                    s.ns().to_owned(),
                    s.local().to_owned(),
                    attributes,
                ));
            }
            // Whitespace around the root element is reported too; the tree has none.
            XmlEvent::Text(t) if open == 0 => assert!(t.trim().is_empty()),
            XmlEvent::Text(t) => out.push(Event::Text(t.into_owned())),
            XmlEvent::End => {
                open -= 1;
                out.push(Event::End);
            }
            XmlEvent::Eof => return Ok(out),
        }
    }
}

/// The document as quick-xml reads it (namespaces resolved, attribute values normalised,
/// references replaced, line ends normalised, adjacent text merged), as [`Event`]s.
pub fn read_with_quick_xml(doc: &str) -> Result<Vec<Event>, String> {
    use quick_xml::events::Event as Q;
    use quick_xml::name::ResolveResult;
    let mut r = quick_xml::NsReader::from_str(doc);
    r.config_mut().expand_empty_elements = true;
    r.config_mut().enable_all_checks(true);
    let mut out = Vec::new();
    let mut text = String::new();
    let mut open = 0usize;
    let flush = |text: &mut String, out: &mut Vec<Event>, open: usize| {
        if open > 0 && !text.is_empty() {
            out.push(Event::Text(std::mem::take(text)));
        }
        text.clear();
    };
    loop {
        let (ns, event) = r.read_resolved_event().map_err(|e| e.to_string())?;
        let ns = match ns {
            ResolveResult::Bound(n) => n.into_inner().to_owned(),
            ResolveResult::Unbound => String::new(),
            ResolveResult::Unknown(p) => return Err(format!("unknown prefix {p}")),
        };
        match event {
            Q::Start(e) => {
                flush(&mut text, &mut out, open);
                let mut attributes = Vec::new();
                for a in e.attributes() {
                    let a = a.map_err(|e| e.to_string())?;
                    let key = a.key.into_inner();
                    if key == "xmlns" || key.starts_with("xmlns:") {
                        // quick-xml resolves names against the declaration's raw value;
                        // a namespace name is the normalised value (Namespaces in XML 1.0
                        // §3), which Osprey's reader uses. Where the two differ the oracle
                        // has no answer.
                        if a.value
                            .bytes()
                            .any(|b| matches!(b, b'&' | b'\t' | b'\n' | b'\r'))
                        {
                            return Err("a namespace declaration that needs normalising".into());
                        }
                        continue;
                    }
                    let (ns, local) = r.resolver().resolve_attribute(a.key);
                    let ns = match ns {
                        ResolveResult::Bound(n) => n.into_inner().to_owned(),
                        ResolveResult::Unbound => String::new(),
                        ResolveResult::Unknown(p) => return Err(format!("unknown prefix {p}")),
                    };
                    let value = a
                        .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .map_err(|e| e.to_string())?;
                    attributes.push((ns, local.into_inner().to_owned(), value.into_owned()));
                }
                out.push(Event::Start(
                    ns,
                    e.local_name().into_inner().to_owned(),
                    attributes,
                ));
                open += 1;
            }
            Q::End(_) => {
                flush(&mut text, &mut out, open);
                out.push(Event::End);
                open -= 1;
            }
            Q::Text(t) => text.push_str(&t.xml10_content()),
            Q::CData(c) => text.push_str(&c.xml10_content()),
            Q::GeneralRef(g) => match g.resolve_char_ref().map_err(|e| e.to_string())? {
                Some(c) => text.push(c),
                None => text.push(match &*g.into_inner() {
                    "lt" => '<',
                    "gt" => '>',
                    "amp" => '&',
                    "apos" => '\'',
                    "quot" => '"',
                    other => return Err(format!("entity {other}")),
                }),
            },
            Q::Eof => return Ok(out),
            _ => {}
        }
    }
}
