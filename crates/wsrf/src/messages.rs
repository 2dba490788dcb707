//! The payloads of WS-ResourceProperties, WS-ResourceLifetime and WS-BaseNotification,
//! with their codecs written by hand (their content models hold `xsd:any`, QNames as
//! text and attributes, which the derive does not describe) and their XSD descriptions
//! for the generated WSDL.
//!
//! Requests keep what needs the resource to interpret (a property QName that may not
//! resolve, a topic or query expression with the namespaces in scope) so that the
//! runtime answers with the spec's fault rather than a generic decoding error.

use osprey_addressing::{EndpointReference, WSA_NS};
use osprey_binding::{
    ComplexType, DateTime, DecodeError, FieldDesc, MaxOccurs, TypeDesc, XmlElement, XmlType,
};
use osprey_xml::{QName, Scope, XmlReader, XmlWriter};

use crate::doc::{resolve_qname, Element};
use crate::ns;

const XSI_NS: &str = "http://www.w3.org/2001/XMLSchema-instance";

static ANY_TYPE: TypeDesc = TypeDesc::Builtin("anyType");
static ANY_CONTENT: TypeDesc = TypeDesc::AnyContent;
static QNAME_TYPE: TypeDesc = TypeDesc::Builtin("QName");
static STRING_TYPE: TypeDesc = TypeDesc::Builtin("string");
static DATETIME_TYPE: TypeDesc = TypeDesc::Builtin("dateTime");
static DURATION_TYPE: TypeDesc = TypeDesc::Builtin("duration");

fn any_type() -> &'static TypeDesc {
    &ANY_TYPE
}
fn qname_type() -> &'static TypeDesc {
    &QNAME_TYPE
}
fn string_type() -> &'static TypeDesc {
    &STRING_TYPE
}
fn datetime_type() -> &'static TypeDesc {
    &DATETIME_TYPE
}
fn duration_type() -> &'static TypeDesc {
    &DURATION_TYPE
}

const fn field(
    name: &'static str,
    ty: fn() -> &'static TypeDesc,
    min_occurs: u32,
    max_occurs: MaxOccurs,
) -> FieldDesc {
    FieldDesc {
        name,
        ty,
        min_occurs,
        max_occurs,
    }
}

/// `wsa:EndpointReferenceType`, as far as WSDL consumers need it: `Address` and
/// `ReferenceParameters` (any content).
pub fn epr_type() -> &'static TypeDesc {
    static EPR: TypeDesc = TypeDesc::Complex(ComplexType {
        name: "EndpointReferenceType",
        namespace: WSA_NS,
        fields: &[
            field("Address", string_type, 1, MaxOccurs::One),
            field("ReferenceParameters", any_type, 0, MaxOccurs::One),
        ],
        anonymous: false,
    });
    &EPR
}

/// An endpoint reference as a bound value, for typed payloads (`createCounterResponse`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Epr(pub EndpointReference);

impl XmlType for Epr {
    fn schema() -> &'static TypeDesc {
        epr_type()
    }

    fn encode(&self, w: &mut XmlWriter) {
        write_epr_content(&self.0, w);
    }

    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        read_epr(r, "EndpointReference").map(Epr)
    }
}

/// Writes an EPR's children (`wsa:Address`, `wsa:ReferenceParameters`).
fn write_epr_content(epr: &EndpointReference, w: &mut XmlWriter) {
    w.start(WSA_NS, "Address");
    w.text(&epr.address);
    w.end();
    if !epr.reference_parameters.is_empty() {
        w.start(WSA_NS, "ReferenceParameters");
        for p in &epr.reference_parameters {
            w.raw(p.as_bytes());
        }
        w.end();
    }
}

fn write_epr(epr: &EndpointReference, w: &mut XmlWriter, ns: &str, local: &str) {
    w.start(ns, local);
    write_epr_content(epr, w);
    w.end();
}

fn read_epr(r: &mut XmlReader<'_>, name: &'static str) -> Result<EndpointReference, DecodeError> {
    EndpointReference::decode(r, name).map_err(|e| match e {
        osprey_addressing::AddressingError::Xml(x) => DecodeError::Xml(x),
        _ => DecodeError::missing("Address", None).in_element(name),
    })
}

/// Element children read as trees (the content of an `xsd:any` response).
fn read_elements(r: &mut XmlReader<'_>) -> Result<Vec<Element>, DecodeError> {
    let mut out = Vec::new();
    while let Some(s) = r.next_child()? {
        out.push(Element::read(r, &s.to_qname())?);
    }
    Ok(out)
}

/// Text content with the scope of its element, read before the text consumes the end.
fn scoped_text(r: &mut XmlReader<'_>) -> Result<(String, Scope), DecodeError> {
    let scope = r.scope();
    let text = r.read_text()?.into_owned();
    Ok((text, scope))
}

