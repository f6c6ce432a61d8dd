//! ESQL nodes in real flows: Compute output and PROPAGATE, Filter modules, errors on the
//! failure terminal, and the Database node.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use sluice_flow::{Flow, Registry, load_flow};
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, InputNode, InstanceRunner, Invocation, Message,
    Node, NodeBuilder, NodeError, NodeImpl, NodeSpec, Services, Terminal, Terminals, properties,
    terminals,
};
use sluice_parsers::xmlnsc;

#[path = "tests_pg.rs"]
mod pg;

#[path = "db/tests.rs"]
mod db;

#[path = "db/tests_pg.rs"]
mod db_pg;

static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());
static SERIAL: Mutex<()> = Mutex::new(());

fn log(s: String) {
    LOG.lock().unwrap_or_else(|e| e.into_inner()).push(s);
}

struct Source {
    body: String,
}

impl InputNode for Source {
    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        let mut inv = Invocation::new();
        let mut msg = Message::new();
        let r = msg.root.root();
        xmlnsc::attach(
            &mut msg.root,
            r,
            Bytes::from(self.body.clone()),
            Arc::new(xmlnsc::XmlnscParser::default()),
        );
        // As the transport input nodes do: the unit of work follows the flow's outcome.
        match runner.invoke(&mut inv, Out::Out.into(), &mut msg) {
            Ok(()) => {
                if let Err(e) = inv.unit_of_work.commit() {
                    log(format!("commit failed: {e}"));
                }
            }
            Err(e) => {
                inv.unit_of_work.rollback();
                log(format!("error: {}", e.exception.describe()));
            }
        }
    }
}

/// Records the body it receives as XML, and the ExceptionList's text when there is one.
struct Capture {
    name: String,
}

impl Node for Capture {
    fn evaluate(&self, _: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let mut out = Vec::new();
        if let Some(b) = msg.body()? {
            xmlnsc::serialize_to(&mut msg.root, b, &mut out)?;
        }
        let el = &mut msg.exception_list;
        let r = el.root();
        el.expand_all(r)?;
        let exc = if el.peek_first_child(r).is_some() {
            format!(" exception: {el:?}")
        } else {
            String::new()
        };
        log(format!(
            "{}: {}{exc}",
            self.name,
            String::from_utf8_lossy(&out)
        ));
        Ok(())
    }
}

terminals! {
    enum In {
        In = "in": "",
    }
}

terminals! {
    enum Out {
        Out = "out": "",
    }
}

properties! {
    struct SourceProps {
        body: String,
    }
}

properties! {
    struct CaptureProps {}
}

impl BuildNode for SourceProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Input(Arc::new(Source { body: self.body })))
    }
}

impl BuildNode for CaptureProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(Capture {
            name: b.label.to_string(),
        })))
    }
}

static SOURCE: NodeSpec = NodeSpec {
    type_name: "Source",
    summary: "",
    inputs: &[],
    outputs: Out::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[],
    builder: NodeBuilder::of::<SourceProps>(),
};

static CAPTURE: NodeSpec = NodeSpec {
    type_name: "Capture",
    summary: "",
    inputs: In::SPECS,
    outputs: &[],
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[],
    builder: NodeBuilder::of::<CaptureProps>(),
};

/// Run `flow` once in a project whose `esql/main.esql` is `esql`; return the log.
fn run(esql: &str, flow: &str) -> Vec<String> {
    run_then(esql, flow, &|_| {})
}

/// As [`run`], then call `after` with the project folder before it is removed.
fn run_then(esql: &str, flow: &str, after: &dyn Fn(&std::path::Path)) -> Vec<String> {
    run_with(esql, flow, &Services::none(), after)
}

