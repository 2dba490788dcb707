//! The faults WS-ResourceFramework 1.2 and WS-BaseNotification 1.3 define, as one enum
//! whose QNames are written once, next to it, and the single mapping to a SOAP fault.

use osprey_binding::DateTime;
use osprey_soap::{Fault, FaultDetail};
use osprey_xml::XmlWriter;
use thiserror::Error;

use crate::ns;

/// A WSRF or WS-BaseNotification fault. Every variant is one the specs name; the
/// message says what was wrong in words a client's user can act on.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum WsrfError {
    /// No resource has this key (never created, destroyed, or expired), or the request
    /// carried no key at all.
    #[error("unknown resource: {0}")]
    ResourceUnknown(String),
    /// The resource exists but could not be reached (its state could not be stored).
    #[error("resource unavailable: {0}")]
    ResourceUnavailable(String),
    /// A property QName the resource property document does not declare.
    #[error("the resource has no property {0}")]
    InvalidResourcePropertyQName(String),
    /// A query dialect other than XPath 1.0.
    #[error("unknown query expression dialect {0:?} (supported: XPath 1.0)")]
    UnknownQueryExpressionDialect(String),
    /// A query that does not parse, or uses XPath outside the supported subset.
    #[error("invalid query expression: {0}")]
    InvalidQueryExpression(String),
    /// A query that parsed but could not be evaluated.
    #[error("query evaluation error: {0}")]
    QueryEvaluationError(String),
    /// A SetResourceProperties component that is malformed or changes a read-only
    /// property.
    #[error("invalid modification: {0}")]
    InvalidModification(String),
    /// A property whose value cannot be changed this way.
    #[error("unable to modify resource property: {0}")]
    UnableToModifyResourceProperty(String),
    /// A termination time the resource cannot take (in the past, or malformed).
    #[error("unable to set termination time: {0}")]
    UnableToSetTerminationTime(String),
    /// The resource could not be destroyed.
    #[error("resource not destroyed: {0}")]
    ResourceNotDestroyed(String),
    /// A topic the producer does not publish.
    #[error("topic not supported: {0}")]
    TopicNotSupported(String),
    /// A topic expression that does not parse in its dialect.
    #[error("invalid topic expression: {0}")]
    InvalidTopicExpression(String),
    /// A topic expression dialect other than Simple or Concrete.
    #[error("topic expression dialect {0:?} is not supported (Simple and Concrete are)")]
    TopicExpressionDialectUnknown(String),
    /// A filter element that is not understood.
    #[error("invalid filter: {0}")]
    InvalidFilter(String),
    /// A MessageContent filter in an unknown dialect or outside the XPath subset.
    #[error("invalid message content expression: {0}")]
    InvalidMessageContentExpression(String),
    /// An initial termination time in the past or malformed.
    #[error("unacceptable initial termination time: {0}")]
    UnacceptableInitialTerminationTime(String),
    /// A Renew termination time in the past or malformed.
    #[error("unacceptable termination time: {0}")]
    UnacceptableTerminationTime(String),
    /// The subscription could not be created (consumer reference malformed, ...).
    #[error("subscription not created: {0}")]
    SubscribeCreationFailed(String),
    /// The subscription could not be destroyed.
    #[error("unable to destroy subscription: {0}")]
    UnableToDestroySubscription(String),
}

impl WsrfError {
    /// The fault element's namespace and local name, as the specs declare them.
    pub fn qname(&self) -> (&'static str, &'static str) {
        use WsrfError::*;
        match self {
            ResourceUnknown(_) => (ns::R, "ResourceUnknownFault"),
            ResourceUnavailable(_) => (ns::R, "ResourceUnavailableFault"),
            InvalidResourcePropertyQName(_) => (ns::RP, "InvalidResourcePropertyQNameFault"),
            UnknownQueryExpressionDialect(_) => (ns::RP, "UnknownQueryExpressionDialectFault"),
            InvalidQueryExpression(_) => (ns::RP, "InvalidQueryExpressionFault"),
            QueryEvaluationError(_) => (ns::RP, "QueryEvaluationErrorFault"),
            InvalidModification(_) => (ns::RP, "InvalidModificationFault"),
            UnableToModifyResourceProperty(_) => (ns::RP, "UnableToModifyResourcePropertyFault"),
            UnableToSetTerminationTime(_) => (ns::RL, "UnableToSetTerminationTimeFault"),
            ResourceNotDestroyed(_) => (ns::RL, "ResourceNotDestroyedFault"),
            TopicNotSupported(_) => (ns::WSNT, "TopicNotSupportedFault"),
            InvalidTopicExpression(_) => (ns::WSNT, "InvalidTopicExpressionFault"),
            TopicExpressionDialectUnknown(_) => (ns::WSNT, "TopicExpressionDialectUnknownFault"),
            InvalidFilter(_) => (ns::WSNT, "InvalidFilterFault"),
            InvalidMessageContentExpression(_) => {
                (ns::WSNT, "InvalidMessageContentExpressionFault")
            }
            UnacceptableInitialTerminationTime(_) => {
                (ns::WSNT, "UnacceptableInitialTerminationTimeFault")
            }
            UnacceptableTerminationTime(_) => (ns::WSNT, "UnacceptableTerminationTimeFault"),
            SubscribeCreationFailed(_) => (ns::WSNT, "SubscribeCreationFailedFault"),
            UnableToDestroySubscription(_) => (ns::WSNT, "UnableToDestroySubscriptionFault"),
        }
    }

    /// True when the fault is the server's (`Receiver`), not the client's.
    fn is_receiver(&self) -> bool {
        matches!(
            self,
            WsrfError::ResourceUnavailable(_)
                | WsrfError::ResourceNotDestroyed(_)
                | WsrfError::QueryEvaluationError(_)
                | WsrfError::UnableToDestroySubscription(_)
        )
    }

    /// The SOAP fault: `Sender` (or `Receiver`) with the spec's fault element, a
    /// `wsrf-bf:BaseFaultType` holding `Timestamp` (`now`) and `Description`, as detail,
    /// sent with WSRF's fault action. The one place a WSRF error becomes a fault.
    pub fn to_fault(&self, now: DateTime) -> Fault {
        let (fault_ns, local) = self.qname();
        let mut w = XmlWriter::with_capacity(256);
        w.start(fault_ns, local);
        w.declare("wsrf-bf", ns::BF);
        w.start_prefixed("wsrf-bf", "Timestamp");
        w.text(&now.to_string());
        w.end();
        w.start_prefixed("wsrf-bf", "Description");
        w.text(&self.to_string());
        w.end();
        w.end();
        let detail = FaultDetail::from_xml(String::from_utf8_lossy(w.as_bytes()).into_owned());
        let fault = if self.is_receiver() {
            Fault::receiver(self.to_string())
        } else {
            Fault::sender(self.to_string())
        };
        fault.with_detail(detail).with_action(ns::FAULT_ACTION)
    }
}
