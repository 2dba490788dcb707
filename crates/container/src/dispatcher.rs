//! The dispatcher: from an inbound transport message to an outbound one.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use osprey_addressing::{new_message_id, MessageHeaders, WSA_NS};
use osprey_bus::Bus;
use osprey_soap::{action_parameter, write_envelope, Body, Envelope, Fault, SoapVersion};
use osprey_transport::{BodyError, InboundMessage, MessageService, Method, OutboundMessage};
use osprey_xml::{Limits, XmlWriter};

use crate::{ContainerError, MessageContext, OperationFuture, ServiceRegistry};

/// `wsa:Action` of faults (WS-Addressing SOAP Binding §6).
const FAULT_ACTION: &str = "http://www.w3.org/2005/08/addressing/soap/fault";

/// Turns requests into responses: the container's [`MessageService`].
pub struct Dispatcher {
    registry: ServiceRegistry,
    limits: Arc<Limits>,
    /// What must live as long as the dispatcher (in-process handler workers).
    held: std::sync::Mutex<Vec<Box<dyn std::any::Any + Send>>>,
}

impl Dispatcher {
    /// A dispatcher over `registry` reading messages under `limits`.
    pub fn new(registry: ServiceRegistry, limits: Limits) -> Self {
        Dispatcher {
            registry,
            limits: Arc::new(limits),
            held: std::sync::Mutex::default(),
        }
    }

    /// The buses placed handlers use, each once: every thread that serves requests
    /// attaches itself to them at start-up ([`Bus::attach_thread`]), so that its
    /// requests' handler calls do not cross threads.
    pub fn buses(&self) -> Vec<Arc<dyn Bus>> {
        let mut buses: Vec<Arc<dyn Bus>> = Vec::new();
        for bus in self
            .registry
            .entries()
            .iter()
            .flat_map(|e| e.pipeline.buses())
        {
            if !buses.iter().any(|b| Arc::ptr_eq(b, bus)) {
                buses.push(bus.clone());
            }
        }
        buses
    }

    /// Keeps `thing` alive as long as the dispatcher (the in-process workers of placed
    /// handlers, say).
    pub fn hold(&self, thing: impl std::any::Any + Send) {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(Box::new(thing));
    }

    /// The parse limits in force.
    pub fn limits(&self) -> &Arc<Limits> {
        &self.limits
    }

    /// The registry.
    pub fn registry(&self) -> &ServiceRegistry {
        &self.registry
    }

    async fn post(&self, msg: InboundMessage) -> OutboundMessage {
        let hint = msg
            .content_type
            .as_deref()
            .and_then(SoapVersion::from_content_type)
            .unwrap_or(SoapVersion::V11);
        let bytes = match msg.body.collect().await {
            Ok(b) => b,
            Err(e) => {
                let status = match e {
                    BodyError::TooLarge { .. } => 413,
                    BodyError::Timeout(_) => 408,
                    _ => 400,
                };
                return fault_response(hint, Some(status), &[], &ContainerError::Body(e));
            }
        };
        let envelope = match Envelope::decode(&bytes, &self.limits) {
            Ok(env) => env,
            Err(e) => return fault_response(hint, None, &[], &ContainerError::from(e)),
        };
        let version = envelope.version;
        let soap_action = match version {
            SoapVersion::V11 => msg.soap_action,
            SoapVersion::V12 => msg
                .content_type
                .as_deref()
                .and_then(action_parameter)
                .map(str::to_owned)
                .or(msg.soap_action),
        };
        let mut ctx = MessageContext {
            understood: vec![false; envelope.headers.len()],
            bytes,
            envelope,
            path: msg.path,
            host: msg.host,
            soap_action,
            addressing: None,
            response_headers: Vec::new(),
            action: String::new(),
            output_action: String::new(),
            remote: msg.remote,
            limits: self.limits.clone(),
            properties: Vec::new(),
        };
        let outcome = self.exchange(&mut ctx).await;
        let headers: Vec<&[u8]> = ctx.response_headers.iter().map(Vec::as_slice).collect();
        match outcome {
            Ok(payload) => {
                let mut w = XmlWriter::with_capacity(payload.len() + 512);
                write_envelope(&mut w, version, &headers, Body::Payload(&payload));
                OutboundMessage::full(200, version.content_type(), w.into_bytes())
            }
            Err(e) => fault_response(version, None, &headers, &e),
        }
    }

