//! What a handler worker reads from the bus: a frame (fields and the message bytes) that
//! it decodes, rebuilds a message context from, runs a handler on and answers. Whatever
//! arrives, the worker answers (a reply, a fault or a forward) and never panics; a reply
//! the container reads back never panics it either.
#![no_main]

use std::sync::Arc;

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use osprey_bus::{Answer, Frame};
use osprey_container::handlers::BodyDigest;
use osprey_container::remote::answer;
use osprey_xml::Limits;

fuzz_target!(|data: &[u8]| {
    let _ = Frame::decode(Bytes::copy_from_slice(data));
    let limits = Arc::new(Limits::default());
    let handler = BodyDigest::default();
    match answer(&handler, &limits, Bytes::copy_from_slice(data)) {
        Answer::Reply(b) => {
            let _ = Frame::decode(b);
        }
        Answer::Forward { payload, .. } => {
            let _ = Frame::decode(payload);
        }
    }
});
