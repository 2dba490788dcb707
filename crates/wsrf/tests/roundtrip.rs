//! Property tests: every WSRF and WS-BaseNotification payload Osprey writes reads back as
//! the same value, whatever text it carries (markup characters, non-ASCII, whitespace at
//! the edges of values that are not trimmed).

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use osprey_addressing::EndpointReference;
use osprey_binding::{decode_element, encode_element, DateTime, XmlElement};
use osprey_wsrf::doc::Element;
use osprey_wsrf::messages::*;
use osprey_wsrf::ns;
use osprey_xml::{Limits, QName, Scope};
use proptest::prelude::*;

fn round_trip<T: XmlElement + std::fmt::Debug>(v: &T) -> T {
    let xml = encode_element(v);
    decode_element::<T>(xml.as_bytes(), &Limits::default()).unwrap_or_else(|e| panic!("{e}: {xml}"))
}

/// Text without surrounding whitespace (decoders trim addresses and times).
fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9<>&\"' é€:/?=#-]{0,24}".prop_map(|s| s.trim().to_owned())
}

fn ncname() -> impl Strategy<Value = String> {
    "[a-zA-Z_][a-zA-Z0-9_.-]{0,12}"
}

fn epr() -> impl Strategy<Value = EndpointReference> {
    (text(), prop::collection::vec((ncname(), text()), 0..3)).prop_map(|(address, params)| {
        EndpointReference {
            address,
            reference_parameters: params
                .into_iter()
                .map(|(name, value)| Element::with_text(QName::new("urn:p", name), value).to_xml())
                .collect(),
        }
    })
}

fn datetime() -> impl Strategy<Value = DateTime> {
    (0i64..4_000_000_000, 0u32..1000).prop_map(|(s, ms)| DateTime::from_unix(s, ms * 1_000_000))
}

proptest! {
    #[test]
    fn subscribe_round_trips(consumer in epr(), topic in ncname(), initial in prop::option::of("PT[1-9][0-9]{0,3}S")) {
        let mut scope = Scope::default();
        scope.bind("t", "urn:topics");
        let s = Subscribe {
            consumer,
            topic: Some(Expression { dialect: ns::TOPIC_SIMPLE.into(), text: format!("t:{topic}"), scope }),
            message_content: None,
            initial_termination_time: initial,
            unknown_filters: Vec::new(),
        };
        let back = round_trip(&s);
        prop_assert_eq!(&back.consumer, &s.consumer);
        prop_assert_eq!(back.topic.as_ref().map(|t| &t.text), s.topic.as_ref().map(|t| &t.text));
        prop_assert_eq!(back.initial_termination_time, s.initial_termination_time);
    }

    #[test]
    fn times_round_trip(t in prop::option::of(datetime()), now in datetime()) {
        let r = SetTerminationTimeResponse { new_termination_time: t, current_time: now };
        prop_assert_eq!(round_trip(&r), r);
        let r = RenewResponse { termination_time: t, current_time: now };
        prop_assert_eq!(round_trip(&r), r);
        let r = SubscribeResponse { subscription: EndpointReference::new("http://h/c"), current_time: now, termination_time: t };
        prop_assert_eq!(round_trip(&r), r);
        let r = SetTerminationTime { requested: TerminationRequest::At(t) };
        prop_assert_eq!(round_trip(&r), r);
    }

    #[test]
    fn notify_round_trips(sub in epr(), producer in epr(), topic in ncname(), value in text()) {
        let n = Notify {
            messages: vec![NotificationMessage {
                subscription: Some(sub),
                topic: Some((ns::TOPIC_SIMPLE.into(), QName::new("urn:t", topic))),
                producer: Some(producer),
                message: Element::new(
                    QName::new_static(ns::RP, "ResourcePropertyValueChangeNotification"),
                    vec![osprey_wsrf::doc::Node::Element(Element::with_text(QName::new_static("urn:c", "Value"), value))],
                ),
            }],
        };
        prop_assert_eq!(round_trip(&n), n);
    }

    #[test]
    fn property_values_round_trip(values in prop::collection::vec((ncname(), text()), 0..5)) {
        let r = GetResourcePropertyResponse {
            elements: values.into_iter().map(|(n, v)| Element::with_text(QName::new("urn:c", n), v)).collect(),
        };
        prop_assert_eq!(round_trip(&r), r);
    }
}
