//! The database layer: datasources, their transactions and the units of work that own them.
//!
//! A [`Datasource`] is an SQLite database (a file, or `:memory:`) reached through one
//! connection, or a PostgreSQL server reached through a small pool. A unit of work
//! ([`UnitId`]) begins a transaction on it and owns a connection until it commits or rolls
//! back. The [`Registry`] shares one datasource among everyone who opens the same file.
//! Statements run through [`Datasource::statement`], with values of this crate's own
//! ([`SqlValue`], [`SqlValueRef`]), so callers never see the driver.
//!
//! This crate knows nothing of flows or nodes: the node side makes a datasource's
//! transaction a resource of an invocation's unit of work.

mod connection;
mod datasource;
mod datetime;
mod error;
mod pg;
mod pg_codec;
mod registry;

pub use connection::{Connection, Product, Row, SqlValue, SqlValueRef, Warning};
pub use datasource::{Datasource, IN_MEMORY, POSTGRES_POOL, UnitId};
pub use error::DbError;
pub use registry::Registry;

/// Check a PostgreSQL connection string (a `postgresql://` URL or `key=value` pairs) without
/// connecting: the error says what is wrong with it.
pub fn check_conninfo(conninfo: &str) -> Result<(), DbError> {
    match conninfo.parse::<postgres::Config>() {
        Ok(c) if c.get_hosts().is_empty() => Err(DbError::NoHost),
        Ok(_) => Ok(()),
        Err(source) => Err(DbError::Config {
            datasource: conninfo.to_string(),
            source,
        }),
    }
}
