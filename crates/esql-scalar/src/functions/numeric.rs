//! Numeric functions: ABS, CEIL, FLOOR, ROUND, TRUNCATE, MOD, SIGN, the
//! FLOAT-valued mathematics (POWER, SQRT, EXP, LN, LOG10, trigonometry, RAND)
//! and the BIT* functions on INTEGERs. Any NULL argument gives NULL.
//!
//! ABS, CEIL, FLOOR, ROUND, TRUNCATE and SIGN keep the argument's type; the
//! mathematical functions return FLOAT, as the reference states for POWER.

use std::cell::Cell;

use crate::arith::{as_f64, finite};
use crate::decimal::{Decimal, RoundingMode};
use crate::error::ScalarError;
use crate::value::ScalarType;
use crate::value::Value;

fn not_numeric(function: &str, position: usize, v: &Value) -> ScalarError {
    ScalarError::arg(
        function,
        position,
        format!("expected a number, not {}", v.type_name()),
    )
}

fn float_arg(function: &str, position: usize, v: &Value) -> Result<f64, ScalarError> {
    as_f64(v).ok_or_else(|| not_numeric(function, position, v))
}

fn int_arg(function: &str, position: usize, v: &Value) -> Result<i64, ScalarError> {
    match v {
        Value::Integer(i) => Ok(*i),
        other => Err(ScalarError::arg(
            function,
            position,
            format!("expected INTEGER, not {}", other.type_name()),
        )),
    }
}

/// ABS / ABSVAL.
pub fn abs(v: &Value) -> Result<Value, ScalarError> {
    match v {
        Value::Null => Ok(Value::Null),
        Value::Integer(i) => i
            .checked_abs()
            .map(Value::Integer)
            .ok_or_else(|| ScalarError::overflow("ABS", ScalarType::Integer)),
        Value::Decimal(d) => Ok(Value::Decimal(d.abs())),
        Value::Float(f) => Ok(Value::Float(f.abs())),
        other => Err(not_numeric("ABS", 1, other)),
    }
}

fn integral(
    function: &str,
    v: &Value,
    mode: RoundingMode,
    op: fn(f64) -> f64,
) -> Result<Value, ScalarError> {
    match v {
        Value::Null => Ok(Value::Null),
        Value::Integer(i) => Ok(Value::Integer(*i)),
        Value::Decimal(d) => Ok(Value::Decimal(d.to_integral(mode)?)),
        Value::Float(f) => Ok(Value::Float(op(*f))),
        other => Err(not_numeric(function, 1, other)),
    }
}

/// CEIL / CEILING: the smallest integral value not below the argument.
pub fn ceil(v: &Value) -> Result<Value, ScalarError> {
    integral("CEIL", v, RoundingMode::Ceiling, f64::ceil)
}

/// FLOOR: the largest integral value not above the argument.
pub fn floor(v: &Value) -> Result<Value, ScalarError> {
    integral("FLOOR", v, RoundingMode::Floor, f64::floor)
}

/// ROUND(source, places [MODE mode]); the default mode is ROUND_HALF_EVEN.
pub fn round(v: &Value, places: &Value, mode: RoundingMode) -> Result<Value, ScalarError> {
    round_named("ROUND", v, places, mode)
}

/// TRUNCATE(source, places): rounding towards zero.
pub fn truncate(v: &Value, places: &Value) -> Result<Value, ScalarError> {
    round_named("TRUNCATE", v, places, RoundingMode::Down)
}

fn round_named(
    function: &str,
    v: &Value,
    places: &Value,
    mode: RoundingMode,
) -> Result<Value, ScalarError> {
    if v.is_null() || places.is_null() {
        return Ok(Value::Null);
    }
    let p = int_arg(function, 2, places)?;
    match v {
        Value::Integer(i) => {
            if p >= 0 {
                return Ok(Value::Integer(*i));
            }
            let r = Decimal::from_i64(*i).round_to(p, mode)?;
            r.to_i64(RoundingMode::Down).map(Value::Integer)
        }
        Value::Decimal(d) => Ok(Value::Decimal(d.round_to(p, mode)?)),
        Value::Float(f) => {
            // Round the 15-digit decimal the FLOAT stands for, so that ROUND(2.675, 2)
            // gives 2.68 as the value reads, not 2.67 from its binary expansion.
            let r = Decimal::from_f64(*f)?.round_to(p, mode)?;
            finite(r.to_f64(), function)
        }
        other => Err(not_numeric(function, 1, other)),
    }
}

