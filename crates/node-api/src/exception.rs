//! Exceptions raised while a message is processed, and the ExceptionList tree that describes them.
//!
//! The shape is the product's: an `ExceptionList` holds one exception element per level, outermost
//! first, each with `File`, `Line`, `Function`, `Type`, `Name`, `Label`, `Catalog`, `Severity`,
//! `Number`, `Text` and `Insert` children, the cause nested as its last child.

use sluice_tree::{NodeId, Text, Tree, TreeError, Value, field_type};

/// The kinds of exception, named as the product names their ExceptionList elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExceptionKind {
    Recoverable,
    Parser,
    Conversion,
    User,
    Database,
    Security,
    Socket,
    SocketTimeout,
}

impl ExceptionKind {
    pub fn element_name(self) -> &'static str {
        match self {
            ExceptionKind::Recoverable => "RecoverableException",
            ExceptionKind::Parser => "ParserException",
            ExceptionKind::Conversion => "ConversionException",
            ExceptionKind::User => "UserException",
            ExceptionKind::Database => "DatabaseException",
            ExceptionKind::Security => "SecurityException",
            ExceptionKind::Socket => "SocketException",
            ExceptionKind::SocketTimeout => "SocketTimeoutException",
        }
    }
}

/// One exception, with its cause.
#[derive(Clone, Debug, PartialEq)]
pub struct Exception {
    pub kind: ExceptionKind,
    /// The message number in the catalogue.
    pub number: u32,
    pub severity: u32,
    pub catalog: String,
    pub text: String,
    pub inserts: Vec<String>,
    /// The node that raised it: label and type, filled in by the engine.
    pub label: String,
    pub node_type: String,
    /// The source file and line (ESQL) when there is one.
    pub file: String,
    pub line: u32,
    pub cause: Option<Box<Exception>>,
    /// Further causes beside `cause`, nested at the same level (every violation a validation
    /// found, for example).
    pub also: Vec<Exception>,
}

impl Exception {
    pub fn new(kind: ExceptionKind, number: u32, text: impl Into<String>) -> Exception {
        Exception {
            kind,
            number,
            severity: 3,
            catalog: "BIPmsgs".into(),
            text: text.into(),
            inserts: Vec::new(),
            label: String::new(),
            node_type: String::new(),
            file: String::new(),
            line: 0,
            cause: None,
            also: Vec::new(),
        }
    }

    pub fn with_insert(mut self, s: impl Into<String>) -> Exception {
        self.inserts.push(s.into());
        self
    }

    pub fn caused_by(mut self, cause: Exception) -> Exception {
        self.cause = Some(Box::new(cause));
        self
    }

    /// Every level's text, outermost first, joined for people (HTTP error bodies, logs).
    pub fn describe(&self) -> String {
        let mut out = String::new();
        self.describe_into(&mut out);
        out
    }

    fn describe_into(&self, out: &mut String) {
        if !self.label.is_empty() {
            out.push_str(&format!("node '{}': ", self.label));
        }
        out.push_str(&self.text);
        // Inserts are the ExceptionList's machine-readable copy of what the text says; only
        // those the text leaves out (a THROW's VALUES) are shown.
        for i in self
            .inserts
            .iter()
            .filter(|i| !self.text.contains(i.as_str()))
        {
            out.push_str(&format!(" [{i}]"));
        }
        if let Some(c) = self.cause.as_deref() {
            out.push_str(": ");
            c.describe_into(out);
        }
        for other in &self.also {
            out.push_str("; ");
            other.describe_into(out);
        }
    }

    /// Replace `tree`'s content with this exception as an ExceptionList.
    pub fn write_to(&self, tree: &mut Tree) -> Result<(), TreeError> {
        let root = tree.root();
        tree.delete(root)?;
        self.write_under(tree, root)
    }

    /// This exception as the last child of `parent`, its causes nested in it.
    fn write_under(&self, tree: &mut Tree, parent: NodeId) -> Result<(), TreeError> {
        let e = self;
        let el = tree.create_last_child(
            parent,
            field_type::NAME,
            Text::from_static(e.kind.element_name()),
            Value::Null,
        )?;
        let field = |tree: &mut Tree, name: &'static str, v: Value| {
            tree.create_last_child(el, field_type::NAME_VALUE, Text::from_static(name), v)
        };
        let file = tree.alloc_text(e.file.as_bytes());
        field(tree, "File", Value::Character(file))?;
        field(tree, "Line", Value::Integer(e.line as i64))?;
        field(tree, "Function", Value::Character(Text::EMPTY))?;
        let ty = tree.alloc_text(e.node_type.as_bytes());
        field(tree, "Type", Value::Character(ty))?;
        let label = tree.alloc_text(e.label.as_bytes());
        field(tree, "Name", Value::Character(label))?;
        field(tree, "Label", Value::Character(label))?;
        let cat = tree.alloc_text(e.catalog.as_bytes());
        field(tree, "Catalog", Value::Character(cat))?;
        field(tree, "Severity", Value::Integer(e.severity as i64))?;
        field(tree, "Number", Value::Integer(e.number as i64))?;
        let text = tree.alloc_text(e.text.as_bytes());
        field(tree, "Text", Value::Character(text))?;
        for i in &e.inserts {
            let ins = field(tree, "Insert", Value::Null)?;
            tree.create_last_child(
                ins,
                field_type::NAME_VALUE,
                Text::from_static("Type"),
                Value::Integer(5),
            )?;
            let t = tree.alloc_text(i.as_bytes());
            tree.create_last_child(
                ins,
                field_type::NAME_VALUE,
                Text::from_static("Text"),
                Value::Character(t),
            )?;
        }
        // The first cause first, then the others beside it.
        if let Some(c) = e.cause.as_deref() {
            c.write_under(tree, el)?;
        }
        for other in &e.also {
            other.write_under(tree, el)?;
        }
        Ok(())
    }
}