fn datetime_text(r: &mut XmlReader<'_>) -> Result<DateTime, DecodeError> {
    let text = r.read_text()?;
    DateTime::parse(&text).ok_or_else(|| DecodeError::invalid(&text, "xsd:dateTime"))
}

/// A nillable `xsd:dateTime` element's content (`None` for `xsi:nil="true"`).
fn nillable_datetime(r: &mut XmlReader<'_>) -> Result<Option<DateTime>, DecodeError> {
    if nil(r) {
        r.skip_element()?;
        Ok(None)
    } else {
        datetime_text(r).map(Some)
    }
}

/// Writes a termination time (nillable) and the current time: the content of
/// `SetTerminationTimeResponse` and `RenewResponse`.
fn write_times(w: &mut XmlWriter, ns: &str, first: &str, t: Option<&DateTime>, now: &DateTime) {
    write_nillable_datetime(w, ns, first, t);
    w.start(ns, "CurrentTime");
    w.text(&now.to_string());
    w.end();
}

/// Reads what [`write_times`] writes.
fn read_times(
    r: &mut XmlReader<'_>,
    ns: &str,
    first: &'static str,
) -> Result<(Option<DateTime>, DateTime), DecodeError> {
    let t = match r.next_child()? {
        Some(s) if s.is(ns, first) => nillable_datetime(r)?,
        found => return Err(DecodeError::missing(first, found)),
    };
    let now = match r.next_child()? {
        Some(s) if s.is(ns, "CurrentTime") => datetime_text(r)?,
        found => return Err(DecodeError::missing("CurrentTime", found)),
    };
    if let Some(s) = r.next_child()? {
        return Err(DecodeError::unexpected(&s));
    }
    Ok((t, now))
}

fn nil(r: &XmlReader<'_>) -> bool {
    matches!(r.attribute(XSI_NS, "nil"), Some(v) if v.trim() == "true" || v.trim() == "1")
}

fn write_nillable_datetime(w: &mut XmlWriter, ns: &str, local: &str, t: Option<&DateTime>) {
    w.start(ns, local);
    match t {
        Some(t) => w.text(&t.to_string()),
        None => {
            w.declare("xsi", XSI_NS);
            w.attribute("xsi:nil", "true");
        }
    }
    w.end();
}

/// Declares a payload element whose type is described by `$schema`, with hand-written
/// `encode`/`decode` bodies.
macro_rules! payload {
    ($t:ty, $ns:expr, $local:expr) => {
        impl XmlElement for $t {
            const NS: &'static str = $ns;
            const LOCAL: &'static str = $local;
        }
    };
}

/// Payloads with empty content (`<wsrf-rl:Destroy/>`, ...).
macro_rules! empty_payload {
    ($(#[$doc:meta] $t:ident => $ns:expr, $local:expr;)*) => {$(
        #[$doc]
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $t;

        impl XmlType for $t {
            fn schema() -> &'static TypeDesc {
                static DESC: TypeDesc = TypeDesc::Complex(ComplexType {
                    name: $local,
                    namespace: $ns,
                    fields: &[],
                    anonymous: true,
                });
                &DESC
            }

            fn encode(&self, _w: &mut XmlWriter) {}

            fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
                match r.next_child()? {
                    Some(s) => Err(DecodeError::unexpected(&s)),
                    None => Ok($t),
                }
            }
        }

        payload!($t, $ns, $local);
    )*};
}

empty_payload! {
    /// `wsrf-rp:GetResourcePropertyDocument`.
    GetResourcePropertyDocument => ns::RP, "GetResourcePropertyDocument";
    /// `wsrf-rl:Destroy`.
    Destroy => ns::RL, "Destroy";
    /// `wsrf-rl:DestroyResponse`.
    DestroyResponse => ns::RL, "DestroyResponse";
    /// `wsrf-rp:SetResourcePropertiesResponse`.
    SetResourcePropertiesResponse => ns::RP, "SetResourcePropertiesResponse";
    /// `wsnt:Unsubscribe`.
    Unsubscribe => ns::WSNT, "Unsubscribe";
    /// `wsnt:UnsubscribeResponse`.
    UnsubscribeResponse => ns::WSNT, "UnsubscribeResponse";
    /// `wsnt:PauseSubscription`.
    PauseSubscription => ns::WSNT, "PauseSubscription";
    /// `wsnt:PauseSubscriptionResponse`.
    PauseSubscriptionResponse => ns::WSNT, "PauseSubscriptionResponse";
    /// `wsnt:ResumeSubscription`.
    ResumeSubscription => ns::WSNT, "ResumeSubscription";
    /// `wsnt:ResumeSubscriptionResponse`.
    ResumeSubscriptionResponse => ns::WSNT, "ResumeSubscriptionResponse";
}

