//! The loaded service description and the loader that builds it.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use sluice_parsers::soap::SoapVersion;
use sluice_xsd::SchemaPart;

use super::dom::{self, Element, inline_schema, is_schema};
use super::served::{Link, Served, attr_value_range, rewrite};
use super::{MIME_NS, SOAP11_BINDING_NS, SOAP12_BINDING_NS, WSDL_NS, XSD_NS};
use crate::error::WsdlError;

/// A qualified name: (namespace, local name).
type QName = (String, String);

/// The binding style of an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// document/literal (wrapped or not): the body holds the input part's element.
    Document,
    /// rpc/literal: the body holds a wrapper named after the operation.
    Rpc,
}

/// A SOAP port of a service: where its binding is served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    pub service: String,
    pub name: String,
    pub binding: String,
    pub version: SoapVersion,
    /// The `soap:address` location as the WSDL gives it.
    pub address: String,
}

/// An operation as one SOAP binding offers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation {
    pub name: String,
    pub port_type: String,
    pub port_type_ns: String,
    pub binding: String,
    pub version: SoapVersion,
    pub style: Style,
    /// The SOAPAction (`soap:operation/@soapAction`), empty when the WSDL gives none.
    pub soap_action: String,
    /// The first element of a request's body: the input part's element (document), or the
    /// operation's wrapper (rpc).
    pub request_element: Option<QName>,
    /// The first element of a response's body, likewise; `None` for one-way operations.
    pub response_element: Option<QName>,
    /// Whether the operation has no output.
    pub one_way: bool,
}

impl Operation {
    /// WS-Addressing's default Action of the operation's `Request` or `Response` message,
    /// `{portType namespace}/{portType}/{operation}{direction}`, for an operation without a
    /// SOAPAction.
    pub fn default_action(&self, direction: &str) -> String {
        format!(
            "{}/{}/{}{direction}",
            self.port_type_ns.trim_end_matches('/'),
            self.port_type,
            self.name
        )
    }
}

/// A WSDL 1.1 service description.
#[derive(Clone, Debug)]
pub struct Wsdl {
    /// The WSDL's path as the flow names it.
    pub file: String,
    /// The WSDL's text, served for `?wsdl`.
    pub text: String,
    pub target_ns: String,
    pub ports: Vec<Port>,
    /// Every operation of every SOAP binding.
    pub operations: Vec<Operation>,
    /// Byte ranges of the main file's `soap:address/@location` values.
    address_values: Vec<(usize, usize)>,
    /// The schemas of its types (inline and imported), as a validator compiles them.
    pub schemas: Vec<SchemaPart>,
    /// The files it reaches, for `?xsd=`.
    served: Served,
    /// The elements its schemas declare as base64Binary, which MTOM may move out of the Body.
    pub binary_elements: HashSet<QName>,
}

impl Wsdl {
    /// Load `rel` (a path relative to `project_dir`) and the files it imports.
    pub fn load(project_dir: &Path, rel: &str) -> Result<Wsdl, WsdlError> {
        let path = project_dir.join(rel);
        let mut read = |p: &Path| {
            std::fs::read_to_string(p).map_err(|source| WsdlError::Read {
                file: display(project_dir, p),
                source,
            })
        };
        let text = read(&path)?;
        let mut loader = Loader::new(project_dir, &mut read);
        loader.wsdl_file(&path, &text)?;
        loader.finish(rel, text)
    }

    /// Parse a WSDL given as text; imports are refused (for tests and fuzzing).
    pub fn parse(file: &str, text: &str) -> Result<Wsdl, WsdlError> {
        let mut read = |p: &Path| -> Result<String, WsdlError> {
            Err(WsdlError::at(
                file,
                1,
                format!("imports are not read here ({})", p.display()),
            ))
        };
        let dir = Path::new("");
        let mut loader = Loader::new(dir, &mut read);
        loader.wsdl_file(Path::new(file), text)?;
        loader.finish(file, text.to_string())
    }

