//! Nested name scopes and the label stack used by the checker.

use std::collections::HashMap;

use crate::syntax::ast::Ident;
use crate::syntax::span::Span;

/// A loop or block label in force.
#[derive(Debug, Clone)]
pub struct Label {
    pub name: String,
    /// True for WHILE/REPEAT/LOOP/FOR, false for BEGIN: only loops can be ITERATEd.
    pub is_loop: bool,
}

#[derive(Debug, Default)]
pub struct Scopes {
    frames: Vec<HashMap<String, Span>>,
    /// Names in each frame that cannot be assigned (CONSTANT, EXTERNAL, NAMESPACE, NAME).
    constants: Vec<HashMap<String, Span>>,
}

impl Scopes {
    pub fn push(&mut self) {
        self.frames.push(HashMap::new());
        self.constants.push(HashMap::new());
    }

    pub fn pop(&mut self) {
        self.frames.pop();
        self.constants.pop();
    }

    /// Marks a name declared in the innermost scope as not assignable.
    pub fn mark_constant(&mut self, id: &Ident) {
        if let Some(frame) = self.constants.last_mut() {
            frame.insert(id.name.clone(), id.span);
        }
    }

    /// Where the constant that `name` resolves to was declared, when the innermost
    /// declaration of `name` is a constant.
    pub fn constant(&self, name: &str) -> Option<Span> {
        self.frames
            .iter()
            .zip(&self.constants)
            .rev()
            .find(|(names, _)| names.contains_key(name))
            .and_then(|(_, constants)| constants.get(name).copied())
    }

    /// Declares `id` in the innermost scope; returns where it was declared before when
    /// it already is, in that same scope.
    pub fn declare(&mut self, id: &Ident) -> Option<Span> {
        let frame = self.frames.last_mut()?;
        if let Some(prev) = frame.get(&id.name) {
            return Some(*prev);
        }
        frame.insert(id.name.clone(), id.span);
        None
    }

    /// Adds a name that may legitimately repeat (a FOR variable, a SELECT alias).
    pub fn bind(&mut self, name: &str, span: Span) {
        if let Some(frame) = self.constants.last_mut() {
            frame.remove(name);
        }
        if let Some(frame) = self.frames.last_mut() {
            frame.insert(name.to_string(), span);
        }
    }

    pub fn visible(&self, name: &str) -> bool {
        self.frames.iter().any(|f| f.contains_key(name))
    }

    /// A visible name spelt like `name` apart from case.
    pub fn similar(&self, name: &str) -> Option<String> {
        self.frames
            .iter()
            .rev()
            .flat_map(|f| f.keys())
            .find(|k| k.eq_ignore_ascii_case(name))
            .cloned()
    }
}
