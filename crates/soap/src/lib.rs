//! SOAP 1.1 and 1.2 envelopes and faults, without I/O.
//!
//! [`Envelope::decode`] reads a whole message once under [`osprey_xml::Limits`], checking
//! that it is a well-formed envelope of either version, and records where each header
//! block and the body's payload element lie in the bytes, with the namespace bindings in
//! scope there. Later stages (WS-Addressing, generated decoders, handlers) read those
//! spans again with a fragment reader instead of building a tree.
//!
//! [`Fault`] is the one fault type, written in each version's own shape by
//! [`write_envelope`]. This crate owns no transport and no dispatch.
//!
//! ```
//! use osprey_soap::{Envelope, SoapVersion};
//! use osprey_xml::Limits;
//! let msg = br#"<e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Body><p xmlns="urn:x"/></e:Body></e:Envelope>"#;
//! let env = Envelope::decode(msg, &Limits::default()).unwrap();
//! assert_eq!(env.version, SoapVersion::V11);
//! assert!(env.payload.unwrap().name.is("urn:x", "p"));
//! ```

mod envelope;
mod error;
mod fault;
mod version;

pub use envelope::{write_envelope, Body, Envelope, HeaderBlock, Payload};
pub use error::DecodeError;
pub use fault::{Fault, FaultCode, FaultDetail, OSPREY_FAULT_NS};
pub use version::{action_parameter, SoapVersion};
