use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use super::*;

const ORDER: &str = r#"<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:include schemaLocation="types/common.xsd"/>
  <xs:element name="Order">
    <xs:complexType>
      <xs:sequence>
        <xs:element name="Id" type="xs:int"/>
        <xs:element name="Item" maxOccurs="unbounded">
          <xs:complexType>
            <xs:sequence>
              <xs:element name="Code" type="Code"/>
              <xs:element name="Quantity" type="xs:positiveInteger"/>
            </xs:sequence>
          </xs:complexType>
        </xs:element>
      </xs:sequence>
    </xs:complexType>
  </xs:element>
</xs:schema>
"#;

const COMMON: &str = r#"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:simpleType name="Code">
    <xs:restriction base="xs:string"><xs:pattern value="[A-Z]{2}[0-9]{2}"/></xs:restriction>
  </xs:simpleType>
</xs:schema>
"#;

/// A fresh project folder with `files` written into it.
fn project(files: &[(&str, &str)]) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "sluice-xsd-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn order_set() -> SchemaSet {
    let dir = project(&[
        ("models/order.xsd", ORDER),
        ("models/types/common.xsd", COMMON),
    ]);
    SchemaSet::load(&dir, "models/order.xsd").unwrap()
}

#[test]
fn validate_accepts_document_when_it_matches_the_schema() {
    let set = order_set();
    assert_eq!(set.files().len(), 2);
    let doc = b"<Order><Id>7</Id><Item><Code>AB12</Code><Quantity>2</Quantity></Item></Order>";
    assert_eq!(validate(&set, doc), Ok(()));
}

#[test]
fn validate_reports_line_column_and_path_when_a_value_is_wrong() {
    let set = order_set();
    let doc =
        b"<Order>\n<Id>7</Id>\n<Item><Code>ab12</Code><Quantity>2</Quantity></Item>\n</Order>";
    let errors = set.validate(doc).unwrap_err();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert_eq!(e.kind, ViolationKind::Invalid);
    assert_eq!(e.line, 3);
    assert!(e.column > 0);
    assert_eq!(e.path, "/Order/Item/Code");
    assert!(e.message.contains("Code"), "{}", e.message);
}

#[test]
fn validate_reports_every_violation_when_there_are_several() {
    let set = order_set();
    let doc = b"<Order><Id>x</Id><Item><Code>AB12</Code><Quantity>0</Quantity></Item></Order>";
    let errors = set.validate(doc).unwrap_err();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(errors[0].path, "/Order/Id");
    assert_eq!(errors[1].path, "/Order/Item/Quantity");
}

#[test]
fn validate_names_the_parent_when_content_is_missing() {
    let set = order_set();
    let doc = b"<Order><Id>1</Id></Order>";
    let errors = set.validate(doc).unwrap_err();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].path, "/Order");
    assert!(errors[0].message.contains("Item"), "{}", errors[0].message);
}

#[test]
fn validate_reports_unexpected_element_with_its_path() {
    let set = order_set();
    let doc = b"<Order><Id>1</Id><Bogus/></Order>";
    let errors = set.validate(doc).unwrap_err();
    assert_eq!(errors[0].path, "/Order/Bogus", "{errors:?}");
}

#[test]
fn validate_reports_not_well_formed_when_tags_mismatch() {
    let set = order_set();
    let errors = set.validate(b"<Order><Id>1</Id>\n</Ordre>").unwrap_err();
    assert_eq!(errors[0].kind, ViolationKind::NotWellFormed, "{errors:?}");
    assert_eq!(errors[0].line, 2);
}

#[test]
fn validate_reports_empty_document() {
    let set = order_set();
    let errors = set.validate(b"").unwrap_err();
    assert_eq!(errors[0].kind, ViolationKind::NotWellFormed, "{errors:?}");
}

