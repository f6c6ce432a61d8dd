//! Short form of the fuzz target `fuzz/fuzz_targets/openapi_load.rs`: its body over the seed
//! corpus in `fuzz/corpus/openapi_load`, over mutants of the seeds and over generated text.

#[allow(dead_code)]
#[path = "../../../fuzz/bodies/openapi_load.rs"]
mod openapi_load;
#[allow(dead_code)]
#[path = "../../../fuzz/bodies/short_form.rs"]
mod short_form;

use proptest::prelude::*;

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../fuzz/corpus/openapi_load"
);

#[test]
fn openapi_load_never_panics_on_seeds_and_mutants() {
    let seeds = short_form::run_seeds(CORPUS, openapi_load::run);
    short_form::run_mutants(&seeds, 2000, openapi_load::run);
}

proptest! {
    #[test]
    fn openapi_load_never_panics_when_text_generated(data in "[a-z{}:\\[\\], \n'\"/$#0-9-]{0,200}") {
        openapi_load::run(data.as_bytes());
    }
}
