//! The WSRF port types as operations of a container service: a service built with
//! [`TypedService::builder`](osprey_container::TypedService::builder) gets
//! WS-ResourceProperties, WS-ResourceLifetime, NotificationProducer and (pausable)
//! SubscriptionManager by one call to [`with_wsrf`].

use std::sync::Arc;

use osprey_addressing::ANONYMOUS;
use osprey_container::{Fault, MessageContext, TypedServiceBuilder};
use osprey_xml::QName;

use crate::doc::Element;
use crate::home::{ResourceHome, ResourceState, SUBSCRIPTION_KEY};
use crate::messages::*;
use crate::ns::action;
use crate::{xpath, WsrfError};

/// The text of the reference parameter `name` among the request's SOAP headers: the key
/// of the resource (or subscription) the request is for.
///
/// # Errors
/// `ResourceUnknown` when the request carries no such header (a client that dropped the
/// EPR's reference parameters) or it is empty.
pub fn reference_parameter(ctx: &MessageContext, name: &QName) -> Result<String, WsrfError> {
    let missing = || {
        WsrfError::ResourceUnknown(format!(
            "the request carries no {name} header: send the reference parameters of the \
             resource's endpoint reference as SOAP headers"
        ))
    };
    let i = ctx
        .envelope
        .headers
        .iter()
        .position(|h| h.name == *name)
        .ok_or_else(missing)?;
    let key = match ctx.envelope.header_text(i, &ctx.bytes) {
        Some(t) => t.trim().to_owned(),
        None => {
            let mut r = ctx
                .envelope
                .header_reader(i, &ctx.bytes, &ctx.limits)
                .map_err(|_| missing())?;
            r.next_child().map_err(|_| missing())?;
            r.read_text().map_err(|_| missing())?.trim().to_owned()
        }
    };
    if key.is_empty() {
        return Err(missing());
    }
    Ok(key)
}

/// The address clients use for this endpoint: the request's `wsa:To` when it names one,
/// else `http://<Host><path>`.
pub fn endpoint_address(ctx: &MessageContext) -> String {
    if let Some(to) = ctx.addressing.as_ref().and_then(|a| a.to.as_deref()) {
        if to != ANONYMOUS && to.starts_with("http") {
            return to.to_owned();
        }
    }
    format!(
        "http://{}{}",
        ctx.host.as_deref().unwrap_or("127.0.0.1"),
        ctx.path
    )
}