#[test]
fn validate_keeps_working_when_threads_share_the_schema() {
    let set = Arc::new(order_set());
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let set = Arc::clone(&set);
            std::thread::spawn(move || {
                for n in 0..200 {
                    let good = format!(
                        "<Order><Id>{n}</Id><Item><Code>AB{i}{}</Code><Quantity>3</Quantity></Item></Order>",
                        n % 10
                    );
                    assert_eq!(set.validate(good.as_bytes()), Ok(()));
                    let bad = good.replace("AB", "ab");
                    assert_eq!(set.validate(bad.as_bytes()).unwrap_err().len(), 1);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn load_fails_with_file_and_line_when_the_schema_is_invalid() {
    let bad = "<xs:schema xmlns:xs=\"http://www.w3.org/2001/XMLSchema\">\n\n  <xs:element name=\"A\" type=\"Nope\"/>\n</xs:schema>\n";
    let dir = project(&[("models/bad.xsd", bad)]);
    let err = SchemaSet::load(&dir, "models/bad.xsd").unwrap_err();
    let XsdError::Compile {
        file,
        line,
        message,
    } = &err
    else {
        panic!("{err}");
    };
    assert!(file.ends_with("models/bad.xsd"), "{file}");
    assert_eq!(*line, 3);
    assert!(message.contains("Nope"), "{message}");
}

#[test]
fn load_fails_with_file_and_line_when_an_included_schema_is_not_xml() {
    let dir = project(&[
        ("models/order.xsd", ORDER),
        (
            "models/types/common.xsd",
            "<xs:schema xmlns:xs=\"http://www.w3.org/2001/XMLSchema\">\n<oops></xs:schema>",
        ),
    ]);
    let err = SchemaSet::load(&dir, "models/order.xsd").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("common.xsd:2"), "{text}");
}

#[test]
fn load_refuses_location_when_it_leaves_the_project() {
    let outside = ORDER.replace("types/common.xsd", "../../common.xsd");
    let dir = project(&[("models/order.xsd", &outside), ("common.xsd", COMMON)]);
    let err = SchemaSet::load(&dir.join("models"), "order.xsd").unwrap_err();
    assert!(matches!(err, XsdError::Location { line: 3, .. }), "{err}");
    let url = ORDER.replace("types/common.xsd", "http://example.com/common.xsd");
    let dir = project(&[("models/order.xsd", &url)]);
    let err = SchemaSet::load(&dir, "models/order.xsd").unwrap_err();
    assert!(
        err.to_string().contains("only files of the project"),
        "{err}"
    );
}

#[test]
fn load_reports_missing_include_with_its_line() {
    let dir = project(&[("models/order.xsd", ORDER)]);
    let err = SchemaSet::load(&dir, "models/order.xsd").unwrap_err();
    assert!(err.to_string().contains("order.xsd:3"), "{err}");
    assert!(err.to_string().contains("no such file"), "{err}");
}

#[test]
fn load_resolves_import_of_another_namespace() {
    let main = r#"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:c="urn:c" targetNamespace="urn:m" xmlns="urn:m" elementFormDefault="qualified">
  <xs:import namespace="urn:c" schemaLocation="c.xsd"/>
  <xs:element name="M"><xs:complexType><xs:sequence><xs:element ref="c:C"/></xs:sequence></xs:complexType></xs:element>
</xs:schema>"#;
    let c = r#"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:c">
  <xs:element name="C" type="xs:date"/>
</xs:schema>"#;
    let dir = project(&[("models/m.xsd", main), ("models/c.xsd", c)]);
    let set = SchemaSet::load(&dir, "models/m.xsd").unwrap();
    let ok = br#"<m:M xmlns:m="urn:m" xmlns:c="urn:c"><c:C>2026-11-28</c:C></m:M>"#;
    assert_eq!(set.validate(ok), Ok(()));
    let bad = br#"<m:M xmlns:m="urn:m" xmlns:c="urn:c"><c:C>28.11.2026</c:C></m:M>"#;
    let errors = set.validate(bad).unwrap_err();
    assert_eq!(errors[0].path, "/m:M/c:C");
}

/// Two schemas as a WSDL's types hold them: `urn:a` uses a type of `urn:b` through an import
/// without a location, and includes a file beside the WSDL.
fn wsdl_parts(dir: &std::path::Path) -> Vec<SchemaPart> {
    let a = r#"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:b="urn:b"
        xmlns="urn:a" targetNamespace="urn:a" elementFormDefault="qualified">
  <xs:import namespace="urn:b"/>
  <xs:include schemaLocation="types/a-common.xsd"/>
  <xs:element name="Req"><xs:complexType><xs:sequence>
    <xs:element name="Code" type="Code"/>
    <xs:element name="Qty" type="b:Qty"/>
  </xs:sequence></xs:complexType></xs:element>
</xs:schema>"#;
    let b = r#"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:b">
  <xs:simpleType name="Qty"><xs:restriction base="xs:int"><xs:maxInclusive value="9"/></xs:restriction></xs:simpleType>
</xs:schema>"#;
    let wsdl = dir.join("services/s.wsdl");
    vec![
        SchemaPart {
            namespace: "urn:a".into(),
            path: wsdl.clone(),
            text: Some(a.into()),
        },
        SchemaPart {
            namespace: "urn:b".into(),
            path: wsdl,
            text: Some(b.into()),
        },
    ]
}

const A_COMMON: &str = r#"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:a">
  <xs:simpleType name="Code"><xs:restriction base="xs:string"><xs:length value="2"/></xs:restriction></xs:simpleType>
</xs:schema>"#;

#[test]
fn from_parts_validates_across_schemas_held_in_memory_when_they_import_each_other() {
    let dir = project(&[
        ("services/s.wsdl", "<definitions/>"),
        ("services/types/a-common.xsd", A_COMMON),
    ]);
    let set = SchemaSet::from_parts(&dir, &wsdl_parts(&dir)).unwrap();
    assert_eq!(set.files().len(), 1, "{:?}", set.files());
    assert!(set.files()[0].ends_with("services/types/a-common.xsd"));
    set.validate(br#"<Req xmlns="urn:a"><Code>AB</Code><Qty>3</Qty></Req>"#)
        .unwrap();
    let bad = set
        .validate(br#"<Req xmlns="urn:a"><Code>ABC</Code><Qty>30</Qty></Req>"#)
        .unwrap_err();
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert_eq!(bad[0].path, "/Req/Code");
    assert_eq!(bad[1].path, "/Req/Qty");
}

#[test]
fn from_parts_includes_parts_of_one_namespace_into_one_schema() {
    let dir = project(&[("services/s.wsdl", "<definitions/>")]);
    let wsdl = dir.join("services/s.wsdl");
    let part = |el: &str| SchemaPart {
        namespace: "urn:x".into(),
        path: wsdl.clone(),
        text: Some(format!(
            r#"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:x"><xs:element name="{el}" type="xs:int"/></xs:schema>"#
        )),
    };
    let set = SchemaSet::from_parts(&dir, &[part("One"), part("Two")]).unwrap();
    set.validate(br#"<One xmlns="urn:x">1</One>"#).unwrap();
    set.validate(br#"<Two xmlns="urn:x">2</Two>"#).unwrap();
    assert!(set.validate(br#"<Two xmlns="urn:x">two</Two>"#).is_err());
}

#[test]
fn from_parts_names_the_file_a_broken_part_came_from_with_its_line() {
    let dir = project(&[("services/s.wsdl", "<definitions/>")]);
    let part = SchemaPart {
        namespace: "urn:x".into(),
        path: dir.join("services/s.wsdl"),
        // Lines kept as in the file the part came from.
        text: Some(
            "\n\n<xs:schema xmlns:xs=\"http://www.w3.org/2001/XMLSchema\" targetNamespace=\"urn:x\">\n<xs:element name=\"E\" type=\"xs:nothing\"/></xs:schema>"
                .into(),
        ),
    };
    let err = SchemaSet::from_parts(&dir, &[part])
        .unwrap_err()
        .to_string();
    assert!(err.contains("services/s.wsdl:4:"), "{err}");
    assert!(!err.contains("schema-1.xsd"), "{err}");
}

#[test]
fn from_parts_refuses_a_location_outside_the_project() {
    let dir = project(&[("services/s.wsdl", "<definitions/>")]);
    let part = SchemaPart {
        namespace: "urn:x".into(),
        path: dir.join("services/s.wsdl"),
        text: Some(
            r#"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:x"><xs:include schemaLocation="../../etc/x.xsd"/></xs:schema>"#
                .into(),
        ),
    };
    let err = SchemaSet::from_parts(&dir, &[part])
        .unwrap_err()
        .to_string();
    assert!(err.contains("schemaLocation `../../etc/x.xsd`"), "{err}");
}
