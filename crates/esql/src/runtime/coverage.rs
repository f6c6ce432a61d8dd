//! docs/esql-coverage.md: what of the product's ESQL reference Sluice runs, item by item.
//!
//! Broker attributes, field-type constants, correlation names and word constants come from
//! the compiler's own tables; statements, functions and special registers are listed here,
//! each with an example that the coverage test compiles (and runs, for the ones that fail at
//! run time), so that a row cannot claim more than the compiler does.

use super::{broker, field_types};
use crate::syntax::check::names;

/// How Sluice handles an item of the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Supported,
    /// Compiles; running it raises an error whose text holds this reason.
    RuntimeError(&'static str),
}

/// A statement, function or special register, with ESQL that uses it.
#[derive(Debug, Clone, Copy)]
pub struct Item {
    pub name: &'static str,
    /// Statements: statements for a Main body. Functions and registers: an expression.
    pub example: &'static str,
    pub status: Status,
    pub note: &'static str,
}

const fn ok(name: &'static str, example: &'static str) -> Item {
    Item {
        name,
        example,
        status: Status::Supported,
        note: "",
    }
}

const fn noted(name: &'static str, example: &'static str, note: &'static str) -> Item {
    Item {
        name,
        example,
        status: Status::Supported,
        note,
    }
}

/// The statements of the reference, in its order.
pub const STATEMENTS: &[Item] = &[
    ok(
        "ATTACH",
        "DECLARE r REFERENCE TO OutputRoot; CREATE FIELD OutputRoot.XMLNSC.A; DETACH r; ATTACH r TO OutputRoot AS LASTCHILD;",
    ),
    ok("BEGIN … END", "BEGIN DECLARE x INTEGER 1; END;"),
    ok(
        "BEGIN ATOMIC … END",
        "BEGIN ATOMIC DECLARE x INTEGER 1; END;",
    ),
    ok("BROKER SCHEMA", ""),
    ok("CALL", "CALL Helper();"),
    ok(
        "CASE",
        "CASE 1 WHEN 1 THEN SET OutputRoot.XMLNSC.A = 1; ELSE END CASE;",
    ),
    noted(
        "COMMIT",
        "COMMIT;",
        "commits the node's database work so far; the next statement begins a new transaction",
    ),
    ok(
        "CREATE (field)",
        "CREATE LASTCHILD OF OutputRoot DOMAIN('XMLNSC') NAME 'XMLNSC'; CREATE LASTCHILD OF OutputRoot.XMLNSC IDENTITY(XMLNSC.Field)A VALUE 1;",
    ),
    ok(
        "CREATE … PARSE",
        "CREATE LASTCHILD OF OutputRoot DOMAIN('XMLNSC') PARSE(CAST('<a/>' AS BLOB CCSID 1208));",
    ),
    ok("CREATE FUNCTION", ""),
    ok("CREATE MODULE", ""),
    ok("CREATE PROCEDURE", ""),
    noted(
        "CREATE PROCEDURE … LANGUAGE DATABASE",
        "",
        "runs the datasource's procedure or function on PostgreSQL (IN, OUT, INOUT); an error on SQLite, which has none",
    ),
    Item {
        name: "CREATE FUNCTION/PROCEDURE … LANGUAGE JAVA / .NET",
        example: "CALL JavaHelper();",
        status: Status::RuntimeError("is external"),
        note: "Sluice runs ESQL and database routines only",
    },
    ok(
        "DECLARE",
        "DECLARE x, y INTEGER 1; DECLARE r REFERENCE TO InputRoot;",
    ),
    ok(
        "DECLARE HANDLER",
        "DECLARE CONTINUE HANDLER FOR SQLSTATE LIKE '%' BEGIN END;",
    ),
    ok(
        "DELETE FROM (database)",
        "DELETE FROM Database.t WHERE FALSE;",
    ),
    ok("DELETE (field)", "DELETE FIELD OutputRoot.XMLNSC.A;"),
    ok("DETACH", "DECLARE r REFERENCE TO OutputRoot; DETACH r;"),
    ok("EVAL", "EVAL('SET OutputRoot.XMLNSC.A = 1;');"),
    ok("FOR", "FOR f AS InputRoot.*[] DO END FOR;"),
    ok(
        "IF",
        "IF TRUE THEN SET OutputRoot.XMLNSC.A = 1; ELSEIF FALSE THEN ELSE END IF;",
    ),
    ok("INSERT (database)", "INSERT INTO Database.t(v) VALUES(1);"),
    ok("ITERATE", "L: LOOP LEAVE L; ITERATE L; END LOOP L;"),
    ok("LEAVE", "L: LOOP LEAVE L; END LOOP L;"),
    noted(
        "LOG",
        "LOG EVENT VALUES('x');",
        "written to the server's log",
    ),
    ok("LOOP", "L: LOOP LEAVE L; END LOOP L;"),
    ok(
        "MOVE",
        "DECLARE r REFERENCE TO InputRoot; MOVE r FIRSTCHILD; MOVE r PARENT;",
    ),
    ok("PASSTHRU", "PASSTHRU('SELECT 1');"),
    ok("PATH", ""),
    ok(
        "PROPAGATE",
        "PROPAGATE TO TERMINAL 'out1' FINALIZE NONE DELETE NONE;",
    ),
    ok("REPEAT", "REPEAT UNTIL TRUE END REPEAT;"),
    ok(
        "RESIGNAL",
        "BEGIN DECLARE EXIT HANDLER FOR SQLSTATE 'U0000' BEGIN END; END;",
    ),
    ok("RETURN", "RETURN TRUE;"),
    noted(
        "ROLLBACK",
        "ROLLBACK;",
        "undoes the node's database work so far; the next statement begins a new transaction",
    ),
    ok("SET", "SET OutputRoot.XMLNSC.A = 1;"),
    ok(
        "THROW",
        "IF FALSE THEN THROW USER EXCEPTION VALUES('x'); END IF;",
    ),
    ok(
        "UPDATE (database)",
        "UPDATE Database.t AS T SET v = 1 WHERE FALSE;",
    ),
    ok("WHILE", "WHILE FALSE DO END WHILE;"),
];

