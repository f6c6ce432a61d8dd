//! Where DatabaseRetrieve writes column values: message element paths such as
//! `$Body/order/customer/name` or `$LocalEnvironment/Lookup/region`, created when missing,
//! overwritten when present (as the product's data element table does).

use sluice_node_api::{ConfigError, Message, NodeError, Tree};
use sluice_tree::{NodeId, Text, Value, field_type};

/// The tree a path starts in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// The message body (Root's last child, its domain element).
    Body,
    Root,
    LocalEnvironment,
    Environment,
}

/// A message element path: a start and the element names below it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElementPath {
    pub start: Start,
    pub steps: Vec<String>,
}

impl ElementPath {
    /// `$Body/a/b`, `$Root/…`, `$LocalEnvironment/…` or `$Environment/…`, with plain element
    /// names as steps.
    pub fn parse(property: &str, src: &str) -> Result<ElementPath, ConfigError> {
        let bad = |why: &str| {
            ConfigError::property(property, format!("`{src}`: {why}")).with_hint(
                "write a path of element names, like $Body/order/customer/name or \
                 $LocalEnvironment/Lookup/region",
            )
        };
        let mut parts = src.trim().split('/');
        let start = match parts.next() {
            Some("$Body") => Start::Body,
            Some("$Root") => Start::Root,
            Some("$LocalEnvironment") => Start::LocalEnvironment,
            Some("$Environment") => Start::Environment,
            _ => {
                return Err(bad(
                    "a path starts with $Body, $Root, $LocalEnvironment or $Environment",
                ));
            }
        };
        let mut steps = Vec::new();
        for p in parts {
            let ok = p
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && p.chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'));
            if !ok {
                return Err(bad(&format!("`{p}` is not an element name")));
            }
            steps.push(p.to_string());
        }
        if steps.is_empty() {
            return Err(bad("the path names no element"));
        }
        Ok(ElementPath { start, steps })
    }

    /// The tree and element the path starts at; a message without a body gets an XMLNSC one.
    pub fn start_at<'t>(
        &self,
        msg: &'t mut Message,
        environment: &'t mut Tree,
    ) -> Result<(&'t mut Tree, NodeId), NodeError> {
        Ok(match self.start {
            Start::Body => {
                let body = match msg.body()? {
                    Some(b) => b,
                    None => {
                        let r = msg.root.root();
                        msg.root.create_last_child(
                            r,
                            field_type::NAME,
                            Text::from_static("XMLNSC"),
                            Value::Null,
                        )?
                    }
                };
                (&mut msg.root, body)
            }
            Start::Root => {
                let r = msg.root.root();
                (&mut msg.root, r)
            }
            Start::LocalEnvironment => {
                let r = msg.local_environment.root();
                (&mut msg.local_environment, r)
            }
            Start::Environment => {
                let r = environment.root();
                (environment, r)
            }
        })
    }
}

/// The `index`th child of `parent` named `name`, created (with the ones before it) when there
/// are fewer.
pub fn nth_child(
    t: &mut Tree,
    parent: NodeId,
    name: &str,
    index: usize,
) -> Result<NodeId, NodeError> {
    let mut seen = 0;
    let mut c = t.first_child(parent)?;
    while let Some(n) = c {
        if t.name_is(n, name.as_bytes()) {
            if seen == index {
                return Ok(n);
            }
            seen += 1;
        }
        c = t.next_sibling(n)?;
    }
    let mut last = None;
    for _ in seen..=index {
        let text = t.alloc_text(name.as_bytes());
        last = Some(t.create_last_child(parent, field_type::NAME, text, Value::Null)?);
    }
    last.ok_or_else(|| {
        NodeError::recoverable("no element created (this is a bug, please report it)")
    })
}

/// Follow `steps` from `at`, creating each missing element; the element reached.
pub fn walk(t: &mut Tree, mut at: NodeId, steps: &[String]) -> Result<NodeId, NodeError> {
    for s in steps {
        at = nth_child(t, at, s, 0)?;
    }
    Ok(at)
}

/// Set an element's value, making it a name-value element.
pub fn set(t: &mut Tree, id: NodeId, v: Value) {
    t.set_field_type(id, field_type::NAME_VALUE);
    t.set_value(id, v);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_reads_the_start_and_steps_when_the_path_is_plain() {
        let p =
            ElementPath::parse("data_elements", "$LocalEnvironment/Lookup/region").expect("path");
        assert_eq!(p.start, Start::LocalEnvironment);
        assert_eq!(p.steps, ["Lookup", "region"]);
    }

    #[test]
    fn parse_rejects_a_path_when_it_has_a_predicate() {
        let e = ElementPath::parse("data_elements", "$Body/a[1]/b").expect_err("rejected");
        assert!(e.message.contains("`a[1]` is not an element name"), "{e}");
    }

    #[test]
    fn nth_child_creates_the_missing_repeats_when_the_index_is_beyond_them() {
        let mut t = Tree::new("Root");
        let r = t.root();
        let third = nth_child(&mut t, r, "row", 2).expect("created");
        assert_eq!(t.children(r).expect("children").len(), 3);
        assert_eq!(nth_child(&mut t, r, "row", 2).expect("found"), third);
    }
}
