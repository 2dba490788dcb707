//! The pull reader: the tokenizer ([`crate::lexer`]) plus nesting, namespace resolution
//! and [`Limits`].
//!
//! It refuses what a SOAP message never needs and an attacker always wants: DTDs (so no
//! entity expansion, internal or external), processing instructions, non-UTF-8
//! documents, and anything past the configured limits. Text is handed out borrowed from
//! the input whenever no entity had to be replaced.

use std::borrow::Cow;

use crate::lexer::{self, EscapeError, LexError, Lexer, Token};
use crate::{Limits, XmlError, XML_NS};

/// One step of a document, as [`XmlReader::next_event`] returns it.
#[derive(Debug, Clone, PartialEq)]
pub enum XmlEvent<'a> {
    /// An element starts; its attributes are in [`XmlReader::attributes`] until the next
    /// call to the reader.
    Start(StartElement<'a>),
    /// The innermost open element ends.
    End,
    /// Character data (adjacent text, CDATA and references merged, entities replaced).
    Text(Cow<'a, str>),
    /// The document ended after its root element closed.
    Eof,
}

/// An element's start tag with its resolved name.
#[derive(Debug, Clone, PartialEq)]
pub struct StartElement<'a> {
    ns: Cow<'a, str>,
    raw: &'a str,
    local_at: usize,
    offset: usize,
}

impl<'a> StartElement<'a> {
    /// The namespace URI (`""` when the element is in no namespace).
    pub fn ns(&self) -> &str {
        &self.ns
    }

    /// The local name.
    pub fn local(&self) -> &'a str {
        &self.raw[self.local_at..]
    }

    /// The name as written, prefix included.
    pub fn raw_name(&self) -> &'a str {
        self.raw
    }

    /// True when the element is `{ns}local`.
    pub fn is(&self, ns: &str, local: &str) -> bool {
        same(self.local(), local) && same(&self.ns, ns)
    }

    /// Byte offset of the tag's `<` in the document.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The resolved name as an owned [`crate::QName`].
    pub fn to_qname(&self) -> crate::QName {
        crate::QName::new(self.ns.to_string(), self.local().to_string())
    }
}

/// `a == b`, without comparing the bytes when both are the same slice (a generated decoder's
/// name, which [`XmlReader::next_child_expecting`] puts in the element it read).
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && (std::ptr::eq(a.as_ptr(), b.as_ptr()) || a == b)
}

/// An attribute of the last start tag, with its namespace resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute<'a> {
    /// Namespace URI (`""` for unprefixed attributes, which are in no namespace).
    pub ns: Cow<'a, str>,
    /// Local name.
    pub local: &'a str,
    /// Normalized value with entities replaced.
    pub value: Cow<'a, str>,
}

/// Namespace bindings in scope at some point of a document, captured so that a fragment
/// of it can be read again on its own ([`XmlReader::fragment`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    bindings: Vec<(Box<str>, Box<str>)>,
}

impl Scope {
    /// The bindings, outermost first, as (prefix, URI); `""` is the default namespace.
    pub fn bindings(&self) -> impl Iterator<Item = (&str, &str)> {
        self.bindings.iter().map(|(p, u)| (&**p, &**u))
    }

    /// Adds a binding (used by tests and by code that builds fragments by hand).
    pub fn bind(&mut self, prefix: &str, uri: &str) {
        self.bindings.push((prefix.into(), uri.into()));
    }
}

struct Binding<'a> {
    prefix: &'a str,
    uri: Cow<'a, str>,
    depth: usize,
}

/// A namespace-aware pull reader over a complete document or a fragment of one.
///
/// ```
/// use osprey_xml::{Limits, XmlReader, XmlError};
/// let limits = Limits { max_depth: 2, ..Limits::default() };
/// let mut r = XmlReader::new(b"<a><b><c/></b></a>", &limits).unwrap();
/// let err = loop {
///     if let Err(e) = r.next_event() { break e; }
/// };
/// assert!(matches!(err, XmlError::LimitExceeded { limit: "nesting depth", .. }));
/// ```
pub struct XmlReader<'a> {
    src: &'a str,
    lexer: Lexer<'a>,
    base: usize,
    limits: Limits,
    depth: usize,
    elements: usize,
    ns: Vec<Binding<'a>>,
    attrs: Vec<Attribute<'a>>,
    peeked: Option<XmlEvent<'a>>,
    root_done: bool,
    fragment: bool,
    first: bool,
    last_end: usize,
    /// For a resumed reader: raw names of the ancestors still open where it starts,
    /// innermost first, whose end tags must close the document.
    open: &'a [Box<str>],
    closed: usize,
    /// Raw names of the elements whose start tags the lexer has read and whose end tags
    /// it has not, innermost last: an end tag must name the last one.
    names: Vec<&'a str>,
    /// The last start tag was `<a/>`: its end comes next.
    empty_end: bool,
}

