//! Everything that can go wrong with an exchange, and the one mapping to SOAP faults.

use osprey_addressing::AddressingError;
use osprey_binding::DecodeError as BindingError;
use osprey_soap::{DecodeError as EnvelopeError, Fault, FaultCode, FaultDetail, OSPREY_FAULT_NS};
use osprey_transport::BodyError;
use osprey_xml::QName;
use thiserror::Error;

/// Why an exchange failed. `From<&ContainerError> for Fault` is the only place errors
/// become faults; the dispatcher is the only place faults become responses.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ContainerError {
    /// The request body could not be read.
    #[error(transparent)]
    Body(#[from] BodyError),
    /// The body is not an acceptable envelope.
    #[error(transparent)]
    Envelope(Box<EnvelopeError>),
    /// WS-Addressing headers are wrong, or no operation has the action.
    #[error(transparent)]
    Addressing(Box<AddressingError>),
    /// The payload does not match the operation's schema.
    #[error("{}", binding_message(.0))]
    Binding(Box<BindingError>),
    /// No service at this path (and no WS-Addressing action to route by).
    #[error("no service at path {path:?}")]
    UnknownService {
        /// The path.
        path: String,
    },
    /// The service has no operation for this message.
    #[error("service {service} has no operation for {what}")]
    UnknownOperation {
        /// The service name.
        service: String,
        /// The action or payload element that matched nothing.
        what: String,
    },
    /// The body is empty but an operation needs a payload.
    #[error("the SOAP Body is empty")]
    EmptyBody,
    /// Header blocks marked `mustUnderstand` that no handler understands.
    #[error("header {} is marked mustUnderstand but not understood", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))]
    NotUnderstood(Vec<QName>),
    /// A handler or service panicked.
    #[error("internal error in {0}")]
    Panicked(String),
    /// A handler or service returned a fault of its own.
    #[error("{0}")]
    Fault(Box<Fault>),
    /// A handler placed on workers could not be run (no worker, no answer in time, or
    /// the bus is down).
    #[error("handler {handler} did not run: {why}")]
    HandlerUnavailable {
        /// The handler's name.
        handler: String,
        /// What the bus reported.
        why: String,
    },
}

fn binding_message(e: &BindingError) -> String {
    match e {
        BindingError::Xml(x) => x.to_string(),
        other => format!("the request does not match the schema: {other}"),
    }
}

impl From<&ContainerError> for Fault {
    fn from(e: &ContainerError) -> Self {
        let osprey = |code, sub: &'static str| {
            Fault::new(code, e.to_string()).with_subcode(QName::new_static(OSPREY_FAULT_NS, sub))
        };
        match e {
            ContainerError::Body(BodyError::TooLarge { .. }) => {
                osprey(FaultCode::Sender, "LimitExceeded")
            }
            ContainerError::Body(_) => osprey(FaultCode::Sender, "IncompleteMessage"),
            ContainerError::Envelope(e) => Fault::from(&**e),
            ContainerError::Addressing(e) => Fault::from(&**e),
            ContainerError::Binding(b) => {
                let (sub, path) = match &**b {
                    BindingError::Xml(osprey_xml::XmlError::LimitExceeded { .. }) => {
                        ("LimitExceeded", None)
                    }
                    BindingError::Xml(_) => ("MalformedMessage", None),
                    BindingError::UnexpectedElement { path, .. } => {
                        ("UnexpectedElement", Some(path))
                    }
                    BindingError::MissingElement { path, .. } => ("MissingElement", Some(path)),
                    BindingError::InvalidValue { path, .. } => ("InvalidValue", Some(path)),
                    _ => ("InvalidMessage", None),
                };
                let f = osprey(FaultCode::Sender, sub);
                match path {
                    Some(p) => {
                        f.with_detail(FaultDetail::text(OSPREY_FAULT_NS, "path", &format!("/{p}")))
                    }
                    None => f,
                }
            }
            ContainerError::UnknownService { .. } => osprey(FaultCode::Sender, "UnknownService"),
            ContainerError::UnknownOperation { .. } => {
                osprey(FaultCode::Sender, "UnknownOperation")
            }
            ContainerError::EmptyBody => osprey(FaultCode::Sender, "EmptyBody"),
            ContainerError::NotUnderstood(names) => {
                let mut f = Fault::new(FaultCode::MustUnderstand, e.to_string());
                f.not_understood = names.clone();
                f
            }
            ContainerError::Panicked(_) => osprey(FaultCode::Receiver, "InternalError"),
            ContainerError::HandlerUnavailable { .. } => {
                osprey(FaultCode::Receiver, "HandlerUnavailable")
            }
            ContainerError::Fault(f) => (**f).clone(),
        }
    }
}

impl From<Fault> for ContainerError {
    fn from(f: Fault) -> Self {
        ContainerError::Fault(Box::new(f))
    }
}

impl From<EnvelopeError> for ContainerError {
    fn from(e: EnvelopeError) -> Self {
        ContainerError::Envelope(Box::new(e))
    }
}

impl From<AddressingError> for ContainerError {
    fn from(e: AddressingError) -> Self {
        ContainerError::Addressing(Box::new(e))
    }
}

impl From<BindingError> for ContainerError {
    fn from(e: BindingError) -> Self {
        ContainerError::Binding(Box::new(e))
    }
}
