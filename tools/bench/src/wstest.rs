//! The WS Test 1.0 load: N keep-alive connections sending one operation back to back
//! for a fixed time, every response checked against the request, latencies in an HDR
//! histogram.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hdrhistogram::Histogram;
use osprey_binding::{decode_element_from, encode_element_into, XmlElement};
use osprey_echo::types::*;
use osprey_soap::{write_envelope, Body, Envelope, Fault, SoapVersion};
use osprey_transport::http::{HeaderValue, HttpConnection};
use osprey_xml::{Limits, XmlWriter};
use serde::Serialize;

/// A WS Test operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Operation {
    /// `echoVoid`.
    #[serde(rename = "echoVoid")]
    Void,
    /// `echoStruct` with 20 items.
    #[serde(rename = "echoStruct")]
    Struct,
    /// `echoList` with 20 nodes.
    #[serde(rename = "echoList")]
    List,
    /// The WSRF counter's `add(1)`: each connection creates its own counter first and
    /// checks that every answer is one more than the last.
    #[serde(rename = "add")]
    Add,
    /// The WSRF counter's `createCounter`: every response must carry an endpoint
    /// reference with a key (to fill a container with resources).
    #[serde(rename = "createCounter")]
    Create,
}

impl std::str::FromStr for Operation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "echoVoid" => Ok(Operation::Void),
            "echoStruct" => Ok(Operation::Struct),
            "echoList" => Ok(Operation::List),
            "add" => Ok(Operation::Add),
            "createCounter" => Ok(Operation::Create),
            _ => Err(format!(
                "unknown operation {s:?}: expected echoVoid, echoStruct, echoList, add or createCounter"
            )),
        }
    }
}

impl Operation {
    /// The operation's name.
    pub fn name(self) -> &'static str {
        match self {
            Operation::Void => "echoVoid",
            Operation::Struct => "echoStruct",
            Operation::List => "echoList",
            Operation::Add => "add",
            Operation::Create => "createCounter",
        }
    }
}

/// Number of items (or list nodes) in the standard WS Test requests.
pub const ITEMS: i32 = 20;

/// A validated run of `osprey bench wstest`.
#[derive(Debug, Clone)]
pub struct WsTestConfig {
    /// Server address.
    pub addr: SocketAddr,
    /// Request path (`/wstest`).
    pub path: String,
    /// Operation.
    pub op: Operation,
    /// Concurrent connections.
    pub connections: usize,
    /// Measured time.
    pub duration: Duration,
    /// Unmeasured time before it.
    pub warmup: Duration,
    /// Send SOAP 1.2 instead of 1.1.
    pub soap12: bool,
    /// Draw a progress bar.
    pub progress: bool,
}

impl WsTestConfig {
    /// A config for `url` (`http://host:port/path`), with the defaults of the CLI.
    ///
    /// # Errors
    /// When the URL is not `http://host:port/path` or the host does not resolve.
    pub fn new(url: &str, op: Operation) -> Result<Self, String> {
        let (addr, path) = parse_http_url(url)?;
        Ok(WsTestConfig {
            addr,
            path,
            op,
            connections: 16,
            duration: Duration::from_secs(10),
            warmup: Duration::from_secs(0),
            soap12: false,
            progress: false,
        })
    }
}

/// The address and path of `url` (`http://host:port/path`; port 80 when absent).
///
/// # Errors
/// When the URL is not `http://...` or the host does not resolve.
pub fn parse_http_url(url: &str) -> Result<(SocketAddr, String), String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("{url:?}: only http:// URLs are supported"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let authority = if authority.contains(':') {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    let addr = authority
        .to_socket_addrs()
        .map_err(|e| format!("{authority}: {e}"))?
        .next()
        .ok_or_else(|| format!("{authority}: no address"))?;
    Ok((addr, path.to_owned()))
}

/// The result of a run.
#[derive(Debug, Clone, Serialize)]
pub struct WsTestReport {
    /// Operation.
    pub operation: Operation,
    /// Connections.
    pub connections: usize,
    /// Measured seconds.
    pub seconds: f64,
    /// Correct responses.
    pub requests: u64,
    /// Failed exchanges (HTTP error, fault, wrong data, connection failure).
    pub errors: u64,
    /// The first failure seen, if any.
    pub first_error: Option<String>,
    /// Correct responses per second.
    pub requests_per_second: f64,
    /// Median latency in microseconds.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Maximum.
    pub max_us: f64,
    /// Mean.
    pub mean_us: f64,
}

impl std::fmt::Display for WsTestReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "operation     {}", self.operation.name())?;
        writeln!(f, "connections   {}", self.connections)?;
        writeln!(
            f,
            "requests      {} in {:.1} s ({} errors)",
            self.requests, self.seconds, self.errors
        )?;
        writeln!(f, "requests/s    {:.0}", self.requests_per_second)?;
        writeln!(
            f,
            "latency (us)  p50 {:.1}  p90 {:.1}  p99 {:.1}  max {:.1}  mean {:.1}",
            self.p50_us, self.p90_us, self.p99_us, self.max_us, self.mean_us
        )?;
        if let Some(e) = &self.first_error {
            writeln!(f, "first error   {e}")?;
        }
        Ok(())
    }
}

