//! The ESQL conformance suite and runtime tests.
//!
//! Every folder under the repository's `tests/esql/` is a case: `program.esql` (its first module runs),
//! optionally `input.xml` (the XMLNSC body of the input message), and either `expected.txt`
//! (the output Root tree, every PROPAGATE and the Environment, rendered) or `error.txt` (text
//! the runtime or compile error must contain); `attributes.txt` gives the host's broker
//! attribute values (`flow=name`, one a line). Run with `BLESS=1` to write `expected.txt`.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use sluice_esql::runtime::broker::BrokerAttributes;
use sluice_esql::runtime::{Host, Module, Program, PropagateTo, RunOptions};
use sluice_node_api::NodeError;
use sluice_parsers::xmlnsc;
use sluice_tree::{Message, Tree};

struct Recorder {
    out: String,
    /// The unit of work's database transaction, as a flow keeps one: committed when the case
    /// ends well, rolled back when it fails.
    unit: Option<(sluice_db::UnitId, Arc<sluice_db::Datasource>)>,
}

impl Recorder {
    fn new() -> Recorder {
        Recorder {
            out: String::new(),
            unit: None,
        }
    }

    fn finish(&mut self, succeeded: bool) {
        if let Some((unit, db)) = self.unit.take() {
            if succeeded {
                db.commit(unit).expect("commit");
            } else {
                db.rollback(unit);
            }
        }
    }
}

impl Host for Recorder {
    fn propagate(
        &mut self,
        to: PropagateTo,
        msg: &mut Message,
        env: &mut Tree,
    ) -> Result<(), NodeError> {
        let r = msg.root.root();
        msg.root.expand_all(r)?;
        let _ = env;
        self.out
            .push_str(&format!("--- PROPAGATE {to:?}\n{:?}", msg.root));
        Ok(())
    }

    fn join_database(&mut self, db: &Arc<sluice_db::Datasource>) -> Result<(), NodeError> {
        if self.unit.is_none() {
            let unit = sluice_db::UnitId::next();
            if db
                .begin(unit)
                .map_err(|e| NodeError::recoverable(e.to_string()))?
            {
                self.unit = Some((unit, db.clone()));
            }
        }
        Ok(())
    }

    fn end_database_work(
        &mut self,
        _: &Arc<sluice_db::Datasource>,
        commit: bool,
    ) -> Result<(), NodeError> {
        self.finish(commit);
        Ok(())
    }
}

fn input_message(dir: &Path) -> Message {
    let mut msg = Message::new();
    if let Ok(xml) = std::fs::read(dir.join("input.xml")) {
        let r = msg.root.root();
        xmlnsc::attach(
            &mut msg.root,
            r,
            Bytes::from(xml),
            Arc::new(xmlnsc::XmlnscParser::default()),
        );
    }
    msg
}

fn first_module(program: &Arc<Program>) -> Module {
    let names = program.module_names();
    let first = names.first().expect("the program has a module");
    program.module(first).expect("module found by its own name")
}

/// The host's broker attribute values of a case, `field=value` a line.
fn attributes(text: &str) -> BrokerAttributes {
    let mut a = BrokerAttributes::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let v = Some(v.trim().to_string());
        match k.trim() {
            "project" => a.project = v,
            "queue_manager" => a.queue_manager = v,
            "work_path" => a.work_path = v,
            "flow" => a.flow = v,
            "library" => a.library = v,
            "node_label" => a.node_label = v,
            "node_type" => a.node_type = v,
            "data_source" => a.data_source = v,
            "transaction" => a.transaction = v,
            other => panic!("attributes.txt: unknown field {other}"),
        }
    }
    a
}

