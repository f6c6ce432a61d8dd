//! Database nodes that need no ESQL: DatabaseRetrieve and DatabaseRoute look a row up with a
//! SELECT built from their properties, DatabaseInput polls an event table. They live beside
//! the ESQL nodes because they share their datasources (by name from sluice.yaml, or a file),
//! their transactions in the flow's unit of work and their tests' PostgreSQL set-up.

mod input;
mod query;
mod retrieve;
mod route;
mod target;

pub use input::DATABASE_INPUT;
pub use retrieve::DATABASE_RETRIEVE;
pub use route::DATABASE_ROUTE;