/// MOD(dividend, divisor): the remainder, with the sign of the dividend.
pub fn modulo(a: &Value, b: &Value) -> Result<Value, ScalarError> {
    use Value::*;
    let zero = || ScalarError::DivisionByZero {
        operation: "MOD".into(),
    };
    match (a, b) {
        (Null, _) | (_, Null) => Ok(Null),
        (Integer(x), Integer(y)) => {
            if *y == 0 {
                return Err(zero());
            }
            // i64::MIN % -1 overflows in Rust but is mathematically 0.
            Ok(Integer(x.checked_rem(*y).unwrap_or(0)))
        }
        (Float(_), _) | (_, Float(_)) => {
            let (x, y) = (float_arg("MOD", 1, a)?, float_arg("MOD", 2, b)?);
            if y == 0.0 {
                return Err(zero());
            }
            finite(x % y, "MOD")
        }
        (Integer(_) | Decimal(_), Integer(_) | Decimal(_)) => {
            let to_dec = |v: &Value| match v {
                Integer(i) => crate::Decimal::from_i64(*i),
                Decimal(d) => *d,
                _ => crate::Decimal::ZERO,
            };
            Ok(Decimal(to_dec(a).checked_rem(to_dec(b))?))
        }
        (x, Integer(_) | Decimal(_)) => Err(not_numeric("MOD", 1, x)),
        (_, y) => Err(not_numeric("MOD", 2, y)),
    }
}

/// SIGN: -1, 0 or 1 in the argument's type.
pub fn sign(v: &Value) -> Result<Value, ScalarError> {
    match v {
        Value::Null => Ok(Value::Null),
        Value::Integer(i) => Ok(Value::Integer(i.signum())),
        Value::Decimal(d) => Ok(Value::Decimal(Decimal::from_i64(i64::from(d.signum())))),
        Value::Float(f) => Ok(Value::Float(if *f > 0.0 {
            1.0
        } else if *f < 0.0 {
            -1.0
        } else {
            0.0
        })),
        other => Err(not_numeric("SIGN", 1, other)),
    }
}

fn domain(function: &str, reason: &str) -> ScalarError {
    ScalarError::Domain {
        function: function.to_string(),
        reason: reason.to_string(),
    }
}

/// POWER(base, exponent) as FLOAT. Zero to a negative power and a negative base
/// to a fractional power are errors.
pub fn power(base: &Value, exponent: &Value) -> Result<Value, ScalarError> {
    if base.is_null() || exponent.is_null() {
        return Ok(Value::Null);
    }
    let (b, e) = (
        float_arg("POWER", 1, base)?,
        float_arg("POWER", 2, exponent)?,
    );
    if b == 0.0 && e < 0.0 {
        return Err(domain("POWER", "zero raised to a negative power"));
    }
    if b < 0.0 && e.fract() != 0.0 {
        return Err(domain(
            "POWER",
            "a negative number raised to a non-integer power",
        ));
    }
    finite(b.powf(e), "POWER")
}

