//! WS-Addressing 1.0 (W3C Recommendation 2006, Core and SOAP Binding): message
//! addressing properties read from SOAP headers, endpoint references, and the headers of
//! a reply. No I/O: envelopes and bytes in, header fragments out.
//!
//! Only anonymous `ReplyTo`/`FaultTo` are served (replies go back on the same HTTP
//! exchange); any other address is refused with `wsa:OnlyAnonymousAddressSupported`.

use osprey_soap::{Envelope, Fault};
use osprey_xml::{copy_element, Limits, QName, XmlError, XmlReader, XmlWriter};
use thiserror::Error;

/// The WS-Addressing 1.0 namespace.
pub const WSA_NS: &str = "http://www.w3.org/2005/08/addressing";
/// The anonymous address: "reply on the back channel".
pub const ANONYMOUS: &str = "http://www.w3.org/2005/08/addressing/anonymous";
/// The none address: "do not reply".
pub const NONE: &str = "http://www.w3.org/2005/08/addressing/none";

/// An endpoint reference (WS-Addressing Core §2).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointReference {
    /// `wsa:Address`.
    pub address: String,
    /// `wsa:ReferenceParameters` children, each a self-contained XML fragment.
    pub reference_parameters: Vec<String>,
}

impl EndpointReference {
    /// An EPR for `address` with no reference parameters.
    pub fn new(address: impl Into<String>) -> Self {
        EndpointReference {
            address: address.into(),
            reference_parameters: Vec::new(),
        }
    }

    /// True for the anonymous address.
    pub fn is_anonymous(&self) -> bool {
        self.address == ANONYMOUS
    }

    /// Writes the EPR as element `{ns}local`.
    pub fn write(&self, w: &mut XmlWriter, ns: &str, local: &str) {
        w.start(ns, local);
        w.start(WSA_NS, "Address");
        w.text(&self.address);
        w.end();
        if !self.reference_parameters.is_empty() {
            w.start(WSA_NS, "ReferenceParameters");
            for p in &self.reference_parameters {
                w.raw(p.as_bytes());
            }
            w.end();
        }
        w.end();
    }

    /// Reads an EPR whose start tag `r` just returned.
    ///
    /// # Errors
    /// [`AddressingError::InvalidHeader`] when `Address` is missing.
    pub fn decode(r: &mut XmlReader<'_>, name: &'static str) -> Result<Self, AddressingError> {
        let mut epr = EndpointReference::default();
        let mut has_address = false;
        while let Some(child) = r.next_child()? {
            if child.is(WSA_NS, "Address") {
                epr.address = r.read_text()?.trim().to_owned();
                has_address = true;
            } else if child.is(WSA_NS, "ReferenceParameters") {
                while let Some(p) = r.next_child()? {
                    let mut w = XmlWriter::with_capacity(128);
                    copy_element(r, &p, &mut w, &[])?;
                    epr.reference_parameters
                        .push(String::from_utf8_lossy(w.as_bytes()).into_owned());
                }
            } else {
                // Metadata and extensions are allowed and ignored.
                r.skip_element()?;
            }
        }
        if !has_address {
            return Err(AddressingError::InvalidHeader {
                header: name,
                why: "it has no wsa:Address",
            });
        }
        Ok(epr)
    }
}

/// The message addressing properties of one message (WS-Addressing Core §3).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageHeaders {
    /// `wsa:To`.
    pub to: Option<String>,
    /// `wsa:Action`.
    pub action: Option<String>,
    /// `wsa:MessageID`.
    pub message_id: Option<String>,
    /// `wsa:RelatesTo` values (reply relationship only is written).
    pub relates_to: Vec<String>,
    /// `wsa:ReplyTo`.
    pub reply_to: Option<EndpointReference>,
    /// `wsa:FaultTo`.
    pub fault_to: Option<EndpointReference>,
    /// `wsa:From`.
    pub from: Option<EndpointReference>,
}

