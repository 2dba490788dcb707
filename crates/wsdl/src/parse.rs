//! Reading a WSDL 1.1 document into the little a dynamic client needs: operations,
//! their actions and payload elements, the endpoint address, and the element particles
//! of each payload (to build requests from `name=value` pairs).

use std::collections::HashMap;

use osprey_xml::{Limits, QName, XmlError, XmlReader};
use thiserror::Error;

use crate::{SOAP11_BINDING_NS, SOAP12_BINDING_NS, WSDL_NS};

const XSD: &str = osprey_binding::XSD_NS;

/// A WSDL document that could not be used.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The XML is malformed or over a limit.
    #[error(transparent)]
    Xml(#[from] XmlError),
    /// The root is not `wsdl:definitions`.
    #[error("not a WSDL 1.1 document (root element {0})")]
    NotWsdl(QName),
    /// A reference (message, binding, ...) names nothing defined in the document.
    #[error("{kind} {name} is referenced but not defined")]
    Dangling {
        /// What kind of definition.
        kind: &'static str,
        /// The name referenced.
        name: String,
    },
}

/// What a client needs of a contract.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Contract {
    /// `targetNamespace` of the definitions.
    pub target_namespace: String,
    /// Operations of the first port type with a SOAP binding.
    pub operations: Vec<ContractOperation>,
    /// Global elements of the embedded schemas, with their particles.
    pub elements: HashMap<QName, SchemaElement>,
}

/// One operation as a SOAP binding exposes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ContractOperation {
    /// Operation name.
    pub name: String,
    /// `soapAction` of the binding operation.
    pub soap_action: String,
    /// True when the binding is SOAP 1.2.
    pub soap12: bool,
    /// Request payload element.
    pub input: QName,
    /// Response payload element.
    pub output: Option<QName>,
    /// Endpoint address of the port using the binding.
    pub address: Option<String>,
}

/// A global element and the particles of its (sequence) content.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaElement {
    /// Element name.
    pub name: QName,
    /// Child element particles, in order (empty for simple content).
    pub particles: Vec<SchemaParticle>,
}

/// A child element particle.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaParticle {
    /// Element name (qualified per `elementFormDefault`).
    pub name: QName,
    /// Type name, if the particle names one.
    pub type_name: Option<QName>,
    /// `minOccurs`.
    pub min_occurs: u32,
    /// `maxOccurs="unbounded"` or more than one.
    pub repeated: bool,
}

/// A port type's operations: name, input message, output message.
type PortTypeOperations = Vec<(String, Option<QName>, Option<QName>)>;

/// What the document says, before references are resolved.
#[derive(Default)]
struct Raw {
    tns: String,
    elements: HashMap<QName, (Vec<SchemaParticle>, Option<QName>)>,
    complex_types: HashMap<QName, Vec<SchemaParticle>>,
    messages: HashMap<QName, QName>,
    port_types: Vec<(QName, PortTypeOperations)>,
    bindings: Vec<(QName, QName, bool, HashMap<String, String>)>,
    ports: Vec<(QName, String)>,
}

