//! `osprey call`: reads a service's WSDL at run time, builds the request for one
//! operation from `name=value` parameters (or takes a body from a file), sends it and
//! returns the response.

use anyhow::{bail, Context};
use bytes::Bytes;
use osprey_addressing::{new_message_id, request_headers, EndpointReference, WSA_NS};
use osprey_binding::encode_element;
use osprey_soap::{write_envelope, Body, Envelope, Fault, SoapVersion};
use osprey_transport::http::HttpClient;
use osprey_wsdl::{Contract, ContractOperation};
use osprey_wsrf::doc::Element;
use osprey_wsrf::messages::{
    Expression, GetMultipleResourceProperties, GetResourceProperty, QueryResourceProperties,
    Subscribe,
};
use osprey_xml::{Limits, QName, Scope, XmlWriter};

/// What to call.
#[derive(Debug, Clone)]
pub struct CallRequest {
    /// Endpoint URL.
    pub url: String,
    /// Operation name.
    pub operation: String,
    /// WSDL URL (default: `URL?wsdl`).
    pub wsdl: Option<String>,
    /// A file holding the payload element or a whole envelope.
    pub body: Option<Vec<u8>>,
    /// `name=value` parameters for the payload's child elements.
    pub params: Vec<(String, String)>,
    /// The WS-Resource to address: the request goes to its address, with its reference
    /// parameters (and the WS-Addressing headers) as SOAP headers.
    pub epr: Option<EndpointReference>,
    /// WSRF payload arguments (properties, a query, a subscription).
    pub wsrf: WsrfArgs,
}

/// Arguments that build the payload of a WSRF operation.
#[derive(Debug, Clone, Default)]
pub struct WsrfArgs {
    /// Property names for GetResourceProperty / GetMultipleResourceProperties: a local
    /// name in the service's target namespace, or `{namespace}local`.
    pub properties: Vec<String>,
    /// An XPath 1.0 query for QueryResourceProperties (`tns` is bound to the service's
    /// target namespace).
    pub query: Option<String>,
    /// For Subscribe: the topic (as a property name) and the consumer.
    pub subscribe: Option<(String, EndpointReference)>,
}

/// The answer.
#[derive(Debug)]
pub struct CallResponse {
    /// HTTP status.
    pub status: u16,
    /// The response envelope.
    pub body: Bytes,
    /// The fault it carries, if any.
    pub fault: Option<Fault>,
}

/// Performs the call.
///
/// # Errors
/// When the WSDL cannot be fetched or read, the operation or a parameter is unknown, or
/// the exchange fails.
pub async fn call(req: &CallRequest) -> anyhow::Result<CallResponse> {
    let client = HttpClient::new(std::time::Duration::from_secs(30));
    let wsdl_url = req
        .wsdl
        .clone()
        .unwrap_or_else(|| format!("{}?wsdl", req.url));
    let wsdl = client
        .get(&wsdl_url)
        .await
        .with_context(|| format!("fetching {wsdl_url}"))?;
    if wsdl.status != 200 {
        bail!("fetching {wsdl_url}: HTTP {}", wsdl.status);
    }
    let contract = osprey_wsdl::parse(&wsdl.body)
        .with_context(|| format!("reading the WSDL at {wsdl_url}"))?;
    let op = contract
        .operations
        .iter()
        .find(|o| o.name == req.operation)
        .with_context(|| {
            let names: Vec<_> = contract
                .operations
                .iter()
                .map(|o| o.name.as_str())
                .collect();
            format!(
                "the WSDL has no operation {:?} (operations: {})",
                req.operation,
                names.join(", ")
            )
        })?;
    let version = if op.soap12 {
        SoapVersion::V12
    } else {
        SoapVersion::V11
    };
    let headers = match &req.epr {
        Some(epr) => request_headers(epr, &op.soap_action, &new_message_id())
            .context("the EPR's reference parameters are not well-formed XML")?,
        None => Vec::new(),
    };
    let envelope = match &req.body {
        Some(b) if is_envelope(b) => b.clone(),
        Some(payload) => envelope(version, &headers, payload),
        None => {
            let payload = match wsrf_payload(&op.name, &contract.target_namespace, &req.wsrf)? {
                Some(p) => p,
                None => build_payload(&contract, op, &req.params)?,
            };
            envelope(version, &headers, &payload)
        }
    };
    let url = req
        .epr
        .as_ref()
        .map_or(req.url.as_str(), |e| e.address.as_str());
    let (ct, headers) = match version {
        SoapVersion::V11 => (
            version.content_type().to_owned(),
            vec![("SOAPAction", format!("\"{}\"", op.soap_action))],
        ),
        SoapVersion::V12 => (
            format!("{}; action=\"{}\"", version.content_type(), op.soap_action),
            vec![],
        ),
    };
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let resp = client
        .post(url, &ct, &headers, Bytes::from(envelope))
        .await
        .with_context(|| format!("calling {url}"))?;
    let limits = Limits::default();
    let fault = match Envelope::decode(&resp.body, &limits) {
        Ok(env) => Fault::decode(&env, &resp.body, &limits).ok().flatten(),
        Err(_) => None,
    };
    Ok(CallResponse {
        status: resp.status,
        body: resp.body,
        fault,
    })
}

fn is_envelope(b: &[u8]) -> bool {
    Envelope::decode(b, &Limits::default()).is_ok()
}

