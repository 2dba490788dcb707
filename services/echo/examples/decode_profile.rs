//! Decodes a WS Test request envelope and its payload N times, and encodes the response
//! as many times, for instruction counts by function:
//! `valgrind --tool=callgrind target/release/examples/decode_profile echoList 2000`.
use osprey_binding::{decode_element_from, encode_element_into, XmlElement};
use osprey_echo::types::{
    standard_array, standard_list, EchoList, EchoListResponse, EchoStruct, EchoStructResponse,
};
use osprey_soap::{write_envelope, Body, Envelope, SoapVersion};
use osprey_xml::{Limits, XmlWriter};

fn envelope_of(payload: &[u8]) -> Vec<u8> {
    let mut w = XmlWriter::new();
    write_envelope(&mut w, SoapVersion::V11, &[], Body::Payload(payload));
    w.into_bytes()
}

fn run<Req: XmlElement, Resp: XmlElement>(request: &Req, response: &Resp, n: usize) -> usize {
    let limits = Limits::default();
    let mut p = XmlWriter::new();
    encode_element_into(request, &mut p);
    let bytes = envelope_of(p.as_bytes());
    let mut total = 0;
    for _ in 0..n {
        let env = Envelope::decode(&bytes, &limits).expect("valid");
        let mut r = env
            .payload_reader(&bytes, &limits)
            .expect("utf-8")
            .expect("payload");
        let v = decode_element_from::<Req>(&mut r).expect("valid");
        r.finish().expect("well-formed");
        drop(v);
        let mut w = XmlWriter::with_capacity(2048);
        encode_element_into(response, &mut w);
        total += envelope_of(w.as_bytes()).len();
    }
    total
}

/// A counter `add` request as `osprey bench wstest --op add` sends it: WS-Addressing
/// headers and the counter's key as a reference parameter.
const ADD: &str = r#"<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Header><To xmlns="http://www.w3.org/2005/08/addressing">http://127.0.0.1:28112/counter</To><Action xmlns="http://www.w3.org/2005/08/addressing">urn:osprey:counter/add</Action><MessageID xmlns="http://www.w3.org/2005/08/addressing">urn:uuid:5c6b02ef-f670-4fa0-9fe7-68a11c7b79a4</MessageID><CounterKey xmlns="urn:osprey:counter" xmlns:wsa="http://www.w3.org/2005/08/addressing" wsa:IsReferenceParameter="true">f61bee4e9d0e4153ab0ccb9ae2d7372f</CounterKey></soapenv:Header><soapenv:Body><add xmlns="urn:osprey:counter"><value>1</value></add></soapenv:Body></soapenv:Envelope>"#;

/// Decodes the `add` envelope (up to its payload) `n` times.
fn envelope_only(n: usize) -> usize {
    let limits = Limits::default();
    let mut headers = 0;
    for _ in 0..n {
        let env = Envelope::decode(ADD.as_bytes(), &limits).expect("valid");
        headers += env.headers.len();
    }
    headers
}

fn main() {
    let op = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "echoStruct".into());
    let n: usize = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let total = match op.as_str() {
        "add" => envelope_only(n),
        "echoList" => {
            let list = standard_list(20).expect("20 nodes");
            run(
                &EchoList {
                    input: list.clone(),
                },
                &EchoListResponse { output: list },
                n,
            )
        }
        _ => run(
            &EchoStruct {
                input: standard_array(20),
            },
            &EchoStructResponse {
                output: standard_array(20),
            },
            n,
        ),
    };
    println!("{op}: {total} bytes written");
}