    /// The WSDL's text with every `soap:address` location replaced by `endpoint`, and every
    /// import of a file it reaches by `endpoint?xsd=NAME`.
    pub fn with_address(&self, endpoint: &str) -> String {
        let mut esc = String::new();
        sluice_parsers::soap::fault::escape(endpoint, &mut esc);
        let mut edits = self.served.main_edits(endpoint);
        edits.extend(
            self.address_values
                .iter()
                .map(|&(s, e)| (s, e, esc.clone())),
        );
        rewrite(&self.text, edits)
    }

    /// A file the WSDL imports (directly or through other imports), `name` being its path
    /// relative to the project folder, with its own imports rewritten to `endpoint?xsd=NAME`;
    /// `None` for any other name.
    pub fn imported_file(&self, name: &str, endpoint: &str) -> Option<String> {
        self.served.file(name, endpoint)
    }

    /// The operations of the binding `binding`, or of every SOAP binding when `None`.
    pub fn operations_of<'a>(
        &'a self,
        binding: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Operation> + 'a {
        self.operations
            .iter()
            .filter(move |o| binding.is_none_or(|b| o.binding == b))
    }
}

fn display(project_dir: &Path, p: &Path) -> String {
    p.strip_prefix(project_dir)
        .unwrap_or(p)
        .display()
        .to_string()
}

#[derive(Clone)]
struct Part {
    name: String,
    element: Option<QName>,
    type_: Option<QName>,
    line: u32,
    file: String,
}

struct PortTypeOp {
    name: String,
    input: Option<QName>,
    output: Option<QName>,
}

struct BindingOp {
    name: String,
    action: String,
    style: Option<Style>,
    rpc_ns: Option<String>,
    /// Parts a MIME binding carries as attachments (`mime:content`), not in the Body.
    attachment_parts: Vec<String>,
    line: u32,
}

struct Binding {
    name: String,
    port_type: QName,
    version: SoapVersion,
    style: Style,
    ops: Vec<BindingOp>,
    file: String,
    line: u32,
}

type ReadFn<'a> = dyn FnMut(&Path) -> Result<String, WsdlError> + 'a;

struct Loader<'a> {
    project_dir: PathBuf,
    read: &'a mut ReadFn<'a>,
    seen: HashSet<PathBuf>,
    target_ns: Option<String>,
    messages: HashMap<QName, Vec<Part>>,
    port_types: HashMap<QName, Vec<PortTypeOp>>,
    bindings: HashMap<QName, Binding>,
    ports: Vec<(Port, QName, String, u32)>,
    elements: HashSet<QName>,
    address_values: Vec<(usize, usize)>,
    schemas: Vec<SchemaPart>,
    main: bool,
    /// The main file's path, and the text of every file read, for `?xsd=`.
    main_path: Option<PathBuf>,
    texts: HashMap<PathBuf, String>,
    links: Vec<Link>,
    binary: HashSet<QName>,
}

