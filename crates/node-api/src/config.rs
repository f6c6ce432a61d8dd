//! A node type's properties, declared once as a Rust struct with [`properties!`](crate::properties).
//!
//! The declaration gives the loader each property's name, kind, default and doc (so a flow file
//! is checked against it, with "did you mean" for a misspelt name), gives the node reference and
//! the admin API the same, and reads the validated values into the struct's typed fields. No
//! node reads a property by its name.

use std::collections::BTreeMap;

/// A property value from a flow file, already checked against its [`PropKind`].
#[derive(Clone, Debug, PartialEq)]
pub enum PropValue {
    String(String),
    Integer(i64),
    Boolean(bool),
    Float(f64),
    List(Vec<String>),
    /// Keeps the order of the flow file (Route tries rules in that order).
    Map(Vec<(String, String)>),
}

/// A node's validated property values, defaults filled in: what the loader hands a node type's
/// [`Properties::read`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeConfig {
    values: BTreeMap<String, PropValue>,
}

impl NodeConfig {
    pub fn insert(&mut self, name: &str, v: PropValue) {
        self.values.insert(name.to_string(), v);
    }

    /// Every property, by name (the admin API shows them).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &PropValue)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The value of a declared property, for [`PropertyType::read`]; node code reads its typed
    /// fields instead.
    pub fn value(&self, name: &str) -> Option<&PropValue> {
        self.values.get(name)
    }
}

/// A problem with a node's properties, found while building it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ConfigError {
    /// The property at fault, so the loader can point at its line.
    pub property: Option<String>,
    pub message: String,
    pub hint: Option<String>,
}

impl ConfigError {
    /// An error about one property.
    pub fn property(name: &str, message: impl Into<String>) -> ConfigError {
        ConfigError {
            property: Some(name.to_string()),
            message: message.into(),
            hint: None,
        }
    }

