//! ESQL DECIMAL: an exact decimal of up to 34 significant digits (IEEE 754 decimal128),
//! on top of libdecNumber through the `dec` crate.
//!
//! Every operation checks the decNumber status flags so that overflow, division by
//! zero and invalid operations become [`ScalarError`]s instead of NaN or infinity.

use std::cmp::Ordering;
use std::fmt;

use dec::{Context, Decimal128, Rounding};

use crate::error::ScalarError;
use crate::value::ScalarType;

/// The number of significant digits a DECIMAL holds.
pub const DECIMAL_DIGITS: u32 = 34;

/// How a value is brought to fewer digits; the names are ESQL's `MODE` keywords.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RoundingMode {
    /// ROUND_UP: away from zero.
    Up,
    /// ROUND_DOWN: towards zero.
    Down,
    /// ROUND_CEILING: towards positive infinity.
    Ceiling,
    /// ROUND_FLOOR: towards negative infinity.
    Floor,
    /// ROUND_HALF_UP: to nearest, ties away from zero.
    HalfUp,
    /// ROUND_HALF_EVEN: to nearest, ties to the even neighbour (the ESQL default).
    #[default]
    HalfEven,
    /// ROUND_HALF_DOWN: to nearest, ties towards zero.
    HalfDown,
}

impl RoundingMode {
    /// Parses an ESQL rounding mode keyword such as `ROUND_HALF_UP` (case-insensitive).
    pub fn from_keyword(keyword: &str) -> Option<Self> {
        let k = keyword.trim().to_ascii_uppercase();
        Some(match k.as_str() {
            "ROUND_UP" => RoundingMode::Up,
            "ROUND_DOWN" => RoundingMode::Down,
            "ROUND_CEILING" => RoundingMode::Ceiling,
            "ROUND_FLOOR" => RoundingMode::Floor,
            "ROUND_HALF_UP" => RoundingMode::HalfUp,
            "ROUND_HALF_EVEN" => RoundingMode::HalfEven,
            "ROUND_HALF_DOWN" => RoundingMode::HalfDown,
            _ => return None,
        })
    }

    fn to_dec(self) -> Rounding {
        match self {
            RoundingMode::Up => Rounding::Up,
            RoundingMode::Down => Rounding::Down,
            RoundingMode::Ceiling => Rounding::Ceiling,
            RoundingMode::Floor => Rounding::Floor,
            RoundingMode::HalfUp => Rounding::HalfUp,
            RoundingMode::HalfEven => Rounding::HalfEven,
            RoundingMode::HalfDown => Rounding::HalfDown,
        }
    }
}

/// An exact ESQL DECIMAL value. Equality and ordering compare numeric value, so
/// `1.0 == 1.00`; `Decimal::to_string` keeps the digits as written (`0.30`).
#[derive(Clone, Copy)]
pub struct Decimal(Decimal128);

/// The powers of ten that are exact doubles.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

fn context() -> Context<Decimal128> {
    Context::<Decimal128>::default()
}

impl Decimal {
    /// Zero with exponent 0.
    pub const ZERO: Decimal = Decimal(Decimal128::ZERO);

    /// Parses decimal text: optional sign, digits with an optional point, optional
    /// exponent (`E+3`). Surrounding blanks are ignored. More than 34 significant
    /// digits are rounded half-even, as the broker does.
    pub fn parse(text: &str) -> Result<Decimal, ScalarError> {
        let t = text.trim();
        let fail = || ScalarError::cast(text, ScalarType::Decimal);
        // decNumber also accepts "Inf" and "NaN"; ESQL has no such DECIMAL values.
        let body = t.strip_prefix(['+', '-']).unwrap_or(t);
        let first = body.chars().next().ok_or_else(fail)?;
        if !(first.is_ascii_digit() || first == '.') {
            return Err(fail());
        }
        let mut cx = context();
        let d = cx.parse(t).map_err(|_| fail())?;
        if cx.status().overflow() || !d.is_finite() {
            return Err(ScalarError::overflow("CAST", ScalarType::Decimal));
        }
        Ok(Decimal(d))
    }

    /// Builds `coefficient × 10^exponent`; errors when it does not fit a DECIMAL.
    pub fn from_parts(coefficient: i128, exponent: i32) -> Result<Decimal, ScalarError> {
        let text = format!("{coefficient}E{exponent}");
        Decimal::parse(&text)
    }