/// Payloads whose content is any sequence of elements (property values, query results).
macro_rules! elements_payload {
    ($(#[$doc:meta] $t:ident => $ns:expr, $local:expr;)*) => {$(
        #[$doc]
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct $t {
            /// The elements, in document order.
            pub elements: Vec<Element>,
        }

        impl XmlType for $t {
            fn schema() -> &'static TypeDesc {
                &ANY_CONTENT
            }

            fn encode(&self, w: &mut XmlWriter) {
                for e in &self.elements {
                    e.write(w);
                }
            }

            fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
                Ok($t { elements: read_elements(r)? })
            }
        }

        payload!($t, $ns, $local);
    )*};
}

elements_payload! {
    /// `wsrf-rp:GetResourcePropertyResponse`: the property's value elements.
    GetResourcePropertyResponse => ns::RP, "GetResourcePropertyResponse";
    /// `wsrf-rp:GetResourcePropertyDocumentResponse`: the whole property document.
    GetResourcePropertyDocumentResponse => ns::RP, "GetResourcePropertyDocumentResponse";
    /// `wsrf-rp:GetMultipleResourcePropertiesResponse`: the properties' value elements.
    GetMultipleResourcePropertiesResponse => ns::RP, "GetMultipleResourcePropertiesResponse";
}

/// `wsrf-rp:GetResourceProperty`: one property QName as text.
#[derive(Debug, Clone, PartialEq)]
pub struct GetResourceProperty {
    /// The property asked for, or why its QName text does not resolve.
    pub property: Result<QName, String>,
}

impl XmlType for GetResourceProperty {
    fn schema() -> &'static TypeDesc {
        &QNAME_TYPE
    }

    fn encode(&self, w: &mut XmlWriter) {
        write_qname_text(w, &self.property);
    }

    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        let (text, scope) = scoped_text(r)?;
        Ok(GetResourceProperty {
            property: resolve_qname(&scope, &text),
        })
    }
}
payload!(GetResourceProperty, ns::RP, "GetResourceProperty");

fn write_qname_text(w: &mut XmlWriter, q: &Result<QName, String>) {
    match q {
        Ok(q) if q.ns().is_empty() => w.text(q.local()),
        Ok(q) => {
            w.declare("p", q.ns());
            w.text("p:");
            w.text(q.local());
        }
        Err(text) => w.text(text),
    }
}

/// `wsrf-rp:GetMultipleResourceProperties`: `ResourceProperty` QNames.
#[derive(Debug, Clone, PartialEq)]
pub struct GetMultipleResourceProperties {
    /// The properties asked for, in order, each resolved or with why not.
    pub properties: Vec<Result<QName, String>>,
}

impl XmlType for GetMultipleResourceProperties {
    fn schema() -> &'static TypeDesc {
        static DESC: TypeDesc = TypeDesc::Complex(ComplexType {
            name: "GetMultipleResourceProperties",
            namespace: ns::RP,
            fields: &[field(
                "ResourceProperty",
                qname_type,
                1,
                MaxOccurs::Unbounded,
            )],
            anonymous: true,
        });
        &DESC
    }

    fn encode(&self, w: &mut XmlWriter) {
        for p in &self.properties {
            w.start(ns::RP, "ResourceProperty");
            write_qname_text(w, p);
            w.end();
        }
    }

    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        let mut properties = Vec::new();
        while let Some(s) = r.next_child()? {
            if !s.is(ns::RP, "ResourceProperty") {
                return Err(DecodeError::unexpected(&s));
            }
            let (text, scope) = scoped_text(r)?;
            properties.push(resolve_qname(&scope, &text));
        }
        if properties.is_empty() {
            return Err(DecodeError::missing("ResourceProperty", None));
        }
        Ok(GetMultipleResourceProperties { properties })
    }
}
payload!(
    GetMultipleResourceProperties,
    ns::RP,
    "GetMultipleResourceProperties"
);

/// An expression in some dialect, with the namespaces in scope where it was written
/// (a query, a topic expression, a message content filter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expression {
    /// The `Dialect` attribute.
    pub dialect: String,
    /// The expression text.
    pub text: String,
    /// Namespaces in scope at the expression's element.
    pub scope: Scope,
}

impl Expression {
    fn read(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        let dialect = r
            .attribute("", "Dialect")
            .map(|d| d.trim().to_owned())
            .unwrap_or_default();
        let (text, scope) = scoped_text(r)?;
        Ok(Expression {
            dialect,
            text: text.trim().to_owned(),
            scope,
        })
    }

