//! Compiling a simple element's representation: its type, length, padding, number and
//! calendar patterns.

use crate::compile::{Facets, explicit_length, rel_path};
use crate::error::DfdlError;
use crate::model::*;
use crate::numbers::{DigitRep, SignCodes, ZonedStyle, zoned_pattern};
use crate::props::{Loc, Props};
use crate::text::{Delims, Encoding, calendar_pattern};

pub(crate) fn builtin(name: &str) -> Option<Ty> {
    Some(match name {
        "string" | "token" | "normalizedString" => Ty::String,
        "long" | "integer" => Ty::Int {
            bytes: 8,
            signed: true,
        },
        "int" => Ty::Int {
            bytes: 4,
            signed: true,
        },
        "short" => Ty::Int {
            bytes: 2,
            signed: true,
        },
        "byte" => Ty::Int {
            bytes: 1,
            signed: true,
        },
        "unsignedLong" | "nonNegativeInteger" => Ty::Int {
            bytes: 8,
            signed: false,
        },
        "unsignedInt" => Ty::Int {
            bytes: 4,
            signed: false,
        },
        "unsignedShort" => Ty::Int {
            bytes: 2,
            signed: false,
        },
        "unsignedByte" => Ty::Int {
            bytes: 1,
            signed: false,
        },
        "decimal" => Ty::Decimal,
        "boolean" => Ty::Boolean,
        "date" => Ty::Date,
        "time" => Ty::Time,
        "dateTime" => Ty::DateTime,
        "hexBinary" => Ty::HexBinary,
        _ => return None,
    })
}

fn pad_char(props: &Props, name: &str, enc: &Encoding, loc: &Loc) -> Result<u8, DfdlError> {
    let d =
        Delims::parse(props.or(name, "%SP;"), enc, b"\n").map_err(|m| props.bad(name, loc, m))?;
    match d.out.as_slice() {
        [b] => Ok(*b),
        _ => Err(props.bad(name, loc, "a pad character must be one byte")),
    }
}

