//! SOAP faults: reading a `Body.Fault` out of the tree, and writing a fault envelope.
//!
//! SOAP 1.1 faults carry `faultcode`, `faultstring`, `faultactor` and `detail`; SOAP 1.2 faults
//! `Code/Value` (with optional `Subcode`), `Reason/Text`, `Role` and `Detail`. Both are read
//! into one [`Fault`]; the codes are mapped between versions (Client ↔ Sender, Server ↔
//! Receiver) when a fault is written in the other version.

use sluice_tree::{NodeId, Tree, TreeError};

use super::SoapVersion;
use crate::xmlnsc::field_type;

/// Who is at fault, in version-neutral terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultCode {
    /// The request was wrong (1.1 `Client`, 1.2 `Sender`).
    Client,
    /// The service failed (1.1 `Server`, 1.2 `Receiver`).
    Server,
    /// The envelope's version is not one the service speaks (`VersionMismatch`).
    VersionMismatch,
    /// A header block marked mustUnderstand was not understood (`MustUnderstand`).
    MustUnderstand,
}

impl FaultCode {
    /// The local name of the code in `version`.
    pub fn local_name(self, version: SoapVersion) -> &'static str {
        match (self, version) {
            (FaultCode::Client, SoapVersion::V11) => "Client",
            (FaultCode::Client, SoapVersion::V12) => "Sender",
            (FaultCode::Server, SoapVersion::V11) => "Server",
            (FaultCode::Server, SoapVersion::V12) => "Receiver",
            (FaultCode::VersionMismatch, _) => "VersionMismatch",
            (FaultCode::MustUnderstand, _) => "MustUnderstand",
        }
    }

    /// The code whose local name is `name` in either version.
    pub fn from_local_name(name: &str) -> Option<FaultCode> {
        let local = name.rsplit(':').next().unwrap_or(name);
        // A 1.1 code may be dotted (`Client.Authentication`): the first part is the class.
        match local.split('.').next().unwrap_or(local) {
            "Client" | "Sender" => Some(FaultCode::Client),
            "Server" | "Receiver" => Some(FaultCode::Server),
            "VersionMismatch" => Some(FaultCode::VersionMismatch),
            "MustUnderstand" => Some(FaultCode::MustUnderstand),
            _ => None,
        }
    }
}

/// A SOAP fault as read from, or written to, an envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The code as written (`soapenv:Client`, `env:Sender`).
    pub code: String,
    /// The reason (1.1 `faultstring`, 1.2 the first `Reason/Text`).
    pub reason: String,
    /// The actor (1.1) or role (1.2), when given.
    pub actor: Option<String>,
    /// The text of the detail's elements, when given (for messages and logs).
    pub detail: Option<String>,
}

impl Fault {
    /// A fault with `code` in the neutral terms of [`FaultCode`].
    pub fn new(code: FaultCode, version: SoapVersion, reason: impl Into<String>) -> Fault {
        Fault {
            code: code.local_name(version).to_string(),
            reason: reason.into(),
            actor: None,
            detail: None,
        }
    }

    /// The class of the code, when it is one of SOAP's.
    pub fn class(&self) -> Option<FaultCode> {
        FaultCode::from_local_name(&self.code)
    }
}

fn child<'a>(
    tree: &mut Tree,
    id: NodeId,
    names: &'a [&'a str],
) -> Result<Option<NodeId>, TreeError> {
    for c in tree.children(id)? {
        if names.iter().any(|n| tree.name_bytes(c) == n.as_bytes()) {
            return Ok(Some(c));
        }
    }
    Ok(None)
}