    fn write(&self, w: &mut XmlWriter, ns: &str, local: &str) {
        w.start(ns, local);
        w.attribute("Dialect", &self.dialect);
        for (prefix, uri) in self.scope.bindings() {
            if !prefix.is_empty() {
                w.declare(prefix, uri);
            }
        }
        w.text(&self.text);
        w.end();
    }
}

/// `wsrf-rp:QueryResourceProperties`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryResourceProperties {
    /// The `QueryExpression`.
    pub query: Expression,
}

impl XmlType for QueryResourceProperties {
    fn schema() -> &'static TypeDesc {
        static DESC: TypeDesc = TypeDesc::Complex(ComplexType {
            name: "QueryResourceProperties",
            namespace: ns::RP,
            fields: &[field("QueryExpression", any_type, 1, MaxOccurs::One)],
            anonymous: true,
        });
        &DESC
    }

    fn encode(&self, w: &mut XmlWriter) {
        self.query.write(w, ns::RP, "QueryExpression");
    }

    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        let query = match r.next_child()? {
            Some(s) if s.is(ns::RP, "QueryExpression") => Expression::read(r)?,
            found => return Err(DecodeError::missing("QueryExpression", found)),
        };
        if let Some(s) = r.next_child()? {
            return Err(DecodeError::unexpected(&s));
        }
        Ok(QueryResourceProperties { query })
    }
}
payload!(QueryResourceProperties, ns::RP, "QueryResourceProperties");

/// `wsrf-rp:QueryResourcePropertiesResponse`: the selected elements, or the text of a
/// scalar result (a number, a string, a boolean).
#[derive(Debug, Clone, PartialEq)]
pub enum QueryResourcePropertiesResponse {
    /// A node-set: the selected elements (text nodes are returned as their text).
    Nodes(Vec<Element>),
    /// A scalar, as XPath's `string()` writes it.
    Value(String),
}

impl XmlType for QueryResourcePropertiesResponse {
    fn schema() -> &'static TypeDesc {
        // Mixed content (a scalar result is text); `anyType` allows both.
        &ANY_TYPE
    }

    fn encode(&self, w: &mut XmlWriter) {
        match self {
            QueryResourcePropertiesResponse::Nodes(nodes) => {
                for n in nodes {
                    n.write(w);
                }
            }
            QueryResourcePropertiesResponse::Value(v) => w.text(v),
        }
    }

    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        let mut nodes = Vec::new();
        let mut text = String::new();
        loop {
            match r.next_event()? {
                osprey_xml::XmlEvent::Start(s) => nodes.push(Element::read(r, &s.to_qname())?),
                osprey_xml::XmlEvent::Text(t) => text.push_str(&t),
                osprey_xml::XmlEvent::End | osprey_xml::XmlEvent::Eof => break,
            }
        }
        Ok(if nodes.is_empty() {
            QueryResourcePropertiesResponse::Value(text.trim().to_owned())
        } else {
            QueryResourcePropertiesResponse::Nodes(nodes)
        })
    }
}
payload!(
    QueryResourcePropertiesResponse,
    ns::RP,
    "QueryResourcePropertiesResponse"
);

/// One component of a `SetResourceProperties` request.
#[derive(Debug, Clone, PartialEq)]
pub enum SetComponent {
    /// `Insert`: new values, appended to their properties.
    Insert(Vec<Element>),
    /// `Update`: the values that replace all values of their property.
    Update(Vec<Element>),
    /// `Delete ResourceProperty="qname"`: remove every value of the property.
    Delete(Result<QName, String>),
}

/// `wsrf-rp:SetResourceProperties`.
#[derive(Debug, Clone, PartialEq)]
pub struct SetResourceProperties {
    /// The components, applied in order, all or none.
    pub components: Vec<SetComponent>,
}

