//! Load agents and experiments behind `osprey bench`.
//!
//! Each experiment parses its flags into a validated config (`WsTestConfig`, ...), runs,
//! and returns a report that renders as a table or JSON. Every response is checked, so
//! that a server answering faults or wrong data cannot look fast.

pub mod chart;
pub mod handlers;
pub mod lifecycle;
pub mod process;
pub mod wstest;

pub use handlers::{HandlersConfig, HandlersReport};
pub use lifecycle::{LifecycleConfig, LifecycleReport};
pub use wstest::{run_wstest, Operation, WsTestConfig, WsTestReport};
