//! `osprey call` reads the WSDL at run time and calls operations.

use osprey::call::{call, CallRequest};
use osprey_bench::Operation;

use crate::support::*;

fn req(server: &Server, op: &str) -> CallRequest {
    CallRequest {
        url: format!("http://{}/wstest", server.addr),
        operation: op.into(),
        wsdl: None,
        body: None,
        params: vec![],
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