/// Reads a WSDL document.
///
/// # Errors
/// [`ParseError`] when it is not well-formed WSDL 1.1 or references undefined parts.
pub fn parse(bytes: &[u8]) -> Result<Contract, ParseError> {
    let limits = Limits::default();
    let mut r = XmlReader::new(bytes, &limits)?;
    let root = r.next_child()?.ok_or(XmlError::UnexpectedEof)?;
    if !root.is(WSDL_NS, "definitions") {
        return Err(ParseError::NotWsdl(root.to_qname()));
    }
    let mut raw = Raw {
        tns: r
            .attribute("", "targetNamespace")
            .unwrap_or_default()
            .to_owned(),
        ..Raw::default()
    };
    while let Some(el) = r.next_child()? {
        match (el.ns(), el.local()) {
            (WSDL_NS, "types") => {
                while let Some(s) = r.next_child()? {
                    if s.is(XSD, "schema") {
                        schema(&mut r, &mut raw)?;
                    } else {
                        r.skip_element()?;
                    }
                }
            }
            (WSDL_NS, "message") => {
                let name = QName::new(raw.tns.clone(), attr(&r, "name"));
                while let Some(_part) = r.next_child()? {
                    if let Some(e) = qattr(&r, "element")? {
                        raw.messages.insert(name.clone(), e);
                    }
                    r.skip_element()?;
                }
            }
            (WSDL_NS, "portType") => {
                let name = QName::new(raw.tns.clone(), attr(&r, "name"));
                let mut ops = Vec::new();
                while let Some(_op) = r.next_child()? {
                    let op_name = attr(&r, "name");
                    let (mut input, mut output) = (None, None);
                    while let Some(io) = r.next_child()? {
                        let m = qattr(&r, "message")?;
                        match io.local() {
                            "input" => input = m,
                            "output" => output = m,
                            _ => {}
                        }
                        r.skip_element()?;
                    }
                    ops.push((op_name, input, output));
                }
                raw.port_types.push((name, ops));
            }
            (WSDL_NS, "binding") => {
                let name = QName::new(raw.tns.clone(), attr(&r, "name"));
                let ty = qattr(&r, "type")?.unwrap_or_else(|| QName::new("", ""));
                let mut soap = None;
                let mut actions = HashMap::new();
                while let Some(child) = r.next_child()? {
                    match (child.ns(), child.local()) {
                        (SOAP11_BINDING_NS, "binding") => soap = Some(false),
                        (SOAP12_BINDING_NS, "binding") => soap = Some(true),
                        (WSDL_NS, "operation") => {
                            let op = attr(&r, "name");
                            while let Some(c) = r.next_child()? {
                                if c.local() == "operation"
                                    && (c.ns() == SOAP11_BINDING_NS || c.ns() == SOAP12_BINDING_NS)
                                {
                                    actions.insert(op.clone(), attr(&r, "soapAction"));
                                }
                                r.skip_element()?;
                            }
                            continue;
                        }
                        _ => {}
                    }
                    r.skip_element()?;
                }
                if let Some(soap12) = soap {
                    raw.bindings.push((name, ty, soap12, actions));
                }
            }
            (WSDL_NS, "service") => {
                while let Some(_port) = r.next_child()? {
                    let binding = qattr(&r, "binding")?;
                    while let Some(a) = r.next_child()? {
                        if let (Some(b), "address") = (&binding, a.local()) {
                            raw.ports.push((b.clone(), attr(&r, "location")));
                        }
                        r.skip_element()?;
                    }
                }
            }
            _ => r.skip_element()?,
        }
    }
    r.finish()?;
    resolve(raw)
}

fn resolve(raw: Raw) -> Result<Contract, ParseError> {
    let mut contract = Contract {
        target_namespace: raw.tns.clone(),
        ..Contract::default()
    };
    for (name, (particles, ty)) in &raw.elements {
        let particles = match ty {
            Some(t) => raw.complex_types.get(t).cloned().unwrap_or_default(),
            None => particles.clone(),
        };
        contract.elements.insert(
            name.clone(),
            SchemaElement {
                name: name.clone(),
                particles,
            },
        );
    }
    // Prefer a SOAP 1.1 binding: every client speaks it.
    let mut bindings: Vec<_> = raw.bindings.iter().collect();
    bindings.sort_by_key(|b| b.2);
    let Some((bname, ptype, soap12, actions)) = bindings.first() else {
        return Ok(contract);
    };
    let (_, ops) = raw
        .port_types
        .iter()
        .find(|(n, _)| n == ptype)
        .ok_or_else(|| ParseError::Dangling {
            kind: "portType",
            name: ptype.to_string(),
        })?;
    let address = raw
        .ports
        .iter()
        .find(|(b, _)| b == bname)
        .map(|(_, a)| a.clone());
    for (name, input, output) in ops {
        let element = |m: &Option<QName>| -> Result<Option<QName>, ParseError> {
            match m {
                None => Ok(None),
                Some(m) => {
                    raw.messages
                        .get(m)
                        .cloned()
                        .map(Some)
                        .ok_or_else(|| ParseError::Dangling {
                            kind: "message",
                            name: m.to_string(),
                        })
                }
            }
        };
        let Some(input) = element(input)? else {
            continue;
        };
        contract.operations.push(ContractOperation {
            name: name.clone(),
            soap_action: actions.get(name).cloned().unwrap_or_default(),
            soap12: *soap12,
            input,
            output: element(output)?,
            address: address.clone(),
        });
    }
    Ok(contract)
}