impl XmlType for SetResourceProperties {
    fn schema() -> &'static TypeDesc {
        static DESC: TypeDesc = TypeDesc::Complex(ComplexType {
            name: "SetResourceProperties",
            namespace: ns::RP,
            fields: &[
                field("Insert", any_type, 0, MaxOccurs::Unbounded),
                field("Update", any_type, 0, MaxOccurs::Unbounded),
                field("Delete", any_type, 0, MaxOccurs::Unbounded),
            ],
            anonymous: true,
        });
        &DESC
    }

    fn encode(&self, w: &mut XmlWriter) {
        for c in &self.components {
            match c {
                SetComponent::Insert(v) | SetComponent::Update(v) => {
                    let local = match c {
                        SetComponent::Insert(_) => "Insert",
                        _ => "Update",
                    };
                    w.start(ns::RP, local);
                    for e in v {
                        e.write(w);
                    }
                    w.end();
                }
                SetComponent::Delete(q) => {
                    w.start(ns::RP, "Delete");
                    match q {
                        Ok(q) => {
                            w.declare("p", q.ns());
                            w.attribute("ResourceProperty", &format!("p:{}", q.local()));
                        }
                        Err(t) => w.attribute("ResourceProperty", t),
                    }
                    w.end();
                }
            }
        }
    }

    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        let mut components = Vec::new();
        while let Some(s) = r.next_child()? {
            let c = if s.is(ns::RP, "Insert") {
                SetComponent::Insert(read_elements(r)?)
            } else if s.is(ns::RP, "Update") {
                SetComponent::Update(read_elements(r)?)
            } else if s.is(ns::RP, "Delete") {
                let scope = r.scope();
                let q = match r.attribute("", "ResourceProperty") {
                    Some(t) => resolve_qname(&scope, t),
                    None => Err("Delete has no ResourceProperty attribute".to_owned()),
                };
                r.skip_element()?;
                SetComponent::Delete(q)
            } else {
                return Err(DecodeError::unexpected(&s));
            };
            components.push(c);
        }
        Ok(SetResourceProperties { components })
    }
}
payload!(SetResourceProperties, ns::RP, "SetResourceProperties");

/// What a `SetTerminationTime` (or `Renew`, `InitialTerminationTime`) asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminationRequest {
    /// An absolute time; `None` (`xsi:nil`) means never.
    At(Option<DateTime>),
    /// A duration from now, in milliseconds (`xsd:duration`).
    After(i64),
}

impl TerminationRequest {
    /// Parses `xsd:dateTime` or `xsd:duration` text (WS-BaseNotification's
    /// `AbsoluteOrRelativeTimeType`).
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim();
        if t.starts_with('P') || t.starts_with("-P") {
            parse_duration_ms(t).map(TerminationRequest::After)
        } else {
            DateTime::parse(t).map(|d| TerminationRequest::At(Some(d)))
        }
    }

    /// The requested termination in epoch milliseconds (`None`: never).
    pub fn resolve(&self, now_ms: i64) -> Option<i64> {
        match self {
            TerminationRequest::At(t) => t.as_ref().map(crate::clock::from_datetime),
            TerminationRequest::After(ms) => Some(now_ms.saturating_add(*ms)),
        }
    }
}

/// `xsd:duration` as milliseconds, with years as 365 days and months as 30 (a lifetime
/// is a span, not a calendar position). Negative durations are returned negative.
pub fn parse_duration_ms(text: &str) -> Option<i64> {
    let (neg, s) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let s = s.strip_prefix('P')?;
    let (date, time) = match s.split_once('T') {
        Some((d, t)) => {
            if t.is_empty() {
                return None;
            }
            (d, Some(t))
        }
        None => (s, None),
    };
    let mut ms: f64 = 0.0;
    let mut any = false;
    let mut take = |part: &str, units: &[(char, f64)]| -> Option<()> {
        let mut num = String::new();
        let mut next = 0;
        for c in part.chars() {
            if c.is_ascii_digit() || c == '.' {
                num.push(c);
                continue;
            }
            let at = units.iter().skip(next).position(|(u, _)| *u == c)? + next;
            let v: f64 = num.parse().ok()?;
            ms += v * units[at].1;
            next = at + 1;
            num.clear();
            any = true;
        }
        num.is_empty().then_some(())
    };
    const DAY: f64 = 86_400_000.0;
    take(date, &[('Y', 365.0 * DAY), ('M', 30.0 * DAY), ('D', DAY)])?;
    if let Some(t) = time {
        take(t, &[('H', 3_600_000.0), ('M', 60_000.0), ('S', 1000.0)])?;
    }
    if !any || !ms.is_finite() || ms > 1e17 {
        return None;
    }
    #[allow(clippy::cast_possible_truncation)]
    let v = ms.round() as i64;
    Some(if neg { -v } else { v })
}

/// `wsrf-rl:SetTerminationTime`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetTerminationTime {
    /// The requested termination.
    pub requested: TerminationRequest,
}