impl<'a> Loader<'a> {
    fn new(project_dir: &Path, read: &'a mut ReadFn<'a>) -> Loader<'a> {
        Loader {
            project_dir: project_dir.to_path_buf(),
            read,
            seen: HashSet::new(),
            target_ns: None,
            messages: HashMap::new(),
            port_types: HashMap::new(),
            bindings: HashMap::new(),
            ports: Vec::new(),
            elements: HashSet::new(),
            address_values: Vec::new(),
            schemas: Vec::new(),
            main: true,
            main_path: None,
            texts: HashMap::new(),
            links: Vec::new(),
            binary: HashSet::new(),
        }
    }

    fn name_of(&self, p: &Path) -> String {
        display(&self.project_dir, p)
    }

    fn resolve(
        &self,
        from: &Path,
        location: &str,
        file: &str,
        line: u32,
    ) -> Result<PathBuf, WsdlError> {
        if location.contains("://") {
            return Err(WsdlError::at(
                file,
                line,
                format!("`{location}` is remote; only files in the project are read"),
            ));
        }
        Ok(from.parent().unwrap_or(Path::new("")).join(location))
    }

    /// Note that the attribute `attr` of `el`, in the file `from`, names the file `target`.
    fn link(&mut self, from: &Path, el: &Element, attr: &str, target: &Path) {
        let range = self
            .texts
            .get(from)
            .and_then(|t| attr_value_range(t, el.start, attr));
        if let Some((start, end)) = range {
            self.links.push(Link {
                file: from.to_path_buf(),
                start,
                end,
                target: target.to_path_buf(),
            });
        }
    }

    fn wsdl_file(&mut self, path: &Path, text: &str) -> Result<(), WsdlError> {
        self.seen.insert(path.to_path_buf());
        self.texts.insert(path.to_path_buf(), text.to_string());
        if self.main_path.is_none() {
            self.main_path = Some(path.to_path_buf());
        }
        let file = self.name_of(path);
        let root = dom::read(&file, text)?;
        if root.local == "description" {
            return Err(WsdlError::at(
                &file,
                root.line,
                "WSDL 2.0 is not supported; give a WSDL 1.1 document",
            ));
        }
        if !root.is(WSDL_NS, "definitions") {
            return Err(WsdlError::at(
                &file,
                root.line,
                format!(
                    "the root element is {{{}}}{}, not a WSDL 1.1 wsdl:definitions",
                    root.ns, root.local
                ),
            ));
        }
        let tns = root.attr("targetNamespace").unwrap_or_default().to_string();
        if self.target_ns.is_none() {
            self.target_ns = Some(tns.clone());
        }
        let main = std::mem::replace(&mut self.main, false);
        for c in &root.children {
            if c.ns != WSDL_NS {
                continue;
            }
            match c.local.as_str() {
                "import" => {
                    let loc = c.attr("location").ok_or_else(|| {
                        WsdlError::at(&file, c.line, "wsdl:import has no location")
                    })?;
                    let p = self.resolve(path, loc, &file, c.line)?;
                    self.link(path, c, "location", &p);
                    if self.seen.contains(&p) {
                        continue;
                    }
                    let t = (self.read)(&p)?;
                    if is_schema(&t) {
                        let namespace = self.schema_file(&p, &t)?;
                        self.schemas.push(SchemaPart {
                            namespace,
                            path: p.clone(),
                            text: None,
                        });
                    } else {
                        self.wsdl_file(&p, &t)?;
                    }
                }
                "types" => {
                    for s in c.children_named(XSD_NS, "schema") {
                        self.schema(path, &file, s)?;
                        self.schemas.push(SchemaPart {
                            namespace: s.attr("targetNamespace").unwrap_or_default().to_string(),
                            path: path.to_path_buf(),
                            text: Some(inline_schema(text, c, s)),
                        });
                    }
                }
                "message" => self.message(&file, &tns, c)?,
                "portType" => self.port_type(&file, &tns, c)?,
                "binding" => self.binding(&file, &tns, c)?,
                "service" => self.service(&file, &tns, c, text, main)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// Read the schema file `path`: its elements, and the files it imports; its targetNamespace.
    fn schema_file(&mut self, path: &Path, text: &str) -> Result<String, WsdlError> {
        self.seen.insert(path.to_path_buf());
        self.texts.insert(path.to_path_buf(), text.to_string());
        let file = self.name_of(path);
        let root = dom::read(&file, text)?;
        if !root.is(XSD_NS, "schema") {
            return Err(WsdlError::at(
                &file,
                root.line,
                "the root element is not xsd:schema",
            ));
        }
        self.schema(path, &file, &root)?;
        Ok(root.attr("targetNamespace").unwrap_or_default().to_string())
    }

    fn schema(&mut self, path: &Path, file: &str, s: &Element) -> Result<(), WsdlError> {
        let tns = s.attr("targetNamespace").unwrap_or_default().to_string();
        super::binary::collect(s, &tns, &mut self.binary);
        for c in s.children_in(XSD_NS) {
            match c.local.as_str() {
                "element" => {
                    if let Some(n) = c.attr("name") {
                        self.elements.insert((tns.clone(), n.to_string()));
                    }
                }
                "import" | "include" | "redefine" => {
                    let Some(loc) = c.attr("schemaLocation") else {
                        // An import of a namespace declared elsewhere in the WSDL's types.
                        continue;
                    };
                    let p = self.resolve(path, loc, file, c.line)?;
                    self.link(path, c, "schemaLocation", &p);
                    if self.seen.contains(&p) {
                        continue;
                    }
                    let t = (self.read)(&p)?;
                    if c.local == "import" {
                        self.schema_file(&p, &t)?;
                    } else {
                        // An included schema takes the including one's namespace when it has none.
                        self.seen.insert(p.clone());
                        self.texts.insert(p.clone(), t.clone());
                        let f = self.name_of(&p);
                        let root = dom::read(&f, &t)?;
                        if !root.is(XSD_NS, "schema") {
                            return Err(WsdlError::at(
                                &f,
                                root.line,
                                "the root element is not xsd:schema",
                            ));
                        }
                        let mut root = root;
                        if root.attr("targetNamespace").is_none() {
                            root.attrs.push(("targetNamespace".into(), tns.clone()));
                        }
                        self.schema(&p, &f, &root)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn qname_attr(&self, file: &str, el: &Element, name: &str) -> Result<Option<QName>, WsdlError> {
        match el.attr(name) {
            None => Ok(None),
            Some(v) => el.qname(v).map(Some).ok_or_else(|| {
                WsdlError::at(
                    file,
                    el.line,
                    format!("the prefix of `{v}` is not declared"),
                )
            }),
        }
    }

    fn message(&mut self, file: &str, tns: &str, m: &Element) -> Result<(), WsdlError> {
        let name = required(file, m, "name")?;
        let mut parts = Vec::new();
        for p in m.children_named(WSDL_NS, "part") {
            parts.push(Part {
                name: p.attr("name").unwrap_or_default().to_string(),
                element: self.qname_attr(file, p, "element")?,
                type_: self.qname_attr(file, p, "type")?,
                line: p.line,
                file: file.to_string(),
            });
        }
        self.messages
            .insert((tns.to_string(), name.to_string()), parts);
        Ok(())
    }

    fn port_type(&mut self, file: &str, tns: &str, pt: &Element) -> Result<(), WsdlError> {
        let name = required(file, pt, "name")?;
        let mut ops = Vec::new();
        for o in pt.children_named(WSDL_NS, "operation") {
            let msg = |local: &str| -> Result<Option<QName>, WsdlError> {
                match o.children_named(WSDL_NS, local).next() {
                    Some(e) => self.qname_attr(file, e, "message"),
                    None => Ok(None),
                }
            };
            ops.push(PortTypeOp {
                name: required(file, o, "name")?.to_string(),
                input: msg("input")?,
                output: msg("output")?,
            });
        }
        self.port_types
            .insert((tns.to_string(), name.to_string()), ops);
        Ok(())
    }

    fn binding(&mut self, file: &str, tns: &str, b: &Element) -> Result<(), WsdlError> {
        let name = required(file, b, "name")?;
        let (soap_ns, version) =
            if let Some(s) = b.children_named(SOAP11_BINDING_NS, "binding").next() {
                (SOAP11_BINDING_NS, (s, SoapVersion::V11))
            } else if let Some(s) = b.children_named(SOAP12_BINDING_NS, "binding").next() {
                (SOAP12_BINDING_NS, (s, SoapVersion::V12))
            } else {
                // An HTTP or MIME binding: not a SOAP service.
                return Ok(());
            };
        let (sb, version) = version;
        if let Some(t) = sb.attr("transport")
            && t != "http://schemas.xmlsoap.org/soap/http"
        {
            return Err(WsdlError::at(
                file,
                sb.line,
                format!("transport `{t}` is not supported (only SOAP over HTTP)"),
            ));
        }
        let style = parse_style(file, sb)?.unwrap_or(Style::Document);
        let port_type = self
            .qname_attr(file, b, "type")?
            .ok_or_else(|| WsdlError::at(file, b.line, "wsdl:binding has no type"))?;
        let mut ops = Vec::new();
        for o in b.children_named(WSDL_NS, "operation") {
            let op_name = required(file, o, "name")?.to_string();
            let so = o.children_named(soap_ns, "operation").next();
            let action = so
                .and_then(|s| s.attr("soapAction"))
                .unwrap_or_default()
                .to_string();
            let op_style = match so {
                Some(s) => parse_style(file, s)?,
                None => None,
            };
            let mut rpc_ns = None;
            let mut attachment_parts = Vec::new();
            for dir in ["input", "output"] {
                for io in o.children_named(WSDL_NS, dir) {
                    // SOAP with Attachments: the soap:body sits in one mime:part of a
                    // mime:multipartRelated, and the other parts name message parts carried as
                    // attachments.
                    let mime_parts: Vec<&Element> = io
                        .children_named(MIME_NS, "multipartRelated")
                        .flat_map(|r| r.children_named(MIME_NS, "part"))
                        .collect();
                    if let Some(m) = io
                        .children
                        .iter()
                        .find(|c| c.ns == MIME_NS && c.local != "multipartRelated")
                    {
                        return Err(WsdlError::at(
                            file,
                            m.line,
                            format!(
                                "mime:{} is not supported; SOAP with attachments is bound with mime:multipartRelated",
                                m.local
                            ),
                        ));
                    }
                    for c in mime_parts
                        .iter()
                        .flat_map(|p| p.children_named(MIME_NS, "content"))
                    {
                        if let Some(part) = c.attr("part") {
                            attachment_parts.push(part.to_string());
                        }
                    }
                    let bodies = io.children_named(soap_ns, "body").chain(
                        mime_parts
                            .iter()
                            .flat_map(|p| p.children_named(soap_ns, "body")),
                    );
                    for body in bodies {
                        if body.attr("use").is_some_and(|u| u != "literal") {
                            return Err(WsdlError::at(
                                file,
                                body.line,
                                "use=\"encoded\" is not supported; only literal bindings are",
                            ));
                        }
                        if dir == "input" {
                            rpc_ns = body.attr("namespace").map(str::to_string);
                        }
                    }
                }
            }
            ops.push(BindingOp {
                name: op_name,
                action,
                style: op_style,
                rpc_ns,
                attachment_parts,
                line: o.line,
            });
        }
        self.bindings.insert(
            (tns.to_string(), name.to_string()),
            Binding {
                name: name.to_string(),
                port_type,
                version,
                style,
                ops,
                file: file.to_string(),
                line: b.line,
            },
        );
        Ok(())
    }

    fn service(
        &mut self,
        file: &str,
        _tns: &str,
        s: &Element,
        text: &str,
        main: bool,
    ) -> Result<(), WsdlError> {
        let service = required(file, s, "name")?;
        for p in s.children_named(WSDL_NS, "port") {
            let name = required(file, p, "name")?;
            let binding = self
                .qname_attr(file, p, "binding")?
                .ok_or_else(|| WsdlError::at(file, p.line, "wsdl:port has no binding"))?;
            let address = p.children.iter().find(|c| {
                c.local == "address" && (c.ns == SOAP11_BINDING_NS || c.ns == SOAP12_BINDING_NS)
            });
            let Some(address) = address else {
                continue;
            };
            let version = if address.ns == SOAP12_BINDING_NS {
                SoapVersion::V12
            } else {
                SoapVersion::V11
            };
            if main && let Some(range) = attr_value_range(text, address.start, "location") {
                self.address_values.push(range);
            }
            self.ports.push((
                Port {
                    service: service.to_string(),
                    name: name.to_string(),
                    binding: binding.1.clone(),
                    version,
                    address: address.attr("location").unwrap_or_default().to_string(),
                },
                binding,
                file.to_string(),
                p.line,
            ));
        }
        Ok(())
    }

    fn finish(self, rel: &str, text: String) -> Result<Wsdl, WsdlError> {
        let mut operations = Vec::new();
        for (port, binding, file, line) in &self.ports {
            if !self.bindings.contains_key(binding) {
                return Err(WsdlError::at(
                    file,
                    *line,
                    format!(
                        "port `{}` names binding `{}`, which the WSDL does not define",
                        port.name, binding.1
                    ),
                ));
            }
        }
        let mut names: Vec<&QName> = self.bindings.keys().collect();
        names.sort();
        for key in names {
            let b = &self.bindings[key];
            let pt = self.port_types.get(&b.port_type).ok_or_else(|| {
                WsdlError::at(
                    &b.file,
                    b.line,
                    format!(
                        "binding `{}` names port type `{}`, which the WSDL does not define",
                        b.name, b.port_type.1
                    ),
                )
            })?;
            for bo in &b.ops {
                let pto = pt.iter().find(|o| o.name == bo.name).ok_or_else(|| {
                    WsdlError::at(
                        &b.file,
                        bo.line,
                        format!(
                            "operation `{}` is not in port type `{}`",
                            bo.name, b.port_type.1
                        ),
                    )
                })?;
                let style = bo.style.unwrap_or(b.style);
                let request_element =
                    self.body_element(style, bo, &pto.input, &pto.name, &b.file)?;
                let response_name = format!("{}Response", pto.name);
                let response_element = match &pto.output {
                    Some(_) => {
                        self.body_element(style, bo, &pto.output, &response_name, &b.file)?
                    }
                    None => None,
                };
                operations.push(Operation {
                    name: bo.name.clone(),
                    port_type: b.port_type.1.clone(),
                    port_type_ns: b.port_type.0.clone(),
                    binding: b.name.clone(),
                    version: b.version,
                    style,
                    soap_action: bo.action.clone(),
                    request_element,
                    response_element,
                    one_way: pto.output.is_none(),
                });
            }
        }
        Ok(Wsdl {
            file: rel.to_string(),
            text,
            target_ns: self.target_ns.unwrap_or_default(),
            ports: self.ports.into_iter().map(|p| p.0).collect(),
            operations,
            address_values: self.address_values,
            schemas: self.schemas,
            served: Served::build(
                &self.project_dir,
                self.main_path.as_deref().unwrap_or(Path::new(rel)),
                self.texts,
                self.links,
            ),
            binary_elements: self.binary,
        })
    }

    /// The first body element of a message of the operation.
    fn body_element(
        &self,
        style: Style,
        bo: &BindingOp,
        message: &Option<QName>,
        wrapper: &str,
        file: &str,
    ) -> Result<Option<QName>, WsdlError> {
        let Some(m) = message else {
            return Ok(None);
        };
        let parts = self.messages.get(m).ok_or_else(|| {
            WsdlError::at(
                file,
                bo.line,
                format!(
                    "operation `{}` uses message `{}`, which the WSDL does not define",
                    bo.name, m.1
                ),
            )
        })?;
        match style {
            Style::Rpc => Ok(Some((
                bo.rpc_ns.clone().unwrap_or_default(),
                wrapper.to_string(),
            ))),
            Style::Document => {
                let parts: Vec<&Part> = parts
                    .iter()
                    .filter(|p| !bo.attachment_parts.contains(&p.name))
                    .collect();
                for p in &parts {
                    if p.element.is_none() && p.type_.is_some() {
                        return Err(WsdlError::at(
                            &p.file,
                            p.line,
                            "a document/literal part must name an element, not a type",
                        ));
                    }
                    if let Some(e) = &p.element
                        && !self.elements.contains(e)
                    {
                        return Err(WsdlError::at(
                            &p.file,
                            p.line,
                            format!(
                                "element {{{}}}{} is not declared by any schema of the WSDL",
                                e.0, e.1
                            ),
                        ));
                    }
                }
                Ok(parts.first().and_then(|p| p.element.clone()))
            }
        }
    }
}

fn required<'e>(file: &str, el: &'e Element, name: &str) -> Result<&'e str, WsdlError> {
    el.attr(name)
        .ok_or_else(|| WsdlError::at(file, el.line, format!("{} has no {name}", el.local)))
}

fn parse_style(file: &str, el: &Element) -> Result<Option<Style>, WsdlError> {
    match el.attr("style") {
        None => Ok(None),
        Some("document") => Ok(Some(Style::Document)),
        Some("rpc") => Ok(Some(Style::Rpc)),
        Some(other) => Err(WsdlError::at(
            file,
            el.line,
            format!("style `{other}` is not document or rpc"),
        )),
    }
}