    /// An error about the node as a whole.
    pub fn node(message: impl Into<String>) -> ConfigError {
        ConfigError {
            property: None,
            message: message.into(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> ConfigError {
        self.hint = Some(hint.into());
        self
    }
}

/// The kind of a node property's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropKind {
    String,
    Integer,
    Boolean,
    Float,
    /// One of the listed words.
    Enum(&'static [&'static str]),
    /// A list of strings.
    StringList,
    /// A map from names to strings (for example Route rules).
    StringMap,
}

impl PropKind {
    /// How the docs name the kind.
    pub fn describe(&self) -> String {
        match self {
            PropKind::String => "string".into(),
            PropKind::Integer => "integer".into(),
            PropKind::Boolean => "boolean".into(),
            PropKind::Float => "number".into(),
            PropKind::Enum(words) => format!("one of {}", words.join(", ")),
            PropKind::StringList => "list of strings".into(),
            PropKind::StringMap => "map of name to string".into(),
        }
    }
}

/// A node property: its name (snake_case, with unit suffixes), kind, default and doc.
#[derive(Clone, Copy, Debug)]
pub struct PropSpec {
    pub name: &'static str,
    pub kind: PropKind,
    /// The default as YAML text; `None` when the property is required or may be absent.
    pub default: Option<&'static str>,
    pub required: bool,
    /// The doc comment of its field, one line per source line.
    pub doc: &'static str,
}

impl PropSpec {
    /// The doc as one paragraph.
    pub fn doc_text(&self) -> String {
        join_doc_lines(self.doc)
    }
}

/// Doc-comment lines (each with its leading space) as one paragraph.
pub fn join_doc_lines(doc: &str) -> String {
    doc.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A node type's property set: the struct [`properties!`](crate::properties) declares.
pub trait Properties: Sized {
    /// Every property, in declaration order (groups spliced in where they stand).
    fn declare(out: &mut Vec<PropSpec>);

    /// The typed values from the loader's validated ones.
    fn read(c: &NodeConfig) -> Result<Self, ConfigError>;
}

/// A type a property field may have. Property sets implement it too, which is how a group of
/// properties (say `domain` and `parse_timing`) is shared between node types.
pub trait PropertyType: Sized {
    fn declare(
        name: &'static str,
        doc: &'static str,
        default: Option<&'static str>,
        out: &mut Vec<PropSpec>,
    );

    fn read(name: &'static str, c: &NodeConfig) -> Result<Self, ConfigError>;
}

/// A map property: names to strings, in the order the flow file wrote them.
pub type StringMap = Vec<(String, String)>;

/// The declaration of a property of a plain kind.
pub fn plain(
    name: &'static str,
    kind: PropKind,
    doc: &'static str,
    default: Option<&'static str>,
    optional: bool,
) -> PropSpec {
    PropSpec {
        name,
        kind,
        default,
        required: default.is_none() && !optional,
        doc,
    }
}

/// The error of a value the loader should have refused: its kind differs from the declaration.
pub fn wrong_kind(name: &'static str) -> ConfigError {
    ConfigError::property(
        name,
        format!("`{name}` has a value of the wrong kind (this is a bug, please report it)"),
    )
}

/// A property's name from its field's (`r#match` is the property `match`).
pub fn field_name(field: &'static str) -> &'static str {
    field.strip_prefix("r#").unwrap_or(field)
}

fn required<'c>(name: &'static str, c: &'c NodeConfig) -> Result<&'c PropValue, ConfigError> {
    c.value(name)
        .ok_or_else(|| ConfigError::property(name, format!("`{name}` is required")))
}

/// Implements [`PropertyType`] for a type read from one kind of [`PropValue`].
macro_rules! plain_property {
    ($ty:ty, $kind:expr, |$name:ident, $v:ident| $read:expr) => {
        impl PropertyType for $ty {
            fn declare(
                name: &'static str,
                doc: &'static str,
                default: Option<&'static str>,
                out: &mut Vec<PropSpec>,
            ) {
                out.push(plain(name, $kind, doc, default, false));
            }

            fn read($name: &'static str, c: &NodeConfig) -> Result<Self, ConfigError> {
                let $v = required($name, c)?;
                $read
            }
        }
    };
}

plain_property!(String, PropKind::String, |name, v| match v {
    PropValue::String(s) => Ok(s.clone()),
    _ => Err(wrong_kind(name)),
});

plain_property!(bool, PropKind::Boolean, |name, v| match v {
    PropValue::Boolean(b) => Ok(*b),
    _ => Err(wrong_kind(name)),
});

plain_property!(f64, PropKind::Float, |name, v| match v {
    PropValue::Float(f) => Ok(*f),
    PropValue::Integer(i) => Ok(*i as f64),
    _ => Err(wrong_kind(name)),
});

plain_property!(i64, PropKind::Integer, |name, v| match v {
    PropValue::Integer(i) => Ok(*i),
    _ => Err(wrong_kind(name)),
});

plain_property!(u32, PropKind::Integer, |name, v| match v {
    PropValue::Integer(i) => u32::try_from(*i).map_err(|_| {
        ConfigError::property(
            name,
            format!("`{name}` must be a whole number from 0 to {}", u32::MAX),
        )
    }),
    _ => Err(wrong_kind(name)),
});

plain_property!(u64, PropKind::Integer, |name, v| match v {
    PropValue::Integer(i) => u64::try_from(*i)
        .map_err(|_| { ConfigError::property(name, format!("`{name}` must not be negative")) }),
    _ => Err(wrong_kind(name)),
});

plain_property!(Vec<String>, PropKind::StringList, |name, v| match v {
    PropValue::List(l) => Ok(l.clone()),
    _ => Err(wrong_kind(name)),
});

plain_property!(StringMap, PropKind::StringMap, |name, v| match v {
    PropValue::Map(m) => Ok(m.clone()),
    _ => Err(wrong_kind(name)),
});

/// A property that may be left out (and has no default).
impl<T: PropertyType> PropertyType for Option<T> {
    fn declare(
        name: &'static str,
        doc: &'static str,
        default: Option<&'static str>,
        out: &mut Vec<PropSpec>,
    ) {
        let at = out.len();
        T::declare(name, doc, default, out);
        for p in &mut out[at..] {
            p.required = false;
        }
    }

    fn read(name: &'static str, c: &NodeConfig) -> Result<Self, ConfigError> {
        match c.value(name) {
            None => Ok(None),
            Some(_) => T::read(name, c).map(Some),
        }
    }
}

/// Declares a node type's properties: a struct with one field per property, each with a doc
/// comment (the property's doc) and, after `=`, its default as YAML text. A field without a
/// default is required unless its type is an `Option`. A field whose type is another property
/// set, marked `..`, splices that set's properties in (`..parsing: BodyParsingProps`).
///
/// ```
/// sluice_node_api::properties! {
///     /// Properties of an example node.
///     pub struct ExampleProps {
///         /// The queue to read.
///         queue: String,
///         /// How many messages a unit of work takes.
///         commit_count: u32 = "1",
///         /// A file to log to.
///         log_file: Option<String>,
///     }
/// }
/// ```
#[macro_export]
macro_rules! properties {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[doc = $doc:literal])*
                $(..)? $field:ident : $ty:ty $(= $default:literal)?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug)]
        $vis struct $name {
            $(
                $(#[doc = $doc])*
                pub $field: $ty,
            )*
        }

        impl $crate::Properties for $name {
            fn declare(out: &mut ::std::vec::Vec<$crate::PropSpec>) {
                $(
                    <$ty as $crate::PropertyType>::declare(
                        $crate::config_field_name(stringify!($field)),
                        concat!($($doc, "\n"),*),
                        $crate::properties!(@default $($default)?),
                        out,
                    );
                )*
            }

            fn read(c: &$crate::NodeConfig) -> ::std::result::Result<Self, $crate::ConfigError> {
                Ok($name {
                    $( $field: <$ty as $crate::PropertyType>::read($crate::config_field_name(stringify!($field)), c)?, )*
                })
            }
        }

        impl $crate::PropertyType for $name {
            fn declare(
                _: &'static str,
                _: &'static str,
                _: ::std::option::Option<&'static str>,
                out: &mut ::std::vec::Vec<$crate::PropSpec>,
            ) {
                <$name as $crate::Properties>::declare(out)
            }

            fn read(_: &'static str, c: &$crate::NodeConfig) -> ::std::result::Result<Self, $crate::ConfigError> {
                <$name as $crate::Properties>::read(c)
            }
        }
    };
    (@default $d:literal) => { ::std::option::Option::Some($d) };
    (@default) => { ::std::option::Option::None };
}

/// Declares an enumerated property type: each variant with the word a flow file writes.
///
/// ```
/// sluice_node_api::property_enum! {
///     /// Where a record goes.
///     pub enum Destination { None = "none", Stdout = "stdout", File = "file" }
/// }
/// ```
#[macro_export]
macro_rules! property_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[doc = $doc:literal])* $variant:ident = $word:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl $name {
            /// The words a flow file may write, in declaration order.
            pub const WORDS: &'static [&'static str] = &[$($word),*];

            /// The word a flow file writes for this value.
            pub fn word(self) -> &'static str {
                match self { $( $name::$variant => $word, )* }
            }
        }

        impl $crate::PropertyType for $name {
            fn declare(
                name: &'static str,
                doc: &'static str,
                default: ::std::option::Option<&'static str>,
                out: &mut ::std::vec::Vec<$crate::PropSpec>,
            ) {
                out.push($crate::config_plain(name, $crate::PropKind::Enum($name::WORDS), doc, default, false));
            }

            fn read(name: &'static str, c: &$crate::NodeConfig) -> ::std::result::Result<Self, $crate::ConfigError> {
                match c.value(name) {
                    $( ::std::option::Option::Some($crate::PropValue::String(s)) if s == $word => Ok($name::$variant), )*
                    _ => Err($crate::config_wrong_kind(name)),
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::property_enum! {
        /// Test enum.
        enum Mode { Yes = "yes", No = "no" }
    }

    crate::properties! {
        /// A group.
        struct Group {
            /// The domain.
            domain: String = "BLOB",
        }
    }

    crate::properties! {
        /// Test properties.
        struct Props {
            /// The queue.
            /// Second line.
            queue: String,
            /// The mode.
            mode: Mode = "yes",
            /// A count.
            count: u32 = "1",
            /// A file.
            file: Option<String>,
            /// Spliced.
            ..group: Group,
        }
    }

    #[test]
    fn declaration_lists_properties_in_order_when_a_group_is_spliced() {
        let mut specs = Vec::new();
        <Props as Properties>::declare(&mut specs);
        let names: Vec<_> = specs.iter().map(|p| p.name).collect();
        assert_eq!(names, ["queue", "mode", "count", "file", "domain"]);
        assert!(specs[0].required);
        assert!(!specs[1].required && !specs[3].required);
        assert_eq!(specs[1].kind, PropKind::Enum(&["yes", "no"]));
        assert_eq!(specs[0].doc_text(), "The queue. Second line.");
        assert_eq!(specs[4].default, Some("BLOB"));
    }

    #[test]
    fn read_gives_typed_values_when_the_config_is_valid() {
        let mut c = NodeConfig::default();
        c.insert("queue", PropValue::String("IN".into()));
        c.insert("mode", PropValue::String("no".into()));
        c.insert("count", PropValue::Integer(3));
        c.insert("domain", PropValue::String("JSON".into()));
        let p = <Props as Properties>::read(&c).unwrap();
        assert_eq!(p.queue, "IN");
        assert_eq!(p.mode, Mode::No);
        assert_eq!(p.mode.word(), "no");
        assert_eq!(p.count, 3);
        assert_eq!(p.file, None);
        assert_eq!(p.group.domain, "JSON");
    }

    #[test]
    fn read_fails_naming_the_property_when_a_count_is_negative() {
        let mut c = NodeConfig::default();
        c.insert("queue", PropValue::String("IN".into()));
        c.insert("mode", PropValue::String("no".into()));
        c.insert("count", PropValue::Integer(-1));
        c.insert("domain", PropValue::String("JSON".into()));
        let e = <Props as Properties>::read(&c).unwrap_err();
        assert_eq!(e.property.as_deref(), Some("count"));
    }
}