/// Run one case and return what it produced (or the error text).
fn run_case(dir: &Path) -> Result<String, String> {
    let src = std::fs::read_to_string(dir.join("program.esql")).map_err(|e| e.to_string())?;
    let program = Program::compile(&[("program.esql".to_string(), src)])
        .map_err(|es| es.iter().map(|e| e.render()).collect::<Vec<_>>().join("\n"))?;
    let program = Arc::new(program);
    let module = first_module(&program);
    let mut msg = input_message(dir);
    let mut env = Tree::new("Environment");
    let mut host = Recorder::new();
    let mut options = RunOptions::default();
    if dir.join("database").exists() {
        options.database =
            Some(sluice_db::Datasource::open(sluice_db::IN_MEMORY).map_err(|e| e.to_string())?);
    }
    if let Ok(ext) = std::fs::read_to_string(dir.join("externals.txt")) {
        for line in ext.lines() {
            if let Some((k, v)) = line.split_once('=') {
                options.externals.push((
                    k.trim().to_string(),
                    sluice_esql::runtime::ScalarValue::from_text(v.trim()),
                ));
            }
        }
    }
    if let Ok(text) = std::fs::read_to_string(dir.join("attributes.txt")) {
        options.attributes = Arc::new(attributes(&text));
    }
    let outcome = module.run(&mut msg, &mut env, &mut host, &options);
    host.finish(outcome.is_ok());
    let outcome = outcome.map_err(|e| {
        format!(
            "{} (file {} line {})",
            e, e.exception.file, e.exception.line
        )
    })?;
    let mut out = format!("--- RESULT {:?}\n", outcome.result);
    if let Some(mut o) = outcome.output {
        let r = o.root.root();
        o.root.expand_all(r).map_err(|e| e.to_string())?;
        out.push_str(&format!("--- OutputRoot\n{:?}", o.root));
        let r = o.local_environment.root();
        if o.local_environment.peek_first_child(r).is_some() {
            out.push_str(&format!("--- LocalEnvironment\n{:?}", o.local_environment));
        }
    }
    out.push_str(&host.out);
    let r = env.root();
    if env.peek_first_child(r).is_some() {
        env.expand_all(r).map_err(|e| e.to_string())?;
        out.push_str(&format!("--- Environment\n{env:?}"));
    }
    Ok(out)
}

