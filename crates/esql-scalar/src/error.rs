//! Errors raised by scalar evaluation, worded like the broker's ESQL runtime messages.

use std::fmt;

use sluice_tree::ScalarType;
use thiserror::Error;

/// A failure while evaluating a scalar operation, cast or built-in function.
///
/// Each variant carries an SQLSTATE-style code (see [`ScalarError::sqlstate`]) so that
/// the runtime can fill the ExceptionList the way the product does.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ScalarError {
    /// An arithmetic result does not fit its type (INTEGER past 64 bits, DECIMAL past
    /// 34 digits or its exponent range, FLOAT past ±1.7E+308).
    #[error("Arithmetic overflow: {operation} on {type_name} values does not fit the result type")]
    Overflow {
        /// The operation, such as `+` or `CAST`.
        operation: String,
        /// The ESQL type of the operands.
        type_name: &'static str,
    },
    /// A division or MOD with a zero divisor.
    #[error("Division by zero in {operation}")]
    DivisionByZero {
        /// The operation, such as `/` or `MOD`.
        operation: String,
    },
    /// A CAST whose source is of the wrong format for the target type.
    #[error("Cannot cast '{value}' to {target}{detail}")]
    CastFailure {
        /// The source value as text.
        value: String,
        /// The target ESQL type.
        target: String,
        /// Extra explanation, starting with `: ` when present.
        detail: String,
    },
    /// A CAST between two types that the language does not allow.
    #[error("CAST from {from} to {to} is not supported")]
    UnsupportedCast {
        /// The source ESQL type.
        from: &'static str,
        /// The target ESQL type.
        to: String,
    },
    /// An operator applied to operand types it is not defined for.
    #[error("Operator {operator} is not defined for {left} and {right}")]
    TypeMismatch {
        /// The operator, such as `+` or `||`.
        operator: String,
        /// The ESQL type of the left operand.
        left: &'static str,
        /// The ESQL type of the right operand.
        right: &'static str,
    },
    /// A built-in function called with an argument of the wrong type or value.
    #[error("Invalid argument {position} to function {function}: {reason}")]
    InvalidArgument {
        /// The function name, upper case.
        function: String,
        /// The 1-based argument position.
        position: usize,
        /// Why the argument is not accepted.
        reason: String,
    },
    /// A built-in function called with the wrong number of arguments.
    #[error("Function {function} expects {expected} argument(s) but was given {given}")]
    WrongArgumentCount {
        /// The function name, upper case.
        function: String,
        /// A description of the accepted counts, such as `2 or 3`.
        expected: String,
        /// The number of arguments given.
        given: usize,
    },
    /// A call to a function name that is not a scalar built-in.
    #[error("Unknown function {0}")]
    UnknownFunction(String),
    /// A FORMAT pattern that cannot be understood.
    #[error("Invalid format pattern '{pattern}': {reason}")]
    InvalidFormat {
        /// The pattern as written.
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A CCSID conversion that fails: a CCSID with no converter, a character the code page
    /// cannot hold, or bytes that are not valid in it.
    #[error(transparent)]
    Codepage(#[from] sluice_codepage::CodepageError),
    /// A date, time or interval value outside its valid range.
    #[error("Datetime value out of range: {0}")]
    DatetimeRange(String),
    /// A numeric function called outside its domain (square root of a negative, ...).
    #[error("Numeric value out of range for {function}: {reason}")]
    Domain {
        /// The function name, upper case.
        function: String,
        /// Which input is outside the domain.
        reason: String,
    },
}

impl ScalarError {
    /// The SQLSTATE the product reports for this kind of failure.
    pub fn sqlstate(&self) -> &'static str {
        match self {
            ScalarError::Overflow { .. } => "22003",
            ScalarError::DivisionByZero { .. } => "22012",
            ScalarError::CastFailure { .. } => "22018",
            ScalarError::UnsupportedCast { .. } => "42846",
            ScalarError::TypeMismatch { .. } => "42818",
            ScalarError::InvalidArgument { .. } => "22023",
            ScalarError::WrongArgumentCount { .. } => "42605",
            ScalarError::UnknownFunction(_) => "42884",
            ScalarError::InvalidFormat { .. } => "22007",
            ScalarError::Codepage(_) => "22021",
            ScalarError::DatetimeRange(_) => "22008",
            ScalarError::Domain { .. } => "22003",
        }
    }

    pub(crate) fn cast(value: impl Into<String>, target: impl fmt::Display) -> Self {
        ScalarError::CastFailure {
            value: value.into(),
            target: target.to_string(),
            detail: String::new(),
        }
    }

    pub(crate) fn cast_because(
        value: impl Into<String>,
        target: impl fmt::Display,
        detail: impl AsRef<str>,
    ) -> Self {
        ScalarError::CastFailure {
            value: value.into(),
            target: target.to_string(),
            detail: format!(": {}", detail.as_ref()),
        }
    }

    pub(crate) fn overflow(operation: impl Into<String>, ty: ScalarType) -> Self {
        ScalarError::Overflow {
            operation: operation.into(),
            type_name: ty.name(),
        }
    }

    pub(crate) fn arg(function: &str, position: usize, reason: impl Into<String>) -> Self {
        ScalarError::InvalidArgument {
            function: function.to_ascii_uppercase(),
            position,
            reason: reason.into(),
        }
    }
}
