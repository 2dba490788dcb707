//! A small element tree for resource property documents: what `GetResourceProperty`
//! copies from and what XPath queries walk. Requests are never read into it; only a
//! resource's own (small) property document is.

use osprey_xml::{Limits, QName, Scope, XmlError, XmlEvent, XmlReader, XmlWriter, XML_NS};

/// An element with its attributes and content.
#[derive(Debug, Clone, PartialEq)]
pub struct Element {
    /// The element's name.
    pub name: QName,
    /// Attributes, in document order.
    pub attributes: Vec<(QName, String)>,
    /// Child elements and text, in document order.
    pub children: Vec<Node>,
}

/// Content of an element.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A child element.
    Element(Element),
    /// Character data.
    Text(String),
}

impl Element {
    /// An element with no attributes and the given children.
    pub fn new(name: QName, children: Vec<Node>) -> Self {
        Element {
            name,
            attributes: Vec::new(),
            children,
        }
    }

    /// An element holding only `text` (no text node at all when it is empty, as a parsed
    /// empty element has none).
    pub fn with_text(name: QName, text: impl Into<String>) -> Self {
        let text = text.into();
        let children = if text.is_empty() {
            Vec::new()
        } else {
            vec![Node::Text(text)]
        };
        Element::new(name, children)
    }

    /// Parses a document whose root is the element.
    ///
    /// # Errors
    /// Any [`XmlError`] of the document, under `limits`.
    pub fn parse(xml: &[u8], limits: &Limits) -> Result<Element, XmlError> {
        let mut r = XmlReader::new(xml, limits)?;
        let start = r.next_child()?.ok_or(XmlError::UnexpectedEof)?;
        let root = Element::read(&mut r, &start.to_qname())?;
        r.finish()?;
        Ok(root)
    }

    /// Reads the element named `name` whose start tag `r` just returned, through its end.
    ///
    /// # Errors
    /// Any [`XmlError`] of its content.
    pub fn read(r: &mut XmlReader<'_>, name: &QName) -> Result<Element, XmlError> {
        let attributes = read_attributes(r);
        let mut stack = vec![Element {
            name: name.clone(),
            attributes,
            children: Vec::new(),
        }];
        loop {
            match r.next_event()? {
                XmlEvent::Start(s) => stack.push(Element {
                    name: s.to_qname(),
                    attributes: read_attributes(r),
                    children: Vec::new(),
                }),
                XmlEvent::Text(t) => {
                    if let Some(top) = stack.last_mut() {
                        top.children.push(Node::Text(t.into_owned()));
                    }
                }
                XmlEvent::End => {
                    let done = stack.pop().ok_or(XmlError::UnexpectedEof)?;
                    match stack.last_mut() {
                        Some(parent) => parent.children.push(Node::Element(done)),
                        None => return Ok(done),
                    }
                }
                XmlEvent::Eof => return Err(XmlError::UnexpectedEof),
            }
        }
    }

    /// The child elements.
    pub fn elements(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter_map(|n| match n {
            Node::Element(e) => Some(e),
            Node::Text(_) => None,
        })
    }

    /// The XPath string-value: all descendant text, concatenated.
    pub fn string_value(&self) -> String {
        let mut s = String::new();
        self.collect_text(&mut s);
        s
    }

    fn collect_text(&self, out: &mut String) {
        for c in &self.children {
            match c {
                Node::Text(t) => out.push_str(t),
                Node::Element(e) => e.collect_text(out),
            }
        }
    }

    /// Writes the element as a self-contained fragment (every namespace declared).
    pub fn write(&self, w: &mut XmlWriter) {
        w.start(self.name.ns(), self.name.local());
        for (i, (name, value)) in self.attributes.iter().enumerate() {
            if name.ns().is_empty() {
                w.attribute(name.local(), value);
            } else if name.ns() == XML_NS {
                w.attribute(&format!("xml:{}", name.local()), value);
            } else {
                let prefix = format!("a{i}");
                w.declare(&prefix, name.ns());
                w.attribute(&format!("{prefix}:{}", name.local()), value);
            }
        }
        for c in &self.children {
            match c {
                Node::Text(t) => w.text(t),
                Node::Element(e) => e.write(w),
            }
        }
        w.end();
    }

    /// The element as a self-contained XML fragment.
    pub fn to_xml(&self) -> String {
        let mut w = XmlWriter::with_capacity(128);
        self.write(&mut w);
        String::from_utf8_lossy(w.as_bytes()).into_owned()
    }
}

fn read_attributes(r: &XmlReader<'_>) -> Vec<(QName, String)> {
    r.attributes()
        .iter()
        .map(|a| {
            (
                QName::new(a.ns.to_string(), a.local.to_owned()),
                a.value.to_string(),
            )
        })
        .collect()
}

/// A QName written as text content (`tns:Value`), resolved against `scope`, the
/// namespaces in scope at the element that holds it. Also accepted: `{uri}local` (Clark
/// notation), and an unprefixed name, which takes the default namespace or, when none is
/// declared, no namespace (the caller may then match it by local name: clients such as
/// zeep send QName text without declaring its prefix).
///
/// # Errors
/// A message naming the undeclared prefix or the malformed name.
pub fn resolve_qname(scope: &Scope, text: &str) -> Result<QName, String> {
    let text = text.trim();
    if let Some(rest) = text.strip_prefix('{') {
        let (ns, local) = rest
            .split_once('}')
            .ok_or_else(|| format!("{text:?} is not a QName"))?;
        return checked(ns, local, text);
    }
    let lookup = |prefix: &str| {
        if prefix == "xml" {
            return Some(XML_NS);
        }
        scope
            .bindings()
            .filter(|(p, _)| *p == prefix)
            .last()
            .map(|(_, uri)| uri)
    };
    match text.split_once(':') {
        Some((prefix, local)) => {
            let ns = lookup(prefix)
                .ok_or_else(|| format!("prefix {prefix:?} of {text:?} is not declared"))?;
            checked(ns, local, text)
        }
        None => checked(lookup("").unwrap_or(""), text, text),
    }
}

fn checked(ns: &str, local: &str, text: &str) -> Result<QName, String> {
    let ok = !local.is_empty()
        && !local.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.')
        && local
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(QName::new(ns.to_owned(), local.to_owned()))
    } else {
        Err(format!("{text:?} is not a QName"))
    }
}