    /// The exact DECIMAL for an INTEGER.
    pub fn from_i64(n: i64) -> Decimal {
        Decimal(Decimal128::from(n))
    }

    /// The DECIMAL for a FLOAT, rounded to 15 significant digits as the broker does.
    pub fn from_f64(f: f64) -> Result<Decimal, ScalarError> {
        if !f.is_finite() {
            return Err(ScalarError::cast(f.to_string(), ScalarType::Decimal));
        }
        let text = format!("{f:.14e}");
        let d = Decimal::parse(&text)?;
        // Drop the trailing zeros that the fixed 15-digit rendering introduced.
        let mut cx = context();
        let reduced = cx.reduce(d.0);
        let fits_plain = reduced.digits() as i32 + reduced.exponent() <= DECIMAL_DIGITS as i32;
        Ok(if reduced.exponent() > 0 && fits_plain {
            // Keep integral values in plain form (1E+2 → 100).
            let mut r = reduced;
            cx.rescale(&mut r, 0);
            Decimal(r)
        } else {
            Decimal(reduced)
        })
    }

    /// The coefficient (the digits as an integer, with the sign).
    pub fn coefficient(&self) -> i128 {
        self.0.coefficient()
    }

    /// The power of ten the coefficient is scaled by.
    pub fn exponent(&self) -> i32 {
        self.0.exponent()
    }

    /// True for zero of any scale or sign.
    pub fn is_zero(&self) -> bool {
        self.0.is_zero()
    }

    /// True when the value is below zero.
    pub fn is_negative(&self) -> bool {
        self.0.is_negative() && !self.0.is_zero()
    }

    /// True when the value has no fractional part.
    pub fn is_integer(&self) -> bool {
        self.0.is_integer()
    }

    fn finish(cx: &Context<Decimal128>, d: Decimal128, op: &str) -> Result<Decimal, ScalarError> {
        let st = cx.status();
        if st.division_by_zero() {
            return Err(ScalarError::DivisionByZero {
                operation: op.to_string(),
            });
        }
        if st.overflow() || !d.is_finite() {
            return Err(ScalarError::overflow(op, ScalarType::Decimal));
        }
        if st.invalid_operation() || st.division_impossible() {
            return Err(ScalarError::overflow(op, ScalarType::Decimal));
        }
        Ok(Decimal(d))
    }

    /// `self + rhs`, rounded to 34 digits.
    pub fn checked_add(self, rhs: Decimal) -> Result<Decimal, ScalarError> {
        let mut cx = context();
        let r = cx.add(self.0, rhs.0);
        Decimal::finish(&cx, r, "+")
    }

    /// `self - rhs`, rounded to 34 digits.
    pub fn checked_sub(self, rhs: Decimal) -> Result<Decimal, ScalarError> {
        let mut cx = context();
        let r = cx.sub(self.0, rhs.0);
        Decimal::finish(&cx, r, "-")
    }

    /// `self * rhs`, rounded to 34 digits.
    pub fn checked_mul(self, rhs: Decimal) -> Result<Decimal, ScalarError> {
        let mut cx = context();
        let r = cx.mul(self.0, rhs.0);
        Decimal::finish(&cx, r, "*")
    }

    /// `self / rhs`, rounded to 34 digits; the result is reduced (trailing zeros of
    /// an exact quotient dropped) so that 10 / 4 is 2.5.
    pub fn checked_div(self, rhs: Decimal) -> Result<Decimal, ScalarError> {
        if rhs.is_zero() {
            return Err(ScalarError::DivisionByZero {
                operation: "/".to_string(),
            });
        }
        let mut cx = context();
        let r = cx.div(self.0, rhs.0);
        Decimal::finish(&cx, r, "/")
    }

    /// The remainder of truncating division, with the sign of `self` (ESQL MOD).
    pub fn checked_rem(self, rhs: Decimal) -> Result<Decimal, ScalarError> {
        if rhs.is_zero() {
            return Err(ScalarError::DivisionByZero {
                operation: "MOD".to_string(),
            });
        }
        let mut cx = context();
        let r = cx.rem(self.0, rhs.0);
        Decimal::finish(&cx, r, "MOD")
    }

    /// `|self|`.
    pub fn abs(self) -> Decimal {
        if self.0.is_negative() { -self } else { self }
    }

