//! The envelope: one validating pass that locates header blocks and the payload.

use std::ops::Range;

use osprey_xml::{Limits, QName, Scope, XmlError, XmlReader, XmlWriter};

use crate::{DecodeError, Fault, SoapVersion};

/// A decoded envelope: the version, where each header block and the payload are, and
/// the namespace bindings needed to read them again. It holds no copy of the bytes.
///
/// Decoding stops at the payload's start tag: the payload, and the end of the message
/// after it, are read (once) by [`Envelope::payload_reader`], whose reader checks that
/// `</Body></Envelope>` and nothing else follows the payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// The SOAP version of the envelope namespace.
    pub version: SoapVersion,
    /// The header blocks, in document order.
    pub headers: Vec<HeaderBlock>,
    /// Bindings in scope inside `Header` (declared on `Envelope` or `Header`).
    pub header_scope: Scope,
    /// The first child of `Body`, or `None` for an empty body.
    pub payload: Option<Payload>,
    /// Bindings in scope inside `Body`.
    pub body_scope: Scope,
    /// Raw names of `Body` and `Envelope` as written, which must close the message.
    open: Vec<Box<str>>,
}

/// One child element of `Header` (SOAP 1.2 Part 1 §5.2).
#[derive(Debug, Clone, PartialEq)]
pub struct HeaderBlock {
    /// The block's element name.
    pub name: QName,
    /// `mustUnderstand` was `1`/`true`.
    pub must_understand: bool,
    /// `role` (1.2) or `actor` (1.1), if given.
    pub role: Option<String>,
    /// Where the block's element lies in the message bytes.
    pub span: Range<usize>,
    /// Where its character data lies, when it has nothing else (no child element, CDATA
    /// or reference): the value of a simple block such as `wsa:Action` or a resource key,
    /// taken without reading the block again ([`Envelope::header_text`]).
    pub text: Option<Range<usize>>,
}

/// The payload element: the body's content in document/literal style.
#[derive(Debug, Clone, PartialEq)]
pub struct Payload {
    /// The payload element's name (`{urn:wstest}echoStruct`, or a `Fault`).
    pub name: QName,
    /// Byte offset of its start tag in the message.
    pub start: usize,
}

/// SOAP 1.2 role names a node always plays (Part 1 §2.2); 1.1's `next` actor.
const ROLE_NEXT_12: &str = "http://www.w3.org/2003/05/soap-envelope/role/next";
const ROLE_ULTIMATE_12: &str = "http://www.w3.org/2003/05/soap-envelope/role/ultimateReceiver";
const ACTOR_NEXT_11: &str = "http://schemas.xmlsoap.org/soap/actor/next";

impl HeaderBlock {
    /// True when the block is addressed to this node: no role, `next`, or the ultimate
    /// receiver (an endpoint is always the ultimate receiver).
    pub fn targets_us(&self) -> bool {
        matches!(
            self.role.as_deref(),
            None | Some("" | ROLE_NEXT_12 | ROLE_ULTIMATE_12 | ACTOR_NEXT_11)
        )
    }
}

impl Envelope {
    /// Reads and checks a whole message.
    ///
    /// # Errors
    /// [`DecodeError`] when the bytes are not a well-formed SOAP 1.1 or 1.2 envelope
    /// within `limits`.
    pub fn decode(bytes: &[u8], limits: &Limits) -> Result<Self, DecodeError> {
        let mut r = XmlReader::new(bytes, limits)?;
        let root = r.next_child()?.ok_or(XmlError::UnexpectedEof)?;
        if root.local() != "Envelope" {
            return Err(DecodeError::NotAnEnvelope {
                found: root.to_qname(),
            });
        }
        let version =
            SoapVersion::from_ns(root.ns()).ok_or_else(|| DecodeError::VersionMismatch {
                ns: root.ns().to_owned(),
            })?;
        let ns = version.ns();
        let mut env = Envelope {
            version,
            headers: Vec::new(),
            header_scope: Scope::default(),
            payload: None,
            body_scope: Scope::default(),
            open: Vec::new(),
        };
        let envelope_raw = root.raw_name();
        let mut child = r.next_child()?;
        if child.as_ref().is_some_and(|c| c.is(ns, "Header")) {
            env.header_scope = r.scope();
            while let Some(block) = r.next_child()? {
                let must_understand = match r.attribute(ns, "mustUnderstand") {
                    Some(v) => osprey_xml::parse_bool(v).ok_or_else(|| XmlError::Malformed {
                        offset: block.offset(),
                        message: format!("mustUnderstand={v:?} is not a boolean"),
                    })?,
                    None => false,
                };
                let role_attr = if version == SoapVersion::V12 {
                    "role"
                } else {
                    "actor"
                };
                let role = r.attribute(ns, role_attr).map(str::to_owned);
                let start = block.offset();
                let name = block.to_qname();
                let text = r.skim_element_text()?;
                env.headers.push(HeaderBlock {
                    name,
                    must_understand,
                    role,
                    span: start..r.last_end_offset(),
                    text,
                });
            }
            child = r.next_child()?;
        }
        let body = match child {
            Some(b) if b.is(ns, "Body") => b,
            Some(other) => {
                return Err(DecodeError::UnexpectedElement {
                    found: other.to_qname(),
                    parent: "Envelope",
                })
            }
            None => return Err(DecodeError::MissingBody),
        };
        env.body_scope = r.scope();
        env.open = vec![body.raw_name().into(), envelope_raw.into()];
        if let Some(p) = r.next_child()? {
            // The payload and the rest of the message are read by `payload_reader`.
            env.payload = Some(Payload {
                name: p.to_qname(),
                start: p.offset(),
            });
            return Ok(env);
        }
        if let Some(extra) = r.next_child()? {
            return Err(DecodeError::UnexpectedElement {
                found: extra.to_qname(),
                parent: "Envelope",
            });
        }
        r.finish()?;
        Ok(env)
    }

