//! Decodes the echoStruct request N times (for callgrind).
use osprey_binding::{decode_element_from, encode_element_into};
use osprey_echo::types::{standard_array, EchoStruct};
use osprey_soap::{write_envelope, Body, Envelope, SoapVersion};
use osprey_xml::{Limits, XmlWriter};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let limits = Limits::default();
    let mut p = XmlWriter::new();
    encode_element_into(
        &EchoStruct {
            input: standard_array(20),
        },
        &mut p,
    );
    let mut w = XmlWriter::new();
    write_envelope(&mut w, SoapVersion::V11, &[], Body::Payload(p.as_bytes()));
    let request = w.into_bytes();
    let mut total = 0;
    for _ in 0..n {
        let env = Envelope::decode(&request, &limits).expect("valid");
        let mut r = env
            .payload_reader(&request, &limits)
            .expect("utf-8")
            .expect("payload");
        let v = decode_element_from::<EchoStruct>(&mut r).expect("valid");
        r.finish().expect("well-formed");
        total += v.input.item.len();
    }
    println!("{total} {}", request.len());
}
