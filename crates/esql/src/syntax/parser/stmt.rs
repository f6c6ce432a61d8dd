//! Statements: control flow, SET, CALL, PROPAGATE, THROW, LOG and the rest; the
//! message-tree statements are in `tree.rs`.

use super::{PResult, Parser};
use crate::syntax::ast::{
    Call, CaseStmt, EventClauses, Expr, ExprKind, FieldPart, FieldRef, Handler, HandlerKind, Ident,
    IfStmt, LogKind, Propagate, PropagateControl, PropagateTarget, SqlStateCondition, Stmt,
    StmtKind,
};
use crate::syntax::token::TokenKind;

/// Compound statements, which end with `END <keyword>`.
const COMPOUND: &[&str] = &["IF", "CASE", "WHILE", "REPEAT", "LOOP", "FOR"];

/// Words that end a statement list.
const BLOCK_END: &[&str] = &["END", "ELSE", "ELSEIF", "WHEN", "UNTIL"];

impl Parser<'_> {
    /// Statements, each ending in `;`, up to a block-ending keyword or end of file.
    /// A broken statement is recorded and skipped.
    pub(crate) fn block(&mut self) -> Vec<Stmt> {
        let mut stmts = Vec::new();
        loop {
            if self.at_eof() || BLOCK_END.iter().any(|k| self.at_kw(k)) {
                return stmts;
            }
            let before = self.pos;
            self.closed_early = false;
            let r = self.statement().and_then(|s| {
                if std::mem::take(&mut self.closed_early) {
                    return Ok(s);
                }
                self.expect(&TokenKind::Semi)?;
                Ok(s)
            });
            match r {
                Ok(s) => stmts.push(s),
                Err(e) => {
                    self.record(e);
                    self.skip_statement();
                    if self.pos == before {
                        // Nothing could be skipped: consume one token so the loop ends.
                        self.advance();
                    }
                }
            }
        }
    }

    /// Parses a compound statement while it is on the stack of open ones, which
    /// [`Self::end_of`] consults to attribute a mismatched `END`.
    fn compound(
        &mut self,
        kw: &'static str,
        f: impl FnOnce(&mut Self) -> PResult<StmtKind>,
    ) -> PResult<StmtKind> {
        self.open.push(kw);
        let r = f(self);
        self.open.pop();
        r
    }

    /// One statement, without its `;`.
    pub(crate) fn statement(&mut self) -> PResult<Stmt> {
        self.enter()?;
        let r = self.statement_inner();
        self.leave();
        r
    }

    fn statement_inner(&mut self) -> PResult<Stmt> {
        let start = self.span();
        // `label: WHILE …`
        if self.at_ident() && matches!(self.peek_at(1).kind, TokenKind::Colon) {
            let label = self.ident()?;
            self.advance();
            let kind = match self.word_upper().as_deref() {
                Some("WHILE") => self.compound("WHILE", |p| p.while_stmt(Some(label)))?,
                Some("REPEAT") => self.compound("REPEAT", |p| p.repeat_stmt(Some(label)))?,
                Some("LOOP") => self.compound("LOOP", |p| p.loop_stmt(Some(label)))?,
                Some("FOR") => self.compound("FOR", |p| p.for_stmt(Some(label)))?,
                Some("BEGIN") => self.begin_stmt(Some(label))?,
                _ => return Err(self.unexpected("WHILE, REPEAT, LOOP, FOR or BEGIN after a label")),
            };
            return Ok(Stmt {
                kind,
                span: self.since(start),
            });
        }
        let Some(word) = self.word_upper() else {
            return Err(self.unexpected("a statement"));
        };
        let kind = match word.as_str() {
            "DECLARE" => return self.declare_stmt(),
            "SET" => self.set_stmt()?,
            "CREATE" => self.create_stmt()?,
            "MOVE" => self.move_stmt()?,
            "DETACH" => {
                self.advance();
                StmtKind::Detach(self.field_ref()?)
            }
            "ATTACH" => self.attach_stmt()?,
            "DELETE" => self.delete_stmt()?,
            "IF" => self.compound("IF", |p| p.if_stmt())?,
            "CASE" => self.compound("CASE", |p| p.case_stmt())?,
            "WHILE" => self.compound("WHILE", |p| p.while_stmt(None))?,
            "REPEAT" => self.compound("REPEAT", |p| p.repeat_stmt(None))?,
            "LOOP" => self.compound("LOOP", |p| p.loop_stmt(None))?,
            "FOR" => self.compound("FOR", |p| p.for_stmt(None))?,
            "BEGIN" => self.begin_stmt(None)?,
            "LEAVE" => {
                self.advance();
                StmtKind::Leave(self.label_name()?)
            }
            "ITERATE" => {
                self.advance();
                StmtKind::Iterate(self.label_name()?)
            }
            "RETURN" => {
                self.advance();
                if self.at(&TokenKind::Semi) {
                    StmtKind::Return(None)
                } else {
                    StmtKind::Return(Some(self.expr()?))
                }
            }
            "PROPAGATE" => self.propagate()?,
            "THROW" => {
                self.advance();
                self.eat_kw("USER");
                self.expect_kw("EXCEPTION")?;
                StmtKind::Throw(self.event_clauses()?)
            }
            "RESIGNAL" => {
                self.advance();
                StmtKind::Resignal
            }
            "CALL" => self.call_stmt()?,
            "EVAL" => {
                self.advance();
                StmtKind::Eval(self.expr()?)
            }
            "LOG" => self.log_stmt()?,
            "PASSTHRU" => self.passthru_stmt()?,
            "INSERT" => self.insert_stmt()?,
            "UPDATE" => self.update_stmt()?,
            "COMMIT" | "ROLLBACK" => {
                self.advance();
                let datasource = if self.at(&TokenKind::Semi) {
                    None
                } else {
                    Some(self.expr()?)
                };
                StmtKind::EndWork {
                    commit: word == "COMMIT",
                    datasource,
                }
            }
            _ => return Err(self.unexpected("a statement")),
        };
        Ok(Stmt {
            kind,
            span: self.since(start),
        })
    }

    fn label_name(&mut self) -> PResult<Ident> {
        if self.at_ident() {
            self.ident()
        } else {
            Err(self.unexpected("a label"))
        }
    }

    fn set_stmt(&mut self) -> PResult<StmtKind> {
        self.advance();
        let target = self.field_ref()?;
        let part = match self.word_upper().as_deref() {
            Some("TYPE") => Some(FieldPart::Type),
            Some("NAMESPACE") => Some(FieldPart::Namespace),
            Some("NAME") => Some(FieldPart::Name),
            Some("VALUE") => Some(FieldPart::Value),
            _ => None,
        };
        if part.is_some() {
            self.advance();
        }
        self.expect(&TokenKind::Eq)?;
        let value = self.expr()?;
        Ok(StmtKind::Set {
            target,
            part,
            value,
        })
    }

    /// Parses a header expression; on error records it and skips to `kw` so that the
    /// body is still parsed. Returns a NULL placeholder for the broken expression.
    fn header_expr(&mut self, kw: &str) -> PResult<Expr> {
        let start = self.span();
        match self.expr().and_then(|e| {
            self.expect_kw(kw)?;
            Ok(e)
        }) {
            Ok(e) => Ok(e),
            Err(err) => {
                if self.recover_to(kw) {
                    self.record(err);
                    Ok(Expr {
                        kind: ExprKind::Literal(crate::syntax::ast::Literal::Null),
                        span: start,
                    })
                } else {
                    Err(err)
                }
            }
        }
    }

    fn if_stmt(&mut self) -> PResult<StmtKind> {
        self.advance();
        let mut branches = Vec::new();
        let cond = self.header_expr("THEN")?;
        branches.push((cond, self.block()));
        let mut otherwise = None;
        loop {
            if self.eat_kw("ELSEIF") {
                let cond = self.header_expr("THEN")?;
                branches.push((cond, self.block()));
            } else if self.eat_kw("ELSE") {
                otherwise = Some(self.block());
            } else {
                break;
            }
        }
        self.end_of("IF")?;
        Ok(StmtKind::If(IfStmt {
            branches,
            otherwise,
        }))
    }

    fn case_stmt(&mut self) -> PResult<StmtKind> {
        self.advance();
        let operand = if self.at_kw("WHEN") {
            None
        } else {
            Some(self.expr()?)
        };
        let mut whens = Vec::new();
        while self.eat_kw("WHEN") {
            let cond = self.header_expr("THEN")?;
            whens.push((cond, self.block()));
        }
        if whens.is_empty() {
            return Err(self.unexpected("`WHEN`"));
        }
        let otherwise = if self.eat_kw("ELSE") {
            Some(self.block())
        } else {
            None
        };
        self.end_of("CASE")?;
        Ok(StmtKind::Case(CaseStmt {
            operand,
            whens,
            otherwise,
        }))
    }

    /// `END kw`, with a clear message when another END follows instead. When the END
    /// belongs to an enclosing compound statement (`END WHILE` where `END IF` was
    /// expected), the error is recorded and the END left for its owner.
    fn end_of(&mut self, kw: &str) -> PResult<()> {
        if !self.at_kw("END") {
            return Err(self.unexpected(&format!("`END {kw}`")));
        }
        let other = COMPOUND
            .iter()
            .find(|k| **k != kw && self.at_kw_at(1, k))
            .copied();
        if let Some(other) = other {
            let e = self.error_at(
                self.span(),
                format!("expected `END {kw}`, found `END {other}`"),
            );
            self.record(e);
            // The innermost statements are still open, this one included.
            let enclosing = self.open.iter().rev().skip(1).any(|k| *k == other);
            if enclosing {
                // Our own `END` is missing: leave this one to its owner.
                self.closed_early = true;
            } else {
                // A misspelt end of this statement: take it as ours.
                self.advance();
                self.advance();
            }
            return Ok(());
        }
        if !self.at_kw_at(1, kw) {
            self.advance();
            return Err(self.unexpected(&format!("`{kw}` after END")));
        }
        self.advance();
        self.advance();
        Ok(())
    }

    /// The optional label after `END WHILE` etc., which must match the opening one.
    fn end_label(&mut self, label: &Option<Ident>) -> PResult<()> {
        if self.closed_early {
            // The END seen belongs to an enclosing statement; so does what follows it.
            return Ok(());
        }
        // `END FOR` where a plain `END` belongs: the word closes something else.
        if ["IF", "CASE", "WHILE", "REPEAT", "LOOP", "FOR", "MODULE"]
            .iter()
            .any(|k| self.at_kw(k))
        {
            return Err(self.unexpected("`;`"));
        }
        let end = self.label_ident()?;
        match (label, end) {
            (_, None) => Ok(()),
            (Some(l), Some(e)) if l.name == e.name => Ok(()),
            (Some(l), Some(e)) => Err(self.error_at(
                e.span,
                format!("end label `{}` does not match label `{}`", e.name, l.name),
            )),
            (None, Some(e)) => Err(self.error_at(
                e.span,
                format!("end label `{}` has no matching label", e.name),
            )),
        }
    }

    fn while_stmt(&mut self, label: Option<Ident>) -> PResult<StmtKind> {
        self.advance();
        let cond = self.header_expr("DO")?;
        let body = self.block();
        self.end_of("WHILE")?;
        self.end_label(&label)?;
        Ok(StmtKind::While { label, cond, body })
    }

    fn repeat_stmt(&mut self, label: Option<Ident>) -> PResult<StmtKind> {
        self.advance();
        let body = self.block();
        self.expect_kw("UNTIL")?;
        let until = self.expr()?;
        self.end_of("REPEAT")?;
        self.end_label(&label)?;
        Ok(StmtKind::Repeat { label, body, until })
    }

    fn loop_stmt(&mut self, label: Option<Ident>) -> PResult<StmtKind> {
        self.advance();
        let body = self.block();
        self.end_of("LOOP")?;
        self.end_label(&label)?;
        Ok(StmtKind::Loop { label, body })
    }

    fn for_stmt(&mut self, label: Option<Ident>) -> PResult<StmtKind> {
        self.advance();
        let start = self.span();
        let header = (|| {
            let var = self.ident()?;
            self.expect_kw("AS")?;
            let source = self.field_ref()?;
            self.expect_kw("DO")?;
            Ok((var, source))
        })();
        let (var, source) = match header {
            Ok(h) => h,
            // Report the broken header and still parse the body, as for WHILE.
            Err(e) if self.recover_to("DO") => {
                self.record(e);
                let var = Ident {
                    name: String::new(),
                    quoted: false,
                    span: start,
                };
                let source = FieldRef {
                    steps: Vec::new(),
                    span: start,
                };
                (var, source)
            }
            Err(e) => return Err(e),
        };
        let body = self.block();
        self.end_of("FOR")?;
        self.end_label(&label)?;
        Ok(StmtKind::For {
            label,
            var,
            source,
            body,
        })
    }

    fn begin_stmt(&mut self, label: Option<Ident>) -> PResult<StmtKind> {
        self.advance();
        let atomic = if self.at_kw("NOT") && self.at_kw_at(1, "ATOMIC") {
            self.advance();
            self.advance();
            false
        } else {
            self.eat_kw("ATOMIC")
        };
        let body = self.block();
        self.expect_kw("END")?;
        self.end_label(&label)?;
        Ok(StmtKind::Begin {
            label,
            atomic,
            body,
        })
    }

    fn propagate(&mut self) -> PResult<StmtKind> {
        self.advance();
        let mut p = Propagate {
            target: None,
            environment: None,
            message: None,
            exception: None,
            finalize: None,
            delete: None,
        };
        if self.eat_kw("TO") {
            if self.eat_kw("TERMINAL") {
                p.target = Some(PropagateTarget::Terminal(self.expr()?));
            } else if self.eat_kw("LABEL") {
                p.target = Some(PropagateTarget::Label(self.expr()?));
            } else {
                return Err(self.unexpected("TERMINAL or LABEL"));
            }
        }
        while let Some(word) = self.word_upper() {
            let kw = self.span();
            let twice = |p: &Parser| p.error_at(kw, format!("{word} given twice in PROPAGATE"));
            match word.as_str() {
                "ENVIRONMENT" | "MESSAGE" | "EXCEPTION" => {
                    self.advance();
                    let r = self.field_ref()?;
                    let slot = match word.as_str() {
                        "ENVIRONMENT" => &mut p.environment,
                        "MESSAGE" => &mut p.message,
                        _ => &mut p.exception,
                    };
                    if slot.is_some() {
                        return Err(twice(self));
                    }
                    *slot = Some(r);
                }
                "FINALIZE" | "DELETE" => {
                    self.advance();
                    let c = if self.eat_kw("DEFAULT") {
                        PropagateControl::Default
                    } else if self.eat_kw("NONE") {
                        PropagateControl::None
                    } else {
                        return Err(self.unexpected("DEFAULT or NONE"));
                    };
                    let slot = if word == "FINALIZE" {
                        &mut p.finalize
                    } else {
                        &mut p.delete
                    };
                    if slot.is_some() {
                        return Err(twice(self));
                    }
                    *slot = Some(c);
                }
                _ => break,
            }
        }
        Ok(StmtKind::Propagate(p))
    }

    /// CATALOG, MESSAGE, SEVERITY and VALUES in any order.
    fn event_clauses(&mut self) -> PResult<EventClauses> {
        let mut c = EventClauses::default();
        let mut seen_values = false;
        loop {
            let Some(word) = self.word_upper() else {
                return Ok(c);
            };
            let kw = self.span();
            let slot = match word.as_str() {
                "CATALOG" => &mut c.catalog,
                "MESSAGE" => &mut c.message,
                "SEVERITY" => &mut c.severity,
                "VALUES" => {
                    if seen_values {
                        return Err(self.error_at(kw, "VALUES given twice"));
                    }
                    seen_values = true;
                    self.advance();
                    self.expect(&TokenKind::LParen)?;
                    c.values = self.expr_list(&TokenKind::RParen)?;
                    continue;
                }
                _ => return Ok(c),
            };
            if slot.is_some() {
                return Err(self.error_at(kw, format!("{word} given twice")));
            }
            self.advance();
            *slot = Some(self.expr()?);
        }
    }

    fn log_stmt(&mut self) -> PResult<StmtKind> {
        self.advance();
        let kind = if self.eat_kw("EVENT") {
            LogKind::Event
        } else if self.eat_kw("USER") {
            self.expect_kw("TRACE")?;
            LogKind::UserTrace
        } else {
            return Err(self.unexpected("EVENT or USER TRACE"));
        };
        let exception = self.eat_kw("EXCEPTION");
        let clauses = self.event_clauses()?;
        Ok(StmtKind::Log {
            kind,
            exception,
            clauses,
        })
    }

    fn call_stmt(&mut self) -> PResult<StmtKind> {
        self.advance();
        let name = self.qualified_name()?;
        self.expect(&TokenKind::LParen)?;
        let args = self.expr_list(&TokenKind::RParen)?;
        let schema = if self.eat_kw("IN") {
            Some(self.field_ref()?)
        } else {
            None
        };
        let into = if self.eat_kw("INTO") {
            Some(self.field_ref()?)
        } else {
            None
        };
        Ok(StmtKind::Call(Call {
            name,
            args,
            schema,
            into,
        }))
    }

    fn passthru_stmt(&mut self) -> PResult<StmtKind> {
        let start = self.span();
        if matches!(self.peek_at(1).kind, TokenKind::LParen) {
            let kind = self.passthru_expr()?;
            return Ok(StmtKind::Passthru(Expr {
                kind,
                span: self.since(start),
            }));
        }
        // `PASSTHRU 'sql' [TO …] [VALUES (…)]` without parentheses.
        self.advance();
        let sql = self.expr()?;
        let (to, values) = self.passthru_tail()?;
        Ok(StmtKind::Passthru(Expr {
            kind: ExprKind::Passthru {
                sql: Box::new(sql),
                to,
                values,
            },
            span: self.since(start),
        }))
    }

    pub(crate) fn handler(&mut self) -> PResult<Handler> {
        self.expect_kw("DECLARE")?;
        let kind = if self.eat_kw("CONTINUE") {
            HandlerKind::Continue
        } else {
            self.expect_kw("EXIT")?;
            HandlerKind::Exit
        };
        self.expect_kw("HANDLER")?;
        self.expect_kw("FOR")?;
        let mut conditions = Vec::new();
        loop {
            self.expect_kw("SQLSTATE")?;
            let like = self.eat_kw("LIKE");
            if !like {
                self.eat_kw("VALUE");
            }
            let pattern = self.additive()?;
            let escape = if like && self.eat_kw("ESCAPE") {
                Some(self.additive()?)
            } else {
                None
            };
            conditions.push(SqlStateCondition {
                like,
                pattern,
                escape,
            });
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        let body = Box::new(self.statement()?);
        Ok(Handler {
            kind,
            conditions,
            body,
        })
    }
}
