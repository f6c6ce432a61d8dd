//! The ESQL front end against files: every good file parses and checks clean, every bad
//! file gives exactly the diagnostics its `-- expect:` lines list, and random token soup
//! never panics.

use std::path::{Path, PathBuf};

use sluice_esql::syntax::{check_file, check_source, parse};

fn esql_files(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/syntax")
        .join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "esql"))
        .collect();
    files.sort();
    files
}

#[test]
fn good_files_parse_and_check_clean() {
    let files = esql_files("good");
    assert!(
        files.len() >= 10,
        "expected the construct files, found {}",
        files.len()
    );
    let mut failures = Vec::new();
    for path in &files {
        if let Err(diags) = check_file(path) {
            for d in diags {
                failures.push(d.render(&path.display().to_string()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `-- expect: LINE:COL: MESSAGE` lines at the top of a bad file.
fn expectations(src: &str) -> Vec<String> {
    src.lines()
        .filter_map(|l| l.trim().strip_prefix("-- expect: "))
        .map(str::to_string)
        .collect()
}

#[test]
fn bad_files_report_every_expected_diagnostic() {
    let files = esql_files("bad");
    assert!(!files.is_empty());
    let mut failures = Vec::new();
    for path in &files {
        let src = std::fs::read_to_string(path).expect("readable test file");
        let expected = expectations(&src);
        assert!(
            !expected.is_empty(),
            "{} has no `-- expect:` lines",
            path.display()
        );
        let got: Vec<String> = match check_source(&src) {
            Ok(_) => Vec::new(),
            Err(diags) => diags
                .iter()
                .map(|d| format!("{}:{}: {}", d.line, d.col, d.message))
                .collect(),
        };
        if got != expected {
            failures.push(format!(
                "{}\n  expected:\n    {}\n  got:\n    {}",
                path.display(),
                expected.join("\n    "),
                got.join("\n    ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn check_file_renders_path_line_col_excerpt_and_caret() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/syntax/bad/missing_semicolon.esql");
    let diags = check_file(&path).expect_err("the file is bad");
    let rendered = diags[0].render("missing_semicolon.esql");
    let mut lines = rendered.lines();
    let head = lines.next().expect("a header line");
    assert!(head.starts_with("missing_semicolon.esql:"), "{head}");
    assert!(head.contains(": error: "), "{head}");
    let source_line = lines.next().expect("the source line");
    let caret = lines.next().expect("the caret line");
    let col = diags[0].col as usize;
    assert_eq!(caret.trim_start().chars().next(), Some('^'));
    assert_eq!(
        caret.chars().count() - caret.trim_start().chars().count() + 1,
        col,
        "{source_line}\n{caret}"
    );
}

#[test]
fn check_file_reports_unreadable_file() {
    let diags = check_file("/nonexistent/dir/x.esql").expect_err("missing file");
    assert_eq!((diags[0].line, diags[0].col), (1, 1));
    assert!(diags[0].message.starts_with("cannot read file"));
}

mod soup {
    use super::parse;
    use proptest::prelude::*;

    const PIECES: &[&str] = &[
        "CREATE",
        "COMPUTE",
        "MODULE",
        "M",
        "END",
        "FUNCTION",
        "PROCEDURE",
        "Main",
        "(",
        ")",
        "RETURNS",
        "BOOLEAN",
        "BEGIN",
        "SET",
        "OutputRoot",
        ".",
        "XMLNSC",
        "=",
        "'x'",
        "1",
        "2.5",
        "1e3",
        ";",
        "IF",
        "THEN",
        "ELSE",
        "ELSEIF",
        "WHILE",
        "DO",
        "FOR",
        "AS",
        "CASE",
        "WHEN",
        "SELECT",
        "FROM",
        "WHERE",
        "ITEM",
        "[",
        "]",
        "<",
        ">",
        "{",
        "}",
        "*",
        "*:",
        ":",
        ",",
        "||",
        "+",
        "-",
        "/",
        "AND",
        "OR",
        "NOT",
        "IN",
        "BETWEEN",
        "LIKE",
        "IS",
        "NULL",
        "CAST",
        "CHARACTER",
        "INTERVAL",
        "HOUR",
        "TO",
        "MINUTE",
        "DECLARE",
        "REFERENCE",
        "MOVE",
        "CREATE",
        "FIELD",
        "LASTCHILD",
        "OF",
        "PROPAGATE",
        "TERMINAL",
        "DELETE",
        "LEAVE",
        "L1",
        "SUBSTRING",
        "TRIM",
        "POSITION",
        "X'0A'",
        "B'1'",
        "'",
        "\"q\"",
        "--c\n",
        "/*",
        "*/",
        "(XMLNSC.Attribute)",
        "THE",
        "ROW",
        "LIST",
        "REPEAT",
        "UNTIL",
        "LOOP",
        "ATOMIC",
        "HANDLER",
        "EXIT",
        "SQLSTATE",
        "PARSE",
        "DOMAIN",
        "ASBITSTREAM",
        "é",
        "?",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn token_soup_never_panics(picks in proptest::collection::vec(0..PIECES.len(), 0..80)) {
            let src: Vec<&str> = picks.iter().map(|&i| PIECES[i]).collect();
            let _ = parse(&src.join(" "));
        }

        #[test]
        fn arbitrary_text_never_panics(src in "\\PC{0,200}") {
            let _ = parse(&src);
        }
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!(
        "CREATE FUNCTION f() BEGIN SET x = {}1{}; END;",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    let diags = parse(&deep).expect_err("too deep");
    assert!(
        diags[0].message.contains("nesting is deeper than"),
        "{}",
        diags[0]
    );
    let unary = format!(
        "CREATE FUNCTION f() BEGIN SET x = {}1; END;",
        "- ".repeat(5000)
    );
    assert!(parse(&unary).is_err());
    let blocks = format!(
        "CREATE FUNCTION f() {} {} ;",
        "BEGIN ".repeat(3000),
        "END; ".repeat(3000)
    );
    assert!(parse(&blocks).is_err());
    // Real code nests far less and is unaffected.
    let fine = format!(
        "CREATE FUNCTION f() BEGIN SET x = {}1{}; END;",
        "(".repeat(30),
        ")".repeat(30)
    );
    assert!(parse(&fine).is_ok());
}

#[test]
fn long_lines_give_short_excerpts_with_aligned_caret() {
    let src = format!(
        "CREATE FUNCTION f() BEGIN SET x = {} ?; END;",
        "1 + ".repeat(20_000) + "1"
    );
    let diags = parse(&src).expect_err("bad character");
    let d = &diags[0];
    assert_eq!(d.message, "unexpected character `?`");
    let mut lines = d.excerpt_with_caret.lines();
    let line = lines.next().expect("source line");
    let caret = lines.next().expect("caret line");
    assert!(line.len() < 300);
    assert_eq!(line.chars().nth(caret.len() - 1), Some('?'));
}

#[test]
fn crlf_and_byte_order_mark_parse_with_true_columns() {
    let src = "\u{feff}CREATE COMPUTE MODULE M\r\n\tCREATE FUNCTION Main() RETURNS BOOLEAN\r\n\tBEGIN\r\n\t\tSET OutputRoot = ;\r\n\tEND;\r\nEND MODULE;\r\n";
    let diags = check_source(src).expect_err("bad SET");
    assert_eq!((diags[0].line, diags[0].col), (4, 20));
    assert_eq!(
        diags[0].excerpt_with_caret,
        "\t\tSET OutputRoot = ;\n\t\t                 ^"
    );
    let fixed = src.replace("= ;", "= InputRoot;");
    assert!(check_source(&fixed).is_ok());
}

#[test]
fn module_and_function_may_share_a_name() {
    let src = "CREATE FUNCTION Orders() RETURNS INTEGER BEGIN RETURN 1; END;\n\
               CREATE COMPUTE MODULE Orders CREATE FUNCTION Main() RETURNS BOOLEAN BEGIN RETURN TRUE; END; END MODULE;";
    assert!(check_source(src).is_ok());
}
