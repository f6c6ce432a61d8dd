//! The message tree: elements in an arena, typed values, on-demand parsing hooks, and the message
//! assembly (Root, LocalEnvironment, Environment, ExceptionList) that flows carry.

pub mod assembly;
pub mod data_type;
mod debug;
pub mod error;
pub mod field_type;
pub mod interval;
mod packed;
pub mod text;
pub mod text_form;
mod tree;
pub mod value;
pub mod xpath;

pub use assembly::Message;
pub use data_type::{DataType, ScalarType};
pub use error::{TreeError, Violation};
pub use interval::{DatetimeField, IntervalQualifier};
pub use text::{Text, TextRef, same_bytes};
pub use tree::{Expand, NodeId, Parser, Position, SourceSpan, Tree};
pub use value::Value;