impl XmlType for SetTerminationTime {
    fn schema() -> &'static TypeDesc {
        static DESC: TypeDesc = TypeDesc::Complex(ComplexType {
            name: "SetTerminationTime",
            namespace: ns::RL,
            fields: &[
                field("RequestedTerminationTime", datetime_type, 0, MaxOccurs::One),
                field(
                    "RequestedLifetimeDuration",
                    duration_type,
                    0,
                    MaxOccurs::One,
                ),
            ],
            anonymous: true,
        });
        &DESC
    }

    fn encode(&self, w: &mut XmlWriter) {
        match &self.requested {
            TerminationRequest::At(t) => {
                write_nillable_datetime(w, ns::RL, "RequestedTerminationTime", t.as_ref());
            }
            TerminationRequest::After(ms) => {
                w.start(ns::RL, "RequestedLifetimeDuration");
                let sign = if *ms < 0 { "-" } else { "" };
                let abs = ms.unsigned_abs();
                w.text(&format!("{sign}PT{}.{:03}S", abs / 1000, abs % 1000));
                w.end();
            }
        }
    }

    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        let requested = match r.next_child()? {
            Some(s) if s.is(ns::RL, "RequestedTerminationTime") => {
                TerminationRequest::At(nillable_datetime(r)?)
            }
            Some(s) if s.is(ns::RL, "RequestedLifetimeDuration") => {
                let text = r.read_text()?;
                TerminationRequest::After(
                    parse_duration_ms(text.trim())
                        .ok_or_else(|| DecodeError::invalid(&text, "xsd:duration"))?,
                )
            }
            found => return Err(DecodeError::missing("RequestedTerminationTime", found)),
        };
        if let Some(s) = r.next_child()? {
            return Err(DecodeError::unexpected(&s));
        }
        Ok(SetTerminationTime { requested })
    }
}
payload!(SetTerminationTime, ns::RL, "SetTerminationTime");

/// `wsrf-rl:SetTerminationTimeResponse` (and `wsnt:RenewResponse`'s content).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetTerminationTimeResponse {
    /// The termination time now in force (`None`: never).
    pub new_termination_time: Option<DateTime>,
    /// The resource's current time.
    pub current_time: DateTime,
}

impl XmlType for SetTerminationTimeResponse {
    fn schema() -> &'static TypeDesc {
        static DESC: TypeDesc = TypeDesc::Complex(ComplexType {
            name: "SetTerminationTimeResponse",
            namespace: ns::RL,
            fields: &[
                field("NewTerminationTime", datetime_type, 1, MaxOccurs::One),
                field("CurrentTime", datetime_type, 1, MaxOccurs::One),
            ],
            anonymous: true,
        });
        &DESC
    }

    fn encode(&self, w: &mut XmlWriter) {
        let t = self.new_termination_time.as_ref();
        write_times(w, ns::RL, "NewTerminationTime", t, &self.current_time);
    }

    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        let (new_termination_time, current_time) = read_times(r, ns::RL, "NewTerminationTime")?;
        Ok(SetTerminationTimeResponse {
            new_termination_time,
            current_time,
        })
    }
}
payload!(
    SetTerminationTimeResponse,
    ns::RL,
    "SetTerminationTimeResponse"
);

/// `wsnt:Subscribe`.
#[derive(Debug, Clone, PartialEq)]
pub struct Subscribe {
    /// Where notifications go.
    pub consumer: EndpointReference,
    /// `Filter/TopicExpression`, if given.
    pub topic: Option<Expression>,
    /// `Filter/MessageContent`, if given.
    pub message_content: Option<Expression>,
    /// `InitialTerminationTime` text (dateTime or duration), if given.
    pub initial_termination_time: Option<String>,
    /// Filter children that are neither (refused with `InvalidFilterFault`).
    pub unknown_filters: Vec<QName>,
}

impl XmlType for Subscribe {
    fn schema() -> &'static TypeDesc {
        static DESC: TypeDesc = TypeDesc::Complex(ComplexType {
            name: "Subscribe",
            namespace: ns::WSNT,
            fields: &[
                field("ConsumerReference", epr_type, 1, MaxOccurs::One),
                field("Filter", any_type, 0, MaxOccurs::One),
                field("InitialTerminationTime", string_type, 0, MaxOccurs::One),
                field("SubscriptionPolicy", any_type, 0, MaxOccurs::One),
            ],
            anonymous: true,
        });
        &DESC
    }

    fn encode(&self, w: &mut XmlWriter) {
        write_epr(&self.consumer, w, ns::WSNT, "ConsumerReference");
        if self.topic.is_some() || self.message_content.is_some() {
            w.start(ns::WSNT, "Filter");
            if let Some(t) = &self.topic {
                t.write(w, ns::WSNT, "TopicExpression");
            }
            if let Some(m) = &self.message_content {
                m.write(w, ns::WSNT, "MessageContent");
            }
            w.end();
        }
        if let Some(t) = &self.initial_termination_time {
            w.start(ns::WSNT, "InitialTerminationTime");
            w.text(t);
            w.end();
        }
    }

    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        let consumer = match r.next_child()? {
            Some(s) if s.is(ns::WSNT, "ConsumerReference") => read_epr(r, "ConsumerReference")?,
            found => return Err(DecodeError::missing("ConsumerReference", found)),
        };
        let mut sub = Subscribe {
            consumer,
            topic: None,
            message_content: None,
            initial_termination_time: None,
            unknown_filters: Vec::new(),
        };
        while let Some(s) = r.next_child()? {
            if s.is(ns::WSNT, "Filter") {
                while let Some(f) = r.next_child()? {
                    if f.is(ns::WSNT, "TopicExpression") && sub.topic.is_none() {
                        sub.topic = Some(Expression::read(r)?);
                    } else if f.is(ns::WSNT, "MessageContent") && sub.message_content.is_none() {
                        sub.message_content = Some(Expression::read(r)?);
                    } else {
                        sub.unknown_filters.push(f.to_qname());
                        r.skip_element()?;
                    }
                }
            } else if s.is(ns::WSNT, "InitialTerminationTime") {
                sub.initial_termination_time = Some(r.read_text()?.trim().to_owned());
            } else if s.is(ns::WSNT, "SubscriptionPolicy") {
                // No policies are offered; an empty policy is harmless.
                r.skip_element()?;
            } else {
                return Err(DecodeError::unexpected(&s));
            }
        }
        Ok(sub)
    }
}
payload!(Subscribe, ns::WSNT, "Subscribe");