/// An exception on its way through a flow.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}", .exception.describe())]
pub struct NodeError {
    /// Boxed so that results carrying a NodeError stay small on the happy path.
    pub exception: Box<Exception>,
    /// Set once the node that raised it has had its failure terminal considered; upstream nodes
    /// then pass it on unchanged to the nearest TryCatch or input node.
    pub passed_up: bool,
}

impl NodeError {
    pub fn new(kind: ExceptionKind, number: u32, text: impl Into<String>) -> NodeError {
        Exception::new(kind, number, text).into()
    }

    /// A general recoverable error raised by a node.
    pub fn recoverable(text: impl Into<String>) -> NodeError {
        NodeError::new(ExceptionKind::Recoverable, 2230, text)
    }
}

impl From<Exception> for NodeError {
    fn from(exception: Exception) -> NodeError {
        NodeError {
            exception: Box::new(exception),
            passed_up: false,
        }
    }
}

impl From<TreeError> for NodeError {
    fn from(e: TreeError) -> NodeError {
        match &e {
            TreeError::Parse { domain, offset, .. } => {
                Exception::new(ExceptionKind::Parser, 5009, e.to_string())
                    .with_insert(*domain)
                    .with_insert(offset.to_string())
                    .into()
            }
            TreeError::Validation {
                domain,
                schema,
                violations,
            } => {
                let text = format!(
                    "{domain} parser: the body does not match the XML Schema {schema} ({} violation{})",
                    violations.len(),
                    if violations.len() == 1 { "" } else { "s" }
                );
                let mut each = violations.iter().map(|v| {
                    Exception::new(
                        ExceptionKind::Parser,
                        5025,
                        format!(
                            "XML schema validation error '{}' on line {} column {} when parsing element '{}'",
                            v.message, v.line, v.column, v.path
                        ),
                    )
                    .with_insert(v.message.clone())
                    .with_insert(v.line.to_string())
                    .with_insert(v.column.to_string())
                    .with_insert(v.path.clone())
                });
                let mut top = Exception::new(ExceptionKind::Parser, 5009, text)
                    .with_insert(*domain)
                    .with_insert(schema.clone());
                if let Some(first) = each.next() {
                    top = top.caused_by(first);
                }
                top.also = each.collect();
                top.into()
            }
            _ => NodeError::recoverable(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_shows_only_the_inserts_the_text_leaves_out() {
        let parse = Exception::new(
            ExceptionKind::Parser,
            5004,
            "XMLNSC parser: bad at byte offset 6",
        )
        .with_insert("XMLNSC")
        .with_insert("6");
        assert_eq!(parse.describe(), "XMLNSC parser: bad at byte offset 6");
        let thrown =
            Exception::new(ExceptionKind::User, 2951, "User exception").with_insert("order 7");
        assert_eq!(thrown.describe(), "User exception [order 7]");
    }

    #[test]
    fn validation_error_nests_every_violation_when_there_are_several() {
        let v = |line, path: &str| sluice_tree::Violation {
            line,
            column: 4,
            path: path.into(),
            message: "bad".into(),
        };
        let e = NodeError::from(TreeError::Validation {
            domain: "XMLNSC",
            schema: "models/o.xsd".into(),
            violations: vec![v(1, "/a/b"), v(2, "/a/c")],
        });
        assert_eq!(e.exception.number, 5009);
        let first = e.exception.cause.as_deref().unwrap();
        assert_eq!(first.number, 5025);
        assert_eq!(first.inserts, ["bad", "1", "4", "/a/b"]);
        assert_eq!(e.exception.also.len(), 1);
        assert_eq!(e.exception.also[0].inserts[3], "/a/c");
        let mut tree = Tree::new("ExceptionList");
        e.exception.write_to(&mut tree).unwrap();
        let top = tree.first_child(tree.root()).unwrap().unwrap();
        let mut nested = Vec::new();
        let mut c = tree.first_child(top).unwrap();
        while let Some(id) = c {
            if tree.name_bytes(id) == b"ParserException" {
                nested.push(id);
            }
            c = tree.next_sibling(id).unwrap();
        }
        assert_eq!(nested.len(), 2);
        assert!(e.exception.describe().contains("/a/c"));
    }
}