/// The request envelope for `op`.
pub fn request_body(op: Operation, version: SoapVersion) -> Vec<u8> {
    let mut payload = XmlWriter::with_capacity(2048);
    match op {
        Operation::Void => encode_element_into(&EchoVoid {}, &mut payload),
        Operation::Struct => encode_element_into(
            &EchoStruct {
                input: standard_array(ITEMS),
            },
            &mut payload,
        ),
        Operation::List => {
            let input = standard_list(ITEMS).expect("ITEMS > 0");
            encode_element_into(&EchoList { input }, &mut payload);
        }
        // Without its counter's key header: `run_wstest` adds one per connection.
        Operation::Add => encode_element_into(&osprey_counter::Add { value: 1 }, &mut payload),
        Operation::Create => encode_element_into(&osprey_counter::CreateCounter {}, &mut payload),
    }
    let mut w = XmlWriter::with_capacity(2048);
    write_envelope(&mut w, version, &[], Body::Payload(payload.as_bytes()));
    w.into_bytes()
}

/// The `add(1)` request for the counter `epr` (its reference parameters as headers).
fn add_body(version: SoapVersion, epr: &osprey_wsrf::EndpointReference) -> Result<Vec<u8>, String> {
    let headers =
        osprey_addressing::request_headers(epr, ADD_ACTION, &osprey_addressing::new_message_id())
            .map_err(|e| e.to_string())?;
    let mut payload = XmlWriter::with_capacity(256);
    encode_element_into(&osprey_counter::Add { value: 1 }, &mut payload);
    let mut w = XmlWriter::with_capacity(1024);
    write_envelope(
        &mut w,
        version,
        &[headers.as_slice()],
        Body::Payload(payload.as_bytes()),
    );
    Ok(w.into_bytes())
}

const ADD_ACTION: &str = "urn:osprey:counter/add";

/// The value an `add` response carries.
///
/// # Errors
/// A fault, malformed XML, or another element.
pub fn check_add(body: &[u8], limits: &Limits) -> Result<i32, String> {
    payload::<osprey_counter::AddResponse>(body, limits).map(|r| r.value)
}

/// The response's payload as a `T`, after checking that `body` is an envelope without a
/// fault and that nothing follows the payload.
fn payload<T: XmlElement>(body: &[u8], limits: &Limits) -> Result<T, String> {
    let env = Envelope::decode(body, limits).map_err(|e| format!("bad envelope: {e}"))?;
    if let Some(fault) = Fault::decode(&env, body, limits).map_err(|e| e.to_string())? {
        return Err(format!("SOAP fault: {fault}"));
    }
    let mut r = env
        .payload_reader(body, limits)
        .map_err(|e| e.to_string())?
        .ok_or("empty Body")?;
    let v = decode_element_from::<T>(&mut r).map_err(|e| format!("wrong response: {e}"))?;
    r.finish().map_err(|e| format!("malformed response: {e}"))?;
    Ok(v)
}

/// Checks that `body` is a correct answer to the standard request for `op`.
///
/// # Errors
/// A description of what is wrong: a fault, malformed XML, or different values.
pub fn check_response(op: Operation, body: &[u8], limits: &Limits) -> Result<(), String> {
    match op {
        Operation::Add => Err("add responses are checked with check_add".into()),
        Operation::Create => {
            let got = payload::<osprey_counter::CreateCounterResponse>(body, limits)?;
            let epr = got.endpoint_reference.0;
            (!epr.address.is_empty() && epr.reference_parameters.len() == 1)
                .then_some(())
                .ok_or_else(|| "createCounter returned no usable endpoint reference".into())
        }
        Operation::Void => payload::<EchoVoidResponse>(body, limits).map(|_| ()),
        Operation::Struct => {
            let got = payload::<EchoStructResponse>(body, limits)?;
            (got.output == standard_array(ITEMS))
                .then_some(())
                .ok_or_else(|| "echoed array differs from the request".into())
        }
        Operation::List => {
            let got = payload::<EchoListResponse>(body, limits)?;
            (Some(got.output) == standard_list(ITEMS))
                .then_some(())
                .ok_or_else(|| "echoed list differs from the request".into())
        }
    }
}

