//! Expressions that start with a word: literals spelt with keywords, CASE, CAST, SELECT,
//! the functions with their own argument syntax, niladic functions, calls and field
//! references.

use sluice_tree::ScalarType;

use super::{PResult, Parser};
use crate::syntax::ast::{
    Aggregate, BitstreamOptions, CaseExpr, Cast, DatetimeField, Expr, ExprKind, ExtractField,
    FieldRef, FromItem, Literal, NameSpec, Niladic, QualifiedName, Quantifier, Select, SelectItem,
    SelectList, TrimSpec,
};
use crate::syntax::token::TokenKind;

fn niladic(word: &str) -> Option<Niladic> {
    Some(match word {
        "CURRENT_DATE" => Niladic::CurrentDate,
        "CURRENT_TIME" => Niladic::CurrentTime,
        "CURRENT_TIMESTAMP" => Niladic::CurrentTimestamp,
        "CURRENT_GMTDATE" => Niladic::CurrentGmtDate,
        "CURRENT_GMTTIME" => Niladic::CurrentGmtTime,
        "CURRENT_GMTTIMESTAMP" => Niladic::CurrentGmtTimestamp,
        "LOCAL_TIMEZONE" => Niladic::LocalTimezone,
        "SQLCODE" => Niladic::SqlCode,
        "SQLSTATE" => Niladic::SqlState,
        "SQLNATIVEERROR" => Niladic::SqlNativeError,
        "SQLERRORTEXT" => Niladic::SqlErrorText,
        "UUIDASCHAR" => Niladic::UuidAsChar,
        "UUIDASBLOB" => Niladic::UuidAsBlob,
        _ => return None,
    })
}

fn boxed(e: Expr) -> Option<Box<Expr>> {
    Some(Box::new(e))
}

