//! The schema compiler: XSD documents with DFDL annotations → the model in [`crate::model`].

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::DfdlError;
use crate::escape;
use crate::model::*;
use crate::props::{Loc, Props};
use crate::simple_type::{builtin, simple};
use crate::text::{Delims, Encoding};
use crate::xml::{self, DFDL_NS, XNode, XSD_NS};

const MAX_DEPTH: usize = 64;

struct Doc {
    node: Arc<XNode>,
    default: Props,
}

/// The global components of every document, by local name, with the document they are in.
#[derive(Default)]
struct Globals {
    elements: HashMap<String, (usize, XNode)>,
    complex: HashMap<String, (usize, XNode)>,
    simple: HashMap<String, (usize, XNode)>,
    groups: HashMap<String, (usize, XNode)>,
    formats: HashMap<String, XNode>,
    escapes: HashMap<String, XNode>,
}

pub(crate) struct Compiler {
    docs: Vec<Doc>,
    globals: Globals,
}

/// Where XML Schema reads a text from: a file, or text given with a name for errors.
pub(crate) fn load(path: &Path) -> Result<Compiler, DfdlError> {
    let mut c = Compiler {
        docs: Vec::new(),
        globals: Globals::default(),
    };
    let mut seen = HashSet::new();
    c.read_file(path, &mut seen)?;
    c.defaults()?;
    Ok(c)
}

pub(crate) fn load_str(name: &str, text: &str, base: &Path) -> Result<Compiler, DfdlError> {
    let mut c = Compiler {
        docs: Vec::new(),
        globals: Globals::default(),
    };
    let mut seen = HashSet::new();
    c.add_doc(name, text, base, &mut seen)?;
    c.defaults()?;
    Ok(c)
}

