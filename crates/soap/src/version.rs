//! The two SOAP versions: namespaces, media types, fault codes.

/// A SOAP version, told apart by the envelope namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SoapVersion {
    /// SOAP 1.1 (W3C Note, 2000).
    V11,
    /// SOAP 1.2 (W3C Recommendation, 2007).
    V12,
}

impl SoapVersion {
    /// SOAP 1.1 envelope namespace.
    pub const NS_11: &'static str = "http://schemas.xmlsoap.org/soap/envelope/";
    /// SOAP 1.2 envelope namespace.
    pub const NS_12: &'static str = "http://www.w3.org/2003/05/soap-envelope";

    /// The envelope namespace.
    pub fn ns(self) -> &'static str {
        match self {
            SoapVersion::V11 => Self::NS_11,
            SoapVersion::V12 => Self::NS_12,
        }
    }

    /// The version whose envelope namespace is `ns`.
    pub fn from_ns(ns: &str) -> Option<Self> {
        match ns {
            Self::NS_11 => Some(SoapVersion::V11),
            Self::NS_12 => Some(SoapVersion::V12),
            _ => None,
        }
    }

    /// The media type of messages (`text/xml` for 1.1, `application/soap+xml` for 1.2).
    pub fn content_type(self) -> &'static str {
        match self {
            SoapVersion::V11 => "text/xml; charset=utf-8",
            SoapVersion::V12 => "application/soap+xml; charset=utf-8",
        }
    }

    /// The version a Content-Type header implies: `application/soap+xml` is 1.2,
    /// `text/xml` is 1.1, anything else says nothing.
    pub fn from_content_type(content_type: &str) -> Option<Self> {
        let media = content_type.split(';').next().unwrap_or("").trim();
        if media.eq_ignore_ascii_case("application/soap+xml") {
            Some(SoapVersion::V12)
        } else if media.eq_ignore_ascii_case("text/xml") {
            Some(SoapVersion::V11)
        } else {
            None
        }
    }

    /// The prefix Osprey writes for the envelope namespace.
    pub(crate) fn prefix(self) -> &'static str {
        match self {
            SoapVersion::V11 => "soapenv",
            SoapVersion::V12 => "env",
        }
    }
}

/// The `action` parameter of a SOAP 1.2 Content-Type (SOAP 1.2 Part 2 §7.1.4), unquoted.
pub fn action_parameter(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("action")
            .then(|| v.trim().trim_matches('"'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_tell_versions_and_action() {
        let ct = r#"application/soap+xml; charset=utf-8; action="urn:wstest/echoVoid""#;
        assert_eq!(SoapVersion::from_content_type(ct), Some(SoapVersion::V12));
        assert_eq!(action_parameter(ct), Some("urn:wstest/echoVoid"));
        assert_eq!(
            SoapVersion::from_content_type("text/xml"),
            Some(SoapVersion::V11)
        );
        assert_eq!(SoapVersion::from_content_type("application/json"), None);
        assert_eq!(action_parameter("text/xml"), None);
    }
}
