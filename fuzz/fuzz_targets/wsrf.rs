//! What a WSRF request can make the container parse and evaluate: the hand-written
//! decoders of the WS-ResourceFramework and WS-BaseNotification payloads, and XPath
//! expressions (QueryResourceProperties, MessageContent filters) over a property
//! document. The first byte picks the target; the rest is the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use osprey_binding::decode_element;
use osprey_wsrf::doc::Element;
use osprey_wsrf::messages::*;
use osprey_xml::{Limits, Scope};

const DOC: &[u8] = br#"<c:CounterResourceProperties xmlns:c="urn:osprey:counter"><c:Value>5</c:Value><c:Item n="1">a</c:Item><c:Item n="2"><c:Value>7</c:Value></c:Item></c:CounterResourceProperties>"#;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let limits = Limits::default();
    match pick % 8 {
        0 => {
            let doc = Element::parse(DOC, &limits).expect("fixed document parses");
            let Ok(text) = std::str::from_utf8(rest) else {
                return;
            };
            let mut scope = Scope::default();
            scope.bind("c", "urn:osprey:counter");
            if let Ok(expr) = osprey_wsrf::xpath::Expr::parse(text, &scope) {
                let _ = expr.evaluate(&doc);
                let _ = expr.matches(&doc);
            }
        }
        1 => drop(decode_element::<GetResourceProperty>(rest, &limits)),
        2 => drop(decode_element::<GetMultipleResourceProperties>(rest, &limits)),
        3 => drop(decode_element::<QueryResourceProperties>(rest, &limits)),
        4 => drop(decode_element::<SetResourceProperties>(rest, &limits)),
        5 => drop(decode_element::<SetTerminationTime>(rest, &limits)),
        6 => drop(decode_element::<Subscribe>(rest, &limits)),
        _ => drop(decode_element::<Notify>(rest, &limits)),
    }
});