struct Shared {
    done: AtomicU64,
    errors: AtomicU64,
    first_error: std::sync::Mutex<Option<String>>,
}

/// Runs the load and returns the report.
///
/// # Errors
/// When no connection at all can be opened.
pub async fn run_wstest(cfg: &WsTestConfig) -> Result<WsTestReport, String> {
    let version = if cfg.soap12 {
        SoapVersion::V12
    } else {
        SoapVersion::V11
    };
    let action = match cfg.op {
        Operation::Add => ADD_ACTION.to_owned(),
        Operation::Create => "urn:osprey:counter/createCounter".to_owned(),
        op => format!("urn:wstest/{}", op.name()),
    };
    // One body per connection: the same echo request, or an add to its own counter.
    let bodies: Vec<Bytes> = match cfg.op {
        Operation::Add => {
            let url = format!("http://{}{}", cfg.addr, cfg.path);
            let client = osprey_counter::CounterClient::new(&url, Duration::from_secs(10));
            let mut bodies = Vec::new();
            for _ in 0..cfg.connections {
                let epr = client
                    .create()
                    .await
                    .map_err(|e| format!("creating a counter at {url}: {e}"))?;
                bodies.push(Bytes::from(add_body(version, &epr)?));
            }
            bodies
        }
        op => vec![Bytes::from(request_body(op, version)); cfg.connections],
    };
    let headers: Arc<Vec<(&'static str, HeaderValue)>> = Arc::new(match version {
        SoapVersion::V11 => vec![
            (
                "content-type",
                HeaderValue::from_static("text/xml; charset=utf-8"),
            ),
            (
                "soapaction",
                HeaderValue::from_str(&format!("\"{action}\"")).map_err(|e| e.to_string())?,
            ),
        ],
        SoapVersion::V12 => vec![(
            "content-type",
            HeaderValue::from_str(&format!(
                "application/soap+xml; charset=utf-8; action=\"{action}\""
            ))
            .map_err(|e| e.to_string())?,
        )],
    });
    // Connect first, so that connection set-up is not measured.
    let mut conns = Vec::with_capacity(cfg.connections);
    for _ in 0..cfg.connections {
        conns.push(
            HttpConnection::connect(cfg.addr)
                .await
                .map_err(|e| e.to_string())?,
        );
    }
    let shared = Arc::new(Shared {
        done: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        first_error: std::sync::Mutex::new(None),
    });
    let start = Instant::now();
    let measure_from = start + cfg.warmup;
    let end = measure_from + cfg.duration;
    let mut tasks = Vec::new();
    for (mut conn, body) in conns.into_iter().zip(bodies) {
        let (headers, path, shared) = (headers.clone(), cfg.path.clone(), shared.clone());
        let op = cfg.op;
        tasks.push(tokio::spawn(async move {
            let limits = Limits::default();
            let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
                .expect("valid histogram bounds");
            // For add: the counter's value so far (None after an error: resynchronise).
            let mut last: Option<i32> = Some(0);
            loop {
                let t0 = Instant::now();
                if t0 >= end {
                    break;
                }
                let result = conn.post(&path, &headers, body.clone()).await;
                let t1 = Instant::now();
                let verdict = match result {
                    Ok(resp) if resp.status == 200 && op == Operation::Add => {
                        match check_add(&resp.body, &limits) {
                            Ok(v) if last.is_none_or(|l| v == l + 1) => {
                                last = Some(v);
                                Ok(())
                            }
                            Ok(v) => {
                                let e = format!("add returned {v} after {last:?}");
                                last = None;
                                Err(e)
                            }
                            Err(e) => {
                                last = None;
                                Err(e)
                            }
                        }
                    }
                    Ok(resp) if resp.status == 200 => check_response(op, &resp.body, &limits),
                    Ok(resp) => Err(format!(
                        "HTTP {}: {}",
                        resp.status,
                        String::from_utf8_lossy(&resp.body[..resp.body.len().min(300)])
                    )),
                    Err(e) => Err(e.to_string()),
                };
                if t0 < measure_from {
                    continue;
                }
                match verdict {
                    Ok(()) => {
                        let _ = hist.record((t1 - t0).as_nanos() as u64);
                        shared.done.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => {
                        shared.errors.fetch_add(1, Ordering::Relaxed);
                        if let Ok(mut first) = shared.first_error.lock() {
                            first.get_or_insert(e);
                        }
                        // A broken connection stays broken: reconnect once, then give up.
                        if let Ok(c) = HttpConnection::connect(conn.peer()).await {
                            conn = c;
                        }
                    }
                }
            }
            hist
        }));
    }
    let bar = progress_bar(cfg, shared.clone(), start, measure_from, end);
    let mut total =
        Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("valid histogram bounds");
    for t in tasks {
        if let Ok(h) = t.await {
            total.add(h).map_err(|e| e.to_string())?;
        }
    }
    if let Some(bar) = bar {
        bar.abort();
    }
    let seconds = cfg.duration.as_secs_f64();
    let us = |q: f64| total.value_at_quantile(q) as f64 / 1000.0;
    let requests = shared.done.load(Ordering::Relaxed);
    Ok(WsTestReport {
        operation: cfg.op,
        connections: cfg.connections,
        seconds,
        requests,
        errors: shared.errors.load(Ordering::Relaxed),
        first_error: shared.first_error.lock().ok().and_then(|f| f.clone()),
        requests_per_second: requests as f64 / seconds,
        p50_us: us(0.5),
        p90_us: us(0.9),
        p99_us: us(0.99),
        max_us: total.max() as f64 / 1000.0,
        mean_us: total.mean() / 1000.0,
    })
}

