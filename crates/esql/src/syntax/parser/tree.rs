//! Statements that change message trees and database tables: CREATE, MOVE, ATTACH,
//! DETACH's companions, DELETE, INSERT and UPDATE.

use super::{PResult, Parser};
use crate::syntax::ast::{
    Create, CreatePosition, CreateSource, FieldClauses, MoveTarget, Relation, RepeatBy, StmtKind,
    Update,
};
use crate::syntax::token::TokenKind;

impl Parser<'_> {
    fn relation(&self) -> Option<Relation> {
        match self.word_upper().as_deref() {
            Some("FIRSTCHILD") => Some(Relation::FirstChild),
            Some("LASTCHILD") => Some(Relation::LastChild),
            Some("PREVIOUSSIBLING") => Some(Relation::PreviousSibling),
            Some("NEXTSIBLING") => Some(Relation::NextSibling),
            _ => None,
        }
    }

    /// TYPE/NAMESPACE/NAME/IDENTITY (and VALUE when `with_value`) in any order.
    fn field_clauses(&mut self, with_value: bool) -> PResult<FieldClauses> {
        let mut c = FieldClauses::default();
        loop {
            let Some(word) = self.word_upper() else {
                return Ok(c);
            };
            let kw = self.span();
            if word == "IDENTITY" {
                if c.identity.is_some() {
                    return Err(self.error_at(kw, "IDENTITY given twice"));
                }
                self.advance();
                c.identity = Some(Box::new(self.step(true)?));
                continue;
            }
            let slot = match word.as_str() {
                "TYPE" => &mut c.ty,
                "NAMESPACE" => &mut c.namespace,
                "NAME" => &mut c.name,
                "VALUE" if with_value => &mut c.value,
                _ => return Ok(c),
            };
            if slot.is_some() {
                return Err(self.error_at(kw, format!("{word} given twice")));
            }
            self.advance();
            // `MOVE r FIRSTCHILD NAMESPACE *`: any namespace (or name), as no clause says.
            if matches!(word.as_str(), "NAMESPACE" | "NAME") && self.eat(&TokenKind::Star) {
                continue;
            }
            *slot = Some(Box::new(self.expr()?));
        }
    }

    pub(crate) fn create_stmt(&mut self) -> PResult<StmtKind> {
        self.advance();
        let position = if self.eat_kw("FIELD") {
            CreatePosition::Field
        } else if let Some(rel) = self.relation() {
            self.advance();
            self.expect_kw("OF")?;
            CreatePosition::Relative(rel)
        } else {
            return Err(self.unexpected(
                "FIELD, FIRSTCHILD OF, LASTCHILD OF, PREVIOUSSIBLING OF or NEXTSIBLING OF",
            ));
        };
        let target = self.field_ref()?;
        let as_ref = if self.eat_kw("AS") {
            Some(self.field_ref()?)
        } else {
            None
        };
        let domain = if self.eat_kw("DOMAIN") {
            Some(self.expr()?)
        } else {
            None
        };
        let source = if self.eat_kw("REPEAT") {
            let value = if self.eat_kw("VALUE") {
                Some(self.expr()?)
            } else {
                None
            };
            CreateSource::Repeat(value)
        } else if self.eat_kw("FROM") {
            CreateSource::From(self.expr()?)
        } else if self.at_kw("PARSE") {
            self.advance();
            self.expect(&TokenKind::LParen)?;
            let source = self.expr()?;
            let options = self.bitstream_options()?;
            self.expect(&TokenKind::RParen)?;
            CreateSource::Parse { source, options }
        } else {
            CreateSource::Values(self.field_clauses(true)?)
        };
        Ok(StmtKind::Create(Create {
            position,
            target,
            as_ref,
            domain,
            source,
        }))
    }

    pub(crate) fn move_stmt(&mut self) -> PResult<StmtKind> {
        self.advance();
        let reference = self.field_ref()?;
        let target = if self.eat_kw("TO") {
            MoveTarget::To(self.field_ref()?)
        } else if self.eat_kw("PARENT") {
            MoveTarget::Parent
        } else if let Some(relation) = self.relation() {
            self.advance();
            let clauses = self.field_clauses(false)?;
            let repeat = if self.eat_kw("REPEAT") {
                let ty = self.eat_kw("TYPE");
                let name = self.eat_kw("NAME");
                if !ty && !name {
                    return Err(self.unexpected("TYPE or NAME after REPEAT"));
                }
                Some(RepeatBy { ty, name })
            } else {
                None
            };
            MoveTarget::Relative {
                relation,
                clauses,
                repeat,
            }
        } else {
            return Err(self
                .unexpected("TO, PARENT, FIRSTCHILD, LASTCHILD, PREVIOUSSIBLING or NEXTSIBLING"));
        };
        Ok(StmtKind::Move { reference, target })
    }

    pub(crate) fn attach_stmt(&mut self) -> PResult<StmtKind> {
        self.advance();
        let source = self.field_ref()?;
        self.expect_kw("TO")?;
        let target = self.field_ref()?;
        self.expect_kw("AS")?;
        let Some(relation) = self.relation() else {
            return Err(self.unexpected("FIRSTCHILD, LASTCHILD, PREVIOUSSIBLING or NEXTSIBLING"));
        };
        self.advance();
        Ok(StmtKind::Attach {
            source,
            target,
            relation,
        })
    }

    pub(crate) fn delete_stmt(&mut self) -> PResult<StmtKind> {
        self.advance();
        if self.eat_kw("FIELD") {
            let target = self.field_ref()?;
            return Ok(StmtKind::DeleteField {
                relation: None,
                target,
                clauses: FieldClauses::default(),
            });
        }
        if let Some(rel) = self.relation() {
            self.advance();
            self.expect_kw("OF")?;
            let target = self.field_ref()?;
            let clauses = self.field_clauses(false)?;
            return Ok(StmtKind::DeleteField {
                relation: Some(rel),
                target,
                clauses,
            });
        }
        if self.eat_kw("FROM") {
            let table = self.field_ref()?;
            let alias = if self.eat_kw("AS") {
                Some(self.ident()?)
            } else {
                None
            };
            let filter = if self.eat_kw("WHERE") {
                Some(self.expr()?)
            } else {
                None
            };
            return Ok(StmtKind::DeleteFrom {
                table,
                alias,
                filter,
            });
        }
        Err(self.unexpected(
            "FIELD, FROM, FIRSTCHILD OF, LASTCHILD OF, PREVIOUSSIBLING OF or NEXTSIBLING OF",
        ))
    }

    pub(crate) fn insert_stmt(&mut self) -> PResult<StmtKind> {
        self.advance();
        self.expect_kw("INTO")?;
        let table = self.field_ref()?;
        let mut columns = Vec::new();
        if self.eat(&TokenKind::LParen) {
            loop {
                columns.push(self.any_name()?);
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            self.expect(&TokenKind::RParen)?;
        }
        self.expect_kw("VALUES")?;
        self.expect(&TokenKind::LParen)?;
        let values = self.expr_list(&TokenKind::RParen)?;
        if !columns.is_empty() && columns.len() != values.len() {
            return Err(self.error_at(
                self.prev_span(),
                format!(
                    "INSERT names {} columns but gives {} values",
                    columns.len(),
                    values.len()
                ),
            ));
        }
        Ok(StmtKind::Insert {
            table,
            columns,
            values,
        })
    }

    pub(crate) fn update_stmt(&mut self) -> PResult<StmtKind> {
        self.advance();
        let table = self.field_ref()?;
        let alias = if self.eat_kw("AS") {
            Some(self.ident()?)
        } else {
            None
        };
        self.expect_kw("SET")?;
        let mut sets = Vec::new();
        loop {
            let column = self.field_ref()?;
            self.expect(&TokenKind::Eq)?;
            sets.push((column, self.expr()?));
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        let filter = if self.eat_kw("WHERE") {
            Some(self.expr()?)
        } else {
            None
        };
        Ok(StmtKind::Update(Update {
            table,
            alias,
            sets,
            filter,
        }))
    }
}