/// What is wrong with a message's addressing headers; each maps to the fault the SOAP
/// binding (§6.4) defines.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum AddressingError {
    /// A header is malformed or repeated (`wsa:InvalidAddressingHeader`).
    #[error("invalid addressing header wsa:{header}: {why}")]
    InvalidHeader {
        /// The header's local name.
        header: &'static str,
        /// What is wrong.
        why: &'static str,
    },
    /// A required header is absent (`wsa:MessageAddressingHeaderRequired`).
    #[error("required addressing header wsa:{header} is missing")]
    HeaderRequired {
        /// The header's local name.
        header: &'static str,
    },
    /// A reply address other than anonymous (`wsa:OnlyAnonymousAddressSupported`).
    #[error("only the anonymous address is supported for wsa:{header}, not {address:?}")]
    OnlyAnonymousAddressSupported {
        /// `ReplyTo` or `FaultTo`.
        header: &'static str,
        /// The address given.
        address: String,
    },
    /// No operation has this action (`wsa:ActionNotSupported`).
    #[error("action {action:?} is not supported by this endpoint")]
    ActionNotSupported {
        /// The action.
        action: String,
    },
    /// The XML of a header was bad.
    #[error(transparent)]
    Xml(#[from] XmlError),
}

impl From<&AddressingError> for Fault {
    fn from(e: &AddressingError) -> Self {
        let sub = match e {
            AddressingError::InvalidHeader { .. } | AddressingError::Xml(_) => {
                "InvalidAddressingHeader"
            }
            AddressingError::HeaderRequired { .. } => "MessageAddressingHeaderRequired",
            AddressingError::OnlyAnonymousAddressSupported { .. } => {
                "OnlyAnonymousAddressSupported"
            }
            AddressingError::ActionNotSupported { .. } => "ActionNotSupported",
        };
        Fault::sender(e.to_string()).with_subcode(QName::new_static(WSA_NS, sub))
    }
}

fn once(seen: bool, header: &'static str) -> Result<(), AddressingError> {
    match seen {
        true => Err(AddressingError::InvalidHeader {
            header,
            why: "it appears more than once",
        }),
        false => Ok(()),
    }
}

/// The header blocks this crate understands (for `mustUnderstand` processing).
pub const UNDERSTOOD: [&str; 7] = [
    "To",
    "Action",
    "MessageID",
    "RelatesTo",
    "ReplyTo",
    "FaultTo",
    "From",
];

impl MessageHeaders {
    /// Reads the addressing headers of a decoded envelope; `None` when it has none.
    ///
    /// # Errors
    /// [`AddressingError`] for repeated or malformed headers, a missing `Action` while
    /// other addressing headers are present, or a non-anonymous reply address.
    pub fn decode(
        env: &Envelope,
        bytes: &[u8],
        limits: &Limits,
    ) -> Result<Option<Self>, AddressingError> {
        let mut h = MessageHeaders::default();
        let mut any = false;
        for (i, block) in env.headers.iter().enumerate() {
            if block.name.ns() != WSA_NS || !block.targets_us() {
                continue;
            }
            any = true;
            // The simple headers' values come straight from the envelope pass when they
            // are plain text; anything else is read again in full.
            let text = |env: &Envelope| -> Result<String, AddressingError> {
                if let Some(t) = env.header_text(i, bytes) {
                    return Ok(t.trim().to_owned());
                }
                let mut r = env.header_reader(i, bytes, limits)?;
                r.next_child()?;
                Ok(r.read_text()?.trim().to_owned())
            };
            match block.name.local() {
                "To" => {
                    once(h.to.is_some(), "To")?;
                    h.to = Some(text(env)?);
                }
                "Action" => {
                    once(h.action.is_some(), "Action")?;
                    h.action = Some(text(env)?);
                }
                "MessageID" => {
                    once(h.message_id.is_some(), "MessageID")?;
                    h.message_id = Some(text(env)?);
                }
                "RelatesTo" => h.relates_to.push(text(env)?),
                "ReplyTo" | "FaultTo" | "From" => {
                    let mut r = env.header_reader(i, bytes, limits)?;
                    r.next_child()?;
                    match block.name.local() {
                        "ReplyTo" => {
                            once(h.reply_to.is_some(), "ReplyTo")?;
                            h.reply_to = Some(EndpointReference::decode(&mut r, "ReplyTo")?);
                        }
                        "FaultTo" => {
                            once(h.fault_to.is_some(), "FaultTo")?;
                            h.fault_to = Some(EndpointReference::decode(&mut r, "FaultTo")?);
                        }
                        _ => h.from = Some(EndpointReference::decode(&mut r, "From")?),
                    }
                }
                _ => {}
            }
        }
        if !any {
            return Ok(None);
        }
        if h.action.is_none() {
            return Err(AddressingError::HeaderRequired { header: "Action" });
        }
        for (epr, header) in [(&h.reply_to, "ReplyTo"), (&h.fault_to, "FaultTo")] {
            if let Some(epr) = epr {
                if !epr.is_anonymous() && epr.address != NONE {
                    return Err(AddressingError::OnlyAnonymousAddressSupported {
                        header,
                        address: epr.address.clone(),
                    });
                }
            }
        }
        Ok(Some(h))
    }

