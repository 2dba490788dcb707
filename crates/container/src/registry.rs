//! The service registry: services by path and operations by action or payload element,
//! with their pipelines and WSDL documents, all prepared at start-up.

use std::collections::HashMap;
use std::sync::Arc;

use osprey_xml::QName;

use crate::{ContainerError, Pipeline, Service};

/// Stands in for the endpoint address in the pre-generated WSDL.
const ADDRESS_MARK: &str = "@@osprey-address@@";

pub(crate) struct Entry {
    pub path: String,
    pub service: Arc<dyn Service>,
    pub pipeline: Pipeline,
    /// WSDL text split where the endpoint address goes (once per port).
    wsdl: Vec<String>,
    by_action: HashMap<String, usize>,
    by_element: Vec<(QName, usize)>,
}

impl Entry {
    /// The service's WSDL with `address` as the location of every port.
    pub(crate) fn wsdl(&self, address: &str) -> String {
        self.wsdl.join(address)
    }
}

/// Where a message goes: a service and one of its operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// Index of the service in the registry.
    pub service: usize,
    /// Index of the operation in the service's definition.
    pub operation: usize,
}

/// All hosted services.
#[derive(Default)]
pub struct ServiceRegistry {
    entries: Vec<Entry>,
    by_path: HashMap<String, usize>,
    by_action: HashMap<String, usize>,
}

impl ServiceRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Hosts `service` at `path` with `pipeline`, generating its WSDL now.
    ///
    /// # Panics
    /// When `path` is already taken (configurations are validated before this).
    pub fn add(&mut self, path: &str, service: Arc<dyn Service>, pipeline: Pipeline) {
        assert!(
            !self.by_path.contains_key(path),
            "path {path} registered twice"
        );
        let def = service.definition();
        // Split wherever the address goes (every port), to splice in the request's Host.
        let wsdl = osprey_wsdl::generate(def, ADDRESS_MARK)
            .split(ADDRESS_MARK)
            .map(str::to_owned)
            .collect();
        let index = self.entries.len();
        let mut by_action = HashMap::new();
        let mut by_element = Vec::new();
        for (i, op) in def.operations.iter().enumerate() {
            by_action.insert(op.action.clone(), i);
            self.by_action.entry(op.action.clone()).or_insert(index);
            by_element.push((
                QName::new(op.input.ns.to_owned(), op.input.local.to_owned()),
                i,
            ));
        }
        self.by_path.insert(path.to_owned(), index);
        self.entries.push(Entry {
            path: path.to_owned(),
            service,
            pipeline,
            wsdl,
            by_action,
            by_element,
        });
    }

    /// The paths of the hosted services, in the order they were added.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.path.as_str())
    }

    /// The service at `path`.
    pub(crate) fn by_path(&self, path: &str) -> Option<usize> {
        self.by_path.get(path).copied()
    }

    pub(crate) fn entry(&self, index: usize) -> &Entry {
        &self.entries[index]
    }

    pub(crate) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Routes a message: the service by `path`, else by `wsa_action`; the operation by
    /// `wsa_action`, else `soap_action`, else the payload element's name.
    ///
    /// # Errors
    /// [`ContainerError::UnknownService`] or [`ContainerError::UnknownOperation`].
    pub fn route(
        &self,
        path: &str,
        wsa_action: Option<&str>,
        soap_action: Option<&str>,
        payload: Option<&QName>,
    ) -> Result<Route, ContainerError> {
        let service = self
            .by_path(path)
            .or_else(|| wsa_action.and_then(|a| self.by_action.get(a).copied()))
            .ok_or_else(|| ContainerError::UnknownService {
                path: path.to_owned(),
            })?;
        let e = &self.entries[service];
        let unknown = |what: String| ContainerError::UnknownOperation {
            service: e.service.definition().name.clone(),
            what,
        };
        if let Some(a) = wsa_action {
            return match e.by_action.get(a) {
                Some(&operation) => Ok(Route { service, operation }),
                None => Err(ContainerError::from(
                    osprey_addressing::AddressingError::ActionNotSupported {
                        action: a.to_owned(),
                    },
                )),
            };
        }
        if let Some(&operation) = soap_action
            .filter(|a| !a.is_empty())
            .and_then(|a| e.by_action.get(a))
        {
            return Ok(Route { service, operation });
        }
        match payload {
            Some(p) => e
                .by_element
                .iter()
                .find(|(q, _)| q == p)
                .map(|&(_, operation)| Route { service, operation })
                .ok_or_else(|| unknown(format!("payload element {p}"))),
            None => Err(unknown(format!(
                "action {:?} with an empty body",
                soap_action.unwrap_or("")
            ))),
        }
    }
}
