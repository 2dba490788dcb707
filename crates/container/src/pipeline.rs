//! A service's handler chain in phase order: each handler runs in process, or placed on
//! workers over the bus (`remote`), as the configuration says.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use osprey_xml::QName;

use crate::remote::{run_chain, run_parallel, run_placed, Placement};
use crate::{ContainerError, Handler, MessageContext};

/// What an exchange produced: an encoded payload element, or an error.
pub type Outcome = Result<Vec<u8>, ContainerError>;

/// One handler of a chain and where its inbound work runs.
#[derive(Clone)]
pub struct Stage {
    /// The handler.
    pub handler: Arc<dyn Handler>,
    /// `None`: in this process.
    pub placement: Option<Placement>,
    /// Declared independent of the other parallel handlers of its phase: placed ones are
    /// asked at the same time.
    pub parallel: bool,
}

impl Stage {
    /// An in-process stage.
    pub fn local(handler: Arc<dyn Handler>) -> Self {
        Stage {
            handler,
            placement: None,
            parallel: false,
        }
    }
}

/// How consecutive placed handlers run (`[bus] mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChainMode {
    /// Each placed handler is a round trip from the container (the paper's set-up).
    #[default]
    Sequential,
    /// Consecutive placed handlers form a chain: each worker forwards to the next, the
    /// last answers the container.
    Chained,
}

/// How a run of stages executes.
#[derive(Debug, Clone)]
enum Step {
    One(usize),
    Chain(std::ops::Range<usize>),
    Parallel(std::ops::Range<usize>),
}

/// An ordered chain of handlers, built once per service at start-up.
#[derive(Clone, Default)]
pub struct Pipeline {
    stages: Vec<Stage>,
    steps: Vec<Step>,
    understood: Vec<QName>,
}

impl Pipeline {
    /// A pipeline of in-process `handlers`, stably sorted by phase.
    pub fn new(handlers: Vec<Arc<dyn Handler>>) -> Self {
        Self::placed(
            handlers.into_iter().map(Stage::local).collect(),
            ChainMode::Sequential,
        )
    }

    /// A pipeline of `stages`, stably sorted by phase; placed ones run as `mode` says.
    pub fn placed(mut stages: Vec<Stage>, mode: ChainMode) -> Self {
        stages.sort_by_key(|s| s.handler.phase());
        let understood = stages
            .iter()
            .flat_map(|s| s.handler.understands().iter().cloned())
            .collect();
        Pipeline {
            steps: plan(&stages, mode),
            stages,
            understood,
        }
    }

    /// The handlers, in inbound order.
    pub fn handlers(&self) -> impl Iterator<Item = &Arc<dyn Handler>> {
        self.stages.iter().map(|s| &s.handler)
    }

    /// The buses of the handlers that run on workers (once per placed handler).
    pub fn buses(&self) -> impl Iterator<Item = &Arc<dyn osprey_bus::Bus>> {
        self.stages
            .iter()
            .filter_map(|s| s.placement.as_ref().map(|p| &p.bus))
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
        for step in &self.steps {
            let (first, result) = match step {
                Step::One(i) => {
                    let stage = &self.stages[*i];
                    let h = &stage.handler;
                    let result = match &stage.placement {
                        None => {
                            catch_unwind(AssertUnwindSafe(|| h.inbound(ctx))).unwrap_or_else(|_| {
                                Err(ContainerError::Panicked(format!("handler {}", h.name())))
                            })
                        }
                        Some(p) => run_placed(&**h, p, ctx).await,
                    };
                    (*i, result)
                }
                Step::Chain(r) => (r.start, run_chain(&self.placed_stages(r), ctx).await),
                Step::Parallel(r) => (r.start, run_parallel(&self.placed_stages(r), ctx).await),
            };
            if let Err(e) = result {
                tracing::debug!(error = %e, "a handler ended the exchange");
                // Outbound, the handlers before this step see the fault.
                return (first, Err(e));
            }
        }
        (self.stages.len(), Ok(()))
    }

    fn placed_stages(&self, r: &std::ops::Range<usize>) -> Vec<(&dyn Handler, &Placement)> {
        self.stages[r.clone()]
            .iter()
            .filter_map(|s| s.placement.as_ref().map(|p| (&*s.handler, p)))
            .collect()
    }

    /// Runs the first `ran` handlers outbound, in reverse order (a placed handler's
    /// outbound work runs here, in the container).
    pub fn outbound(&self, ran: usize, ctx: &mut MessageContext, outcome: &mut crate::Outcome) {
        for h in self.stages[..ran].iter().rev().map(|s| &s.handler) {
            if catch_unwind(AssertUnwindSafe(|| h.outbound(ctx, outcome))).is_err() {
                *outcome = Err(ContainerError::Panicked(format!("handler {}", h.name())));
            }
        }
    }
}

/// Groups sorted stages into steps: runs of parallel placed handlers of one phase, and
/// (in chained mode) runs of other consecutive placed handlers.
fn plan(stages: &[Stage], mode: ChainMode) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut i = 0;
    while i < stages.len() {
        let s = &stages[i];
        let mut j = i + 1;
        if s.placement.is_some() && s.parallel {
            while j < stages.len()
                && stages[j].placement.is_some()
                && stages[j].parallel
                && stages[j].handler.phase() == s.handler.phase()
            {
                j += 1;
            }
            steps.push(if j - i > 1 {
                Step::Parallel(i..j)
            } else {
                Step::One(i)
            });
        } else if s.placement.is_some() && mode == ChainMode::Chained {
            while j < stages.len() && stages[j].placement.is_some() && !stages[j].parallel {
                j += 1;
            }
            steps.push(if j - i > 1 {
                Step::Chain(i..j)
            } else {
                Step::One(i)
            });
        } else {
            steps.push(Step::One(i));
        }
        i = j;
    }
    steps
}