impl Compiler {
    fn read_file(&mut self, path: &Path, seen: &mut HashSet<PathBuf>) -> Result<(), DfdlError> {
        let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if !seen.insert(key) {
            return Ok(());
        }
        let text = std::fs::read_to_string(path).map_err(|source| DfdlError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        self.add_doc(&path.display().to_string(), &text, base, seen)
    }

    fn add_doc(
        &mut self,
        name: &str,
        text: &str,
        base: &Path,
        seen: &mut HashSet<PathBuf>,
    ) -> Result<(), DfdlError> {
        let root = xml::read(name, text)?;
        if !root.is_xs("schema") {
            return Err(root.err("the document is not an xs:schema"));
        }
        // The index is taken before includes are read, which add their own documents.
        let index = self.docs.len();
        self.docs.push(Doc {
            node: Arc::new(root.clone()),
            default: Props::default(),
        });
        for child in &root.children {
            let named = |c: &XNode| -> Result<String, DfdlError> {
                c.attr("name")
                    .map(str::to_string)
                    .ok_or_else(|| c.err(format!("a global xs:{} needs a name", c.local)))
            };
            match (child.ns.as_str(), child.local.as_str()) {
                (XSD_NS, "include" | "import") => {
                    let Some(loc) = child.attr("schemaLocation") else {
                        return Err(child.err(format!("xs:{} needs schemaLocation", child.local)));
                    };
                    self.read_file(&base.join(loc), seen)?;
                }
                (XSD_NS, "element") => {
                    self.globals
                        .elements
                        .insert(named(child)?, (index, child.clone()));
                }
                (XSD_NS, "complexType") => {
                    self.globals
                        .complex
                        .insert(named(child)?, (index, child.clone()));
                }
                (XSD_NS, "simpleType") => {
                    self.globals
                        .simple
                        .insert(named(child)?, (index, child.clone()));
                }
                (XSD_NS, "group") => {
                    self.globals
                        .groups
                        .insert(named(child)?, (index, child.clone()));
                }
                (XSD_NS, "annotation") => {
                    for info in appinfos(child) {
                        for f in &info.children {
                            if f.is(DFDL_NS, "defineFormat") {
                                self.globals.formats.insert(named(f)?, f.clone());
                            } else if f.is(DFDL_NS, "defineEscapeScheme") {
                                self.globals.escapes.insert(named(f)?, f.clone());
                            } else if f.is(DFDL_NS, "format") {
                                // Read in `defaults`, once every format is known.
                            } else if f.ns == DFDL_NS {
                                return Err(f.err(format!("dfdl:{} is not supported", f.local)));
                            }
                        }
                    }
                }
                (XSD_NS, "attribute" | "attributeGroup") => {
                    return Err(child.err("DFDL schemas cannot declare attributes"));
                }
                (XSD_NS, other) => {
                    return Err(child.err(format!("xs:{other} is not supported here")));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Each document's default format (its own `dfdl:format`).
    fn defaults(&mut self) -> Result<(), DfdlError> {
        for i in 0..self.docs.len() {
            let node = self.docs[i].node.clone();
            let mut p = Props::default();
            for ann in node.xs_children("annotation") {
                for info in appinfos(ann) {
                    for f in &info.children {
                        if f.is(DFDL_NS, "format") {
                            p.overlay(&self.annotation_props(f, 0)?);
                        }
                    }
                }
            }
            self.docs[i].default = p;
        }
        Ok(())
    }

    /// The properties of a `dfdl:format`-like element: its `ref` first, then its attributes
    /// and `dfdl:property` children.
    fn annotation_props(&self, f: &XNode, depth: usize) -> Result<Props, DfdlError> {
        if depth > MAX_DEPTH {
            return Err(f.err("dfdl:ref chain is circular"));
        }
        let mut p = Props::default();
        let loc = Loc {
            file: f.file.clone(),
            line: f.line,
        };
        if let Some(r) = f
            .attrs
            .iter()
            .find(|a| a.local == "ref" && (a.ns.is_empty() || a.ns == DFDL_NS))
        {
            p.overlay(&self.format(f, &r.value, depth)?);
        }
        for a in &f.attrs {
            if (a.ns.is_empty() || a.ns == DFDL_NS) && a.local != "ref" && a.local != "name" {
                p.set(&a.local, &a.value, loc.clone())?;
            }
        }
        for c in &f.children {
            if c.is(DFDL_NS, "property") {
                let name = c
                    .attr("name")
                    .ok_or_else(|| c.err("dfdl:property needs a name"))?;
                p.set(
                    name,
                    &c.text,
                    Loc {
                        file: c.file.clone(),
                        line: c.line,
                    },
                )?;
            } else {
                return Err(c.err(format!(
                    "{} inside a DFDL annotation is not supported",
                    c.local
                )));
            }
        }
        Ok(p)
    }

    fn format(&self, at: &XNode, qname: &str, depth: usize) -> Result<Props, DfdlError> {
        let (_, local) = at.resolve_qname(qname);
        let def = self
            .globals
            .formats
            .get(&local)
            .ok_or_else(|| at.err(format!("dfdl:ref names no dfdl:defineFormat '{qname}'")))?;
        let mut p = Props::default();
        for f in &def.children {
            if f.is(DFDL_NS, "format") {
                p.overlay(&self.annotation_props(f, depth + 1)?);
            }
        }
        Ok(p)
    }

    /// A component's own properties: short form attributes, and its annotation's.
    fn local_props(&self, node: &XNode) -> Result<Props, DfdlError> {
        let mut p = Props::default();
        let loc = Loc {
            file: node.file.clone(),
            line: node.line,
        };
        if let Some(r) = node
            .attrs
            .iter()
            .find(|a| a.ns == DFDL_NS && a.local == "ref")
        {
            p.overlay(&self.format(node, &r.value, 0)?);
        }
        for ann in node.xs_children("annotation") {
            for info in appinfos(ann) {
                for f in &info.children {
                    match f.local.as_str() {
                        _ if f.ns != DFDL_NS => {}
                        "element" | "sequence" | "choice" | "simpleType" | "group" | "format" => {
                            p.overlay(&self.annotation_props(f, 0)?)
                        }
                        other => {
                            return Err(f.err(format!("dfdl:{other} is not supported")));
                        }
                    }
                }
            }
        }
        for a in &node.attrs {
            if a.ns == DFDL_NS && a.local != "ref" {
                p.set(&a.local, &a.value, loc.clone())?;
            }
        }
        Ok(p)
    }

    /// Compile the global element `name`.
    pub fn root(&self, name: &str) -> Result<Element, DfdlError> {
        let (doc, node) = self.globals.elements.get(name).ok_or_else(|| {
            let first = &self.docs[0].node;
            let mut known: Vec<&String> = self.globals.elements.keys().collect();
            known.sort();
            first.err(format!(
                "the schema has no global element '{name}' (it has: {})",
                known
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        self.element(node, *doc, "", None, 0)
    }

    /// The names of the global elements.
    pub fn root_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.globals.elements.keys().cloned().collect();
        v.sort();
        v
    }

    fn element(
        &self,
        node: &XNode,
        doc: usize,
        parent_path: &str,
        referencing: Option<&XNode>,
        depth: usize,
    ) -> Result<Element, DfdlError> {
        if depth > MAX_DEPTH {
            return Err(node.err("the schema is recursive, which DFDL does not allow"));
        }
        if let Some(r) = node.attr("ref") {
            let (_, local) = node.resolve_qname(r);
            let (gdoc, global) = self
                .globals
                .elements
                .get(&local)
                .ok_or_else(|| node.err(format!("no global element '{r}'")))?;
            return self.element(global, *gdoc, parent_path, Some(node), depth + 1);
        }
        let name = node
            .attr("name")
            .ok_or_else(|| node.err("xs:element needs a name or a ref"))?;
        let path = format!("{parent_path}/{name}");
        let occurs_at = referencing.unwrap_or(node);
        let min = match occurs_at.attr("minOccurs") {
            None => 1,
            Some(v) => v
                .parse()
                .map_err(|_| occurs_at.err(format!("minOccurs '{v}' is not a count")))?,
        };
        let max = match occurs_at.attr("maxOccurs") {
            None => Some(1),
            Some("unbounded") => None,
            Some(v) => Some(
                v.parse()
                    .map_err(|_| occurs_at.err(format!("maxOccurs '{v}' is not a count")))?,
            ),
        };
        // Properties: the document's format, the type's, the element's, then a referencing
        // element's.
        let mut props = self.docs[doc].default.clone();
        let mut facets = Facets::default();
        let mut simple_base = None;
        let mut complex = None;
        if let Some(t) = node.attr("type") {
            let (ns, local) = node.resolve_qname(t);
            if ns == XSD_NS {
                simple_base = Some((local, node.clone()));
            } else if let Some((tdoc, st)) = self.globals.simple.get(&local) {
                props = self.docs[*tdoc].default.clone();
                let base = self.simple_type(st, &mut props, &mut facets, depth)?;
                simple_base = Some((base, st.clone()));
            } else if let Some((cdoc, ct)) = self.globals.complex.get(&local) {
                complex = Some((*cdoc, ct.clone()));
            } else {
                return Err(node.err(format!("type '{t}' is not defined")));
            }
        } else if let Some(st) = node.xs_children("simpleType").next() {
            let base = self.simple_type(st, &mut props, &mut facets, depth)?;
            simple_base = Some((base, st.clone()));
        } else if let Some(ct) = node.xs_children("complexType").next() {
            complex = Some((doc, ct.clone()));
        } else {
            simple_base = Some(("string".to_string(), node.clone()));
        }
        props.overlay(&self.local_props(node)?);
        if let Some(r) = referencing {
            props.overlay(&self.local_props(r)?);
        }
        let loc = Loc {
            file: node.file.clone(),
            line: node.line,
        };
        let (encoding, newline) = text_encoding(&props, &loc)?;
        let delims = |name: &str| -> Result<Delims, DfdlError> {
            Delims::parse(props.or(name, ""), &encoding, &newline)
                .map_err(|m| props.bad(name, &loc, m))
        };
        let initiator = delims("initiator")?;
        let terminator = delims("terminator")?;
        let count = match props.or("occursCountKind", "implicit") {
            "implicit" => Count::Occurs(Occurs::Implicit),
            "fixed" => Count::Occurs(Occurs::Fixed),
            "parsed" => Count::Occurs(Occurs::Parsed),
            "expression" => {
                let e = props.or("occursCount", "");
                Count::Expression(rel_path(e).map_err(|m| props.bad("occursCount", &loc, m))?)
            }
            other => {
                return Err(props.bad(
                    "occursCountKind",
                    &loc,
                    format!("'{other}' is not supported"),
                ));
            }
        };
        let nil = if node.attr("nillable") == Some("true") {
            Some(
                Delims::parse(props.or("nilValue", "%ES;"), &encoding, &newline)
                    .map_err(|m| props.bad("nilValue", &loc, m))?,
            )
        } else {
            None
        };
        let default = node.attr("default").map(str::to_string);
        let (body, complex_length) = match (complex, simple_base) {
            (Some((cdoc, ct)), _) => {
                let length = match props.or("lengthKind", "implicit") {
                    "implicit" | "delimited" => None,
                    "explicit" => Some(explicit_length(&props, &loc)?),
                    other => {
                        return Err(props.bad(
                            "lengthKind",
                            &loc,
                            format!("'{other}' is not supported on a complex element"),
                        ));
                    }
                };
                (
                    Body::Complex(Box::new(self.complex_type(&ct, cdoc, &path, depth)?)),
                    length,
                )
            }
            (None, Some((base, at))) => {
                let ty = builtin(&base)
                    .ok_or_else(|| at.err(format!("the type xs:{base} is not supported")))?;
                let mut s = simple(ty, &props, &facets, encoding, &loc)?;
                let scheme =
                    escape::lookup(props.or("escapeSchemeRef", ""), &self.globals.escapes, &loc)?;
                if let Some(define) = scheme {
                    s.escape = Some(Box::new(escape::compile(define, &encoding)?));
                }
                (Body::Simple(Box::new(s)), None)
            }
            (None, None) => return Err(node.err("the element has no type")),
        };
        Ok(Element {
            name: name.to_string(),
            path,
            min,
            max,
            count,
            initiator,
            terminator,
            nil,
            default,
            complex_length,
            body,
        })
    }

    /// Read a simple type's DFDL properties into `props` and its facets into `facets`; returns
    /// the built-in type it restricts.
    fn simple_type(
        &self,
        st: &XNode,
        props: &mut Props,
        facets: &mut Facets,
        depth: usize,
    ) -> Result<String, DfdlError> {
        if depth > MAX_DEPTH {
            return Err(st.err("simple types derive from each other in a circle"));
        }
        let r = st
            .xs_children("restriction")
            .next()
            .ok_or_else(|| st.err("only xs:restriction simple types are supported"))?;
        let base = r
            .attr("base")
            .ok_or_else(|| r.err("xs:restriction needs a base"))?;
        let (ns, local) = r.resolve_qname(base);
        let builtin = if ns == XSD_NS {
            local
        } else {
            let (_, parent) = self
                .globals
                .simple
                .get(&local)
                .ok_or_else(|| r.err(format!("type '{base}' is not defined")))?;
            self.simple_type(parent, props, facets, depth + 1)?
        };
        props.overlay(&self.local_props(st)?);
        for f in &r.children {
            let v = f.attr("value").unwrap_or("");
            match f.local.as_str() {
                "length" | "maxLength" => facets.max_length = v.parse().ok(),
                _ => {}
            }
        }
        Ok(builtin)
    }

    fn complex_type(
        &self,
        ct: &XNode,
        doc: usize,
        path: &str,
        depth: usize,
    ) -> Result<Group, DfdlError> {
        for c in &ct.children {
            match (c.ns.as_str(), c.local.as_str()) {
                (XSD_NS, "sequence" | "choice" | "group") => {
                    return self.group(c, doc, path, depth + 1);
                }
                (XSD_NS, "annotation") => {}
                (_, other) => {
                    return Err(c.err(format!("xs:{other} in a complex type is not supported")));
                }
            }
        }
        Err(ct.err("a complex type needs an xs:sequence or xs:choice"))
    }

    fn group(&self, g: &XNode, doc: usize, path: &str, depth: usize) -> Result<Group, DfdlError> {
        if depth > MAX_DEPTH {
            return Err(g.err("the schema is recursive, which DFDL does not allow"));
        }
        if g.local == "group" {
            let r = g.attr("ref").ok_or_else(|| g.err("xs:group needs a ref"))?;
            let (_, local) = g.resolve_qname(r);
            let (gdoc, def) = self
                .globals
                .groups
                .get(&local)
                .ok_or_else(|| g.err(format!("no global group '{r}'")))?;
            let inner = def
                .children
                .iter()
                .find(|c| c.is_xs("sequence") || c.is_xs("choice"))
                .ok_or_else(|| def.err("a group needs an xs:sequence or xs:choice"))?;
            return self.group(inner, *gdoc, path, depth + 1);
        }
        let kind = if g.local == "choice" {
            GroupKind::Choice
        } else {
            GroupKind::Sequence
        };
        if g.attr("minOccurs").is_some_and(|v| v != "1")
            || g.attr("maxOccurs").is_some_and(|v| v != "1")
        {
            return Err(g.err("occurrences on a sequence or choice are not supported"));
        }
        let mut props = self.docs[doc].default.clone();
        props.overlay(&self.local_props(g)?);
        let loc = Loc {
            file: g.file.clone(),
            line: g.line,
        };
        let (encoding, newline) = text_encoding(&props, &loc)?;
        let delims = |name: &str| -> Result<Delims, DfdlError> {
            Delims::parse(props.or(name, ""), &encoding, &newline)
                .map_err(|m| props.bad(name, &loc, m))
        };
        let sep_pos = match props.or("separatorPosition", "infix") {
            "infix" => SepPos::Infix,
            "prefix" => SepPos::Prefix,
            "postfix" => SepPos::Postfix,
            other => {
                return Err(props.bad(
                    "separatorPosition",
                    &loc,
                    format!("'{other}' is not a position"),
                ));
            }
        };
        let element_path = path;
        let path = format!("{path}/{}", g.local);
        let mut members = Vec::new();
        for c in &g.children {
            match (c.ns.as_str(), c.local.as_str()) {
                (XSD_NS, "element") => members.push(Term::Element(Box::new(self.element(
                    c,
                    doc,
                    element_path,
                    None,
                    depth + 1,
                )?))),
                (XSD_NS, "sequence" | "choice" | "group") => members.push(Term::Group(Box::new(
                    self.group(c, doc, element_path, depth + 1)?,
                ))),
                (XSD_NS, "annotation") => {}
                (_, other) => {
                    return Err(c.err(format!("xs:{other} in a model group is not supported")));
                }
            }
        }
        Ok(Group {
            kind,
            path,
            members,
            separator: if kind == GroupKind::Sequence {
                delims("separator")?
            } else {
                Delims::default()
            },
            sep_pos,
            initiator: delims("initiator")?,
            terminator: delims("terminator")?,
        })
    }
}

#[derive(Default)]
pub(crate) struct Facets {
    pub max_length: Option<usize>,
}

fn appinfos(ann: &XNode) -> impl Iterator<Item = &XNode> {
    ann.xs_children("appinfo").filter(|a| {
        a.attr("source")
            .is_some_and(|s| s.trim_end_matches('/') == "http://www.ogf.org/dfdl")
    })
}

/// The encoding a component's text and delimiters are in, and the bytes `%NL;` writes.
fn text_encoding(props: &Props, loc: &Loc) -> Result<(Encoding, Vec<u8>), DfdlError> {
    let name = props.or("encoding", "UTF-8");
    let encoding = Encoding::from_name(name)
        .ok_or_else(|| props.bad("encoding", loc, format!("'{name}' is not supported")))?;
    let newline = newline(props, &encoding, loc)?;
    Ok((encoding, newline))
}

fn newline(props: &Props, enc: &Encoding, loc: &Loc) -> Result<Vec<u8>, DfdlError> {
    let d = Delims::parse(props.or("outputNewLine", "%LF;"), enc, b"\n")
        .map_err(|m| props.bad("outputNewLine", loc, m))?;
    Ok(d.out)
}

pub(crate) fn explicit_length(props: &Props, loc: &Loc) -> Result<usize, DfdlError> {
    let v = props
        .get("length")
        .ok_or_else(|| props.bad("length", loc, "lengthKind 'explicit' needs dfdl:length"))?;
    v.trim().parse().map_err(|_| {
        props.bad(
            "length",
            loc,
            format!("'{v}' is not a number (length expressions are not supported)"),
        )
    })
}

/// `{ ../count }` → one level up, then `count`.
pub(crate) fn rel_path(e: &str) -> Result<RelPath, String> {
    let inner = e
        .trim()
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .ok_or_else(|| format!("'{e}' is not an expression"))?
        .trim();
    if inner.starts_with('/') {
        return Err(format!("'{e}': only relative paths are supported"));
    }
    let mut p = RelPath {
        up: 0,
        down: Vec::new(),
    };
    for step in inner.split('/') {
        let step = step.trim();
        match step {
            ".." if p.down.is_empty() => p.up += 1,
            "." => {}
            s if !s.is_empty()
                && s.chars().all(|c| {
                    c.is_alphanumeric() || c == '_' || c == '-' || c == ':' || c == '.'
                }) =>
            {
                p.down.push(s.rsplit(':').next().unwrap_or(s).to_string())
            }
            _ => {
                return Err(format!(
                    "'{e}': only paths such as '../count' are supported"
                ));
            }
        }
    }
    if p.down.is_empty() {
        return Err(format!("'{e}' names no element"));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rel_path_reads_parent_steps_when_relative() {
        let p = rel_path("{ ../count }").unwrap();
        assert_eq!(p.up, 1);
        assert_eq!(p.down, vec!["count".to_string()]);
        assert!(rel_path("{ /a/b }").is_err());
    }
}
