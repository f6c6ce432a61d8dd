//! The correlation names each kind of module can use, and the parser domain names that
//! start field-type constants such as `XMLNSC.Attribute`.

use crate::syntax::ast::ModuleKind;

const COMPUTE: &[&str] = &[
    "InputRoot",
    "InputBody",
    "InputProperties",
    "InputLocalEnvironment",
    "InputDestinationList",
    "InputExceptionList",
    "OutputRoot",
    "OutputLocalEnvironment",
    "OutputDestinationList",
    "OutputExceptionList",
    "Environment",
    "Context",
    "Database",
];

/// Filter and Database nodes see one message, under these names.
const FILTER: &[&str] = &[
    "Root",
    "Body",
    "Properties",
    "LocalEnvironment",
    "DestinationList",
    "ExceptionList",
    "Environment",
    "Context",
    "Database",
];

/// Parser domains whose field-type constants (`XMLNSC.Attribute`, `JSON.Array`) look
/// like field references.
const DOMAINS: &[&str] = &[
    "XMLNSC",
    "XMLNS",
    "XML",
    "JSON",
    "MRM",
    "DFDL",
    "BLOB",
    "MIME",
    "SOAP",
    "DataObject",
    "JMSMap",
    "JMSStream",
    "IDOC",
    "MQRFH2",
    "MQRFH2C",
];

/// The correlation names a module of `kind` can use.
pub fn correlation_names(kind: ModuleKind) -> &'static [&'static str] {
    match kind {
        ModuleKind::Compute => COMPUTE,
        ModuleKind::Filter | ModuleKind::Database => FILTER,
    }
}

/// True when `name` is a correlation name of any kind of module.
pub fn is_correlation_name(name: &str) -> bool {
    COMPUTE.contains(&name) || FILTER.contains(&name)
}

pub fn is_domain_name(name: &str) -> bool {
    DOMAINS.contains(&name)
}

/// A correlation name spelt like `name` apart from case, for a "did you mean" hint.
pub fn correlation_like(name: &str, kind: Option<ModuleKind>) -> Option<&'static str> {
    let pool: &[&[&'static str]] = match kind {
        Some(k) => &[correlation_names(k)],
        None => &[COMPUTE, FILTER],
    };
    pool.iter()
        .flat_map(|names| names.iter())
        .find(|c| c.eq_ignore_ascii_case(name))
        .copied()
}

/// The Compute equivalent of a Filter correlation name and the other way round, for a
/// hint when a module uses the other node's names.
pub fn counterpart(name: &str, kind: ModuleKind) -> Option<&'static str> {
    let pairs: &[(&str, &str)] = &[
        ("Root", "InputRoot"),
        ("Body", "InputBody"),
        ("Properties", "InputProperties"),
        ("LocalEnvironment", "InputLocalEnvironment"),
        ("DestinationList", "InputDestinationList"),
        ("ExceptionList", "InputExceptionList"),
    ];
    pairs.iter().find_map(|&(filter, compute)| match kind {
        ModuleKind::Compute if filter == name => Some(compute),
        ModuleKind::Filter | ModuleKind::Database if compute == name => Some(filter),
        _ => None,
    })
}
