//! The global cache functions (`CACHE_GET`, `CACHE_PUT` …): maps shared by every node that is
//! given the same cache, whichever program its module belongs to.

use std::sync::Arc;

use sluice_cache::GlobalCache;
use sluice_esql::runtime::{NoPropagation, Program, RunOptions};
use sluice_tree::{Message, Tree};

/// Runs module `name` of `src` with `cache`; the output tree as text, or the error's.
fn run(src: &str, name: &str, cache: Option<&Arc<GlobalCache>>) -> Result<String, String> {
    let program =
        Arc::new(Program::compile(&[("c.esql".into(), src.into())]).map_err(|e| format!("{e:?}"))?);
    let module = program.module(name).ok_or("no such module")?;
    let options = RunOptions {
        cache: cache.cloned(),
        ..RunOptions::default()
    };
    let mut msg = Message::new();
    let mut env = Tree::new("Environment");
    let outcome = module
        .run(&mut msg, &mut env, &mut NoPropagation, &options)
        .map_err(|e| e.to_string())?;
    let mut out = outcome.output.ok_or("no output")?;
    let root = out.root.root();
    out.root.expand_all(root).map_err(|e| e.to_string())?;
    Ok(format!("{:?}", out.root))
}

fn module(name: &str, body: &str) -> String {
    format!(
        "CREATE COMPUTE MODULE {name}\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n{body}\n  RETURN TRUE;\n END;\nEND MODULE;\n"
    )
}

/// The value of output field `name` as the tree prints it (`Integer(3)`).
fn field(text: &str, name: &str) -> String {
    text.lines()
        .find(|l| l.trim_start().starts_with(name))
        .and_then(|l| l.split(" = ").nth(1))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn cache_put_and_get_share_values_between_programs_using_the_same_cache() {
    let cache = Arc::new(GlobalCache::in_memory());
    let writer = module(
        "Writer",
        "  SET OutputRoot.XMLNSC.R.Put = CACHE_PUT('RATES', 'EUR', 1.08);\n\
         SET OutputRoot.XMLNSC.R.Size = CACHE_SIZE('RATES');",
    );
    let out = run(&writer, "Writer", Some(&cache)).expect("writer runs");
    assert_eq!(field(&out, "Put"), "Boolean(true)", "{out}");
    assert_eq!(field(&out, "Size"), "Integer(1)", "{out}");
    // Another program (another flow's ESQL) reads it through the same cache.
    let reader = module(
        "Reader",
        "  SET OutputRoot.XMLNSC.R.Rate = CACHE_GET('RATES', 'EUR');\n\
         SET OutputRoot.XMLNSC.R.Missing = COALESCE(CACHE_GET('RATES', 'GBP'), 'none');\n\
         SET OutputRoot.XMLNSC.R.Has = CACHE_CONTAINS('RATES', 'EUR');",
    );
    let out = run(&reader, "Reader", Some(&cache)).expect("reader runs");
    assert!(field(&out, "Rate").contains("1.08"), "{out}");
    assert!(field(&out, "Missing").contains("none"), "{out}");
    assert_eq!(field(&out, "Has"), "Boolean(true)", "{out}");
}

#[test]
fn cache_put_of_an_existing_key_raises_an_exception_a_handler_catches() {
    let cache = Arc::new(GlobalCache::in_memory());
    let src = module(
        "M",
        "  DECLARE caught CHARACTER 'no';\n\
         BEGIN\n\
           DECLARE CONTINUE HANDLER FOR SQLSTATE LIKE '%' BEGIN SET caught = 'yes'; END;\n\
           SET OutputRoot.XMLNSC.R.First = CACHE_PUT('M', 1, 'one');\n\
           SET OutputRoot.XMLNSC.R.Second = CACHE_PUT('M', '1', 'uno');\n\
         END;\n\
         SET OutputRoot.XMLNSC.R.Caught = caught;\n\
         SET OutputRoot.XMLNSC.R.Value = CACHE_GET('M', 1);",
    );
    let out = run(&src, "M", Some(&cache)).expect("runs");
    assert!(field(&out, "Caught").contains("yes"), "{out}");
    assert!(
        field(&out, "Value").contains("one"),
        "keys compare as CHARACTER: {out}"
    );
}

#[test]
fn cache_update_remove_and_clear_change_the_map() {
    let cache = Arc::new(GlobalCache::in_memory());
    let src = module(
        "M",
        "  SET OutputRoot.XMLNSC.R.A = CACHE_PUT('M', 'a', 1);\n\
         SET OutputRoot.XMLNSC.R.B = CACHE_PUT('M', 'b', 2, 60);\n\
         SET OutputRoot.XMLNSC.R.U = CACHE_UPDATE('M', 'a', 10);\n\
         SET OutputRoot.XMLNSC.R.Removed = CACHE_REMOVE('M', 'a');\n\
         SET OutputRoot.XMLNSC.R.Again = COALESCE(CACHE_REMOVE('M', 'a'), -1);\n\
         SET OutputRoot.XMLNSC.R.Cleared = CACHE_CLEAR('M');\n\
         SET OutputRoot.XMLNSC.R.Left = CACHE_SIZE('M');",
    );
    let out = run(&src, "M", Some(&cache)).expect("runs");
    assert_eq!(field(&out, "Removed"), "Integer(10)", "{out}");
    assert_eq!(field(&out, "Again"), "Integer(-1)", "{out}");
    assert_eq!(field(&out, "Cleared"), "Integer(1)", "{out}");
    assert_eq!(field(&out, "Left"), "Integer(0)", "{out}");
}

#[test]
fn cache_update_of_a_missing_key_and_a_null_value_fail() {
    let cache = Arc::new(GlobalCache::in_memory());
    let missing = module(
        "M",
        "  SET OutputRoot.XMLNSC.R.U = CACHE_UPDATE('M', 'x', 1);",
    );
    let e = run(&missing, "M", Some(&cache)).expect_err("update of a missing key");
    assert!(e.contains("has no key 'x'"), "{e}");
    let null = module(
        "N",
        "  SET OutputRoot.XMLNSC.R.U = CACHE_PUT('M', 'x', NULL);",
    );
    let e = run(&null, "N", Some(&cache)).expect_err("a NULL value");
    assert!(e.contains("NULL"), "{e}");
    let ttl = module(
        "T",
        "  SET OutputRoot.XMLNSC.R.U = CACHE_PUT('M', 'x', 1, 0);",
    );
    let e = run(&ttl, "T", Some(&cache)).expect_err("a zero time-to-live");
    assert!(e.contains("time-to-live"), "{e}");
}

#[test]
fn cache_functions_fail_where_the_host_gives_no_cache() {
    let src = module("M", "  SET OutputRoot.XMLNSC.R.V = CACHE_GET('M', 'k');");
    let e = run(&src, "M", None).expect_err("no cache");
    assert!(e.contains("no global cache"), "{e}");
}

#[test]
fn cache_function_with_the_wrong_number_of_arguments_does_not_compile() {
    let src = module("M", "  SET OutputRoot.XMLNSC.R.V = CACHE_GET('M');");
    let e = run(&src, "M", None).expect_err("does not compile");
    assert!(e.contains("CACHE_GET takes 2 arguments"), "{e}");
}
