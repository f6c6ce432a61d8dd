//! The compiled schema: what the parser and the serialiser walk. Every property has been read
//! and checked; nothing here is looked up by name per message.

use crate::text::{Delims, Encoding};

/// The simple types this implementation reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    String,
    /// A signed or unsigned integer of this many bytes (8 for long and integer).
    Int {
        bytes: u8,
        signed: bool,
    },
    Decimal,
    Boolean,
    Date,
    Time,
    DateTime,
    HexBinary,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Units {
    Bytes,
    Characters,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Length {
    Explicit(usize, Units),
    /// A length read from an earlier element (`{ ../FillerLength }`).
    Expression(RelPath, Units),
    Delimited,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Justify {
    Left,
    Right,
    Center,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Occurs {
    /// Up to maxOccurs, as many as the data holds after minOccurs.
    Implicit,
    /// Exactly maxOccurs.
    Fixed,
    /// As many as the data holds.
    Parsed,
}

/// A relative path such as `../count`: how many levels to go up from the element's parent,
/// then the names to go down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RelPath {
    pub up: usize,
    pub down: Vec<String>,
}

#[derive(Debug, Clone)]
pub(crate) enum Count {
    Occurs(Occurs),
    Expression(RelPath),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SepPos {
    Infix,
    Prefix,
    Postfix,
}

#[derive(Debug, Clone)]
pub(crate) struct Simple {
    pub ty: Ty,
    pub binary: bool,
    pub big_endian: bool,
    pub length: Length,
    pub encoding: Encoding,
    /// The pad character written when `textPadKind="padChar"`.
    pub pad: Option<u8>,
    /// The pad character removed when `textTrimKind="padChar"`.
    pub trim: Option<u8>,
    pub justify: Justify,
    pub fill: u8,
    pub truncate: bool,
    /// From `textNumberPattern`: digits before and after the decimal point, and grouping.
    pub min_int_digits: usize,
    pub frac_digits: Option<usize>,
    pub grouping: bool,
    pub decimal_sep: u8,
    pub group_sep: u8,
    pub true_rep: Vec<u8>,
    pub false_rep: Vec<u8>,
    pub calendar: Option<Vec<crate::text::CalToken>>,
    /// A number held digit by digit (packed, BCD, zoned) instead of as binary or standard text.
    pub digits: Option<crate::numbers::DigitRep>,
    /// Digits after the virtual decimal point of a packed, BCD or zoned number.
    pub scale: usize,
    /// Whether a packed decimal is written with a sign (`decimalSigned`, or a signed integer
    /// type) rather than the unsigned code.
    pub signed: bool,
    /// How a delimited text field escapes its delimiters (`dfdl:escapeSchemeRef`).
    pub escape: Option<Box<crate::escape::EscapeScheme>>,
}

#[derive(Debug, Clone)]
pub(crate) enum Body {
    Simple(Box<Simple>),
    Complex(Box<Group>),
}

#[derive(Debug, Clone)]
pub(crate) struct Element {
    pub name: String,
    /// The schema component path, for errors.
    pub path: String,
    pub min: u32,
    /// None for unbounded.
    pub max: Option<u32>,
    pub count: Count,
    pub initiator: Delims,
    pub terminator: Delims,
    pub nil: Option<Delims>,
    pub default: Option<String>,
    /// An explicit length of a complex element, in bytes.
    pub complex_length: Option<usize>,
    pub body: Body,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GroupKind {
    Sequence,
    Choice,
}

#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub kind: GroupKind,
    pub path: String,
    pub members: Vec<Term>,
    pub separator: Delims,
    pub sep_pos: SepPos,
    pub initiator: Delims,
    pub terminator: Delims,
}

#[derive(Debug, Clone)]
pub(crate) enum Term {
    Element(Box<Element>),
    Group(Box<Group>),
}

impl Term {
    /// The initiator that starts this term's data, when it has one.
    pub fn leading_initiator(&self) -> Option<&Delims> {
        match self {
            Term::Element(e) if !e.initiator.is_empty() => Some(&e.initiator),
            Term::Element(e) => match &e.body {
                Body::Complex(g) => g.leading_initiator(),
                Body::Simple(_) => None,
            },
            Term::Group(g) => g.leading_initiator(),
        }
    }

    /// The name of the first element this term writes (to pick a choice branch).
    pub fn first_name(&self) -> Option<&str> {
        match self {
            Term::Element(e) => Some(&e.name),
            Term::Group(g) => g.members.first().and_then(Term::first_name),
        }
    }
}

impl Group {
    pub fn leading_initiator(&self) -> Option<&Delims> {
        if !self.initiator.is_empty() {
            return Some(&self.initiator);
        }
        if self.kind == GroupKind::Sequence && self.separator.is_empty() {
            return self.members.first().and_then(Term::leading_initiator);
        }
        None
    }
}
