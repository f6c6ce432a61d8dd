//! The suites shipped with the crate parse, and every seed reference in
//! them finds its row for every size it lists.

use std::path::Path;

use sluice_bench::seeds::lookup;
use sluice_bench::suite::Suite;

const SUITES: [(&str, &str); 2] = [
    ("floor.yaml", include_str!("../suites/floor.yaml")),
    ("samples.yaml", include_str!("../suites/samples.yaml")),
];

#[test]
fn bundled_suites_parse_and_their_seed_rows_exist() {
    for (name, text) in SUITES {
        let suite = Suite::parse(text, Path::new(name)).expect("suite parses");
        for case in suite.cases(None) {
            if let Some(seed) = &case.seed {
                let found = lookup(
                    seed,
                    case.size.bytes(),
                    case.persistence.is_persistent(),
                    case.instances,
                )
                .expect("valid seed reference");
                assert!(
                    found.is_some(),
                    "{name}: no seed row for {} {}",
                    case.name,
                    case.size
                );
            }
        }
    }
}
