//! Handlers placed on workers: the message context goes over a [`Bus`] as a [`Frame`]
//! (the message bytes as received, never re-serialised, plus the fields a handler may
//! read), and the worker answers with what the handler changed, or a fault.
//!
//! What crosses: the path, `Host`, SOAPAction, peer address, the routed actions, which
//! header blocks are understood, and the properties. What comes back: the understood
//! flags and properties after the handler, the response header blocks it added, or the
//! fault it ended the exchange with. A placed handler's inbound work runs on the worker;
//! its outbound work, if it has any, stays in the container.
//!
//! Three ways to run placed handlers: *sequential* (each a round trip from the
//! container, [`run_placed`]), *chained* (the container sends the context to the first
//! stage; each worker forwards it, changed, to the next; the last answers the container:
//! one hop per handler plus the return, [`run_chain`]), and *parallel* (handlers
//! declared independent are asked at the same time and their changes merged in the
//! configured order, [`run_parallel`]).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use osprey_addressing::MessageHeaders;
use osprey_bus::{Answer, Bus, BusError, Frame, Serving};
use osprey_soap::{write_envelope, Body, Envelope, Fault, SoapVersion};
use osprey_xml::{Limits, XmlWriter};

use crate::{ContainerError, Handler, MessageContext};

/// Where a placed handler runs: a bus subject its workers serve.
#[derive(Clone)]
pub struct Placement {
    /// The bus.
    pub bus: Arc<dyn Bus>,
    /// The subject (and queue group) of the handler's workers.
    pub subject: String,
    /// Time allowed for a worker's answer.
    pub timeout: Duration,
}

impl std::fmt::Debug for Placement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Placement")
            .field("bus", &self.bus.describe())
            .field("subject", &self.subject)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// The subject of handler `name` under `prefix` (`osprey.handler` + `.body-digest`).
pub fn subject(prefix: &str, name: &str) -> String {
    format!("{prefix}.{name}")
}

const F_HANDLER: &str = "handler";
const F_PATH: &str = "path";
const F_HOST: &str = "host";
const F_SOAP_ACTION: &str = "soap-action";
const F_REMOTE: &str = "remote";
const F_ACTION: &str = "action";
const F_OUTPUT_ACTION: &str = "output-action";
const F_UNDERSTOOD: &str = "understood";
const F_PROPERTY: &str = "property";
const F_HEADER: &str = "header";
const F_FAULT: &str = "fault";
const F_NEXT: &str = "next";

fn property_field(name: &str, value: &str) -> Bytes {
    let mut v = Vec::with_capacity(name.len() + 1 + value.len());
    v.extend_from_slice(name.as_bytes());
    v.push(0);
    v.extend_from_slice(value.as_bytes());
    Bytes::from(v)
}

fn read_properties(frame: &Frame) -> Vec<(String, String)> {
    frame
        .all(F_PROPERTY)
        .filter_map(|v| {
            let i = v.iter().position(|&b| b == 0)?;
            Some((
                String::from_utf8_lossy(&v[..i]).into_owned(),
                String::from_utf8_lossy(&v[i + 1..]).into_owned(),
            ))
        })
        .collect()
}

fn understood_field(flags: &[bool]) -> Bytes {
    flags
        .iter()
        .map(|&u| u8::from(u))
        .collect::<Vec<u8>>()
        .into()
}

/// The request frame for `handler` on `ctx`.
pub fn encode_request(handler: &str, ctx: &MessageContext) -> Bytes {
    encode_chain(handler, ctx, &[], &[])
}

/// The frame for a stage of a chain, `handler`, whose workers forward it to the subjects
/// of `next` in order; `headers` are the response headers earlier stages added.
pub fn encode_chain(
    handler: &str,
    ctx: &MessageContext,
    next: &[&str],
    headers: &[Vec<u8>],
) -> Bytes {
    let mut f = Frame::new(ctx.bytes.clone());
    for n in next {
        f.push(F_NEXT, (*n).to_owned());
    }
    for h in headers {
        f.push(F_HEADER, Bytes::copy_from_slice(h));
    }
    f.push(F_HANDLER, handler.to_owned());
    f.push(F_PATH, ctx.path.clone());
    if let Some(h) = &ctx.host {
        f.push(F_HOST, h.clone());
    }
    if let Some(a) = &ctx.soap_action {
        f.push(F_SOAP_ACTION, a.clone());
    }
    if let Some(r) = ctx.remote {
        f.push(F_REMOTE, r.to_string());
    }
    f.push(F_ACTION, ctx.action.clone());
    f.push(F_OUTPUT_ACTION, ctx.output_action.clone());
    f.push(F_UNDERSTOOD, understood_field(&ctx.understood));
    for (n, v) in &ctx.properties {
        f.push(F_PROPERTY, property_field(n, v));
    }
    f.encode()
}

