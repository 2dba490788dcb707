//! The streaming writer: appends well-formed XML to a byte buffer.
//!
//! Elements are written with default-namespace declarations (`<a xmlns="urn:x">`), emitted
//! only where the namespace changes, so generated encoders need no prefix bookkeeping.
//! Prefixed names are available for envelopes and headers, whose prefixes the caller
//! declares. End tags are copied from the start tag, so callers never repeat a name.

use crate::lexer::byte_set;
use crate::number::{push_f32, push_f64};

/// Appends XML to an in-memory buffer.
///
/// ```
/// use osprey_xml::XmlWriter;
/// let mut w = XmlWriter::new();
/// w.start("urn:x", "a");
/// w.start("urn:x", "b");
/// w.int(42);
/// w.end();
/// w.end();
/// assert_eq!(w.as_str(), r#"<a xmlns="urn:x"><b>42</b></a>"#);
/// ```
#[derive(Debug, Default, Clone)]
pub struct XmlWriter {
    buf: Vec<u8>,
    stack: Vec<Frame>,
    namespaces: Vec<Box<str>>,
    open_tag: bool,
    /// The last namespace given to [`Self::start_static`], and its index in `namespaces`
    /// (entries are only ever added).
    last_static: Option<(&'static str, usize)>,
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    name_at: usize,
    name_len: usize,
    default_ns: usize,
}

impl XmlWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::with_capacity(512)
    }

    /// An empty writer whose buffer holds `cap` bytes before growing.
    pub fn with_capacity(cap: usize) -> Self {
        XmlWriter {
            buf: Vec::with_capacity(cap),
            stack: Vec::with_capacity(16),
            namespaces: vec!["".into()],
            open_tag: false,
            last_static: None,
        }
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The text written so far.
    pub fn as_str(&self) -> &str {
        // Invariant: only &str input and ASCII markup are ever appended.
        std::str::from_utf8(&self.buf).expect("writer holds UTF-8")
    }

    /// The finished buffer.
    ///
    /// # Panics
    /// In debug builds, when elements are still open.
    pub fn into_bytes(mut self) -> Vec<u8> {
        debug_assert!(self.stack.is_empty(), "unclosed elements");
        self.close_tag();
        self.buf
    }

    /// Writes `<?xml version="1.0" encoding="UTF-8"?>`.
    pub fn declaration(&mut self) {
        self.buf
            .extend_from_slice(br#"<?xml version="1.0" encoding="UTF-8"?>"#);
    }

    /// Opens element `{ns}local`, declaring `ns` as default namespace if it is not already.
    pub fn start(&mut self, ns: &str, local: &str) {
        let current = self.default_ns();
        if *self.namespaces[current] == *ns {
            self.open(local, current);
        } else {
            let declared = self.intern(ns);
            self.open(local, declared);
            self.buf.extend_from_slice(b" xmlns=\"");
            escape(&mut self.buf, ns, true);
            self.buf.push(b'"');
        }
    }

    /// As [`Self::start`], for a namespace that lives as long as the program (a generated
    /// encoder's): the writer knows the last such namespace by its address, so that a run of
    /// elements in it compares no bytes.
    pub fn start_static(&mut self, ns: &'static str, local: &str) {
        if self.is_default_static(ns) {
            self.open(local, self.default_ns());
        } else {
            self.start(ns, local);
            self.last_static = Some((ns, self.default_ns()));
        }
    }

    /// `ns` is the last namespace given to [`Self::start_static`] (the same string, address
    /// and length, so the same bytes as when it was looked up), and the default namespace
    /// where the next element opens.
    #[inline]
    fn is_default_static(&self, ns: &'static str) -> bool {
        self.last_static
            .is_some_and(|(last, index)| index == self.default_ns() && std::ptr::eq(last, ns))
    }

    /// Writes the element `{ns}local` whose content `content` writes as text only (a value
    /// of a simple type, through the text methods, which close the start tag): what
    /// [`Self::start_static`], `content` and [`Self::end`] write, with the tags written in
    /// one go when `ns` is already the default namespace.
    pub fn leaf_static(&mut self, ns: &'static str, local: &str, content: impl FnOnce(&mut Self)) {
        if !self.is_default_static(ns) {
            self.start_static(ns, local);
            content(self);
            self.end();
            return;
        }
        self.close_tag();
        self.buf.reserve(2 * local.len() + 5);
        self.buf.push(b'<');
        self.buf.extend_from_slice(local.as_bytes());
        self.buf.push(b'>');
        let depth = self.stack.len();
        content(self);
        debug_assert!(
            self.stack.len() == depth && !self.open_tag,
            "a leaf's content is text"
        );
        self.buf.extend_from_slice(b"</");
        self.buf.extend_from_slice(local.as_bytes());
        self.buf.push(b'>');
    }

    /// The index in `namespaces` of the default namespace where the next element opens.
    fn default_ns(&self) -> usize {
        self.stack.last().map_or(0, |f| f.default_ns)
    }

    /// Writes `<local` (the tag stays open for attributes) for an element whose default
    /// namespace is `namespaces[default_ns]`.
    fn open(&mut self, local: &str, default_ns: usize) {
        self.close_tag();
        self.buf.push(b'<');
        let name_at = self.buf.len();
        self.buf.extend_from_slice(local.as_bytes());
        self.stack.push(Frame {
            name_at,
            name_len: local.len(),
            default_ns,
        });
        self.open_tag = true;
    }

    /// Opens element `prefix:local`; the caller declares the prefix ([`Self::declare`]).
    pub fn start_prefixed(&mut self, prefix: &str, local: &str) {
        self.close_tag();
        let default_ns = self.default_ns();
        self.buf.push(b'<');
        let name_at = self.buf.len();
        self.buf.extend_from_slice(prefix.as_bytes());
        self.buf.push(b':');
        self.buf.extend_from_slice(local.as_bytes());
        self.stack.push(Frame {
            name_at,
            name_len: prefix.len() + 1 + local.len(),
            default_ns,
        });
        self.open_tag = true;
    }

    /// Declares `xmlns:prefix="uri"` on the element just opened.
    pub fn declare(&mut self, prefix: &str, uri: &str) {
        debug_assert!(self.open_tag, "declare() after content");
        self.buf.extend_from_slice(b" xmlns:");
        self.buf.extend_from_slice(prefix.as_bytes());
        self.buf.extend_from_slice(b"=\"");
        escape(&mut self.buf, uri, true);
        self.buf.push(b'"');
    }

    /// Adds attribute `name="value"` (name as written, prefix included) to the element
    /// just opened.
    pub fn attribute(&mut self, name: &str, value: &str) {
        debug_assert!(self.open_tag, "attribute() after content");
        self.buf.push(b' ');
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.extend_from_slice(b"=\"");
        escape(&mut self.buf, value, true);
        self.buf.push(b'"');
    }

    /// Closes the innermost open element (`<a/>` if it has no content).
    ///
    /// # Panics
    /// When no element is open.
    pub fn end(&mut self) {
        let frame = self.stack.pop().expect("end() without an open element");
        if self.open_tag {
            self.buf.extend_from_slice(b"/>");
            self.open_tag = false;
        } else {
            self.buf.extend_from_slice(b"</");
            self.buf
                .extend_from_within(frame.name_at..frame.name_at + frame.name_len);
            self.buf.push(b'>');
        }
    }

    /// Writes character data, escaped.
    pub fn text(&mut self, s: &str) {
        self.close_tag();
        escape(&mut self.buf, s, false);
    }

    /// Writes an integer as text.
    pub fn int(&mut self, v: impl itoa::Integer) {
        self.close_tag();
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
    }

    /// Writes an `xsd:float` as text.
    pub fn float(&mut self, v: f32) {
        self.close_tag();
        push_f32(v, &mut self.buf);
    }

    /// Writes an `xsd:double` as text.
    pub fn double(&mut self, v: f64) {
        self.close_tag();
        push_f64(v, &mut self.buf);
    }

    /// Appends markup verbatim. The caller guarantees it is a well-formed fragment whose
    /// prefixes are declared inside it.
    pub fn raw(&mut self, xml: &[u8]) {
        self.close_tag();
        self.buf.extend_from_slice(xml);
    }

    /// Elements currently open.
    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    fn close_tag(&mut self) {
        if std::mem::take(&mut self.open_tag) {
            self.buf.push(b'>');
        }
    }

    fn intern(&mut self, ns: &str) -> usize {
        match self.namespaces.iter().position(|n| **n == *ns) {
            Some(i) => i,
            None => {
                self.namespaces.push(ns.into());
                self.namespaces.len() - 1
            }
        }
    }
}

/// Appends `s` escaped for text (or, with `attr`, for a double-quoted attribute value).
fn escape(buf: &mut Vec<u8>, s: &str, attr: bool) {
    let bytes = s.as_bytes();
    let special = if attr {
        &ATTRIBUTE_SPECIAL
    } else {
        &TEXT_SPECIAL
    };
    let mut from = 0;
    loop {
        let i = crate::lexer::find_long(bytes, from, bytes.len(), special);
        if i == bytes.len() {
            break;
        }
        let rep: &[u8] = match bytes[i] {
            b'<' => b"&lt;",
            b'>' => b"&gt;",
            b'&' => b"&amp;",
            b'"' => b"&quot;",
            b'\r' => b"&#13;",
            b'\n' => b"&#10;",
            _ => b"&#9;",
        };
        buf.extend_from_slice(&bytes[from..i]);
        buf.extend_from_slice(rep);
        from = i + 1;
    }
    buf.extend_from_slice(&bytes[from..]);
}

/// Bytes text must escape: markup, and carriage returns (which a reader would turn
/// into line feeds).
static TEXT_SPECIAL: [bool; 256] = byte_set(b"<>&\r");
/// Bytes a double-quoted attribute value must escape: those, the quote, and the
/// whitespace that attribute-value normalisation would turn into spaces.
static ATTRIBUTE_SPECIAL: [bool; 256] = byte_set(b"<>&\r\"\n\t");

/// Copies the element whose start tag `r` just returned (`start`), with all its content,
/// into `w` as a self-contained fragment: every namespace it uses is declared inside it.
/// `extra` attributes (`(prefix, namespace, local, value)`) are added to the copied root.
///
/// # Errors
/// Any reading error of the copied content.
pub fn copy_element(
    r: &mut crate::XmlReader<'_>,
    start: &crate::StartElement<'_>,
    w: &mut XmlWriter,
    extra: &[(&str, &str, &str, &str)],
) -> Result<(), crate::XmlError> {
    copy_start(r, start, w);
    for (prefix, ns, local, value) in extra {
        w.declare(prefix, ns);
        w.attribute(&format!("{prefix}:{local}"), value);
    }
    let target = r.depth() - 1;
    while r.depth() > target {
        match r.next_event()? {
            crate::XmlEvent::Start(s) => copy_start(r, &s, w),
            crate::XmlEvent::End => w.end(),
            crate::XmlEvent::Text(t) => w.text(&t),
            crate::XmlEvent::Eof => return Err(crate::XmlError::UnexpectedEof),
        }
    }
    Ok(())
}

fn copy_start(r: &crate::XmlReader<'_>, s: &crate::StartElement<'_>, w: &mut XmlWriter) {
    w.start(s.ns(), s.local());
    for (i, a) in r.attributes().iter().enumerate() {
        if a.ns.is_empty() {
            w.attribute(a.local, &a.value);
        } else if a.ns == crate::XML_NS {
            w.attribute(&format!("xml:{}", a.local), &a.value);
        } else {
            let prefix = format!("a{i}");
            w.declare(&prefix, &a.ns);
            w.attribute(&format!("{prefix}:{}", a.local), &a.value);
        }
    }
}
