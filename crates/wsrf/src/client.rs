//! The client side: typed calls to WS-Resources (sending an EPR's reference parameters
//! as SOAP headers), and a notification consumer a client embeds.
//!
//! The consumer listens on an ephemeral loopback port from the moment it is created, so
//! the first subscription costs no start-up.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use osprey_addressing::{new_message_id, request_headers, EndpointReference};
use osprey_binding::{decode_element_from, encode_element_into, XmlElement};
use osprey_soap::{write_envelope, Body, Envelope, Fault, SoapVersion};
use osprey_transport::http::{HttpClient, HttpConfig, HttpServer};
use osprey_transport::{InboundMessage, MessageService, OutboundMessage};
use osprey_xml::{Limits, QName, XmlWriter};
use thiserror::Error;
use tokio::sync::{mpsc, oneshot};

use crate::doc::Element;
use crate::messages::*;
use crate::ns::{self, action};

/// Why a call did not return a response.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The exchange failed (connection, timeout, HTTP error without a SOAP fault).
    #[error("transport: {0}")]
    Transport(String),
    /// The service answered with a SOAP fault.
    #[error("fault: {}", .0.reason)]
    Fault(Box<Fault>),
    /// The response could not be read as the expected element.
    #[error("unreadable response: {0}")]
    Response(String),
}

/// A request built and ready to send.
#[derive(Debug, Clone)]
pub struct Prepared {
    address: String,
    content_type: String,
    soap_action: Option<String>,
    envelope: Bytes,
}

impl ClientError {
    /// For a fault: the name of the first element of its detail, which for WSRF and
    /// WS-BaseNotification faults is the spec's fault element (`wsrf-r:ResourceUnknownFault`).
    pub fn fault_element(&self) -> Option<QName> {
        let ClientError::Fault(f) = self else {
            return None;
        };
        let xml = f.detail.as_ref()?.as_str();
        // The detail may hold several elements: read them under one root.
        let doc = Element::parse(format!("<d>{xml}</d>").as_bytes(), &Limits::default()).ok()?;
        let name = doc.elements().next().map(|e| e.name.clone());
        name
    }
}

/// A client for WS-Resources; cheap to clone (connections are pooled).
#[derive(Clone)]
pub struct WsrfClient {
    http: HttpClient,
    version: SoapVersion,
    limits: Arc<Limits>,
}

impl WsrfClient {
    /// A SOAP 1.1 client whose calls time out after `timeout`.
    pub fn new(timeout: Duration) -> Self {
        WsrfClient {
            http: HttpClient::new(timeout),
            version: SoapVersion::V11,
            limits: Arc::new(Limits::default()),
        }
    }

    /// Starts opening a connection to `url`'s host, for the first call to take (see
    /// [`HttpClient::preconnect`]).
    pub fn preconnect(&self, url: &str) {
        self.http.preconnect(url);
    }

    /// The same client speaking SOAP 1.2.
    #[must_use]
    pub fn soap12(mut self) -> Self {
        self.version = SoapVersion::V12;
        self
    }

    /// Sends `req` to the resource `epr` with `action`, and reads a `Resp`.
    ///
    /// # Errors
    /// [`ClientError`]: transport failure, a fault, or an unexpected response.
    pub async fn call<Req: XmlElement, Resp: XmlElement>(
        &self,
        epr: &EndpointReference,
        action: &str,
        req: &Req,
    ) -> Result<Resp, ClientError> {
        let prepared = self.prepare(epr, action, req)?;
        self.send(&prepared).await
    }

    /// Builds the request message (envelope, addressing headers and the EPR's reference
    /// parameters) without sending it: what a client prepares before a call.
    ///
    /// # Errors
    /// [`ClientError::Transport`] when a reference parameter is not well-formed XML.
    pub fn prepare<Req: XmlElement>(
        &self,
        epr: &EndpointReference,
        action: &str,
        req: &Req,
    ) -> Result<Prepared, ClientError> {
        let headers = request_headers(epr, action, &new_message_id())
            .map_err(|e| ClientError::Transport(format!("reference parameters: {e}")))?;
        let mut payload = XmlWriter::with_capacity(512);
        encode_element_into(req, &mut payload);
        let mut w = XmlWriter::with_capacity(1024);
        write_envelope(
            &mut w,
            self.version,
            &[headers.as_slice()],
            Body::Payload(payload.as_bytes()),
        );
        let quoted = format!("\"{action}\"");
        let (content_type, soap_action) = match self.version {
            SoapVersion::V11 => ("text/xml; charset=utf-8".to_owned(), Some(quoted)),
            SoapVersion::V12 => (
                format!("application/soap+xml; charset=utf-8; action={quoted}"),
                None,
            ),
        };
        Ok(Prepared {
            address: epr.address.clone(),
            content_type,
            soap_action,
            envelope: Bytes::from(w.into_bytes()),
        })
    }

