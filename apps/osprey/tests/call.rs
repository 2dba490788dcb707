//! `osprey call` reads the WSDL at run time and calls operations.

use osprey::call::{call, epr_document, find_epr, CallRequest, WsrfArgs};
use osprey_bench::Operation;

use crate::support::*;

fn req(server: &Server, op: &str) -> CallRequest {
    CallRequest {
        url: format!("http://{}/wstest", server.addr),
        operation: op.into(),
        wsdl: None,
        body: None,
        params: vec![],
        epr: None,
        wsrf: WsrfArgs::default(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_operations_from_the_wsdl() {
    let server = Server::echo().await;
    let r = call(&req(&server, "echoVoid")).await.unwrap();
    assert_eq!(r.status, 200);
    assert!(r.fault.is_none());
    let mut with_body = req(&server, "echoStruct");
    let envelope = request(Operation::Struct);
    with_body.body = Some(envelope);
    let r = call(&with_body).await.unwrap();
    assert!(String::from_utf8_lossy(&r.body).contains("<echoStructResponse"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_operations_and_parameters_are_clear_errors() {
    let server = Server::echo().await;
    let err = call(&req(&server, "echoNothing"))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("echoVoid, echoStruct, echoList"), "{err}");
    let mut bad = req(&server, "echoStruct");
    bad.params = vec![("nope".into(), "1".into())];
    let err = format!("{:#}", call(&bad).await.unwrap_err());
    assert!(
        err.contains("no child element \"nope\"") && err.contains("input"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_adds_reads_queries_and_destroys_a_counter_by_its_epr() {
    let server = Server::echo().await;
    let counter = |op: &str| CallRequest {
        url: format!("http://{}/counter", server.addr),
        ..req(&server, op)
    };
    let created = call(&counter("createCounter")).await.unwrap();
    let epr = find_epr(&created.body).expect("an EPR in the response");
    // What --save-epr writes reads back as the same EPR.
    assert_eq!(find_epr(epr_document(&epr).as_bytes()), Some(epr.clone()));
    let with_epr = |op: &str| CallRequest {
        epr: Some(epr.clone()),
        ..counter(op)
    };
    let mut add = with_epr("add");
    add.params = vec![("value".into(), "4".into())];
    let r = call(&add).await.unwrap();
    assert!(
        String::from_utf8_lossy(&r.body).contains("<value>4</value>"),
        "{r:?}"
    );
    let mut get = with_epr("GetResourceProperty");
    get.wsrf.properties = vec!["Value".into()];
    let r = call(&get).await.unwrap();
    assert!(
        String::from_utf8_lossy(&r.body).contains(">4</Value>"),
        "{r:?}"
    );
    let mut query = with_epr("QueryResourceProperties");
    query.wsrf.query = Some("/*/tns:Value + 1".into());
    let r = call(&query).await.unwrap();
    assert!(
        String::from_utf8_lossy(&r.body).contains(">5</QueryResourcePropertiesResponse>"),
        "{r:?}"
    );
    // A WSRF operation without its argument is a clear CLI error.
    let err = call(&with_epr("GetResourceProperty"))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("--property"), "{err}");
    assert!(call(&with_epr("Destroy")).await.unwrap().fault.is_none());
    let r = call(&add).await.unwrap();
    assert!(r.fault.unwrap().reason.contains("unknown resource"));
}