impl<'a> XmlReader<'a> {
    /// A reader over a whole document. Checks size and encoding first.
    ///
    /// # Errors
    /// [`XmlError::LimitExceeded`] when the document is larger than
    /// `limits.max_message_size`, [`XmlError::InvalidUtf8`] when it is not UTF-8.
    pub fn new(bytes: &'a [u8], limits: &Limits) -> Result<Self, XmlError> {
        if bytes.len() > limits.max_message_size {
            return Err(XmlError::LimitExceeded {
                limit: "message size",
                max: limits.max_message_size,
            });
        }
        let src = std::str::from_utf8(bytes).map_err(|e| XmlError::InvalidUtf8 {
            offset: e.valid_up_to(),
        })?;
        let (src, base) = match src.strip_prefix('\u{feff}') {
            Some(rest) => (rest, 3),
            None => (src, 0),
        };
        Ok(Self::over(src, base, limits, false))
    }

    /// A reader over `text`, a balanced fragment (elements and their content) of a
    /// document that was already read whole, found at byte `base` of it, with `scope` the
    /// namespace bindings in force there. Offsets it reports are offsets in the document.
    pub fn fragment(text: &'a str, base: usize, scope: &'a Scope, limits: &Limits) -> Self {
        let mut r = Self::over(text, base, limits, true);
        r.ns.extend(scope.bindings.iter().map(|(p, u)| Binding {
            prefix: p,
            uri: Cow::Borrowed(&**u),
            depth: 0,
        }));
        r
    }

    /// A reader over the rest of a document from byte `base` on (`text` runs to the end of
    /// the document), where the elements named in `open` (raw names, innermost first) are
    /// still open and `scope` is in force. It reads the elements that follow, then
    /// expects exactly the end tags of `open` and the end of the document: this is how a
    /// payload is decoded in the same pass that checks the rest of the message.
    pub fn resume(
        text: &'a str,
        base: usize,
        scope: &'a Scope,
        open: &'a [Box<str>],
        limits: &Limits,
    ) -> Self {
        let mut r = Self::fragment(text, base, scope, limits);
        r.open = open;
        r
    }

    fn over(src: &'a str, base: usize, limits: &Limits, fragment: bool) -> Self {
        XmlReader {
            src,
            lexer: Lexer::new(src),
            base,
            limits: limits.clone(),
            depth: 0,
            elements: 0,
            ns: Vec::new(),
            attrs: Vec::new(),
            peeked: None,
            root_done: false,
            fragment,
            first: true,
            last_end: 0,
            open: &[],
            closed: 0,
            names: Vec::new(),
            empty_end: false,
        }
    }

