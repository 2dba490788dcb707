//! Osprey's XML reader against quick-xml on arbitrary text: whenever both accept a
//! document, they must read it as the same elements, attributes and text.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/xml/tests/oracle/mod.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    let Ok(doc) = std::str::from_utf8(data) else {
        return;
    };
    if let (Ok(ours), Ok(theirs)) = (oracle::read(doc), oracle::read_with_quick_xml(doc)) {
        assert_eq!(ours, theirs, "{doc:?}");
    }
});
