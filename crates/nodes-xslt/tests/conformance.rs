//! Conformance: every stylesheet in `tests/conformance/` applied to its input gives, byte for
//! byte, what xsltproc gives (Debian's, the reference for libxslt's behaviour). A case is
//! `NAME.xsl` with `NAME.xml`, and optionally `NAME.params` (`name=value` lines, passed as
//! string parameters, xsltproc's `--stringparam`).

use std::path::{Path, PathBuf};
use std::process::Command;

use sluice_flow_testing::require_tool;
use sluice_nodes_xslt::Stylesheet;

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the conformance folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "xsl"))
        .collect();
    out.sort();
    out
}

fn params(case: &Path) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(case.with_extension("params")) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn xsltproc(tool: &Path, case: &Path, params: &[(String, String)]) -> Vec<u8> {
    let mut cmd = Command::new(tool);
    for (k, v) in params {
        cmd.args(["--stringparam", k, v]);
    }
    let out = cmd
        .arg(case)
        .arg(case.with_extension("xml"))
        .output()
        .expect("run xsltproc");
    assert!(
        out.status.success(),
        "xsltproc failed on {}: {}",
        case.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn conformance_output_equals_xsltproc_for_every_case() {
    let Some(tool) = require_tool("xsltproc", &["xsltproc"]) else {
        return;
    };
    let cases = cases();
    assert!(cases.len() >= 20, "only {} conformance cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let params = params(case);
        let expected = xsltproc(&tool, case, &params);
        let source = std::fs::read(case).expect("read the stylesheet");
        let input = std::fs::read(case.with_extension("xml")).expect("read the input");
        let got = Stylesheet::compile(&source, case)
            .and_then(|s| s.transform(&input, &params))
            .map_err(|e| e.to_string());
        match got {
            Ok(got) if got == expected => {}
            Ok(got) => failures.push(format!(
                "{}: expected\n{}\ngot\n{}",
                case.display(),
                String::from_utf8_lossy(&expected),
                String::from_utf8_lossy(&got)
            )),
            Err(e) => failures.push(format!("{}: {e}", case.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn conformance_cases_cover_the_constructs_the_brief_names() {
    let names: Vec<String> = cases()
        .iter()
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    for construct in [
        "templates",
        "modes",
        "keys",
        "sort",
        "number",
        "variables-params",
        "include",
        "import",
        "document-self",
        "text-output",
        "html-output",
        "namespaces",
        "strip-space",
    ] {
        assert!(
            names.iter().any(|n| n.contains(construct)),
            "no conformance case for {construct}"
        );
    }
}