fn text(tree: &mut Tree, id: NodeId) -> Result<String, TreeError> {
    let mut out = String::new();
    let mut stack = vec![id];
    while let Some(n) = stack.pop() {
        let t = tree.field_type(n);
        if t == field_type::ATTRIBUTE
            || t == field_type::SINGLE_ATTRIBUTE
            || t == field_type::NAMESPACE_DECL
            || t == field_type::SINGLE_NAMESPACE_DECL
        {
            continue;
        }
        if let Some(b) = tree.value_bytes(n) {
            if !out.is_empty() && !b.is_empty() {
                out.push(' ');
            }
            out.push_str(&String::from_utf8_lossy(b));
        }
        let mut cs = tree.children(n)?;
        cs.reverse();
        stack.extend(cs);
    }
    Ok(out.trim().to_string())
}

/// The fault in the `Body` of the SOAP domain element `soap`, if the body is one.
pub fn read(tree: &mut Tree, soap: NodeId) -> Result<Option<Fault>, TreeError> {
    let Some(f) = tree.path(soap, &["Body", "Fault"])? else {
        return Ok(None);
    };
    if SoapVersion::from_ns(tree.namespace_bytes(f)).is_none() {
        return Ok(None);
    }
    let code = match child(tree, f, &["faultcode"])? {
        Some(c) => text(tree, c)?,
        None => match tree.path(f, &["Code", "Value"])? {
            Some(v) => text(tree, v)?,
            None => String::new(),
        },
    };
    let reason = match child(tree, f, &["faultstring"])? {
        Some(c) => text(tree, c)?,
        None => match tree.path(f, &["Reason", "Text"])? {
            Some(v) => text(tree, v)?,
            None => String::new(),
        },
    };
    let actor = match child(tree, f, &["faultactor", "Role"])? {
        Some(c) => Some(text(tree, c)?),
        None => None,
    };
    let detail = match child(tree, f, &["detail", "Detail"])? {
        Some(c) => Some(text(tree, c)?),
        None => None,
    };
    Ok(Some(Fault {
        code,
        reason,
        actor,
        detail,
    }))
}

/// XML-escape `s` for text and attribute values.
pub fn escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 cannot carry at all are dropped.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
            c => out.push(c),
        }
    }
}

/// A whole fault envelope in `version`, the code taken as [`FaultCode`] when it is SOAP's (and
/// mapped to the version), else written as given; `detail_xml` is put in the detail as it is.
pub fn envelope(version: SoapVersion, fault: &Fault, detail_xml: Option<&str>) -> String {
    let code = match fault.class() {
        Some(c) => format!("soapenv:{}", c.local_name(version)),
        None => fault.code.clone(),
    };
    let mut s = String::with_capacity(512);
    s.push_str("<soapenv:Envelope xmlns:soapenv=\"");
    s.push_str(version.envelope_ns());
    s.push_str("\"><soapenv:Body><soapenv:Fault>");
    match version {
        SoapVersion::V11 => {
            s.push_str("<faultcode>");
            escape(&code, &mut s);
            s.push_str("</faultcode><faultstring>");
            escape(&fault.reason, &mut s);
            s.push_str("</faultstring>");
            if let Some(a) = &fault.actor {
                s.push_str("<faultactor>");
                escape(a, &mut s);
                s.push_str("</faultactor>");
            }
            if let Some(d) = detail_xml {
                s.push_str("<detail>");
                s.push_str(d);
                s.push_str("</detail>");
            }
        }
        SoapVersion::V12 => {
            s.push_str("<soapenv:Code><soapenv:Value>");
            escape(&code, &mut s);
            s.push_str(
                "</soapenv:Value></soapenv:Code><soapenv:Reason><soapenv:Text xml:lang=\"en\">",
            );
            escape(&fault.reason, &mut s);
            s.push_str("</soapenv:Text></soapenv:Reason>");
            if let Some(a) = &fault.actor {
                s.push_str("<soapenv:Role>");
                escape(a, &mut s);
                s.push_str("</soapenv:Role>");
            }
            if let Some(d) = detail_xml {
                s.push_str("<soapenv:Detail>");
                s.push_str(d);
                s.push_str("</soapenv:Detail>");
            }
        }
    }
    s.push_str("</soapenv:Fault></soapenv:Body></soapenv:Envelope>");
    s
}