/// The built-in functions of the reference, by group, then name.
pub const FUNCTIONS: &[Item] = &[
    // Date-time.
    ok("EXTRACT", "EXTRACT(YEAR FROM CURRENT_DATE)"),
    // Numeric.
    ok("ABS, ABSVAL", "ABS(-1) + ABSVAL(-1)"),
    ok(
        "ACOS, ASIN, ATAN, ATAN2",
        "ACOS(1) + ASIN(0) + ATAN(0) + ATAN2(0, 1)",
    ),
    ok(
        "BITAND, BITNOT, BITOR, BITXOR",
        "BITAND(BITOR(1, 2), BITXOR(BITNOT(0), 4))",
    ),
    ok("CEIL, CEILING", "CEIL(1.5) + CEILING(1.5)"),
    ok("COS, COSH, COT", "COS(0) + COSH(0) + COT(1)"),
    ok("DEGREES, RADIANS", "DEGREES(1) + RADIANS(1)"),
    ok("EXP, LN, LOG, LOG10", "EXP(1) + LN(1) + LOG(1) + LOG10(10)"),
    ok("FLOOR", "FLOOR(1.5)"),
    ok("MOD", "MOD(7, 2)"),
    ok("POWER", "POWER(2, 10)"),
    ok("RAND", "RAND(1)"),
    ok("ROUND", "ROUND(1.25, 1 MODE ROUND_HALF_UP)"),
    ok("SIGN", "SIGN(-3)"),
    ok(
        "SIN, SINH, TAN, TANH",
        "SIN(0) + SINH(0) + TAN(0) + TANH(0)",
    ),
    ok("SQRT", "SQRT(4)"),
    ok("TRUNCATE", "TRUNCATE(1.25, 1)"),
    // String.
    ok("BASE64DECODE", "BASE64DECODE('SGk=')"),
    ok("BASE64ENCODE", "BASE64ENCODE(X'4869')"),
    ok(
        "CONTAINS, ENDSWITH, STARTSWITH",
        "CONTAINS('abc', 'b') AND ENDSWITH('abc', 'c') AND STARTSWITH('abc', 'a')",
    ),
    ok("LEFT, RIGHT", "LEFT('abc', 1) || RIGHT('abc', 1)"),
    ok("LENGTH", "LENGTH('abc')"),
    ok(
        "LOWER, LCASE, UPPER, UCASE",
        "LOWER('A') || LCASE('B') || UPPER('c') || UCASE('d')",
    ),
    ok(
        "LTRIM, RTRIM, TRIM",
        "LTRIM(' a') || RTRIM('a ') || TRIM(BOTH 'x' FROM 'xax')",
    ),
    ok("OVERLAY", "OVERLAY('abc' PLACING 'x' FROM 2 FOR 1)"),
    ok("POSITION", "POSITION('b' IN 'abc')"),
    ok("REPLACE", "REPLACE('abc', 'b', 'x')"),
    ok("REPLICATE, SPACE", "REPLICATE('a', 3) || SPACE(2)"),
    ok(
        "SUBSTRING",
        "SUBSTRING('abc' FROM 2 FOR 1) || SUBSTRING('a.b' BEFORE '.')",
    ),
    ok("TRANSLATE", "TRANSLATE('abc', 'ab', 'xy')"),
    // Field.
    ok(
        "ASBITSTREAM",
        "ASBITSTREAM(InputRoot.XMLNSC OPTIONS FolderBitStream)",
    ),
    ok("BITSTREAM", "BITSTREAM(InputRoot.XMLNSC)"),
    ok("CARDINALITY", "CARDINALITY(InputRoot.*[])"),
    // Context tree (ACE 12).
    ok(
        "CONTEXTINVOCATIONNODE",
        "FIELDNAME(CONTEXTINVOCATIONNODE(PAYLOAD).*[1])",
    ),
    ok(
        "CONTEXTREFERENCE",
        "FIELDNAME(CONTEXTREFERENCE(NODENAME 'in' LEVELNAME 'sub' HEADERS).*[1])",
    ),
    ok("EXISTS", "EXISTS(InputRoot.*[])"),
    ok(
        "FIELDNAME, FIELDNAMESPACE, FIELDTYPE, FIELDVALUE",
        "FIELDNAME(InputRoot.*[1]) || FIELDNAMESPACE(InputRoot.*[1]) || CAST(FIELDTYPE(InputRoot) AS CHARACTER) || CAST(FIELDVALUE(InputRoot) AS CHARACTER)",
    ),
    ok(
        "FOR (quantified predicate)",
        "FOR ALL InputRoot.*[] AS F (TRUE)",
    ),
    ok("LASTMOVE", "LASTMOVE(InputRoot)"),
    ok("SAMEFIELD", "SAMEFIELD(InputRoot, InputRoot)"),
    ok("SINGULAR", "SINGULAR(InputRoot.*[])"),
    // Complex.
    ok("CASE", "CASE WHEN TRUE THEN 1 ELSE 2 END"),
    ok("CAST", "CAST('1' AS INTEGER DEFAULT 0)"),
    ok("LIST constructor", "CARDINALITY(LIST{1, 2})"),
    ok("ROW constructor", "ROW(1 AS a, 2 AS b)"),
    ok("SELECT", "CARDINALITY(SELECT F FROM InputRoot.*[] AS F)"),
    ok("THE", "THE(SELECT ITEM F FROM InputRoot.*[] AS F)"),
    // Miscellaneous.
    ok("COALESCE", "COALESCE(NULL, 1)"),
    ok("EVAL", "EVAL('1 + 1')"),
    ok("NULLIF", "NULLIF(1, 2)"),
    ok("PASSTHRU", "PASSTHRU('SELECT 1')"),
    noted(
        "SLEEP",
        "SLEEP(0)",
        "blocks the flow thread for the given milliseconds",
    ),
    ok(
        "UUIDASBLOB, UUIDASCHAR",
        "LENGTH(UUIDASBLOB) + LENGTH(UUIDASCHAR)",
    ),
];