    /// Rounds to `places` digits right of the point (left of it when negative).
    /// A value that already has no more places than asked for is returned unchanged.
    pub fn round_to(self, places: i64, mode: RoundingMode) -> Result<Decimal, ScalarError> {
        let target = -places.clamp(-6176, 6176) as i32;
        if self.exponent() >= target {
            return Ok(self);
        }
        let mut cx = context();
        cx.set_rounding(mode.to_dec());
        let quantum = Decimal::from_parts(1, target)?;
        let r = cx.quantize(self.0, quantum.0);
        Decimal::finish(&cx, r, "ROUND")
    }

    /// The integral value in the given direction, with exponent 0 kept when possible.
    pub fn to_integral(self, mode: RoundingMode) -> Result<Decimal, ScalarError> {
        self.round_to(0, mode)
    }

    /// Converts to INTEGER, rounding the fraction with `mode`; errors past 64 bits.
    pub fn to_i64(self, mode: RoundingMode) -> Result<i64, ScalarError> {
        let integral = self.to_integral(mode)?;
        let e = integral.exponent();
        let c = integral.coefficient();
        let value = if e >= 0 {
            // At most 34 digits of coefficient; the scale must keep it inside i64.
            if e > 19 && c != 0 {
                return Err(ScalarError::overflow("CAST", ScalarType::Integer));
            }
            c.checked_mul(10i128.pow(e as u32))
        } else {
            Some(c)
        };
        value
            .and_then(|v| i64::try_from(v).ok())
            .ok_or_else(|| ScalarError::overflow("CAST", ScalarType::Integer))
    }

    /// The nearest FLOAT.
    pub fn to_f64(self) -> f64 {
        if self.0.is_finite() {
            let m = self.0.coefficient().unsigned_abs();
            let e = self.0.exponent();
            if m <= 1 << 53 && (-22..=22).contains(&e) {
                // The coefficient and 10^|e| are both exact doubles, so one multiplication or
                // division rounds once, to the nearest double (Clinger's fast path): what
                // parsing the text gives, without formatting it.
                let p = POW10[e.unsigned_abs() as usize];
                let v = if e < 0 { m as f64 / p } else { m as f64 * p };
                return if self.0.is_negative() { -v } else { v };
            }
        }
        // Formatting then parsing is exact to the nearest double.
        self.0.to_string().parse::<f64>().unwrap_or(f64::NAN)
    }

    /// Compares numeric values.
    pub fn compare(&self, other: &Decimal) -> Ordering {
        let mut cx = context();
        cx.partial_cmp(self.0, other.0).unwrap_or(Ordering::Equal)
    }

    /// Sign as -1, 0 or 1.
    pub fn signum(&self) -> i32 {
        if self.is_zero() {
            0
        } else if self.0.is_negative() {
            -1
        } else {
            1
        }
    }
}

impl std::ops::Neg for Decimal {
    type Output = Decimal;

    fn neg(self) -> Decimal {
        Decimal(-self.0)
    }
}

impl PartialEq for Decimal {
    fn eq(&self, other: &Decimal) -> bool {
        self.compare(other) == Ordering::Equal
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Decimal) -> Option<Ordering> {
        Some(self.compare(other))
    }
}

impl fmt::Debug for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Decimal({self})")
    }
}

