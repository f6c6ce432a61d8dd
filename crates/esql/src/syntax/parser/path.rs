//! Field references and their steps.

use super::{PResult, Parser};
use crate::syntax::ast::{
    BinaryOp, Expr, ExprKind, FieldRef, Ident, Index, Literal, NameSpec, NamespaceSpec, PathStep,
    TypeQualifier,
};
use crate::syntax::span::Span;
use crate::syntax::token::TokenKind;

impl Parser<'_> {
    /// A field reference starting with an identifier: `InputRoot.XMLNSC.a[1].*:b`.
    pub(crate) fn field_ref(&mut self) -> PResult<FieldRef> {
        let head = self.name_ident()?;
        self.field_ref_from(head)
    }

    /// A relative path such as a SELECT alias (`AS a.(XMLNSC.Attribute)b`), which may
    /// start with a type qualifier, a namespace or a dynamic name.
    pub(crate) fn relative_path(&mut self) -> PResult<FieldRef> {
        let start = self.span();
        let first = self.step(true)?;
        let mut steps = vec![first];
        self.more_steps(&mut steps)?;
        Ok(FieldRef {
            steps,
            span: self.since(start),
        })
    }

    /// The rest of a field reference whose first name was already read.
    pub(crate) fn field_ref_from(&mut self, head: Ident) -> PResult<FieldRef> {
        let start = head.span;
        let mut steps = if !head.quoted && self.at(&TokenKind::LParen) && is_context_call(&head) {
            self.context_call(head)?
        } else {
            vec![self.step_after_name(None, NameSpec::Ident(head), start)?]
        };
        self.more_steps(&mut steps)?;
        Ok(FieldRef {
            steps,
            span: self.since(start),
        })
    }

    fn more_steps(&mut self, steps: &mut Vec<PathStep>) -> PResult<()> {
        while self.at(&TokenKind::Dot) {
            self.advance();
            steps.push(self.step(true)?);
        }
        Ok(())
    }

    /// One step: `[(type)] [ns:] name [index]`.
    pub(crate) fn step(&mut self, allow_qualifier: bool) -> PResult<PathStep> {
        let start = self.span();
        let type_qualifier = if allow_qualifier && self.at(&TokenKind::LParen) {
            Some(self.type_qualifier()?)
        } else {
            None
        };
        let mut namespace = None;
        let name;
        if self.eat(&TokenKind::StarColon) {
            namespace = Some(NamespaceSpec::Any);
            name = self.step_name()?;
        } else if self.eat(&TokenKind::Colon) {
            namespace = Some(NamespaceSpec::Empty);
            name = self.step_name()?;
        } else {
            let first = self.step_name()?;
            if self.at(&TokenKind::Colon) && !matches!(first, NameSpec::Any) {
                self.advance();
                namespace = Some(match first {
                    NameSpec::Ident(id) => NamespaceSpec::Ident(id),
                    NameSpec::Dynamic(e) => NamespaceSpec::Dynamic(e),
                    NameSpec::Any => NamespaceSpec::Any,
                });
                name = self.step_name()?;
            } else {
                name = first;
            }
        }
        let mut step = self.step_after_name(namespace, name, start)?;
        step.type_qualifier = type_qualifier;
        Ok(step)
    }

    fn step_after_name(
        &mut self,
        namespace: Option<NamespaceSpec>,
        name: NameSpec,
        start: crate::syntax::span::Span,
    ) -> PResult<PathStep> {
        let index = if self.at(&TokenKind::LBracket) {
            Some(self.index()?)
        } else {
            None
        };
        Ok(PathStep {
            type_qualifier: None,
            namespace,
            name,
            index,
            span: self.since(start),
        })
    }

    fn step_name(&mut self) -> PResult<NameSpec> {
        match self.kind() {
            // `a.[2]`: the second child whatever its name, the same as `a.*[2]`.
            TokenKind::LBracket => Ok(NameSpec::Any),
            TokenKind::Star => {
                self.advance();
                Ok(NameSpec::Any)
            }
            TokenKind::LBrace => {
                self.advance();
                let e = self.expr()?;
                self.expect(&TokenKind::RBrace)?;
                Ok(NameSpec::Dynamic(Box::new(e)))
            }
            TokenKind::Word(_) | TokenKind::QuotedIdent(_) => Ok(NameSpec::Ident(self.any_name()?)),
            _ => Err(self.unexpected("a field name, `*` or `{`")),
        }
    }

    /// `(XMLNSC.Attribute)` or `(expr)`.
    fn type_qualifier(&mut self) -> PResult<TypeQualifier> {
        self.expect(&TokenKind::LParen)?;
        // The usual form is a dotted list of names; look ahead for it before falling back
        // to a general expression.
        let mut n = 0;
        let mut simple = true;
        loop {
            match &self.peek_at(n).kind {
                TokenKind::Word(_) | TokenKind::QuotedIdent(_) => {}
                _ => {
                    simple = false;
                    break;
                }
            }
            match &self.peek_at(n + 1).kind {
                TokenKind::Dot => n += 2,
                TokenKind::RParen => break,
                _ => {
                    simple = false;
                    break;
                }
            }
        }
        if simple {
            let mut names = vec![self.any_name()?];
            while self.eat(&TokenKind::Dot) {
                names.push(self.any_name()?);
            }
            self.expect(&TokenKind::RParen)?;
            Ok(TypeQualifier::Named(names))
        } else {
            let e = self.expr()?;
            self.expect(&TokenKind::RParen)?;
            Ok(TypeQualifier::Expr(Box::new(e)))
        }
    }

    /// `[n]`, `[<]`, `[<n]`, `[>]`, `[>n]`, `[]`.
    fn index(&mut self) -> PResult<Index> {
        self.expect(&TokenKind::LBracket)?;
        let index = if self.eat(&TokenKind::RBracket) {
            return Ok(Index::All);
        } else if self.eat(&TokenKind::Lt) {
            if self.at(&TokenKind::RBracket) {
                Index::FromLast(None)
            } else {
                Index::FromLast(Some(Box::new(self.expr()?)))
            }
        } else if self.eat(&TokenKind::Gt) {
            if self.at(&TokenKind::RBracket) {
                Index::FromFirst(None)
            } else {
                Index::FromFirst(Some(Box::new(self.expr()?)))
            }
        } else {
            Index::Nth(Box::new(self.expr()?))
        };
        self.expect(&TokenKind::RBracket)?;
        Ok(index)
    }
}