impl Parser<'_> {
    /// `DATE '…'`, `GMTTIMESTAMP '…'`, `INTERVAL '…' qualifier`: a literal of type `t` when
    /// the current word names it and a string follows; `None` (nothing read) for a type
    /// that has no literal of this form.
    fn typed_literal(&mut self, t: ScalarType) -> PResult<Option<ExprKind>> {
        let datetime: fn(String) -> Literal = match t {
            ScalarType::Date => Literal::Date,
            ScalarType::Time => Literal::Time,
            ScalarType::GmtTime => Literal::GmtTime,
            ScalarType::Timestamp => Literal::Timestamp,
            ScalarType::GmtTimestamp => Literal::GmtTimestamp,
            ScalarType::Interval => {
                self.advance();
                let text = self.string_literal()?;
                return match self.opt_interval_qualifier()? {
                    Some(qualifier) => Ok(Some(ExprKind::Literal(Literal::Interval {
                        text,
                        qualifier,
                    }))),
                    None => Err(self.unexpected("an interval qualifier such as `HOUR TO MINUTE`")),
                };
            }
            _ => return Ok(None),
        };
        self.advance();
        Ok(Some(ExprKind::Literal(datetime(self.string_literal()?))))
    }

    pub(crate) fn word_primary(&mut self) -> PResult<Expr> {
        let start = self.span();
        let upper = self.word_upper().unwrap_or_default();
        let next_is_paren = matches!(self.peek_at(1).kind, TokenKind::LParen);
        let next_is_str = matches!(self.peek_at(1).kind, TokenKind::Str(_));
        // CURRENT_DATE and friends take no parentheses; UUIDASCHAR may take either form.
        if !next_is_paren && let Some(n) = niladic(&upper) {
            self.advance();
            return Ok(Expr {
                kind: ExprKind::Niladic(n),
                span: start,
            });
        }
        if next_is_str
            && let Some(t) = ScalarType::from_name(&upper)
            && let Some(kind) = self.typed_literal(t)?
        {
            return Ok(Expr {
                kind,
                span: self.since(start),
            });
        }
        let kind = match upper.as_str() {
            "NULL" => self.keyword_literal(Literal::Null),
            "UNKNOWN" => self.keyword_literal(Literal::Unknown),
            "TRUE" => self.keyword_literal(Literal::Boolean(true)),
            "FALSE" => self.keyword_literal(Literal::Boolean(false)),
            "CASE" => self.case_expr()?,
            "CAST" => self.cast()?,
            "SELECT" => ExprKind::Select(Box::new(self.select()?)),
            "THE" if next_is_paren => {
                self.advance();
                self.expect(&TokenKind::LParen)?;
                let inner = self.select_or_expr()?;
                self.expect(&TokenKind::RParen)?;
                ExprKind::The(Box::new(inner))
            }
            "EXISTS" if next_is_paren => {
                self.advance();
                self.expect(&TokenKind::LParen)?;
                let inner = self.select_or_expr()?;
                self.expect(&TokenKind::RParen)?;
                ExprKind::Exists(Box::new(inner))
            }
            "ROW" if next_is_paren => self.row()?,
            "LIST" if matches!(self.peek_at(1).kind, TokenKind::LBrace) => {
                self.advance();
                self.advance();
                ExprKind::List(self.expr_list(&TokenKind::RBrace)?)
            }
            "FOR" => self.quantified()?,
            "PASSTHRU" if next_is_paren => self.passthru_expr()?,
            "SUBSTRING" if next_is_paren => self.substring()?,
            "POSITION" if next_is_paren => self.position()?,
            "TRIM" if next_is_paren => self.trim()?,
            "OVERLAY" if next_is_paren => self.overlay()?,
            "EXTRACT" if next_is_paren => self.extract()?,
            "ROUND" if next_is_paren => self.round()?,
            "ASBITSTREAM" if next_is_paren => {
                self.advance();
                self.expect(&TokenKind::LParen)?;
                let source = self.expr()?;
                let options = self.bitstream_options()?;
                self.expect(&TokenKind::RParen)?;
                ExprKind::AsBitstream {
                    source: Box::new(source),
                    options,
                }
            }
            // The aggregates take one argument; with more, the name is a routine of the
            // program's own (these names are not reserved).
            "COUNT" | "SUM" | "MAX" | "MIN" if next_is_paren && !self.call_has_comma() => {
                self.aggregate(&upper)?
            }
            w if super::is_reserved(w) && !super::is_name_keyword(w) => {
                return Err(self.unexpected("an expression"));
            }
            _ => return self.path_or_call(),
        };
        Ok(Expr {
            kind,
            span: self.since(start),
        })
    }

    fn keyword_literal(&mut self, lit: Literal) -> ExprKind {
        self.advance();
        ExprKind::Literal(lit)
    }

    pub(crate) fn string_literal(&mut self) -> PResult<String> {
        match self.kind().clone() {
            TokenKind::Str(s) => {
                self.advance();
                Ok(s)
            }
            _ => Err(self.unexpected("a string literal")),
        }
    }

    fn select_or_expr(&mut self) -> PResult<Expr> {
        if self.at_kw("SELECT") {
            let start = self.span();
            let s = self.select()?;
            Ok(Expr {
                kind: ExprKind::Select(Box::new(s)),
                span: self.since(start),
            })
        } else {
            self.expr()
        }
    }

    /// A field reference, or a call when a plain (possibly dotted) name meets `(`.
    fn path_or_call(&mut self) -> PResult<Expr> {
        let start = self.span();
        let head = self.name_ident()?;
        let path = self.field_ref_from(head)?;
        if self.at(&TokenKind::LParen) {
            let plain = path
                .steps
                .iter()
                .all(|s| s.index.is_none() && s.namespace.is_none() && s.type_qualifier.is_none());
            let parts: Option<Vec<_>> = path
                .steps
                .iter()
                .map(|s| match &s.name {
                    NameSpec::Ident(id) if plain => Some(id.clone()),
                    _ => None,
                })
                .collect();
            if let Some(parts) = parts {
                self.advance();
                let args = self.expr_list(&TokenKind::RParen)?;
                return Ok(Expr {
                    kind: ExprKind::Call {
                        name: QualifiedName {
                            parts,
                            span: path.span,
                        },
                        args,
                    },
                    span: self.since(start),
                });
            }
        }
        Ok(Expr {
            span: path.span,
            kind: ExprKind::Field(path),
        })
    }

    fn case_expr(&mut self) -> PResult<ExprKind> {
        self.expect_kw("CASE")?;
        let operand = if self.at_kw("WHEN") {
            None
        } else {
            Some(Box::new(self.expr()?))
        };
        let mut whens = Vec::new();
        while self.eat_kw("WHEN") {
            let cond = self.expr()?;
            self.expect_kw("THEN")?;
            whens.push((cond, self.expr()?));
        }
        if whens.is_empty() {
            return Err(self.unexpected("`WHEN`"));
        }
        let otherwise = if self.eat_kw("ELSE") {
            Some(Box::new(self.expr()?))
        } else {
            None
        };
        self.expect_kw("END")?;
        Ok(ExprKind::Case(CaseExpr {
            operand,
            whens,
            otherwise,
        }))
    }

    fn cast(&mut self) -> PResult<ExprKind> {
        self.expect_kw("CAST")?;
        self.expect(&TokenKind::LParen)?;
        let mut sources = vec![self.expr()?];
        while self.eat(&TokenKind::Comma) {
            sources.push(self.expr()?);
        }
        self.expect_kw("AS")?;
        let ty = self.type_spec()?;
        let mut cast = Cast {
            sources,
            ty,
            ccsid: None,
            encoding: None,
            format: None,
            default: None,
        };
        loop {
            let slot = match self.word_upper().as_deref() {
                Some("CCSID") => &mut cast.ccsid,
                Some("ENCODING") => &mut cast.encoding,
                Some("FORMAT") => &mut cast.format,
                Some("DEFAULT") => &mut cast.default,
                _ => break,
            };
            let kw = self.advance();
            if slot.is_some() {
                return Err(self.error_at(
                    kw.span,
                    format!("{} given twice in CAST", kw.kind.describe()),
                ));
            }
            *slot = boxed(self.expr()?);
        }
        self.expect(&TokenKind::RParen)?;
        Ok(ExprKind::Cast(cast))
    }

    /// `SELECT list FROM items [WHERE cond]` (the keyword SELECT is current).
    pub(crate) fn select(&mut self) -> PResult<Select> {
        self.expect_kw("SELECT")?;
        let list = if self.eat(&TokenKind::Star) {
            SelectList::Star
        } else if self.eat_kw("ITEM") {
            SelectList::Item(Box::new(self.expr()?))
        } else {
            let mut items = Vec::new();
            loop {
                let expr = self.expr()?;
                let alias = if self.eat_kw("AS") {
                    Some(self.relative_path()?)
                } else {
                    None
                };
                let span = self.since(expr.span);
                items.push(SelectItem { expr, alias, span });
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            SelectList::Fields(items)
        };
        self.expect_kw("FROM")?;
        let mut from = Vec::new();
        loop {
            let source = self.field_ref()?;
            let alias = if self.eat_kw("AS") {
                Some(self.ident()?)
            } else {
                None
            };
            let span = self.since(source.span);
            from.push(FromItem {
                source,
                alias,
                span,
            });
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        let filter = if self.eat_kw("WHERE") {
            Some(Box::new(self.expr()?))
        } else {
            None
        };
        Ok(Select { list, from, filter })
    }

    fn row(&mut self) -> PResult<ExprKind> {
        self.advance();
        self.expect(&TokenKind::LParen)?;
        let mut fields = Vec::new();
        if self.eat(&TokenKind::RParen) {
            return Ok(ExprKind::Row(fields));
        }
        loop {
            let e = self.select_or_expr()?;
            let name = if self.eat_kw("AS") {
                if self.eat(&TokenKind::LBrace) {
                    let n = self.expr()?;
                    self.expect(&TokenKind::RBrace)?;
                    Some(NameSpec::Dynamic(Box::new(n)))
                } else {
                    Some(NameSpec::Ident(self.any_name()?))
                }
            } else {
                None
            };
            fields.push((e, name));
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(&TokenKind::RParen)?;
        Ok(ExprKind::Row(fields))
    }

    /// `FOR ALL|ANY|SOME list AS alias (predicate)`.
    fn quantified(&mut self) -> PResult<ExprKind> {
        self.expect_kw("FOR")?;
        let quantifier = match self.word_upper().as_deref() {
            Some("ALL") => Quantifier::All,
            Some("ANY") => Quantifier::Any,
            Some("SOME") => Quantifier::Some,
            _ => return Err(self.unexpected("ALL, ANY or SOME")),
        };
        self.advance();
        let source = self.field_ref()?;
        self.expect_kw("AS")?;
        let alias = self.ident()?;
        self.expect(&TokenKind::LParen)?;
        let predicate = self.expr()?;
        self.expect(&TokenKind::RParen)?;
        Ok(ExprKind::Quantified {
            quantifier,
            source,
            alias,
            predicate: Box::new(predicate),
        })
    }

    /// `PASSTHRU(sql [TO Database.x] [VALUES(…)])` or `PASSTHRU(sql, a, b)`.
    pub(crate) fn passthru_expr(&mut self) -> PResult<ExprKind> {
        self.expect_kw("PASSTHRU")?;
        self.expect(&TokenKind::LParen)?;
        let sql = self.expr()?;
        let (to, values) = self.passthru_tail()?;
        let values = if values.is_empty() && self.eat(&TokenKind::Comma) {
            self.expr_list(&TokenKind::RParen)?
        } else {
            self.expect(&TokenKind::RParen)?;
            values
        };
        Ok(ExprKind::Passthru {
            sql: Box::new(sql),
            to,
            values,
        })
    }

    pub(crate) fn passthru_tail(
        &mut self,
    ) -> PResult<(Option<FieldRef>, Vec<crate::syntax::ast::Expr>)> {
        let to = if self.eat_kw("TO") {
            Some(self.field_ref()?)
        } else {
            None
        };
        let values = if self.eat_kw("VALUES") {
            self.expect(&TokenKind::LParen)?;
            self.expr_list(&TokenKind::RParen)?
        } else {
            Vec::new()
        };
        Ok((to, values))
    }

    fn open_call(&mut self) -> PResult<()> {
        self.advance();
        self.expect(&TokenKind::LParen)?;
        Ok(())
    }

    fn substring(&mut self) -> PResult<ExprKind> {
        self.open_call()?;
        let source = Box::new(self.expr()?);
        let kind = if self.eat_kw("FROM") {
            let from = Box::new(self.expr()?);
            let len = if self.eat_kw("FOR") {
                boxed(self.expr()?)
            } else {
                None
            };
            ExprKind::Substring { source, from, len }
        } else if self.at_kw("BEFORE") || self.at_kw("AFTER") {
            let after = self.advance().is_kw("AFTER");
            let marker = Box::new(self.expr()?);
            ExprKind::SubstringAround {
                source,
                after,
                marker,
            }
        } else {
            return Err(self.unexpected("FROM, BEFORE or AFTER"));
        };
        self.expect(&TokenKind::RParen)?;
        Ok(kind)
    }

    fn position(&mut self) -> PResult<ExprKind> {
        self.open_call()?;
        // The needle stops before IN, so it is read below the predicate level.
        let needle = Box::new(self.additive()?);
        self.expect_kw("IN")?;
        let haystack = Box::new(self.expr()?);
        let from = if self.eat_kw("FROM") {
            boxed(self.expr()?)
        } else {
            None
        };
        let repeat = if self.eat_kw("REPEAT") {
            boxed(self.expr()?)
        } else {
            None
        };
        self.expect(&TokenKind::RParen)?;
        Ok(ExprKind::Position {
            needle,
            haystack,
            from,
            repeat,
        })
    }

    fn trim(&mut self) -> PResult<ExprKind> {
        self.open_call()?;
        let spec = match self.word_upper().as_deref() {
            Some("LEADING") => Some(TrimSpec::Leading),
            Some("TRAILING") => Some(TrimSpec::Trailing),
            Some("BOTH") => Some(TrimSpec::Both),
            _ => None,
        };
        if spec.is_some() {
            self.advance();
        }
        let (chars, source) = if spec.is_some() && self.eat_kw("FROM") {
            (None, self.expr()?)
        } else {
            let first = self.expr()?;
            if self.eat_kw("FROM") {
                (boxed(first), self.expr()?)
            } else if spec.is_some() {
                return Err(self.unexpected("`FROM`"));
            } else {
                (None, first)
            }
        };
        self.expect(&TokenKind::RParen)?;
        Ok(ExprKind::Trim {
            spec,
            chars,
            source: Box::new(source),
        })
    }

    fn overlay(&mut self) -> PResult<ExprKind> {
        self.open_call()?;
        let source = Box::new(self.expr()?);
        self.expect_kw("PLACING")?;
        let placing = Box::new(self.expr()?);
        self.expect_kw("FROM")?;
        let from = Box::new(self.expr()?);
        let len = if self.eat_kw("FOR") {
            boxed(self.expr()?)
        } else {
            None
        };
        self.expect(&TokenKind::RParen)?;
        Ok(ExprKind::Overlay {
            source,
            placing,
            from,
            len,
        })
    }

    fn extract(&mut self) -> PResult<ExprKind> {
        self.open_call()?;
        let word = self.word_upper().unwrap_or_default();
        let field = match word.as_str() {
            "DAYOFYEAR" => ExtractField::DayOfYear,
            "DAYOFWEEK" => ExtractField::DayOfWeek,
            "MONTHOFYEAR" => ExtractField::MonthOfYear,
            "QUARTEROFYEAR" => ExtractField::QuarterOfYear,
            "QUARTER" => ExtractField::Quarter,
            "WEEKOFMONTH" => ExtractField::WeekOfMonth,
            "WEEKOFYEAR" => ExtractField::WeekOfYear,
            w => match DatetimeField::from_name(w) {
                Some(u) => ExtractField::Unit(u),
                None => return Err(self.unexpected("a date-time field such as YEAR or DAYOFWEEK")),
            },
        };
        self.advance();
        self.expect_kw("FROM")?;
        let source = Box::new(self.expr()?);
        self.expect(&TokenKind::RParen)?;
        Ok(ExprKind::Extract { field, source })
    }

    fn round(&mut self) -> PResult<ExprKind> {
        self.open_call()?;
        let value = Box::new(self.expr()?);
        self.expect(&TokenKind::Comma)?;
        let places = Box::new(self.expr()?);
        let mode = if self.eat_kw("MODE") {
            Some(self.any_name()?)
        } else {
            None
        };
        self.expect(&TokenKind::RParen)?;
        Ok(ExprKind::Round {
            value,
            places,
            mode,
        })
    }

    /// Whether the call whose name is the current token has a comma between its parentheses at
    /// their own level (`f(a, b)`), looking ahead without reading.
    fn call_has_comma(&self) -> bool {
        let mut depth = 0usize;
        let mut n = 1;
        loop {
            match &self.peek_at(n).kind {
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => depth += 1,
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return false;
                    }
                }
                TokenKind::Comma if depth == 1 => return true,
                TokenKind::Eof => return false,
                _ => {}
            }
            n += 1;
        }
    }

    fn aggregate(&mut self, upper: &str) -> PResult<ExprKind> {
        let func = match upper {
            "COUNT" => Aggregate::Count,
            "SUM" => Aggregate::Sum,
            "MAX" => Aggregate::Max,
            _ => Aggregate::Min,
        };
        self.open_call()?;
        let arg = if func == Aggregate::Count && self.eat(&TokenKind::Star) {
            None
        } else {
            boxed(self.expr()?)
        };
        self.expect(&TokenKind::RParen)?;
        Ok(ExprKind::Aggregate { func, arg })
    }

    /// What follows the source of ASBITSTREAM and PARSE: either the keyword clauses, or
    /// the comma-separated form older code uses, `, encoding, ccsid, set, type, format,
    /// options`, with trailing ones left out.
    pub(crate) fn bitstream_options(&mut self) -> PResult<BitstreamOptions> {
        if !self.at(&TokenKind::Comma) {
            return self.bitstream_clauses();
        }
        let mut o = BitstreamOptions::default();
        let slots = [
            &mut o.encoding,
            &mut o.ccsid,
            &mut o.set,
            &mut o.ty,
            &mut o.format,
            &mut o.options,
        ];
        for slot in slots {
            if !self.eat(&TokenKind::Comma) {
                break;
            }
            // A position may be left empty: `PARSE(b, enc, ccsid,,,, options)`.
            if self.at(&TokenKind::Comma) || self.at(&TokenKind::RParen) {
                continue;
            }
            *slot = boxed(self.expr()?);
        }
        Ok(o)
    }

    /// OPTIONS/ENCODING/CCSID/SET/TYPE/FORMAT clauses in any order, each at most once.
    fn bitstream_clauses(&mut self) -> PResult<BitstreamOptions> {
        let mut o = BitstreamOptions::default();
        loop {
            let slot = match self.word_upper().as_deref() {
                Some("OPTIONS") => &mut o.options,
                Some("ENCODING") => &mut o.encoding,
                Some("CCSID") => &mut o.ccsid,
                Some("SET") => &mut o.set,
                Some("TYPE") => &mut o.ty,
                Some("FORMAT") => &mut o.format,
                _ => return Ok(o),
            };
            let kw = self.advance();
            if slot.is_some() {
                return Err(self.error_at(kw.span, format!("{} given twice", kw.kind.describe())));
            }
            *slot = boxed(self.expr()?);
        }
    }
}