fn schema(r: &mut XmlReader<'_>, raw: &mut Raw) -> Result<(), ParseError> {
    let tns = r
        .attribute("", "targetNamespace")
        .unwrap_or_default()
        .to_owned();
    let qualified = r.attribute("", "elementFormDefault") == Some("qualified");
    while let Some(item) = r.next_child()? {
        match item.local() {
            "element" => {
                let name = QName::new(tns.clone(), attr(r, "name"));
                let ty = qattr(r, "type")?;
                let particles = content(r, &tns, qualified)?;
                raw.elements.insert(name, (particles, ty));
            }
            "complexType" => {
                let name = QName::new(tns.clone(), attr(r, "name"));
                let particles = sequence(r, &tns, qualified)?;
                raw.complex_types.insert(name, particles);
            }
            _ => r.skip_element()?,
        }
    }
    Ok(())
}

/// Content of an `xsd:element`: an inline complex type's particles, if any.
fn content(
    r: &mut XmlReader<'_>,
    tns: &str,
    qualified: bool,
) -> Result<Vec<SchemaParticle>, ParseError> {
    let mut out = Vec::new();
    while let Some(c) = r.next_child()? {
        if c.local() == "complexType" {
            out = sequence(r, tns, qualified)?;
        } else {
            r.skip_element()?;
        }
    }
    Ok(out)
}

/// Particles of a complex type's `xsd:sequence` (the reader is inside the complexType).
fn sequence(
    r: &mut XmlReader<'_>,
    tns: &str,
    qualified: bool,
) -> Result<Vec<SchemaParticle>, ParseError> {
    let mut out = Vec::new();
    while let Some(c) = r.next_child()? {
        if c.local() != "sequence" {
            r.skip_element()?;
            continue;
        }
        while let Some(_p) = r.next_child()? {
            if let Some(name) = r.attribute("", "name") {
                let max = r.attribute("", "maxOccurs").unwrap_or("1");
                out.push(SchemaParticle {
                    name: QName::new(
                        if qualified {
                            tns.to_owned()
                        } else {
                            String::new()
                        },
                        name.to_owned(),
                    ),
                    type_name: qattr(r, "type")?,
                    min_occurs: r
                        .attribute("", "minOccurs")
                        .and_then(|m| m.parse().ok())
                        .unwrap_or(1),
                    repeated: max == "unbounded" || max.parse::<u32>().is_ok_and(|m| m > 1),
                });
            }
            r.skip_element()?;
        }
    }
    Ok(out)
}

fn attr(r: &XmlReader<'_>, name: &str) -> String {
    r.attribute("", name).unwrap_or_default().to_owned()
}

/// A QName-valued attribute, resolved where the reader is.
fn qattr(r: &XmlReader<'_>, name: &str) -> Result<Option<QName>, ParseError> {
    let Some(v) = r.attribute("", name) else {
        return Ok(None);
    };
    let (prefix, local) = v.split_once(':').unwrap_or(("", v));
    let ns = r
        .resolve_prefix(prefix)
        .ok_or_else(|| XmlError::UndeclaredPrefix {
            prefix: prefix.to_owned(),
        })?;
    Ok(Some(QName::new(ns.to_owned(), local.to_owned())))
}
