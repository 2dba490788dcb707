//! Static XSD descriptions of bound types (XML Schema 1.0 Part 1 §3.4, §3.3).

/// The XSD shape of a bound type.
#[derive(Debug)]
pub enum TypeDesc {
    /// An XSD built-in simple type, by its local name in the XSD namespace (`"int"`).
    Builtin(&'static str),
    /// A complex type with a sequence of element particles.
    Complex(ComplexType),
    /// A string restricted to an enumeration of values.
    Enumeration(EnumType),
    /// Open content: elements of any name, processed laxly (`xsd:any`). As a field's type
    /// the particle is an `xsd:any` with the field's occurrence bounds; as an element's
    /// type, a complex type holding any number of any elements. For vocabularies whose
    /// content is another document's elements (WSRF property values, notification
    /// messages), with codecs written by hand.
    AnyContent,
}

/// A complex type whose content is an `xsd:sequence` of elements.
#[derive(Debug)]
pub struct ComplexType {
    /// Type name (for a payload element's anonymous type: the element name).
    pub name: &'static str,
    /// Target namespace of the type and of its (qualified) child elements.
    pub namespace: &'static str,
    /// The sequence's particles, in order.
    pub fields: &'static [FieldDesc],
    /// True for the anonymous type of a global element (a payload).
    pub anonymous: bool,
}

/// One element particle of a sequence.
#[derive(Debug)]
pub struct FieldDesc {
    /// Element local name (qualified by the owning type's namespace).
    pub name: &'static str,
    /// The element's type (a function, so that types can refer to themselves).
    pub ty: fn() -> &'static TypeDesc,
    /// `minOccurs`.
    pub min_occurs: u32,
    /// `maxOccurs`.
    pub max_occurs: MaxOccurs,
}

/// `maxOccurs` of a particle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxOccurs {
    /// Exactly at most one.
    One,
    /// `unbounded`.
    Unbounded,
}

/// A string type restricted to a fixed set of values.
#[derive(Debug)]
pub struct EnumType {
    /// Type name.
    pub name: &'static str,
    /// Target namespace.
    pub namespace: &'static str,
    /// The allowed values.
    pub values: &'static [&'static str],
}

impl TypeDesc {
    /// The type's name and namespace (`XSD` namespace for built-ins).
    pub fn qname(&self) -> (&'static str, &'static str) {
        match self {
            TypeDesc::Builtin(n) => (XSD_NS, n),
            TypeDesc::Complex(c) => (c.namespace, c.name),
            TypeDesc::Enumeration(e) => (e.namespace, e.name),
            TypeDesc::AnyContent => (XSD_NS, "anyType"),
        }
    }
}

/// The XML Schema namespace.
pub const XSD_NS: &str = "http://www.w3.org/2001/XMLSchema";
