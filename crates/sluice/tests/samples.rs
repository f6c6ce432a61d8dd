//! Every sample of the samples project, driven over real HTTP against the real binary.

mod common;

use std::sync::OnceLock;

use common::{Server, sale_list, samples_dir};

/// One server shared by every test here. Statics are never dropped, so it is stopped when the
/// test process exits instead of being left running.
fn server() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| {
        let s = Server::start(&samples_dir());
        common::stop_at_exit(&s);
        s
    })
}

#[test]
fn blob_echo_returns_the_body_unchanged_with_canonical_header_names() {
    let body = sale_list(3);
    let r = server().post("/samples/blob-echo", &body);
    assert_eq!(r.status, 200);
    assert_eq!(r.body, body);
    assert!(
        r.headers.iter().any(|(n, _)| n == "Content-Length"),
        "{:?}",
        r.headers
    );
    assert!(
        r.headers.iter().any(|(n, _)| n == "Content-Type"),
        "{:?}",
        r.headers
    );
}

#[test]
fn xml_echo_returns_identical_bytes_after_a_complete_parse() {
    let body = sale_list(10);
    let r = server().post("/samples/xml-echo", &body);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.body, body);
    assert!(r.header("Content-Type").is_some_and(|c| c.contains("xml")));
}

#[test]
fn xml_echo_answers_malformed_xml_with_the_parser_error_and_offset() {
    let r = server().post("/samples/xml-echo", b"<Parent><First>1</Frist></Parent>");
    assert!(r.status >= 400, "{}", r.status);
    let t = r.text();
    assert!(t.contains("XMLNSC") && t.contains("offset"), "{t}");
}

#[test]
fn json_echo_returns_the_parsed_message_serialised() {
    let body = br#"{"Parent":{"First":1,"SaleList":[{"Invoice":{"Surname":"Braithwaite","Balance":0.5}}],"Last":"Test"}}"#;
    let r = server().post("/samples/json-echo", body);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.body, body.to_vec());
    assert!(r.header("Content-Type").is_some_and(|c| c.contains("json")));
}

#[test]
fn json_echo_answers_malformed_json_with_an_error() {
    let r = server().post("/samples/json-echo", br#"{"a": [1, 2,, 3]}"#);
    assert!(r.status >= 400);
    assert!(r.text().contains("JSON"), "{}", r.text());
}

#[test]
fn filter_first_echoes_when_the_first_element_matches_and_rejects_otherwise() {
    let body = sale_list(2);
    let r = server().post("/samples/filter-first", &body);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.body, body);
    let other = String::from_utf8(body)
        .unwrap()
        .replace("<First>1</First>", "<First>2</First>");
    assert_eq!(
        server()
            .post("/samples/filter-first", other.as_bytes())
            .status,
        422
    );
}

#[test]
fn filter_last_echoes_when_the_last_element_matches_and_rejects_otherwise() {
    let body = sale_list(2);
    let r = server().post("/samples/filter-last", &body);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.body, body);
    let other = String::from_utf8(body)
        .unwrap()
        .replace("<Last>Test</Last>", "<Last>Other</Last>");
    assert_eq!(
        server()
            .post("/samples/filter-last", other.as_bytes())
            .status,
        422
    );
}

#[test]
fn route_first_routes_on_the_first_element() {
    let body = sale_list(2);
    let r = server().post("/samples/route-first", &body);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.body, body);
    let other = String::from_utf8(body)
        .unwrap()
        .replace("<First>1</First>", "<First>9</First>");
    assert_eq!(
        server()
            .post("/samples/route-first", other.as_bytes())
            .status,
        422
    );
}

#[test]
fn filter_first_does_not_need_the_rest_of_a_message_to_be_well_formed() {
    // On-demand parsing: the filter reads only the first element.
    let r = server().post(
        "/samples/filter-first",
        b"<Parent><First>1</First><Broken></Parent>",
    );
    assert_eq!(r.status, 200, "{}", r.text());
}

#[test]
fn unknown_path_gets_404() {
    assert_eq!(server().post("/samples/nothing-here", b"x").status, 404);
}

#[test]
fn admin_lists_flows_with_statistics_and_serves_metrics() {
    server().post("/samples/blob-echo", b"count me");
    let r = server().admin_get("/api/v1/flows");
    assert_eq!(r.status, 200);
    let v: serde_json::Value = serde_json::from_slice(&r.body).expect("json");
    let flows = v.as_array().expect("array");
    let blob = flows
        .iter()
        .find(|f| f["name"] == "blob-echo")
        .expect("blob-echo listed");
    assert!(blob["statistics"]["invocations"].as_u64().unwrap() >= 1);
    assert!(blob["statistics"]["input_bytes"].as_u64().unwrap() >= 8);
    assert_eq!(blob["nodes"].as_array().unwrap().len(), 2);
    let m = server().admin_get("/metrics");
    assert_eq!(m.status, 200);
    assert!(
        m.text()
            .contains("sluice_flow_invocations_total{flow=\"blob-echo\"}"),
        "{}",
        m.text()
    );
    assert_eq!(server().admin_get("/health").status, 200);
}

