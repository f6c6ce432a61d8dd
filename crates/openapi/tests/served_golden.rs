//! Golden files: the samples' orders document as `/orders/openapi.json` and `.yaml` serve it
//! to a client that reached the server as `localhost:7800`. Re-bless with `SLUICE_BLESS=1`.

use std::path::Path;

fn check(name: &str, got: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("SLUICE_BLESS").is_some() {
        std::fs::write(&path, got).expect("write the golden file");
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (bless with SLUICE_BLESS=1)", path.display()));
    assert_eq!(got, want, "{name} differs (bless with SLUICE_BLESS=1)");
}

#[test]
fn orders_document_is_served_as_the_golden_files_say() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/apis/orders.yaml");
    let api = sluice_openapi::load_file("orders.yaml", &file).expect("the sample loads");
    check(
        "orders.openapi.json",
        &sluice_openapi::render_json(&api, "http://localhost:7800"),
    );
    check(
        "orders.openapi.yaml",
        &sluice_openapi::render_yaml(&api, "http://localhost:7800"),
    );
}
