//! Parser unit tests: shapes of the AST for each construct family.

use sluice_tree::{DataType as ScalarDataType, ScalarType};

use crate::syntax::ast::*;
use crate::syntax::parse;

/// Parses `SET x = <expr>;` inside a function and returns the expression.
fn expr(src: &str) -> Expr {
    let file =
        parse(&format!("CREATE FUNCTION f() BEGIN SET x = {src}; END;")).unwrap_or_else(|d| {
            panic!(
                "{src}: {:?}",
                d.iter().map(ToString::to_string).collect::<Vec<_>>()
            )
        });
    let stmt = body(&file).into_iter().next().expect("one statement");
    match stmt.kind {
        StmtKind::Set { value, .. } => value,
        other => panic!("not a SET: {other:?}"),
    }
}

/// The statements of the first routine's BEGIN block.
fn body(file: &File) -> Vec<Stmt> {
    let Some(Item::Routine(r)) = file.items.first() else {
        panic!("no routine")
    };
    let RoutineBody::Esql(stmt) = &r.body else {
        panic!("external")
    };
    match &stmt.kind {
        StmtKind::Begin { body, .. } => body.clone(),
        other => panic!("not BEGIN: {other:?}"),
    }
}

fn stmts(src: &str) -> Vec<Stmt> {
    let file = parse(&format!("CREATE FUNCTION f() BEGIN {src} END;")).unwrap_or_else(|d| {
        panic!(
            "{src}: {:?}",
            d.iter().map(ToString::to_string).collect::<Vec<_>>()
        )
    });
    body(&file)
}

/// A compact rendering of an expression, fully parenthesised, for precedence tests.
fn show(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Literal(Literal::Integer(n)) => n.clone(),
        ExprKind::Literal(Literal::Character(s)) => format!("'{s}'"),
        ExprKind::Literal(l) => format!("{l:?}"),
        ExprKind::Field(r) => path(r),
        ExprKind::Unary { op, expr } => format!("({op:?} {})", show(expr)),
        ExprKind::Binary { op, lhs, rhs } => format!("({op:?} {} {})", show(lhs), show(rhs)),
        ExprKind::Between {
            expr,
            negated,
            low,
            high,
            ..
        } => format!(
            "(between{} {} {} {})",
            if *negated { "!" } else { "" },
            show(expr),
            show(low),
            show(high)
        ),
        ExprKind::Is {
            expr,
            negated,
            test,
        } => {
            format!(
                "(is{} {} {test:?})",
                if *negated { "!" } else { "" },
                show(expr)
            )
        }
        ExprKind::Call { name, args } => {
            format!(
                "{}({})",
                name.dotted(),
                args.iter().map(show).collect::<Vec<_>>().join(", ")
            )
        }
        other => format!("{other:?}"),
    }
}

fn path(r: &FieldRef) -> String {
    r.steps
        .iter()
        .map(|s| {
            let mut out = String::new();
            match &s.type_qualifier {
                Some(TypeQualifier::Named(n)) => out.push_str(&format!(
                    "({})",
                    n.iter()
                        .map(|i| i.name.as_str())
                        .collect::<Vec<_>>()
                        .join(".")
                )),
                Some(TypeQualifier::Expr(e)) => out.push_str(&format!("({})", show(e))),
                None => {}
            }
            match &s.namespace {
                Some(NamespaceSpec::Any) => out.push_str("*:"),
                Some(NamespaceSpec::Ident(i)) => out.push_str(&format!("{}:", i.name)),
                Some(NamespaceSpec::Dynamic(e)) => out.push_str(&format!("{{{}}}:", show(e))),
                Some(NamespaceSpec::Empty) => out.push(':'),
                None => {}
            }
            match &s.name {
                NameSpec::Ident(i) => out.push_str(&i.name),
                NameSpec::Any => out.push('*'),
                NameSpec::Dynamic(e) => out.push_str(&format!("{{{}}}", show(e))),
            }
            match &s.index {
                Some(Index::Nth(e)) => out.push_str(&format!("[{}]", show(e))),
                Some(Index::FromLast(None)) => out.push_str("[<]"),
                Some(Index::FromLast(Some(e))) => out.push_str(&format!("[<{}]", show(e))),
                Some(Index::FromFirst(None)) => out.push_str("[>]"),
                Some(Index::FromFirst(Some(e))) => out.push_str(&format!("[>{}]", show(e))),
                Some(Index::All) => out.push_str("[]"),
                None => {}
            }
            out
        })
        .collect::<Vec<_>>()
        .join(".")
}

