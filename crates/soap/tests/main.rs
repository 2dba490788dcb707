//! Envelope decoding and fault encoding, against golden files in `tests/data`.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use osprey_soap::{
    write_envelope, Body, DecodeError, Envelope, Fault, FaultCode, FaultDetail, SoapVersion,
};
use osprey_xml::{Limits, QName, XmlError, XmlWriter};

const S11: &str = "http://schemas.xmlsoap.org/soap/envelope/";

fn decode(s: &str) -> Result<Envelope, DecodeError> {
    Envelope::decode(s.as_bytes(), &Limits::default())
}

/// Reads the payload and the rest of the message, as a service's decoder does.
fn read_payload(s: &str) -> Result<(), XmlError> {
    let env = decode(s).unwrap();
    let mut r = env
        .payload_reader(s.as_bytes(), &Limits::default())?
        .unwrap();
    r.next_child()?;
    r.skip_element()?;
    r.finish()
}

/// Compares `actual` with the golden file `tests/data/<name>`; `OSPREY_BLESS=1` rewrites it.
fn check(name: &str, actual: &[u8]) {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("OSPREY_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read(&path).unwrap_or_else(|_| panic!("missing golden file {path}"));
    assert_eq!(
        String::from_utf8_lossy(actual),
        String::from_utf8_lossy(&expected),
        "golden file {name}"
    );
}

fn fault_envelope(f: &Fault, v: SoapVersion) -> Vec<u8> {
    let mut w = XmlWriter::new();
    write_envelope(&mut w, v, &[], Body::Fault(f));
    w.into_bytes()
}

#[test]
fn soap11_envelope_with_headers() {
    let msg = format!(
        r#"<?xml version="1.0"?>
<s:Envelope xmlns:s="{S11}" xmlns:a="urn:a">
  <s:Header>
    <a:One s:mustUnderstand="1">x</a:One>
    <a:Two s:actor="urn:somebody-else"/>
  </s:Header>
  <s:Body><p:op xmlns:p="urn:p"><v>1</v></p:op></s:Body>
</s:Envelope>"#
    );
    let env = decode(&msg).unwrap();
    assert_eq!(env.version, SoapVersion::V11);
    assert_eq!(env.headers.len(), 2);
    assert!(env.headers[0].must_understand && env.headers[0].targets_us());
    assert!(!env.headers[1].targets_us());
    assert_eq!(
        &msg[env.headers[0].span.clone()],
        r#"<a:One s:mustUnderstand="1">x</a:One>"#
    );
    let p = env.payload.as_ref().unwrap();
    assert!(p.name.is("urn:p", "op"));
    assert!(msg[p.start..].starts_with(r#"<p:op xmlns:p="urn:p"><v>1</v></p:op>"#));
    assert_eq!(read_payload(&msg), Ok(()));
    let mut r = env
        .header_reader(0, msg.as_bytes(), &Limits::default())
        .unwrap();
    assert!(r.next_child().unwrap().unwrap().is("urn:a", "One"));
}

#[test]
fn soap12_envelope_is_recognised() {
    let env = decode(
        r#"<e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope"><e:Body/></e:Envelope>"#,
    )
    .unwrap();
    assert_eq!((env.version, env.payload), (SoapVersion::V12, None));
}

#[test]
fn wrong_envelope_namespace_is_a_version_mismatch() {
    let err = decode(r#"<e:Envelope xmlns:e="urn:not-soap"><e:Body/></e:Envelope>"#).unwrap_err();
    assert!(matches!(err, DecodeError::VersionMismatch { .. }));
    assert_eq!(Fault::from(&err).code, FaultCode::VersionMismatch);
}

#[test]
fn envelope_grammar_is_enforced() {
    let cases = [
        (r#"<x xmlns="urn:x"/>"#, "NotAnEnvelope"),
        (&*format!(r#"<s:Envelope xmlns:s="{S11}"/>"#), "MissingBody"),
        (
            &*format!(r#"<s:Envelope xmlns:s="{S11}"><s:Body/><s:Header/></s:Envelope>"#),
            "Unexpected",
        ),
        (
            &*format!(r#"<s:Envelope xmlns:s="{S11}"><s:Body/><x/></s:Envelope>"#),
            "Unexpected",
        ),
        (&*format!(r#"<s:Envelope xmlns:s="{S11}"><s:Body/>"#), "Xml"),
    ];
    for (msg, want) in cases {
        let err = decode(msg).unwrap_err();
        let got = match err {
            DecodeError::NotAnEnvelope { .. } => "NotAnEnvelope",
            DecodeError::MissingBody => "MissingBody",
            DecodeError::UnexpectedElement { .. } => "Unexpected",
            DecodeError::Xml(XmlError::UnexpectedEof) => "Xml",
            other => panic!("{msg}: {other:?}"),
        };
        assert_eq!(got, want, "{msg}");
        assert_eq!(
            Fault::from(&decode(msg).unwrap_err()).code,
            FaultCode::Sender
        );
    }
}

#[test]
fn what_follows_the_payload_is_checked_when_it_is_read() {
    let ok =
        format!(r#"<s:Envelope xmlns:s="{S11}"><s:Body><a/></s:Body> <!-- c --> </s:Envelope>"#);
    assert_eq!(read_payload(&ok), Ok(()));
    let bad = [
        format!(r#"<s:Envelope xmlns:s="{S11}"><s:Body><a/><b/></s:Body></s:Envelope>"#),
        format!(r#"<s:Envelope xmlns:s="{S11}"><s:Body><a>"#),
        format!(r#"<s:Envelope xmlns:s="{S11}"><s:Body><a/></s:Body>"#),
        format!(r#"<s:Envelope xmlns:s="{S11}"><s:Body><a/></s:Envelope></s:Body>"#),
        format!(r#"<s:Envelope xmlns:s="{S11}"><s:Body><a/></s:Body><s:Trailer/></s:Envelope>"#),
        format!(r#"<s:Envelope xmlns:s="{S11}"><s:Body><a/></s:Body></s:Envelope><b/>"#),
        format!(r#"<s:Envelope xmlns:s="{S11}"><s:Body><a/></s:Body></s:Envelope></x>"#),
        format!(r#"<s:Envelope xmlns:s="{S11}"><s:Body><a/></s:Body></s:Envelope>text"#),
    ];
    for msg in &bad {
        assert!(read_payload(msg).is_err(), "{msg}");
    }
}

#[test]
fn fault_shapes_match_golden_files() {
    let f = Fault::sender("invalid xsd:int value \"abc\" at /echoStruct/input/item/varInt")
        .with_subcode(QName::new_static("urn:osprey:fault", "InvalidValue"))
        .with_detail(FaultDetail::text(
            "urn:osprey:fault",
            "path",
            "echoStruct/input/item/varInt",
        ));
    check("fault-sender-11.xml", &fault_envelope(&f, SoapVersion::V11));
    check("fault-sender-12.xml", &fault_envelope(&f, SoapVersion::V12));
    let mut mu = Fault::new(
        FaultCode::MustUnderstand,
        "header {urn:a}One was not understood",
    );
    mu.not_understood.push(QName::new_static("urn:a", "One"));
    check(
        "fault-mustunderstand-11.xml",
        &fault_envelope(&mu, SoapVersion::V11),
    );
    check(
        "fault-mustunderstand-12.xml",
        &fault_envelope(&mu, SoapVersion::V12),
    );
}

#[test]
fn faults_decode_back_in_both_versions() {
    let f = Fault::receiver("database down").with_subcode(QName::new_static("urn:x", "Busy"));
    for v in [SoapVersion::V11, SoapVersion::V12] {
        let bytes = fault_envelope(&f, v);
        let env = Envelope::decode(&bytes, &Limits::default()).unwrap();
        let back = Fault::decode(&env, &bytes, &Limits::default())
            .unwrap()
            .unwrap();
        assert_eq!(
            (back.reason.as_str(), back.subcode.as_ref()),
            ("database down", f.subcode.as_ref()),
            "{v:?}"
        );
        if v == SoapVersion::V12 {
            assert_eq!(back.code, FaultCode::Receiver);
        }
    }
}

/// A detail's elements come back as written (a client can tell a WSRF fault by its
/// element); a text-only detail comes back as text.
#[test]
fn fault_details_keep_their_elements() {
    let detail = r#"<ResourceUnknownFault xmlns="urn:r"><Description>gone &amp; done</Description></ResourceUnknownFault>"#;
    let f = Fault::sender("gone").with_detail(FaultDetail::from_xml(detail.into()));
    for v in [SoapVersion::V11, SoapVersion::V12] {
        let bytes = fault_envelope(&f, v);
        let env = Envelope::decode(&bytes, &Limits::default()).unwrap();
        let back = Fault::decode(&env, &bytes, &Limits::default())
            .unwrap()
            .unwrap();
        assert_eq!(
            back.detail.as_ref().map(FaultDetail::as_str),
            Some(detail),
            "{v:?}"
        );
    }
    let text = Fault::sender("x").with_detail(FaultDetail::text("urn:osprey:fault", "text", "why"));
    let bytes = fault_envelope(&text, SoapVersion::V11);
    let env = Envelope::decode(&bytes, &Limits::default()).unwrap();
    let back = Fault::decode(&env, &bytes, &Limits::default())
        .unwrap()
        .unwrap();
    assert!(back.detail.unwrap().as_str().contains(">why</text>"));
}
