//! Qualified names: a namespace URI and a local name (XML Namespaces §4).

use std::borrow::Cow;
use std::fmt;

/// A namespace-qualified name. The empty namespace is `""`. Constant names cost no
/// allocation (`QName::new_static`); names read from a message are owned.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QName {
    ns: Cow<'static, str>,
    local: Cow<'static, str>,
}

impl QName {
    /// A name from constants, usable in `const` and `static` items.
    pub const fn new_static(ns: &'static str, local: &'static str) -> Self {
        QName {
            ns: Cow::Borrowed(ns),
            local: Cow::Borrowed(local),
        }
    }

    /// A name from owned or borrowed-static parts.
    pub fn new(ns: impl Into<Cow<'static, str>>, local: impl Into<Cow<'static, str>>) -> Self {
        QName {
            ns: ns.into(),
            local: local.into(),
        }
    }

    /// The namespace URI (`""` for none).
    pub fn ns(&self) -> &str {
        &self.ns
    }

    /// The local part.
    pub fn local(&self) -> &str {
        &self.local
    }

    /// True when this name is `{ns}local`.
    pub fn is(&self, ns: &str, local: &str) -> bool {
        self.local == local && self.ns == ns
    }
}

impl fmt::Display for QName {
    /// Clark notation: `{urn:x}local`, or `local` in no namespace.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ns.is_empty() {
            f.write_str(&self.local)
        } else {
            write!(f, "{{{}}}{}", self.ns, self.local)
        }
    }
}
