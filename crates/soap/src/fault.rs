//! The SOAP fault, one type for both versions (SOAP 1.1 §4.4, SOAP 1.2 Part 1 §5.4).

use std::fmt;

use osprey_xml::{Limits, QName, XmlError, XmlReader, XmlWriter};

use crate::{DecodeError, Envelope, SoapVersion};

/// The top-level fault code, in SOAP 1.2's words; SOAP 1.1 writes `Sender` as `Client`
/// and `Receiver` as `Server`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultCode {
    /// The envelope namespace was not one this node supports.
    VersionMismatch,
    /// A header block with `mustUnderstand` was not understood.
    MustUnderstand,
    /// The message used an unsupported encoding style.
    DataEncodingUnknown,
    /// The message was wrong (`Client` in 1.1): resending it unchanged will fail again.
    Sender,
    /// This node failed (`Server` in 1.1): the same message may succeed later.
    Receiver,
}

impl FaultCode {
    fn local(self, version: SoapVersion) -> &'static str {
        match (self, version) {
            (FaultCode::VersionMismatch, _) => "VersionMismatch",
            (FaultCode::MustUnderstand, _) => "MustUnderstand",
            (FaultCode::DataEncodingUnknown, _) => "DataEncodingUnknown",
            (FaultCode::Sender, SoapVersion::V11) => "Client",
            (FaultCode::Sender, SoapVersion::V12) => "Sender",
            (FaultCode::Receiver, SoapVersion::V11) => "Server",
            (FaultCode::Receiver, SoapVersion::V12) => "Receiver",
        }
    }

    fn from_local(local: &str) -> Option<Self> {
        Some(match local {
            "VersionMismatch" => FaultCode::VersionMismatch,
            "MustUnderstand" => FaultCode::MustUnderstand,
            "DataEncodingUnknown" => FaultCode::DataEncodingUnknown,
            "Client" | "Sender" => FaultCode::Sender,
            "Server" | "Receiver" => FaultCode::Receiver,
            _ => return None,
        })
    }
}

/// The content of a fault's `detail`: well-formed XML elements whose prefixes are
/// declared inside them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultDetail(String);

impl FaultDetail {
    /// A detail of one element `{ns}local` holding `text`.
    pub fn text(ns: &str, local: &str, text: &str) -> Self {
        let mut w = XmlWriter::with_capacity(64 + text.len());
        w.start(ns, local);
        w.text(text);
        w.end();
        FaultDetail(String::from_utf8(w.into_bytes()).expect("writer output is UTF-8"))
    }

    /// A detail from markup the caller guarantees is a well-formed, self-contained fragment.
    pub fn from_xml(xml: String) -> Self {
        FaultDetail(xml)
    }

    /// The markup.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A SOAP fault.
///
/// ```
/// use osprey_soap::{Fault, FaultCode, SoapVersion};
/// let f = Fault::sender("no such operation");
/// assert_eq!(f.code, FaultCode::Sender);
/// assert_eq!(f.http_status(SoapVersion::V11), 500);
/// assert_eq!(f.http_status(SoapVersion::V12), 400);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// The top-level code.
    pub code: FaultCode,
    /// A more precise, application or spec defined code. SOAP 1.2 writes it as `Subcode`;
    /// SOAP 1.1 writes Osprey's own subcodes in the dotted form (`Client.InvalidValue`)
    /// and spec-defined ones (WS-Addressing, WSRF) as the `faultcode` itself, as those
    /// specs' SOAP 1.1 bindings do.
    pub subcode: Option<QName>,
    /// Human-readable explanation.
    pub reason: String,
    /// Machine-readable details.
    pub detail: Option<FaultDetail>,
    /// For `MustUnderstand` faults: the header blocks not understood (SOAP 1.2 writes
    /// them as `NotUnderstood` header blocks).
    pub not_understood: Vec<QName>,
    /// The `wsa:Action` of the fault message, when the spec defining the fault names one
    /// (WSRF: `http://docs.oasis-open.org/wsrf/fault`); else WS-Addressing's own.
    pub action: Option<String>,
}

impl Fault {
    /// A fault with `code` and `reason`.
    pub fn new(code: FaultCode, reason: impl Into<String>) -> Self {
        Fault {
            code,
            subcode: None,
            reason: reason.into(),
            detail: None,
            not_understood: Vec::new(),
            action: None,
        }
    }

