//! The WS Test 1.0 types and payload elements, and the standard request values.

use osprey_binding::XmlType;

/// `SimpleStruct`: an int, a float and a string.
#[derive(XmlType, Debug, Clone, PartialEq)]
#[xml(namespace = "urn:wstest")]
pub struct SimpleStruct {
    /// `varInt`.
    pub var_int: i32,
    /// `varFloat`.
    pub var_float: f32,
    /// `varString`.
    pub var_string: String,
}

/// `ArrayOfSimpleStruct`: repeated `item` elements.
#[derive(XmlType, Debug, Clone, PartialEq, Default)]
#[xml(namespace = "urn:wstest")]
pub struct ArrayOfSimpleStruct {
    /// The items.
    pub item: Vec<SimpleStruct>,
}

/// `LinkedList`: a struct's fields plus an optional `next` node.
#[derive(XmlType, Debug, Clone, PartialEq)]
#[xml(namespace = "urn:wstest")]
pub struct LinkedList {
    /// `varInt`.
    pub var_int: i32,
    /// `varFloat`.
    pub var_float: f32,
    /// `varString`.
    pub var_string: String,
    /// The rest of the list.
    pub next: Option<Box<LinkedList>>,
}

/// `echoVoid` request (empty).
#[derive(XmlType, Debug, Clone, PartialEq, Default)]
#[xml(namespace = "urn:wstest", element = "echoVoid")]
pub struct EchoVoid {}

/// `echoVoidResponse` (empty).
#[derive(XmlType, Debug, Clone, PartialEq, Default)]
#[xml(namespace = "urn:wstest", element = "echoVoidResponse")]
pub struct EchoVoidResponse {}

/// `echoStruct` request.
#[derive(XmlType, Debug, Clone, PartialEq)]
#[xml(namespace = "urn:wstest", element = "echoStruct")]
pub struct EchoStruct {
    /// The array to echo.
    pub input: ArrayOfSimpleStruct,
}

/// `echoStructResponse`.
#[derive(XmlType, Debug, Clone, PartialEq)]
#[xml(namespace = "urn:wstest", element = "echoStructResponse")]
pub struct EchoStructResponse {
    /// The echoed array.
    pub output: ArrayOfSimpleStruct,
}

/// `echoList` request.
#[derive(XmlType, Debug, Clone, PartialEq)]
#[xml(namespace = "urn:wstest", element = "echoList")]
pub struct EchoList {
    /// The list to echo.
    pub input: LinkedList,
}

/// `echoListResponse`.
#[derive(XmlType, Debug, Clone, PartialEq)]
#[xml(namespace = "urn:wstest", element = "echoListResponse")]
pub struct EchoListResponse {
    /// The echoed list.
    pub output: LinkedList,
}

/// Item `i` of the standard WS Test data: `{i, i + 0.5, "abcdefghij"}`.
pub fn standard_item(i: i32) -> SimpleStruct {
    SimpleStruct {
        var_int: i,
        var_float: i as f32 + 0.5,
        var_string: "abcdefghij".into(),
    }
}

/// The standard 20-item array.
pub fn standard_array(n: i32) -> ArrayOfSimpleStruct {
    ArrayOfSimpleStruct {
        item: (0..n).map(standard_item).collect(),
    }
}

/// The standard 20-node list.
pub fn standard_list(n: i32) -> Option<LinkedList> {
    (0..n).rev().fold(None, |next, i| {
        let s = standard_item(i);
        Some(LinkedList {
            var_int: s.var_int,
            var_float: s.var_float,
            var_string: s.var_string,
            next: next.map(Box::new),
        })
    })
}