/// A one-argument FLOAT function by name: SQRT, EXP, LN/LOG, LOG10, SIN, COS,
/// TAN, ASIN, ACOS, ATAN, SINH, COSH, TANH, COT, DEGREES, RADIANS.
pub fn float_function(name: &str, v: &Value) -> Result<Value, ScalarError> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    let upper = name.to_ascii_uppercase();
    let x = float_arg(&upper, 1, v)?;
    let r = match upper.as_str() {
        "SQRT" if x < 0.0 => return Err(domain("SQRT", "a negative number")),
        "SQRT" => x.sqrt(),
        "EXP" => x.exp(),
        "LN" | "LOG" if x <= 0.0 => return Err(domain(&upper, "zero or a negative number")),
        "LN" | "LOG" => x.ln(),
        "LOG10" if x <= 0.0 => return Err(domain("LOG10", "zero or a negative number")),
        "LOG10" => x.log10(),
        "SIN" => x.sin(),
        "COS" => x.cos(),
        "TAN" => x.tan(),
        "ASIN" | "ACOS" if !(-1.0..=1.0).contains(&x) => {
            return Err(domain(&upper, "a value outside -1 to 1"));
        }
        "ASIN" => x.asin(),
        "ACOS" => x.acos(),
        "ATAN" => x.atan(),
        "SINH" => x.sinh(),
        "COSH" => x.cosh(),
        "TANH" => x.tanh(),
        "COT" if x.tan() == 0.0 => return Err(domain("COT", "a multiple of pi")),
        "COT" => 1.0 / x.tan(),
        "DEGREES" => x.to_degrees(),
        "RADIANS" => x.to_radians(),
        _ => return Err(ScalarError::UnknownFunction(upper)),
    };
    finite(r, &upper)
}

/// ATAN2(y, x).
pub fn atan2(y: &Value, x: &Value) -> Result<Value, ScalarError> {
    if y.is_null() || x.is_null() {
        return Ok(Value::Null);
    }
    let (a, b) = (float_arg("ATAN2", 1, y)?, float_arg("ATAN2", 2, x)?);
    finite(a.atan2(b), "ATAN2")
}

thread_local! {
    /// The RAND generator state; each flow instance thread has its own sequence.
    static RAND_STATE: Cell<u64> = const { Cell::new(0) };
}

fn splitmix(state: u64) -> (u64, u64) {
    let next = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = next;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (next, z ^ (z >> 31))
}

/// `RAND([seed])`: a FLOAT in [0, 1). A seed restarts the sequence, so the same
/// seed gives the same value.
pub fn rand(seed: Option<&Value>) -> Result<Value, ScalarError> {
    let seeded = match seed {
        Some(Value::Null) => return Ok(Value::Null),
        Some(v) => Some(int_arg("RAND", 1, v)?),
        None => None,
    };
    let out = RAND_STATE.with(|cell| {
        let mut state = match seeded {
            Some(s) => s as u64,
            None => cell.get(),
        };
        if seeded.is_none() && state == 0 {
            state = crate::clock::now_utc_micros() as u64 | 1;
        }
        let (next, bits) = splitmix(state);
        cell.set(next);
        // 53 random bits make every double in [0, 1) on the grid of 2^-53.
        (bits >> 11) as f64 / (1u64 << 53) as f64
    });
    Ok(Value::Float(out))
}

/// BITAND, BITOR, BITXOR over two or more INTEGERs.
pub fn bit_fold(name: &str, args: &[Value]) -> Result<Value, ScalarError> {
    let upper = name.to_ascii_uppercase();
    if args.len() < 2 {
        return Err(ScalarError::WrongArgumentCount {
            function: upper,
            expected: "2 or more".into(),
            given: args.len(),
        });
    }
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let mut acc = int_arg(&upper, 1, &args[0])?;
    for (i, a) in args.iter().enumerate().skip(1) {
        let x = int_arg(&upper, i + 1, a)?;
        acc = match upper.as_str() {
            "BITAND" => acc & x,
            "BITOR" => acc | x,
            "BITXOR" => acc ^ x,
            _ => return Err(ScalarError::UnknownFunction(upper)),
        };
    }
    Ok(Value::Integer(acc))
}

/// BITNOT: the bitwise complement of an INTEGER.
pub fn bitnot(v: &Value) -> Result<Value, ScalarError> {
    match v {
        Value::Null => Ok(Value::Null),
        other => Ok(Value::Integer(!int_arg("BITNOT", 1, other)?)),
    }
}

#[cfg(test)]
#[path = "numeric_tests.rs"]
mod tests;