    /// The sender's message was wrong.
    pub fn sender(reason: impl Into<String>) -> Self {
        Self::new(FaultCode::Sender, reason)
    }

    /// This node failed.
    pub fn receiver(reason: impl Into<String>) -> Self {
        Self::new(FaultCode::Receiver, reason)
    }

    /// Sets the subcode.
    #[must_use]
    pub fn with_subcode(mut self, subcode: QName) -> Self {
        self.subcode = Some(subcode);
        self
    }

    /// Sets the detail.
    #[must_use]
    pub fn with_detail(mut self, detail: FaultDetail) -> Self {
        self.detail = Some(detail);
        self
    }

    /// Sets the `wsa:Action` of the fault message.
    #[must_use]
    pub fn with_action(mut self, action: impl Into<String>) -> Self {
        self.action = Some(action.into());
        self
    }

    /// The HTTP status that carries this fault (SOAP 1.1 §6.2: 500 for every fault;
    /// SOAP 1.2 Part 2 §7.5.1.2: 400 for `Sender`, 500 otherwise).
    pub fn http_status(&self, version: SoapVersion) -> u16 {
        match (version, self.code) {
            (SoapVersion::V12, FaultCode::Sender) => 400,
            _ => 500,
        }
    }

    /// Writes the `Fault` element in `version`'s shape.
    pub fn write(&self, w: &mut XmlWriter, version: SoapVersion) {
        let p = version.prefix();
        w.start_prefixed(p, "Fault");
        match version {
            SoapVersion::V11 => {
                w.start("", "faultcode");
                match &self.subcode {
                    // SOAP 1.1 §4.4.1: a more specific code extends the base one with a dot.
                    Some(q) if q.ns() == OSPREY_FAULT_NS => {
                        w.text(p);
                        w.text(":");
                        w.text(self.code.local(version));
                        w.text(".");
                        w.text(q.local());
                    }
                    Some(q) => {
                        w.declare("fc", q.ns());
                        w.text("fc:");
                        w.text(q.local());
                    }
                    None => {
                        w.text(p);
                        w.text(":");
                        w.text(self.code.local(version));
                    }
                }
                w.end();
                w.start("", "faultstring");
                w.text(&self.reason);
                w.end();
                if let Some(d) = &self.detail {
                    w.start("", "detail");
                    w.raw(d.0.as_bytes());
                    w.end();
                }
            }
            SoapVersion::V12 => {
                w.start_prefixed(p, "Code");
                w.start_prefixed(p, "Value");
                w.text(p);
                w.text(":");
                w.text(self.code.local(version));
                w.end();
                if let Some(q) = &self.subcode {
                    w.start_prefixed(p, "Subcode");
                    w.start_prefixed(p, "Value");
                    w.declare("fc", q.ns());
                    w.text("fc:");
                    w.text(q.local());
                    w.end();
                    w.end();
                }
                w.end();
                w.start_prefixed(p, "Reason");
                w.start_prefixed(p, "Text");
                w.attribute("xml:lang", "en");
                w.text(&self.reason);
                w.end();
                w.end();
                if let Some(d) = &self.detail {
                    w.start_prefixed(p, "Detail");
                    w.raw(d.0.as_bytes());
                    w.end();
                }
            }
        }
        w.end();
    }