/// The special registers and niladic functions.
pub const REGISTERS: &[Item] = &[
    ok("CURRENT_DATE", "CURRENT_DATE"),
    ok("CURRENT_TIME", "CURRENT_TIME"),
    ok("CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP"),
    ok("CURRENT_GMTDATE", "CURRENT_GMTDATE"),
    ok("CURRENT_GMTTIME", "CURRENT_GMTTIME"),
    ok("CURRENT_GMTTIMESTAMP", "CURRENT_GMTTIMESTAMP"),
    ok("LOCAL_TIMEZONE", "LOCAL_TIMEZONE"),
    ok("SQLCODE", "SQLCODE"),
    ok("SQLERRORTEXT", "SQLERRORTEXT"),
    ok("SQLNATIVEERROR", "SQLNATIVEERROR"),
    ok("SQLSTATE", "SQLSTATE"),
];

fn status_cell(s: Status) -> String {
    match s {
        Status::Supported => "supported".to_string(),
        Status::RuntimeError(why) => format!("run-time error (\"{why}\")"),
    }
}

fn items(out: &mut String, title: &str, list: &[Item]) {
    out.push_str(&format!(
        "\n## {title}\n\n| item | status | notes |\n|---|---|---|\n"
    ));
    for i in list {
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            i.name,
            status_cell(i.status),
            i.note
        ));
    }
}

