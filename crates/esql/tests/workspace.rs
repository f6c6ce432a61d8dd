//! `sluice esql check` over an ACE workspace: each application and library is its own
//! namespace, and an application sees the libraries its `.project` references.

use std::path::Path;

use sluice_esql::runtime::check_paths;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    std::fs::write(path, text).expect("write");
}

fn project(dir: &Path, name: &str, descriptor: &str, references: &[&str]) {
    let refs: String = references
        .iter()
        .map(|r| format!("<project>{r}</project>"))
        .collect();
    write(
        &dir.join(".project"),
        &format!(
            "<?xml version=\"1.0\"?>\n<projectDescription>\n <name>{name}</name>\n <projects>{refs}</projects>\n</projectDescription>\n"
        ),
    );
    write(&dir.join(descriptor), "<descriptor/>");
}

const MODULE: &str = "BROKER SCHEMA orders\nPATH common;\nCREATE COMPUTE MODULE Transform\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  SET OutputRoot.XMLNSC.R = Twice(2);\n  RETURN TRUE;\n END;\nEND MODULE;\n";

#[test]
fn applications_are_namespaces_and_see_the_libraries_they_reference() {
    let ws = std::env::temp_dir().join(format!("esql-workspace-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&ws);
    project(
        &ws.join("CommonLib"),
        "CommonLib",
        "library.descriptor",
        &[],
    );
    write(
        &ws.join("CommonLib/common/twice.esql"),
        "BROKER SCHEMA common\nCREATE FUNCTION Twice(IN x INTEGER) RETURNS INTEGER BEGIN RETURN x * 2; END;\n",
    );
    // The same module in two applications that reference the library: no clash.
    for app in ["OrderApp", "OrderAppCopy"] {
        project(&ws.join(app), app, "application.descriptor", &["CommonLib"]);
        write(&ws.join(app).join("orders/transform.esql"), MODULE);
    }
    // An application that does not reference the library does not see it.
    project(&ws.join("Other"), "Other", "application.descriptor", &[]);
    write(&ws.join("Other/orders/transform.esql"), MODULE);
    // Within one application a second copy is still a clash.
    write(&ws.join("OrderApp/backup/transform.esql"), MODULE);

    let (out, ok) = check_paths(std::slice::from_ref(&ws));
    let _ = std::fs::remove_dir_all(&ws);
    assert!(!ok, "{out}");
    let line = |name: &str| {
        out.lines()
            .filter(|l| l.contains(name))
            .map(str::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        line("CommonLib/common/twice.esql").ends_with(": ok"),
        "{out}"
    );
    assert!(
        line("OrderAppCopy/orders/transform.esql").ends_with(": ok"),
        "{out}"
    );
    // Within OrderApp, the later file in name order carries the clash.
    assert!(
        out.contains(
            "OrderApp/orders/transform.esql:3:23: error: module `Transform` is defined twice"
        ),
        "{out}"
    );
    assert!(
        line("Other/orders/transform.esql").contains("Twice"),
        "the library is not visible to Other: {out}"
    );
    // The library's file is reported once, though three namespaces compile it.
    assert_eq!(
        out.matches("CommonLib/common/twice.esql").count(),
        1,
        "{out}"
    );
}
