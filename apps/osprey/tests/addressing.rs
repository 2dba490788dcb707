//! WS-Addressing: dispatch by Action, reply headers, reference parameters, faults.

use crate::support::*;

const S12: &str = "http://www.w3.org/2003/05/soap-envelope";
const WSA: &str = "http://www.w3.org/2005/08/addressing";

fn message(headers: &str) -> String {
    format!(
        r#"<e:Envelope xmlns:e="{S12}" xmlns:wsa="{WSA}"><e:Header>{headers}</e:Header><e:Body><echoVoid xmlns="urn:wstest"/></e:Body></e:Envelope>"#
    )
}

async fn send(server: &Server, body: &str) -> Response {
    let head = format!("POST /wstest HTTP/1.1\r\nHost: x\r\nContent-Type: application/soap+xml\r\nContent-Length: {}\r\n\r\n", body.len());
    raw(server.addr, &[head.as_bytes(), body.as_bytes()].concat()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reply_carries_relates_to_action_and_reference_parameters() {
    let server = Server::echo().await;
    let r = send(
        &server,
        &message(&format!(
            r#"<wsa:To e:mustUnderstand="true">http://x/wstest</wsa:To><wsa:Action e:mustUnderstand="1">urn:wstest/echoVoid</wsa:Action>
               <wsa:MessageID>urn:uuid:11111111-2222-3333-4444-555555555555</wsa:MessageID>
               <wsa:ReplyTo><wsa:Address>{WSA}/anonymous</wsa:Address><wsa:ReferenceParameters><c:Key xmlns:c="urn:client">42</c:Key></wsa:ReferenceParameters></wsa:ReplyTo>"#
        )),
    )
    .await;
    let text = r.text();
    assert_eq!(r.status, 200, "{text}");
    assert!(
        text.contains(&format!(
            r#"<Action xmlns="{WSA}">urn:wstest/echoVoidResponse</Action>"#
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            r#"<RelatesTo xmlns="{WSA}">urn:uuid:11111111-2222-3333-4444-555555555555</RelatesTo>"#
        )),
        "{text}"
    );
    assert!(text.contains(r#"<Key xmlns="urn:client" xmlns:wsa="http://www.w3.org/2005/08/addressing" wsa:IsReferenceParameter="true">42</Key>"#), "{text}");
    assert!(text.contains("<echoVoidResponse xmlns=\"urn:wstest\"/>"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_action_and_non_anonymous_reply_to_are_spec_faults() {
    let server = Server::echo().await;
    let r = send(
        &server,
        &message(
            "<wsa:Action>urn:wstest/nothing</wsa:Action><wsa:MessageID>urn:uuid:1</wsa:MessageID>",
        ),
    )
    .await;
    assert_eq!(r.status, 400);
    assert!(r.text().contains("ActionNotSupported"), "{}", r.text());
    assert!(
        r.text()
            .contains("http://www.w3.org/2005/08/addressing/soap/fault"),
        "fault action: {}",
        r.text()
    );
    let r = send(&server, &message("<wsa:Action>urn:wstest/echoVoid</wsa:Action><wsa:ReplyTo><wsa:Address>http://elsewhere/</wsa:Address></wsa:ReplyTo>")).await;
    assert!(
        r.text().contains("OnlyAnonymousAddressSupported"),
        "{}",
        r.text()
    );
    let r = send(
        &server,
        &message("<wsa:MessageID>urn:uuid:1</wsa:MessageID>"),
    )
    .await;
    assert!(
        r.text().contains("MessageAddressingHeaderRequired"),
        "{}",
        r.text()
    );
    server.assert_serving().await;
}