fn progress_bar(
    cfg: &WsTestConfig,
    shared: Arc<Shared>,
    start: Instant,
    measure_from: Instant,
    end: Instant,
) -> Option<tokio::task::JoinHandle<()>> {
    if !cfg.progress {
        return None;
    }
    let total = (end - start).as_millis() as u64;
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {prefix:>8} [{bar:30}] {elapsed_precise}/{duration_precise} {msg}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.set_prefix(cfg.op.name());
    Some(tokio::spawn(async move {
        let mut last = (Instant::now(), 0u64);
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let now = Instant::now();
            let done = shared.done.load(Ordering::Relaxed);
            let rate = (done - last.1) as f64 / (now - last.0).as_secs_f64();
            last = (now, done);
            let phase = if now < measure_from {
                "warm-up"
            } else {
                "measuring"
            };
            bar.set_position((now - start).as_millis().min(total as u128) as u64);
            bar.set_message(format!(
                "{phase} {rate:>8.0} req/s  errors {}",
                shared.errors.load(Ordering::Relaxed)
            ));
            if now >= end {
                bar.finish_and_clear();
                return;
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_requests_match_the_peer_bodies() {
        let body = String::from_utf8(request_body(Operation::Struct, SoapVersion::V11)).unwrap();
        assert!(body.contains(r#"<echoStruct xmlns="urn:wstest"><input><item><varInt>0</varInt><varFloat>0.5</varFloat><varString>abcdefghij</varString></item>"#));
        assert_eq!(body.matches("<item>").count(), 20);
        let list = String::from_utf8(request_body(Operation::List, SoapVersion::V11)).unwrap();
        assert_eq!(list.matches("<next>").count(), 19);
    }

    #[test]
    fn checks_reject_faults_and_wrong_data() {
        let limits = Limits::default();
        let good = request_body(Operation::Struct, SoapVersion::V11);
        // The request itself is not a response.
        assert!(check_response(Operation::Struct, &good, &limits).is_err());
        let response = String::from_utf8(good)
            .unwrap()
            .replace("echoStruct xmlns", "echoStructResponse xmlns")
            .replace("</echoStruct>", "</echoStructResponse>")
            .replace("input>", "output>");
        assert_eq!(
            check_response(Operation::Struct, response.as_bytes(), &limits),
            Ok(())
        );
        let wrong = response.replace("<varInt>7</varInt>", "<varInt>8</varInt>");
        assert!(check_response(Operation::Struct, wrong.as_bytes(), &limits).is_err());
        let mut w = XmlWriter::new();
        write_envelope(
            &mut w,
            SoapVersion::V11,
            &[],
            Body::Fault(&Fault::receiver("boom")),
        );
        assert!(check_response(Operation::Void, w.as_bytes(), &limits)
            .unwrap_err()
            .contains("boom"));
    }
}
