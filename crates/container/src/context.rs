//! The message context: everything known about one exchange, as typed fields.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use osprey_addressing::MessageHeaders;
use osprey_binding::{decode_element_from, XmlElement};
use osprey_soap::{Envelope, SoapVersion};
use osprey_xml::Limits;

use crate::ContainerError;

/// One inbound message and what the container learned about it.
#[derive(Debug)]
pub struct MessageContext {
    /// The message bytes, as received.
    pub bytes: Bytes,
    /// The decoded envelope (spans into `bytes`).
    pub envelope: Envelope,
    /// The request path.
    pub path: String,
    /// The HTTP `Host` header (`host:port`), if the request had one.
    pub host: Option<String>,
    /// HTTP `SOAPAction` (1.1) or the `action` media-type parameter (1.2).
    pub soap_action: Option<String>,
    /// WS-Addressing headers, once the addressing handler has read them.
    pub addressing: Option<MessageHeaders>,
    /// Per header block: whether a handler has processed it.
    pub understood: Vec<bool>,
    /// Header blocks to add to the response (self-contained fragments).
    pub response_headers: Vec<Vec<u8>>,
    /// The action of the operation being invoked, once routed.
    pub action: String,
    /// The response action of the operation, once routed.
    pub output_action: String,
    /// The peer, if the transport knows it.
    pub remote: Option<SocketAddr>,
    /// Parse limits in force.
    pub limits: Arc<Limits>,
    /// Values handlers leave for later handlers and the operation (the authenticated
    /// user, a body digest), by name.
    pub properties: Vec<(String, String)>,
}

impl MessageContext {
    /// The property `name`, if a handler set it.
    pub fn property(&self, name: &str) -> Option<&str> {
        self.properties
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Sets property `name` (replacing its value, if any).
    pub fn set_property(&mut self, name: &str, value: impl Into<String>) {
        let value = value.into();
        match self.properties.iter_mut().find(|(n, _)| n == name) {
            Some(p) => p.1 = value,
            None => self.properties.push((name.to_owned(), value)),
        }
    }

    /// The SOAP version of the message.
    pub fn version(&self) -> SoapVersion {
        self.envelope.version
    }

    /// Decodes the payload as `T`, and checks that only the envelope's end follows it.
    ///
    /// # Errors
    /// [`ContainerError::Binding`] naming the element and path that did not match.
    pub fn decode_payload<T: XmlElement>(&self) -> Result<T, ContainerError> {
        let mut r = match self.envelope.payload_reader(&self.bytes, &self.limits) {
            Ok(Some(r)) => r,
            Ok(None) => return Err(ContainerError::EmptyBody),
            Err(e) => return Err(ContainerError::from(osprey_binding::DecodeError::from(e))),
        };
        let value = decode_element_from::<T>(&mut r)?;
        // The payload was read in the same pass that checks the end of the message.
        r.finish().map_err(osprey_binding::DecodeError::from)?;
        Ok(value)
    }
}
