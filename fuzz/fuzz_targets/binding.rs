//! The generated decoders of the WS Test types, on arbitrary payloads; a decoded value
//! must encode and decode back to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use osprey_binding::{decode_element, encode_element, XmlElement};
use osprey_echo::types::{EchoList, EchoStruct, EchoVoid};
use osprey_xml::Limits;

fn round_trip<T: XmlElement + PartialEq + std::fmt::Debug>(data: &[u8], limits: &Limits) {
    if let Ok(v) = decode_element::<T>(data, limits) {
        let again = decode_element::<T>(encode_element(&v).as_bytes(), limits).expect("own output decodes");
        // NaN != NaN: compare through the encoding instead.
        assert_eq!(encode_element(&again), encode_element(&v));
    }
}

fuzz_target!(|data: &[u8]| {
    let limits = Limits { max_message_size: 1 << 20, ..Limits::default() };
    round_trip::<EchoStruct>(data, &limits);
    round_trip::<EchoList>(data, &limits);
    round_trip::<EchoVoid>(data, &limits);
});
