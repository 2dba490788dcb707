//! The WS Test 1.0 echo service (`urn:wstest`): echoVoid, echoStruct (an array of 20
//! structs) and echoList (a 20-node linked list), answering exactly the contract every
//! peer engine in the benchmarks serves, so that one load drives them all.

pub mod types;

use osprey_container::TypedService;
use types::*;

/// The WS Test target namespace.
pub const NS: &str = "urn:wstest";

/// The echo service.
pub fn service() -> TypedService {
    TypedService::builder("WSTest", NS)
        .operation("echoVoid", "urn:wstest/echoVoid", |_: EchoVoid, _| async {
            Ok(EchoVoidResponse {})
        })
        .operation(
            "echoStruct",
            "urn:wstest/echoStruct",
            |req: EchoStruct, _| async move { Ok(EchoStructResponse { output: req.input }) },
        )
        .operation(
            "echoList",
            "urn:wstest/echoList",
            |req: EchoList, _| async move { Ok(EchoListResponse { output: req.input }) },
        )
        .build()
}
