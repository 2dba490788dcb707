//! The XML layer every other Osprey crate reads and writes through.
//!
//! It owns qualified names ([`QName`]), namespace resolution, a pull reader
//! ([`XmlReader`]) that enforces [`Limits`] while it reads, and a streaming writer
//! ([`XmlWriter`]) with fast number formatting. It deliberately knows nothing about
//! SOAP, schemas or I/O: bytes go in, events and bytes come out.
//!
//! The tokenizer is this crate's own ([`lexer`](self)): it reads a message that was checked
//! as UTF-8 once and hands out slices of it.
//!
//! ```
//! use osprey_xml::{Limits, XmlReader, XmlEvent};
//! let limits = Limits::default();
//! let mut r = XmlReader::new(br#"<a xmlns="urn:x"><b>1</b></a>"#, &limits).unwrap();
//! let XmlEvent::Start(a) = r.next_event().unwrap() else { panic!() };
//! assert_eq!((a.ns(), a.local()), ("urn:x", "a"));
//! ```

mod error;
mod lexer;
mod limits;
mod number;
mod qname;
mod reader;
mod writer;

pub use error::XmlError;
pub use limits::Limits;
pub use number::{format_f32, format_f64, parse_bool, parse_f32, parse_f64};
pub use qname::QName;
pub use reader::{Attribute, Scope, StartElement, XmlEvent, XmlReader};
pub use writer::{copy_element, XmlWriter};

/// The `xml` prefix's namespace, bound implicitly in every document (XML Namespaces §3).
pub const XML_NS: &str = "http://www.w3.org/XML/1998/namespace";
/// The namespace of `xmlns` attributes themselves.
pub const XMLNS_NS: &str = "http://www.w3.org/2000/xmlns/";
/// The XML Schema instance namespace (`xsi:type`, `xsi:nil`).
pub const XSI_NS: &str = "http://www.w3.org/2001/XMLSchema-instance";