    /// Reads the fault in the body of a decoded envelope (a client reading a response).
    /// Returns `None` when the body holds no fault.
    ///
    /// # Errors
    /// [`DecodeError`] when the fault element is malformed.
    pub fn decode(
        env: &Envelope,
        bytes: &[u8],
        limits: &Limits,
    ) -> Result<Option<Fault>, DecodeError> {
        let ns = env.version.ns();
        match &env.payload {
            Some(p) if p.name.is(ns, "Fault") => {}
            _ => return Ok(None),
        }
        let Some(mut r) = env.payload_reader(bytes, limits)? else {
            return Ok(None);
        };
        r.next_child()?;
        let mut fault = Fault::receiver("");
        while let Some(child) = r.next_child()? {
            match (env.version, child.local()) {
                (SoapVersion::V11, "faultcode") => {
                    let q = read_qname(&mut r)?;
                    let (base, specific) = q.local().split_once('.').unwrap_or((q.local(), ""));
                    match FaultCode::from_local(base).filter(|_| q.ns() == ns) {
                        Some(code) => {
                            fault.code = code;
                            if !specific.is_empty() {
                                fault.subcode =
                                    Some(QName::new(OSPREY_FAULT_NS, specific.to_owned()));
                            }
                        }
                        None => fault.subcode = Some(q),
                    }
                }
                (SoapVersion::V11, "faultstring") => {
                    fault.reason = r.read_text()?.into_owned();
                }
                (SoapVersion::V12, "Code") => {
                    while let Some(part) = r.next_child()? {
                        match part.local() {
                            "Value" => {
                                if let Some(code) =
                                    FaultCode::from_local(read_qname(&mut r)?.local())
                                {
                                    fault.code = code;
                                }
                            }
                            "Subcode" => {
                                while r.next_child()?.is_some() {
                                    let q = read_qname(&mut r)?;
                                    fault.subcode.get_or_insert(q);
                                }
                            }
                            _ => r.skip_element()?,
                        }
                    }
                }
                (SoapVersion::V12, "Reason") => {
                    while r.next_child()?.is_some() {
                        let text = r.read_text()?;
                        if fault.reason.is_empty() {
                            fault.reason = text.into_owned();
                        }
                    }
                }
                (SoapVersion::V11, "detail") | (SoapVersion::V12, "Detail") => {
                    fault.detail = read_detail(&mut r)?;
                }
                _ => r.skip_element()?,
            }
        }
        Ok(Some(fault))
    }
}

/// Gathers all text below the current element, separated by spaces.
/// The content of a `detail` element whose start tag was just read: its child elements,
/// each copied as a self-contained fragment (the spec fault element of WSRF, say), or,
/// when it holds only text, that text in an Osprey `text` element.
fn read_detail(r: &mut XmlReader<'_>) -> Result<Option<FaultDetail>, XmlError> {
    let mut w = XmlWriter::with_capacity(256);
    let mut text = String::new();
    let target = r.depth() - 1;
    while r.depth() > target {
        match r.next_event()? {
            osprey_xml::XmlEvent::Start(s) => osprey_xml::copy_element(r, &s, &mut w, &[])?,
            osprey_xml::XmlEvent::Text(t) => text.push_str(t.trim()),
            osprey_xml::XmlEvent::End | osprey_xml::XmlEvent::Eof => {}
        }
    }
    Ok(if !w.as_bytes().is_empty() {
        Some(FaultDetail::from_xml(w.as_str().to_owned()))
    } else if !text.is_empty() {
        Some(FaultDetail::text(OSPREY_FAULT_NS, "text", &text))
    } else {
        None
    })
}

/// Reads an element whose text is a QName, resolving its prefix in the element's scope.
fn read_qname(r: &mut XmlReader<'_>) -> Result<QName, XmlError> {
    // The element's own declarations go out of scope with its end tag: resolve first.
    let scope = r.scope();
    let text = r.read_text()?;
    let text = text.trim();
    let (prefix, local) = text.split_once(':').unwrap_or(("", text));
    let ns = match scope.bindings().filter(|(p, _)| *p == prefix).last() {
        Some((_, uri)) => uri,
        None if prefix == "xml" => osprey_xml::XML_NS,
        None if prefix.is_empty() => "",
        None => {
            return Err(XmlError::UndeclaredPrefix {
                prefix: prefix.to_owned(),
            })
        }
    };
    Ok(QName::new(ns.to_owned(), local.to_owned()))
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.code)?;
        if let Some(s) = &self.subcode {
            write!(f, " ({s})")?;
        }
        write!(f, ": {}", self.reason)?;
        if let Some(d) = &self.detail {
            write!(f, " [{}]", d.as_str())?;
        }
        Ok(())
    }
}

/// Osprey's own fault subcodes live in this namespace.
pub const OSPREY_FAULT_NS: &str = "urn:osprey:fault";

impl From<&DecodeError> for Fault {
    fn from(e: &DecodeError) -> Self {
        let (code, sub) = match e {
            DecodeError::VersionMismatch { .. } => (FaultCode::VersionMismatch, None),
            DecodeError::Xml(XmlError::LimitExceeded { .. }) => {
                (FaultCode::Sender, Some("LimitExceeded"))
            }
            DecodeError::Xml(_) => (FaultCode::Sender, Some("MalformedMessage")),
            _ => (FaultCode::Sender, Some("InvalidEnvelope")),
        };
        let mut f = Fault::new(code, e.to_string());
        if let Some(sub) = sub {
            f.subcode = Some(QName::new_static(OSPREY_FAULT_NS, sub));
        }
        f
    }
}