/// As [`run_then`], with `services` (named datasources, say).
fn run_with(
    esql: &str,
    flow: &str,
    services: &Services,
    after: &dyn Fn(&std::path::Path),
) -> Vec<String> {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!(
        "sluice-esql-nodes-{}-{}",
        std::process::id(),
        LOG_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(dir.join("esql")).expect("project dir");
    std::fs::write(dir.join("esql/main.esql"), esql).expect("write esql");
    if let Some(prepare) = PREPARE.with(|p| p.get()) {
        prepare(&dir);
    }
    let mut r = Registry::new();
    r.register(&SOURCE);
    r.register(&CAPTURE);
    super::register(&mut |s| r.register(s));
    let def = load_flow("t.yaml", flow, &r).unwrap_or_else(|e| panic!("{}", e[0]));
    let f = Arc::new(Flow::build(&def, &dir, services).unwrap_or_else(|e| panic!("{}", e[0])));
    LOG.lock().unwrap_or_else(|e| e.into_inner()).clear();
    f.start().stop();
    after(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    LOG.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

thread_local! {
    /// Called with the new project folder before the flow is built.
    static PREPARE: std::cell::Cell<Option<fn(&std::path::Path)>> = const { std::cell::Cell::new(None) };
}

static LOG_ID: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[test]
fn compute_builds_output_and_propagates_to_numbered_terminals() {
    let esql = "CREATE COMPUTE MODULE Split\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  FOR i AS InputRoot.XMLNSC.L.I[] DO\n   SET OutputRoot.XMLNSC.One.V = i;\n   PROPAGATE TO TERMINAL 'out1';\n  END FOR;\n  SET OutputRoot.XMLNSC.Done.N = CARDINALITY(InputRoot.XMLNSC.L.I[]);\n  RETURN TRUE;\n END;\nEND MODULE;\n";
    let log = run(
        esql,
        "nodes:\n  s: { type: Source, body: '<L><I>a</I><I>b</I></L>', wires: { out: [c] } }\n  c: { type: Compute, module: Split, wires: { out: [done], out1: [each] } }\n  each: { type: Capture }\n  done: { type: Capture }\n",
    );
    assert_eq!(
        log,
        [
            "each: <One><V>a</V></One>",
            "each: <One><V>b</V></One>",
            "done: <Done><N>2</N></Done>"
        ]
    );
}

#[test]
fn filter_module_routes_on_main_result() {
    let esql = "CREATE FILTER MODULE Big\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  RETURN CAST(Body.O.Q AS INTEGER) > 2;\n END;\nEND MODULE;\n";
    let flow = |q: &str| {
        format!(
            "nodes:\n  s: {{ type: Source, body: '<O><Q>{q}</Q></O>', wires: {{ out: [f] }} }}\n  f: {{ type: Filter, module: Big, wires: {{ 'true': [yes], 'false': [no], unknown: [unk] }} }}\n  yes: {{ type: Capture }}\n  no: {{ type: Capture }}\n  unk: {{ type: Capture }}\n"
        )
    };
    assert_eq!(run(esql, &flow("5")), ["yes: <O><Q>5</Q></O>"]);
    assert_eq!(run(esql, &flow("1")), ["no: <O><Q>1</Q></O>"]);
}

#[test]
fn compute_error_goes_to_failure_with_file_and_line() {
    let esql = "CREATE COMPUTE MODULE Bad\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  SET OutputRoot.XMLNSC.X = CAST(InputRoot.XMLNSC.O AS INTEGER);\n  RETURN TRUE;\n END;\nEND MODULE;\n";
    let log = run(
        esql,
        "nodes:\n  s: { type: Source, body: '<O>nope</O>', wires: { out: [c] } }\n  c: { type: Compute, module: Bad, wires: { out: [ok], failure: [fail] } }\n  ok: { type: Capture }\n  fail: { type: Capture }\n",
    );
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(
        log[0].starts_with("fail: <O>nope</O> exception:"),
        "{}",
        log[0]
    );
    assert!(log[0].contains("main.esql"), "{}", log[0]);
    assert!(
        log[0].contains("Line (0x03000000) = Integer(4)"),
        "{}",
        log[0]
    );
}

#[test]
fn database_node_writes_rows_and_compute_reads_them() {
    let esql = "CREATE DATABASE MODULE Store\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  PASSTHRU('CREATE TABLE IF NOT EXISTS t(v TEXT)');\n  INSERT INTO Database.t(v) VALUES(Body.O.V);\n  RETURN TRUE;\n END;\nEND MODULE;\n";
    let log = run(
        esql,
        "nodes:\n  s: { type: Source, body: '<O><V>x</V></O>', wires: { out: [d] } }\n  d: { type: Database, module: Store, datasource: ':memory:', wires: { out: [ok] } }\n  ok: { type: Capture }\n",
    );
    assert_eq!(log, ["ok: <O><V>x</V></O>"]);
}

#[test]
fn unknown_module_is_a_build_error() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir =
        std::env::temp_dir().join(format!("sluice-esql-nodes-missing-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("esql")).expect("dir");
    std::fs::write(dir.join("esql/a.esql"), "CREATE COMPUTE MODULE A\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  RETURN TRUE;\n END;\nEND MODULE;\n").expect("write");
    let mut r = Registry::new();
    r.register(&SOURCE);
    super::register(&mut |s| r.register(s));
    let def = load_flow("t.yaml", "nodes:\n  s: { type: Source, body: '<a/>', wires: { out: [c] } }\n  c: { type: Compute, module: Nope }\n", &r)
        .unwrap_or_else(|e| panic!("{}", e[0]));
    let err = Flow::build(&def, &dir, &Services::none())
        .err()
        .map(|e| e[0].to_string())
        .unwrap_or_default();
    assert!(err.contains("no ESQL module `Nope`"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The samples' flows load in the samples test (which starts the server on them); their ESQL
/// modules are checked here.
#[test]
fn sample_esql_compiles_with_every_module_the_samples_name() {
    let samples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples");
    let program = super::program::program(&samples).unwrap_or_else(|e| panic!("{e}"));
    for m in [
        "Transform",
        "EsqlParse",
        "EsqlWrite",
        "FilterFirst",
        "FilterLast",
        "JsonModify",
        "Split",
    ] {
        assert!(program.module(m).is_some(), "{m}");
    }
}

#[test]
fn downstream_error_after_propagate_skips_this_nodes_failure_terminal() {
    let esql = "CREATE COMPUTE MODULE Send\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  SET OutputRoot.XMLNSC.A = 1;\n  PROPAGATE TO TERMINAL 'out1';\n  RETURN FALSE;\n END;\nEND MODULE;\nCREATE COMPUTE MODULE Boom\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  THROW USER EXCEPTION VALUES('downstream');\n END;\nEND MODULE;\n";
    let log = run(
        esql,
        "nodes:\n  s: { type: Source, body: '<O/>', wires: { out: [c] } }\n  c: { type: Compute, module: Send, wires: { out1: [b], failure: [fail] } }\n  b: { type: Compute, module: Boom }\n  fail: { type: Capture }\n",
    );
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(
        log[0].starts_with("error:") && log[0].contains("downstream"),
        "{}",
        log[0]
    );
}

const STORE_THEN_CHECK: &str = "CREATE DATABASE MODULE Store\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  INSERT INTO Database.t(v) VALUES(Body.O.V);\n  RETURN TRUE;\n END;\nEND MODULE;\nCREATE COMPUTE MODULE Check\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  IF InputRoot.XMLNSC.O.Fail = 'yes' THEN\n   THROW USER EXCEPTION VALUES('later node failed');\n  END IF;\n  RETURN FALSE;\n END;\nEND MODULE;\n";

/// The rows of table `t` in the project's `db.sqlite`, created empty before the flow runs.
fn rows_after(body: &str, transaction: &str) -> (Vec<String>, Vec<String>) {
    let rows = Mutex::new(Vec::new());
    let flow = format!(
        "nodes:\n  s: {{ type: Source, body: '{body}', wires: {{ out: [d] }} }}\n  d: {{ type: Database, module: Store, datasource: db.sqlite, transaction: {transaction}, wires: {{ out: [c] }} }}\n  c: {{ type: Compute, module: Check }}\n"
    );
    let log = run_then(STORE_THEN_CHECK, &flow, &|dir| {
        // A connection of its own, which sees only what the flow committed.
        let db = sluice_db::Datasource::open_file(&dir.join("db.sqlite")).expect("open db");
        let mut got = Vec::new();
        db.statement()
            .expect("connection")
            .query("SELECT v FROM t ORDER BY rowid", &[], |r| {
                if let sluice_db::SqlValueRef::Text(t) = r.get(0)? {
                    got.push(String::from_utf8_lossy(t).into_owned());
                }
                Ok::<_, sluice_db::DbError>(())
            })
            .expect("rows");
        *rows.lock().unwrap_or_else(|e| e.into_inner()) = got;
    });
    let rows = rows.lock().unwrap_or_else(|e| e.into_inner()).clone();
    (log, rows)
}

fn create_table_in(dir: &std::path::Path) {
    sluice_db::Datasource::open_file(&dir.join("db.sqlite"))
        .expect("open db")
        .statement()
        .expect("connection")
        .execute_batch("CREATE TABLE IF NOT EXISTS t(v TEXT)")
        .expect("create table");
}

#[test]
fn database_insert_is_rolled_back_when_a_later_node_fails() {
    PREPARE.with(|p| p.set(Some(create_table_in)));
    let (log, rows) = rows_after("<O><V>x</V><Fail>yes</Fail></O>", "automatic");
    PREPARE.with(|p| p.set(None));
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(log[0].contains("later node failed"), "{log:?}");
    assert!(rows.is_empty(), "the insert must be rolled back: {rows:?}");
}

#[test]
fn database_insert_is_committed_when_the_flow_completes() {
    PREPARE.with(|p| p.set(Some(create_table_in)));
    let (log, rows) = rows_after("<O><V>x</V><Fail>no</Fail></O>", "automatic");
    PREPARE.with(|p| p.set(None));
    assert!(log.is_empty(), "{log:?}");
    assert_eq!(rows, ["x"]);
}

#[test]
fn database_transaction_commit_keeps_work_when_a_later_node_fails() {
    PREPARE.with(|p| p.set(Some(create_table_in)));
    let (log, rows) = rows_after("<O><V>kept</V><Fail>yes</Fail></O>", "commit");
    PREPARE.with(|p| p.set(None));
    assert!(log[0].contains("later node failed"), "{log:?}");
    assert_eq!(rows, ["kept"]);
}

#[test]
fn two_nodes_running_one_module_have_their_own_module_shared_variables() {
    let esql = "DECLARE Total SHARED INTEGER 0;\nCREATE COMPUTE MODULE Count\n DECLARE Counter SHARED INTEGER 0;\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  SET Counter = Counter + 1;\n  SET Total = Total + 1;\n  SET OutputRoot = InputRoot;\n  CREATE LASTCHILD OF OutputRoot.XMLNSC.O NAME 'C' VALUE Counter;\n  CREATE LASTCHILD OF OutputRoot.XMLNSC.O NAME 'T' VALUE Total;\n  RETURN TRUE;\n END;\nEND MODULE;\n";
    let log = run(
        esql,
        "nodes:\n  s: { type: Source, body: '<O/>', wires: { out: [a] } }\n  a: { type: Compute, module: Count, wires: { out: [b] } }\n  b: { type: Compute, module: Count, wires: { out: [done] } }\n  done: { type: Capture }\n",
    );
    // Node b's Counter starts at 0 although node a's is 1; Total is the program's.
    assert_eq!(log, ["done: <O><C>1</C><T>1</T><C>1</C><T>2</T></O>"]);
}

#[test]
fn propagate_to_nowhere_sends_nothing_and_minus_one_is_failure() {
    let esql = "CREATE COMPUTE MODULE Route\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  SET OutputRoot.XMLNSC.A = 1;\n  PROPAGATE TO TERMINAL 'nowhere';\n  SET OutputRoot.XMLNSC.B = 2;\n  PROPAGATE TO TERMINAL -2;\n  SET OutputRoot.XMLNSC.C = 3;\n  PROPAGATE TO TERMINAL -1;\n  RETURN FALSE;\n END;\nEND MODULE;\n";
    let log = run(
        esql,
        "nodes:\n  s: { type: Source, body: '<O/>', wires: { out: [c] } }\n  c: { type: Compute, module: Route, wires: { out: [ok], failure: [fail] } }\n  ok: { type: Capture }\n  fail: { type: Capture }\n",
    );
    assert_eq!(log, ["fail: <C>3</C>"]);
}

#[test]
fn broker_attributes_name_the_flow_the_node_and_its_settings() {
    let esql = "CREATE COMPUTE MODULE Who\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  SET OutputRoot.XMLNSC.W.F = MessageFlowLabel;\n  SET OutputRoot.XMLNSC.W.N = SQL.NodeLabel;\n  SET OutputRoot.XMLNSC.W.T = NodeType;\n  SET OutputRoot.XMLNSC.W.X = Transaction;\n  SET OutputRoot.XMLNSC.W.A = ApplicationLabel = ExecutionGroupLabel;\n  RETURN TRUE;\n END;\nEND MODULE;\n";
    let log = run(
        esql,
        "flow: orders\nnodes:\n  s: { type: Source, body: '<a/>', wires: { out: [who] } }\n  who: { type: Compute, module: Who, wires: { out: [c] } }\n  c: { type: Capture }\n",
    );
    assert_eq!(
        log,
        ["c: <W><F>orders</F><N>who</N><T>ComIbmComputeNode</T><X>Automatic</X><A>TRUE</A></W>"]
    );
}

const COMMIT_ROLLBACK_THEN_CHECK: &str = "CREATE DATABASE MODULE Store\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  INSERT INTO Database.t(v) VALUES('committed');\n  COMMIT;\n  INSERT INTO Database.t(v) VALUES('rolled back');\n  ROLLBACK;\n  INSERT INTO Database.t(v) VALUES(Body.O.V);\n  RETURN TRUE;\n END;\nEND MODULE;\nCREATE COMPUTE MODULE Check\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  IF InputRoot.XMLNSC.O.Fail = 'yes' THEN\n   THROW USER EXCEPTION VALUES('later node failed');\n  END IF;\n  RETURN FALSE;\n END;\nEND MODULE;\n";

/// The rows of `t` after a flow whose Database node commits, rolls back, then inserts again.
fn rows_after_commit_and_rollback(fail: &str) -> Vec<String> {
    PREPARE.with(|p| p.set(Some(create_table_in)));
    let rows = Mutex::new(Vec::new());
    let flow = format!(
        "nodes:\n  s: {{ type: Source, body: '<O><V>last</V><Fail>{fail}</Fail></O>', wires: {{ out: [d] }} }}\n  d: {{ type: Database, module: Store, datasource: db.sqlite, wires: {{ out: [c] }} }}\n  c: {{ type: Compute, module: Check }}\n"
    );
    run_then(COMMIT_ROLLBACK_THEN_CHECK, &flow, &|dir| {
        let db = sluice_db::Datasource::open_file(&dir.join("db.sqlite")).expect("open db");
        let mut got = Vec::new();
        db.statement()
            .expect("connection")
            .query("SELECT v FROM t ORDER BY rowid", &[], |r| {
                if let sluice_db::SqlValueRef::Text(t) = r.get(0)? {
                    got.push(String::from_utf8_lossy(t).into_owned());
                }
                Ok::<_, sluice_db::DbError>(())
            })
            .expect("rows");
        *rows.lock().unwrap_or_else(|e| e.into_inner()) = got;
    });
    PREPARE.with(|p| p.set(None));
    rows.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

#[test]
fn esql_commit_keeps_work_that_a_later_failure_rolls_back_otherwise() {
    assert_eq!(rows_after_commit_and_rollback("yes"), ["committed"]);
    assert_eq!(rows_after_commit_and_rollback("no"), ["committed", "last"]);
}

#[test]
fn a_module_without_main_is_a_build_error_only_for_the_node_that_runs_it() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("sluice-esql-nodes-nomain-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("esql")).expect("dir");
    std::fs::write(
        dir.join("esql/a.esql"),
        "CREATE COMPUTE MODULE Helpers\n CREATE FUNCTION Twice(IN x INTEGER) RETURNS INTEGER BEGIN RETURN x * 2; END;\nEND MODULE;\nCREATE COMPUTE MODULE Runs\n CREATE FUNCTION Main() RETURNS BOOLEAN BEGIN RETURN TRUE; END;\nEND MODULE;\n",
    )
    .expect("write");
    let mut r = Registry::new();
    r.register(&SOURCE);
    super::register(&mut |s| r.register(s));
    let build = |module: &str| {
        let def = load_flow(
            "t.yaml",
            &format!("nodes:\n  s: {{ type: Source, body: '<a/>', wires: {{ out: [c] }} }}\n  c: {{ type: Compute, module: {module} }}\n"),
            &r,
        )
        .unwrap_or_else(|e| panic!("{}", e[0]));
        Flow::build(&def, &dir, &Services::none())
            .err()
            .map(|e| e[0].to_string())
    };
    assert_eq!(build("Runs"), None);
    let err = build("Helpers").unwrap_or_default();
    assert!(
        err.contains("module `Helpers` has no Main function"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sqlite_error_sets_sqlstate_and_the_module_goes_on_when_throw_exception_is_off() {
    let esql = "CREATE COMPUTE MODULE Miss\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  INSERT INTO Database.missing(v) VALUES(1);\n  SET OutputRoot.XMLNSC.R.State = SQLSTATE;\n  SET OutputRoot.XMLNSC.R.Native = SQLNATIVEERROR;\n  PASSTHRU('CREATE TABLE t(v INTEGER)');\n  SET OutputRoot.XMLNSC.R.After = SQLSTATE;\n  RETURN TRUE;\n END;\nEND MODULE;\n";
    let flow = |throw: bool| {
        format!(
            "nodes:\n  s: {{ type: Source, body: '<O/>', wires: {{ out: [c] }} }}\n  c: {{ type: Compute, module: Miss, datasource: ':memory:', throw_exception_on_database_error: {throw}, wires: {{ out: [got], failure: [failed] }} }}\n  got: {{ type: Capture }}\n  failed: {{ type: Capture }}\n"
        )
    };
    let log = run(esql, &flow(false));
    assert_eq!(
        log,
        ["got: <R><State>D00001</State><Native>1</Native><After>00000</After></R>"]
    );
    let log = run(esql, &flow(true));
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(
        log[0].starts_with("failed:") && log[0].contains("no such table"),
        "{}",
        log[0]
    );
}
