//! The XSD built-in types: integers, floats, boolean, string, base64Binary, and `Box`.

use base64::Engine as _;
use osprey_xml::{parse_bool, parse_f32, parse_f64, XmlReader, XmlWriter};

use crate::{DecodeError, TypeDesc, XmlType};

macro_rules! integer {
    ($($t:ty => $xsd:literal),*) => {$(
        impl XmlType for $t {
            fn schema() -> &'static TypeDesc {
                static DESC: TypeDesc = TypeDesc::Builtin($xsd);
                &DESC
            }
            fn encode(&self, w: &mut XmlWriter) {
                w.int(*self);
            }
            fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
                Self::from_text(&r.read_text()?)
            }
            const TEXT_ONLY: bool = true;
            fn from_text(text: &str) -> Result<Self, DecodeError> {
                let t = text.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'));
                // XSD allows a leading '+', which Rust's parser also accepts.
                t.parse().map_err(|_| DecodeError::invalid(text, concat!("xsd:", $xsd)))
            }
        }
    )*};
}

integer!(i8 => "byte", i16 => "short", i32 => "int", i64 => "long",
         u8 => "unsignedByte", u16 => "unsignedShort", u32 => "unsignedInt", u64 => "unsignedLong");

impl XmlType for f32 {
    fn schema() -> &'static TypeDesc {
        static DESC: TypeDesc = TypeDesc::Builtin("float");
        &DESC
    }
    fn encode(&self, w: &mut XmlWriter) {
        w.float(*self);
    }
    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        Self::from_text(&r.read_text()?)
    }
    const TEXT_ONLY: bool = true;
    fn from_text(text: &str) -> Result<Self, DecodeError> {
        parse_f32(text).ok_or_else(|| DecodeError::invalid(text, "xsd:float"))
    }
}

impl XmlType for f64 {
    fn schema() -> &'static TypeDesc {
        static DESC: TypeDesc = TypeDesc::Builtin("double");
        &DESC
    }
    fn encode(&self, w: &mut XmlWriter) {
        w.double(*self);
    }
    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        Self::from_text(&r.read_text()?)
    }
    const TEXT_ONLY: bool = true;
    fn from_text(text: &str) -> Result<Self, DecodeError> {
        parse_f64(text).ok_or_else(|| DecodeError::invalid(text, "xsd:double"))
    }
}

impl XmlType for bool {
    fn schema() -> &'static TypeDesc {
        static DESC: TypeDesc = TypeDesc::Builtin("boolean");
        &DESC
    }
    fn encode(&self, w: &mut XmlWriter) {
        w.text(if *self { "true" } else { "false" });
    }
    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        Self::from_text(&r.read_text()?)
    }
    const TEXT_ONLY: bool = true;
    fn from_text(text: &str) -> Result<Self, DecodeError> {
        parse_bool(text).ok_or_else(|| DecodeError::invalid(text, "xsd:boolean"))
    }
}

impl XmlType for String {
    fn schema() -> &'static TypeDesc {
        static DESC: TypeDesc = TypeDesc::Builtin("string");
        &DESC
    }
    fn encode(&self, w: &mut XmlWriter) {
        w.text(self);
    }
    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        // Not through `from_text`: unescaped text is already an owned string.
        Ok(r.read_text()?.into_owned())
    }
    const TEXT_ONLY: bool = true;
    fn from_text(text: &str) -> Result<Self, DecodeError> {
        Ok(text.to_owned())
    }
}

/// `Box<T>` is bound like `T`; it lets a type contain itself (a linked list).
impl<T: XmlType> XmlType for Box<T> {
    fn schema() -> &'static TypeDesc {
        T::schema()
    }
    fn encode(&self, w: &mut XmlWriter) {
        (**self).encode(w);
    }
    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        T::decode(r).map(Box::new)
    }
    const TEXT_ONLY: bool = T::TEXT_ONLY;
    fn from_text(text: &str) -> Result<Self, DecodeError> {
        T::from_text(text).map(Box::new)
    }
}

/// Binary data carried as `xsd:base64Binary` text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Base64Binary(pub Vec<u8>);

impl XmlType for Base64Binary {
    fn schema() -> &'static TypeDesc {
        static DESC: TypeDesc = TypeDesc::Builtin("base64Binary");
        &DESC
    }
    fn encode(&self, w: &mut XmlWriter) {
        w.text(&base64::engine::general_purpose::STANDARD.encode(&self.0));
    }
    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        Self::from_text(&r.read_text()?)
    }
    const TEXT_ONLY: bool = true;
    fn from_text(text: &str) -> Result<Self, DecodeError> {
        // base64Binary's lexical space allows whitespace between groups (XSD Part 2 §3.2.16).
        let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        base64::engine::general_purpose::STANDARD
            .decode(compact.as_bytes())
            .map(Base64Binary)
            .map_err(|_| DecodeError::invalid(text, "xsd:base64Binary"))
    }
}
