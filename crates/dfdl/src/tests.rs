use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use proptest::prelude::*;
use sluice_tree::{NodeId, Tree, Value};

use super::*;

fn models() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/models")
}

fn parser(file: &str, root: &str) -> Arc<DfdlParser> {
    let schema = Schema::load(&models().join(file)).unwrap();
    Arc::new(DfdlParser::new(Arc::new(schema), root).unwrap())
}

fn inline(body: &str, root: &str) -> Result<Arc<DfdlParser>, DfdlError> {
    let text = format!(
        r#"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:dfdl="http://www.ogf.org/dfdl/dfdl-1.0/">
<xs:annotation><xs:appinfo source="http://www.ogf.org/dfdl/">
<dfdl:format encoding="UTF-8" lengthKind="delimited" initiator="" terminator="" separator=""/>
</xs:appinfo></xs:annotation>
{body}
</xs:schema>"#
    );
    let schema = Schema::from_text("inline.xsd", &text, Path::new("."))?;
    Ok(Arc::new(DfdlParser::new(Arc::new(schema), root)?))
}

/// `path=value` lines of every element under `id`.
fn dump(tree: &mut Tree, id: NodeId, prefix: &str, out: &mut Vec<String>) {
    for c in tree.children(id).unwrap() {
        let name = format!("{prefix}/{}", String::from_utf8_lossy(tree.name_bytes(c)));
        let v = match tree.value(c) {
            Value::Null if tree.peek_first_child(c).is_some() => None,
            Value::Null => Some("NULL".to_string()),
            Value::Character(t) => Some(format!("'{}'", tree.str(t))),
            Value::Decimal(t) => Some(format!("{}D", tree.str(t))),
            Value::Integer(i) => Some(i.to_string()),
            Value::Date(d) => Some(format!("DATE {d}")),
            other => Some(format!("{other:?}")),
        };
        if let Some(v) = v {
            out.push(format!("{name}={v}"));
        }
        dump(tree, c, &name, out);
    }
}

fn parse_dump(p: &Arc<DfdlParser>, data: &[u8]) -> Result<(Vec<String>, Vec<u8>), TreeError> {
    let (mut tree, id) = parse_to_tree(p, Bytes::copy_from_slice(data))?;
    let mut lines = Vec::new();
    dump(&mut tree, id, "", &mut lines);
    let mut out = Vec::new();
    p.serialize(&mut tree, id, &mut out)?;
    Ok((lines, out))
}

fn cwf_record(items: &[(&str, i32, &str)]) -> Vec<u8> {
    let mut d = Vec::new();
    d.extend_from_slice(b"A-1001    Acme Ltd                      20261127");
    d.extend_from_slice(&(items.len() as i16).to_be_bytes());
    for (sku, q, price) in items {
        d.extend_from_slice(format!("{sku:<8}").as_bytes());
        d.extend_from_slice(&q.to_be_bytes());
        d.extend_from_slice(price.as_bytes());
    }
    d.extend_from_slice(b"00000024.00");
    d
}

#[test]
fn cwf_record_parses_typed_and_writes_back_when_fixed() {
    let p = parser("cwf-order.xsd", "Order");
    let data = cwf_record(&[("SKU-1", 2, "000010.50"), ("SKU-2", -1, "000003.00")]);
    let (lines, out) = parse_dump(&p, &data).unwrap();
    assert_eq!(
        lines,
        [
            "/Order/OrderId='A-1001'",
            "/Order/Customer='Acme Ltd'",
            "/Order/OrderDate=DATE 20784",
            "/Order/ItemCount=2",
            "/Order/Item/Sku='SKU-1'",
            "/Order/Item/Quantity=2",
            "/Order/Item/Price=10.50D",
            "/Order/Item/Sku='SKU-2'",
            "/Order/Item/Quantity=-1",
            "/Order/Item/Price=3.00D",
            "/Order/Total=24.00D",
        ]
    );
    assert_eq!(out, data);
}

#[test]
fn cwf_record_is_rewritten_when_a_value_changes() {
    let p = parser("cwf-order.xsd", "Order");
    let data = cwf_record(&[("SKU-1", 2, "000010.50")]);
    let (mut tree, id) = parse_to_tree(&p, Bytes::from(data.clone())).unwrap();
    let order = tree.first_child(id).unwrap().unwrap();
    let total = tree.path(order, &["Total"]).unwrap().unwrap();
    let t = tree.alloc_text(b"99.5");
    tree.set_value(total, Value::Decimal(t));
    let mut out = Vec::new();
    p.serialize(&mut tree, id, &mut out).unwrap();
    assert_eq!(&out[out.len() - 11..], b"00000099.50");
    assert_eq!(out.len(), data.len());
}

