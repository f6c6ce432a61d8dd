//! Links the system's libxml2 (found with pkg-config) and compiles the C shim that drives its
//! streaming schema validator: the SAX handler and error structures it fills are only described
//! by the C headers.

fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    let xml = match pkg_config::Config::new().probe("libxml-2.0") {
        Ok(l) => l,
        Err(e) => {
            println!(
                "cargo:warning=libxml2 not found through pkg-config ({e}); install libxml2-dev and pkg-config"
            );
            std::process::exit(1);
        }
    };
    let mut cc = cc::Build::new();
    cc.file("src/shim.c").warnings(true);
    for dir in &xml.include_paths {
        cc.include(dir);
    }
    cc.compile("sluice_xsd_shim");
}