pub(crate) fn simple(
    ty: Ty,
    props: &Props,
    facets: &Facets,
    encoding: Encoding,
    loc: &Loc,
) -> Result<Simple, DfdlError> {
    let binary = match props.or("representation", "text") {
        "text" => false,
        "binary" => true,
        other => {
            return Err(props.bad(
                "representation",
                loc,
                format!("'{other}' is not a representation"),
            ));
        }
    };
    let binary = binary && !matches!(ty, Ty::String);
    let number = matches!(ty, Ty::Int { .. } | Ty::Decimal);
    let mut digits = None;
    if binary {
        match ty {
            Ty::Int { .. } | Ty::Decimal => match props.or("binaryNumberRep", "binary") {
                "binary" if ty != Ty::Decimal => {}
                "binary" => {
                    return Err(props.bad(
                        "binaryNumberRep",
                        loc,
                        "a binary xs:decimal is not supported: use 'packed' or 'bcd'",
                    ));
                }
                "packed" => {
                    let codes = SignCodes::parse(props.or("binaryPackedSignCodes", "C D F C"))
                        .map_err(|m| props.bad("binaryPackedSignCodes", loc, m))?;
                    digits = Some(DigitRep::Packed(codes));
                }
                "bcd" => digits = Some(DigitRep::Bcd),
                other => {
                    return Err(props.bad(
                        "binaryNumberRep",
                        loc,
                        format!("'{other}' is not supported (binary, packed or bcd)"),
                    ));
                }
            },
            Ty::HexBinary => {}
            _ => {
                return Err(props.bad(
                    "representation",
                    loc,
                    "binary is supported for numbers and xs:hexBinary only",
                ));
            }
        }
    } else if number {
        match props.or("textNumberRep", "standard") {
            "standard" => {}
            "zoned" => {
                let style = props.or("textZonedSignStyle", "asciiStandard");
                let style = ZonedStyle::from_name(style).ok_or_else(|| {
                    props.bad(
                        "textZonedSignStyle",
                        loc,
                        format!("'{style}' is not a zoned sign style"),
                    )
                })?;
                let (sign, _) = zoned_pattern(props.or("textNumberPattern", "#0"))
                    .map_err(|m| props.bad("textNumberPattern", loc, m))?;
                digits = Some(DigitRep::Zoned {
                    sign,
                    style,
                    ebcdic: matches!(encoding, Encoding::Page(_)),
                });
            }
            other => {
                return Err(props.bad(
                    "textNumberRep",
                    loc,
                    format!("'{other}' is not a text number representation"),
                ));
            }
        }
    }
    let scale = match digits {
        Some(DigitRep::Zoned { .. }) => {
            zoned_pattern(props.or("textNumberPattern", "#0"))
                .map_err(|m| props.bad("textNumberPattern", loc, m))?
                .1
        }
        Some(_) => props
            .or("binaryDecimalVirtualPoint", "0")
            .trim()
            .parse::<usize>()
            .map_err(|_| props.bad("binaryDecimalVirtualPoint", loc, "not a whole number"))?,
        None => 0,
    };
    if scale > 0 && ty != Ty::Decimal {
        return Err(props.bad(
            if binary {
                "binaryDecimalVirtualPoint"
            } else {
                "textNumberPattern"
            },
            loc,
            "only an xs:decimal has digits after a virtual decimal point",
        ));
    }
    let signed = match ty {
        Ty::Int { signed, .. } => signed,
        _ => match props.or("decimalSigned", "yes") {
            "yes" => true,
            "no" => false,
            other => {
                return Err(props.bad("decimalSigned", loc, format!("'{other}' is not yes or no")));
            }
        },
    };
    let big_endian = match props.or("byteOrder", "bigEndian") {
        "bigEndian" => true,
        "littleEndian" => false,
        other => return Err(props.bad("byteOrder", loc, format!("'{other}' is not a byte order"))),
    };
    let units = match props.or("lengthUnits", if binary { "bytes" } else { "characters" }) {
        "bytes" => Units::Bytes,
        "characters" => Units::Characters,
        other => return Err(props.bad("lengthUnits", loc, format!("'{other}' is not supported"))),
    };
    let length = match props.or("lengthKind", "delimited") {
        "explicit"
            if props
                .get("length")
                .is_some_and(|l| l.trim_start().starts_with('{')) =>
        {
            let e = props.or("length", "");
            Length::Expression(rel_path(e).map_err(|m| props.bad("length", loc, m))?, units)
        }
        "explicit" => Length::Explicit(explicit_length(props, loc)?, units),
        "delimited" if binary && !matches!(ty, Ty::HexBinary) => {
            return Err(props.bad("lengthKind", loc, "a binary number cannot be delimited"));
        }
        "delimited" => Length::Delimited,
        "implicit" if digits.is_some() => {
            return Err(props.bad(
                "lengthKind",
                loc,
                "a packed, BCD or zoned number needs an explicit length",
            ));
        }
        "implicit" => match (ty, binary, facets.max_length) {
            (Ty::Int { bytes, .. }, true, _) => Length::Explicit(usize::from(bytes), Units::Bytes),
            (_, false, Some(n)) => Length::Explicit(n, units),
            _ => {
                return Err(props.bad(
                    "lengthKind",
                    loc,
                    "'implicit' needs a binary integer or an xs:maxLength facet",
                ));
            }
        },
        other => return Err(props.bad("lengthKind", loc, format!("'{other}' is not supported"))),
    };
    if binary && units == Units::Characters {
        return Err(props.bad("lengthUnits", loc, "binary data is measured in bytes"));
    }
    let (pad_name, just_name, default_just) = match ty {
        Ty::String | Ty::HexBinary => ("textStringPadCharacter", "textStringJustification", "left"),
        Ty::Int { .. } | Ty::Decimal => {
            ("textNumberPadCharacter", "textNumberJustification", "right")
        }
        Ty::Boolean => (
            "textBooleanPadCharacter",
            "textBooleanJustification",
            "left",
        ),
        Ty::Date | Ty::Time | Ty::DateTime => (
            "textCalendarPadCharacter",
            "textCalendarJustification",
            "left",
        ),
    };
    let pad = match props.or("textPadKind", "none") {
        "none" => None,
        "padChar" => Some(pad_char(props, pad_name, &encoding, loc)?),
        other => return Err(props.bad("textPadKind", loc, format!("'{other}' is not supported"))),
    };
    let trim = match props.or("textTrimKind", "none") {
        "none" => None,
        "padChar" => Some(pad_char(props, pad_name, &encoding, loc)?),
        other => return Err(props.bad("textTrimKind", loc, format!("'{other}' is not supported"))),
    };
    let justify = match props.or(just_name, default_just) {
        "left" => Justify::Left,
        "right" => Justify::Right,
        "center" => Justify::Center,
        other => {
            return Err(props.bad(just_name, loc, format!("'{other}' is not a justification")));
        }
    };
    let fill = {
        let d = Delims::parse(props.or("fillByte", "%SP;"), &encoding, b"\n")
            .map_err(|m| props.bad("fillByte", loc, m))?;
        match d.out.as_slice() {
            [b] => *b,
            _ => return Err(props.bad("fillByte", loc, "must be one byte")),
        }
    };
    let mut s = Simple {
        ty,
        binary,
        big_endian,
        length,
        encoding,
        pad,
        trim,
        justify,
        fill,
        truncate: props.or("truncateSpecifiedLengthString", "no") == "yes",
        min_int_digits: 1,
        frac_digits: None,
        grouping: false,
        decimal_sep: b'.',
        group_sep: b',',
        true_rep: b"true".to_vec(),
        false_rep: b"false".to_vec(),
        calendar: None,
        digits,
        scale,
        signed,
        escape: None,
    };
    if number && !binary && digits.is_none() {
        let pat = props.or("textNumberPattern", "#0");
        number_pattern(pat, &mut s).map_err(|m| props.bad("textNumberPattern", loc, m))?;
        let one = |name: &str, d: &str| -> Result<u8, DfdlError> {
            let v = props.or(name, d);
            match v.as_bytes() {
                [b] => Ok(*b),
                _ => Err(props.bad(name, loc, format!("'{v}' is not one character"))),
            }
        };
        s.decimal_sep = one("textStandardDecimalSeparator", ".")?;
        s.group_sep = one("textStandardGroupingSeparator", ",")?;
    }
    if ty == Ty::Boolean {
        let rep = |name: &str, d: &str| -> Result<Vec<u8>, DfdlError> {
            let v = props.or(name, d);
            let mut b = Vec::new();
            encoding
                .encode(v.split_ascii_whitespace().next().unwrap_or(""), &mut b)
                .map_err(|m| props.bad(name, loc, m))?;
            Ok(b)
        };
        s.true_rep = rep("textBooleanTrueRep", "true")?;
        s.false_rep = rep("textBooleanFalseRep", "false")?;
    }
    if matches!(ty, Ty::Date | Ty::Time | Ty::DateTime) {
        let implicit = match ty {
            Ty::Date => "yyyy-MM-dd",
            Ty::Time => "HH:mm:ss",
            _ => "yyyy-MM-dd'T'HH:mm:ss",
        };
        let pat = match props.or("calendarPatternKind", "implicit") {
            "implicit" => implicit,
            "explicit" => props.or("calendarPattern", implicit),
            other => {
                return Err(props.bad(
                    "calendarPatternKind",
                    loc,
                    format!("'{other}' is not supported"),
                ));
            }
        };
        s.calendar = Some(calendar_pattern(pat).map_err(|m| props.bad("calendarPattern", loc, m))?);
    }
    Ok(s)
}

/// The basics of a number pattern: `#0`, `000`, `#,##0.00`.
fn number_pattern(pat: &str, s: &mut Simple) -> Result<(), String> {
    let positive = pat.split(';').next().unwrap_or(pat);
    if let Some(c) = positive
        .chars()
        .find(|c| !matches!(c, '#' | '0' | ',' | '.'))
    {
        return Err(format!("'{c}' in the pattern '{pat}' is not supported"));
    }
    let (int, frac) = match positive.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (positive, None),
    };
    s.min_int_digits = int.chars().filter(|&c| c == '0').count();
    s.grouping = int.contains(',');
    s.frac_digits = frac.map(|f| f.chars().filter(|&c| c == '0' || c == '#').count());
    Ok(())
}
