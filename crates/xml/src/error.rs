//! Errors of the XML layer: malformed input and exceeded limits.

use thiserror::Error;

/// Why a document could not be read. Every variant is the sender's fault: the reader
/// never fails for reasons of its own.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum XmlError {
    /// The bytes are not valid UTF-8 (only UTF-8 documents are accepted).
    #[error("document is not valid UTF-8 (at byte {offset})")]
    InvalidUtf8 {
        /// Byte offset of the first invalid sequence.
        offset: usize,
    },
    /// The XML declaration names an encoding other than UTF-8.
    #[error("unsupported encoding {encoding:?}: only UTF-8 is accepted")]
    UnsupportedEncoding {
        /// The declared encoding.
        encoding: String,
    },
    /// The document is not well-formed XML.
    #[error("malformed XML at byte {offset}: {message}")]
    Malformed {
        /// Byte offset near the error.
        offset: usize,
        /// What the tokenizer reported.
        message: String,
    },
    /// The document ended before its root element was closed.
    #[error("document ended before the root element was closed")]
    UnexpectedEof,
    /// A `<!DOCTYPE>` was present: DTDs (and with them entity declarations) are refused.
    #[error("DOCTYPE declarations are not allowed")]
    DoctypeForbidden,
    /// A processing instruction other than the XML declaration was present.
    #[error("processing instructions are not allowed")]
    ProcessingInstructionForbidden,
    /// A reference to an entity other than the five predefined ones.
    #[error("undeclared entity &{name};")]
    UndeclaredEntity {
        /// The entity's name.
        name: String,
    },
    /// A prefix was used without being declared.
    #[error("undeclared namespace prefix {prefix:?}")]
    UndeclaredPrefix {
        /// The prefix.
        prefix: String,
    },
    /// A configured limit was exceeded.
    #[error("{limit} limit of {max} exceeded")]
    LimitExceeded {
        /// Which limit (`"message size"`, `"nesting depth"`, ...).
        limit: &'static str,
        /// The configured maximum.
        max: usize,
    },
    /// Text content where only elements are allowed, or an element where only text is.
    #[error("unexpected content at byte {offset}: {what}")]
    UnexpectedContent {
        /// Byte offset near the content.
        offset: usize,
        /// What was found.
        what: &'static str,
    },
}