    /// The document text this reader reads (the fragment only, for a fragment reader).
    pub fn source(&self) -> &'a str {
        self.src
    }

    /// Current depth: 0 outside the root, 1 inside it, and so on.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Offset in the document just past the last end tag read.
    pub fn last_end_offset(&self) -> usize {
        self.last_end
    }

    /// The attributes of the element last returned by [`XmlEvent::Start`].
    pub fn attributes(&self) -> &[Attribute<'a>] {
        &self.attrs
    }

    /// The value of attribute `{ns}local` on the last start tag, if present.
    pub fn attribute(&self, ns: &str, local: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|a| a.local == local && a.ns == ns)
            .map(|a| &*a.value)
    }

    /// The namespace bindings in scope now (innermost binding of each prefix).
    pub fn scope(&self) -> Scope {
        let mut bindings: Vec<(Box<str>, Box<str>)> = Vec::with_capacity(self.ns.len());
        for b in &self.ns {
            match bindings.iter_mut().find(|(p, _)| &**p == b.prefix) {
                Some(slot) => slot.1 = (*b.uri).into(),
                None => bindings.push((b.prefix.into(), (*b.uri).into())),
            }
        }
        Scope { bindings }
    }

    /// The URI bound to `prefix` here (`""` for an undeclared default namespace).
    pub fn resolve_prefix(&self, prefix: &str) -> Option<&str> {
        if prefix == "xml" {
            return Some(XML_NS);
        }
        match self.binding(prefix) {
            Some(b) => Some(&b.uri),
            None if prefix.is_empty() => Some(""),
            None => None,
        }
    }

    /// The next event, with adjacent character data merged into one [`XmlEvent::Text`]
    /// (never empty).
    ///
    /// # Errors
    /// Any [`XmlError`]: the document is malformed, forbidden or over a limit. After an
    /// error the reader must not be used again.
    pub fn next_event(&mut self) -> Result<XmlEvent<'a>, XmlError> {
        if let Some(e) = self.peeked.take() {
            return self.deliver(e);
        }
        let mut text = match self.raw_next()? {
            Piece::Text(t) => t,
            other => return self.deliver(other.into_event()),
        };
        loop {
            match self.raw_next()? {
                Piece::Text(t) if text.is_empty() => text = t,
                Piece::Text(t) => {
                    text.to_mut().push_str(&t);
                    if text.len() > self.limits.max_text_len {
                        return Err(self.limit("text length", self.limits.max_text_len));
                    }
                }
                // Empty CDATA sections make no text.
                other if text.is_empty() => return self.deliver(other.into_event()),
                other => {
                    self.peeked = Some(other.into_event());
                    return Ok(XmlEvent::Text(text));
                }
            }
        }
    }

    /// The next child element of the current element, skipping whitespace and comments;
    /// `None` once the current element's end tag has been read.
    ///
    /// # Errors
    /// [`XmlError::UnexpectedContent`] for non-whitespace text, or any reading error.
    pub fn next_child(&mut self) -> Result<Option<StartElement<'a>>, XmlError> {
        if self.peeked.is_none() {
            // Straight from the tokenizer: the common tokens here are tags.
            if std::mem::take(&mut self.empty_end) {
                self.end()?;
                return Ok(None);
            }
            // The end tag of the element, as a decoder reads it after its last child.
            if let Some(&open) = self.names.last() {
                if self.lexer.end_tag_of(open) {
                    self.names.pop();
                    self.end()?;
                    return Ok(None);
                }
            }
            loop {
                let at = self.offset();
                let first = self.first;
                let piece = match self.token()? {
                    Token::Start { name, empty } => return self.open(name, empty, at).map(Some),
                    Token::End { name } if !self.names.is_empty() => {
                        self.close(name, at)?;
                        self.end()?;
                        return Ok(None);
                    }
                    Token::Comment => continue,
                    token => match self.piece(token, at, first)? {
                        Some(piece) => piece,
                        None => continue,
                    },
                };
                match piece {
                    Piece::Start(s) => return Ok(Some(s)),
                    Piece::End => {
                        self.end()?;
                        return Ok(None);
                    }
                    Piece::Text(t) if is_whitespace(&t) => {}
                    Piece::Text(_) => {
                        return Err(self.unexpected("text where only elements are allowed"))
                    }
                    Piece::Eof => return Err(XmlError::UnexpectedEof),
                }
            }
        }
        loop {
            match self.next_event()? {
                XmlEvent::Start(s) => return Ok(Some(s)),
                XmlEvent::End => return Ok(None),
                XmlEvent::Text(t) if is_whitespace(&t) => continue,
                XmlEvent::Text(_) => {
                    return Err(self.unexpected("text where only elements are allowed"))
                }
                XmlEvent::Eof => return Err(XmlError::UnexpectedEof),
            }
        }
    }

    /// As [`Self::next_child`], and quicker when the next child is `<local>` or
    /// `<local/>`, written without a prefix, attributes or whitespace before it: the element
    /// a generated decoder expects next. Its namespace is the default one in scope, as for
    /// any unprefixed element; the caller checks it.
    ///
    /// # Errors
    /// As [`Self::next_child`].
    pub fn next_child_expecting(
        &mut self,
        local: &'static str,
    ) -> Result<Option<StartElement<'a>>, XmlError> {
        if self.peeked.is_none() && !self.empty_end && self.depth > 0 {
            let at = self.offset();
            if let Some(empty) = self.lexer.start_tag_of(local) {
                self.first = false;
                // What `open` does for a tag without attributes or prefix.
                self.enter(local.len())?;
                self.push_open(local, empty);
                return Ok(Some(StartElement {
                    ns: self.lookup("")?,
                    raw: local,
                    local_at: 0,
                    offset: at,
                }));
            }
        }
        self.next_child()
    }

    /// Reads the child `<local>text</local>` (or `<local/>`) whole when it comes next,
    /// written without a prefix or attributes and with nothing to unescape in its text, and
    /// returns the text; otherwise reads nothing and returns `None`, and the caller reads
    /// the child the general way ([`Self::next_child_expecting`]). The child is in the
    /// default namespace in scope, as any unprefixed element; the caller checks that
    /// ([`Self::default_namespace_is`]). A generated decoder reads a field of a simple type so.
    ///
    /// # Errors
    /// [`XmlError::LimitExceeded`] for the child's depth, name or text length, or the
    /// element count, as if it had been read the general way.
    pub fn leaf_expecting(&mut self, local: &'static str) -> Result<Option<&'a str>, XmlError> {
        if self.peeked.is_some() || self.empty_end || self.depth == 0 {
            return Ok(None);
        }
        let Some(text) = self.lexer.leaf_of(local) else {
            return Ok(None);
        };
        self.count_element(self.depth + 1, local.len())?;
        if text.len() > self.limits.max_text_len {
            return Err(self.limit("text length", self.limits.max_text_len));
        }
        self.first = false;
        self.attrs.clear();
        self.last_end = self.offset();
        Ok(Some(text))
    }

    /// True when `ns` is the default namespace in scope: the namespace of unprefixed
    /// children of the current element that declare none of their own.
    pub fn default_namespace_is(&self, ns: &str) -> bool {
        match self.binding("") {
            Some(b) => *b.uri == *ns,
            None => ns.is_empty(),
        }
    }

    /// The innermost binding of `prefix` in scope.
    #[inline]
    fn binding(&self, prefix: &str) -> Option<&Binding<'a>> {
        self.ns.iter().rev().find(|b| b.prefix == prefix)
    }

    /// The text content of the current element, through its end tag (`""` if empty).
    ///
    /// # Errors
    /// [`XmlError::UnexpectedContent`] when the element has child elements.
    pub fn read_text(&mut self) -> Result<Cow<'a, str>, XmlError> {
        if let Some(text) = self.plain_text()? {
            return Ok(Cow::Borrowed(text));
        }
        if self.peeked.is_none() {
            // The common case, `<x>text</x>`, straight from the tokenizer.
            if std::mem::take(&mut self.empty_end) {
                self.end()?;
                return Ok(Cow::Borrowed(""));
            }
            let mut text: Option<Cow<'a, str>> = None;
            loop {
                let at = self.offset();
                let first = self.first;
                let piece = match self.token()? {
                    Token::End { name } if !self.names.is_empty() => {
                        self.close(name, at)?;
                        self.end()?;
                        return Ok(text.unwrap_or(Cow::Borrowed("")));
                    }
                    // Inside an element (depth > 0), plain text needs no other check.
                    Token::Text { raw, plain: true } if self.depth > 0 => {
                        Piece::Text(Cow::Borrowed(raw))
                    }
                    token => match self.piece(token, at, first)? {
                        Some(piece) => piece,
                        None => continue,
                    },
                };
                match piece {
                    Piece::Text(more) => {
                        let joined = match text.take() {
                            None => more,
                            Some(mut t) => {
                                t.to_mut().push_str(&more);
                                t
                            }
                        };
                        if joined.len() > self.limits.max_text_len {
                            return Err(self.limit("text length", self.limits.max_text_len));
                        }
                        text = Some(joined);
                    }
                    Piece::End => {
                        self.end()?;
                        return Ok(text.unwrap_or(Cow::Borrowed("")));
                    }
                    Piece::Start(_) => {
                        return Err(self.unexpected("element where only text is allowed"))
                    }
                    Piece::Eof => return Err(XmlError::UnexpectedEof),
                }
            }
        }
        match self.next_event()? {
            XmlEvent::End => Ok(Cow::Borrowed("")),
            XmlEvent::Text(t) => match self.next_event()? {
                XmlEvent::End => Ok(t),
                _ => Err(self.unexpected("element where only text is allowed")),
            },
            XmlEvent::Start(_) => Err(self.unexpected("element where only text is allowed")),
            XmlEvent::Eof => Err(XmlError::UnexpectedEof),
        }
    }

    /// The most common element content of all, `text</x>` with nothing to unescape, read
    /// with its end tag in one step; `None`, with nothing consumed, for anything else
    /// (which [`Self::read_text`] then reads in full).
    fn plain_text(&mut self) -> Result<Option<&'a str>, XmlError> {
        if self.peeked.is_some() || self.empty_end {
            return Ok(None);
        }
        // The end tag must name the element just opened: matched as such.
        let Some(&open) = self.names.last() else {
            return Ok(None);
        };
        let Some(text) = self.lexer.plain_text_and_end(open) else {
            return Ok(None);
        };
        if text.len() > self.limits.max_text_len {
            return Err(self.limit("text length", self.limits.max_text_len));
        }
        self.first = false;
        self.names.pop();
        self.end()?;
        Ok(Some(text))
    }

    /// Reads through the end tag of the current element, whatever it contains.
    ///
    /// # Errors
    /// Any reading error inside the skipped content.
    pub fn skip_element(&mut self) -> Result<(), XmlError> {
        let target = self.depth.saturating_sub(1);
        while self.depth > target {
            if self.next_event()? == XmlEvent::Eof {
                return Err(XmlError::UnexpectedEof);
            }
        }
        Ok(())
    }

    /// Reads through the end tag of the current element checking only what the limits and
    /// well-formedness need: structure, depth, counts, lengths, refused constructs.
    /// Namespaces are not resolved and text is not unescaped, so a skimmed element must be
    /// read again in full by whoever uses it (a fragment reader); that reader reports
    /// undeclared prefixes. About half the cost of [`Self::skip_element`].
    ///
    /// # Errors
    /// Malformed XML, refused constructs, exceeded limits, undeclared entities.
    pub fn skim_element(&mut self) -> Result<(), XmlError> {
        self.skim_element_text().map(drop)
    }

    /// As [`Self::skim_element`], and returns where the element's character data lies in
    /// the document when it has nothing else: no child element, CDATA section, comment or
    /// reference. Such text needs no unescaping, so a caller can take it from the bytes
    /// without reading the element again (a header block such as `wsa:Action`).
    ///
    /// # Errors
    /// As [`Self::skim_element`].
    pub fn skim_element_text(&mut self) -> Result<Option<std::ops::Range<usize>>, XmlError> {
        if self.peeked.is_some() {
            return self.skip_element().map(|()| None);
        }
        let start = self.offset();
        if std::mem::take(&mut self.empty_end) {
            self.end()?;
            return Ok(Some(start..start));
        }
        let target = self.depth.saturating_sub(1);
        let mut depth = self.depth;
        // The plain text seen so far: Some(range) until anything else shows up.
        let mut plain: Option<std::ops::Range<usize>> = Some(start..start);
        loop {
            let at = self.offset();
            match self.token()? {
                Token::Start { name, empty } => {
                    plain = None;
                    depth += 1;
                    self.count_element(depth, name.len())?;
                    for (i, attr) in self.lexer.attributes().iter().enumerate() {
                        self.check_attribute(i + 1, attr.name.len(), attr.value.len())?;
                        if !attr.plain {
                            lexer::unescape(attr.value, true).map_err(|e| self.escape(e, at))?;
                        }
                    }
                    if empty {
                        depth -= 1;
                    } else {
                        self.names.push(name);
                    }
                }
                Token::End { name } => {
                    self.close(name, at)?;
                    depth -= 1;
                    if depth == target {
                        self.depth = depth + 1;
                        return self.end().map(|()| plain);
                    }
                }
                Token::Text {
                    raw,
                    plain: no_escapes,
                } => {
                    if raw.len() > self.limits.max_text_len {
                        return Err(self.limit("text length", self.limits.max_text_len));
                    }
                    if !no_escapes {
                        lexer::unescape(raw, false).map_err(|e| self.escape(e, at))?;
                    }
                    // One run of plain text directly inside the element.
                    plain = match plain {
                        Some(r) if no_escapes && r.is_empty() && depth == self.depth => {
                            Some(at..at + raw.len())
                        }
                        _ => None,
                    };
                }
                Token::CData(c) => {
                    plain = None;
                    if c.len() > self.limits.max_text_len {
                        return Err(self.limit("text length", self.limits.max_text_len));
                    }
                }
                Token::Comment => plain = None,
                Token::Decl(_) | Token::Pi => return Err(XmlError::ProcessingInstructionForbidden),
                Token::Doctype => return Err(XmlError::DoctypeForbidden),
                Token::Eof => return Err(XmlError::UnexpectedEof),
            }
        }
    }

    /// Reads to the end of the document, checking that nothing but whitespace, comments
    /// and end tags of open elements remain.
    ///
    /// # Errors
    /// Any reading error, or content after the root element.
    pub fn finish(&mut self) -> Result<(), XmlError> {
        loop {
            match self.next_event()? {
                XmlEvent::Eof => return Ok(()),
                XmlEvent::End => continue,
                XmlEvent::Text(t) if is_whitespace(&t) => continue,
                _ => return Err(self.unexpected("content after the expected end")),
            }
        }
    }

    /// Applies an end tag's effects when it is handed out, not when it is read ahead,
    /// so that depth, scope and offsets always describe what the caller has seen.
    fn deliver(&mut self, e: XmlEvent<'a>) -> Result<XmlEvent<'a>, XmlError> {
        if matches!(e, XmlEvent::End) {
            self.end()?;
        }
        Ok(e)
    }

    fn offset(&self) -> usize {
        self.base + self.lexer.position()
    }

    fn limit(&self, limit: &'static str, max: usize) -> XmlError {
        XmlError::LimitExceeded { limit, max }
    }

    fn unexpected(&self, what: &'static str) -> XmlError {
        XmlError::UnexpectedContent {
            offset: self.offset(),
            what,
        }
    }

    /// The next token, its lexer error turned into an [`XmlError`].
    fn token(&mut self) -> Result<Token<'a>, XmlError> {
        let token = self.lexer.next_token().map_err(|e| self.lex_error(e));
        self.first = false;
        token
    }

    fn raw_next(&mut self) -> Result<Piece<'a>, XmlError> {
        if std::mem::take(&mut self.empty_end) {
            return Ok(Piece::End);
        }
        loop {
            let at = self.offset();
            let first = self.first;
            let token = self.token()?;
            if let Some(piece) = self.piece(token, at, first)? {
                return Ok(piece);
            }
        }
    }

    /// What `token`, read at `at` (`first`: as the document's first token), means to the
    /// caller; `None` for what is skipped (comments, the XML declaration, the end tags
    /// that close a resumed reader's ancestors).
    fn piece(
        &mut self,
        token: Token<'a>,
        at: usize,
        first: bool,
    ) -> Result<Option<Piece<'a>>, XmlError> {
        Ok(Some(match token {
            Token::Start { name, empty } => Piece::Start(self.open(name, empty, at)?),
            Token::End { name } if self.names.is_empty() && self.fragment => {
                // A resumed reader: the end tag must close the next ancestor that was
                // open where it started.
                if self.open.get(self.closed).map(|n| &**n) != Some(name) {
                    return Err(XmlError::Malformed {
                        offset: at,
                        message: format!("unexpected end tag </{name}>"),
                    });
                }
                self.closed += 1;
                return Ok(None);
            }
            Token::End { name } => {
                self.close(name, at)?;
                Piece::End
            }
            Token::Text { raw, plain } => {
                if self.depth == 0 && !is_whitespace(raw) {
                    return Err(self.unexpected("text outside the root element"));
                }
                let text = if plain {
                    Cow::Borrowed(raw)
                } else {
                    lexer::unescape(raw, false).map_err(|e| self.escape(e, at))?
                };
                if text.len() > self.limits.max_text_len {
                    return Err(self.limit("text length", self.limits.max_text_len));
                }
                Piece::Text(text)
            }
            Token::CData(c) => {
                if self.depth == 0 {
                    return Err(self.unexpected("CDATA outside the root element"));
                }
                if c.len() > self.limits.max_text_len {
                    return Err(self.limit("text length", self.limits.max_text_len));
                }
                Piece::Text(Cow::Borrowed(c))
            }
            Token::Comment => return Ok(None),
            Token::Decl(d) if first && !self.fragment => {
                if let Some(enc) = lexer::pseudo_attribute(d, "encoding") {
                    if !enc.eq_ignore_ascii_case("utf-8") && !enc.eq_ignore_ascii_case("utf8") {
                        return Err(XmlError::UnsupportedEncoding {
                            encoding: enc.to_owned(),
                        });
                    }
                }
                return Ok(None);
            }
            Token::Decl(_) | Token::Pi => return Err(XmlError::ProcessingInstructionForbidden),
            Token::Doctype => return Err(XmlError::DoctypeForbidden),
            Token::Eof => {
                if self.depth > 0
                    || (!self.root_done && !self.fragment)
                    || self.closed < self.open.len()
                {
                    return Err(XmlError::UnexpectedEof);
                }
                Piece::Eof
            }
        }))
    }

    /// Opens the element whose start tag was just read.
    fn open(
        &mut self,
        name: &'a str,
        empty: bool,
        at: usize,
    ) -> Result<StartElement<'a>, XmlError> {
        let start = self.start(name, at)?;
        self.push_open(name, empty);
        Ok(start)
    }

    /// Goes one level down for an element named `name_len` bytes, against the limits.
    fn enter(&mut self, name_len: usize) -> Result<(), XmlError> {
        self.depth += 1;
        self.count_element(self.depth, name_len)?;
        self.attrs.clear();
        Ok(())
    }

    /// Notes the element just opened: its end tag comes next (`<a/>`) or must name it.
    fn push_open(&mut self, name: &'a str, empty: bool) {
        if empty {
            self.empty_end = true;
        } else {
            self.names.push(name);
        }
    }

    /// Checks that an end tag closes the innermost open element.
    fn close(&mut self, name: &str, at: usize) -> Result<(), XmlError> {
        match self.names.pop() {
            Some(open) if open == name => Ok(()),
            Some(open) => Err(XmlError::Malformed {
                offset: at,
                message: format!("end tag </{name}> does not match <{open}>"),
            }),
            None => Err(XmlError::Malformed {
                offset: at,
                message: format!("end tag </{name}> without a start tag"),
            }),
        }
    }

    fn lex_error(&self, e: LexError) -> XmlError {
        XmlError::Malformed {
            offset: self.base + e.offset,
            message: e.message.to_owned(),
        }
    }

    fn escape(&self, e: EscapeError, at: usize) -> XmlError {
        match e {
            EscapeError::Undeclared(name) => XmlError::UndeclaredEntity { name },
            EscapeError::Malformed(offset, message) => XmlError::Malformed {
                offset: at + offset,
                message: message.to_owned(),
            },
        }
    }

    fn start(&mut self, raw: &'a str, at: usize) -> Result<StartElement<'a>, XmlError> {
        if self.depth == 0 && self.root_done {
            return Err(self.unexpected("a second root element"));
        }
        self.enter(raw.len())?;
        // Most elements of a message have no attributes.
        if !self.lexer.attributes().is_empty() {
            let raw_attrs = self.lexer.take_attributes();
            let checked = self.attributes_of(&raw_attrs, at);
            self.lexer.restore_attributes(raw_attrs);
            checked?;
        }
        let (ns, local_at) = match raw.bytes().position(|b| b == b':') {
            Some(i) => (self.lookup(&raw[..i])?, i + 1),
            None => (self.lookup("")?, 0),
        };
        Ok(StartElement {
            ns,
            raw,
            local_at,
            offset: at,
        })
    }

    /// Applies a start tag's namespace declarations, then resolves and checks its other
    /// attributes into `self.attrs`.
    fn attributes_of(
        &mut self,
        raw: &[lexer::RawAttribute<'a>],
        at: usize,
    ) -> Result<(), XmlError> {
        // Namespace declarations first: they apply to this element's own name and attributes.
        let mut others = 0;
        for (i, attr) in raw.iter().enumerate() {
            self.check_attribute(i + 1, attr.name.len(), attr.value.len())?;
            let (prefix, named) = match attr.name.strip_prefix("xmlns") {
                Some("") => ("", false),
                Some(p) if p.starts_with(':') => (&p[1..], true),
                _ => {
                    others += 1;
                    continue;
                }
            };
            let uri = self.value(attr, at)?;
            if named
                && (prefix.is_empty()
                    || uri.is_empty()
                    || prefix == "xmlns"
                    || (prefix == "xml") != (uri == XML_NS))
            {
                return Err(XmlError::Malformed {
                    offset: at,
                    message: format!("illegal namespace declaration {}", attr.name),
                });
            }
            if self
                .ns
                .iter()
                .rev()
                .take_while(|b| b.depth == self.depth)
                .any(|b| b.prefix == prefix)
            {
                return Err(XmlError::Malformed {
                    offset: at,
                    message: format!("duplicate attribute {}", attr.name),
                });
            }
            self.ns.push(Binding {
                prefix,
                uri,
                depth: self.depth,
            });
        }
        if others == 0 {
            return Ok(());
        }
        for attr in raw {
            if attr.name == "xmlns" || attr.name.starts_with("xmlns:") {
                continue;
            }
            let (ns, local) = match attr.name.split_once(':') {
                Some((prefix, local)) => (self.lookup(prefix)?, local),
                None => (Cow::Borrowed(""), attr.name),
            };
            // XML Namespaces requires expanded names, not just raw ones, to be unique.
            if self.attrs.iter().any(|a| a.local == local && a.ns == ns) {
                return Err(XmlError::Malformed {
                    offset: at,
                    message: format!("duplicate attribute {}", attr.name),
                });
            }
            let value = self.value(attr, at)?;
            self.attrs.push(Attribute { ns, local, value });
        }
        Ok(())
    }

    /// An attribute's normalised value.
    fn value(&self, attr: &lexer::RawAttribute<'a>, at: usize) -> Result<Cow<'a, str>, XmlError> {
        if attr.plain {
            Ok(Cow::Borrowed(attr.value))
        } else {
            lexer::unescape(attr.value, true).map_err(|e| self.escape(e, at))
        }
    }

    /// Counts an element opened at `depth`, whose name is `name_len` bytes, against the
    /// depth, element-count and name-length limits (both the full and the skim path).
    fn count_element(&mut self, depth: usize, name_len: usize) -> Result<(), XmlError> {
        if depth > self.limits.max_depth {
            return Err(self.limit("nesting depth", self.limits.max_depth));
        }
        self.elements += 1;
        if self.elements > self.limits.max_elements {
            return Err(self.limit("element count", self.limits.max_elements));
        }
        if name_len > self.limits.max_name_len {
            return Err(self.limit("name length", self.limits.max_name_len));
        }
        Ok(())
    }

    /// Checks the `count`th attribute of an element against the attribute-count,
    /// name-length and text-length limits (both the full and the skim path).
    fn check_attribute(
        &self,
        count: usize,
        key_len: usize,
        value_len: usize,
    ) -> Result<(), XmlError> {
        if count > self.limits.max_attributes {
            return Err(self.limit("attribute count", self.limits.max_attributes));
        }
        if key_len > self.limits.max_name_len {
            return Err(self.limit("name length", self.limits.max_name_len));
        }
        if value_len > self.limits.max_text_len {
            return Err(self.limit("text length", self.limits.max_text_len));
        }
        Ok(())
    }

    fn lookup(&self, prefix: &str) -> Result<Cow<'a, str>, XmlError> {
        if prefix == "xml" {
            return Ok(Cow::Borrowed(XML_NS));
        }
        match self.binding(prefix) {
            // By hand: `Cow::clone` is not inlined, and every start tag comes here.
            Some(b) => Ok(match &b.uri {
                Cow::Borrowed(uri) => Cow::Borrowed(uri),
                Cow::Owned(uri) => Cow::Owned(uri.clone()),
            }),
            None if prefix.is_empty() => Ok(Cow::Borrowed("")),
            None => Err(XmlError::UndeclaredPrefix {
                prefix: prefix.to_owned(),
            }),
        }
    }

    fn end(&mut self) -> Result<(), XmlError> {
        if self.depth == 0 {
            return Err(self.unexpected("an end tag without a start tag"));
        }
        while self.ns.last().is_some_and(|b| b.depth == self.depth) {
            self.ns.pop();
        }
        self.depth -= 1;
        self.last_end = self.offset();
        if self.depth == 0 {
            self.root_done = true;
        }
        Ok(())
    }
}

/// What one token means to the reader's callers: an event, with text not yet merged with
/// the text that may follow it.
enum Piece<'a> {
    Start(StartElement<'a>),
    End,
    Text(Cow<'a, str>),
    Eof,
}

impl<'a> Piece<'a> {
    fn into_event(self) -> XmlEvent<'a> {
        match self {
            Piece::Start(s) => XmlEvent::Start(s),
            Piece::End => XmlEvent::End,
            Piece::Text(t) => XmlEvent::Text(t),
            Piece::Eof => XmlEvent::Eof,
        }
    }
}

/// True when `s` holds only XML whitespace (space, tab, CR, LF).
pub(crate) fn is_whitespace(s: &str) -> bool {
    s.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}
