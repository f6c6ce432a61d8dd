//! Expressions. Arithmetic follows the product's documented order: unary `-`/`+`, then
//! `*` `/`, then `||`, then `+` `-`. Below them come comparisons and the predicates
//! (BETWEEN, IN, LIKE, IS), then NOT, AND and OR, as in SQL.
//!
//! The reference lists NOT among the tight unary operators, which would make
//! `NOT x IS NULL` mean `(NOT x) IS NULL` — an error for any non-boolean `x`. Code that
//! runs on the product writes such conditions to mean `NOT (x IS NULL)`, and for boolean
//! comparisons both readings agree, so NOT is parsed at the logical level; where it
//! appears as an operand (`a = NOT b`) it binds tightly as the reference says.

use super::{PResult, Parser};
use crate::syntax::ast::{
    BetweenMode, BinaryOp, DatetimeField, Expr, ExprKind, IntervalQualifier, IsTest, Literal,
    UnaryOp,
};
use crate::syntax::token::TokenKind;

fn binary(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
    let span = lhs.span.to(rhs.span);
    Expr {
        kind: ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        span,
    }
}

impl Parser<'_> {
    pub(crate) fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.or_expr();
        self.leave();
        r
    }

    fn or_expr(&mut self) -> PResult<Expr> {
        let mut lhs = self.and_expr()?;
        while self.eat_kw("OR") {
            let rhs = self.and_expr()?;
            lhs = binary(BinaryOp::Or, lhs, rhs);
        }
        Ok(lhs)
    }

    fn and_expr(&mut self) -> PResult<Expr> {
        let mut lhs = self.not_expr()?;
        while self.eat_kw("AND") {
            let rhs = self.not_expr()?;
            lhs = binary(BinaryOp::And, lhs, rhs);
        }
        Ok(lhs)
    }

    fn not_expr(&mut self) -> PResult<Expr> {
        if !self.at_kw("NOT") {
            return self.predicate();
        }
        let start = self.advance().span;
        self.enter()?;
        let expr = self.not_expr();
        self.leave();
        let expr = expr?;
        Ok(Expr {
            span: start.to(expr.span),
            kind: ExprKind::Unary {
                op: UnaryOp::Not,
                expr: Box::new(expr),
            },
        })
    }

    /// Comparisons, BETWEEN, IN, LIKE and IS.
    fn predicate(&mut self) -> PResult<Expr> {
        let mut lhs = self.additive()?;
        loop {
            let op = match self.kind() {
                TokenKind::Eq => Some(BinaryOp::Eq),
                TokenKind::Ne => Some(BinaryOp::Ne),
                TokenKind::Lt => Some(BinaryOp::Lt),
                TokenKind::Le => Some(BinaryOp::Le),
                TokenKind::Gt => Some(BinaryOp::Gt),
                TokenKind::Ge => Some(BinaryOp::Ge),
                _ => None,
            };
            if let Some(op) = op {
                self.advance();
                let rhs = self.additive()?;
                lhs = binary(op, lhs, rhs);
                continue;
            }
            let negated = self.at_kw("NOT")
                && (self.at_kw_at(1, "BETWEEN")
                    || self.at_kw_at(1, "IN")
                    || self.at_kw_at(1, "LIKE"));
            if negated {
                self.advance();
            }
            if self.eat_kw("BETWEEN") {
                let mode = if self.eat_kw("SYMMETRIC") {
                    BetweenMode::Symmetric
                } else {
                    self.eat_kw("ASYMMETRIC");
                    BetweenMode::Asymmetric
                };
                let low = self.additive()?;
                self.expect_kw("AND")?;
                let high = self.additive()?;
                let span = lhs.span.to(high.span);
                lhs = Expr {
                    kind: ExprKind::Between {
                        expr: Box::new(lhs),
                        negated,
                        mode,
                        low: Box::new(low),
                        high: Box::new(high),
                    },
                    span,
                };
            } else if self.eat_kw("IN") {
                self.expect(&TokenKind::LParen)?;
                let list = self.expr_list(&TokenKind::RParen)?;
                let span = self.since(lhs.span);
                lhs = Expr {
                    kind: ExprKind::In {
                        expr: Box::new(lhs),
                        negated,
                        list,
                    },
                    span,
                };
            } else if self.eat_kw("LIKE") {
                let pattern = self.additive()?;
                let escape = if self.eat_kw("ESCAPE") {
                    Some(Box::new(self.additive()?))
                } else {
                    None
                };
                let span = self.since(lhs.span);
                lhs = Expr {
                    kind: ExprKind::Like {
                        expr: Box::new(lhs),
                        negated,
                        pattern: Box::new(pattern),
                        escape,
                    },
                    span,
                };
            } else if self.at_kw("IS") {
                self.advance();
                let negated = self.eat_kw("NOT");
                let test = self.is_test()?;
                let span = self.since(lhs.span);
                lhs = Expr {
                    kind: ExprKind::Is {
                        expr: Box::new(lhs),
                        negated,
                        test,
                    },
                    span,
                };
            } else {
                return Ok(lhs);
            }
        }
    }

    fn is_test(&mut self) -> PResult<IsTest> {
        let sign = if self.eat(&TokenKind::Plus) {
            Some(true)
        } else if self.eat(&TokenKind::Minus) {
            Some(false)
        } else {
            None
        };
        let word = self.word_upper();
        let test = match (sign, word.as_deref()) {
            (None, Some("NULL")) => IsTest::Null,
            (None, Some("TRUE")) => IsTest::True,
            (None, Some("FALSE")) => IsTest::False,
            (None, Some("UNKNOWN")) => IsTest::Unknown,
            (None, Some("INF")) => IsTest::Inf,
            (Some(true), Some("INF")) => IsTest::PlusInf,
            (Some(false), Some("INF")) => IsTest::MinusInf,
            (None, Some("NAN")) => IsTest::NaN,
            (None, Some("NUM")) => IsTest::Num,
            _ => {
                return Err(self.unexpected("NULL, TRUE, FALSE, UNKNOWN, INF, NAN or NUM after IS"));
            }
        };
        self.advance();
        Ok(test)
    }

    /// `+` and `-`: below `||` in ESQL.
    pub(crate) fn additive(&mut self) -> PResult<Expr> {
        let mut lhs = self.concat()?;
        loop {
            let op = match self.kind() {
                TokenKind::Plus => BinaryOp::Add,
                TokenKind::Minus => BinaryOp::Sub,
                _ => return Ok(lhs),
            };
            self.advance();
            let rhs = self.concat()?;
            lhs = binary(op, lhs, rhs);
        }
    }

    fn concat(&mut self) -> PResult<Expr> {
        let mut lhs = self.multiplicative()?;
        while self.eat(&TokenKind::Concat) {
            let rhs = self.multiplicative()?;
            lhs = binary(BinaryOp::Concat, lhs, rhs);
        }
        Ok(lhs)
    }

    fn multiplicative(&mut self) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        loop {
            let op = match self.kind() {
                TokenKind::Star => BinaryOp::Mul,
                TokenKind::Slash => BinaryOp::Div,
                _ => return Ok(lhs),
            };
            self.advance();
            let rhs = self.unary()?;
            lhs = binary(op, lhs, rhs);
        }
    }

    fn unary(&mut self) -> PResult<Expr> {
        let start = self.span();
        let op = match self.kind() {
            TokenKind::Minus => Some(UnaryOp::Neg),
            TokenKind::Plus => Some(UnaryOp::Plus),
            TokenKind::Word(w) if w.eq_ignore_ascii_case("NOT") => Some(UnaryOp::Not),
            _ => None,
        };
        match op {
            Some(op) => {
                self.advance();
                self.enter()?;
                let expr = self.unary();
                self.leave();
                let expr = expr?;
                Ok(Expr {
                    span: start.to(expr.span),
                    kind: ExprKind::Unary {
                        op,
                        expr: Box::new(expr),
                    },
                })
            }
            None => self.primary(),
        }
    }

    /// Comma-separated expressions up to and including `close`.
    pub(crate) fn expr_list(&mut self, close: &TokenKind) -> PResult<Vec<Expr>> {
        let mut list = Vec::new();
        if self.eat(close) {
            return Ok(list);
        }
        loop {
            list.push(self.expr()?);
            if self.eat(&TokenKind::Comma) {
                continue;
            }
            self.expect(close)?;
            return Ok(list);
        }
    }

    fn primary(&mut self) -> PResult<Expr> {
        let start = self.span();
        let lit = |kind| Ok(Some(ExprKind::Literal(kind)));
        let simple: PResult<Option<ExprKind>> = match self.kind().clone() {
            TokenKind::Str(s) => lit(Literal::Character(s)),
            TokenKind::Int(n) => lit(Literal::Integer(n)),
            TokenKind::Decimal(n) => lit(Literal::Decimal(n)),
            TokenKind::Float(n) => lit(Literal::Float(n)),
            TokenKind::Hex(h) => lit(Literal::Blob(h)),
            TokenKind::Bit(b) => lit(Literal::Bit(b)),
            _ => Ok(None),
        };
        if let Some(kind) = simple? {
            self.advance();
            return Ok(Expr { kind, span: start });
        }
        match self.kind().clone() {
            TokenKind::LParen => {
                self.advance();
                let inner = if self.at_kw("SELECT") {
                    let s = self.select()?;
                    Expr {
                        kind: ExprKind::Select(Box::new(s)),
                        span: self.since(start),
                    }
                } else {
                    self.expr()?
                };
                self.expect(&TokenKind::RParen)?;
                if let Some(qualifier) = self.opt_interval_qualifier()? {
                    return Ok(Expr {
                        kind: ExprKind::IntervalOf {
                            expr: Box::new(inner),
                            qualifier,
                        },
                        span: self.since(start),
                    });
                }
                // Keep the parentheses in the span so diagnostics point at what was written.
                let mut e = Expr {
                    kind: inner.kind,
                    span: self.since(start),
                };
                // `(SELECT …)[1]`: the product indexes a parenthesised list.
                while self.eat(&TokenKind::LBracket) {
                    let index = self.expr()?;
                    self.expect(&TokenKind::RBracket)?;
                    e = Expr {
                        kind: ExprKind::Index {
                            base: Box::new(e),
                            index: Box::new(index),
                        },
                        span: self.since(start),
                    };
                }
                Ok(e)
            }
            TokenKind::Word(_) | TokenKind::QuotedIdent(_) => self.word_primary(),
            _ => Err(self.unexpected("an expression")),
        }
    }

    /// `YEAR`, `DAY TO SECOND`, … when the next word is a date-time field.
    pub(crate) fn opt_interval_qualifier(&mut self) -> PResult<Option<IntervalQualifier>> {
        let start = self.span();
        let Some(lead) = self.word_upper().and_then(|w| DatetimeField::from_name(&w)) else {
            return Ok(None);
        };
        self.advance();
        let last = if self.eat_kw("TO") {
            match self.word_upper().and_then(|w| DatetimeField::from_name(&w)) {
                Some(f) => {
                    self.advance();
                    Some(f)
                }
                None => {
                    return Err(self.unexpected("a date-time field such as MINUTE"));
                }
            }
        } else {
            None
        };
        match IntervalQualifier::from_fields(lead, last) {
            Some(q) => Ok(Some(q)),
            None => Err(self.error_at(
                self.since(start),
                "no such interval qualifier: a qualifier runs from a larger field to a smaller one \
                 of the same kind, as in YEAR TO MONTH or DAY TO SECOND",
            )),
        }
    }
}
