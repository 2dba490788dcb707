//! WSDL generation and parsing: what `generate` writes, `parse` reads back.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use osprey_binding::XmlType;
use osprey_wsdl::{generate, parse, ElementDefinition, OperationDefinition, ServiceDefinition};
use osprey_xml::QName;
use proptest::prelude::*;

#[derive(XmlType)]
#[xml(namespace = "urn:t", element = "req")]
struct Req {
    id: i64,
    tags: Vec<String>,
    note: Option<String>,
}

#[derive(XmlType)]
#[xml(namespace = "urn:t", element = "resp")]
struct Resp {
    ok: bool,
}

fn service(ops: &[(String, String)]) -> ServiceDefinition {
    ServiceDefinition {
        name: "Svc".into(),
        namespace: "urn:t".into(),
        resource_properties: None,
        operations: ops
            .iter()
            .map(|(name, action)| OperationDefinition {
                name: name.clone(),
                action: action.clone(),
                output_action: format!("{action}Response"),
                input: ElementDefinition::of::<Req>(),
                output: ElementDefinition::of::<Resp>(),
            })
            .collect(),
    }
}

proptest! {
    #[test]
    fn parse_reads_back_what_generate_wrote(
        ops in proptest::collection::btree_map("[a-z][a-zA-Z0-9]{0,12}", "urn:[a-z]{1,8}/[a-z]{1,8}", 0..6),
        host in "[a-z]{1,10}(\\.[a-z]{1,5})?:[1-9][0-9]{1,4}",
    ) {
        let ops: Vec<_> = ops.into_iter().collect();
        let address = format!("http://{host}/svc?a=1&b=2");
        let contract = parse(generate(&service(&ops), &address).as_bytes()).unwrap();
        prop_assert_eq!(contract.target_namespace.as_str(), "urn:t");
        prop_assert_eq!(contract.operations.len(), ops.len());
        for (op, (name, action)) in contract.operations.iter().zip(&ops) {
            prop_assert_eq!(&op.name, name);
            prop_assert_eq!(&op.soap_action, action);
            prop_assert!(!op.soap12, "the SOAP 1.1 binding is preferred");
            prop_assert_eq!(&op.input, &QName::new("urn:t", "req"));
            prop_assert_eq!(op.address.as_deref(), Some(address.as_str()));
        }
        if !ops.is_empty() {
            let req = &contract.elements[&QName::new("urn:t", "req")];
            let particles: Vec<_> = req.particles.iter().map(|p| (p.name.local(), p.min_occurs, p.repeated)).collect();
            prop_assert_eq!(particles, vec![("id", 1, false), ("tags", 0, true), ("note", 0, false)]);
        }
    }
}

#[test]
fn non_wsdl_documents_are_refused() {
    assert!(parse(b"<definitions/>").is_err());
    assert!(parse(b"not xml").is_err());
    let dangling = r#"<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/" xmlns:t="urn:t" targetNamespace="urn:t">
      <wsdl:binding name="B" type="t:Missing"><soap:binding style="document"/></wsdl:binding></wsdl:definitions>"#;
    assert!(matches!(
        parse(dangling.as_bytes()),
        Err(osprey_wsdl::ParseError::Dangling {
            kind: "portType",
            ..
        })
    ));
}
