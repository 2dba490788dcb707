//! WSDL generation from a [`ServiceDefinition`].

use std::collections::BTreeMap;

use osprey_binding::{ComplexType, FieldDesc, MaxOccurs, TypeDesc};
use osprey_xml::XmlWriter;

use crate::{
    ElementDefinition, ServiceDefinition, SOAP11_BINDING_NS, SOAP12_BINDING_NS, WSAM_NS, WSDL_NS,
};

/// WS-ResourceProperties, whose `ResourceProperties` attribute a WS-Resource's port type
/// carries.
const WSRF_RP_NS: &str = "http://docs.oasis-open.org/wsrf/rp-2";

const XSD: &str = osprey_binding::XSD_NS;

/// The WSDL document of `def`, with `address` (`http://host:port/path`) as the location
/// of both ports.
///
/// ```
/// # use osprey_wsdl::*;
/// let def = ServiceDefinition {
///     name: "Empty".into(),
///     namespace: "urn:e".into(),
///     operations: vec![],
///     resource_properties: None,
/// };
/// assert!(generate(&def, "http://127.0.0.1:8080/e").contains(r#"location="http://127.0.0.1:8080/e""#));
/// ```
pub fn generate(def: &ServiceDefinition, address: &str) -> String {
    let mut g = Gen::default();
    g.prefix(&def.namespace);
    // Global elements: every payload, and the resource property document.
    let elements: Vec<ElementDefinition> = def
        .operations
        .iter()
        .flat_map(|op| [op.input, op.output])
        .chain(def.resource_properties)
        .collect();
    for el in &elements {
        g.prefix(el.ns);
        g.collect((el.ty)(), true);
    }
    let tns = def.namespace.as_str();
    let name = def.name.as_str();
    let w = &mut XmlWriter::with_capacity(8192);
    w.declaration();
    w.start_prefixed("wsdl", "definitions");
    w.attribute("name", name);
    w.attribute("targetNamespace", tns);
    w.declare("wsdl", WSDL_NS);
    w.declare("xsd", XSD);
    w.declare("soap", SOAP11_BINDING_NS);
    w.declare("soap12", SOAP12_BINDING_NS);
    w.declare("wsam", WSAM_NS);
    for (ns, p) in &g.prefixes {
        w.declare(p, ns);
    }

    // Types: one schema per namespace, importing the others.
    w.start_prefixed("wsdl", "types");
    let namespaces: Vec<&String> = g.prefixes.keys().collect();
    for ns in &namespaces {
        w.start_prefixed("xsd", "schema");
        w.attribute("targetNamespace", ns);
        w.attribute("elementFormDefault", "qualified");
        for other in namespaces.iter().filter(|o| o != &ns) {
            if g.types.values().any(|t| t.qname().0 == other.as_str())
                || elements.iter().any(|e| e.ns == other.as_str())
            {
                w.start_prefixed("xsd", "import");
                w.attribute("namespace", other);
                w.end();
            }
        }
        for t in g.types.values().filter(|t| t.qname().0 == ns.as_str()) {
            g.write_named_type(w, t);
        }
        let mut seen = Vec::new();
        for el in &elements {
            if el.ns != ns.as_str() || seen.contains(&el.local) {
                continue;
            }
            seen.push(el.local);
            w.start_prefixed("xsd", "element");
            w.attribute("name", el.local);
            match (el.ty)() {
                TypeDesc::Complex(c) if c.anonymous => {
                    w.start_prefixed("xsd", "complexType");
                    g.write_sequence(w, c);
                    w.end();
                }
                TypeDesc::AnyContent => {
                    w.start_prefixed("xsd", "complexType");
                    w.start_prefixed("xsd", "sequence");
                    write_any(w, 0, MaxOccurs::Unbounded);
                    w.end();
                    w.end();
                }
                other => w.attribute("type", &g.type_ref(other)),
            }
            w.end();
        }
        w.end();
    }
    w.end();

    let el_ref = |g: &Gen, ns: &str, local: &str| format!("{}:{local}", g.prefixes[ns]);
    for op in &def.operations {
        for (suffix, el) in [("Request", op.input), ("Response", op.output)] {
            w.start_prefixed("wsdl", "message");
            w.attribute("name", &format!("{}{suffix}", op.name));
            w.start_prefixed("wsdl", "part");
            w.attribute("name", "parameters");
            w.attribute("element", &el_ref(&g, el.ns, el.local));
            w.end();
            w.end();
        }
    }
    let tp = &g.prefixes[tns];
    w.start_prefixed("wsdl", "portType");
    w.attribute("name", &format!("{name}PortType"));
    if let Some(rp) = &def.resource_properties {
        // WS-ResourceProperties §4.2: the port type names its property document.
        w.declare("wsrf-rp", WSRF_RP_NS);
        w.attribute("wsrf-rp:ResourceProperties", &el_ref(&g, rp.ns, rp.local));
    }
    for op in &def.operations {
        w.start_prefixed("wsdl", "operation");
        w.attribute("name", &op.name);
        for (dir, suffix, action) in [
            ("input", "Request", &op.action),
            ("output", "Response", &op.output_action),
        ] {
            w.start_prefixed("wsdl", dir);
            w.attribute("message", &format!("{tp}:{}{suffix}", op.name));
            w.attribute("wsam:Action", action);
            w.end();
        }
        w.end();
    }
    w.end();
    for (binding, prefix) in [("Binding", "soap"), ("Soap12Binding", "soap12")] {
        w.start_prefixed("wsdl", "binding");
        w.attribute("name", &format!("{name}{binding}"));
        w.attribute("type", &format!("{tp}:{name}PortType"));
        w.start_prefixed(prefix, "binding");
        w.attribute("style", "document");
        w.attribute("transport", "http://schemas.xmlsoap.org/soap/http");
        w.end();
        for op in &def.operations {
            w.start_prefixed("wsdl", "operation");
            w.attribute("name", &op.name);
            w.start_prefixed(prefix, "operation");
            w.attribute("soapAction", &op.action);
            w.attribute("style", "document");
            w.end();
            for dir in ["input", "output"] {
                w.start_prefixed("wsdl", dir);
                w.start_prefixed(prefix, "body");
                w.attribute("use", "literal");
                w.end();
                w.end();
            }
            w.end();
        }
        w.end();
    }
    w.start_prefixed("wsdl", "service");
    w.attribute("name", &format!("{name}Service"));
    for (port, binding, prefix) in [
        ("Port", "Binding", "soap"),
        ("Soap12Port", "Soap12Binding", "soap12"),
    ] {
        w.start_prefixed("wsdl", "port");
        w.attribute("name", &format!("{name}{port}"));
        w.attribute("binding", &format!("{tp}:{name}{binding}"));
        w.start_prefixed(prefix, "address");
        w.attribute("location", address);
        w.end();
        w.end();
    }
    w.end();
    w.end();
    String::from_utf8(std::mem::take(w).into_bytes()).expect("writer output is UTF-8")
}

