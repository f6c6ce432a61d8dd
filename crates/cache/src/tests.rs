use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use sluice_esql_scalar::{DataType, Value, cast};

use super::*;

/// A folder of this test's own, removed when dropped.
struct Folder(PathBuf);

impl Folder {
    fn new(tag: &str) -> Folder {
        let p = std::env::temp_dir().join(format!("sluice-cache-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("temp folder");
        Folder(p)
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn text(s: &str) -> Value {
    Value::from_text(s)
}

#[test]
fn put_adds_a_key_and_refuses_one_already_there() {
    let c = GlobalCache::in_memory();
    let m = c.map("RATES");
    m.put("EUR", text("1.08"), None).expect("put");
    assert_eq!(m.get("EUR"), Some(text("1.08")));
    assert!(matches!(
        m.put("EUR", text("1.09"), None),
        Err(CacheError::KeyExists { .. })
    ));
    assert_eq!(m.get("EUR"), Some(text("1.08")));
}

#[test]
fn update_replaces_a_key_and_refuses_a_missing_one() {
    let m = GlobalCache::in_memory().map("M");
    assert!(matches!(
        m.update("k", Value::Integer(1), None),
        Err(CacheError::KeyAbsent { .. })
    ));
    m.put("k", Value::Integer(1), None).expect("put");
    m.update("k", Value::Integer(2), None).expect("update");
    assert_eq!(m.get("k"), Some(Value::Integer(2)));
}

#[test]
fn remove_gives_the_value_and_clear_counts_the_keys() {
    let m = GlobalCache::in_memory().map("M");
    for i in 0..10 {
        m.put(&i.to_string(), Value::Integer(i), None).expect("put");
    }
    assert_eq!(m.remove("3"), Some(Value::Integer(3)));
    assert_eq!(m.remove("3"), None);
    assert!(!m.contains("3") && m.contains("4"));
    assert_eq!(m.len(), 9);
    assert_eq!(m.clear(), 9);
    assert!(m.is_empty());
}

#[test]
fn put_refuses_null_and_interval_values() {
    let m = GlobalCache::in_memory().map("M");
    assert!(matches!(
        m.put("k", Value::Null, None),
        Err(CacheError::NullValue { .. })
    ));
    let i = cast(&text("1"), DataType::Interval(None));
    if let Ok(v @ Value::Interval(_)) = i {
        assert!(matches!(
            m.put("k", v, None),
            Err(CacheError::Unsupported { .. })
        ));
    }
    assert!(!m.contains("k"));
}

#[test]
fn entries_expire_after_the_maps_time_to_live() {
    let mut declared = BTreeMap::new();
    declared.insert(
        "SHORT".to_string(),
        MapSettings {
            persistent: false,
            ttl: Some(Duration::from_secs(10)),
        },
    );
    let c = GlobalCache::open(None, declared).expect("open");
    let m = c.map("SHORT");
    m.put_at("k", text("v"), None, 1_000).expect("put");
    assert_eq!(m.get_at("k", 10_999), Some(text("v")));
    assert_eq!(m.get_at("k", 11_000), None, "expired");
    // An expired key is free to be put again.
    m.put_at("k", text("w"), None, 11_000).expect("put again");
    // A time-to-live given with the put overrides the map's.
    m.put_at("j", text("v"), Some(Duration::from_secs(1)), 11_000)
        .expect("put");
    assert_eq!(m.get_at("j", 12_000), None);
    assert_eq!(m.get_at("k", 12_000), Some(text("w")));
    // An update starts the time-to-live again.
    m.update_at("k", text("x"), None, 20_000).expect("update");
    assert_eq!(m.get_at("k", 29_999), Some(text("x")));
}

#[test]
fn maps_are_shared_by_name_and_made_when_first_named() {
    let c = GlobalCache::in_memory();
    c.map("A").put("k", Value::Integer(1), None).expect("put");
    assert_eq!(c.map("A").get("k"), Some(Value::Integer(1)));
    assert_eq!(c.map("B").get("k"), None);
}

#[test]
fn threads_putting_different_keys_all_succeed() {
    let c = Arc::new(GlobalCache::in_memory());
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let c = Arc::clone(&c);
            std::thread::spawn(move || {
                let m = c.map("M");
                for i in 0..500 {
                    m.put(&format!("{t}-{i}"), Value::Integer(i), None)
                        .expect("put");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("thread");
    }
    assert_eq!(c.map("M").len(), 2000);
}

fn persistent(name: &str) -> BTreeMap<String, MapSettings> {
    let mut d = BTreeMap::new();
    d.insert(
        name.to_string(),
        MapSettings {
            persistent: true,
            ttl: None,
        },
    );
    d
}

#[test]
fn a_persistent_map_is_read_back_with_every_type_and_others_are_not_written() {
    let dir = Folder::new("types");
    let values = vec![
        ("bool", Value::Boolean(true)),
        ("int", Value::Integer(-42)),
        ("float", Value::Float(0.1)),
        (
            "dec",
            cast(&text("12.3400"), DataType::Decimal(None)).expect("dec"),
        ),
        ("char", text("line\nbreak and spaces")),
        ("blob", Value::from_bytes(vec![0u8, 255, 10])),
        ("bit", cast(&text("0101"), DataType::Bit).expect("bit")),
        (
            "date",
            cast(&text("2026-11-28"), DataType::Date).expect("date"),
        ),
        (
            "time",
            cast(&text("10:11:12.345"), DataType::Time).expect("time"),
        ),
        (
            "ts",
            cast(&text("2026-11-28 10:11:12.345678"), DataType::Timestamp).expect("ts"),
        ),
        (
            "gmt",
            cast(&text("2026-11-28 10:11:12"), DataType::GmtTimestamp).expect("gmt"),
        ),
        ("key with spaces\n", text("v")),
    ];
    {
        let c = GlobalCache::open(Some(&dir.0), persistent("KEEP")).expect("open");
        for (k, v) in &values {
            c.map("KEEP").put(k, v.clone(), None).expect("put");
        }
        c.map("GONE").put("k", text("v"), None).expect("put");
        c.flush().expect("flush");
    }
    let c = GlobalCache::open(Some(&dir.0), persistent("KEEP")).expect("reopen");
    for (k, v) in &values {
        assert_eq!(c.map("KEEP").get(k).as_ref(), Some(v), "{k}");
    }
    assert_eq!(c.map("GONE").get("k"), None, "not declared persistent");
    assert!(!dir.0.join("cache/GONE.map").exists());
}

#[test]
fn flush_writes_only_changed_maps_and_a_removed_key_stays_removed() {
    let dir = Folder::new("flush");
    let c = GlobalCache::open(Some(&dir.0), persistent("P")).expect("open");
    let file = dir.0.join("cache/P.map");
    c.flush().expect("flush");
    assert!(!file.exists(), "nothing changed, nothing written");
    c.map("P").put("a", text("1"), None).expect("put");
    c.map("P").put("b", text("2"), None).expect("put");
    c.flush().expect("flush");
    c.map("P").remove("a");
    c.flush().expect("flush");
    let again = GlobalCache::open(Some(&dir.0), persistent("P")).expect("reopen");
    assert_eq!(again.map("P").get("a"), None);
    assert_eq!(again.map("P").get("b"), Some(text("2")));
}

#[test]
fn a_damaged_file_is_an_error_naming_its_line() {
    let dir = Folder::new("bad");
    std::fs::create_dir_all(dir.0.join("cache")).expect("mkdir");
    std::fs::write(
        dir.0.join("cache/P.map"),
        "sluice-cache 1\n61 - INTEGER zz\n",
    )
    .expect("write");
    match GlobalCache::open(Some(&dir.0), persistent("P")) {
        Err(CacheError::Corrupt { line, .. }) => assert_eq!(line, 2),
        Err(e) => panic!("wrong error {e}"),
        Ok(_) => panic!("a damaged file was read"),
    }
}

#[test]
fn a_persistent_map_name_must_be_a_file_name() {
    assert!(matches!(
        GlobalCache::open(None, persistent("../etc")),
        Err(CacheError::BadName(_))
    ));
}