    /// Sends a prepared request and reads a `Resp`.
    ///
    /// # Errors
    /// [`ClientError`]: transport failure, a fault, or an unexpected response.
    pub async fn send<Resp: XmlElement>(&self, p: &Prepared) -> Result<Resp, ClientError> {
        let http_headers: Vec<(&str, &str)> = p
            .soap_action
            .as_deref()
            .map(|a| vec![("SOAPAction", a)])
            .unwrap_or_default();
        let resp = self
            .http
            .post(
                &p.address,
                &p.content_type,
                &http_headers,
                p.envelope.clone(),
            )
            .await
            .map_err(|e| ClientError::Transport(e.to_string()))?;
        let env = Envelope::decode(&resp.body, &self.limits).map_err(|e| {
            ClientError::Transport(format!("HTTP {} without a SOAP envelope: {e}", resp.status))
        })?;
        if let Some(f) = Fault::decode(&env, &resp.body, &self.limits)
            .map_err(|e| ClientError::Response(e.to_string()))?
        {
            return Err(ClientError::Fault(Box::new(f)));
        }
        let mut r = env
            .payload_reader(&resp.body, &self.limits)
            .map_err(|e| ClientError::Response(e.to_string()))?
            .ok_or_else(|| ClientError::Response("the response body is empty".into()))?;
        decode_element_from::<Resp>(&mut r).map_err(|e| ClientError::Response(e.to_string()))
    }

    /// The Subscribe request for `consumer` to `topic` (Simple dialect) of `producer`,
    /// prepared (see [`Self::prepare`]); send it with [`Self::send`].
    ///
    /// # Errors
    /// As [`Self::prepare`].
    pub fn prepare_subscribe(
        &self,
        producer: &EndpointReference,
        consumer: &EndpointReference,
        topic: &QName,
    ) -> Result<Prepared, ClientError> {
        self.prepare_subscribe_filtered(producer, consumer, topic, None)
    }

    /// As [`Self::prepare_subscribe`], with a MessageContent filter: an XPath 1.0
    /// expression over the notification message, and the (prefix, URI) bindings of its
    /// prefixes. Only messages for which it is true are delivered.
    ///
    /// # Errors
    /// As [`Self::prepare`].
    pub fn prepare_subscribe_filtered(
        &self,
        producer: &EndpointReference,
        consumer: &EndpointReference,
        topic: &QName,
        filter: Option<(&str, &[(&str, &str)])>,
    ) -> Result<Prepared, ClientError> {
        let mut scope = osprey_xml::Scope::default();
        scope.bind("t", topic.ns());
        let req = Subscribe {
            consumer: consumer.clone(),
            topic: Some(Expression {
                dialect: ns::TOPIC_SIMPLE.into(),
                text: format!("t:{}", topic.local()),
                scope,
            }),
            message_content: filter.map(|(xpath, namespaces)| {
                let mut scope = osprey_xml::Scope::default();
                for (p, u) in namespaces {
                    scope.bind(p, u);
                }
                Expression {
                    dialect: ns::XPATH_DIALECT.into(),
                    text: xpath.into(),
                    scope,
                }
            }),
            initial_termination_time: None,
            unknown_filters: Vec::new(),
        };
        self.prepare(producer, action::SUBSCRIBE, &req)
    }

    /// GetResourceProperty: the values of `property`.
    ///
    /// # Errors
    /// As [`Self::call`].
    pub async fn get_property(
        &self,
        epr: &EndpointReference,
        property: &QName,
    ) -> Result<Vec<Element>, ClientError> {
        let r: GetResourcePropertyResponse = self
            .call(
                epr,
                action::GET_RP,
                &GetResourceProperty {
                    property: Ok(property.clone()),
                },
            )
            .await?;
        Ok(r.elements)
    }

    /// GetResourcePropertyDocument: the whole resource property document.
    ///
    /// # Errors
    /// As [`Self::call`], or a response without exactly one document element.
    pub async fn get_document(&self, epr: &EndpointReference) -> Result<Element, ClientError> {
        let r: GetResourcePropertyDocumentResponse = self
            .call(epr, action::GET_RP_DOCUMENT, &GetResourcePropertyDocument)
            .await?;
        let mut elements = r.elements;
        match elements.len() {
            1 => Ok(elements.remove(0)),
            n => Err(ClientError::Response(format!(
                "expected one property document, got {n} elements"
            ))),
        }
    }

    /// QueryResourceProperties with an XPath 1.0 expression whose prefixes are bound by
    /// `namespaces` (prefix, URI).
    ///
    /// # Errors
    /// As [`Self::call`].
    pub async fn query(
        &self,
        epr: &EndpointReference,
        xpath: &str,
        namespaces: &[(&str, &str)],
    ) -> Result<QueryResourcePropertiesResponse, ClientError> {
        let mut scope = osprey_xml::Scope::default();
        for (p, u) in namespaces {
            scope.bind(p, u);
        }
        self.call(
            epr,
            action::QUERY_RP,
            &QueryResourceProperties {
                query: Expression {
                    dialect: ns::XPATH_DIALECT.into(),
                    text: xpath.into(),
                    scope,
                },
            },
        )
        .await
    }

    /// Destroy.
    ///
    /// # Errors
    /// As [`Self::call`].
    pub async fn destroy(&self, epr: &EndpointReference) -> Result<(), ClientError> {
        let _: DestroyResponse = self.call(epr, action::DESTROY, &Destroy).await?;
        Ok(())
    }

