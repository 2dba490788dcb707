//! The Counter service, after the Globus Toolkit 4 WSRF example: `createCounter`
//! returns the endpoint reference of a new counter resource; `add(int)` adds to it and
//! returns the new value; its resource property document holds `Value` (with
//! WS-ResourceLifetime's `CurrentTime` and `TerminationTime`); Destroy,
//! SetTerminationTime, the property operations and subscriptions to `Value` changes come
//! from [`osprey_wsrf::with_wsrf`].

use std::sync::Arc;
use std::time::Duration;

use osprey_binding::XmlType;
use osprey_container::TypedService;
use osprey_wsrf::client::{ClientError, WsrfClient};
use osprey_wsrf::messages::Epr;
use osprey_wsrf::EndpointReference;
use osprey_wsrf::{
    endpoint_address, fault, reference_parameter, with_wsrf, ResourceHome, ResourceState,
};
use osprey_xml::QName;

/// The counter's target namespace.
pub const NS: &str = "urn:osprey:counter";

/// The `Value` resource property (and the topic of its changes).
pub const VALUE: QName = QName::new_static(NS, "Value");

/// The reference parameter that carries a counter's key.
pub const COUNTER_KEY: QName = QName::new_static(NS, "CounterKey");

/// A counter: its state and resource property document.
#[derive(XmlType, Debug, Clone, PartialEq, Eq, Default)]
#[xml(
    namespace = "urn:osprey:counter",
    element = "CounterResourceProperties"
)]
pub struct CounterState {
    /// The counter's value.
    #[xml(rename = "Value")]
    pub value: i32,
}

impl ResourceState for CounterState {
    /// `Value` may be set with SetResourceProperties (Update), as in the Globus example.
    fn modifiable(property: &QName) -> bool {
        property.ns() == NS && property.local() == "Value"
    }
}

/// `createCounter` (no parameters).
#[derive(XmlType, Debug, Clone, PartialEq, Default)]
#[xml(namespace = "urn:osprey:counter", element = "createCounter")]
pub struct CreateCounter {}

/// `createCounterResponse`: the new counter's endpoint reference.
#[derive(XmlType, Debug, Clone, PartialEq, Default)]
#[xml(namespace = "urn:osprey:counter", element = "createCounterResponse")]
pub struct CreateCounterResponse {
    /// Send its reference parameters as SOAP headers to address the counter.
    #[xml(rename = "EndpointReference")]
    pub endpoint_reference: Epr,
}

/// `add`: the amount to add.
#[derive(XmlType, Debug, Clone, PartialEq, Default)]
#[xml(namespace = "urn:osprey:counter", element = "add")]
pub struct Add {
    /// The amount (may be negative).
    pub value: i32,
}

/// `addResponse`: the counter's new value.
#[derive(XmlType, Debug, Clone, PartialEq, Default)]
#[xml(namespace = "urn:osprey:counter", element = "addResponse")]
pub struct AddResponse {
    /// The value after the addition.
    pub value: i32,
}

/// The Counter service over the counters of `home`.
pub fn service(home: &Arc<ResourceHome<CounterState>>) -> TypedService {
    let h = home.clone();
    let b = TypedService::builder("Counter", NS)
        .resource_properties::<CounterState>()
        .operation(
            "createCounter",
            "urn:osprey:counter/createCounter",
            move |_: CreateCounter, ctx| {
                let (h, address) = (h.clone(), endpoint_address(ctx));
                async move {
                    let key = h
                        .create(CounterState::default(), None)
                        .await
                        .map_err(|e| fault(&h, &e))?;
                    Ok(CreateCounterResponse {
                        endpoint_reference: Epr(h.epr(&address, &key)),
                    })
                }
            },
        );
    let h = home.clone();
    let b = b.operation("add", "urn:osprey:counter/add", move |req: Add, ctx| {
        let (h, key) = (h.clone(), reference_parameter(ctx, &COUNTER_KEY));
        async move {
            let key = key.map_err(|e| fault(&h, &e))?;
            let value = h
                .update(&key, |c| {
                    c.value = c.value.checked_add(req.value).ok_or_else(|| {
                        osprey_wsrf::WsrfError::InvalidModification(format!(
                            "adding {} to {} overflows xsd:int",
                            req.value, c.value
                        ))
                    })?;
                    Ok(c.value)
                })
                .await
                .map_err(|e| fault(&h, &e))?;
            Ok(AddResponse { value })
        }
    });
    with_wsrf(b, home).build()
}

/// A typed client for counters.
#[derive(Clone, Debug)]
pub struct CounterClient {
    /// The WSRF client underneath (property, lifetime and subscription calls).
    pub wsrf: WsrfClient,
    service: EndpointReference,
}

impl CounterClient {
    /// A client of the counter service at `url` (`http://host:port/counter`). Inside a
    /// Tokio runtime it starts connecting to the service at once, so the first call finds
    /// its connection open ([`WsrfClient::preconnect`]).
    pub fn new(url: &str, timeout: Duration) -> Self {
        let wsrf = WsrfClient::new(timeout);
        wsrf.preconnect(url);
        CounterClient {
            wsrf,
            service: EndpointReference::new(url),
        }
    }

    /// Creates a counter; returns its endpoint reference.
    ///
    /// # Errors
    /// [`ClientError`] from the exchange.
    pub async fn create(&self) -> Result<EndpointReference, ClientError> {
        let r: CreateCounterResponse = self
            .wsrf
            .call(
                &self.service,
                "urn:osprey:counter/createCounter",
                &CreateCounter {},
            )
            .await?;
        Ok(r.endpoint_reference.0)
    }

    /// Adds `value` to the counter at `epr`; returns the new value.
    ///
    /// # Errors
    /// [`ClientError`] from the exchange.
    pub async fn add(&self, epr: &EndpointReference, value: i32) -> Result<i32, ClientError> {
        let r: AddResponse = self
            .wsrf
            .call(epr, "urn:osprey:counter/add", &Add { value })
            .await?;
        Ok(r.value)
    }

    /// The counter's `Value` resource property.
    ///
    /// # Errors
    /// [`ClientError`] from the exchange, or a response without one integer `Value`.
    pub async fn value(&self, epr: &EndpointReference) -> Result<i32, ClientError> {
        let values = self.wsrf.get_property(epr, &VALUE).await?;
        match values.as_slice() {
            [v] => v.string_value().trim().parse().map_err(|_| {
                ClientError::Response(format!("Value {:?} is not an int", v.string_value()))
            }),
            _ => Err(ClientError::Response(format!(
                "expected one Value, got {}",
                values.len()
            ))),
        }
    }
}
