//! The WSDL reader behind `osprey call`, which fetches documents from any server.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = osprey_wsdl::parse(data);
});