/// Scientific string form of the General Decimal Arithmetic specification, as the
/// broker prints DECIMALs: the digits and scale are kept (`0.30`, `1000`), and
/// positive or very small exponents use `E` notation (`ROUND(27.75, -1)` is `3E+1`).
impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl Decimal {
    /// Plain notation keeping the scale (`0.30`, `-12.5`, `30` for 3E+1), for FORMAT
    /// patterns; scientific notation only past 34 padding zeros.
    pub fn to_plain_string(&self) -> String {
        let e = self.exponent();
        if !(-(DECIMAL_DIGITS as i32 + 34)..=34).contains(&e) {
            return self.0.to_string();
        }
        let c = self.coefficient();
        let negative = self.0.is_negative() && !self.0.is_zero();
        let digits = c.unsigned_abs().to_string();
        let sign = if negative { "-" } else { "" };
        if e >= 0 {
            let zeros = if c == 0 { 0 } else { e as usize };
            return format!("{sign}{digits}{}", "0".repeat(zeros));
        }
        let scale = (-e) as usize;
        if digits.len() > scale {
            let (int, frac) = digits.split_at(digits.len() - scale);
            format!("{sign}{int}.{frac}")
        } else {
            format!("{sign}0.{}{digits}", "0".repeat(scale - digits.len()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).expect("valid decimal")
    }

    #[test]
    fn decimal_keeps_scale_when_printed() {
        assert_eq!(d("00.30").to_string(), "0.30");
        assert_eq!(d("-12.50").to_string(), "-12.50");
        assert_eq!(d("1E+3").to_string(), "1E+3");
        assert_eq!(d("1E+3").to_plain_string(), "1000");
        assert_eq!(d("0.001").to_string(), "0.001");
        assert_eq!(d("0.0000001").to_string(), "1E-7");
        assert_eq!(d("-0.000000123").to_plain_string(), "-0.000000123");
        assert_eq!(d("123").to_string(), "123");
    }

    #[test]
    fn decimal_rejects_non_numbers() {
        assert!(Decimal::parse("abc").is_err());
        assert!(Decimal::parse("NaN").is_err());
        assert!(Decimal::parse("Inf").is_err());
        assert!(Decimal::parse("").is_err());
    }

    #[test]
    fn decimal_arithmetic_is_exact() {
        assert_eq!(d("0.1").checked_add(d("0.2")).unwrap().to_string(), "0.3");
        assert_eq!(d("1.5").checked_mul(d("1.5")).unwrap().to_string(), "2.25");
        assert_eq!(d("10").checked_div(d("4")).unwrap().to_string(), "2.5");
        assert!(d("1").checked_div(d("0")).is_err());
        assert_eq!(d("7").checked_rem(d("-3")).unwrap().to_string(), "1");
        assert_eq!(d("-7").checked_rem(d("3")).unwrap().to_string(), "-1");
    }

    #[test]
    fn decimal_division_gives_34_digits() {
        let third = d("1").checked_div(d("3")).unwrap().to_string();
        assert_eq!(third, format!("0.{}", "3".repeat(34)));
    }

    #[test]
    fn decimal_overflow_is_an_error() {
        let big = d("9E+6144");
        assert!(big.checked_mul(d("10")).is_err());
    }

    #[test]
    fn decimal_rounds_with_modes() {
        assert_eq!(
            d("27.75")
                .round_to(1, RoundingMode::HalfEven)
                .unwrap()
                .to_string(),
            "27.8"
        );
        assert_eq!(
            d("27.75")
                .round_to(0, RoundingMode::HalfEven)
                .unwrap()
                .to_string(),
            "28"
        );
        assert_eq!(
            d("27.75")
                .round_to(-1, RoundingMode::HalfEven)
                .unwrap()
                .to_string(),
            "3E+1"
        );
        assert_eq!(
            d("2.5")
                .round_to(0, RoundingMode::HalfEven)
                .unwrap()
                .to_string(),
            "2"
        );
        assert_eq!(
            d("2.5")
                .round_to(0, RoundingMode::HalfUp)
                .unwrap()
                .to_string(),
            "3"
        );
        assert_eq!(
            d("-2.5")
                .round_to(0, RoundingMode::Floor)
                .unwrap()
                .to_string(),
            "-3"
        );
        assert_eq!(
            d("27.75")
                .round_to(2, RoundingMode::HalfEven)
                .unwrap()
                .to_string(),
            "27.75"
        );
    }

    #[test]
    fn decimal_converts_to_integer() {
        assert_eq!(d("12.5").to_i64(RoundingMode::Down).unwrap(), 12);
        assert_eq!(d("-12.5").to_i64(RoundingMode::HalfUp).unwrap(), -13);
        assert!(d("1E+30").to_i64(RoundingMode::Down).is_err());
        assert_eq!(
            d("9223372036854775807").to_i64(RoundingMode::Down).unwrap(),
            i64::MAX
        );
    }

    #[test]
    fn decimal_from_float_uses_15_digits() {
        assert_eq!(Decimal::from_f64(0.1 + 0.2).unwrap().to_string(), "0.3");
        assert_eq!(Decimal::from_f64(100.0).unwrap().to_string(), "100");
        assert_eq!(Decimal::from_f64(-1.25).unwrap().to_string(), "-1.25");
        let huge = Decimal::from_f64(1.5e300).unwrap();
        assert_eq!((huge.coefficient(), huge.exponent()), (15, 299));
        assert_eq!(huge.to_f64(), 1.5e300);
    }
}
