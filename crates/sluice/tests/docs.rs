//! docs/nodes.md is generated from the node registry; this fails when it is stale.
//! Regenerate with `SLUICE_BLESS=1 cargo test -p sluice --test docs`.

use std::process::Command;

const START: &str = "<!-- generated -->";
const END: &str = "<!-- end generated -->";

#[test]
fn nodes_doc_matches_the_registry() {
    let out = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .arg("nodes")
        .output()
        .expect("run sluice nodes");
    assert!(out.status.success());
    let generated = String::from_utf8(out.stdout).expect("utf-8");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/nodes.md");
    let doc = std::fs::read_to_string(&path).expect("docs/nodes.md exists");
    let (Some(a), Some(b)) = (doc.find(START), doc.find(END)) else {
        panic!("docs/nodes.md lacks the {START} … {END} markers");
    };
    let current = doc[a + START.len()..b].trim();
    if current != generated.trim() {
        if std::env::var_os("SLUICE_BLESS").is_some() {
            let fresh = format!(
                "{}{START}\n{}\n{END}{}",
                &doc[..a],
                generated.trim(),
                &doc[b + END.len()..]
            );
            std::fs::write(&path, fresh).expect("write docs/nodes.md");
        } else {
            panic!("docs/nodes.md is stale: run `SLUICE_BLESS=1 cargo test -p sluice --test docs`");
        }
    }
}

/// A merge that left its conflict markers in a page would otherwise ship them.
#[test]
fn docs_hold_no_merge_conflict_markers() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut pages = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs")).expect("docs/") {
        pages.push(e.expect("entry").path());
    }
    for p in pages
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
    {
        let text = std::fs::read_to_string(p).expect("readable page");
        for (i, line) in text.lines().enumerate() {
            let marker =
                ["<<<<<<< ", ">>>>>>> "].iter().any(|m| line.starts_with(m)) || line == "=======";
            assert!(!marker, "{}:{}: merge conflict marker", p.display(), i + 1);
        }
    }
}