#[test]
fn cwf_parse_fails_with_offset_and_component_when_short() {
    let p = parser("cwf-order.xsd", "Order");
    let mut data = cwf_record(&[("SKU-1", 2, "000010.50")]);
    data.truncate(60);
    let e = parse_dump(&p, &data).unwrap_err();
    let TreeError::Parse {
        offset, message, ..
    } = e
    else {
        panic!("{e:?}")
    };
    assert_eq!(offset, 58);
    assert!(
        message.contains("/Order/Item/Quantity") && message.contains("needs 4 bytes but 2 remain"),
        "{message}"
    );
}

const TDS: &str =
    "HDR|A-1001|Acme Ltd|2026-11-27\nITM|SKU-1|2|10.50|gift wrap\nITM|SKU-2|1|3.00\nTRL|2|24.00\n";

#[test]
fn tds_record_parses_and_writes_back_when_tagged() {
    let p = parser("tds-order.xsd", "Order");
    let (lines, out) = parse_dump(&p, TDS.as_bytes()).unwrap();
    assert_eq!(
        lines,
        [
            "/Order/Header/OrderId='A-1001'",
            "/Order/Header/Customer='Acme Ltd'",
            "/Order/Header/OrderDate=DATE 20784",
            "/Order/Item/Sku='SKU-1'",
            "/Order/Item/Quantity=2",
            "/Order/Item/Price=10.50D",
            "/Order/Item/Note='gift wrap'",
            "/Order/Item/Sku='SKU-2'",
            "/Order/Item/Quantity=1",
            "/Order/Item/Price=3.00D",
            "/Order/Trailer/ItemCount=2",
            "/Order/Trailer/Total=24.00D",
        ]
    );
    assert_eq!(String::from_utf8(out).unwrap(), TDS);
}

#[test]
fn tds_parse_fails_naming_the_field_when_not_a_number() {
    let p = parser("tds-order.xsd", "Order");
    let bad = TDS.replace("|2|10.50", "|two|10.50");
    let e = parse_dump(&p, bad.as_bytes()).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("/Order/Item/Quantity"), "{msg}");
    assert!(msg.contains("'two' is not a valid integer"), "{msg}");
}