/// `wsnt:SubscribeResponse`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscribeResponse {
    /// The subscription's EPR (its manager is the producer's endpoint).
    pub subscription: EndpointReference,
    /// The producer's current time.
    pub current_time: DateTime,
    /// When the subscription ends (`None`: never).
    pub termination_time: Option<DateTime>,
}

impl XmlType for SubscribeResponse {
    fn schema() -> &'static TypeDesc {
        static DESC: TypeDesc = TypeDesc::Complex(ComplexType {
            name: "SubscribeResponse",
            namespace: ns::WSNT,
            fields: &[
                field("SubscriptionReference", epr_type, 1, MaxOccurs::One),
                field("CurrentTime", datetime_type, 0, MaxOccurs::One),
                field("TerminationTime", datetime_type, 0, MaxOccurs::One),
            ],
            anonymous: true,
        });
        &DESC
    }

    fn encode(&self, w: &mut XmlWriter) {
        write_epr(&self.subscription, w, ns::WSNT, "SubscriptionReference");
        w.start(ns::WSNT, "CurrentTime");
        w.text(&self.current_time.to_string());
        w.end();
        write_nillable_datetime(
            w,
            ns::WSNT,
            "TerminationTime",
            self.termination_time.as_ref(),
        );
    }

    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        let subscription = match r.next_child()? {
            Some(s) if s.is(ns::WSNT, "SubscriptionReference") => {
                read_epr(r, "SubscriptionReference")?
            }
            found => return Err(DecodeError::missing("SubscriptionReference", found)),
        };
        let mut resp = SubscribeResponse {
            subscription,
            current_time: DateTime::from_unix(0, 0),
            termination_time: None,
        };
        while let Some(s) = r.next_child()? {
            if s.is(ns::WSNT, "CurrentTime") {
                resp.current_time = datetime_text(r)?;
            } else if s.is(ns::WSNT, "TerminationTime") {
                resp.termination_time = nillable_datetime(r)?;
            } else {
                return Err(DecodeError::unexpected(&s));
            }
        }
        Ok(resp)
    }
}
payload!(SubscribeResponse, ns::WSNT, "SubscribeResponse");

/// `wsnt:Renew`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Renew {
    /// `TerminationTime` text (dateTime or duration).
    pub termination_time: String,
}

impl XmlType for Renew {
    fn schema() -> &'static TypeDesc {
        static DESC: TypeDesc = TypeDesc::Complex(ComplexType {
            name: "Renew",
            namespace: ns::WSNT,
            fields: &[field("TerminationTime", string_type, 1, MaxOccurs::One)],
            anonymous: true,
        });
        &DESC
    }

    fn encode(&self, w: &mut XmlWriter) {
        w.start(ns::WSNT, "TerminationTime");
        w.text(&self.termination_time);
        w.end();
    }

    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        let termination_time = match r.next_child()? {
            Some(s) if s.is(ns::WSNT, "TerminationTime") => r.read_text()?.trim().to_owned(),
            found => return Err(DecodeError::missing("TerminationTime", found)),
        };
        if let Some(s) = r.next_child()? {
            return Err(DecodeError::unexpected(&s));
        }
        Ok(Renew { termination_time })
    }
}
payload!(Renew, ns::WSNT, "Renew");

/// `wsnt:RenewResponse`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenewResponse {
    /// The subscription's termination time now (`None`: never).
    pub termination_time: Option<DateTime>,
    /// The producer's current time.
    pub current_time: DateTime,
}