#[test]
fn expr_follows_esql_precedence_when_operators_mix() {
    assert_eq!(show(&expr("1 + 2 * 3")), "(Add 1 (Mul 2 3))");
    // `||` binds tighter than `+` and `-` in ESQL.
    assert_eq!(show(&expr("a - b || c")), "(Sub a (Concat b c))");
    assert_eq!(show(&expr("-a * b")), "(Mul (Neg a) b)");
    assert_eq!(
        show(&expr("a = 1 OR b = 2 AND c = 3")),
        "(Or (Eq a 1) (And (Eq b 2) (Eq c 3)))"
    );
    assert_eq!(show(&expr("NOT a AND b")), "(And (Not a) b)");
    assert_eq!(show(&expr("NOT a = b")), "(Not (Eq a b))");
    assert_eq!(
        show(&expr("NOT x IS NULL OR y")),
        "(Or (Not (is x Null)) y)"
    );
    assert_eq!(show(&expr("a = NOT b")), "(Eq a (Not b))");
    assert_eq!(show(&expr("a - b - c")), "(Sub (Sub a b) c)");
    assert_eq!(show(&expr("(a + b) * c")), "(Mul (Add a b) c)");
}

#[test]
fn expr_reads_predicates() {
    assert_eq!(
        show(&expr("a BETWEEN 1 AND 2 AND b")),
        "(And (between a 1 2) b)"
    );
    assert_eq!(show(&expr("a NOT BETWEEN 1 AND 2")), "(between! a 1 2)");
    assert_eq!(show(&expr("a IS NOT NULL")), "(is! a Null)");
    assert_eq!(show(&expr("a IS -INF")), "(is a MinusInf)");
    assert!(
        matches!(expr("a NOT IN (1, 2)").kind, ExprKind::In { negated: true, ref list, .. } if list.len() == 2)
    );
    assert!(matches!(
        expr("a LIKE 'x%' ESCAPE '!'").kind,
        ExprKind::Like {
            escape: Some(_),
            ..
        }
    ));
}

#[test]
fn field_refs_keep_every_part() {
    assert_eq!(
        show(&expr("InputRoot.XMLNSC.ns:Order.(XMLNSC.Attribute)id[<2]")),
        "InputRoot.XMLNSC.ns:Order.(XMLNSC.Attribute)id[<2]"
    );
    assert_eq!(
        show(&expr("a.*:b.*[].{n}.{ns}:{n}[>].:c[]")),
        "a.*:b.*[].{n}.{ns}:{n}[>].:c[]"
    );
    assert_eq!(
        show(&expr("a.b[<].c[>3].d[i + 1]")),
        "a.b[<].c[>3].d[(Add i 1)]"
    );
    assert_eq!(
        show(&expr("InputRoot.JSON.Data.[1]")),
        "InputRoot.JSON.Data.*[1]"
    );
    assert_eq!(show(&expr("a.(x + 1)b")), "a.((Add x 1))b");
}

#[test]
fn context_functions_read_as_paths_into_the_context_tree() {
    assert_eq!(
        show(&expr(
            "CONTEXTREFERENCE(NODENAME 'HTTP Input' PAYLOAD).Data.id"
        )),
        "Context.Nodes.{'HTTP Input'}.Payload.Data.id"
    );
    assert_eq!(
        show(&expr(
            "contextreference(NODENAME n, LEVELNAME 'Sub', HEADERS)"
        )),
        "Context.Nodes.{(Concat (Concat 'Sub' '.') n)}.Headers"
    );
    assert_eq!(
        show(&expr("CONTEXTINVOCATIONNODE()")),
        "Context.Nodes.{Context.Invocation.Node}"
    );
    assert_eq!(
        show(&expr("CONTEXTINVOCATIONNODE(METADATA)")),
        "Context.Nodes.{Context.Invocation.Node}.Metadata"
    );
    assert!(parse("CREATE FUNCTION f() BEGIN SET x = CONTEXTREFERENCE('a'); END;").is_err());
}

#[test]
fn calls_take_qualified_names() {
    assert_eq!(
        show(&expr("com.example.f(1, b.c)")),
        "com.example.f(1, b.c)"
    );
    assert_eq!(show(&expr("CARDINALITY(a.b[])")), "CARDINALITY(a.b[])");
}

