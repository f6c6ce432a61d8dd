//! The database layer: datasources, their transactions and the units of work that own them.
//!
//! A [`Datasource`] is one database reached through one connection (today SQLite: a file, or
//! `:memory:`). A unit of work ([`UnitId`]) begins a transaction on it and owns it until it
//! commits or rolls back; other units of work wait meanwhile. The [`Registry`] shares one
//! datasource among everyone who opens the same file. Statements run through
//! [`Datasource::statement`], with values of this crate's own ([`SqlValue`],
//! [`SqlValueRef`]), so callers never see the driver.
//!
//! This crate knows nothing of flows or nodes: the node side makes a datasource's
//! transaction a resource of an invocation's unit of work.

mod connection;
mod datasource;
mod error;
mod registry;

pub use connection::{Connection, Row, SqlValue, SqlValueRef};
pub use datasource::{Datasource, IN_MEMORY, UnitId};
pub use error::DbError;
pub use registry::Registry;
