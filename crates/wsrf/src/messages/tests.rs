use super::*;
use osprey_binding::{decode_element, encode_element};
use osprey_xml::Limits;

fn decode<T: XmlElement>(xml: &str) -> Result<T, DecodeError> {
    decode_element::<T>(xml.as_bytes(), &Limits::default())
}

#[test]
fn get_resource_property_resolves_its_qname_text() {
    let r: GetResourceProperty = decode(
        r#"<wsrf-rp:GetResourceProperty xmlns:wsrf-rp="http://docs.oasis-open.org/wsrf/rp-2" xmlns:c="urn:c">c:Value</wsrf-rp:GetResourceProperty>"#,
    )
    .unwrap();
    assert_eq!(r.property, Ok(QName::new_static("urn:c", "Value")));
    // An undeclared prefix is kept as an error for the runtime's fault.
    let r: GetResourceProperty = decode(
        r#"<GetResourceProperty xmlns="http://docs.oasis-open.org/wsrf/rp-2">x:Value</GetResourceProperty>"#,
    )
    .unwrap();
    assert!(r.property.unwrap_err().contains("\"x\""));
    // Round trip.
    let again: GetResourceProperty = decode(&encode_element(&GetResourceProperty {
        property: Ok(QName::new_static("urn:c", "Value")),
    }))
    .unwrap();
    assert_eq!(again.property, Ok(QName::new_static("urn:c", "Value")));
}

#[test]
fn set_resource_properties_reads_each_component() {
    let r: SetResourceProperties = decode(
        r#"<rp:SetResourceProperties xmlns:rp="http://docs.oasis-open.org/wsrf/rp-2" xmlns:c="urn:c">
             <rp:Update><c:Value>3</c:Value></rp:Update>
             <rp:Insert><c:Tag>a</c:Tag><c:Tag>b</c:Tag></rp:Insert>
             <rp:Delete ResourceProperty="c:Tag"/>
           </rp:SetResourceProperties>"#,
    )
    .unwrap();
    assert_eq!(r.components.len(), 3);
    assert!(
        matches!(&r.components[0], SetComponent::Update(v) if v.len() == 1 && v[0].string_value() == "3")
    );
    assert!(matches!(&r.components[1], SetComponent::Insert(v) if v.len() == 2));
    assert_eq!(
        r.components[2],
        SetComponent::Delete(Ok(QName::new_static("urn:c", "Tag")))
    );
    let again: SetResourceProperties = decode(&encode_element(&r)).unwrap();
    assert_eq!(again, r);
}

#[test]
fn termination_requests_take_times_durations_and_nil() {
    let at: SetTerminationTime = decode(
        r#"<rl:SetTerminationTime xmlns:rl="http://docs.oasis-open.org/wsrf/rl-2"><rl:RequestedTerminationTime>2030-01-01T00:00:00Z</rl:RequestedTerminationTime></rl:SetTerminationTime>"#,
    )
    .unwrap();
    assert_eq!(at.requested.resolve(0), Some(1_893_456_000_000));
    let never: SetTerminationTime = decode(
        r#"<rl:SetTerminationTime xmlns:rl="http://docs.oasis-open.org/wsrf/rl-2" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><rl:RequestedTerminationTime xsi:nil="true"/></rl:SetTerminationTime>"#,
    )
    .unwrap();
    assert_eq!(never.requested, TerminationRequest::At(None));
    let after: SetTerminationTime = decode(
        r#"<rl:SetTerminationTime xmlns:rl="http://docs.oasis-open.org/wsrf/rl-2"><rl:RequestedLifetimeDuration>PT1M30.5S</rl:RequestedLifetimeDuration></rl:SetTerminationTime>"#,
    )
    .unwrap();
    assert_eq!(after.requested.resolve(1000), Some(91_500));
    assert_eq!(
        decode::<SetTerminationTime>(&encode_element(&after)).unwrap(),
        after
    );
    let bad = decode::<SetTerminationTime>(
        r#"<rl:SetTerminationTime xmlns:rl="http://docs.oasis-open.org/wsrf/rl-2"><rl:RequestedTerminationTime>tomorrow</rl:RequestedTerminationTime></rl:SetTerminationTime>"#,
    );
    assert!(
        matches!(bad, Err(DecodeError::InvalidValue { .. })),
        "{bad:?}"
    );
}