#[derive(Default)]
struct Gen {
    /// Namespace -> prefix (`ns0`, `ns1`, ...), in first-seen order of prefix number.
    prefixes: BTreeMap<String, String>,
    /// Named types to declare, by `{ns}name`.
    types: BTreeMap<String, &'static TypeDesc>,
}

impl Gen {
    fn prefix(&mut self, ns: &str) {
        let n = self.prefixes.len();
        self.prefixes
            .entry(ns.to_owned())
            .or_insert_with(|| format!("ns{n}"));
    }

    /// Records `t` and everything it refers to; `top` is a payload element's own type.
    fn collect(&mut self, t: &'static TypeDesc, top: bool) {
        match t {
            TypeDesc::Builtin(_) | TypeDesc::AnyContent => {}
            TypeDesc::Enumeration(e) => {
                self.prefix(e.namespace);
                self.types
                    .insert(format!("{{{}}}{}", e.namespace, e.name), t);
            }
            TypeDesc::Complex(c) => {
                self.prefix(c.namespace);
                if !(top && c.anonymous) {
                    let key = format!("{{{}}}{}", c.namespace, c.name);
                    if self.types.insert(key, t).is_some() {
                        return; // already visited: recursive types stop here
                    }
                }
                for f in c.fields {
                    self.collect((f.ty)(), false);
                }
            }
        }
    }

    fn type_ref(&self, t: &TypeDesc) -> String {
        match t {
            TypeDesc::Builtin(n) => format!("xsd:{n}"),
            TypeDesc::AnyContent => "xsd:anyType".to_owned(),
            other => {
                let (ns, name) = other.qname();
                format!("{}:{name}", self.prefixes[ns])
            }
        }
    }

    fn write_named_type(&self, w: &mut XmlWriter, t: &TypeDesc) {
        match t {
            TypeDesc::Complex(c) => {
                w.start_prefixed("xsd", "complexType");
                w.attribute("name", c.name);
                self.write_sequence(w, c);
                w.end();
            }
            TypeDesc::Enumeration(e) => {
                w.start_prefixed("xsd", "simpleType");
                w.attribute("name", e.name);
                w.start_prefixed("xsd", "restriction");
                w.attribute("base", "xsd:string");
                for v in e.values {
                    w.start_prefixed("xsd", "enumeration");
                    w.attribute("value", v);
                    w.end();
                }
                w.end();
                w.end();
            }
            TypeDesc::Builtin(_) | TypeDesc::AnyContent => {}
        }
    }

    fn write_sequence(&self, w: &mut XmlWriter, c: &ComplexType) {
        w.start_prefixed("xsd", "sequence");
        for f in c.fields {
            self.write_particle(w, f);
        }
        w.end();
    }

    fn write_particle(&self, w: &mut XmlWriter, f: &FieldDesc) {
        if let TypeDesc::AnyContent = (f.ty)() {
            write_any(w, f.min_occurs, f.max_occurs);
            return;
        }
        w.start_prefixed("xsd", "element");
        w.attribute("name", f.name);
        w.attribute("type", &self.type_ref((f.ty)()));
        if f.min_occurs != 1 {
            w.attribute("minOccurs", &f.min_occurs.to_string());
        }
        if f.max_occurs == MaxOccurs::Unbounded {
            w.attribute("maxOccurs", "unbounded");
        }
        w.end();
    }
}

/// An `xsd:any` particle: elements of another namespace, checked laxly.
fn write_any(w: &mut XmlWriter, min_occurs: u32, max_occurs: MaxOccurs) {
    w.start_prefixed("xsd", "any");
    w.attribute("namespace", "##any");
    w.attribute("processContents", "lax");
    if min_occurs != 1 {
        w.attribute("minOccurs", &min_occurs.to_string());
    }
    if max_occurs == MaxOccurs::Unbounded {
        w.attribute("maxOccurs", "unbounded");
    }
    w.end();
}
