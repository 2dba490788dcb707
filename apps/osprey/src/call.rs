//! `osprey call`: reads a service's WSDL at run time, builds the request for one
//! operation from `name=value` parameters (or takes a body from a file), sends it and
//! returns the response.

use anyhow::{bail, Context};
use bytes::Bytes;
use osprey_soap::{write_envelope, Body, Envelope, Fault, SoapVersion};
use osprey_transport::http::HttpClient;
use osprey_wsdl::{Contract, ContractOperation};
use osprey_xml::{Limits, XmlWriter};

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
    let envelope = match &req.body {
        Some(b) if is_envelope(b) => b.clone(),
        Some(payload) => envelope(version, payload),
        None => envelope(version, &build_payload(&contract, op, &req.params)?),
    };
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
        .post(&req.url, &ct, &headers, Bytes::from(envelope))
        .await
        .with_context(|| format!("calling {}", req.url))?;
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

fn envelope(version: SoapVersion, payload: &[u8]) -> Vec<u8> {
    let mut w = XmlWriter::with_capacity(payload.len() + 256);
    write_envelope(&mut w, version, &[], Body::Payload(payload));
    w.into_bytes()
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
