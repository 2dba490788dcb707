//! The envelope decoder and everything the dispatcher reads from a message before the
//! operation: WS-Addressing headers, faults, header and payload fragments.
#![no_main]

use libfuzzer_sys::fuzz_target;
use osprey_soap::{Envelope, Fault};
use osprey_xml::{Limits, XmlEvent};

fuzz_target!(|data: &[u8]| {
    let limits = Limits { max_message_size: 1 << 20, ..Limits::default() };
    let Ok(env) = Envelope::decode(data, &limits) else { return };
    let _ = osprey_addressing::MessageHeaders::decode(&env, data, &limits);
    let _ = Fault::decode(&env, data, &limits);
    for i in 0..env.headers.len() {
        if let Ok(mut r) = env.header_reader(i, data, &limits) {
            while let Ok(e) = r.next_event() {
                if e == XmlEvent::Eof {
                    break;
                }
            }
        }
    }
    // Spans found by the decoder must be readable again as fragments.
    if let Ok(Some(mut r)) = env.payload_reader(data, &limits) {
        while let Ok(e) = r.next_event() {
            if e == XmlEvent::Eof {
                break;
            }
        }
    }
});
