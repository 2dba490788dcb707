//! Logs one line per exchange: peer, path, action, outcome.

use crate::{ContainerError, Handler, MessageContext, Outcome, Phase};

/// Logs each exchange at `info` level through `tracing`.
#[derive(Debug, Default)]
pub struct AccessLog;

impl Handler for AccessLog {
    fn name(&self) -> &str {
        "access-log"
    }

    fn phase(&self) -> Phase {
        Phase::Decode
    }

    fn inbound(&self, _ctx: &mut MessageContext) -> Result<(), ContainerError> {
        Ok(())
    }

    fn outbound(&self, ctx: &mut MessageContext, outcome: &mut Outcome) {
        let remote = ctx.remote.map(|r| r.to_string()).unwrap_or_default();
        match outcome {
            Ok(body) => {
                tracing::info!(%remote, path = %ctx.path, action = %ctx.action, bytes = body.len(), "ok")
            }
            Err(e) => {
                tracing::info!(%remote, path = %ctx.path, action = %ctx.action, error = %e, "fault")
            }
        }
    }
}