    /// SetTerminationTime.
    ///
    /// # Errors
    /// As [`Self::call`].
    pub async fn set_termination_time(
        &self,
        epr: &EndpointReference,
        requested: TerminationRequest,
    ) -> Result<SetTerminationTimeResponse, ClientError> {
        self.call(
            epr,
            action::SET_TERMINATION_TIME,
            &SetTerminationTime { requested },
        )
        .await
    }

    /// Subscribes `consumer` to `topic` (Simple dialect) of the resource `producer`.
    ///
    /// # Errors
    /// As [`Self::call`].
    pub async fn subscribe(
        &self,
        producer: &EndpointReference,
        consumer: &EndpointReference,
        topic: &QName,
    ) -> Result<SubscribeResponse, ClientError> {
        let prepared = self.prepare_subscribe(producer, consumer, topic)?;
        self.send(&prepared).await
    }

    /// Unsubscribe.
    ///
    /// # Errors
    /// As [`Self::call`].
    pub async fn unsubscribe(&self, subscription: &EndpointReference) -> Result<(), ClientError> {
        let _: UnsubscribeResponse = self
            .call(subscription, action::UNSUBSCRIBE, &Unsubscribe)
            .await?;
        Ok(())
    }
}

impl std::fmt::Debug for WsrfClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsrfClient")
            .field("version", &self.version)
            .finish()
    }
}

impl WsrfClient {
    /// PauseSubscription.
    ///
    /// # Errors
    /// As [`Self::call`].
    pub async fn pause(&self, subscription: &EndpointReference) -> Result<(), ClientError> {
        let _: PauseSubscriptionResponse = self
            .call(subscription, action::PAUSE, &PauseSubscription)
            .await?;
        Ok(())
    }

    /// ResumeSubscription.
    ///
    /// # Errors
    /// As [`Self::call`].
    pub async fn resume(&self, subscription: &EndpointReference) -> Result<(), ClientError> {
        let _: ResumeSubscriptionResponse = self
            .call(subscription, action::RESUME, &ResumeSubscription)
            .await?;
        Ok(())
    }
}

/// A notification as a consumer received it.
#[derive(Debug, Clone, PartialEq)]
pub struct Received {
    /// The message.
    pub message: NotificationMessage,
    /// When it arrived.
    pub at: std::time::Instant,
}

/// A notification consumer listening on an ephemeral loopback port.
pub struct NotificationConsumer {
    addr: SocketAddr,
    rx: mpsc::UnboundedReceiver<Received>,
    _stop: oneshot::Sender<()>,
}

struct ConsumerService {
    tx: mpsc::UnboundedSender<Received>,
    limits: Limits,
}

impl MessageService for ConsumerService {
    async fn handle(&self, msg: InboundMessage) -> OutboundMessage {
        let at = std::time::Instant::now();
        let Ok(body) = msg.body.collect().await else {
            return OutboundMessage::full(400, "text/plain", "unreadable body");
        };
        let notify = Envelope::decode(&body, &self.limits).ok().and_then(|env| {
            let mut r = env.payload_reader(&body, &self.limits).ok().flatten()?;
            decode_element_from::<Notify>(&mut r).ok()
        });
        match notify {
            Some(n) => {
                for message in n.messages {
                    let _ = self.tx.send(Received { message, at });
                }
                // A one-way message: accepted, no envelope.
                OutboundMessage::full(202, "text/plain", "")
            }
            None => OutboundMessage::full(400, "text/plain", "not a wsnt:Notify"),
        }
    }
}

impl NotificationConsumer {
    /// Starts listening on 127.0.0.1 (a free port) now, served on the caller's runtime (no
    /// thread of its own to start: a connection that arrives before the runtime first
    /// polls the consumer waits in the listener's backlog).
    ///
    /// # Errors
    /// When no loopback port can be bound.
    pub async fn start() -> std::io::Result<Self> {
        let server =
            HttpServer::bind(SocketAddr::from(([127, 0, 0, 1], 0)), HttpConfig::default()).await?;
        let addr = server.local_addr()?;
        let (tx, rx) = mpsc::unbounded_channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let service = Arc::new(ConsumerService {
            tx,
            limits: Limits::default(),
        });
        tokio::spawn(server.serve_inline(service, async {
            let _ = stopped.await;
        }));
        Ok(NotificationConsumer {
            addr,
            rx,
            _stop: stop,
        })
    }

    /// The consumer's endpoint reference, for Subscribe.
    pub fn epr(&self) -> EndpointReference {
        EndpointReference::new(format!("http://{}/consumer", self.addr))
    }

    /// The next notification, waiting at most `timeout`.
    pub async fn next(&mut self, timeout: Duration) -> Option<Received> {
        tokio::time::timeout(timeout, self.rx.recv())
            .await
            .ok()
            .flatten()
    }
}

impl std::fmt::Debug for NotificationConsumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NotificationConsumer")
            .field("addr", &self.addr)
            .finish()
    }
}
