//! Parse limits, on by default.

/// Bounds the reader enforces while it reads, so that no input can make it use
/// unbounded memory or stack. The defaults suit SOAP messages; every field can be set
/// from the container's configuration.
///
/// With the `serde` feature it deserializes from a table whose missing keys keep their
/// defaults (the container's `[limits]`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Limits {
    /// Largest document accepted, in bytes (default 16 MiB).
    pub max_message_size: usize,
    /// Deepest element nesting (default 64).
    pub max_depth: usize,
    /// Most elements in one document (default 500,000).
    pub max_elements: usize,
    /// Most attributes on one element, namespace declarations included (default 64).
    pub max_attributes: usize,
    /// Longest element or attribute name, prefix included, in bytes (default 256).
    pub max_name_len: usize,
    /// Longest run of text or attribute value, in bytes (default 16 MiB).
    pub max_text_len: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_message_size: 16 * 1024 * 1024,
            max_depth: 64,
            max_elements: 500_000,
            max_attributes: 64,
            max_name_len: 256,
            max_text_len: 16 * 1024 * 1024,
        }
    }
}
