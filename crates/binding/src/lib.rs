//! Data binding between Rust types and XML Schema, generated at build time.
//!
//! `#[derive(XmlType)]` writes, for each struct or enum, a streaming encoder, a streaming
//! decoder and a static XSD description ([`TypeDesc`]). Nothing is looked up or reflected
//! on while a message is processed: the generated code compares element names in schema
//! order and parses values straight from the reader's borrowed text.
//!
//! ```
//! use osprey_binding::{XmlType, XmlElement, decode_element, encode_element};
//! use osprey_xml::Limits;
//!
//! #[derive(XmlType, Debug, PartialEq)]
//! #[xml(namespace = "urn:example", element = "point")]
//! struct Point { x: i32, y: i32, label: Option<String> }
//!
//! let p = Point { x: 1, y: -2, label: None };
//! let xml = encode_element(&p);
//! assert_eq!(xml, r#"<point xmlns="urn:example"><x>1</x><y>-2</y></point>"#);
//! assert_eq!(decode_element::<Point>(xml.as_bytes(), &Limits::default()).unwrap(), p);
//! ```

extern crate self as osprey_binding;

mod builtin;
mod datetime;
mod error;
mod schema;
mod validate;

pub use builtin::Base64Binary;
pub use datetime::DateTime;
pub use error::DecodeError;
pub use osprey_binding_derive::XmlType;
pub use osprey_xml as xml;
pub use schema::{ComplexType, EnumType, FieldDesc, MaxOccurs, TypeDesc, XSD_NS};
pub use validate::validate_content;

use osprey_xml::{Limits, QName, XmlReader, XmlWriter};

/// A Rust type with an XML Schema representation.
///
/// Implemented by `#[derive(XmlType)]` and, for the XSD built-in types, by this crate.
pub trait XmlType: Sized {
    /// The type's XSD description, for WSDL generation.
    fn schema() -> &'static TypeDesc;

    /// Writes the content of an element holding `self` (text, or child elements); the
    /// caller writes the element's own start and end tags.
    fn encode(&self, w: &mut XmlWriter);

    /// Reads the content of an element whose start tag was just read, through its end tag.
    ///
    /// # Errors
    /// [`DecodeError`] naming the offending element and its path.
    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError>;

    /// True for types whose content is text alone (the XSD simple types and enumerations):
    /// their values are also read from text by [`Self::from_text`], which lets a generated
    /// decoder take `<a>text</a>` in one step ([`XmlReader::leaf_expecting`]).
    const TEXT_ONLY: bool = false;

    /// The value whose element content is `text` (references already replaced), for a
    /// [`Self::TEXT_ONLY`] type; `decode` reads the same text from the reader.
    ///
    /// # Errors
    /// [`DecodeError::InvalidValue`] when `text` is not a value of the type, and always
    /// for a type that is not [`Self::TEXT_ONLY`].
    fn from_text(text: &str) -> Result<Self, DecodeError> {
        Err(DecodeError::invalid(text, "element content"))
    }
}

/// For generated decoders: the next child read whole as a leaf `<name>text</name>` when
/// `T` is a simple type, the child's namespace is the default one (`leaves`) and it is
/// written plainly; `None`, with nothing read, otherwise.
///
/// # Errors
/// As [`XmlReader::leaf_expecting`], and `T`'s [`XmlType::from_text`], within `name`.
#[doc(hidden)]
#[inline]
pub fn decode_leaf<T: XmlType>(
    r: &mut XmlReader<'_>,
    leaves: bool,
    name: &'static str,
) -> Result<Option<T>, DecodeError> {
    if !(T::TEXT_ONLY && leaves) {
        return Ok(None);
    }
    match r.leaf_expecting(name)? {
        Some(text) => T::from_text(text).map(Some).map_err(|e| e.in_element(name)),
        None => Ok(None),
    }
}

/// A type that is a global element declaration: a message payload.
pub trait XmlElement: XmlType {
    /// The element's namespace.
    const NS: &'static str;
    /// The element's local name.
    const LOCAL: &'static str;

    /// The element's qualified name.
    fn qname() -> QName {
        QName::new_static(Self::NS, Self::LOCAL)
    }
}

/// Writes `value` as its element, with its namespace declared as default namespace.
pub fn encode_element_into<T: XmlElement>(value: &T, w: &mut XmlWriter) {
    w.start_static(T::NS, T::LOCAL);
    value.encode(w);
    w.end();
}

/// `value` as a standalone XML fragment.
pub fn encode_element<T: XmlElement>(value: &T) -> String {
    let mut w = XmlWriter::new();
    encode_element_into(value, &mut w);
    String::from_utf8(w.into_bytes()).expect("writer output is UTF-8")
}

/// Reads a `T` element from a reader positioned before it (whitespace may precede it).
///
/// # Errors
/// [`DecodeError::UnexpectedElement`] when the next element is not `T::NAME`, or any
/// error of `T`'s decoder.
pub fn decode_element_from<T: XmlElement>(r: &mut XmlReader<'_>) -> Result<T, DecodeError> {
    match r.next_child()? {
        Some(s) if s.is(T::NS, T::LOCAL) => T::decode(r).map_err(|e| e.in_element(T::LOCAL)),
        found => Err(DecodeError::missing(T::LOCAL, found)),
    }
}

/// Reads a standalone `T` element from bytes.
///
/// # Errors
/// As [`decode_element_from`], and any XML error of the document.
pub fn decode_element<T: XmlElement>(bytes: &[u8], limits: &Limits) -> Result<T, DecodeError> {
    let mut r = XmlReader::new(bytes, limits)?;
    let v = decode_element_from(&mut r)?;
    r.finish()?;
    Ok(v)
}
