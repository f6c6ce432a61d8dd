//! Files, modules, routines, DECLARE and data types.

use sluice_tree::data_type::DECIMAL_MAX_PRECISION;
use sluice_tree::{DataType as ScalarDataType, ScalarType};

use super::{PResult, Parser};
use crate::syntax::ast::{
    DataType, Declare, DeclareModifier, File, Ident, Item, Language, Module, ModuleKind, Param,
    ParamMode, Routine, RoutineBody, RoutineKind, Stmt, StmtKind, TypeSpec,
};
use crate::syntax::span::Span;
use crate::syntax::token::TokenKind;

impl Parser<'_> {
    pub(crate) fn file(&mut self) -> super::super::ast::File {
        let start = self.span();
        let mut schema = None;
        let mut path = Vec::new();
        if self.at_kw("BROKER") {
            let r: PResult<_> = (|| {
                self.advance();
                self.expect_kw("SCHEMA")?;
                let name = self.qualified_name()?;
                self.eat(&TokenKind::Semi);
                Ok(name)
            })();
            match r {
                Ok(name) => schema = Some(name),
                Err(e) => {
                    // BROKER SCHEMA has no `;`: skip the rest of its line only.
                    let line = e.span.line;
                    self.record(e);
                    while !self.at_eof() && self.span().line == line {
                        self.advance();
                    }
                }
            }
        }
        if self.at_kw("PATH") {
            let r: PResult<_> = (|| {
                self.advance();
                let mut names = vec![self.qualified_name()?];
                while self.eat(&TokenKind::Comma) {
                    names.push(self.qualified_name()?);
                }
                // The product accepts a PATH clause without its `;`.
                self.eat(&TokenKind::Semi);
                Ok(names)
            })();
            match r {
                Ok(names) => path = names,
                Err(e) => {
                    self.record(e);
                    self.skip_statement();
                }
            }
        }
        let items = self.items(false);
        File {
            schema,
            path,
            items,
            span: self.since(start),
        }
    }

    /// Items until end of file, or (inside a module) until `END MODULE`.
    fn items(&mut self, in_module: bool) -> Vec<Item> {
        let mut items = Vec::new();
        loop {
            if self.at_eof() || (in_module && self.at_kw("END")) {
                return items;
            }
            match self.item(in_module) {
                Ok(item) => items.push(item),
                // A routine whose header was broken has recorded its error and skipped
                // its body already.
                Err(e) if e.message.is_empty() => {}
                Err(e) => {
                    self.record(e);
                    self.skip_statement();
                    // At file level a leftover `END MODULE;` of the broken item closes
                    // nothing: skip it too rather than report it again.
                    if !in_module && self.at_kw("END") {
                        self.skip_statement();
                    }
                }
            }
        }
    }

    fn item(&mut self, in_module: bool) -> PResult<Item> {
        if self.at_kw("DECLARE") {
            let d = self.declare()?;
            self.expect(&TokenKind::Semi)?;
            return Ok(Item::Declare(d));
        }
        if !self.at_kw("CREATE") {
            let expected = if in_module {
                "DECLARE, CREATE FUNCTION, CREATE PROCEDURE or END MODULE"
            } else {
                "DECLARE or CREATE"
            };
            return Err(self.unexpected(expected));
        }
        let start = self.advance().span;
        match self.word_upper().as_deref() {
            Some("FUNCTION") => Ok(Item::Routine(self.routine(start, RoutineKind::Function)?)),
            Some("PROCEDURE") => Ok(Item::Routine(self.routine(start, RoutineKind::Procedure)?)),
            Some("COMPUTE" | "FILTER" | "DATABASE") if !in_module => {
                Ok(Item::Module(self.module(start)?))
            }
            _ if in_module => Err(self.unexpected("FUNCTION or PROCEDURE")),
            _ => Err(self.unexpected(
                "COMPUTE MODULE, FILTER MODULE, DATABASE MODULE, FUNCTION or PROCEDURE",
            )),
        }
    }

    fn module(&mut self, start: Span) -> PResult<Module> {
        let kind = match self.word_upper().as_deref() {
            Some("COMPUTE") => ModuleKind::Compute,
            Some("FILTER") => ModuleKind::Filter,
            _ => ModuleKind::Database,
        };
        self.advance();
        self.expect_kw("MODULE")?;
        let name = self.ident()?;
        self.eat(&TokenKind::Semi);
        let items = self.items(true);
        if self.at_eof() {
            return Err(self.error_at(
                name.span,
                format!("module `{}` has no END MODULE", name.name),
            ));
        }
        self.expect_kw("END")?;
        self.expect_kw("MODULE")?;
        self.eat(&TokenKind::Semi);
        Ok(Module {
            kind,
            name,
            items,
            span: self.since(start),
        })
    }

    fn routine(&mut self, start: Span, kind: RoutineKind) -> PResult<Routine> {
        let header = self.pos;
        match self.routine_inner(start, kind) {
            Ok(r) => Ok(r),
            Err(e) => {
                // A broken header: report it, then parse the body anyway so that its
                // errors are found and its END does not close the module.
                let body_follows = self.at_kw("BEGIN") || self.contains_before_semi("BEGIN");
                if self.pos == header || !body_follows {
                    return Err(e);
                }
                self.record(e);
                if !self.recover_to("BEGIN") {
                    // Nothing to resume at: skip the rest as one broken item.
                    self.skip_statement();
                    return Err(self.error_at(start, String::new()));
                }
                // Step back onto BEGIN so the body parses as a statement.
                self.pos -= 1;
                match self.statement() {
                    Ok(_) => {
                        self.eat(&TokenKind::Semi);
                    }
                    Err(e) => {
                        self.record(e);
                        self.skip_statement();
                    }
                }
                Err(self.error_at(start, String::new()))
            }
        }
    }

    /// True when the word `kw` appears before the next `;`.
    fn contains_before_semi(&self, kw: &str) -> bool {
        let mut n = 0;
        loop {
            let t = self.peek_at(n);
            match t.kind {
                TokenKind::Semi | TokenKind::Eof => return false,
                _ if t.is_kw(kw) => return true,
                _ => n += 1,
            }
        }
    }

    fn routine_inner(&mut self, start: Span, kind: RoutineKind) -> PResult<Routine> {
        self.advance();
        let name = self.name_ident()?;
        self.expect(&TokenKind::LParen)?;
        let mut params = Vec::new();
        if !self.eat(&TokenKind::RParen) {
            loop {
                params.push(self.param()?);
                if self.eat(&TokenKind::Comma) {
                    continue;
                }
                self.expect(&TokenKind::RParen)?;
                break;
            }
        }
        let mut returns = None;
        let mut language = None;
        let mut result_sets = None;
        loop {
            if self.eat_kw("RETURNS") {
                returns = Some(self.type_spec()?);
            } else if self.eat_kw("LANGUAGE") {
                let word = self.any_name()?;
                language = Some(match word.name.to_ascii_uppercase().as_str() {
                    "ESQL" => Language::Esql,
                    "DATABASE" => Language::Database,
                    "JAVA" => Language::Java,
                    _ => Language::Other(word.name),
                });
            } else if self.at_kw("DYNAMIC") {
                self.advance();
                self.expect_kw("RESULT")?;
                self.expect_kw("SETS")?;
                result_sets = Some(self.small_int()?);
            } else if self.at(&TokenKind::Dot) && matches!(language, Some(Language::Other(_))) {
                // `LANGUAGE .NET` lexes as `.` `NET`.
                self.advance();
            } else {
                break;
            }
        }
        let body = if self.eat_kw("EXTERNAL") {
            self.expect_kw("NAME")?;
            match self.kind().clone() {
                TokenKind::QuotedIdent(s) | TokenKind::Str(s) => {
                    self.advance();
                    RoutineBody::External(s)
                }
                _ => return Err(self.unexpected("the external name in quotes")),
            }
        } else {
            RoutineBody::Esql(Box::new(self.statement()?))
        };
        self.expect(&TokenKind::Semi)?;
        Ok(Routine {
            kind,
            name,
            params,
            returns,
            language,
            result_sets,
            body,
            span: self.since(start),
        })
    }

    fn param(&mut self) -> PResult<Param> {
        let start = self.span();
        let mode = match self.word_upper().as_deref() {
            Some("IN") => Some(ParamMode::In),
            Some("OUT") => Some(ParamMode::Out),
            Some("INOUT") => Some(ParamMode::InOut),
            _ => None,
        };
        if mode.is_some() {
            self.advance();
        }
        let name = self.name_ident()?;
        let constant = self.eat_kw("CONSTANT");
        let ty = self.type_spec()?;
        let constant = constant || self.eat_kw("CONSTANT");
        Ok(Param {
            mode,
            name,
            ty,
            constant,
            span: self.since(start),
        })
    }

    /// `DECLARE …` (the keyword is current): variables, references, constants and
    /// handlers.
    pub(crate) fn declare_stmt(&mut self) -> PResult<Stmt> {
        let start = self.span();
        if self.at_kw_at(1, "CONTINUE") || self.at_kw_at(1, "EXIT") {
            let h = self.handler()?;
            return Ok(Stmt {
                kind: StmtKind::DeclareHandler(h),
                span: self.since(start),
            });
        }
        let d = self.declare()?;
        Ok(Stmt {
            span: d.span,
            kind: StmtKind::Declare(d),
        })
    }

    pub(crate) fn declare(&mut self) -> PResult<Declare> {
        let start = self.expect_kw("DECLARE")?;
        let mut names = vec![self.name_ident()?];
        while self.eat(&TokenKind::Comma) {
            names.push(self.name_ident()?);
        }
        let modifier = match self.word_upper().as_deref() {
            Some("CONSTANT") => Some(DeclareModifier::Constant),
            Some("SHARED") => Some(DeclareModifier::Shared),
            Some("EXTERNAL") => Some(DeclareModifier::External),
            _ => None,
        };
        if modifier.is_some() {
            self.advance();
        }
        let ty = self.type_spec()?;
        let init = if ty.ty == DataType::Reference {
            self.expect_kw("TO")?;
            Some(self.expr()?)
        } else if self.at(&TokenKind::Semi) {
            None
        } else {
            Some(self.expr()?)
        };
        if modifier == Some(DeclareModifier::Constant) && init.is_none() {
            return Err(self.error_at(self.since(start), "a CONSTANT declaration needs a value"));
        }
        Ok(Declare {
            names,
            modifier,
            ty,
            init,
            span: self.since(start),
        })
    }

    /// A data type: `INTEGER`, `DECIMAL(10, 2)`, `INTERVAL DAY TO SECOND`, `REFERENCE`, …
    pub(crate) fn type_spec(&mut self) -> PResult<TypeSpec> {
        let start = self.span();
        let Some(word) = self.word_upper() else {
            return Err(self.unexpected("a data type"));
        };
        let ty = match word.as_str() {
            "REFERENCE" => DataType::Reference,
            "ROW" => DataType::Row,
            "NAMESPACE" => DataType::Namespace,
            "NAME" => DataType::Name,
            _ => match ScalarType::from_name(&word).and_then(ScalarDataType::of) {
                Some(t) => DataType::Scalar(t),
                None => return Err(self.unexpected("a data type")),
            },
        };
        self.advance();
        let ty = match ty {
            DataType::Scalar(ScalarDataType::Decimal(_)) if self.at(&TokenKind::LParen) => {
                self.advance();
                let precision = self.small_int()?;
                let scale = if self.eat(&TokenKind::Comma) {
                    self.small_int()?
                } else {
                    0
                };
                self.expect(&TokenKind::RParen)?;
                match ScalarDataType::decimal(precision, scale) {
                    Some(t) => DataType::Scalar(t),
                    None => {
                        return Err(self.error_at(
                            self.since(start),
                            format!(
                                "DECIMAL({precision}, {scale}) needs a precision from 1 to \
                                 {DECIMAL_MAX_PRECISION} and a scale no larger than it"
                            ),
                        ));
                    }
                }
            }
            DataType::Scalar(ScalarDataType::Interval(_)) => {
                DataType::Scalar(ScalarDataType::Interval(self.opt_interval_qualifier()?))
            }
            other => other,
        };
        Ok(TypeSpec {
            ty,
            span: self.since(start),
        })
    }

    pub(crate) fn label_ident(&mut self) -> PResult<Option<Ident>> {
        if self.at(&TokenKind::Semi) {
            Ok(None)
        } else {
            Ok(Some(self.ident()?))
        }
    }
}