    /// A reader positioned before the payload element of `bytes` (the message this
    /// envelope was decoded from), or `None` for an empty body. After reading the payload,
    /// call [`XmlReader::finish`]: it checks that only `</Body></Envelope>` follows (WS-I
    /// Basic Profile R2201: one body child).
    ///
    /// # Errors
    /// [`XmlError::InvalidUtf8`] only if `bytes` is not the decoded message.
    pub fn payload_reader<'a>(
        &'a self,
        bytes: &'a [u8],
        limits: &Limits,
    ) -> Result<Option<XmlReader<'a>>, XmlError> {
        let Some(p) = &self.payload else {
            return Ok(None);
        };
        let text = span_str(bytes, &(p.start..bytes.len()))?;
        Ok(Some(XmlReader::resume(
            text,
            p.start,
            &self.body_scope,
            &self.open,
            limits,
        )))
    }

    /// The text of header block `index` when it is plain character data (see
    /// [`HeaderBlock::text`]), else `None`: read it with [`Self::header_reader`].
    ///
    /// # Panics
    /// When `index` is out of range.
    pub fn header_text<'a>(&self, index: usize, bytes: &'a [u8]) -> Option<&'a str> {
        let range = self.headers[index].text.clone()?;
        std::str::from_utf8(bytes.get(range)?).ok()
    }

    /// A reader over header block `index` of `bytes`.
    ///
    /// # Errors
    /// [`XmlError::InvalidUtf8`] only if `bytes` is not the decoded message.
    ///
    /// # Panics
    /// When `index` is out of range.
    pub fn header_reader<'a>(
        &'a self,
        index: usize,
        bytes: &'a [u8],
        limits: &Limits,
    ) -> Result<XmlReader<'a>, XmlError> {
        let span = &self.headers[index].span;
        Ok(XmlReader::fragment(
            span_str(bytes, span)?,
            span.start,
            &self.header_scope,
            limits,
        ))
    }
}

fn span_str<'a>(bytes: &'a [u8], span: &Range<usize>) -> Result<&'a str, XmlError> {
    let slice = bytes.get(span.clone()).ok_or(XmlError::UnexpectedEof)?;
    std::str::from_utf8(slice).map_err(|e| XmlError::InvalidUtf8 {
        offset: span.start + e.valid_up_to(),
    })
}

/// What a response body carries.
#[derive(Debug, Clone, Copy)]
pub enum Body<'a> {
    /// A payload element, already encoded as a self-contained fragment.
    Payload(&'a [u8]),
    /// A fault.
    Fault(&'a Fault),
    /// Nothing (an empty `Body`).
    Empty,
}

/// Writes a whole envelope: XML declaration, `Header` with `headers` (self-contained
/// fragments, written verbatim) when there are any, and `Body`.
pub fn write_envelope(w: &mut XmlWriter, version: SoapVersion, headers: &[&[u8]], body: Body<'_>) {
    let prefix = version.prefix();
    w.declaration();
    w.start_prefixed(prefix, "Envelope");
    w.declare(prefix, version.ns());
    let not_understood = match body {
        Body::Fault(f) if version == SoapVersion::V12 => f.not_understood.as_slice(),
        _ => &[],
    };
    if !headers.is_empty() || !not_understood.is_empty() {
        w.start_prefixed(prefix, "Header");
        for h in headers {
            w.raw(h);
        }
        // SOAP 1.2 Part 1 §5.4.8: one NotUnderstood block per header not understood.
        for q in not_understood {
            w.start_prefixed(prefix, "NotUnderstood");
            w.declare("nu", q.ns());
            w.attribute("qname", &format!("nu:{}", q.local()));
            w.end();
        }
        w.end();
    }
    w.start_prefixed(prefix, "Body");
    match body {
        Body::Payload(p) => w.raw(p),
        Body::Fault(f) => f.write(w, version),
        Body::Empty => {}
    }
    w.end();
    w.end();
}