#[test]
fn keep_alive_serves_several_requests_on_one_connection() {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", server().http_port)).unwrap();
    for i in 0..5 {
        let body = format!("message {i}");
        common::send(&mut s, "POST", "/samples/blob-echo", &[], body.as_bytes());
        let r = common::read_response(&mut s);
        assert_eq!(r.status, 200);
        assert_eq!(r.body, body.as_bytes());
    }
}

#[test]
fn esql_parse_reads_the_last_element_and_replies_with_headers_only() {
    let r = server().post("/samples/esql-parse", &sale_list(3));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.body.is_empty(), "{}", r.text());
}

#[test]
fn esql_write_changes_the_last_element() {
    let r = server().post("/samples/esql-write", &sale_list(2));
    assert_eq!(r.status, 200, "{}", r.text());
    let t = r.text();
    assert!(t.starts_with("<Parent><First>1</First><SaleList>"), "{t}");
    assert!(!t.contains("<Last>Test</Last>"), "{t}");
}

#[test]
fn trace_nodes_off_and_on_leave_the_transformation_as_it_is() {
    let plain = server().post("/samples/transform", &sale_list(1));
    let off = server().post("/samples/trace-off", &sale_list(1));
    let on = server().post("/samples/trace-on", &sale_list(1));
    assert_eq!(plain.status, 200, "{}", plain.text());
    assert_eq!(off.body, plain.body);
    assert_eq!(on.body, plain.body);
    // The Trace node that is on wrote the Root tree of the message into the data folder.
    let log = std::fs::read_to_string(server().data_dir.join("trace-on.log")).unwrap();
    assert!(log.contains("Statement") && log.contains("Root"), "{log}");
}

#[test]
fn transform_produces_the_seeds_statement_output() {
    let r = server().post("/samples/transform", &sale_list(1));
    assert_eq!(r.status, 200, "{}", r.text());
    let t = r.text();
    assert!(
        t.contains("<Statement Type=\"Monthly\" Style=\"Full\"><Customer><Initials>KA</Initials>"),
        "{t}"
    );
    assert!(
        t.contains("<Cost>4.8E-1</Cost>") && t.contains("<Amount>8E-1</Amount>"),
        "{t}"
    );
    assert!(
        t.contains("<Cost>3.5744E+1</Cost>") && t.contains("<Amount>1.29408E+2</Amount>"),
        "{t}"
    );
}

#[test]
fn xslt_transform_produces_the_statements_with_a_stylesheet() {
    let r = server().post("/samples/xslt-transform", &sale_list(1));
    assert_eq!(r.status, 200, "{}", r.text());
    let t = r.text();
    assert!(
        t.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"),
        "{t}"
    );
    assert!(
        t.contains("<Statement Type=\"Monthly\" Style=\"Full\"><Customer><Initials>KA</Initials>"),
        "{t}"
    );
    assert!(
        t.contains("<Cost>0.48</Cost>") && t.contains("<Amount>0.8</Amount>"),
        "{t}"
    );
    assert!(
        t.contains("<Cost>35.744</Cost>") && t.contains("<Amount>129.408</Amount>"),
        "{t}"
    );
}

#[test]
fn esql_filters_echo_when_the_element_matches() {
    let body = sale_list(2);
    for path in ["/samples/esql-filter-first", "/samples/esql-filter-last"] {
        let r = server().post(path, &body);
        assert_eq!(r.status, 200, "{path}: {}", r.text());
        assert_eq!(r.body, body, "{path}");
    }
}

#[test]
fn json_modify_changes_the_last_element() {
    let r = server().post(
        "/samples/json-modify",
        br#"{"Parent":{"First":1,"Last":"Test"}}"#,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.text(), r#"{"Parent":{"First":1,"Last":"Changed"}}"#);
}

#[test]
fn split_writes_one_queue_message_per_sale_list_and_replies_with_the_count() {
    let r = server().post("/samples/split", &sale_list(7));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        r.text().contains("<SaleListCount>7</SaleListCount>"),
        "{}",
        r.text()
    );
    let mut c = sluice_qm::net::Client::connect(
        &format!("127.0.0.1:{}", server().qm_port),
        Default::default(),
    )
    .unwrap();
    let mut n = 0;
    while let Some(m) = c
        .get("SAMPLES.SPLIT.OUT", &sluice_qm::GetOptions::new())
        .unwrap()
    {
        assert!(
            m.body.starts_with(b"<SaleList><Invoice>"),
            "{}",
            String::from_utf8_lossy(&m.body)
        );
        n += 1;
    }
    assert_eq!(n, 7);
}

