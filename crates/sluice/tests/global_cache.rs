//! The global cache through the samples (flows/cache-rates.yaml and cache-convert.yaml): one
//! flow puts a rate, another reads it, and the persistent map RATES survives a restart.

mod common;

use common::tempdir::TempDir;
use common::{Server, samples_dir};

#[test]
fn a_rate_one_flow_puts_is_read_by_another_and_survives_a_restart() {
    let data = TempDir::new("cache-data");
    let mut s = Server::start_with_data(&samples_dir(), data.path());
    let convert = b"<Convert><Currency>EUR</Currency><Amount>10</Amount></Convert>";
    let r = s.post("/samples/cache/convert", convert);
    assert_eq!(r.status, 404, "{}", r.text());
    let r = s.post(
        "/samples/cache/rates",
        b"<Rate><Currency>EUR</Currency><Value>1.5</Value></Rate>",
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains(r#"status="added""#), "{}", r.text());
    let r = s.post(
        "/samples/cache/rates",
        b"<Rate><Currency>EUR</Currency><Value>1.25</Value></Rate>",
    );
    assert!(r.text().contains(r#"status="updated""#), "{}", r.text());
    assert!(r.text().contains("<Known>1</Known>"), "{}", r.text());
    let r = s.post("/samples/cache/convert", convert);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains("<Amount>12.50</Amount>"), "{}", r.text());
    assert_eq!(s.terminate().code(), Some(0));
    assert!(data.path().join("cache/RATES.map").exists());

    let s = Server::start_with_data(&samples_dir(), data.path());
    let r = s.post("/samples/cache/convert", convert);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains("<Amount>12.50</Amount>"), "{}", r.text());
}