fn is_context_call(head: &Ident) -> bool {
    head.name.eq_ignore_ascii_case("CONTEXTREFERENCE")
        || head.name.eq_ignore_ascii_case("CONTEXTINVOCATIONNODE")
}

/// The sections of a node in the context tree, by the keyword that selects them.
const SECTIONS: [(&str, &str); 4] = [
    ("PAYLOAD", "Payload"),
    ("PAYLOADDETAILS", "PayloadDetails"),
    ("HEADERS", "Headers"),
    ("METADATA", "Metadata"),
];

fn ident(name: &str, span: Span) -> Ident {
    Ident {
        name: name.to_string(),
        quoted: false,
        span,
    }
}

fn plain_step(name: &str, span: Span) -> PathStep {
    PathStep {
        type_qualifier: None,
        namespace: None,
        name: NameSpec::Ident(ident(name, span)),
        index: None,
        span,
    }
}

impl Parser<'_> {
    /// `CONTEXTREFERENCE(NODENAME n [LEVELNAME l] [PAYLOAD|…])` and
    /// `CONTEXTINVOCATIONNODE([PAYLOAD|…])` are references into the context tree, read as
    /// the path `Context.Nodes.{label}[.Section]` they stand for, so that a path may go on
    /// after them and a REFERENCE may point at them. A node inside a subflow has the label
    /// `LEVEL.NODE`, LEVEL being the subflow node's label (dotted when nested).
    fn context_call(&mut self, head: Ident) -> PResult<Vec<PathStep>> {
        let span = head.span;
        self.expect(&TokenKind::LParen)?;
        let label = if head.name.eq_ignore_ascii_case("CONTEXTREFERENCE") {
            self.expect_kw("NODENAME")?;
            let node = self.additive()?;
            self.eat(&TokenKind::Comma);
            if self.eat_kw("LEVELNAME") {
                let level = self.additive()?;
                self.eat(&TokenKind::Comma);
                let dot = Expr {
                    kind: ExprKind::Literal(Literal::Character(".".into())),
                    span,
                };
                let concat = |lhs: Expr, rhs: Expr| Expr {
                    kind: ExprKind::Binary {
                        op: BinaryOp::Concat,
                        lhs: Box::new(lhs),
                        rhs: Box::new(rhs),
                    },
                    span,
                };
                concat(concat(level, dot), node)
            } else {
                node
            }
        } else {
            Expr {
                kind: ExprKind::Field(FieldRef {
                    steps: ["Context", "Invocation", "Node"]
                        .map(|n| plain_step(n, span))
                        .to_vec(),
                    span,
                }),
                span,
            }
        };
        let section = SECTIONS
            .iter()
            .find(|(kw, _)| self.at_kw(kw))
            .map(|(_, name)| *name);
        if section.is_some() {
            self.advance();
        }
        self.expect(&TokenKind::RParen)?;
        let mut steps = vec![
            plain_step("Context", span),
            plain_step("Nodes", span),
            PathStep {
                type_qualifier: None,
                namespace: None,
                name: NameSpec::Dynamic(Box::new(label)),
                index: None,
                span,
            },
        ];
        steps.extend(section.map(|s| plain_step(s, span)));
        Ok(steps)
    }
}