    /// Everything between a decoded envelope and an encoded payload.
    async fn exchange(&self, ctx: &mut MessageContext) -> Result<Vec<u8>, ContainerError> {
        let addressing = MessageHeaders::decode(&ctx.envelope, &ctx.bytes, &ctx.limits);
        for (seen, block) in ctx.understood.iter_mut().zip(&ctx.envelope.headers) {
            *seen = block.name.ns() == WSA_NS
                && osprey_addressing::UNDERSTOOD.contains(&block.name.local());
        }
        ctx.addressing = addressing?;
        let wsa_action = ctx.addressing.as_ref().and_then(|a| a.action.as_deref());
        let payload = ctx.envelope.payload.as_ref().map(|p| &p.name);
        let route =
            match self
                .registry
                .route(&ctx.path, wsa_action, ctx.soap_action.as_deref(), payload)
            {
                Ok(r) => r,
                Err(e) => {
                    self.reply_headers(ctx, Some(FAULT_ACTION));
                    return Err(e);
                }
            };
        let entry = self.registry.entry(route.service);
        let op = &entry.service.definition().operations[route.operation];
        ctx.action.clone_from(&op.action);
        ctx.output_action.clone_from(&op.output_action);

        // SOAP 1.2 Part 1 §5.2.3: mustUnderstand blocks targeted at us must be understood
        // before anything is processed.
        let not_understood: Vec<_> = ctx
            .envelope
            .headers
            .iter()
            .zip(&ctx.understood)
            .filter(|(b, seen)| {
                b.must_understand
                    && b.targets_us()
                    && !**seen
                    && !entry.pipeline.understands(&b.name)
            })
            .map(|(b, _)| b.name.clone())
            .collect();
        if !not_understood.is_empty() {
            self.reply_headers(ctx, Some(FAULT_ACTION));
            return Err(ContainerError::NotUnderstood(not_understood));
        }

        let (ran, inbound) = entry.pipeline.inbound(ctx).await;
        let mut outcome = match inbound {
            Ok(()) => match catch_unwind(AssertUnwindSafe(|| {
                entry.service.invoke(route.operation, ctx)
            })) {
                Ok(Ok(fut)) => Guarded(fut).await,
                Ok(Err(e)) => Err(e),
                Err(_) => Err(ContainerError::Panicked(format!("operation {}", op.name))),
            },
            Err(e) => Err(e),
        };
        entry.pipeline.outbound(ran, ctx, &mut outcome);
        let fault_action = match &outcome {
            Ok(_) => None,
            // A spec that defines its faults may name their action (WSRF does).
            Err(ContainerError::Fault(f)) => Some(f.action.as_deref().unwrap_or(FAULT_ACTION)),
            Err(_) => Some(FAULT_ACTION),
        };
        self.reply_headers(ctx, fault_action);
        outcome
    }

    /// Adds the WS-Addressing headers of the reply, when the request had any: the
    /// operation's response action, or `fault_action` for a fault.
    fn reply_headers(&self, ctx: &mut MessageContext, fault_action: Option<&str>) {
        let Some(a) = &ctx.addressing else { return };
        let action = fault_action.unwrap_or(&ctx.output_action);
        match a.reply_headers(action, &new_message_id(), fault_action.is_some()) {
            Ok(h) => ctx.response_headers.push(h),
            Err(e) => tracing::warn!(error = %e, "reference parameters could not be echoed"),
        }
    }

    fn get(&self, msg: &InboundMessage) -> OutboundMessage {
        let wants_wsdl = msg
            .query
            .as_deref()
            .is_some_and(|q| q.eq_ignore_ascii_case("wsdl"));
        if let (true, Some(i)) = (wants_wsdl, self.registry.by_path(&msg.path)) {
            let e = self.registry.entry(i);
            let host = msg.host.as_deref().unwrap_or("127.0.0.1");
            let doc = e.wsdl(&format!("http://{host}{}", e.path));
            return OutboundMessage::full(200, "text/xml; charset=utf-8", doc);
        }
        if msg.path == "/" {
            let mut page = String::from("Osprey services:\n");
            for e in self.registry.entries() {
                page.push_str(&format!(
                    "  {}  {}  (WSDL: {}?wsdl)\n",
                    e.service.definition().name,
                    e.path,
                    e.path
                ));
            }
            return OutboundMessage::full(200, "text/plain; charset=utf-8", page);
        }
        OutboundMessage::full(
            404,
            "text/plain; charset=utf-8",
            format!(
                "nothing at {} (try {}?wsdl on a service path, or /)\n",
                msg.path, msg.path
            ),
        )
    }
}

impl MessageService for Dispatcher {
    async fn handle(&self, msg: InboundMessage) -> OutboundMessage {
        match msg.method {
            Method::Post => self.post(msg).await,
            Method::Get => self.get(&msg),
            Method::Other(_) => OutboundMessage::full(
                405,
                "text/plain; charset=utf-8",
                "use POST for SOAP messages, GET for ?wsdl\n",
            ),
        }
    }
}

/// The one place errors become responses.
fn fault_response(
    version: SoapVersion,
    status: Option<u16>,
    headers: &[&[u8]],
    e: &ContainerError,
) -> OutboundMessage {
    let fault = Fault::from(e);
    tracing::debug!(%fault, "fault");
    let mut w = XmlWriter::with_capacity(1024);
    write_envelope(&mut w, version, headers, Body::Fault(&fault));
    OutboundMessage::full(
        status.unwrap_or_else(|| fault.http_status(version)),
        version.content_type(),
        w.into_bytes(),
    )
}

/// Polls an operation, turning a panic into [`ContainerError::Panicked`] for this
/// request only.
struct Guarded(OperationFuture);

impl Future for Guarded {
    type Output = Result<Vec<u8>, ContainerError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match catch_unwind(AssertUnwindSafe(|| self.0.as_mut().poll(cx))) {
            Ok(Poll::Ready(r)) => Poll::Ready(r.map_err(ContainerError::from)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(_) => Poll::Ready(Err(ContainerError::Panicked("an operation".into()))),
        }
    }
}
