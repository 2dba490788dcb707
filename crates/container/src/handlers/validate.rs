//! Validation of each request's payload against its operation's schema (the XSD the WSDL
//! publishes), before the operation runs: on a worker, bad requests never reach the
//! service's machine.

use std::collections::HashMap;

use osprey_binding::{validate_content, DecodeError};
use osprey_wsdl::{ElementDefinition, OperationDefinition};

use crate::{ContainerError, Handler, MessageContext, Phase};

/// Checks the payload against the input element of the operation the request was routed
/// to; a mismatch is the same Sender fault the decoder gives (naming the element and its
/// path).
#[derive(Debug)]
pub struct SchemaValidation {
    /// Request action -> the operation's input element.
    inputs: HashMap<String, ElementDefinition>,
}

impl SchemaValidation {
    /// A validator for `operations` (those of the services whose requests it sees).
    pub fn new<'a>(operations: impl IntoIterator<Item = &'a OperationDefinition>) -> Self {
        SchemaValidation {
            inputs: operations
                .into_iter()
                .map(|o| (o.action.clone(), o.input))
                .collect(),
        }
    }
}

impl Handler for SchemaValidation {
    fn name(&self) -> &str {
        "schema-validate"
    }

    fn phase(&self) -> Phase {
        Phase::Route
    }

    fn idempotent(&self) -> bool {
        true
    }

    fn inbound(&self, ctx: &mut MessageContext) -> Result<(), ContainerError> {
        let Some(def) = self.inputs.get(&ctx.action) else {
            // Not one of ours (routing already refused unknown operations).
            return Ok(());
        };
        let mut r = match ctx.envelope.payload_reader(&ctx.bytes, &ctx.limits) {
            Ok(Some(r)) => r,
            Ok(None) => return Err(ContainerError::EmptyBody),
            Err(e) => return Err(ContainerError::from(DecodeError::from(e))),
        };
        match r.next_child().map_err(DecodeError::from)? {
            Some(s) if s.is(def.ns, def.local) => {
                validate_content(&mut r, (def.ty)()).map_err(|e| e.in_element(def.local))?;
                Ok(())
            }
            Some(s) => Err(DecodeError::unexpected(&s).into()),
            None => Err(ContainerError::EmptyBody),
        }
    }
}