    /// The header blocks of the reply to this message (SOAP Binding §3.3): `Action`,
    /// `MessageID`, `RelatesTo` the request's `MessageID`, `To` the reply endpoint, and
    /// that endpoint's reference parameters marked `wsa:IsReferenceParameter`.
    /// `fault` selects `FaultTo` over `ReplyTo` as the destination.
    ///
    /// # Errors
    /// [`XmlError`] only if a stored reference parameter is not well-formed.
    pub fn reply_headers(
        &self,
        action: &str,
        message_id: &str,
        fault: bool,
    ) -> Result<Vec<u8>, XmlError> {
        let mut w = XmlWriter::with_capacity(512);
        let text = |w: &mut XmlWriter, local: &str, value: &str| {
            w.start(WSA_NS, local);
            w.text(value);
            w.end();
        };
        let dest = if fault {
            self.fault_to.as_ref().or(self.reply_to.as_ref())
        } else {
            self.reply_to.as_ref()
        };
        text(&mut w, "To", dest.map_or(ANONYMOUS, |d| &d.address));
        text(&mut w, "Action", action);
        text(&mut w, "MessageID", message_id);
        if let Some(id) = &self.message_id {
            text(&mut w, "RelatesTo", id);
        }
        if let Some(d) = dest {
            write_reference_parameters(d, &mut w)?;
        }
        Ok(w.into_bytes())
    }
}

/// The addressing headers of a request (or one-way message) to `dest` (SOAP Binding
/// §2.3): `To` (its address), `Action`, `MessageID`, and each of its reference
/// parameters as a header block marked `wsa:IsReferenceParameter="true"`.
///
/// # Errors
/// [`XmlError`] when a reference parameter is not well-formed XML.
pub fn request_headers(
    dest: &EndpointReference,
    action: &str,
    message_id: &str,
) -> Result<Vec<u8>, XmlError> {
    let mut w = XmlWriter::with_capacity(512);
    for (local, value) in [
        ("To", dest.address.as_str()),
        ("Action", action),
        ("MessageID", message_id),
    ] {
        w.start(WSA_NS, local);
        w.text(value);
        w.end();
    }
    write_reference_parameters(dest, &mut w)?;
    Ok(w.into_bytes())
}

fn write_reference_parameters(dest: &EndpointReference, w: &mut XmlWriter) -> Result<(), XmlError> {
    for p in &dest.reference_parameters {
        let scope = osprey_xml::Scope::default();
        let mut r = XmlReader::fragment(p, 0, &scope, &Limits::default());
        let Some(start) = r.next_child()? else {
            continue;
        };
        copy_element(
            &mut r,
            &start,
            w,
            &[("wsa", WSA_NS, "IsReferenceParameter", "true")],
        )?;
    }
    Ok(())
}

/// A fresh `urn:uuid:` message identifier (random, version 4 layout).
pub fn new_message_id() -> String {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // RandomState is seeded from the OS once per process; hashing a counter with it gives
    // unpredictable, unique values without another dependency.
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut h1 = RandomState::new().build_hasher();
    h1.write_u64(n);
    let a = h1.finish();
    let mut h2 = RandomState::new().build_hasher();
    h2.write_u64(!n);
    let b = h2.finish();
    let a = (a & 0xffff_ffff_ffff_0fff) | 0x4000;
    let b = (b & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
    // urn:uuid:xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, the 128 bits a then b, written by hand
    // (format! costs ten times as much, on every reply).
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut id = String::with_capacity(45);
    id.push_str("urn:uuid:");
    for (i, nibble) in (0..32).map(|i| {
        let word = if i < 16 { a } else { b };
        (i, (word >> (60 - 4 * (i % 16))) & 0xf)
    }) {
        if matches!(i, 8 | 12 | 16 | 20) {
            id.push('-');
        }
        id.push(char::from(HEX[nibble as usize]));
    }
    id
}

#[cfg(test)]
mod tests;
