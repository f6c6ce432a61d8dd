//! Validated node properties, as a node's builder reads them.

use std::collections::BTreeMap;

/// A property value from a flow file, already checked against its [`crate::PropKind`].
#[derive(Clone, Debug, PartialEq)]
pub enum PropValue {
    String(String),
    Integer(i64),
    Boolean(bool),
    Float(f64),
    List(Vec<String>),
    /// Keeps the order of the flow file (Route tries rules in that order).
    Map(Vec<(String, String)>),
}

/// A node's properties, defaults filled in.
#[derive(Clone, Debug, Default)]
pub struct NodeConfig {
    values: BTreeMap<String, PropValue>,
}

/// A problem with a node's properties, found while building it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ConfigError {
    /// The property at fault, so the loader can point at its line.
    pub property: Option<String>,
    pub message: String,
    pub hint: Option<String>,
}

impl ConfigError {
    /// An error about one property.
    pub fn property(name: &str, message: impl Into<String>) -> ConfigError {
        ConfigError {
            property: Some(name.to_string()),
            message: message.into(),
            hint: None,
        }
    }

    /// An error about the node as a whole.
    pub fn node(message: impl Into<String>) -> ConfigError {
        ConfigError {
            property: None,
            message: message.into(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> ConfigError {
        self.hint = Some(hint.into());
        self
    }
}

impl NodeConfig {
    pub fn insert(&mut self, name: &str, v: PropValue) {
        self.values.insert(name.to_string(), v);
    }

    /// Every property, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &PropValue)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn get(&self, name: &str) -> Option<&PropValue> {
        self.values.get(name)
    }

    /// A string (or enum) property; empty when absent.
    pub fn str(&self, name: &str) -> &str {
        match self.values.get(name) {
            Some(PropValue::String(s)) => s,
            _ => "",
        }
    }

    pub fn opt_str(&self, name: &str) -> Option<&str> {
        match self.values.get(name) {
            Some(PropValue::String(s)) => Some(s),
            _ => None,
        }
    }

    pub fn int(&self, name: &str) -> i64 {
        match self.values.get(name) {
            Some(PropValue::Integer(i)) => *i,
            _ => 0,
        }
    }

    pub fn bool(&self, name: &str) -> bool {
        matches!(self.values.get(name), Some(PropValue::Boolean(true)))
    }

    pub fn float(&self, name: &str) -> f64 {
        match self.values.get(name) {
            Some(PropValue::Float(f)) => *f,
            Some(PropValue::Integer(i)) => *i as f64,
            _ => 0.0,
        }
    }

    pub fn list(&self, name: &str) -> &[String] {
        match self.values.get(name) {
            Some(PropValue::List(l)) => l,
            _ => &[],
        }
    }

    pub fn map(&self, name: &str) -> &[(String, String)] {
        match self.values.get(name) {
            Some(PropValue::Map(m)) => m,
            _ => &[],
        }
    }
}
