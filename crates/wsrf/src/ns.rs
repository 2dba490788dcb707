//! Namespaces, action URIs and dialects of WS-ResourceFramework 1.2 and
//! WS-BaseNotification 1.3 (OASIS Standards), written once.

/// WS-ResourceProperties (`wsrf-rp`).
pub const RP: &str = "http://docs.oasis-open.org/wsrf/rp-2";
/// WS-ResourceLifetime (`wsrf-rl`).
pub const RL: &str = "http://docs.oasis-open.org/wsrf/rl-2";
/// WS-Resource (`wsrf-r`): `ResourceUnknownFault`, `ResourceUnavailableFault`.
pub const R: &str = "http://docs.oasis-open.org/wsrf/r-2";
/// WS-BaseFaults (`wsrf-bf`).
pub const BF: &str = "http://docs.oasis-open.org/wsrf/bf-2";
/// WS-BaseNotification (`wsnt`).
pub const WSNT: &str = "http://docs.oasis-open.org/wsn/b-2";
/// WS-Topics (`wstop`).
pub const WSTOP: &str = "http://docs.oasis-open.org/wsn/t-1";
/// Osprey's own elements: the subscription key reference parameter.
pub const OSPREY_WSRF: &str = "urn:osprey:wsrf";

/// The XPath 1.0 dialect of `QueryResourceProperties` and `MessageContent` filters.
pub const XPATH_DIALECT: &str = "http://www.w3.org/TR/1999/REC-xpath-19991116";
/// The Simple topic expression dialect (a root topic QName).
pub const TOPIC_SIMPLE: &str = "http://docs.oasis-open.org/wsn/t-1/TopicExpression/Simple";
/// The Concrete topic expression dialect (a topic path of QName steps).
pub const TOPIC_CONCRETE: &str = "http://docs.oasis-open.org/wsn/t-1/TopicExpression/Concrete";
/// The Full topic expression dialect (not supported: faulted as unknown).
pub const TOPIC_FULL: &str = "http://docs.oasis-open.org/wsn/t-1/TopicExpression/Full";

/// `wsa:Action` of WSRF faults.
pub const FAULT_ACTION: &str = "http://docs.oasis-open.org/wsrf/fault";

/// Request and response actions, as the specs' WSDLs declare them.
pub mod action {
    /// GetResourceProperty request.
    pub const GET_RP: &str =
        "http://docs.oasis-open.org/wsrf/rpw-2/GetResourceProperty/GetResourcePropertyRequest";
    /// GetResourceProperty response.
    pub const GET_RP_RESPONSE: &str =
        "http://docs.oasis-open.org/wsrf/rpw-2/GetResourceProperty/GetResourcePropertyResponse";
    /// GetResourcePropertyDocument request.
    pub const GET_RP_DOCUMENT: &str = "http://docs.oasis-open.org/wsrf/rpw-2/GetResourcePropertyDocument/GetResourcePropertyDocumentRequest";
    /// GetResourcePropertyDocument response.
    pub const GET_RP_DOCUMENT_RESPONSE: &str = "http://docs.oasis-open.org/wsrf/rpw-2/GetResourcePropertyDocument/GetResourcePropertyDocumentResponse";
    /// GetMultipleResourceProperties request.
    pub const GET_MULTIPLE_RP: &str = "http://docs.oasis-open.org/wsrf/rpw-2/GetMultipleResourceProperties/GetMultipleResourcePropertiesRequest";
    /// GetMultipleResourceProperties response.
    pub const GET_MULTIPLE_RP_RESPONSE: &str = "http://docs.oasis-open.org/wsrf/rpw-2/GetMultipleResourceProperties/GetMultipleResourcePropertiesResponse";
    /// QueryResourceProperties request.
    pub const QUERY_RP: &str = "http://docs.oasis-open.org/wsrf/rpw-2/QueryResourceProperties/QueryResourcePropertiesRequest";
    /// QueryResourceProperties response.
    pub const QUERY_RP_RESPONSE: &str = "http://docs.oasis-open.org/wsrf/rpw-2/QueryResourceProperties/QueryResourcePropertiesResponse";
    /// SetResourceProperties request.
    pub const SET_RP: &str =
        "http://docs.oasis-open.org/wsrf/rpw-2/SetResourceProperties/SetResourcePropertiesRequest";
    /// SetResourceProperties response.
    pub const SET_RP_RESPONSE: &str =
        "http://docs.oasis-open.org/wsrf/rpw-2/SetResourceProperties/SetResourcePropertiesResponse";
    /// Destroy request.
    pub const DESTROY: &str =
        "http://docs.oasis-open.org/wsrf/rlw-2/ImmediateResourceTermination/DestroyRequest";
    /// Destroy response.
    pub const DESTROY_RESPONSE: &str =
        "http://docs.oasis-open.org/wsrf/rlw-2/ImmediateResourceTermination/DestroyResponse";
    /// SetTerminationTime request.
    pub const SET_TERMINATION_TIME: &str = "http://docs.oasis-open.org/wsrf/rlw-2/ScheduledResourceTermination/SetTerminationTimeRequest";
    /// SetTerminationTime response.
    pub const SET_TERMINATION_TIME_RESPONSE: &str = "http://docs.oasis-open.org/wsrf/rlw-2/ScheduledResourceTermination/SetTerminationTimeResponse";
    /// Subscribe request.
    pub const SUBSCRIBE: &str =
        "http://docs.oasis-open.org/wsn/bw-2/NotificationProducer/SubscribeRequest";
    /// Subscribe response.
    pub const SUBSCRIBE_RESPONSE: &str =
        "http://docs.oasis-open.org/wsn/bw-2/NotificationProducer/SubscribeResponse";
    /// Notify (one-way, to a consumer).
    pub const NOTIFY: &str = "http://docs.oasis-open.org/wsn/bw-2/NotificationConsumer/Notify";
    /// Unsubscribe request.
    pub const UNSUBSCRIBE: &str =
        "http://docs.oasis-open.org/wsn/bw-2/SubscriptionManager/UnsubscribeRequest";
    /// Unsubscribe response.
    pub const UNSUBSCRIBE_RESPONSE: &str =
        "http://docs.oasis-open.org/wsn/bw-2/SubscriptionManager/UnsubscribeResponse";
    /// Renew request.
    pub const RENEW: &str = "http://docs.oasis-open.org/wsn/bw-2/SubscriptionManager/RenewRequest";
    /// Renew response.
    pub const RENEW_RESPONSE: &str =
        "http://docs.oasis-open.org/wsn/bw-2/SubscriptionManager/RenewResponse";
    /// PauseSubscription request.
    pub const PAUSE: &str =
        "http://docs.oasis-open.org/wsn/bw-2/PausableSubscriptionManager/PauseSubscriptionRequest";
    /// PauseSubscription response.
    pub const PAUSE_RESPONSE: &str =
        "http://docs.oasis-open.org/wsn/bw-2/PausableSubscriptionManager/PauseSubscriptionResponse";
    /// ResumeSubscription request.
    pub const RESUME: &str =
        "http://docs.oasis-open.org/wsn/bw-2/PausableSubscriptionManager/ResumeSubscriptionRequest";
    /// ResumeSubscription response.
    pub const RESUME_RESPONSE: &str = "http://docs.oasis-open.org/wsn/bw-2/PausableSubscriptionManager/ResumeSubscriptionResponse";
}
