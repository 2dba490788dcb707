//! Services and their operations, with typed operations built from closures.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use osprey_binding::{encode_element_into, XmlElement};
use osprey_soap::Fault;
use osprey_wsdl::{ElementDefinition, OperationDefinition, ServiceDefinition};
use osprey_xml::XmlWriter;

use crate::{ContainerError, MessageContext};

/// The running part of an operation: resolves to the encoded response payload.
pub type OperationFuture = Pin<Box<dyn Future<Output = Result<Vec<u8>, Fault>> + Send>>;

/// A hosted service.
pub trait Service: Send + Sync + 'static {
    /// The contract: name, namespace, operations (WSDL is generated from it).
    fn definition(&self) -> &ServiceDefinition;

    /// Starts operation `op` (an index into `definition().operations`) on the request in
    /// `ctx`. Decoding happens here, synchronously; the future does the work.
    ///
    /// # Errors
    /// [`ContainerError::Binding`] when the payload does not match the operation.
    fn invoke(&self, op: usize, ctx: &MessageContext) -> Result<OperationFuture, ContainerError>;
}

trait ErasedOperation: Send + Sync {
    fn call(&self, ctx: &MessageContext) -> Result<OperationFuture, ContainerError>;
}

struct TypedOperation<Req, Resp, F> {
    f: F,
    _types: PhantomData<fn(Req) -> Resp>,
}

impl<Req, Resp, F, Fut> ErasedOperation for TypedOperation<Req, Resp, F>
where
    Req: XmlElement + Send + 'static,
    Resp: XmlElement + Send + 'static,
    F: Fn(Req, &MessageContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Resp, Fault>> + Send + 'static,
{
    fn call(&self, ctx: &MessageContext) -> Result<OperationFuture, ContainerError> {
        let req = ctx.decode_payload::<Req>()?;
        let fut = (self.f)(req, ctx);
        Ok(Box::pin(async move {
            let resp = fut.await?;
            let mut w = XmlWriter::with_capacity(2048);
            encode_element_into(&resp, &mut w);
            Ok(w.into_bytes())
        }))
    }
}

/// A service whose operations are typed closures.
///
/// ```
/// use osprey_container::{TypedService, Service};
/// use osprey_binding::XmlType;
///
/// #[derive(XmlType)]
/// #[xml(namespace = "urn:hello", element = "hello")]
/// struct Hello { name: String }
/// #[derive(XmlType)]
/// #[xml(namespace = "urn:hello", element = "helloResponse")]
/// struct HelloResponse { greeting: String }
///
/// let svc = TypedService::builder("Hello", "urn:hello")
///     .operation("hello", "urn:hello/hello", |req: Hello, _ctx| async move {
///         Ok(HelloResponse { greeting: format!("Hello, {}", req.name) })
///     })
///     .build();
/// assert_eq!(svc.definition().operations[0].name, "hello");
/// ```
pub struct TypedService {
    definition: ServiceDefinition,
    operations: Vec<Box<dyn ErasedOperation>>,
}

/// Builds a [`TypedService`].
pub struct TypedServiceBuilder {
    service: TypedService,
}

impl TypedService {
    /// Starts a service named `name` in target namespace `namespace`.
    pub fn builder(name: &str, namespace: &str) -> TypedServiceBuilder {
        TypedServiceBuilder {
            service: TypedService {
                definition: ServiceDefinition {
                    name: name.into(),
                    namespace: namespace.into(),
                    operations: Vec::new(),
                    resource_properties: None,
                },
                operations: Vec::new(),
            },
        }
    }
}

impl TypedServiceBuilder {
    /// Adds operation `name` with request action `action`, answered by `f`; the
    /// response action is `action` + `Response`.
    #[must_use]
    pub fn operation<Req, Resp, F, Fut>(self, name: &str, action: &str, f: F) -> Self
    where
        Req: XmlElement + Send + 'static,
        Resp: XmlElement + Send + 'static,
        F: Fn(Req, &MessageContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Resp, Fault>> + Send + 'static,
    {
        let output_action = format!("{action}Response");
        self.operation_with_actions(name, action, &output_action, f)
    }

    /// Adds operation `name` with request action `action` and response action
    /// `output_action` (for contracts that name both, like WSRF's), answered by `f`.
    #[must_use]
    pub fn operation_with_actions<Req, Resp, F, Fut>(
        mut self,
        name: &str,
        action: &str,
        output_action: &str,
        f: F,
    ) -> Self
    where
        Req: XmlElement + Send + 'static,
        Resp: XmlElement + Send + 'static,
        F: Fn(Req, &MessageContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Resp, Fault>> + Send + 'static,
    {
        self.service
            .definition
            .operations
            .push(OperationDefinition {
                name: name.into(),
                action: action.into(),
                output_action: output_action.into(),
                input: ElementDefinition::of::<Req>(),
                output: ElementDefinition::of::<Resp>(),
            });
        self.service.operations.push(Box::new(TypedOperation {
            f,
            _types: PhantomData,
        }));
        self
    }

    /// Declares the service's resource property document (WS-ResourceProperties): the
    /// element is added to the WSDL's types and named by the port type's
    /// `wsrf-rp:ResourceProperties` attribute.
    #[must_use]
    pub fn resource_properties<T: XmlElement>(mut self) -> Self {
        self.service.definition.resource_properties = Some(ElementDefinition::of::<T>());
        self
    }

    /// The finished service.
    pub fn build(self) -> TypedService {
        self.service
    }
}

impl Service for TypedService {
    fn definition(&self) -> &ServiceDefinition {
        &self.definition
    }

    fn invoke(&self, op: usize, ctx: &MessageContext) -> Result<OperationFuture, ContainerError> {
        match self.operations.get(op) {
            Some(o) => o.call(ctx),
            None => Err(ContainerError::UnknownOperation {
                service: self.definition.name.clone(),
                what: format!("#{op}"),
            }),
        }
    }
}
