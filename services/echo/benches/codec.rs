//! Decode and encode of the WS Test echoStruct envelope (2 KB, 20 structs) and echoList,
//! the work a request costs the engine apart from the network.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use osprey_binding::{decode_element_from, encode_element_into};
use osprey_echo::types::{standard_array, standard_list, EchoList, EchoStruct, EchoStructResponse};
use osprey_soap::{write_envelope, Body, Envelope, SoapVersion};
use osprey_xml::{Limits, XmlWriter};

fn envelope_of(payload: &[u8]) -> Vec<u8> {
    let mut w = XmlWriter::new();
    write_envelope(&mut w, SoapVersion::V11, &[], Body::Payload(payload));
    w.into_bytes()
}

fn bench(c: &mut Criterion) {
    let limits = Limits::default();
    let mut p = XmlWriter::new();
    encode_element_into(
        &EchoStruct {
            input: standard_array(20),
        },
        &mut p,
    );
    let request = envelope_of(p.as_bytes());
    let mut g = c.benchmark_group("echoStruct");
    g.throughput(Throughput::Bytes(request.len() as u64));
    g.bench_function("decode envelope + payload", |b| {
        b.iter(|| {
            let env = Envelope::decode(&request, &limits).expect("valid");
            let mut r = env
                .payload_reader(&request, &limits)
                .expect("utf-8")
                .expect("payload");
            let v = decode_element_from::<EchoStruct>(&mut r).expect("valid");
            r.finish().expect("well-formed");
            v
        })
    });
    let response = EchoStructResponse {
        output: standard_array(20),
    };
    g.bench_function("encode payload + envelope", |b| {
        b.iter(|| {
            let mut p = XmlWriter::with_capacity(2048);
            encode_element_into(&response, &mut p);
            envelope_of(p.as_bytes())
        })
    });
    g.finish();

    let mut p = XmlWriter::new();
    encode_element_into(
        &EchoList {
            input: standard_list(20).expect("20 nodes"),
        },
        &mut p,
    );
    let list = envelope_of(p.as_bytes());
    c.bench_function("echoList/decode envelope + payload", |b| {
        b.iter(|| {
            let env = Envelope::decode(&list, &limits).expect("valid");
            let mut r = env
                .payload_reader(&list, &limits)
                .expect("utf-8")
                .expect("payload");
            let v = decode_element_from::<EchoList>(&mut r).expect("valid");
            r.finish().expect("well-formed");
            v
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
