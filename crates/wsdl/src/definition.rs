//! A service's contract as code declares it: operations and their payload elements.

use osprey_binding::{TypeDesc, XmlElement};

/// A service: its name, target namespace and operations.
#[derive(Debug)]
pub struct ServiceDefinition {
    /// Service name (`WSTest`); WSDL names derive from it (`WSTestPortType`, ...).
    pub name: String,
    /// Target namespace of the WSDL.
    pub namespace: String,
    /// The operations, in order.
    pub operations: Vec<OperationDefinition>,
    /// The resource property document of a WS-Resource's port type, if it has one.
    pub resource_properties: Option<ElementDefinition>,
}

/// One request/response operation, document/literal wrapped.
#[derive(Debug, Clone)]
pub struct OperationDefinition {
    /// Operation name (`echoStruct`).
    pub name: String,
    /// Action of the request (`urn:wstest/echoStruct`): SOAPAction and `wsa:Action`.
    pub action: String,
    /// Action of the response (by default the request action + `Response`).
    pub output_action: String,
    /// The request payload element.
    pub input: ElementDefinition,
    /// The response payload element.
    pub output: ElementDefinition,
}

/// A global element and its type.
#[derive(Debug, Clone, Copy)]
pub struct ElementDefinition {
    /// Element namespace.
    pub ns: &'static str,
    /// Element local name.
    pub local: &'static str,
    /// Element type.
    pub ty: fn() -> &'static TypeDesc,
}

impl ElementDefinition {
    /// The definition of payload type `T`.
    pub fn of<T: XmlElement>() -> Self {
        ElementDefinition {
            ns: T::NS,
            local: T::LOCAL,
            ty: T::schema,
        }
    }
}
