use super::*;

const S12: &str = "http://www.w3.org/2003/05/soap-envelope";

fn decode(headers: &str) -> Result<Option<MessageHeaders>, AddressingError> {
    let msg = format!(
        r#"<e:Envelope xmlns:e="{S12}" xmlns:wsa="{WSA_NS}"><e:Header>{headers}</e:Header><e:Body/></e:Envelope>"#
    );
    let env = Envelope::decode(msg.as_bytes(), &Limits::default()).unwrap();
    MessageHeaders::decode(&env, msg.as_bytes(), &Limits::default())
}

#[test]
fn reads_all_properties_and_reference_parameters() {
    let h = decode(&format!(
        r#"<wsa:To>http://x/wstest</wsa:To><wsa:Action>urn:wstest/echoVoid</wsa:Action>
           <wsa:MessageID>urn:uuid:1</wsa:MessageID>
           <wsa:ReplyTo><wsa:Address>{ANONYMOUS}</wsa:Address>
             <wsa:ReferenceParameters><k:Key xmlns:k="urn:k" k:a="1">42</k:Key></wsa:ReferenceParameters>
           </wsa:ReplyTo>"#
    ))
    .unwrap()
    .unwrap();
    assert_eq!(h.action.as_deref(), Some("urn:wstest/echoVoid"));
    let epr = h.reply_to.as_ref().unwrap();
    assert_eq!(
        epr.reference_parameters,
        vec![r#"<Key xmlns="urn:k" xmlns:a0="urn:k" a0:a="1">42</Key>"#]
    );
    let reply = String::from_utf8(
        h.reply_headers("urn:wstest/echoVoidResponse", "urn:uuid:2", false)
            .unwrap(),
    )
    .unwrap();
    assert!(
        reply.contains(
            r#"<RelatesTo xmlns="http://www.w3.org/2005/08/addressing">urn:uuid:1</RelatesTo>"#
        ),
        "{reply}"
    );
    assert!(
        reply.contains(r#"wsa:IsReferenceParameter="true">42</Key>"#),
        "{reply}"
    );
}

/// Values with references, CDATA or comments are read in full, the same as plain ones.
#[test]
fn escaped_and_plain_values_read_the_same() {
    let h = decode(
        r#"<wsa:To> http://x/a?b=1&amp;c=2 </wsa:To><wsa:Action><![CDATA[urn:a]]></wsa:Action>
           <wsa:MessageID>urn:<!-- c -->uuid:&#49;</wsa:MessageID>"#,
    )
    .unwrap()
    .unwrap();
    assert_eq!(h.to.as_deref(), Some("http://x/a?b=1&c=2"));
    assert_eq!(h.action.as_deref(), Some("urn:a"));
    assert_eq!(h.message_id.as_deref(), Some("urn:uuid:1"));
    let plain = decode("<wsa:Action> urn:a </wsa:Action>").unwrap().unwrap();
    assert_eq!(plain.action.as_deref(), Some("urn:a"));
}

#[test]
fn no_addressing_headers_is_none() {
    assert_eq!(decode("").unwrap(), None);
}

#[test]
fn errors_map_to_spec_faults() {
    let cases = [
        ("<wsa:To>x</wsa:To>", "MessageAddressingHeaderRequired"),
        ("<wsa:Action>a</wsa:Action><wsa:Action>b</wsa:Action>", "InvalidAddressingHeader"),
        ("<wsa:Action>a</wsa:Action><wsa:ReplyTo><wsa:Address>http://elsewhere/</wsa:Address></wsa:ReplyTo>", "OnlyAnonymousAddressSupported"),
        ("<wsa:Action>a</wsa:Action><wsa:ReplyTo/>", "InvalidAddressingHeader"),
    ];
    for (headers, sub) in cases {
        let err = decode(headers).unwrap_err();
        let fault = Fault::from(&err);
        assert_eq!(
            fault.subcode.as_ref().map(|q| q.local()),
            Some(sub),
            "{headers}"
        );
    }
}

#[test]
fn message_ids_are_unique_uuids() {
    let a = new_message_id();
    assert_eq!(a.len(), "urn:uuid:".len() + 36);
    assert_ne!(a, new_message_id());
    // RFC 4122 layout: 8-4-4-4-12 lower-case hex digits, version 4, variant 10xx.
    let uuid = a.strip_prefix("urn:uuid:").unwrap();
    let groups: Vec<&str> = uuid.split('-').collect();
    assert_eq!(
        groups.iter().map(|g| g.len()).collect::<Vec<_>>(),
        [8, 4, 4, 4, 12]
    );
    assert!(uuid
        .bytes()
        .all(|c| c == b'-' || c.is_ascii_digit() || (b'a'..=b'f').contains(&c)));
    assert!(groups[2].starts_with('4'), "{uuid}");
    assert!(
        matches!(groups[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b'),
        "{uuid}"
    );
}
