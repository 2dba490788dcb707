//! Decoding errors, with the path of the element where they happened.

use std::fmt;

use osprey_xml::{QName, StartElement, XmlError};
use thiserror::Error;

/// Why a value could not be decoded. All variants are the sender's fault.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The XML itself was malformed, forbidden or over a limit.
    #[error(transparent)]
    Xml(#[from] XmlError),
    /// An element the schema does not allow here.
    #[error("unexpected element {found} at /{path}{}", expected.map(|e| format!(" (expected {e})")).unwrap_or_default())]
    UnexpectedElement {
        /// The element found.
        found: QName,
        /// The element the schema wanted here, if one was required.
        expected: Option<&'static str>,
        /// Where, as element names from the payload down.
        path: Path,
    },
    /// A required element is absent.
    #[error("missing element {name} at /{path}")]
    MissingElement {
        /// The absent element's local name.
        name: &'static str,
        /// Where, as element names from the payload down.
        path: Path,
    },
    /// Text that is not a valid lexical form of its XSD type.
    #[error("invalid {xsd_type} value {value:?} at /{path}")]
    InvalidValue {
        /// The text found (truncated to 64 characters).
        value: String,
        /// The XSD type expected (`"xsd:int"`, ...).
        xsd_type: &'static str,
        /// Where, as element names from the payload down.
        path: Path,
    },
}

/// Element names from the payload element down to the error, outermost first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Path(Vec<&'static str>);

impl Path {
    /// The names, outermost first.
    pub fn segments(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.0.iter().rev().copied()
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.segments().enumerate() {
            if i > 0 {
                f.write_str("/")?;
            }
            f.write_str(s)?;
        }
        Ok(())
    }
}

impl DecodeError {
    /// Prefixes the error's path with `element` (called as the error leaves that element).
    #[must_use]
    pub fn in_element(mut self, element: &'static str) -> Self {
        match &mut self {
            DecodeError::UnexpectedElement { path, .. }
            | DecodeError::MissingElement { path, .. }
            | DecodeError::InvalidValue { path, .. } => path.0.push(element),
            DecodeError::Xml(_) => {}
        }
        self
    }

    /// `name` was required but `found` came instead (or the parent ended).
    pub fn missing(name: &'static str, found: Option<StartElement<'_>>) -> Self {
        match found {
            Some(s) => DecodeError::UnexpectedElement {
                found: s.to_qname(),
                expected: Some(name),
                path: Path::default(),
            },
            None => DecodeError::MissingElement {
                name,
                path: Path::default(),
            },
        }
    }

    /// `found` is not allowed here.
    pub fn unexpected(found: &StartElement<'_>) -> Self {
        DecodeError::UnexpectedElement {
            found: found.to_qname(),
            expected: None,
            path: Path::default(),
        }
    }

    /// `value` is not a valid `xsd_type`.
    pub fn invalid(value: &str, xsd_type: &'static str) -> Self {
        let value = value.chars().take(64).collect();
        DecodeError::InvalidValue {
            value,
            xsd_type,
            path: Path::default(),
        }
    }
}