#[test]
fn durations_parse_as_xsd_writes_them() {
    assert_eq!(parse_duration_ms("PT5S"), Some(5000));
    assert_eq!(parse_duration_ms("P1DT1H"), Some(90_000_000));
    assert_eq!(parse_duration_ms("-PT1S"), Some(-1000));
    assert_eq!(parse_duration_ms("P1Y"), Some(365 * 86_400_000));
    for bad in ["P", "PT", "5S", "PT5", "P1S", "PT1H1D", "PTS"] {
        assert_eq!(parse_duration_ms(bad), None, "{bad}");
    }
}

#[test]
fn subscribe_reads_consumer_filter_and_termination() {
    let s: Subscribe = decode(
        r#"<wsnt:Subscribe xmlns:wsnt="http://docs.oasis-open.org/wsn/b-2" xmlns:wsa="http://www.w3.org/2005/08/addressing" xmlns:c="urn:c">
             <wsnt:ConsumerReference><wsa:Address>http://127.0.0.1:9/consumer</wsa:Address>
               <wsa:ReferenceParameters><c:Tag>t1</c:Tag></wsa:ReferenceParameters></wsnt:ConsumerReference>
             <wsnt:Filter><wsnt:TopicExpression Dialect="http://docs.oasis-open.org/wsn/t-1/TopicExpression/Simple">c:Value</wsnt:TopicExpression></wsnt:Filter>
             <wsnt:InitialTerminationTime>PT1H</wsnt:InitialTerminationTime>
           </wsnt:Subscribe>"#,
    )
    .unwrap();
    assert_eq!(s.consumer.address, "http://127.0.0.1:9/consumer");
    assert_eq!(s.consumer.reference_parameters.len(), 1);
    let t = s.topic.as_ref().unwrap();
    assert_eq!(t.dialect, crate::ns::TOPIC_SIMPLE);
    assert_eq!(
        crate::doc::resolve_qname(&t.scope, &t.text),
        Ok(QName::new_static("urn:c", "Value"))
    );
    assert_eq!(s.initial_termination_time.as_deref(), Some("PT1H"));
    let again: Subscribe = decode(&encode_element(&s)).unwrap();
    assert_eq!(again.consumer, s.consumer);
    assert_eq!(again.topic.as_ref().map(|t| &t.text), Some(&t.text));
}

#[test]
fn notify_round_trips_with_its_topic() {
    let n = Notify {
        messages: vec![NotificationMessage {
            subscription: Some(EndpointReference::new("http://h/counter")),
            topic: Some((
                crate::ns::TOPIC_SIMPLE.into(),
                QName::new_static("urn:c", "Value"),
            )),
            producer: Some(EndpointReference::new("http://h/counter")),
            message: Element::with_text(QName::new_static("urn:c", "Value"), "3"),
        }],
    };
    let xml = encode_element(&n);
    assert_eq!(decode::<Notify>(&xml).unwrap(), n);
}

#[test]
fn unexpected_and_missing_elements_name_themselves() {
    let e = decode::<Destroy>(
        r#"<Destroy xmlns="http://docs.oasis-open.org/wsrf/rl-2"><x/></Destroy>"#,
    )
    .unwrap_err();
    assert!(e.to_string().contains("unexpected element"), "{e}");
    let e = decode::<Subscribe>(r#"<Subscribe xmlns="http://docs.oasis-open.org/wsn/b-2"/>"#)
        .unwrap_err();
    assert!(e.to_string().contains("ConsumerReference"), "{e}");
    let e = decode::<GetMultipleResourceProperties>(
        r#"<GetMultipleResourceProperties xmlns="http://docs.oasis-open.org/wsrf/rp-2"/>"#,
    )
    .unwrap_err();
    assert!(e.to_string().contains("ResourceProperty"), "{e}");
}