/// The generated part of docs/esql-coverage.md.
pub fn markdown() -> String {
    let mut out = String::new();
    items(&mut out, "Statements", STATEMENTS);
    items(&mut out, "Functions", FUNCTIONS);
    items(&mut out, "Special registers", REGISTERS);

    out.push_str("\n## Broker attributes\n\nAlso written `SQL.Name` (a variable of the same name hides the plain form). All are read-only.\n\n| attribute | type | status | value in Sluice |\n|---|---|---|---|\n");
    for a in broker::ATTRIBUTES {
        out.push_str(&format!(
            "| `{}` | {} | supported | {} |\n",
            a.name, a.ty, a.value
        ));
    }

    out.push_str("\n## Field-type constants\n\nUsable in type qualifiers (`(XMLNSC.Attribute)id`), in `TYPE` and `IDENTITY` clauses and as values. Type names match regardless of case. XML and XMLNS bodies are read by Sluice's XMLNSC parser, so their constants name the XMLNSC type of the same construct. The header, model-driven and binary domains hold the generic types.\n\n| constant | value | status |\n|---|---|---|\n");
    for (domain, table) in field_types::DOMAINS {
        for (name, v) in table.iter() {
            out.push_str(&format!(
                "| `{domain}.{name}` | `0x{v:08X}` | supported |\n"
            ));
        }
    }
    for (name, v) in field_types::GENERIC_NAMES {
        out.push_str(&format!("| `{name}` | `0x{v:08X}` | supported |\n"));
    }

    out.push_str("\n## Correlation names\n\n| name | Compute | Filter, Database | status |\n|---|---|---|---|\n");
    let compute = names::correlation_names(crate::syntax::ast::ModuleKind::Compute);
    let filter = names::correlation_names(crate::syntax::ast::ModuleKind::Filter);
    let mut all: Vec<&str> = compute.iter().chain(filter.iter()).copied().collect();
    all.dedup();
    let mut seen = Vec::new();
    for n in all {
        if seen.contains(&n) {
            continue;
        }
        seen.push(n);
        let yes = |l: &[&str]| if l.contains(&n) { "yes" } else { "" };
        out.push_str(&format!(
            "| `{n}` | {} | {} | supported |\n",
            yes(compute),
            yes(filter)
        ));
    }
    out
}
