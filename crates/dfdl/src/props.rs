//! DFDL properties: which ones this implementation reads, which it accepts only with the value
//! that matches what it does, and how a component's properties combine with its formats.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::DfdlError;

/// How the compiler treats a property name.
enum Kind {
    /// Read and acted on; its values are checked where it is used.
    Used,
    /// Accepted only with one of these values, which are what this implementation does anyway.
    Only(&'static [&'static str]),
    /// Accepted with any value: it only matters for representations this implementation
    /// rejects elsewhere (floats, bidi text), so it cannot change a result.
    Inert,
}

const TABLE: &[(&str, Kind)] = &[
    ("alignment", Kind::Only(&["1", "implicit"])),
    ("alignmentUnits", Kind::Only(&["bytes", "bits"])),
    ("binaryBooleanFalseRep", Kind::Inert),
    ("binaryBooleanTrueRep", Kind::Inert),
    ("binaryCalendarEpoch", Kind::Inert),
    ("binaryCalendarRep", Kind::Inert),
    ("binaryDecimalVirtualPoint", Kind::Used),
    ("binaryFloatRep", Kind::Inert),
    ("binaryNumberCheckPolicy", Kind::Inert),
    ("binaryNumberRep", Kind::Used),
    ("binaryPackedSignCodes", Kind::Used),
    ("bitOrder", Kind::Only(&["mostSignificantBitFirst"])),
    ("byteOrder", Kind::Used),
    ("calendarCenturyStart", Kind::Inert),
    ("calendarCheckPolicy", Kind::Inert),
    ("calendarDaysInFirstWeek", Kind::Inert),
    ("calendarFirstDayOfWeek", Kind::Inert),
    ("calendarLanguage", Kind::Inert),
    ("calendarObserveDST", Kind::Inert),
    ("calendarPattern", Kind::Used),
    ("calendarPatternKind", Kind::Used),
    ("calendarTimeZone", Kind::Inert),
    ("choiceLengthKind", Kind::Only(&["implicit"])),
    ("decimalSigned", Kind::Used),
    (
        "documentFinalTerminatorCanBeMissing",
        Kind::Only(&["no", "yes"]),
    ),
    (
        "emptyValueDelimiterPolicy",
        Kind::Only(&["both", "initiator", "terminator", "none"]),
    ),
    ("encoding", Kind::Used),
    ("encodingErrorPolicy", Kind::Only(&["replace", "error"])),
    ("escapeSchemeRef", Kind::Used),
    ("fillByte", Kind::Used),
    ("floating", Kind::Only(&["no"])),
    ("ignoreCase", Kind::Only(&["no"])),
    ("initiatedContent", Kind::Only(&["no", "yes"])),
    ("initiator", Kind::Used),
    ("leadingSkip", Kind::Only(&["0"])),
    ("length", Kind::Used),
    ("lengthKind", Kind::Used),
    ("lengthUnits", Kind::Used),
    ("nilKind", Kind::Only(&["literalValue"])),
    ("nilValue", Kind::Used),
    (
        "nilValueDelimiterPolicy",
        Kind::Only(&["both", "initiator", "terminator", "none"]),
    ),
    ("occursCount", Kind::Used),
    ("occursCountKind", Kind::Used),
    ("outputNewLine", Kind::Used),
    ("prefixIncludesPrefixLength", Kind::Inert),
    ("prefixLengthType", Kind::Inert),
    ("representation", Kind::Used),
    ("separator", Kind::Used),
    ("separatorPosition", Kind::Used),
    (
        "separatorSuppressionPolicy",
        Kind::Only(&["never", "trailingEmpty", "trailingEmptyStrict"]),
    ),
    ("sequenceKind", Kind::Only(&["ordered"])),
    ("terminator", Kind::Used),
    ("textBidi", Kind::Only(&["no"])),
    ("textBooleanFalseRep", Kind::Used),
    ("textBooleanJustification", Kind::Used),
    ("textBooleanPadCharacter", Kind::Used),
    ("textBooleanTrueRep", Kind::Used),
    ("textCalendarJustification", Kind::Used),
    ("textCalendarPadCharacter", Kind::Used),
    ("textNumberCheckPolicy", Kind::Inert),
    ("textNumberJustification", Kind::Used),
    ("textNumberPadCharacter", Kind::Used),
    ("textNumberPattern", Kind::Used),
    ("textNumberRep", Kind::Used),
    ("textNumberRounding", Kind::Inert),
    ("textNumberRoundingIncrement", Kind::Inert),
    ("textNumberRoundingMode", Kind::Inert),
    ("textOutputMinLength", Kind::Only(&["0"])),
    ("textPadKind", Kind::Used),
    ("textStandardBase", Kind::Only(&["10"])),
    ("textStandardDecimalSeparator", Kind::Used),
    ("textStandardExponentRep", Kind::Inert),
    ("textStandardGroupingSeparator", Kind::Used),
    ("textStandardInfinityRep", Kind::Inert),
    ("textStandardNaNRep", Kind::Inert),
    ("textStandardZeroRep", Kind::Only(&[""])),
    ("textStringJustification", Kind::Used),
    ("textStringPadCharacter", Kind::Used),
    ("textTrimKind", Kind::Used),
    ("textZonedSignStyle", Kind::Used),
    ("trailingSkip", Kind::Only(&["0"])),
    ("truncateSpecifiedLengthString", Kind::Used),
    ("utf16Width", Kind::Only(&["fixed"])),
];

