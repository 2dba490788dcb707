//! The in-process pipeline: a service's handlers in phase order.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use osprey_xml::QName;

use crate::{ContainerError, Handler, MessageContext};

/// What an exchange produced: an encoded payload element, or an error.
pub type Outcome = Result<Vec<u8>, ContainerError>;

/// An ordered chain of handlers, built once per service at start-up.
#[derive(Clone, Default)]
pub struct Pipeline {
    handlers: Vec<Arc<dyn Handler>>,
    understood: Vec<QName>,
}

impl Pipeline {
    /// A pipeline of `handlers`, stably sorted by phase.
    pub fn new(mut handlers: Vec<Arc<dyn Handler>>) -> Self {
        handlers.sort_by_key(|h| h.phase());
        let understood = handlers
            .iter()
            .flat_map(|h| h.understands().iter().cloned())
            .collect();
        Pipeline {
            handlers,
            understood,
        }
    }

    /// The handlers, in inbound order.
    pub fn handlers(&self) -> &[Arc<dyn Handler>] {
        &self.handlers
    }

    /// True when some handler processes header blocks named `name`.
    pub fn understands(&self, name: &QName) -> bool {
        self.understood.contains(name)
    }

    /// Runs the handlers inbound. Returns how many ran successfully (all of them unless
    /// one faulted) and the error that stopped the chain, if any.
    pub fn inbound(&self, ctx: &mut MessageContext) -> (usize, Result<(), ContainerError>) {
        for (i, h) in self.handlers.iter().enumerate() {
            let result = catch_unwind(AssertUnwindSafe(|| h.inbound(ctx)))
                .unwrap_or_else(|_| Err(ContainerError::Panicked(format!("handler {}", h.name()))));
            if let Err(e) = result {
                tracing::debug!(handler = h.name(), error = %e, "handler ended the exchange");
                return (i, Err(e));
            }
        }
        (self.handlers.len(), Ok(()))
    }

    /// Runs the first `ran` handlers outbound, in reverse order.
    pub fn outbound(&self, ran: usize, ctx: &mut MessageContext, outcome: &mut crate::Outcome) {
        for h in self.handlers[..ran].iter().rev() {
            if catch_unwind(AssertUnwindSafe(|| h.outbound(ctx, outcome))).is_err() {
                *outcome = Err(ContainerError::Panicked(format!("handler {}", h.name())));
            }
        }
    }
}