#[test]
fn tcpip_fixed_echoes_2048_byte_records_on_their_connection() {
    use std::io::{Read, Write};
    let s = server();
    let mut c = std::net::TcpStream::connect(("127.0.0.1", s.tcpip_port)).unwrap();
    c.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let mut records = vec![b'a'; 2048];
    records.extend(vec![b'b'; 2048]);
    // Sent in uneven pieces: the records are found by length, not by write.
    c.write_all(&records[..100]).unwrap();
    c.write_all(&records[100..3000]).unwrap();
    c.write_all(&records[3000..]).unwrap();
    let mut back = vec![0; records.len()];
    c.read_exact(&mut back).unwrap();
    assert_eq!(back, records);
}

fn qm_client() -> sluice_qm::net::Client {
    sluice_qm::net::Client::connect(
        &format!("127.0.0.1:{}", server().qm_port),
        Default::default(),
    )
    .unwrap()
}

#[test]
fn collector_writes_one_collection_per_message_with_both_terminals_copies() {
    let mut c = qm_client();
    let mut msg = sluice_qm::Message::new("<order><id>42</id></order>");
    msg.md.persistence = sluice_qm::Persistence::NotPersistent;
    c.put("COLLECTOR.IN", &msg, &Default::default()).unwrap();
    let out = c
        .get(
            "COLLECTOR.OUT",
            &sluice_qm::GetOptions::new().wait(std::time::Duration::from_secs(20)),
        )
        .unwrap()
        .expect("a collection on COLLECTOR.OUT");
    let text = String::from_utf8_lossy(&out.body).into_owned();
    assert!(text.contains("<name>sample</name>"), "{text}");
    assert!(text.contains("<messages>2</messages>"), "{text}");
    assert!(text.contains("<id>42</id>"), "{text}");
}

#[test]
fn reminders_puts_a_reminder_on_its_queue_when_its_timer_falls_due() {
    let r = server().post(
        "/samples/reminders",
        b"<reminder><id>R1</id><every>1</every><times>1</times><text>call back</text></reminder>",
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let mut c = qm_client();
    let out = c
        .get(
            "REMINDERS.OUT",
            &sluice_qm::GetOptions::new().wait(std::time::Duration::from_secs(20)),
        )
        .unwrap()
        .expect("a reminder on REMINDERS.OUT");
    let text = String::from_utf8_lossy(&out.body).into_owned();
    assert!(text.contains("<text>call back</text>"), "{text}");
    assert!(text.contains("<left>0</left>"), "{text}");
    // A timer that is gone cannot be cancelled.
    let r = server().post("/samples/reminders", b"<cancel><id>R1</id></cancel>");
    assert_eq!(r.status, 500, "{}", r.text());
}

#[test]
fn dfdl_flows_parse_and_write_the_seeds_fixed_delimited_hl7_and_swift_messages() {
    use sluice_bench::message::{Format, generate};
    for (format, name, last) in [
        (Format::Fixed, "cwf", &b"Test"[..]),
        (Format::Delimited, "tds", &b"Test\n"[..]),
        (Format::Hl7, "hl7", &b"Test\r"[..]),
        (
            Format::Swift,
            "swift",
            &b"Test\r\n-}{5:{CHK:123456789ABC}}"[..],
        ),
    ] {
        let body = generate(format, 2_000, 1).expect("a payload");
        let r = server().post(&format!("/samples/dfdl-{name}-parse"), &body);
        assert_eq!(r.status, 200, "{name}: {}", r.text());
        assert!(r.body.is_empty(), "{name}: {}", r.text());

        let r = server().post(&format!("/samples/dfdl-{name}-write"), &body);
        assert_eq!(r.status, 200, "{name}: {}", r.text());
        let mut expected = body[..body.len() - last.len()].to_vec();
        expected.extend_from_slice(b"Done");
        expected.extend_from_slice(&last[4..]);
        assert!(r.body == expected, "{name}: {}", r.text());

        let r = server().post(&format!("/samples/dfdl-{name}-write"), b"not a message");
        assert_ne!(r.status, 200, "{name}: {}", r.text());
        assert!(r.text().contains("DFDL parser"), "{name}: {}", r.text());
    }
}