/// Adds the WSRF operations over the resources of `home` to a service.
pub fn with_wsrf<S: ResourceState>(
    b: TypedServiceBuilder,
    home: &Arc<ResourceHome<S>>,
) -> TypedServiceBuilder {
    let h = home.clone();
    let b = b.operation_with_actions(
        "GetResourceProperty",
        action::GET_RP,
        action::GET_RP_RESPONSE,
        move |req: GetResourceProperty, ctx| {
            document_op(&h, ctx, move |h, doc| {
                let q = h.property(&req.property)?;
                Ok(GetResourcePropertyResponse {
                    elements: doc.elements().filter(|e| e.name == q).cloned().collect(),
                })
            })
        },
    );
    let h = home.clone();
    let b = b.operation_with_actions(
        "GetResourcePropertyDocument",
        action::GET_RP_DOCUMENT,
        action::GET_RP_DOCUMENT_RESPONSE,
        move |_: GetResourcePropertyDocument, ctx| {
            document_op(&h, ctx, |_, doc| {
                Ok(GetResourcePropertyDocumentResponse {
                    elements: vec![doc],
                })
            })
        },
    );
    let h = home.clone();
    let b = b.operation_with_actions(
        "GetMultipleResourceProperties",
        action::GET_MULTIPLE_RP,
        action::GET_MULTIPLE_RP_RESPONSE,
        move |req: GetMultipleResourceProperties, ctx| {
            document_op(&h, ctx, move |h, doc| {
                let names = req
                    .properties
                    .iter()
                    .map(|p| h.property(p))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut elements = Vec::new();
                for q in names {
                    elements.extend(doc.elements().filter(|e| e.name == q).cloned());
                }
                Ok(GetMultipleResourcePropertiesResponse { elements })
            })
        },
    );
    let h = home.clone();
    let b = b.operation_with_actions(
        "QueryResourceProperties",
        action::QUERY_RP,
        action::QUERY_RP_RESPONSE,
        move |req: QueryResourceProperties, ctx| {
            document_op(&h, ctx, move |_, doc| {
                if req.query.dialect != crate::ns::XPATH_DIALECT {
                    return Err(WsrfError::UnknownQueryExpressionDialect(
                        req.query.dialect.clone(),
                    ));
                }
                let expr = xpath::Expr::parse(&req.query.text, &req.query.scope)
                    .map_err(WsrfError::InvalidQueryExpression)?;
                Ok(expr.evaluate(&doc).into_response())
            })
        },
    );
    let h = home.clone();
    let b = b.operation_with_actions(
        "SetResourceProperties",
        action::SET_RP,
        action::SET_RP_RESPONSE,
        move |req: SetResourceProperties, ctx| {
            let (h, key) = (h.clone(), reference_parameter(ctx, h.key_name()));
            async move {
                let key = key.map_err(|e| fault(&h, &e))?;
                h.set_properties(&key, &req.components)
                    .await
                    .map_err(|e| fault(&h, &e))?;
                Ok(SetResourcePropertiesResponse)
            }
        },
    );
    let h = home.clone();
    let b = b.operation_with_actions(
        "Destroy",
        action::DESTROY,
        action::DESTROY_RESPONSE,
        move |_: Destroy, ctx| {
            let (h, key) = (h.clone(), reference_parameter(ctx, h.key_name()));
            async move {
                let key = key.map_err(|e| fault(&h, &e))?;
                h.destroy(&key).await.map_err(|e| fault(&h, &e))?;
                Ok(DestroyResponse)
            }
        },
    );
    let h = home.clone();
    let b = b.operation_with_actions(
        "SetTerminationTime",
        action::SET_TERMINATION_TIME,
        action::SET_TERMINATION_TIME_RESPONSE,
        move |req: SetTerminationTime, ctx| {
            let (h, key) = (h.clone(), reference_parameter(ctx, h.key_name()));
            async move {
                let key = key.map_err(|e| fault(&h, &e))?;
                let (new_termination_time, current_time) = h
                    .set_termination(&key, &req.requested)
                    .await
                    .map_err(|e| fault(&h, &e))?;
                Ok(SetTerminationTimeResponse {
                    new_termination_time,
                    current_time,
                })
            }
        },
    );
    let h = home.clone();
    let b = b.operation_with_actions(
        "Subscribe",
        action::SUBSCRIBE,
        action::SUBSCRIBE_RESPONSE,
        move |req: Subscribe, ctx| {
            let (h, key) = (h.clone(), reference_parameter(ctx, h.key_name()));
            let (address, version) = (endpoint_address(ctx), ctx.version());
            async move {
                let key = key.map_err(|e| fault(&h, &e))?;
                h.subscribe(&key, &address, &req, version)
                    .await
                    .map_err(|e| fault(&h, &e))
            }
        },
    );
    let h = home.clone();
    let b = b.operation_with_actions(
        "Unsubscribe",
        action::UNSUBSCRIBE,
        action::UNSUBSCRIBE_RESPONSE,
        move |_: Unsubscribe, ctx| {
            let (h, key) = (h.clone(), reference_parameter(ctx, &SUBSCRIPTION_KEY));
            async move {
                let key = key.map_err(|e| fault(&h, &e))?;
                h.unsubscribe(&key).await.map_err(|e| fault(&h, &e))?;
                Ok(UnsubscribeResponse)
            }
        },
    );
    let h = home.clone();
    let b = b.operation_with_actions(
        "Renew",
        action::RENEW,
        action::RENEW_RESPONSE,
        move |req: Renew, ctx| {
            let (h, key) = (h.clone(), reference_parameter(ctx, &SUBSCRIPTION_KEY));
            async move {
                let key = key.map_err(|e| fault(&h, &e))?;
                let (termination_time, current_time) = h
                    .renew(&key, &req.termination_time)
                    .await
                    .map_err(|e| fault(&h, &e))?;
                Ok(RenewResponse {
                    termination_time,
                    current_time,
                })
            }
        },
    );
    let h = home.clone();
    let b = b.operation_with_actions(
        "PauseSubscription",
        action::PAUSE,
        action::PAUSE_RESPONSE,
        move |_: PauseSubscription, ctx| {
            let (h, key) = (h.clone(), reference_parameter(ctx, &SUBSCRIPTION_KEY));
            async move {
                let key = key.map_err(|e| fault(&h, &e))?;
                h.set_paused(&key, true).await.map_err(|e| fault(&h, &e))?;
                Ok(PauseSubscriptionResponse)
            }
        },
    );
    let h = home.clone();
    b.operation_with_actions(
        "ResumeSubscription",
        action::RESUME,
        action::RESUME_RESPONSE,
        move |_: ResumeSubscription, ctx| {
            let (h, key) = (h.clone(), reference_parameter(ctx, &SUBSCRIPTION_KEY));
            async move {
                let key = key.map_err(|e| fault(&h, &e))?;
                h.set_paused(&key, false).await.map_err(|e| fault(&h, &e))?;
                Ok(ResumeSubscriptionResponse)
            }
        },
    )
}

/// The SOAP fault for `e`, stamped with the home's clock.
pub fn fault<S: ResourceState>(home: &ResourceHome<S>, e: &WsrfError) -> Fault {
    e.to_fault(home.clock().now())
}

/// Runs a read-only operation on the resource property document of the resource the
/// request addresses.
fn document_op<S: ResourceState, R>(
    home: &Arc<ResourceHome<S>>,
    ctx: &MessageContext,
    f: impl FnOnce(&ResourceHome<S>, Element) -> Result<R, WsrfError> + Send + 'static,
) -> impl std::future::Future<Output = Result<R, Fault>> + Send + 'static {
    let (h, key) = (home.clone(), reference_parameter(ctx, home.key_name()));
    async move {
        let doc = match key {
            Ok(key) => h.document(&key).await,
            Err(e) => Err(e),
        };
        doc.and_then(|doc| f(&h, doc)).map_err(|e| fault(&h, &e))
    }
}
