//! Why a message is not an acceptable SOAP envelope.

use osprey_xml::{QName, XmlError};
use thiserror::Error;

/// An envelope could not be decoded. Every variant is the sender's fault.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The XML is malformed, forbidden or over a limit.
    #[error(transparent)]
    Xml(#[from] XmlError),
    /// The root element is not an `Envelope`.
    #[error("root element {found} is not a SOAP Envelope")]
    NotAnEnvelope {
        /// The root element found.
        found: QName,
    },
    /// An `Envelope` in a namespace that is neither SOAP 1.1 nor 1.2.
    #[error("envelope namespace {ns:?} is not SOAP 1.1 or 1.2")]
    VersionMismatch {
        /// The namespace found.
        ns: String,
    },
    /// An element where the envelope grammar does not allow one.
    #[error("unexpected element {found} in the SOAP {parent}")]
    UnexpectedElement {
        /// The element found.
        found: QName,
        /// Where (`"Envelope"`, `"Body"`).
        parent: &'static str,
    },
    /// The envelope has no `Body`.
    #[error("the SOAP Envelope has no Body")]
    MissingBody,
}
