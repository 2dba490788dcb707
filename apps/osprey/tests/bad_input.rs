//! Every class of bad input gets the right fault (or HTTP status where no envelope could
//! be read), and the server keeps serving afterwards.

use std::time::{Duration, Instant};

use osprey_bench::Operation;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::*;

const S11: &str = "http://schemas.xmlsoap.org/soap/envelope/";

fn envelope(body: &str) -> String {
    format!(
        r#"<soapenv:Envelope xmlns:soapenv="{S11}"><soapenv:Body>{body}</soapenv:Body></soapenv:Envelope>"#
    )
}

/// Posts `body`, expects HTTP `status` and a SOAP 1.1 fault whose text contains each of
/// `needles`, then checks the server still serves.
async fn expect_fault(server: &Server, body: &[u8], status: u16, needles: &[&str]) {
    let r = post(server.addr, "/wstest", "urn:wstest/echoStruct", body).await;
    let text = r.text();
    assert_eq!(r.status, status, "{text}");
    assert!(text.contains("<soapenv:Fault>"), "not a fault: {text}");
    for n in needles {
        assert!(text.contains(n), "fault lacks {n:?}: {text}");
    }
    server.assert_serving().await;
}

fn struct_request() -> String {
    String::from_utf8(request(Operation::Struct)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_xml() {
    let server = Server::echo().await;
    let full = struct_request();
    expect_fault(
        &server,
        &full.as_bytes()[..full.len() / 2],
        500,
        &["soapenv:Client", "MalformedMessage"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_envelope_namespace() {
    let server = Server::echo().await;
    let body = struct_request().replace(S11, "http://example.org/not-soap");
    expect_fault(&server, body.as_bytes(), 500, &["soapenv:VersionMismatch"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn billion_laughs() {
    let server = Server::echo().await;
    let mut dtd = String::from(r#"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">"#);
    for i in 1..10 {
        let prev = if i == 1 {
            "lol".to_owned()
        } else {
            format!("lol{}", i - 1)
        };
        dtd.push_str(&format!(
            "<!ENTITY lol{i} \"{}\">",
            format!("&{prev};").repeat(10)
        ));
    }
    dtd.push_str("]>");
    let body = format!(
        "{dtd}{}",
        envelope("<echoVoid xmlns=\"urn:wstest\">&lol9;</echoVoid>")
    );
    expect_fault(
        &server,
        body.as_bytes(),
        500,
        &["DOCTYPE declarations are not allowed"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn external_entity() {
    let server = Server::echo().await;
    let payload = struct_request().replacen(
        "<varString>abcdefghij</varString>",
        "<varString>&xxe;</varString>",
        1,
    );
    let payload =
        &payload[payload.find("<echoStruct").unwrap()..payload.find("</soapenv:Body>").unwrap()];
    let body = format!(
        r#"<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>{}"#,
        envelope(payload)
    );
    expect_fault(&server, body.as_bytes(), 500, &["DOCTYPE"]).await;
    // Without a DOCTYPE the reference is simply undeclared.
    expect_fault(
        &server,
        envelope(payload).as_bytes(),
        500,
        &["undeclared entity &amp;xxe;"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_nesting() {
    let server = Server::echo().await;
    // A linked list 100,000 nodes deep: the recursive decoder is stopped by the depth limit
    // long before the stack is at risk.
    let node = "<next><varInt>1</varInt><varFloat>1</varFloat><varString>x</varString>";
    let list = format!(
        r#"<echoList xmlns="urn:wstest"><input><varInt>0</varInt><varFloat>0</varFloat><varString>x</varString>{}{}</input></echoList>"#,
        node.repeat(100_000),
        "</next>".repeat(100_000)
    );
    let r = post(
        server.addr,
        "/wstest",
        "urn:wstest/echoList",
        envelope(&list).as_bytes(),
    )
    .await;
    assert_eq!(r.status, 500);
    assert!(
        r.text().contains("nesting depth limit of 64 exceeded")
            && r.text().contains("LimitExceeded"),
        "{}",
        r.text()
    );
    // Deep nesting in a header block is caught while the envelope is read.
    let header = format!(
        "<h:x xmlns:h=\"urn:h\">{}{}</h:x>",
        "<a>".repeat(100_000),
        "</a>".repeat(100_000)
    );
    let body = format!(
        r#"<soapenv:Envelope xmlns:soapenv="{S11}"><soapenv:Header>{header}</soapenv:Header><soapenv:Body><echoVoid xmlns="urn:wstest"/></soapenv:Body></soapenv:Envelope>"#
    );
    expect_fault(
        &server,
        body.as_bytes(),
        500,
        &["nesting depth limit of 64 exceeded"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_million_siblings() {
    // Under the default 16 MiB size limit, 40 MB of siblings is refused by size, unread.
    let server = Server::echo().await;
    let siblings = "<a/>".repeat(10_000_000);
    let body = envelope(&format!(
        "<echoVoid xmlns=\"urn:wstest\">{siblings}</echoVoid>"
    ));
    expect_fault(&server, body.as_bytes(), 413, &["LimitExceeded"]).await;
    let roomy = Server::start("[limits]\nmax_message_size = 67108864").await;
    // With a size limit that admits them, the decoder refuses the first one: the schema
    // allows no child here, and nothing after it is read.
    let r = post(
        roomy.addr,
        "/wstest",
        "urn:wstest/echoVoid",
        body.as_bytes(),
    )
    .await;
    assert_eq!(r.status, 500);
    assert!(
        r.text().contains("UnexpectedElement") && r.text().contains("/echoVoid"),
        "{}",
        r.text()
    );
    // Siblings the schema does allow (echoStruct items, an unbounded array) stop at the
    // element-count limit, so no request can grow a decoded array without bound.
    let item = "<item><varInt>1</varInt><varFloat>1.5</varFloat><varString>x</varString></item>";
    let many = envelope(&format!(
        r#"<echoStruct xmlns="urn:wstest"><input>{}</input></echoStruct>"#,
        item.repeat(600_000)
    ));
    let r = post(
        roomy.addr,
        "/wstest",
        "urn:wstest/echoStruct",
        many.as_bytes(),
    )
    .await;
    assert_eq!(r.status, 500);
    assert!(
        r.text().contains("element count limit of 500000 exceeded"),
        "{}",
        r.text()
    );
    // And siblings in a header block are counted while the envelope is read.
    let header = format!("<h:x xmlns:h=\"urn:h\">{}</h:x>", "<a/>".repeat(1_000_000));
    let body = format!(
        r#"<soapenv:Envelope xmlns:soapenv="{S11}"><soapenv:Header>{header}</soapenv:Header><soapenv:Body><echoVoid xmlns="urn:wstest"/></soapenv:Body></soapenv:Envelope>"#
    );
    let r = post(
        roomy.addr,
        "/wstest",
        "urn:wstest/echoVoid",
        body.as_bytes(),
    )
    .await;
    assert!(
        r.text().contains("element count limit of 500000 exceeded"),
        "{}",
        r.text()
    );
    roomy.assert_serving().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declared_gigabyte_with_a_short_body() {
    let server = Server::echo().await;
    let start = Instant::now();
    let r = raw(server.addr, b"POST /wstest HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nContent-Length: 1073741824\r\n\r\n<short/>").await;
    assert_eq!(r.status, 413, "{}", r.text());
    assert!(r.text().contains("LimitExceeded"));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "refused without waiting for the body"
    );
    server.assert_serving().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunked_body_over_the_limit() {
    let server = Server::start("[limits]\nmax_message_size = 100000").await;
    let mut msg = b"POST /wstest HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..20 {
        msg.extend_from_slice(format!("{:x}\r\n{}\r\n", 10_000, "x".repeat(10_000)).as_bytes());
    }
    msg.extend_from_slice(b"0\r\n\r\n");
    let r = raw(server.addr, &msg).await;
    assert_eq!(r.status, 413, "{}", r.text());
    server.assert_serving().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_utf8() {
    let server = Server::echo().await;
    let mut body = struct_request().into_bytes();
    let at = body.len() / 2;
    body[at] = 0xff;
    expect_fault(&server, &body, 500, &["not valid UTF-8"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_operation() {
    let server = Server::echo().await;
    let r = post(
        server.addr,
        "/wstest",
        "urn:wstest/echoNothing",
        envelope("<echoNothing xmlns=\"urn:wstest\"/>").as_bytes(),
    )
    .await;
    assert_eq!(r.status, 500);
    assert!(
        r.text().contains("UnknownOperation") && r.text().contains("{urn:wstest}echoNothing"),
        "{}",
        r.text()
    );
    let r = post(
        server.addr,
        "/elsewhere",
        "",
        request(Operation::Void).as_slice(),
    )
    .await;
    assert!(r.text().contains("UnknownService"), "{}", r.text());
    server.assert_serving().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_and_extra_elements_name_the_path() {
    let server = Server::echo().await;
    let missing = struct_request().replacen("<varFloat>3.5</varFloat>", "", 1);
    expect_fault(
        &server,
        missing.as_bytes(),
        500,
        &[
            "UnexpectedElement",
            "expected varFloat",
            "/echoStruct/input/item",
        ],
    )
    .await;
    let extra = struct_request().replacen("</item>", "<bogus>1</bogus></item>", 1);
    expect_fault(
        &server,
        extra.as_bytes(),
        500,
        &["{urn:wstest}bogus", "/echoStruct/input/item"],
    )
    .await;
    let empty = envelope(r#"<echoStruct xmlns="urn:wstest"/>"#);
    expect_fault(
        &server,
        empty.as_bytes(),
        500,
        &["MissingElement", "missing element input"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_types() {
    let server = Server::echo().await;
    let body = struct_request().replace("<varInt>7</varInt>", "<varInt>abc</varInt>");
    expect_fault(
        &server,
        body.as_bytes(),
        500,
        &[
            "InvalidValue",
            "invalid xsd:int value \"abc\"",
            "<path xmlns=\"urn:osprey:fault\">/echoStruct/input/item/varInt</path>",
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn must_understand_header_nobody_understands() {
    let server = Server::echo().await;
    let body = format!(
        r#"<s:Envelope xmlns:s="{S11}"><s:Header><x:Secret xmlns:x="urn:x" s:mustUnderstand="1">k</x:Secret><x:Hint xmlns:x="urn:x">ok to ignore</x:Hint></s:Header><s:Body><echoVoid xmlns="urn:wstest"/></s:Body></s:Envelope>"#
    );
    expect_fault(
        &server,
        body.as_bytes(),
        500,
        &[
            "<faultcode>s:MustUnderstand</faultcode>"
                .replace("s:", "soapenv:")
                .as_str(),
            "{urn:x}Secret",
        ],
    )
    .await;
    // A header without mustUnderstand is ignored.
    let fine = body.replace(r#" s:mustUnderstand="1""#, "");
    assert_eq!(
        post(
            server.addr,
            "/wstest",
            "urn:wstest/echoVoid",
            fine.as_bytes()
        )
        .await
        .status,
        200
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_client_is_cut_off_by_the_read_timeout() {
    let server = Server::start("[server]\nread_timeout = \"1s\"").await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    let request = b"POST /wstest HTTP/1.1\r\nHost: x\r\n";
    let start = Instant::now();
    let mut closed = false;
    // One byte a second, at most 10 bytes: the server must hang up long before the end.
    for b in request.iter().take(10) {
        if s.write_all(&[*b]).await.is_err() {
            closed = true;
            break;
        }
        let mut buf = [0u8; 512];
        match tokio::time::timeout(Duration::from_secs(1), s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                closed = true;
                break;
            }
            Ok(Ok(_)) => {
                // A 408 answer is as good as a close; the next read sees the close.
                closed = true;
                break;
            }
            Err(_) => {}
        }
    }
    assert!(closed, "connection still open after {:?}", start.elapsed());
    assert!(start.elapsed() < Duration::from_secs(5));
    server.assert_serving().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_body_is_cut_off_too() {
    let server = Server::start("[server]\nread_timeout = \"1s\"").await;
    let start = Instant::now();
    // Head complete, body never comes.
    let r = raw(server.addr, b"POST /wstest HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nContent-Length: 500\r\n\r\n<soap").await;
    assert_eq!(r.status, 408, "{}", r.text());
    assert!(start.elapsed() < Duration::from_secs(5));
    server.assert_serving().await;
}
