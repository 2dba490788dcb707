//! HTTP/1.1 and HTTP/2 on hyper: a listener ([`HttpServer`]), a pooled client
//! ([`HttpClient`]) and a single-connection client for load generation ([`HttpConnection`]).

pub mod body;
mod client;
mod server;

pub use client::{ClientError, HttpClient, HttpConnection, HttpResponse, Value as HeaderValue};
pub use server::{HttpConfig, HttpServer, ThreadInit};