#[test]
fn special_forms_parse_into_their_nodes() {
    assert!(matches!(
        expr("SUBSTRING(s FROM 2 FOR 3)").kind,
        ExprKind::Substring { len: Some(_), .. }
    ));
    assert!(matches!(
        expr("SUBSTRING(s AFTER ',')").kind,
        ExprKind::SubstringAround { after: true, .. }
    ));
    assert!(matches!(
        expr("POSITION('a' || 'b' IN s FROM 2 REPEAT -1)").kind,
        ExprKind::Position {
            from: Some(_),
            repeat: Some(_),
            ..
        }
    ));
    assert!(matches!(
        expr("TRIM(LEADING '0' FROM s)").kind,
        ExprKind::Trim {
            spec: Some(TrimSpec::Leading),
            chars: Some(_),
            ..
        }
    ));
    assert!(matches!(
        expr("TRIM(s)").kind,
        ExprKind::Trim {
            spec: None,
            chars: None,
            ..
        }
    ));
    assert!(matches!(
        expr("OVERLAY(s PLACING 'x' FROM 1)").kind,
        ExprKind::Overlay { len: None, .. }
    ));
    assert!(matches!(
        expr("EXTRACT(DAYOFWEEK FROM d)").kind,
        ExprKind::Extract {
            field: ExtractField::DayOfWeek,
            ..
        }
    ));
    match expr("ROUND(n, 2 MODE ROUND_HALF_EVEN)").kind {
        ExprKind::Round { mode: Some(m), .. } => assert_eq!(m.name, "ROUND_HALF_EVEN"),
        other => panic!("{other:?}"),
    }
    match expr("ASBITSTREAM(r OPTIONS o CCSID 1208 ENCODING 546 SET 's' TYPE 't' FORMAT 'f')").kind
    {
        ExprKind::AsBitstream { options, .. } => {
            assert!(
                options.options.is_some() && options.ccsid.is_some() && options.encoding.is_some()
            );
            assert!(options.set.is_some() && options.ty.is_some() && options.format.is_some());
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        expr("CURRENT_TIMESTAMP").kind,
        ExprKind::Niladic(Niladic::CurrentTimestamp)
    ));
    assert!(matches!(
        expr("UUIDASCHAR").kind,
        ExprKind::Niladic(Niladic::UuidAsChar)
    ));
    assert!(matches!(expr("UUIDASCHAR(b)").kind, ExprKind::Call { .. }));
}

#[test]
fn cast_reads_sources_type_and_options() {
    match expr("CAST(y, m, d AS DATE FORMAT 'f' DEFAULT NULL)").kind {
        ExprKind::Cast(c) => {
            assert_eq!(c.sources.len(), 3);
            assert_eq!(c.ty.ty, DataType::Scalar(ScalarDataType::Date));
            assert!(c.format.is_some() && c.default.is_some() && c.ccsid.is_none());
        }
        other => panic!("{other:?}"),
    }
    match expr("CAST(x AS DECIMAL(10, 2))").kind {
        ExprKind::Cast(c) => assert_eq!(
            c.ty.ty,
            DataType::Scalar(ScalarDataType::Decimal(Some((10, 2))))
        ),
        other => panic!("{other:?}"),
    }
}

/// Every type as the tree prints it, with and without precision or qualifier.
fn every_printed_type() -> Vec<ScalarDataType> {
    let mut all: Vec<_> = ScalarType::ALL
        .into_iter()
        .filter_map(ScalarDataType::of)
        .collect();
    all.push(ScalarDataType::Decimal(Some((10, 2))));
    all.extend(IntervalQualifier::ALL.map(|q| ScalarDataType::Interval(Some(q))));
    all
}