/// Applies a worker's reply to `ctx`: its changes, or the fault it ended with.
///
/// # Errors
/// The handler's fault, or [`ContainerError::HandlerUnavailable`] for a reply that
/// cannot be read.
pub fn apply_reply(
    handler: &str,
    ctx: &mut MessageContext,
    reply: Bytes,
) -> Result<(), ContainerError> {
    let bad = |why: String| ContainerError::HandlerUnavailable {
        handler: handler.to_owned(),
        why,
    };
    let frame = Frame::decode(reply).map_err(|e| bad(e.to_string()))?;
    if frame.get(F_FAULT).is_some() {
        let env = Envelope::decode(&frame.body, &ctx.limits)
            .map_err(|e| bad(format!("its fault could not be read: {e}")))?;
        let fault = Fault::decode(&env, &frame.body, &ctx.limits)
            .map_err(|e| bad(format!("its fault could not be read: {e}")))?
            .ok_or_else(|| bad("its fault could not be read".into()))?;
        return Err(ContainerError::from(fault));
    }
    if let Some(u) = frame.get(F_UNDERSTOOD) {
        for (flag, &b) in ctx.understood.iter_mut().zip(u.iter()) {
            *flag |= b != 0;
        }
    }
    // Merged, not replaced: handlers asked in parallel each report their own.
    for (n, v) in read_properties(&frame) {
        ctx.set_property(&n, v);
    }
    for h in frame.all(F_HEADER) {
        ctx.response_headers.push(h.to_vec());
    }
    Ok(())
}

/// Runs `handler` inbound on its workers.
///
/// # Errors
/// The handler's fault; [`ContainerError::HandlerUnavailable`] when no worker answered
/// (after one more try on another worker, for an idempotent handler).
pub async fn run_placed(
    handler: &dyn Handler,
    placement: &Placement,
    ctx: &mut MessageContext,
) -> Result<(), ContainerError> {
    let request = encode_request(handler.name(), ctx);
    let reply = ask(
        handler.name(),
        placement,
        request,
        placement.timeout,
        handler.idempotent(),
    )
    .await?;
    apply_reply(handler.name(), ctx, reply)
}

/// Runs placed handlers as one chain: one hop per handler, and one answer.
///
/// # Errors
/// The fault of the handler that ended the chain; [`ContainerError::HandlerUnavailable`]
/// naming the chain when no answer came (the time allowed is the sum of the stages').
pub async fn run_chain(
    stages: &[(&dyn Handler, &Placement)],
    ctx: &mut MessageContext,
) -> Result<(), ContainerError> {
    let Some(((first, placement), rest)) = stages.split_first() else {
        return Ok(());
    };
    let next: Vec<&str> = rest.iter().map(|(_, p)| p.subject.as_str()).collect();
    let request = encode_chain(first.name(), ctx, &next, &[]);
    let timeout = stages.iter().map(|(_, p)| p.timeout).sum();
    let name = stages
        .iter()
        .map(|(h, _)| h.name())
        .collect::<Vec<_>>()
        .join(" -> ");
    let idempotent = stages.iter().all(|(h, _)| h.idempotent());
    let reply = ask(&name, placement, request, timeout, idempotent).await?;
    apply_reply(&name, ctx, reply)
}

/// Runs placed handlers declared independent at the same time; their changes are
/// applied in the given order, and the first fault in that order wins.
///
/// # Errors
/// As [`run_placed`].
pub async fn run_parallel(
    stages: &[(&dyn Handler, &Placement)],
    ctx: &mut MessageContext,
) -> Result<(), ContainerError> {
    let asks: Vec<_> = stages
        .iter()
        .map(|(h, p)| {
            let request = encode_request(h.name(), ctx);
            ask(h.name(), p, request, p.timeout, h.idempotent())
        })
        .collect();
    let replies = futures_util::future::join_all(asks).await;
    for ((h, _), reply) in stages.iter().zip(replies) {
        apply_reply(h.name(), ctx, reply?)?;
    }
    Ok(())
}

