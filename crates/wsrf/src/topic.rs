//! Topic expressions (WS-Topics 1.3) in the Simple and Concrete dialects. A producer
//! here publishes root topics only: one per resource property (its value changes) and
//! `wsrf-rl:ResourceTermination`, so a Concrete path must be a single step.

use osprey_xml::QName;

use crate::doc::resolve_qname;
use crate::messages::Expression;
use crate::ns;
use crate::WsrfError;

/// The topic of a resource's termination (WS-ResourceLifetime §5).
pub const RESOURCE_TERMINATION: QName = QName::new_static(ns::RL, "ResourceTermination");

/// Reads the topic a subscription names, checking that `published` offers it.
///
/// # Errors
/// `TopicExpressionDialectUnknown` for a dialect other than Simple and Concrete,
/// `InvalidTopicExpression` for text that is not a QName (or a path deeper than the
/// root), `TopicNotSupported` for a topic the producer does not publish.
pub fn parse(expr: &Expression, published: &[QName]) -> Result<QName, WsrfError> {
    let concrete = match expr.dialect.as_str() {
        ns::TOPIC_SIMPLE => false,
        ns::TOPIC_CONCRETE => true,
        other => return Err(WsrfError::TopicExpressionDialectUnknown(other.to_owned())),
    };
    let text = expr.text.trim();
    if text.contains('/') || text.contains('|') || text.contains('*') {
        let why = if concrete {
            "only root topics are published, so a Concrete path has one step"
        } else {
            "the Simple dialect names one root topic"
        };
        return Err(WsrfError::InvalidTopicExpression(format!(
            "{text:?}: {why}"
        )));
    }
    let q = resolve_qname(&expr.scope, text).map_err(WsrfError::InvalidTopicExpression)?;
    published
        .iter()
        .find(|p| **p == q || (q.ns().is_empty() && p.local() == q.local()))
        .cloned()
        .ok_or_else(|| WsrfError::TopicNotSupported(format!("{q}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use osprey_xml::Scope;

    fn expr(dialect: &str, text: &str) -> Expression {
        let mut scope = Scope::default();
        scope.bind("c", "urn:c");
        Expression {
            dialect: dialect.into(),
            text: text.into(),
            scope,
        }
    }

    #[test]
    fn simple_and_concrete_root_topics_resolve() {
        let published = [QName::new_static("urn:c", "Value"), RESOURCE_TERMINATION];
        for d in [ns::TOPIC_SIMPLE, ns::TOPIC_CONCRETE] {
            assert_eq!(
                parse(&expr(d, "c:Value"), &published).unwrap(),
                published[0]
            );
        }
        assert_eq!(
            parse(&expr(ns::TOPIC_SIMPLE, "Value"), &published).unwrap(),
            published[0]
        );
    }

    #[test]
    fn each_wrong_expression_gets_its_fault() {
        let published = [QName::new_static("urn:c", "Value")];
        let e = |d, t| parse(&expr(d, t), &published).unwrap_err();
        assert!(matches!(
            e(ns::TOPIC_FULL, "c:Value"),
            WsrfError::TopicExpressionDialectUnknown(_)
        ));
        assert!(matches!(
            e("urn:nope", "c:Value"),
            WsrfError::TopicExpressionDialectUnknown(_)
        ));
        assert!(matches!(
            e(ns::TOPIC_SIMPLE, "c:Other"),
            WsrfError::TopicNotSupported(_)
        ));
        assert!(matches!(
            e(ns::TOPIC_SIMPLE, "x:Value"),
            WsrfError::InvalidTopicExpression(_)
        ));
        assert!(matches!(
            e(ns::TOPIC_CONCRETE, "c:Value/c:Sub"),
            WsrfError::InvalidTopicExpression(_)
        ));
        assert!(matches!(
            e(ns::TOPIC_SIMPLE, "1bad"),
            WsrfError::InvalidTopicExpression(_)
        ));
    }
}