impl XmlType for RenewResponse {
    fn schema() -> &'static TypeDesc {
        static DESC: TypeDesc = TypeDesc::Complex(ComplexType {
            name: "RenewResponse",
            namespace: ns::WSNT,
            fields: &[
                field("TerminationTime", datetime_type, 1, MaxOccurs::One),
                field("CurrentTime", datetime_type, 0, MaxOccurs::One),
            ],
            anonymous: true,
        });
        &DESC
    }

    fn encode(&self, w: &mut XmlWriter) {
        let t = self.termination_time.as_ref();
        write_times(w, ns::WSNT, "TerminationTime", t, &self.current_time);
    }

    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        let (termination_time, current_time) = read_times(r, ns::WSNT, "TerminationTime")?;
        Ok(RenewResponse {
            termination_time,
            current_time,
        })
    }
}
payload!(RenewResponse, ns::WSNT, "RenewResponse");

/// One `wsnt:NotificationMessage`.
#[derive(Debug, Clone, PartialEq)]
pub struct NotificationMessage {
    /// The subscription it was sent for.
    pub subscription: Option<EndpointReference>,
    /// The topic (Simple or Concrete dialect) and its QName.
    pub topic: Option<(String, QName)>,
    /// The resource that produced it.
    pub producer: Option<EndpointReference>,
    /// The message content (`wsnt:Message`'s single child).
    pub message: Element,
}

impl NotificationMessage {
    /// For a resource property value change: the new values (the children of
    /// `wsrf-rp:NewValues`); empty for other messages.
    pub fn new_values(&self) -> Vec<&Element> {
        self.message
            .elements()
            .filter(|e| e.name.is(ns::RP, "NewValues"))
            .flat_map(Element::elements)
            .collect()
    }
}

/// `wsnt:Notify`.
#[derive(Debug, Clone, PartialEq)]
pub struct Notify {
    /// The messages, in order.
    pub messages: Vec<NotificationMessage>,
}

impl XmlType for Notify {
    fn schema() -> &'static TypeDesc {
        static DESC: TypeDesc = TypeDesc::Complex(ComplexType {
            name: "Notify",
            namespace: ns::WSNT,
            fields: &[field(
                "NotificationMessage",
                any_type,
                1,
                MaxOccurs::Unbounded,
            )],
            anonymous: true,
        });
        &DESC
    }

    fn encode(&self, w: &mut XmlWriter) {
        for m in &self.messages {
            w.start(ns::WSNT, "NotificationMessage");
            if let Some(s) = &m.subscription {
                write_epr(s, w, ns::WSNT, "SubscriptionReference");
            }
            if let Some((dialect, topic)) = &m.topic {
                w.start(ns::WSNT, "Topic");
                w.attribute("Dialect", dialect);
                w.declare("t", topic.ns());
                w.text("t:");
                w.text(topic.local());
                w.end();
            }
            if let Some(p) = &m.producer {
                write_epr(p, w, ns::WSNT, "ProducerReference");
            }
            w.start(ns::WSNT, "Message");
            m.message.write(w);
            w.end();
            w.end();
        }
    }

    fn decode(r: &mut XmlReader<'_>) -> Result<Self, DecodeError> {
        let mut messages = Vec::new();
        while let Some(s) = r.next_child()? {
            if !s.is(ns::WSNT, "NotificationMessage") {
                return Err(DecodeError::unexpected(&s));
            }
            let mut subscription = None;
            let mut topic = None;
            let mut producer = None;
            let mut message = None;
            while let Some(c) = r.next_child()? {
                if c.is(ns::WSNT, "SubscriptionReference") {
                    subscription = Some(read_epr(r, "SubscriptionReference")?);
                } else if c.is(ns::WSNT, "Topic") {
                    let e = Expression::read(r)?;
                    let q = resolve_qname(&e.scope, &e.text)
                        .map_err(|_| DecodeError::invalid(&e.text, "xsd:QName"))?;
                    topic = Some((e.dialect, q));
                } else if c.is(ns::WSNT, "ProducerReference") {
                    producer = Some(read_epr(r, "ProducerReference")?);
                } else if c.is(ns::WSNT, "Message") {
                    let mut content = read_elements(r)?;
                    if content.len() != 1 {
                        return Err(DecodeError::missing("Message", None));
                    }
                    message = content.pop();
                } else {
                    return Err(DecodeError::unexpected(&c));
                }
            }
            messages.push(NotificationMessage {
                subscription,
                topic,
                producer,
                message: message.ok_or_else(|| DecodeError::missing("Message", None))?,
            });
        }
        Ok(Notify { messages })
    }
}
payload!(Notify, ns::WSNT, "Notify");

#[cfg(test)]
mod tests;