/// Asks a worker of `placement` (once more on failure when `idempotent`).
async fn ask(
    name: &str,
    placement: &Placement,
    request: Bytes,
    timeout: Duration,
    idempotent: bool,
) -> Result<Bytes, ContainerError> {
    let attempts = if idempotent { 2 } else { 1 };
    let mut last = None;
    for _ in 0..attempts {
        match placement
            .bus
            .request(&placement.subject, request.clone(), timeout)
            .await
        {
            Ok(reply) => return Ok(reply),
            Err(e) => {
                // A bus that is down will not be back within this request.
                let retry = !matches!(e, BusError::Unavailable(_));
                last = Some(e);
                if !retry {
                    break;
                }
            }
        }
    }
    Err(ContainerError::HandlerUnavailable {
        handler: name.to_owned(),
        why: last.map_or_else(|| "no attempt".into(), |e| e.to_string()),
    })
}

/// Worker side: answers one request frame by running `handler` inbound: with the
/// changes (or the fault) to the requester, or, inside a chain, by forwarding the changed
/// context to the next stage.
pub fn answer(handler: &dyn Handler, limits: &Arc<Limits>, request: Bytes) -> Answer {
    let name = handler.name();
    let frame = match Frame::decode(request) {
        Ok(f) => f,
        Err(e) => {
            let e = ContainerError::from(Fault::receiver(e.to_string()));
            return Answer::Reply(fault_reply(SoapVersion::V12, &e));
        }
    };
    let mut ctx = match context_from(&frame, limits) {
        Ok(c) => c,
        Err(e) => return Answer::Reply(fault_reply(SoapVersion::V12, &e)),
    };
    let result = catch_unwind(AssertUnwindSafe(|| handler.inbound(&mut ctx)))
        .unwrap_or_else(|_| Err(ContainerError::Panicked(format!("handler {name}"))));
    if let Err(e) = result {
        // A fault ends a chain: it goes straight back to the requester.
        return Answer::Reply(fault_reply(ctx.version(), &e));
    }
    let next: Vec<String> = frame
        .all(F_NEXT)
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect();
    match next.split_first() {
        // The last stage (or the only one): the changes go back to the requester.
        None => {
            let mut out = Frame::default();
            out.push(F_UNDERSTOOD, understood_field(&ctx.understood));
            for (n, v) in &ctx.properties {
                out.push(F_PROPERTY, property_field(n, v));
            }
            for h in &ctx.response_headers {
                out.push(F_HEADER, Bytes::copy_from_slice(h));
            }
            Answer::Reply(out.encode())
        }
        Some((subject, rest)) => {
            let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
            Answer::Forward {
                subject: subject.clone(),
                payload: encode_chain(name, &ctx, &rest, &ctx.response_headers),
            }
        }
    }
}

/// The message context a request frame describes.
fn context_from(frame: &Frame, limits: &Arc<Limits>) -> Result<MessageContext, ContainerError> {
    let bytes = frame.body.clone();
    let envelope = Envelope::decode(&bytes, limits)?;
    let addressing = MessageHeaders::decode(&envelope, &bytes, limits)?;
    let text = |n: &str| frame.text(n).map(str::to_owned);
    let mut understood = vec![false; envelope.headers.len()];
    // Inside a chain, the response headers earlier stages added travel along.
    let response_headers = frame.all(F_HEADER).map(|h| h.to_vec()).collect();
    if let Some(u) = frame.get(F_UNDERSTOOD) {
        for (flag, &b) in understood.iter_mut().zip(u.iter()) {
            *flag = b != 0;
        }
    }
    Ok(MessageContext {
        understood,
        bytes,
        envelope,
        path: text(F_PATH).unwrap_or_default(),
        host: text(F_HOST),
        soap_action: text(F_SOAP_ACTION),
        addressing,
        response_headers,
        action: text(F_ACTION).unwrap_or_default(),
        output_action: text(F_OUTPUT_ACTION).unwrap_or_default(),
        remote: frame.text(F_REMOTE).and_then(|r| r.parse().ok()),
        limits: limits.clone(),
        properties: read_properties(frame),
    })
}

fn fault_reply(version: SoapVersion, e: &ContainerError) -> Bytes {
    let fault = Fault::from(e);
    let mut w = XmlWriter::with_capacity(512);
    write_envelope(&mut w, version, &[], Body::Fault(&fault));
    let mut f = Frame::new(Bytes::from(w.into_bytes()));
    f.push(F_FAULT, Bytes::new());
    f.encode()
}

