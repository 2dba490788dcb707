//! The tokenizer: splits a UTF-8 document into tags, character data and the constructs
//! the reader refuses, checking what XML 1.0 asks of each token (names, attribute syntax,
//! comment and CDATA delimiters). It knows nothing of namespaces, nesting or limits;
//! [`crate::XmlReader`] adds those.
//!
//! It works on a `&str` that was validated as UTF-8 once, for the whole message, and
//! hands out slices of it: no token is copied and no byte is checked twice. Every
//! delimiter it looks for is ASCII, so every slice it cuts falls on a character boundary.
//! Short runs (most element names and values of a SOAP message are a few bytes) are
//! scanned byte by byte; long runs of text go to `memchr`.

use std::borrow::Cow;

/// One token of a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Token<'a> {
    /// A start tag (`empty` for `<a/>`); its attributes are in [`Lexer::attributes`]
    /// until the next call.
    Start { name: &'a str, empty: bool },
    /// An end tag, with the name as written.
    End { name: &'a str },
    /// Character data up to the next markup, as written. `plain` when it holds no
    /// reference and no carriage return, so that it needs no unescaping.
    Text { raw: &'a str, plain: bool },
    /// The content of a CDATA section.
    CData(&'a str),
    /// A comment.
    Comment,
    /// The XML declaration's content, between `<?xml` and `?>`.
    Decl(&'a str),
    /// A processing instruction other than the XML declaration.
    Pi,
    /// A document type declaration (only its start is looked at).
    Doctype,
    /// The end of the input.
    Eof,
}

/// An attribute of the last start tag, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawAttribute<'a> {
    /// The name, prefix included.
    pub name: &'a str,
    /// The value between the quotes, references not replaced.
    pub value: &'a str,
    /// True when the value holds no reference and no tab, newline or carriage return,
    /// so that attribute-value normalisation leaves it as it is.
    pub plain: bool,
}

/// A token-level error: where, and what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LexError {
    /// Byte offset in the lexer's input.
    pub offset: usize,
    /// What was wrong.
    pub message: &'static str,
}

/// The tokenizer's state: the input, the position, and the last tag's attributes.
pub(crate) struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    attributes: Vec<RawAttribute<'a>>,
}

/// Runs shorter than this are scanned byte by byte; longer ones go to `memchr`, whose
/// set-up costs more than a short loop.
const SHORT_RUN: usize = 32;

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`.
    pub(crate) fn new(src: &'a str) -> Self {
        Lexer {
            src,
            pos: 0,
            attributes: Vec::new(),
        }
    }

    /// Bytes consumed so far: the offset of the next token.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Reads the end tag `</name>` (`</name >` too) when it comes next, and returns true;
    /// otherwise reads nothing and returns false (the next token is something else, or an
    /// end tag of another name, which [`Self::next_token`] then reads).
    pub(crate) fn end_tag_of(&mut self, name: &str) -> bool {
        let b = self.src.as_bytes();
        let at = self.pos;
        let after = at + 2 + name.len();
        if b.get(at..at + 2) != Some(b"</") || !has_at(b, at + 2, name.as_bytes()) {
            return false;
        }
        // Only whitespace may follow the name: `</ab>` is no end tag of `a`.
        let close = skip_whitespace(b, after);
        if b.get(close) != Some(&b'>') {
            return false;
        }
        self.pos = close + 1;
        true
    }

    /// Reads the start tag `<name>` or `<name/>` when it comes next, written exactly so (no
    /// attributes, no whitespace), as [`Self::next_token`] would have read it (its attribute
    /// list is then empty), and returns whether it was empty; otherwise reads nothing and
    /// returns `None`. `name` must be a valid XML name.
    pub(crate) fn start_tag_of(&mut self, name: &str) -> Option<bool> {
        let b = self.src.as_bytes();
        let at = self.pos;
        let after = at + 1 + name.len();
        if b.get(at) != Some(&b'<') || !has_at(b, at + 1, name.as_bytes()) {
            return None;
        }
        let (end, empty) = match b.get(after..).unwrap_or_default() {
            [b'>', ..] => (after + 1, false),
            [b'/', b'>', ..] => (after + 2, true),
            _ => return None,
        };
        self.attributes.clear();
        self.pos = end;
        Some(empty)
    }

    /// Reads `text</name>` when that comes next: character data with nothing to unescape,
    /// then the end tag of `name`; returns the text. Otherwise reads nothing and returns
    /// `None` (markup comes next, or the text needs unescaping, or something other than that
    /// end tag follows it).
    pub(crate) fn plain_text_and_end(&mut self, name: &str) -> Option<&'a str> {
        let at = self.pos;
        if self.src.as_bytes().get(at).is_none_or(|&c| c == b'<') {
            return None;
        }
        match self.text(at) {
            Token::Text { raw, plain: true } if self.end_tag_of(name) => Some(raw),
            _ => {
                self.pos = at;
                None
            }
        }
    }

    /// Reads a whole leaf element named `name`, `<name>text</name>`, `<name></name>` or
    /// `<name/>`, when one comes next, written without attributes or prefix and holding
    /// character data with nothing to unescape (whitespace may precede it); returns its text.
    /// Otherwise reads nothing and returns `None`. `name` must be a valid XML name.
    pub(crate) fn leaf_of(&mut self, name: &str) -> Option<&'a str> {
        let at = self.pos;
        self.pos = skip_whitespace(self.src.as_bytes(), at);
        let text = match self.start_tag_of(name) {
            Some(true) => Some(""),
            Some(false) => self
                .plain_text_and_end(name)
                .or_else(|| self.end_tag_of(name).then_some("")),
            None => None,
        };
        if text.is_none() {
            self.pos = at;
        }
        text
    }

    /// The attributes of the last [`Token::Start`].
    pub(crate) fn attributes(&self) -> &[RawAttribute<'a>] {
        &self.attributes
    }

    /// Takes the attribute list out (to be given back with [`Self::restore_attributes`]),
    /// so that a caller can read it while it changes its own state.
    pub(crate) fn take_attributes(&mut self) -> Vec<RawAttribute<'a>> {
        std::mem::take(&mut self.attributes)
    }

    /// Gives back the list [`Self::take_attributes`] took, keeping its allocation.
    pub(crate) fn restore_attributes(&mut self, attributes: Vec<RawAttribute<'a>>) {
        self.attributes = attributes;
    }

    /// The next token.
    pub(crate) fn next_token(&mut self) -> Result<Token<'a>, LexError> {
        let b = self.src.as_bytes();
        let at = self.pos;
        match b.get(at) {
            None => Ok(Token::Eof),
            Some(b'<') => match b.get(at + 1) {
                Some(b'/') => self.end_tag(at),
                Some(b'!') => self.bang(at),
                Some(b'?') => self.question(at),
                _ => self.start_tag(at),
            },
            Some(_) => Ok(self.text(at)),
        }
    }

    #[inline]
    fn text(&mut self, at: usize) -> Token<'a> {
        let b = self.src.as_bytes();
        let short_end = b.len().min(at + SHORT_RUN);
        let mut plain = true;
        let mut i = find(b, at, short_end, &TEXT_STOP);
        // A reference or a carriage return: note it and go on to the '<'.
        while i < short_end && b[i] != b'<' {
            plain = false;
            i = find(b, i + 1, short_end, &TEXT_STOP);
        }
        if i == short_end && i < b.len() {
            i = memchr::memchr(b'<', &b[i..]).map_or(b.len(), |n| i + n);
            plain = plain && memchr::memchr2(b'&', b'\r', &b[short_end..i]).is_none();
        }
        self.pos = i;
        Token::Text {
            raw: &self.src[at..i],
            plain,
        }
    }

    fn start_tag(&mut self, at: usize) -> Result<Token<'a>, LexError> {
        let b = self.src.as_bytes();
        let (name, mut i) = self.name(at + 1, "a start tag without a name")?;
        self.attributes.clear();
        loop {
            let after_previous = i;
            i = skip_whitespace(b, i);
            match b.get(i) {
                Some(b'>') => {
                    self.pos = i + 1;
                    return Ok(Token::Start { name, empty: false });
                }
                Some(b'/') if b.get(i + 1) == Some(&b'>') => {
                    self.pos = i + 2;
                    return Ok(Token::Start { name, empty: true });
                }
                None => return Err(error(b.len(), "the document ends inside a start tag")),
                Some(_) if i == after_previous => {
                    return Err(error(i, "expected whitespace, '>' or '/>' in a start tag"))
                }
                Some(_) => i = self.attribute(i)?,
            }
        }
    }

    /// Reads `name = "value"` at `i` into the attribute list, returning the offset after
    /// the closing quote.
    fn attribute(&mut self, i: usize) -> Result<usize, LexError> {
        let (attribute, next) = self.read_attribute(i)?;
        self.attributes.push(attribute);
        Ok(next)
    }

    /// Reads `name = "value"` at `i`: the attribute, and the offset after the closing quote.
    fn read_attribute(&self, i: usize) -> Result<(RawAttribute<'a>, usize), LexError> {
        let b = self.src.as_bytes();
        let (name, i) = self.name(i, "expected an attribute name")?;
        let i = skip_whitespace(b, i);
        if b.get(i) != Some(&b'=') {
            return Err(error(i, "expected '=' after an attribute name"));
        }
        let i = skip_whitespace(b, i + 1);
        let quote = match b.get(i) {
            Some(&q @ (b'"' | b'\'')) => q,
            _ => return Err(error(i, "expected a quoted attribute value")),
        };
        let start = i + 1;
        let mut plain = true;
        let mut j = find_long(b, start, b.len(), &VALUE_STOP);
        loop {
            match b.get(j) {
                None => {
                    return Err(error(
                        b.len(),
                        "the document ends inside an attribute value",
                    ))
                }
                Some(&c) if c == quote => break,
                Some(b'<') => return Err(error(j, "'<' in an attribute value")),
                Some(b'"' | b'\'') => {}
                Some(_) => plain = false,
            }
            j = find_long(b, j + 1, b.len(), &VALUE_STOP);
        }
        let attribute = RawAttribute {
            name,
            value: &self.src[start..j],
            plain,
        };
        Ok((attribute, j + 1))
    }

    fn end_tag(&mut self, at: usize) -> Result<Token<'a>, LexError> {
        let b = self.src.as_bytes();
        let (name, i) = self.name(at + 2, "an end tag without a name")?;
        let i = skip_whitespace(b, i);
        if b.get(i) != Some(&b'>') {
            return Err(error(i, "expected '>' to close an end tag"));
        }
        self.pos = i + 1;
        Ok(Token::End { name })
    }

    /// `<!--`, `<![CDATA[` or `<!DOCTYPE`.
    fn bang(&mut self, at: usize) -> Result<Token<'a>, LexError> {
        let rest = &self.src[at..];
        if rest.starts_with("<!--") {
            let body = at + 4;
            let Some(n) = self.src[body..].find("--") else {
                return Err(error(at, "unterminated comment"));
            };
            if self.src.as_bytes().get(body + n + 2) != Some(&b'>') {
                return Err(error(body + n, "'--' inside a comment"));
            }
            self.pos = body + n + 3;
            Ok(Token::Comment)
        } else if rest.starts_with("<![CDATA[") {
            let body = at + 9;
            let Some(n) = self.src[body..].find("]]>") else {
                return Err(error(at, "unterminated CDATA section"));
            };
            self.pos = body + n + 3;
            Ok(Token::CData(&self.src[body..body + n]))
        } else if rest.starts_with("<!DOCTYPE") {
            // Not read further: the reader refuses it, so its end is never needed.
            Ok(Token::Doctype)
        } else {
            Err(error(at, "expected a comment or CDATA section after '<!'"))
        }
    }

    /// `<?xml ...?>` or another processing instruction.
    fn question(&mut self, at: usize) -> Result<Token<'a>, LexError> {
        let (target, i) = self.name(at + 2, "a processing instruction without a target")?;
        let Some(n) = self.src[i..].find("?>") else {
            return Err(error(at, "unterminated processing instruction"));
        };
        self.pos = i + n + 2;
        if target == "xml" {
            Ok(Token::Decl(&self.src[i..i + n]))
        } else {
            Ok(Token::Pi)
        }
    }

    /// An XML name starting at `i`, and the offset just after it.
    fn name(&self, i: usize, missing: &'static str) -> Result<(&'a str, usize), LexError> {
        let b = self.src.as_bytes();
        if !b.get(i).is_some_and(|&c| NAME_START[usize::from(c)]) {
            return Err(error(i, missing));
        }
        let mut j = i + 1;
        while b.get(j).is_some_and(|&c| NAME_CHAR[usize::from(c)]) {
            j += 1;
        }
        Ok((&self.src[i..j], j))
    }
}

fn error(offset: usize, message: &'static str) -> LexError {
    LexError { offset, message }
}

/// The first index from `i` on, below `end`, whose byte is in `stop` (or `end`), for
/// runs that are mostly short (element text).
#[inline]
fn find(b: &[u8], mut i: usize, end: usize, stop: &[bool; 256]) -> usize {
    let end = end.min(b.len());
    while i < end && !stop[usize::from(b[i])] {
        i += 1;
    }
    i
}

/// As [`find`], for runs that are often tens of bytes (namespace URIs in attribute
/// values, escaped output): eight bytes at a time without a branch per byte, then byte
/// by byte from the chunk that holds the stop byte.
#[inline]
pub(crate) fn find_long(b: &[u8], mut i: usize, end: usize, stop: &[bool; 256]) -> usize {
    let end = end.min(b.len());
    if i >= end {
        return end;
    }
    for chunk in b[i..end].chunks_exact(8) {
        if chunk
            .iter()
            .fold(false, |hit, &c| hit | stop[usize::from(c)])
        {
            break;
        }
        i += 8;
    }
    find(b, i, end, stop)
}

/// Bytes that end or complicate a run of text: markup, references, carriage returns.
static TEXT_STOP: [bool; 256] = byte_set(b"<&\r");
/// Bytes that end or complicate an attribute value: either quote, `<`, references, and
/// the whitespace that normalisation turns into spaces.
static VALUE_STOP: [bool; 256] = byte_set(b"\"'<&\t\n\r");

/// A table of the bytes in `bytes`, for scans that stop at any of them.
pub(crate) const fn byte_set(bytes: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        t[bytes[i] as usize] = true;
        i += 1;
    }
    t
}

/// True when `b[at..]` starts with `name`. Markup names are short: those of up to 16
/// bytes are compared as two overlapping words (or three bytes) in line, not by a call to
/// `memcmp`.
#[inline]
fn has_at(b: &[u8], at: usize, name: &[u8]) -> bool {
    let Some(s) = b.get(at..at + name.len()) else {
        return false;
    };
    let n = name.len();
    let word8 =
        |x: &[u8], i: usize| u64::from_ne_bytes(x[i..i + 8].try_into().expect("eight bytes"));
    let word4 =
        |x: &[u8], i: usize| u32::from_ne_bytes(x[i..i + 4].try_into().expect("four bytes"));
    match n {
        0 => true,
        1..=3 => s[0] == name[0] && s[n / 2] == name[n / 2] && s[n - 1] == name[n - 1],
        4..=7 => word4(s, 0) == word4(name, 0) && word4(s, n - 4) == word4(name, n - 4),
        8..=16 => word8(s, 0) == word8(name, 0) && word8(s, n - 8) == word8(name, n - 8),
        _ => s == name,
    }
}

fn skip_whitespace(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Bytes that may start a name: ASCII letters, `_`, `:`, and every byte of a non-ASCII
/// character (XML 1.0's NameStartChar ranges cover nearly all of them).
static NAME_START: [bool; 256] = name_table(false);
/// Bytes that may continue a name: those, digits, `-` and `.`.
static NAME_CHAR: [bool; 256] = name_table(true);

const fn name_table(continuing: bool) -> [bool; 256] {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphabetic()
            || b == b'_'
            || b == b':'
            || b >= 0x80
            || (continuing && (b.is_ascii_digit() || b == b'-' || b == b'.'));
        c += 1;
    }
    t
}

/// Why a run of text or an attribute value could not be unescaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EscapeError {
    /// A reference to an entity other than the five predefined ones.
    Undeclared(String),
    /// A malformed reference (no `;`, a bad character number), at this offset in the run.
    Malformed(usize, &'static str),
}

/// Replaces references in `raw` and normalises its line ends (XML 1.0 §2.11): `\r\n`
/// and a lone `\r` become `\n`. In an attribute value (`attribute`), every literal tab,
/// newline and carriage return (a `\r\n` pair counting once) becomes a space as well
/// (§3.3.3); characters written as references are kept as they are.
pub(crate) fn unescape(raw: &str, attribute: bool) -> Result<Cow<'_, str>, EscapeError> {
    let b = raw.as_bytes();
    let Some(first) = b
        .iter()
        .position(|&c| c == b'&' || c == b'\r' || (attribute && (c == b'\t' || c == b'\n')))
    else {
        return Ok(Cow::Borrowed(raw));
    };
    let mut out = String::with_capacity(raw.len());
    out.push_str(&raw[..first]);
    let mut i = first;
    let mut copied = first;
    while i < b.len() {
        match b[i] {
            b'&' => {
                out.push_str(&raw[copied..i]);
                let Some(len) = raw[i + 1..].find(';') else {
                    return Err(EscapeError::Malformed(i, "a reference without ';'"));
                };
                let name = &raw[i + 1..i + 1 + len];
                out.push(reference(name).map_err(|e| match e {
                    EscapeError::Malformed(_, m) => EscapeError::Malformed(i, m),
                    e => e,
                })?);
                i += len + 2;
                copied = i;
            }
            b'\r' => {
                out.push_str(&raw[copied..i]);
                out.push(if attribute { ' ' } else { '\n' });
                i += if b.get(i + 1) == Some(&b'\n') { 2 } else { 1 };
                copied = i;
            }
            b'\t' | b'\n' if attribute => {
                out.push_str(&raw[copied..i]);
                out.push(' ');
                i += 1;
                copied = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&raw[copied..]);
    Ok(Cow::Owned(out))
}

/// The character a reference's name (between `&` and `;`) stands for.
fn reference(name: &str) -> Result<char, EscapeError> {
    let number = match name.strip_prefix('#') {
        None => {
            return predefined(name).ok_or_else(|| EscapeError::Undeclared(name.to_owned()));
        }
        Some(n) => n,
    };
    let (digits, radix) = match number.strip_prefix('x') {
        Some(hex) => (hex, 16),
        None => (number, 10),
    };
    let valid = !digits.is_empty() && digits.bytes().all(|c| (c as char).is_digit(radix));
    let c = u32::from_str_radix(digits, radix)
        .ok()
        .filter(|_| valid)
        .and_then(char::from_u32)
        .ok_or(EscapeError::Malformed(0, "a malformed character reference"))?;
    if is_xml_char(c) {
        Ok(c)
    } else {
        Err(EscapeError::Malformed(
            0,
            "a character reference to a character XML does not allow",
        ))
    }
}

/// The five entities every XML document has (XML 1.0 §4.6).
pub(crate) fn predefined(name: &str) -> Option<char> {
    Some(match name {
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "apos" => '\'',
        "quot" => '"',
        _ => return None,
    })
}

/// XML 1.0's `Char` production.
fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
}

/// The value of pseudo-attribute `key` in an XML declaration's content
/// (`version="1.0" encoding="UTF-8"`), if it is there.
pub(crate) fn pseudo_attribute<'a>(decl: &'a str, key: &str) -> Option<&'a str> {
    // Read without collecting: every request with a declaration comes through here.
    let lexer = Lexer::new(decl);
    let b = decl.as_bytes();
    let mut i = skip_whitespace(b, 0);
    let mut found = None;
    while i < b.len() {
        let (attribute, next) = lexer.read_attribute(i).ok()?;
        if attribute.name == key && found.is_none() {
            found = Some(attribute.value);
        }
        i = skip_whitespace(b, next);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `read` on a lexer over each case's input and checks what it returned and where
    /// the lexer stands after it.
    fn check_reads<'s, T: PartialEq + std::fmt::Debug>(
        cases: &[(&'s str, T, usize)],
        read: impl Fn(&mut Lexer<'s>) -> T,
    ) {
        for (src, want, after) in cases {
            let mut l = Lexer::new(src);
            assert_eq!(&read(&mut l), want, "{src:?}");
            assert_eq!(l.position(), *after, "{src:?}");
        }
    }

    #[test]
    fn a_start_tag_is_matched_by_its_whole_name() {
        check_reads(
            &[
                ("<b>x", Some(false), 3),
                ("<b>", Some(false), 3),
                ("<b/>", Some(true), 4),
                ("<b/", None, 0),
                ("<b", None, 0),
                ("<bc>", None, 0),
                ("<b >", None, 0),
                ("<b c='1'>", None, 0),
                ("</b>", None, 0),
                ("<p:b>", None, 0),
                ("", None, 0),
            ],
            |l| l.start_tag_of("b"),
        );
    }

    #[test]
    fn plain_text_is_read_with_its_end_tag_or_not_at_all() {
        check_reads(
            &[
                ("1.5</a>", Some("1.5"), 7),
                ("x y</a >z", Some("x y"), 8),
                ("</a>", None, 0),
                ("<b/>", None, 0),
                ("x&amp;y</a>", None, 0),
                ("x<!-- c --></a>", None, 0),
                ("x</ab>", None, 0),
                ("x", None, 0),
                ("", None, 0),
            ],
            |l| l.plain_text_and_end("a"),
        );
    }

    #[test]
    fn an_end_tag_is_matched_by_its_whole_name() {
        check_reads(
            &[
                ("</a>x", true, 4),
                ("</a \t\n>", true, 7),
                ("</ab>", false, 0),
                ("</a", false, 0),
                ("</a x>", false, 0),
                ("</b>", false, 0),
                ("<a>", false, 0),
                ("</", false, 0),
                ("", false, 0),
            ],
            |l| l.end_tag_of("a"),
        );
        let mut l = Lexer::new("text</p:a>");
        assert!(matches!(
            l.next_token(),
            Ok(Token::Text { raw: "text", .. })
        ));
        assert!(!l.end_tag_of("a"));
        assert!(l.end_tag_of("p:a"));
        assert_eq!(l.next_token(), Ok(Token::Eof));
    }

    #[test]
    fn has_at_compares_every_byte_of_names_of_every_length() {
        let name: Vec<u8> = (b'a'..=b'z').collect();
        for n in 0..=name.len() {
            let name = &name[..n];
            let mut doc = b"<".to_vec();
            doc.extend_from_slice(name);
            assert!(has_at(&doc, 1, name), "{n}");
            assert!(
                !has_at(&doc[..doc.len() - 1], 1, name) || n == 0,
                "short input, {n}"
            );
            for i in 0..n {
                let mut other = doc.clone();
                other[1 + i] ^= 0x20;
                assert!(!has_at(&other, 1, name), "byte {i} of {n} differs");
            }
        }
    }

    #[test]
    fn find_long_stops_where_the_byte_by_byte_scan_does() {
        // Every length up to three chunks, the stop byte at every place (or absent),
        // starting at every offset.
        for len in 0..26 {
            for at in 0..=len {
                let mut b = vec![b'a'; len];
                if at < len {
                    b[at] = b'<';
                }
                for from in 0..=len {
                    let slow = (from..len).find(|&i| b[i] == b'<').unwrap_or(len);
                    assert_eq!(
                        find_long(&b, from, len, &VALUE_STOP),
                        slow,
                        "{len} {at} {from}"
                    );
                    assert_eq!(find(&b, from, len, &VALUE_STOP), slow);
                }
            }
        }
    }

    fn tokens(src: &str) -> Result<Vec<Token<'_>>, LexError> {
        let mut l = Lexer::new(src);
        let mut out = Vec::new();
        loop {
            let t = l.next_token()?;
            out.push(t);
            // The lexer does not read past a DOCTYPE: the reader refuses it.
            if matches!(t, Token::Eof | Token::Doctype) {
                return Ok(out);
            }
        }
    }

    #[test]
    fn splits_tags_text_and_attributes() {
        let mut l = Lexer::new(r#"<p:a x = "1" y='a&amp;b'>t&lt;<b/></p:a >"#);
        assert_eq!(
            l.next_token(),
            Ok(Token::Start {
                name: "p:a",
                empty: false
            })
        );
        assert_eq!(
            l.attributes(),
            &[
                RawAttribute {
                    name: "x",
                    value: "1",
                    plain: true
                },
                RawAttribute {
                    name: "y",
                    value: "a&amp;b",
                    plain: false
                }
            ]
        );
        assert_eq!(
            l.next_token(),
            Ok(Token::Text {
                raw: "t&lt;",
                plain: false
            })
        );
        assert_eq!(
            l.next_token(),
            Ok(Token::Start {
                name: "b",
                empty: true
            })
        );
        assert_eq!(l.next_token(), Ok(Token::End { name: "p:a" }));
        assert_eq!(l.next_token(), Ok(Token::Eof));
    }

    #[test]
    fn long_text_is_scanned_whole() {
        let long = format!("<a>{}&amp;{}</a>", "x".repeat(100), "y".repeat(100));
        let t = tokens(&long).unwrap();
        assert_eq!(
            t[1],
            Token::Text {
                raw: &long[3..long.len() - 4],
                plain: false
            }
        );
        let plain = format!("<a>{}</a>", "x".repeat(100));
        assert!(matches!(
            tokens(&plain).unwrap()[1],
            Token::Text { plain: true, .. }
        ));
    }

    #[test]
    fn comments_cdata_declarations_and_refused_constructs() {
        assert_eq!(
            tokens("<?xml version='1.0'?><!-- c --><![CDATA[<x>]]><?pi x?><!DOCTYPE a>").unwrap()
                [..5],
            [
                Token::Decl(" version='1.0'"),
                Token::Comment,
                Token::CData("<x>"),
                Token::Pi,
                Token::Doctype
            ]
        );
        for bad in [
            "<!-- a -- b -->",
            "<!-- a",
            "<![CDATA[x",
            "<!ELEMENT a>",
            "<a",
            "<a x>",
            "<a x=1>",
            "<a x='1'y='2'>",
            "<a x='<'>",
            "< a>",
            "<1a>",
            "</a",
            "<?xml",
        ] {
            assert!(tokens(bad).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn unescapes_references_and_normalises_line_ends() {
        assert_eq!(unescape("plain", false).unwrap(), "plain");
        assert!(matches!(unescape("plain", false), Ok(Cow::Borrowed(_))));
        assert_eq!(
            unescape("&lt;&gt;&amp;&apos;&quot;&#65;&#x42;", false).unwrap(),
            "<>&'\"AB"
        );
        assert_eq!(unescape("a\r\nb\rc", false).unwrap(), "a\nb\nc");
        assert_eq!(unescape("a\r\nb\tc&#10;", true).unwrap(), "a b c\n");
        assert_eq!(
            unescape("&ent;", false),
            Err(EscapeError::Undeclared("ent".into()))
        );
        for bad in [
            "&amp",
            "&#;",
            "&#x;",
            "&#0;",
            "&#xD800;",
            "&#12a;",
            "&#x110000;",
        ] {
            assert!(
                matches!(unescape(bad, false), Err(EscapeError::Malformed(..))),
                "{bad}"
            );
        }
    }

    #[test]
    fn reads_pseudo_attributes() {
        let d = r#" version="1.0" encoding='ISO-8859-1' "#;
        assert_eq!(pseudo_attribute(d, "encoding"), Some("ISO-8859-1"));
        assert_eq!(pseudo_attribute(d, "standalone"), None);
    }
}