fn envelope(version: SoapVersion, headers: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut w = XmlWriter::with_capacity(payload.len() + headers.len() + 256);
    let blocks: &[&[u8]] = if headers.is_empty() { &[] } else { &[headers] };
    write_envelope(&mut w, version, blocks, Body::Payload(payload));
    w.into_bytes()
}

/// A property name as the CLI takes it: `local` (in `target_ns`) or `{ns}local`.
fn property_name(name: &str, target_ns: &str) -> QName {
    match name.strip_prefix('{').and_then(|r| r.split_once('}')) {
        Some((ns, local)) => QName::new(ns.to_owned(), local.to_owned()),
        None => QName::new(target_ns.to_owned(), name.to_owned()),
    }
}

/// The payload of WSRF operation `op` from `args`, when `op` is one and `args` give it.
///
/// # Errors
/// When a WSRF operation is missing the argument it needs.
pub fn wsrf_payload(op: &str, target_ns: &str, args: &WsrfArgs) -> anyhow::Result<Option<Vec<u8>>> {
    let props = || {
        args.properties
            .iter()
            .map(|p| Ok(property_name(p, target_ns)))
            .collect::<Vec<_>>()
    };
    let payload = match op {
        "GetResourceProperty" => {
            let [p] = args.properties.as_slice() else {
                bail!("GetResourceProperty takes one --property NAME");
            };
            encode_element(&GetResourceProperty {
                property: Ok(property_name(p, target_ns)),
            })
        }
        "GetMultipleResourceProperties" => {
            if args.properties.is_empty() {
                bail!("GetMultipleResourceProperties takes --property NAME (repeatable)");
            }
            encode_element(&GetMultipleResourceProperties {
                properties: props(),
            })
        }
        "QueryResourceProperties" => {
            let Some(q) = &args.query else {
                bail!("QueryResourceProperties takes --query XPATH (prefix tns: the service's namespace)");
            };
            let mut scope = Scope::default();
            scope.bind("tns", target_ns);
            encode_element(&QueryResourceProperties {
                query: Expression {
                    dialect: osprey_wsrf::ns::XPATH_DIALECT.into(),
                    text: q.clone(),
                    scope,
                },
            })
        }
        "Subscribe" => {
            let Some((topic, consumer)) = &args.subscribe else {
                bail!("Subscribe takes --topic NAME");
            };
            let q = property_name(topic, target_ns);
            let mut scope = Scope::default();
            scope.bind("t", q.ns());
            encode_element(&Subscribe {
                consumer: consumer.clone(),
                topic: Some(Expression {
                    dialect: osprey_wsrf::ns::TOPIC_SIMPLE.into(),
                    text: format!("t:{}", q.local()),
                    scope,
                }),
                message_content: None,
                initial_termination_time: None,
                unknown_filters: Vec::new(),
            })
        }
        _ => return Ok(None),
    };
    Ok(Some(payload.into_bytes()))
}

/// The first endpoint reference in an XML document (an element with a `wsa:Address`
/// child: a saved EPR, or a whole `createCounter` response).
pub fn find_epr(xml: &[u8]) -> Option<EndpointReference> {
    let doc = Element::parse(xml, &Limits::default()).ok()?;
    fn walk(e: &Element) -> Option<EndpointReference> {
        if let Some(a) = e.elements().find(|c| c.name.is(WSA_NS, "Address")) {
            let reference_parameters = e
                .elements()
                .filter(|c| c.name.is(WSA_NS, "ReferenceParameters"))
                .flat_map(|r| r.elements().map(Element::to_xml))
                .collect();
            return Some(EndpointReference {
                address: a.string_value().trim().to_owned(),
                reference_parameters,
            });
        }
        e.elements().find_map(walk)
    }
    walk(&doc)
}

/// `epr` as a standalone `wsa:EndpointReference` document (what `--save-epr` writes).
pub fn epr_document(epr: &EndpointReference) -> String {
    let mut w = XmlWriter::with_capacity(512);
    epr.write(&mut w, WSA_NS, "EndpointReference");
    String::from_utf8_lossy(w.as_bytes()).into_owned()
}

/// The payload element for `op` with the given child values, in schema order.
///
/// # Errors
/// When a parameter names no child of the payload, or a required child is missing.
pub fn build_payload(
    contract: &Contract,
    op: &ContractOperation,
    params: &[(String, String)],
) -> anyhow::Result<Vec<u8>> {
    let element = contract
        .elements
        .get(&op.input)
        .with_context(|| format!("the WSDL does not declare element {}", op.input))?;
    for (name, _) in params {
        if !element.particles.iter().any(|p| p.name.local() == name) {
            let known: Vec<_> = element.particles.iter().map(|p| p.name.local()).collect();
            bail!(
                "{} has no child element {name:?} (children: {})",
                op.input,
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            );
        }
    }
    let mut w = XmlWriter::with_capacity(512);
    w.start(op.input.ns(), op.input.local());
    for p in &element.particles {
        let values: Vec<_> = params.iter().filter(|(n, _)| n == p.name.local()).collect();
        if values.is_empty() && p.min_occurs > 0 {
            bail!(
                "parameter {} is required by {} (give --param {}=VALUE, or --body FILE)",
                p.name.local(),
                op.input,
                p.name.local()
            );
        }
        if values.len() > 1 && !p.repeated {
            bail!("parameter {} may be given only once", p.name.local());
        }
        for (_, v) in values {
            w.start(p.name.ns(), p.name.local());
            w.text(v);
            w.end();
        }
    }
    w.end();
    Ok(w.into_bytes())
}