/// Where a property was set.
#[derive(Debug, Clone)]
pub(crate) struct Loc {
    pub file: Arc<str>,
    pub line: u32,
}

/// A set of properties, later entries overriding earlier ones.
#[derive(Debug, Clone, Default)]
pub(crate) struct Props {
    map: HashMap<String, (String, Loc)>,
}

/// Check a property as it is read from a schema: its name must be known, and a property this
/// implementation only accepts with some values must have one of them.
pub(crate) fn check(name: &str, value: &str, loc: &Loc) -> Result<(), DfdlError> {
    let Some((_, kind)) = TABLE.iter().find(|(n, _)| *n == name) else {
        return Err(DfdlError::schema(
            &loc.file,
            loc.line,
            format!("DFDL property 'dfdl:{name}' is unknown or not supported"),
        ));
    };
    if let Kind::Only(values) = kind
        && !values.contains(&value)
    {
        return Err(DfdlError::schema(
            &loc.file,
            loc.line,
            format!(
                "DFDL property 'dfdl:{name}' has the value '{value}'; supported: {}",
                values
                    .iter()
                    .map(|v| format!("'{v}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    Ok(())
}

impl Props {
    pub fn set(&mut self, name: &str, value: &str, loc: Loc) -> Result<(), DfdlError> {
        check(name, value, &loc)?;
        self.map.insert(name.to_string(), (value.to_string(), loc));
        Ok(())
    }

    /// Apply `other` over these properties.
    pub fn overlay(&mut self, other: &Props) {
        for (k, v) in &other.map {
            self.map.insert(k.clone(), v.clone());
        }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.map.get(name).map(|(v, _)| v.as_str())
    }

    /// The property's value, or `default` when no format sets it.
    pub fn or<'a>(&'a self, name: &str, default: &'a str) -> &'a str {
        self.get(name).unwrap_or(default)
    }

    /// An error about the value of `name`, at the place that set it (or `fallback`).
    pub fn bad(&self, name: &str, fallback: &Loc, message: impl Into<String>) -> DfdlError {
        let loc = self.map.get(name).map(|(_, l)| l).unwrap_or(fallback);
        DfdlError::schema(
            &loc.file,
            loc.line,
            format!("dfdl:{name}: {}", message.into()),
        )
    }
}
