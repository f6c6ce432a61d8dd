//! Links the system's libxslt, libexslt and libxml2 (found with pkg-config) and compiles the small C shim
//! that reads the fields of libxslt's structures and turns its printf-style error callbacks into
//! text: both need the C headers, which Rust cannot read without bindgen (and libclang).

fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    // libexslt's package pulls in libxslt's and libxml2's: one probe links all three.
    let xslt = match pkg_config::Config::new().probe("libexslt") {
        Ok(l) => l,
        Err(e) => {
            println!(
                "cargo:warning=libexslt not found through pkg-config ({e}); install libxslt1-dev and pkg-config"
            );
            std::process::exit(1);
        }
    };
    let mut cc = cc::Build::new();
    cc.file("src/shim.c").warnings(true);
    for dir in &xslt.include_paths {
        cc.include(dir);
    }
    cc.compile("sluice_xslt_shim");
}
