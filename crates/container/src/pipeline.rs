//! A service's handler chain in phase order: each handler runs in process, or placed on
//! workers over the bus (`remote`), as the configuration says.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use osprey_xml::QName;

use crate::remote::{run_placed, Placement};
use crate::{ContainerError, Handler, MessageContext};

/// What an exchange produced: an encoded payload element, or an error.
pub type Outcome = Result<Vec<u8>, ContainerError>;

/// One handler of a chain and where its inbound work runs.
#[derive(Clone)]
struct Stage {
    handler: Arc<dyn Handler>,
    /// `None`: in this process.
    placement: Option<Placement>,
}

/// An ordered chain of handlers, built once per service at start-up.
#[derive(Clone, Default)]
pub struct Pipeline {
    stages: Vec<Stage>,
    handlers: Vec<Arc<dyn Handler>>,
    understood: Vec<QName>,
}

impl Pipeline {
    /// A pipeline of in-process `handlers`, stably sorted by phase.
    pub fn new(handlers: Vec<Arc<dyn Handler>>) -> Self {
        Self::placed(handlers.into_iter().map(|h| (h, None)).collect())
    }

    /// A pipeline of handlers each with its placement (`None`: in process), stably
    /// sorted by phase.
    pub fn placed(mut stages: Vec<(Arc<dyn Handler>, Option<Placement>)>) -> Self {
        stages.sort_by_key(|(h, _)| h.phase());
        let understood = stages
            .iter()
            .flat_map(|(h, _)| h.understands().iter().cloned())
            .collect();
        Pipeline {
            handlers: stages.iter().map(|(h, _)| h.clone()).collect(),
            stages: stages
                .into_iter()
                .map(|(handler, placement)| Stage { handler, placement })
                .collect(),
            understood,
        }
    }

    /// The handlers, in inbound order.
    pub fn handlers(&self) -> &[Arc<dyn Handler>] {
        &self.handlers
    }

    /// How many handlers run on workers.
    pub fn placed_count(&self) -> usize {
        self.stages.iter().filter(|s| s.placement.is_some()).count()
    }

    /// True when some handler processes header blocks named `name`.
    pub fn understands(&self, name: &QName) -> bool {
        self.understood.contains(name)
    }

    /// Runs the handlers inbound. Returns how many ran successfully (all of them unless
    /// one faulted) and the error that stopped the chain, if any.
    pub async fn inbound(&self, ctx: &mut MessageContext) -> (usize, Result<(), ContainerError>) {
        for (i, stage) in self.stages.iter().enumerate() {
            let h = &stage.handler;
            let result = match &stage.placement {
                None => catch_unwind(AssertUnwindSafe(|| h.inbound(ctx))).unwrap_or_else(|_| {
                    Err(ContainerError::Panicked(format!("handler {}", h.name())))
                }),
                Some(p) => run_placed(&**h, p, ctx).await,
            };
            if let Err(e) = result {
                tracing::debug!(handler = h.name(), error = %e, "handler ended the exchange");
                return (i, Err(e));
            }
        }
        (self.stages.len(), Ok(()))
    }

    /// Runs the first `ran` handlers outbound, in reverse order (a placed handler's
    /// outbound work runs here, in the container).
    pub fn outbound(&self, ran: usize, ctx: &mut MessageContext, outcome: &mut crate::Outcome) {
        for h in self.handlers[..ran].iter().rev() {
            if catch_unwind(AssertUnwindSafe(|| h.outbound(ctx, outcome))).is_err() {
                *outcome = Err(ContainerError::Panicked(format!("handler {}", h.name())));
            }
        }
    }
}
