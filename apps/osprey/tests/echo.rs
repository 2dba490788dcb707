//! The echo service answers the WS Test contract, in SOAP 1.1 and 1.2.

use osprey_bench::wstest::check_response;
use osprey_bench::Operation;
use osprey_xml::Limits;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_three_operations_echo_their_input() {
    let server = Server::echo().await;
    for op in [Operation::Void, Operation::Struct, Operation::List] {
        let r = post(
            server.addr,
            "/wstest",
            &format!("urn:wstest/{}", op.name()),
            &request(op),
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.text());
        assert!(
            r.head
                .to_ascii_lowercase()
                .contains("content-type: text/xml; charset=utf-8"),
            "{}",
            r.head
        );
        check_response(op, &r.body, &Limits::default()).unwrap();
        check(&format!("{}-response.xml", op.name()), &r.body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dispatch_falls_back_to_the_payload_element_without_soapaction() {
    let server = Server::echo().await;
    let r = post(server.addr, "/wstest", "", &request(Operation::Struct)).await;
    assert_eq!(r.status, 200);
    check_response(Operation::Struct, &r.body, &Limits::default()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soap12_requests_are_answered_in_soap12() {
    let server = Server::echo().await;
    let body = osprey_bench::wstest::request_body(Operation::List, osprey_soap::SoapVersion::V12);
    let head = format!(
        "POST /wstest HTTP/1.1\r\nHost: x\r\nContent-Type: application/soap+xml; charset=utf-8; action=\"urn:wstest/echoList\"\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let r = raw(server.addr, &[head.as_bytes(), &body].concat()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.head.to_ascii_lowercase().contains("application/soap+xml"));
    assert!(r
        .text()
        .contains(r#"<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope">"#));
    check_response(Operation::List, &r.body, &Limits::default()).unwrap();
    // A SOAP 1.2 sender fault is HTTP 400 in SOAP 1.2's shape.
    let bad = String::from_utf8(body)
        .unwrap()
        .replace("<varInt>3</varInt>", "<varInt>three</varInt>");
    let head = format!("POST /wstest HTTP/1.1\r\nHost: x\r\nContent-Type: application/soap+xml\r\nContent-Length: {}\r\n\r\n", bad.len());
    let r = raw(server.addr, &[head.as_bytes(), bad.as_bytes()].concat()).await;
    assert_eq!(r.status, 400);
    assert!(
        r.text().contains("<env:Value>env:Sender</env:Value>"),
        "{}",
        r.text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wsdl_is_served_with_the_request_host_and_parses() {
    let server = Server::echo().await;
    let r = raw(
        server.addr,
        b"GET /wstest?wsdl HTTP/1.1\r\nHost: example.org:9000\r\n\r\n",
    )
    .await;
    assert_eq!(r.status, 200);
    let contract = osprey_wsdl::parse(&r.body).unwrap();
    let names: Vec<_> = contract
        .operations
        .iter()
        .map(|o| o.name.as_str())
        .collect();
    assert_eq!(names, ["echoVoid", "echoStruct", "echoList"]);
    assert_eq!(contract.operations[1].soap_action, "urn:wstest/echoStruct");
    assert_eq!(
        contract.operations[0].address.as_deref(),
        Some("http://example.org:9000/wstest")
    );
    check(
        "wstest.wsdl",
        r.text().replace("example.org:9000", "HOST").as_bytes(),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_paths_and_methods_get_clear_http_errors() {
    let server = Server::echo().await;
    assert_eq!(
        raw(server.addr, b"GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .status,
        404
    );
    assert_eq!(
        raw(server.addr, b"DELETE /wstest HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .status,
        405
    );
    let index = raw(server.addr, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await;
    assert!(index.text().contains("/wstest"));
}