/// Serves `handler` on `bus` (subject `subject`, its queue group) until the returned
/// [`Serving`] is drained or dropped. Each request runs as a task of the
/// current runtime.
///
/// # Errors
/// [`BusError`] when the subscription cannot be made.
pub async fn serve_handler(
    bus: &dyn Bus,
    subject: &str,
    handler: Arc<dyn Handler>,
    limits: Arc<Limits>,
) -> Result<Serving, BusError> {
    let responder: osprey_bus::Responder = Arc::new(move |request: Bytes| {
        let (handler, limits) = (handler.clone(), limits.clone());
        Box::pin(async move { answer(&*handler, &limits, request) })
    });
    bus.serve(subject, subject, responder).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Outcome, Phase};

    /// Marks the first header understood, sets a property and adds a response header.
    struct Marks;
    impl Handler for Marks {
        fn name(&self) -> &str {
            "marks"
        }
        fn phase(&self) -> Phase {
            Phase::Security
        }
        fn inbound(&self, ctx: &mut MessageContext) -> Result<(), ContainerError> {
            ctx.understood[0] = true;
            let seen = ctx.property("seen").unwrap_or_default().to_owned();
            ctx.set_property("seen", format!("{seen}+marks@{}", ctx.path));
            ctx.response_headers
                .push(b"<h:X xmlns:h=\"urn:h\"/>".to_vec());
            Ok(())
        }
    }

    struct Panics;
    impl Handler for Panics {
        fn name(&self) -> &str {
            "panics"
        }
        fn phase(&self) -> Phase {
            Phase::Security
        }
        fn inbound(&self, _: &mut MessageContext) -> Result<(), ContainerError> {
            panic!("a bug in a handler")
        }
        fn outbound(&self, _: &mut MessageContext, _: &mut Outcome) {}
    }

    fn replied(a: Answer) -> Bytes {
        match a {
            Answer::Reply(b) => b,
            Answer::Forward { subject, .. } => panic!("forwarded to {subject}"),
        }
    }

    #[test]
    fn a_chain_stage_forwards_the_changed_context_and_the_last_replies() {
        let ctx = context();
        let limits = ctx.limits.clone();
        let first = answer(&Marks, &limits, encode_chain("marks", &ctx, &["s2"], &[]));
        let Answer::Forward { subject, payload } = first else {
            panic!("the first stage replied")
        };
        assert_eq!(subject, "s2");
        let last = replied(answer(&Marks, &limits, payload));
        let mut ctx = context();
        apply_reply("chain", &mut ctx, last).unwrap();
        assert_eq!(ctx.property("seen"), Some("start+marks@/svc+marks@/svc"));
        // Each stage's header, once.
        assert_eq!(ctx.response_headers.len(), 2);
    }

    const MSG: &[u8] = br#"<e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope"><e:Header><h:K xmlns:h="urn:h" e:mustUnderstand="true">1</h:K></e:Header><e:Body><p xmlns="urn:p"/></e:Body></e:Envelope>"#;

    fn context() -> MessageContext {
        let limits = Arc::new(Limits::default());
        let bytes = Bytes::from_static(MSG);
        let envelope = Envelope::decode(&bytes, &limits).unwrap();
        MessageContext {
            understood: vec![false; envelope.headers.len()],
            bytes,
            envelope,
            path: "/svc".into(),
            host: None,
            soap_action: None,
            addressing: None,
            response_headers: Vec::new(),
            action: "urn:a".into(),
            output_action: String::new(),
            remote: None,
            limits,
            properties: vec![("seen".into(), "start".into())],
        }
    }

    #[test]
    fn a_worker_answers_with_the_changes_the_handler_made() {
        let mut ctx = context();
        let reply = replied(answer(
            &Marks,
            &ctx.limits.clone(),
            encode_request("marks", &ctx),
        ));
        apply_reply("marks", &mut ctx, reply).unwrap();
        assert_eq!(ctx.understood, [true]);
        assert_eq!(ctx.property("seen"), Some("start+marks@/svc"));
        assert_eq!(ctx.response_headers, [b"<h:X xmlns:h=\"urn:h\"/>".to_vec()]);
    }

    #[test]
    fn a_panicking_handler_faults_that_request_only() {
        let mut ctx = context();
        let reply = replied(answer(
            &Panics,
            &ctx.limits.clone(),
            encode_request("panics", &ctx),
        ));
        let e = apply_reply("panics", &mut ctx, reply).unwrap_err();
        let fault = Fault::from(&e);
        assert!(fault.reason.contains("handler panics"), "{}", fault.reason);
        // The same worker answers the next request.
        let reply = replied(answer(
            &Marks,
            &ctx.limits.clone(),
            encode_request("marks", &ctx),
        ));
        assert!(apply_reply("marks", &mut ctx, reply).is_ok());
    }

    #[test]
    fn a_garbled_reply_is_a_handler_fault_not_a_panic() {
        let mut ctx = context();
        let e = apply_reply("x", &mut ctx, Bytes::from_static(b"\xff\xff")).unwrap_err();
        assert!(matches!(e, ContainerError::HandlerUnavailable { .. }));
    }
}
