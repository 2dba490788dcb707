//! WSDL 1.1 (W3C Note 2001) with embedded XML Schema: the model of a service's
//! contract, generated from its definition ([`generate`]), and read back from any WSDL
//! document for dynamic clients ([`parse`]).
//!
//! The generated document is document/literal wrapped, with a SOAP 1.1 and a SOAP 1.2
//! binding, `wsam:Action` on each message, and names chosen so that zeep, CXF's
//! wsdl2java and gSOAP's wsdl2h consume it unchanged. No I/O.

mod definition;
mod generate;
mod parse;

pub use definition::{ElementDefinition, OperationDefinition, ServiceDefinition};
pub use generate::generate;
pub use parse::{parse, Contract, ContractOperation, ParseError, SchemaElement, SchemaParticle};

/// WSDL 1.1 namespace.
pub const WSDL_NS: &str = "http://schemas.xmlsoap.org/wsdl/";
/// WSDL SOAP 1.1 binding namespace.
pub const SOAP11_BINDING_NS: &str = "http://schemas.xmlsoap.org/wsdl/soap/";
/// WSDL SOAP 1.2 binding namespace.
pub const SOAP12_BINDING_NS: &str = "http://schemas.xmlsoap.org/wsdl/soap12/";
/// WS-Addressing Metadata namespace (`wsam:Action`).
pub const WSAM_NS: &str = "http://www.w3.org/2007/05/addressing/metadata";
