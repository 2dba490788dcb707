//! End-to-end tests: the container started as `osprey serve` starts it, on 127.0.0.1:0,
//! spoken to with raw HTTP bytes.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

mod support;

mod addressing;
mod bad_input;
mod call;
mod counter;
mod durability;
mod echo;
mod handlers;
mod lifecycle;
mod shared_state;
