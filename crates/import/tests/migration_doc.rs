//! docs/migration.md's node and property tables are generated from the import's own tables;
//! this fails when they drift. `BLESS=1 cargo test -p sluice-import --test migration_doc`
//! rewrites them.

const START: &str = "<!-- generated -->";
const END: &str = "<!-- end generated -->";

#[test]
fn migration_doc_matches_the_import_tables() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/migration.md");
    let doc = std::fs::read_to_string(&path).expect("docs/migration.md exists");
    let (Some(a), Some(b)) = (doc.find(START), doc.find(END)) else {
        panic!("docs/migration.md lacks the {START} … {END} markers");
    };
    let generated = sluice_import::migration_doc();
    if doc[a + START.len()..b].trim() != generated.trim() {
        if std::env::var_os("BLESS").is_some() {
            let fresh = format!(
                "{}{START}\n\n{}\n{END}{}",
                &doc[..a],
                generated.trim(),
                &doc[b + END.len()..]
            );
            std::fs::write(&path, fresh).expect("write docs/migration.md");
        } else {
            panic!("docs/migration.md is stale: run with BLESS=1");
        }
    }
}
