//! FLOAT to CHARACTER exactly as the broker prints it: scientific notation with
//! an upper-case `E`, a signed exponent, at most 15 significant digits and no
//! trailing zeros (`0.48` → `4.8E-1`, `1.0` → `1E+0`, `0` → `0E+0`).

pub use sluice_tree::text_form::format_float;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_prints_like_the_broker() {
        assert_eq!(format_float(0.48), "4.8E-1");
        assert_eq!(format_float(0.8), "8E-1");
        assert_eq!(format_float(129.408), "1.29408E+2");
        assert_eq!(format_float(35.744), "3.5744E+1");
        assert_eq!(format_float(57.92), "5.792E+1");
        assert_eq!(format_float(1.0), "1E+0");
        assert_eq!(format_float(0.0), "0E+0");
        assert_eq!(format_float(-0.0), "0E+0");
    }

    #[test]
    fn float_prints_15_significant_digits() {
        assert_eq!(format_float(0.1 + 0.2), "3E-1");
        assert_eq!(format_float(1.0 / 3.0), "3.33333333333333E-1");
        assert_eq!(format_float(-1234.5), "-1.2345E+3");
        assert_eq!(format_float(1e300), "1E+300");
        assert_eq!(
            format_float(123_456_789_012_345_680.0),
            "1.23456789012346E+17"
        );
    }

    #[test]
    fn float_computed_values_print_rounded() {
        // 1.2 * 107.84 = 129.40800000000002 in binary; 15 digits hide the noise.
        assert_eq!(format_float(1.2 * 107.84), "1.29408E+2");
    }
}
