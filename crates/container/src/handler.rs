//! Handlers: work done on every message of a service, before and after the operation.

use osprey_xml::QName;

use crate::{MessageContext, Outcome};

/// Where in the chain a handler runs. Inbound, phases run in this order; outbound, in
/// reverse. Within a phase, handlers keep their configured order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// Right after the envelope is decoded (logging, metrics).
    Decode,
    /// WS-Addressing headers are read and reply headers written.
    Addressing,
    /// Authentication, integrity, throttling.
    Security,
    /// Just before the operation (validation, routing decisions).
    Route,
}

/// A unit of work on each message of a service.
///
/// A handler that faults inbound ends the exchange: the handlers that already ran see
/// the fault outbound, in reverse order; the ones after it never run.
pub trait Handler: Send + Sync + 'static {
    /// Name for logs and faults.
    fn name(&self) -> &str;

    /// The phase the handler belongs to.
    fn phase(&self) -> Phase;

    /// Whether running it twice on one message does no harm (a placed handler that
    /// timed out is then tried once more, on another worker).
    fn idempotent(&self) -> bool {
        false
    }

    /// Header blocks this handler processes (for `mustUnderstand`).
    fn understands(&self) -> &[QName] {
        &[]
    }

    /// Works on a request. Must mark the header blocks it processed in
    /// `ctx.understood`.
    ///
    /// # Errors
    /// A [`crate::ContainerError`] ends the exchange with the corresponding fault.
    fn inbound(&self, ctx: &mut MessageContext) -> Result<(), crate::ContainerError>;

    /// Works on the response (or fault) on its way out.
    fn outbound(&self, _ctx: &mut MessageContext, _outcome: &mut Outcome) {}
}