#[test]
fn compile_fails_with_file_line_when_property_unknown() {
    let e = inline(
        "<xs:element name=\"A\" type=\"xs:string\"\n dfdl:lengthKnd=\"delimited\"/>",
        "A",
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(msg.starts_with("inline.xsd:5:"), "{msg}");
    assert!(msg.contains("dfdl:lengthKnd"), "{msg}");
}

#[test]
fn compile_fails_when_property_value_unsupported() {
    let e = inline(
        r#"<xs:element name="A" type="xs:string" dfdl:lengthKind="prefixed"/>"#,
        "A",
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("dfdl:lengthKind: 'prefixed' is not supported"),
        "{e}"
    );
    let e = inline(
        r#"<xs:element name="A" type="xs:string" dfdl:leadingSkip="4"/>"#,
        "A",
    )
    .unwrap_err();
    assert!(e.to_string().contains("dfdl:leadingSkip"), "{e}");
}

#[test]
fn compile_fails_when_assert_used() {
    let e = inline(
        r#"<xs:element name="A" type="xs:string"><xs:annotation><xs:appinfo source="http://www.ogf.org/dfdl/"><dfdl:assert>{ . eq 'x' }</dfdl:assert></xs:appinfo></xs:annotation></xs:element>"#,
        "A",
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("dfdl:assert is not supported"),
        "{e}"
    );
}

const CHOICE: &str = r#"<xs:element name="Msg">
  <xs:complexType>
    <xs:sequence dfdl:separator="%NL;" dfdl:separatorPosition="infix">
      <xs:element name="Rec" maxOccurs="unbounded">
        <xs:complexType>
          <xs:choice>
            <xs:element name="Person" dfdl:initiator="P:">
              <xs:complexType><xs:sequence dfdl:separator=",">
                <xs:element name="Name" type="xs:string"/>
                <xs:element name="Age" type="xs:int" nillable="true" dfdl:nilValue="-"/>
              </xs:sequence></xs:complexType>
            </xs:element>
            <xs:element name="Company" dfdl:initiator="C:">
              <xs:complexType><xs:sequence dfdl:separator=",">
                <xs:element name="Name" type="xs:string"/>
                <xs:element name="Listed" type="xs:boolean" dfdl:textBooleanTrueRep="Y" dfdl:textBooleanFalseRep="N"/>
              </xs:sequence></xs:complexType>
            </xs:element>
          </xs:choice>
        </xs:complexType>
      </xs:element>
    </xs:sequence>
  </xs:complexType>
</xs:element>"#;

#[test]
fn choice_picks_branch_by_initiator_when_records_mixed() {
    let p = inline(CHOICE, "Msg").unwrap();
    let data = b"P:Ann,42\nC:Acme,Y\nP:Bob,-";
    let (lines, out) = parse_dump(&p, data).unwrap();
    assert_eq!(
        lines,
        [
            "/Msg/Rec/Person/Name='Ann'",
            "/Msg/Rec/Person/Age=42",
            "/Msg/Rec/Company/Name='Acme'",
            "/Msg/Rec/Company/Listed=Boolean(true)",
            "/Msg/Rec/Person/Name='Bob'",
            "/Msg/Rec/Person/Age=NULL",
        ]
    );
    assert_eq!(out, data);
    let e = parse_dump(&p, b"X:what").unwrap_err();
    assert!(e.to_string().contains("choice"), "{e}");
}

#[test]
fn default_is_written_when_element_missing() {
    let p = inline(
        r#"<xs:element name="R"><xs:complexType><xs:sequence dfdl:separator=",">
             <xs:element name="A" type="xs:string"/>
             <xs:element name="B" type="xs:int" default="7"/>
           </xs:sequence></xs:complexType></xs:element>"#,
        "R",
    )
    .unwrap();
    let mut tree = Tree::new("Root");
    let root = tree.root();
    let dfdl = tree
        .create_last_child(
            root,
            field_type::NAME,
            Text::from_static("DFDL"),
            Value::Null,
        )
        .unwrap();
    let r = tree
        .create_last_child(dfdl, field_type::NAME, Text::from_static("R"), Value::Null)
        .unwrap();
    let t = tree.alloc_text(b"x");
    tree.create_last_child(
        r,
        field_type::NAME_VALUE,
        Text::from_static("A"),
        Value::Character(t),
    )
    .unwrap();
    let mut out = Vec::new();
    p.serialize(&mut tree, dfdl, &mut out).unwrap();
    assert_eq!(out, b"x,7");
}

#[test]
fn binary_little_endian_and_long_form_properties_round_trip() {
    let p = inline(
        r#"<xs:element name="R" dfdl:lengthKind="implicit"><xs:complexType><xs:sequence>
             <xs:element name="N" type="xs:unsignedShort">
               <xs:annotation><xs:appinfo source="http://www.ogf.org/dfdl/"><dfdl:element>
                 <dfdl:property name="representation">binary</dfdl:property>
                 <dfdl:property name="byteOrder">littleEndian</dfdl:property>
                 <dfdl:property name="lengthKind">implicit</dfdl:property>
               </dfdl:element></xs:appinfo></xs:annotation>
             </xs:element>
             <xs:element name="S" type="xs:string" dfdl:encoding="IBM037" dfdl:lengthKind="explicit" dfdl:length="3"/>
           </xs:sequence></xs:complexType></xs:element>"#,
        "R",
    )
    .unwrap();
    let data = [0x34, 0x12, 0xC1, 0xC2, 0xC3];
    let (lines, out) = parse_dump(&p, &data).unwrap();
    assert_eq!(lines, ["/R/N=4660", "/R/S='ABC'"]);
    assert_eq!(out, data);
}

#[test]
fn leftover_data_is_an_error_when_message_longer() {
    let p = inline(
        r#"<xs:element name="A" type="xs:string" dfdl:lengthKind="explicit" dfdl:length="2"/>"#,
        "A",
    )
    .unwrap();
    let e = parse_dump(&p, b"abc").unwrap_err();
    assert!(e.to_string().contains("1 bytes of data remain"), "{e}");
}

#[test]
fn message_length_counts_the_bytes_one_message_takes_when_more_follow() {
    let p = inline(
        r#"<xs:element name="A" type="xs:string" dfdl:lengthKind="explicit" dfdl:length="2"/>"#,
        "A",
    )
    .unwrap();
    assert_eq!(p.message_length(b"abc").unwrap(), 2);
    assert!(p.message_length(b"a").is_err());
}

proptest! {
    #[test]
    fn tds_round_trips_when_records_generated(
        header in "[A-Za-z0-9 -]{1,12}",
        items in prop::collection::vec(("[A-Z0-9-]{1,8}", 0i32..100000, 0u32..1000000, prop::option::of("[a-z ]{0,10}")), 1..6),
        day in 1u32..28,
    ) {
        let mut data = format!("HDR|{header}|Cust|2025-03-{day:02}\n");
        let mut total = 0u64;
        for (sku, q, cents, note) in &items {
            data.push_str(&format!("ITM|{sku}|{q}|{}.{:02}", cents / 100, cents % 100));
            if let Some(n) = note {
                data.push_str(&format!("|{n}"));
            }
            data.push('\n');
            total += u64::from(*cents);
        }
        data.push_str(&format!("TRL|{}|{}.{:02}\n", items.len(), total / 100, total % 100));
        let p = parser("tds-order.xsd", "Order");
        let (_, out) = parse_dump(&p, data.as_bytes()).unwrap();
        prop_assert_eq!(String::from_utf8(out).unwrap(), data);
    }

    #[test]
    fn cwf_round_trips_when_records_generated(
        items in prop::collection::vec(("[A-Z0-9]{1,8}", any::<i32>(), 0u32..99999999), 0..20),
    ) {
        let prices: Vec<String> = items.iter().map(|(_, _, c)| format!("{:06}.{:02}", c / 100, c % 100)).collect();
        let rec: Vec<(&str, i32, &str)> = items.iter().zip(&prices).map(|((s, q, _), p)| (s.as_str(), *q, p.as_str())).collect();
        let data = cwf_record(&rec);
        let p = parser("cwf-order.xsd", "Order");
        let (mut tree, id) = parse_to_tree(&p, Bytes::from(data.clone())).unwrap();
        // Rebuild from the tree, not from the original bytes.
        let order = tree.first_child(id).unwrap().unwrap();
        let first = tree.first_child(order).unwrap().unwrap();
        let v = tree.value(first);
        tree.set_value(first, v);
        let mut out = Vec::new();
        p.serialize(&mut tree, id, &mut out).unwrap();
        prop_assert_eq!(out, data);
    }
}

/// PAYMENT: `PAY00042` in EBCDIC, AMOUNT -1234.50 packed, BALANCE 00987.65 zoned with a
/// trailing sign, BOOKED 20261128 BCD, ITEMS 3 packed unsigned.
const PAYMENT: &[u8] = &[
    0xD7, 0xC1, 0xE8, 0xF0, 0xF0, 0xF0, 0xF4, 0xF2, // PAY00042
    0x00, 0x01, 0x23, 0x45, 0x0D, // -1234.50
    0xF0, 0xF0, 0xF9, 0xF8, 0xF7, 0xF6, 0xC5, // +00987.65
    0x20, 0x26, 0x11, 0x28, // 20261128
    0x00, 0x3F, // 3, unsigned
];

#[test]
fn copybook_packed_zoned_and_bcd_fields_parse_and_write_back() {
    let p = parser("copybook-payment.xsd", "Payment");
    let (lines, out) = parse_dump(&p, PAYMENT).unwrap();
    assert_eq!(
        lines,
        [
            "/Payment/PaymentId='PAY00042'",
            "/Payment/Amount=-1234.50D",
            "/Payment/Balance=987.65D",
            "/Payment/Booked=20261128",
            "/Payment/Items=3",
        ]
    );
    assert_eq!(out, PAYMENT);
}

#[test]
fn copybook_writes_changed_numbers_in_their_representation() {
    let p = parser("copybook-payment.xsd", "Payment");
    let (mut tree, id) = parse_to_tree(&p, Bytes::from_static(PAYMENT)).unwrap();
    let root = tree.first_child(id).unwrap().unwrap();
    for (name, value) in [("Amount", "99.9"), ("Balance", "-0.05"), ("Items", "120")] {
        let f = tree
            .child_named(root, None, name.as_bytes(), 0)
            .unwrap()
            .unwrap();
        let t = tree.alloc_text(value.as_bytes());
        let v = if name == "Items" {
            Value::Integer(120)
        } else {
            Value::Decimal(t)
        };
        tree.set_value(f, v);
    }
    let mut out = Vec::new();
    p.serialize(&mut tree, id, &mut out).unwrap();
    assert_eq!(&out[8..13], [0x00, 0x00, 0x09, 0x99, 0x0C]);
    assert_eq!(&out[13..20], [0xF0, 0xF0, 0xF0, 0xF0, 0xF0, 0xF0, 0xD5]);
    assert_eq!(&out[24..26], [0x12, 0x0F]);
}

#[test]
fn copybook_refuses_bad_digits_naming_the_field() {
    let p = parser("copybook-payment.xsd", "Payment");
    let mut bad = PAYMENT.to_vec();
    bad[9] = 0x1A;
    let e = parse_dump(&p, &bad).unwrap_err().to_string();
    assert!(
        e.contains("Amount") && e.contains("not a decimal digit"),
        "{e}"
    );
}

#[test]
fn packed_needs_an_explicit_length_and_decimals_a_digit_representation() {
    let e = inline(
        r#"<xs:element name="n" type="xs:decimal" dfdl:representation="binary" dfdl:binaryNumberRep="packed" dfdl:lengthKind="implicit"/>"#,
        "n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("needs an explicit length"), "{e}");
    let e = inline(
        r#"<xs:element name="n" type="xs:int" dfdl:representation="binary" dfdl:binaryNumberRep="packed" dfdl:lengthKind="explicit" dfdl:length="2" dfdl:binaryDecimalVirtualPoint="1"/>"#,
        "n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("only an xs:decimal"), "{e}");
}

const CSV_ESCAPES: &str = r#"
<xs:annotation><xs:appinfo source="http://www.ogf.org/dfdl/">
  <dfdl:defineEscapeScheme name="Quoted">
    <dfdl:escapeScheme escapeKind="escapeBlock" escapeBlockStart='"' escapeBlockEnd='"'
        escapeEscapeCharacter='"' extraEscapedCharacters="" generateEscapeBlock="whenNeeded"/>
  </dfdl:defineEscapeScheme>
  <dfdl:defineEscapeScheme name="Backslash">
    <dfdl:escapeScheme escapeKind="escapeCharacter" escapeCharacter="\" escapeEscapeCharacter="\"
        extraEscapedCharacters=""/>
  </dfdl:defineEscapeScheme>
</xs:appinfo></xs:annotation>
<xs:element name="rows">
  <xs:complexType>
    <xs:sequence dfdl:separator="%NL;" dfdl:separatorPosition="postfix">
      <xs:element name="row" maxOccurs="unbounded">
        <xs:complexType>
          <xs:sequence dfdl:separator=",">
            <xs:element name="name" type="xs:string" dfdl:escapeSchemeRef="Quoted"/>
            <xs:element name="note" type="xs:string" dfdl:escapeSchemeRef="tns:Backslash"/>
            <xs:element name="qty" type="xs:int"/>
          </xs:sequence>
        </xs:complexType>
      </xs:element>
    </xs:sequence>
  </xs:complexType>
</xs:element>"#;

#[test]
fn escape_schemes_keep_delimiters_in_values_both_ways() {
    let p = inline(CSV_ESCAPES, "rows").unwrap();
    let data = b"\"Smith, J\",a\\,b,2\nplain,\"q\",1\n\"say \"\"hi\"\"\",x\\\\y,3\n";
    let (lines, out) = parse_dump(&p, data).unwrap();
    assert_eq!(
        lines,
        [
            "/rows/row/name='Smith, J'",
            "/rows/row/note='a,b'",
            "/rows/row/qty=2",
            "/rows/row/name='plain'",
            "/rows/row/note='\"q\"'",
            "/rows/row/qty=1",
            "/rows/row/name='say \"hi\"'",
            "/rows/row/note='x\\y'",
            "/rows/row/qty=3",
        ]
    );
    // Written from the tree, the values are escaped again, a block only where one is needed:
    // `say "hi"` holds no delimiter and does not start with a quote, so it goes without one,
    // and reads back the same.
    let expected = b"\"Smith, J\",a\\,b,2\nplain,\"q\",1\nsay \"hi\",x\\\\y,3\n";
    assert_eq!(out, expected.to_vec());
    let (mut tree, id) = parse_to_tree(&p, Bytes::from_static(data)).unwrap();
    let root = tree.first_child(id).unwrap().unwrap();
    tree.touch(root);
    let mut written = Vec::new();
    p.serialize(&mut tree, id, &mut written).unwrap();
    assert_eq!(written, expected.to_vec());
    assert_eq!(parse_dump(&p, &written).unwrap().0, lines);
}

#[test]
fn escape_scheme_errors_name_the_problem() {
    let e = inline(
        r#"<xs:element name="n" type="xs:string" dfdl:escapeSchemeRef="Missing"/>"#,
        "n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("names no dfdl:defineEscapeScheme"), "{e}");
    let p = inline(CSV_ESCAPES, "rows").unwrap();
    let e = parse_dump(&p, b"\"open,x,1\n").unwrap_err().to_string();
    assert!(e.contains("escape block is not closed"), "{e}");
}

#[test]
fn csv_quoted_sample_reads_quoted_commas_quotes_and_line_breaks() {
    let p = parser("csv-quoted.xsd", "Contacts");
    let data =
        b"Name,Company,Notes\r\n\"Doe, Jane\",Acme,\"says \"\"hi\"\"\"\r\nBo,\"Two\r\nLines\",\r\n";
    let (lines, out) = parse_dump(&p, data).unwrap();
    assert_eq!(
        lines,
        [
            "/Contacts/Header='Name,Company,Notes'",
            "/Contacts/Contact/Name='Doe, Jane'",
            "/Contacts/Contact/Company='Acme'",
            "/Contacts/Contact/Notes='says \"hi\"'",
            "/Contacts/Contact/Name='Bo'",
            "/Contacts/Contact/Company='Two\r\nLines'",
            "/Contacts/Contact/Notes=''",
        ]
    );
    assert_eq!(parse_dump(&p, &out).unwrap().0, lines);
}

#[test]
fn hl7_sample_reads_segments_fields_and_components() {
    let p = parser("hl7-v2.xsd", "HL7");
    let data =
        b"MSH|^~\\&|LAB|HOSP|||20261128||ADT^A01|42|P|2.5\rPID|1||77^^^HOSP||Doe^Jane\rNTE|1||\r";
    let (lines, out) = parse_dump(&p, data).unwrap();
    assert_eq!(lines[0], "/HL7/MSH/EncodingCharacters='^~\\&'");
    assert_eq!(lines[1], "/HL7/MSH/Field/Component='LAB'");
    assert!(
        lines.contains(&"/HL7/MSH/Field/Component='ADT'".to_string()),
        "{lines:?}"
    );
    assert!(
        lines.contains(&"/HL7/MSH/Field/Component='A01'".to_string()),
        "{lines:?}"
    );
    let pid: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("/HL7/Segment"))
        .collect();
    assert_eq!(pid[0], "/HL7/Segment/Id='PID'");
    assert!(
        lines.contains(&"/HL7/Segment/Field/Component='Jane'".to_string()),
        "{lines:?}"
    );
    assert_eq!(
        lines.last().map(String::as_str),
        Some("/HL7/Segment/Field/Component=''")
    );
    assert_eq!(out, data);
    assert!(
        parse_dump(&p, b"PID|1\r").is_err(),
        "a message starts with MSH"
    );
}

#[test]
fn swift_sample_reads_blocks_and_multi_line_fields() {
    let p = parser("swift-mt.xsd", "SWIFT");
    let data = b"{1:F01BANKBEBBAXXX0000000000}{2:I543BANKDEFFXXXXN}{3:{108:MUR12345}}{4:\r\n:16R:GENL\r\n:20C::SEME//REF123\r\n:35B:ISIN XS0123456789\r\nBOND 2030\r\n:16S:GENL\r\n-}{5:{CHK:123456789ABC}}";
    let (lines, out) = parse_dump(&p, data).unwrap();
    assert_eq!(
        lines,
        [
            "/SWIFT/Basic='F01BANKBEBBAXXX0000000000'",
            "/SWIFT/Application='I543BANKDEFFXXXXN'",
            "/SWIFT/User/Field/Tag='108'",
            "/SWIFT/User/Field/Value='MUR12345'",
            "/SWIFT/Text/Field/Tag='16R'",
            "/SWIFT/Text/Field/Value='GENL'",
            "/SWIFT/Text/Field/Tag='20C'",
            "/SWIFT/Text/Field/Value=':SEME//REF123'",
            "/SWIFT/Text/Field/Tag='35B'",
            "/SWIFT/Text/Field/Value='ISIN XS0123456789\r\nBOND 2030'",
            "/SWIFT/Text/Field/Tag='16S'",
            "/SWIFT/Text/Field/Value='GENL'",
            "/SWIFT/Trailer/Field/Tag='CHK'",
            "/SWIFT/Trailer/Field/Value='123456789ABC'",
        ]
    );
    assert_eq!(out, data);
}