#[test]
fn conformance_cases_produce_expected_trees() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/esql");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .expect("tests/esql exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 10, "the suite has its cases");
    let bless = std::env::var_os("BLESS").is_some();
    let mut failures = Vec::new();
    for dir in &dirs {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let got = run_case(dir);
        if let Ok(want) = std::fs::read_to_string(dir.join("error.txt")) {
            match got {
                Err(e) if e.contains(want.trim()) => {}
                other => failures.push(format!(
                    "{name}: expected an error containing {:?}, got {other:?}",
                    want.trim()
                )),
            }
            continue;
        }
        let got = match got {
            Ok(g) => g,
            Err(e) => {
                failures.push(format!("{name}: failed: {e}"));
                continue;
            }
        };
        let path = dir.join("expected.txt");
        if bless {
            std::fs::write(&path, &got).expect("write expected.txt");
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(want) if want == got => {}
            Ok(want) => failures.push(format!(
                "{name}: output differs\n--- want\n{want}\n--- got\n{got}"
            )),
            Err(_) => failures.push(format!("{name}: no expected.txt; got\n{got}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

fn compile_errors(src: &str) -> Vec<String> {
    match Program::compile(&[("t.esql".to_string(), src.to_string())]) {
        Ok(_) => Vec::new(),
        Err(es) => es.iter().map(|e| e.render()).collect(),
    }
}

#[test]
fn compile_reports_unknown_names_with_file_line_and_column() {
    let errs = compile_errors(
        "CREATE COMPUTE MODULE M\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  SET OutputRoot.X = NoSuchVar;\n  RETURN TRUE;\n END;\nEND MODULE;\n",
    );
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].starts_with("t.esql:4:"), "{}", errs[0]);
    assert!(errs[0].contains("NoSuchVar"), "{}", errs[0]);
}

#[test]
fn compile_reports_unknown_function_and_namespace_prefix() {
    let errs = compile_errors(
        "CREATE COMPUTE MODULE M\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  SET OutputRoot.XMLNSC.p:a = Frobnicate(1);\n  RETURN TRUE;\n END;\nEND MODULE;\n",
    );
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(errs.iter().any(|e| e.contains("Frobnicate")), "{errs:?}");
    assert!(
        errs.iter().any(|e| e.contains("namespace prefix `p`")),
        "{errs:?}"
    );
}

#[test]
fn a_module_defined_twice_in_a_schema_is_a_compile_error_naming_both_places() {
    let m = "CREATE COMPUTE MODULE SetMsgId\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  RETURN TRUE;\n END;\nEND MODULE;\n";
    let errs = match Program::compile(&[("a.esql".into(), m.into()), ("b.esql".into(), m.into())]) {
        Ok(_) => panic!("two SetMsgId modules compiled"),
        Err(es) => es.iter().map(|e| e.render()).collect::<Vec<_>>(),
    };
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with("b.esql:1:")
            && errs[0].contains("defined twice (first in a.esql line 1)"),
        "{}",
        errs[0]
    );
    // The same name in two schemas is two modules.
    let other = format!("BROKER SCHEMA other\n{m}");
    assert!(Program::compile(&[("a.esql".into(), m.into()), ("c.esql".into(), other)]).is_ok());
}

#[test]
fn compile_resolves_routines_across_files_through_path() {
    let lib = "BROKER SCHEMA com.example.lib\nCREATE FUNCTION Twice(IN x INTEGER) RETURNS INTEGER BEGIN RETURN x * 2; END;\n";
    let main = "BROKER SCHEMA com.example.app\nPATH com.example.lib;\nCREATE COMPUTE MODULE M\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  SET OutputRoot.XMLNSC.R = Twice(21);\n  RETURN TRUE;\n END;\nEND MODULE;\n";
    let program = Program::compile(&[
        ("lib.esql".into(), lib.into()),
        ("main.esql".into(), main.into()),
    ])
    .map_err(|e| e.iter().map(|x| x.render()).collect::<Vec<_>>())
    .expect("compiles");
    let program = Arc::new(program);
    assert!(program.module("com.example.app.M").is_some());
    let module = program.module("M").expect("found unqualified");
    let mut msg = Message::new();
    let mut env = Tree::new("Environment");
    let out = module
        .run(
            &mut msg,
            &mut env,
            &mut Recorder::new(),
            &RunOptions::default(),
        )
        .expect("runs");
    let mut o = out.output.expect("compute output");
    let r = o.root.root();
    let v = o
        .root
        .path(r, &["XMLNSC", "R"])
        .ok()
        .flatten()
        .map(|n| o.root.value(n));
    assert_eq!(v, Some(sluice_tree::Value::Integer(42)));
}

#[test]
fn copying_the_input_message_keeps_the_body_unparsed() {
    let src = "CREATE COMPUTE MODULE M\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  SET OutputRoot = InputRoot;\n  RETURN TRUE;\n END;\nEND MODULE;\n";
    let program = Arc::new(
        Program::compile(&[("t.esql".into(), src.into())])
            .map_err(|_| ())
            .expect("compiles"),
    );
    let module = program.module("M").expect("module");
    let body = "<a><b>1</b><c>2</c></a>";
    let mut msg = Message::new();
    let r = msg.root.root();
    xmlnsc::attach(
        &mut msg.root,
        r,
        Bytes::from_static(body.as_bytes()),
        Arc::new(xmlnsc::XmlnscParser::default()),
    );
    let mut env = Tree::new("Environment");
    let out = module
        .run(
            &mut msg,
            &mut env,
            &mut Recorder::new(),
            &RunOptions::default(),
        )
        .expect("runs");
    let o = out.output.expect("output");
    let r = o.root.root();
    let x = o.root.peek_last_child(r).expect("body copied");
    assert!(o.root.is_pending(x), "the copy is still unparsed");
    assert_eq!(o.root.original(x), Some(body.as_bytes()));
    // The input was not parsed either.
    let ir = msg.root.root();
    let ix = msg.root.peek_last_child(ir).expect("input body");
    assert!(msg.root.is_pending(ix));
}

#[test]
fn runtime_error_names_file_and_line() {
    let src = "CREATE COMPUTE MODULE M\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  DECLARE x INTEGER 1;\n  SET x = x / 0;\n  RETURN TRUE;\n END;\nEND MODULE;\n";
    let program = Arc::new(
        Program::compile(&[("div.esql".into(), src.into())])
            .map_err(|_| ())
            .expect("compiles"),
    );
    let module = program.module("M").expect("module");
    let mut msg = Message::new();
    let mut env = Tree::new("Environment");
    let e = module
        .run(
            &mut msg,
            &mut env,
            &mut Recorder::new(),
            &RunOptions::default(),
        )
        .expect_err("division by zero");
    assert_eq!(e.exception.file, "div.esql");
    assert_eq!(e.exception.line, 5);
    assert!(e.to_string().contains("Division by zero"), "{e}");
}

#[test]
fn check_paths_reports_ok_and_errors() {
    let dir = std::env::temp_dir().join(format!("esql-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let good = dir.join("good.esql");
    let bad = dir.join("bad.esql");
    std::fs::write(&good, "CREATE COMPUTE MODULE G\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  RETURN TRUE;\n END;\nEND MODULE;\n").expect("write");
    std::fs::write(&bad, "CREATE COMPUTE MODULE B\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  SET OutputRoot.A = Nope;\n  RETURN TRUE;\n END;\nEND MODULE;\n").expect("write");
    let (out, ok) = sluice_esql::runtime::check_paths(&[good.clone(), bad.clone()]);
    assert!(!ok);
    assert!(out.contains(&format!("{}: ok", good.display())), "{out}");
    assert!(out.contains(&format!("{}:4:", bad.display())), "{out}");
    assert!(out.contains('^'), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