#[test]
fn type_spec_reads_every_type_as_the_tree_prints_it() {
    for t in every_printed_type() {
        let src = format!("CAST(x AS {t})");
        match expr(&src).kind {
            ExprKind::Cast(c) => assert_eq!(c.ty.ty, DataType::Scalar(t), "{src}"),
            other => panic!("{src}: {other:?}"),
        }
        let file = parse(&format!(
            "CREATE FUNCTION f() BEGIN DECLARE v {} ; END;",
            t.to_string().to_lowercase()
        ))
        .unwrap_or_else(|d| panic!("{t}: {}", d[0]));
        let body = body(&file);
        match &body[0].kind {
            StmtKind::Declare(d) => assert_eq!(d.ty.ty, DataType::Scalar(t)),
            other => panic!("{t}: {other:?}"),
        }
    }
    match expr("CAST(x AS INT)").kind {
        ExprKind::Cast(c) => assert_eq!(c.ty.ty, DataType::Scalar(ScalarDataType::Integer)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn type_spec_rejects_types_esql_does_not_have() {
    for src in [
        "CAST(x AS NULL)",
        "CAST(x AS VARCHAR)",
        "CAST(x AS DECIMAL(35, 2))",
        "CAST(x AS DECIMAL(4, 5))",
        "CAST(x AS INTERVAL MONTH TO DAY)",
        "CAST(x AS INTERVAL SECOND TO MINUTE)",
        "(a - b) DAY TO DAY",
    ] {
        let result = parse(&format!("CREATE FUNCTION f() BEGIN SET x = {src}; END;"));
        assert!(result.is_err(), "{src}");
    }
}

#[test]
fn literals_carry_their_kind() {
    assert_eq!(
        expr("X'0aFF'").kind,
        ExprKind::Literal(Literal::Blob("0aFF".into()))
    );
    assert_eq!(
        expr("B'101'").kind,
        ExprKind::Literal(Literal::Bit("101".into()))
    );
    assert_eq!(
        expr("DATE '2024-01-31'").kind,
        ExprKind::Literal(Literal::Date("2024-01-31".into()))
    );
    assert_eq!(
        expr("1.5e3").kind,
        ExprKind::Literal(Literal::Float("1.5e3".into()))
    );
    assert_eq!(
        expr("1.50").kind,
        ExprKind::Literal(Literal::Decimal("1.50".into()))
    );
    assert_eq!(
        expr("INTERVAL '1:30' HOUR TO MINUTE").kind,
        ExprKind::Literal(Literal::Interval {
            text: "1:30".into(),
            qualifier: IntervalQualifier::HourToMinute
        })
    );
    assert!(matches!(
        expr("(a - b) DAY TO SECOND").kind,
        ExprKind::IntervalOf { .. }
    ));
}

#[test]
fn select_reads_list_from_and_where() {
    let ExprKind::Select(s) = expr("(SELECT R.a AS x.(XMLNSC.Attribute)y, R.b FROM InputRoot.X.Item[] AS R, Database.T WHERE R.a > 1)").kind
    else {
        panic!("not a select")
    };
    let SelectList::Fields(items) = &s.list else {
        panic!()
    };
    assert_eq!(items.len(), 2);
    assert_eq!(
        path(items[0].alias.as_ref().expect("alias")),
        "x.(XMLNSC.Attribute)y"
    );
    assert_eq!(s.from.len(), 2);
    assert_eq!(s.from[0].alias.as_ref().map(|a| a.name.as_str()), Some("R"));
    assert!(s.filter.is_some());
    let ExprKind::The(inner) = expr("THE(SELECT ITEM COUNT(*) FROM a.b[] AS X)").kind else {
        panic!()
    };
    let ExprKind::Select(s) = inner.kind else {
        panic!()
    };
    let SelectList::Item(agg) = &s.list else {
        panic!()
    };
    assert!(matches!(
        agg.kind,
        ExprKind::Aggregate {
            func: Aggregate::Count,
            arg: None
        }
    ));
}

#[test]
fn tree_statements_parse() {
    let s = stmts(
        "CREATE LASTCHILD OF OutputRoot AS r DOMAIN('XMLNSC') PARSE(b CCSID 1208 ENCODING 546);
         CREATE FIELD a.b.c;
         CREATE NEXTSIBLING OF r REPEAT VALUE 2;
         MOVE r NEXTSIBLING NAME 'Item' REPEAT TYPE NAME;
         MOVE r TO a.b;
         ATTACH r TO a AS LASTCHILD;
         DELETE PREVIOUSSIBLING OF r TYPE XMLNSC.Attribute;
         DELETE FIELD a.b;",
    );
    assert_eq!(s.len(), 8);
    match &s[0].kind {
        StmtKind::Create(c) => {
            assert_eq!(c.position, CreatePosition::Relative(Relation::LastChild));
            assert!(c.as_ref.is_some() && c.domain.is_some());
            assert!(matches!(c.source, CreateSource::Parse { .. }));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        &s[2].kind,
        StmtKind::Create(Create {
            source: CreateSource::Repeat(Some(_)),
            ..
        })
    ));
    match &s[3].kind {
        StmtKind::Move {
            target:
                MoveTarget::Relative {
                    relation,
                    clauses,
                    repeat,
                    ..
                },
            ..
        } => {
            assert_eq!(*relation, Relation::NextSibling);
            assert!(clauses.name.is_some());
            assert_eq!(
                *repeat,
                Some(RepeatBy {
                    ty: true,
                    name: true
                })
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        &s[5].kind,
        StmtKind::Attach {
            relation: Relation::LastChild,
            ..
        }
    ));
    assert!(matches!(
        &s[6].kind,
        StmtKind::DeleteField {
            relation: Some(Relation::PreviousSibling),
            ..
        }
    ));
}

#[test]
fn control_statements_parse_with_labels() {
    let s = stmts(
        "L1: WHILE a < 3 DO SET a = a + 1; ITERATE L1; END WHILE L1;
         IF a THEN ELSEIF b THEN SET c = 1; ELSE SET c = 2; END IF;
         CASE a WHEN 1 THEN SET b = 1; ELSE SET b = 0; END CASE;
         R: REPEAT SET a = a - 1; UNTIL a = 0 END REPEAT R;
         FOR i AS a.b[] DO LEAVE F; END FOR;
         BEGIN ATOMIC END;",
    );
    assert!(
        matches!(&s[0].kind, StmtKind::While { label: Some(l), body, .. } if l.name == "L1" && body.len() == 2)
    );
    assert!(
        matches!(&s[1].kind, StmtKind::If(i) if i.branches.len() == 2 && i.otherwise.is_some())
    );
    assert!(matches!(&s[2].kind, StmtKind::Case(c) if c.operand.is_some()));
    assert!(matches!(
        &s[3].kind,
        StmtKind::Repeat { label: Some(_), .. }
    ));
    assert!(matches!(&s[4].kind, StmtKind::For { var, .. } if var.name == "i"));
    assert!(matches!(&s[5].kind, StmtKind::Begin { atomic: true, .. }));
}

#[test]
fn propagate_and_throw_keep_their_clauses() {
    let s = stmts(
        "PROPAGATE TO TERMINAL 'out1' MESSAGE OutputRoot FINALIZE NONE DELETE NONE;
         THROW USER EXCEPTION SEVERITY 3 CATALOG 'c' MESSAGE 2951 VALUES(1, 'two');
         DECLARE EXIT HANDLER FOR SQLSTATE LIKE 'S%' ESCAPE '!', SQLSTATE '01000' RESIGNAL;
         CALL a.b.proc(1) INTO x;",
    );
    match &s[0].kind {
        StmtKind::Propagate(p) => {
            assert!(matches!(p.target, Some(PropagateTarget::Terminal(_))));
            assert!(p.message.is_some() && p.environment.is_none());
            assert_eq!(p.finalize, Some(PropagateControl::None));
            assert_eq!(p.delete, Some(PropagateControl::None));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(&s[1].kind, StmtKind::Throw(c) if c.values.len() == 2 && c.severity.is_some())
    );
    match &s[2].kind {
        StmtKind::DeclareHandler(h) => {
            assert_eq!(h.kind, HandlerKind::Exit);
            assert_eq!(h.conditions.len(), 2);
            assert!(h.conditions[0].like && h.conditions[0].escape.is_some());
            assert!(matches!(h.body.kind, StmtKind::Resignal));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(&s[3].kind, StmtKind::Call(c) if c.name.dotted() == "a.b.proc" && c.into.is_some())
    );
}

#[test]
fn spans_point_at_the_source() {
    let src = "CREATE FUNCTION f() BEGIN\n  SET x = a.b + 1;\nEND;";
    let file = parse(src).expect("valid");
    let s = &body(&file)[0];
    assert_eq!((s.span.line, s.span.col), (2, 3));
    assert_eq!(&src[s.span.start..s.span.end], "SET x = a.b + 1");
    let StmtKind::Set { value, .. } = &s.kind else {
        panic!()
    };
    assert_eq!(&src[value.span.start..value.span.end], "a.b + 1");
}

#[test]
fn parse_reports_every_broken_statement() {
    let src =
        "CREATE FUNCTION f() BEGIN\n SET = 1;\n SET a = ;\n SET b = 2;\n MOVE r SIDEWAYS;\nEND;";
    let diags = parse(src).expect_err("broken");
    let at: Vec<(u32, u32)> = diags.iter().map(|d| (d.line, d.col)).collect();
    assert_eq!(at, vec![(2, 6), (3, 10), (5, 9)], "{diags:?}");
}

#[test]
fn keywords_are_case_insensitive_and_names_keep_case() {
    let s =
        stmts("set OutputRoot.Xmlnsc.Name = cast(x as integer); declare v Reference To InputRoot;");
    let StmtKind::Set { target, .. } = &s[0].kind else {
        panic!()
    };
    assert_eq!(path(target), "OutputRoot.Xmlnsc.Name");
    assert!(matches!(&s[1].kind, StmtKind::Declare(d) if d.ty.ty == DataType::Reference));
}
