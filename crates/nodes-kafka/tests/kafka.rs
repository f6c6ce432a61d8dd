//! KafkaConsumer, KafkaProducer and KafkaRead against a real Apache Kafka (KRaft mode) that the
//! tests start once and share, each test with topics and consumer groups of its own.

mod common;

use std::time::Duration;

use common::{WAIT, body, body_text, consume, headers, kafka, le_text, produce, start, unique};

const COPY_KAFKA: &str = "CREATE COMPUTE MODULE CopyKafka
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputLocalEnvironment = InputLocalEnvironment;
		SET OutputLocalEnvironment.Destination.Kafka.Output.key = InputLocalEnvironment.Kafka.Input.key;
		SET OutputLocalEnvironment.Destination.Kafka.Output.KafkaHeader.Name = InputLocalEnvironment.Kafka.Input.KafkaHeader.Name;
		SET OutputLocalEnvironment.Destination.Kafka.Output.KafkaHeader.From = CAST(InputLocalEnvironment.Kafka.Input.offset AS CHARACTER);
		SET OutputRoot = InputRoot;
		RETURN TRUE;
	END;
END MODULE;
";

const IS_POISON: &str = "CREATE FILTER MODULE IsPoison
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		RETURN LocalEnvironment.Kafka.Input.key = 'poison';
	END;
END MODULE;
";

#[test]
fn consume_flow_produce_carries_key_and_headers_through_the_local_environment() {
    let Some(k) = kafka() else {
        return;
    };
    let n = unique();
    let (src, dst) = (format!("bridge-in-{n}"), format!("bridge-out-{n}"));
    produce(
        k,
        &src,
        &[
            (Some("k1"), r#"{"n":1}"#, &[("Name", "Bob")]),
            (Some("k2"), r#"{"n":2}"#, &[("Name", "Ann")]),
            (None, r#"{"n":3}"#, &[]),
        ],
    );
    let flow = start(
        k,
        &format!(
            "flow: bridge\nnodes:\n  \
             in: {{ type: KafkaConsumer, broker: events, topics: [{src}], group_id: g-{n}, initial_offset: earliest, domain: JSON, wires: {{ out: [copy] }} }}\n  \
             copy: {{ type: Compute, module: CopyKafka, compute_mode: message_local_environment, wires: {{ out: [out] }} }}\n  \
             out: {{ type: KafkaProducer, broker: events, topic: {dst}, headers: {{ Via: sluice }}, wires: {{ out: [seen] }} }}\n  \
             seen: {{ type: Capture }}\n"
        ),
        &[("CopyKafka", COPY_KAFKA)],
        Vec::new(),
    );
    let seen = flow.wait_for(3, WAIT);
    assert_eq!(seen.len(), 3);
    let le = &seen[0].message.local_environment;
    assert_eq!(
        le_text(le, &["Kafka", "Input", "topicName"]),
        Some(src.clone())
    );
    assert_eq!(
        le_text(le, &["Kafka", "Input", "partition"]),
        Some("0".into())
    );
    assert_eq!(le_text(le, &["Kafka", "Input", "offset"]), Some("0".into()));
    assert_eq!(le_text(le, &["Kafka", "Input", "key"]), Some("k1".into()));
    assert_eq!(
        le_text(le, &["Kafka", "Input", "KafkaHeader", "Name"]),
        Some("Bob".into())
    );
    assert_eq!(
        le_text(le, &["WrittenDestination", "Kafka", "topicName"]),
        Some(dst.clone())
    );
    assert_eq!(
        le_text(
            &seen[2].message.local_environment,
            &["WrittenDestination", "Kafka", "offset"]
        ),
        Some("2".into())
    );
    assert_eq!(body_text(&seen[1]), r#"{"n":2}"#);

    let out = consume(k, &dst, 3, WAIT);
    assert_eq!(out.len(), 3);
    let bodies: Vec<String> = out.iter().map(body).collect();
    assert_eq!(bodies, [r#"{"n":1}"#, r#"{"n":2}"#, r#"{"n":3}"#]);
    use rdkafka::Message as _;
    assert_eq!(out[0].key(), Some(&b"k1"[..]));
    assert_eq!(out[2].key(), None);
    assert_eq!(
        headers(&out[0]),
        [
            ("Via".to_string(), "sluice".to_string()),
            ("Name".into(), "Bob".into()),
            ("From".into(), "0".into())
        ]
    );
    assert_eq!(
        headers(&out[2]),
        [
            ("Via".to_string(), "sluice".to_string()),
            ("From".into(), "2".into())
        ]
    );
}

#[test]
fn a_failed_message_is_not_committed_and_comes_again_when_the_flow_fails() {
    let Some(k) = kafka() else {
        return;
    };
    let n = unique();
    let topic = format!("redeliver-{n}");
    produce(k, &topic, &[(None, "work", &[])]);
    let failing = format!(
        "flow: failing\nnodes:\n  \
         in: {{ type: KafkaConsumer, broker: events, topics: [{topic}], group_id: g-{n}, initial_offset: earliest, backout_threshold: 100, commit_interval_ms: 100, wires: {{ out: [seen, boom] }} }}\n  \
         seen: {{ type: Capture }}\n  \
         boom: {{ type: Throw, message_text: refused }}\n"
    );
    let flow = start(k, &failing, &[], Vec::new());
    let seen = flow.wait_for(2, WAIT);
    assert!(seen.len() >= 2, "the message came {} times", seen.len());
    assert!(seen.iter().all(|c| body_text(c) == "work"));
    // Let an automatic commit pass: nothing may have been stored for it.
    std::thread::sleep(Duration::from_millis(500));
    flow.stop();

    // The failing flow stored no offset: the group starts again at the failed message.
    let again = start(
        k,
        &format!(
            "flow: again\nnodes:\n  \
             in: {{ type: KafkaConsumer, broker: events, topics: [{topic}], group_id: g-{n}, initial_offset: earliest, wires: {{ out: [seen] }} }}\n  \
             seen: {{ type: Capture }}\n"
        ),
        &[],
        Vec::new(),
    );
    let got = again.wait_for(1, WAIT);
    assert_eq!(got.len(), 1, "the failed message was committed");
    assert_eq!(body_text(&got[0]), "work");
    // Now it is committed: a third member of the group gets nothing.
    std::thread::sleep(Duration::from_millis(1500));
    again.stop();
    let third = start(
        k,
        &format!(
            "flow: third\nnodes:\n  \
             in: {{ type: KafkaConsumer, broker: events, topics: [{topic}], group_id: g-{n}, initial_offset: earliest, wires: {{ out: [seen] }} }}\n  \
             seen: {{ type: Capture }}\n"
        ),
        &[],
        Vec::new(),
    );
    produce(k, &topic, &[(None, "next", &[])]);
    let got = third.wait_for(1, WAIT);
    std::thread::sleep(Duration::from_millis(300));
    let mut got = got;
    got.extend(third.harness.take_captured());
    let bodies: Vec<String> = got.iter().map(body_text).collect();
    assert_eq!(bodies, ["next"]);
}

#[test]
fn a_message_goes_to_failure_when_it_failed_backout_threshold_times() {
    let Some(k) = kafka() else {
        return;
    };
    let n = unique();
    let topic = format!("backout-{n}");
    produce(
        k,
        &topic,
        &[(Some("poison"), "poison", &[]), (None, "fine", &[])],
    );
    let flow = start(
        k,
        &format!(
            "flow: backout\nnodes:\n  \
             in: {{ type: KafkaConsumer, broker: events, topics: [{topic}], group_id: g-{n}, initial_offset: earliest, backout_threshold: 2, wires: {{ out: [route], failure: [failed] }} }}\n  \
             route: {{ type: Filter, module: IsPoison, wires: {{ 'true': [boom], 'false': [ok], unknown: [ok] }} }}\n  \
             boom: {{ type: Throw, message_text: refused }}\n  \
             ok: {{ type: Capture }}\n  \
             failed: {{ type: Capture }}\n"
        ),
        &[("IsPoison", IS_POISON)],
        Vec::new(),
    );
    let got = flow.wait_for(2, WAIT);
    let labels: Vec<(String, String)> = got
        .iter()
        .map(|c| (c.label.clone(), body_text(c)))
        .collect();
    assert_eq!(
        labels,
        [
            ("failed".to_string(), "poison".to_string()),
            ("ok".into(), "fine".into())
        ]
    );
}

#[test]
fn kafka_read_reads_the_offset_asked_and_says_no_message_past_the_end() {
    let Some(k) = kafka() else {
        return;
    };
    let n = unique();
    let topic = format!("read-{n}");
    produce(
        k,
        &topic,
        &[
            (Some("a"), "zero", &[]),
            (Some("b"), "one", &[("H", "v")]),
            (None, "two", &[]),
        ],
    );
    let mut asks = Vec::new();
    for offset in [1i64, 2, 99] {
        let mut m = sluice_node_api::Message::new();
        let le = &mut m.local_environment;
        let r = le.root();
        let kf = le
            .create_last_child(
                r,
                sluice_tree::field_type::NAME,
                sluice_tree::Text::from_static("Kafka"),
                sluice_tree::Value::Null,
            )
            .unwrap();
        let rd = le
            .create_last_child(
                kf,
                sluice_tree::field_type::NAME,
                sluice_tree::Text::from_static("Read"),
                sluice_tree::Value::Null,
            )
            .unwrap();
        le.create_last_child(
            rd,
            sluice_tree::field_type::NAME_VALUE,
            sluice_tree::Text::from_static("offset"),
            sluice_tree::Value::Integer(offset),
        )
        .unwrap();
        asks.push(m);
    }
    let flow = start(
        k,
        &format!(
            "flow: read\nnodes:\n  \
             in: {{ type: Inject, wires: {{ out: [read] }} }}\n  \
             read: {{ type: KafkaRead, broker: events, topic: {topic}, partition: 0, wires: {{ out: [got], no_message: [none] }} }}\n  \
             got: {{ type: Capture }}\n  \
             none: {{ type: Capture }}\n"
        ),
        &[],
        asks,
    );
    let got = flow.wait_for(3, WAIT);
    let labels: Vec<(String, String)> = got
        .iter()
        .map(|c| (c.label.clone(), body_text(c)))
        .collect();
    assert_eq!(
        labels.len(),
        3,
        "{labels:?}, outcomes {:?}",
        flow.harness.take_outcomes()
    );
    assert_eq!(labels[0], ("got".to_string(), "one".to_string()));
    assert_eq!(labels[1], ("got".to_string(), "two".to_string()));
    assert_eq!(labels[2].0, "none");
    let le = &got[0].message.local_environment;
    assert_eq!(le_text(le, &["Kafka", "Input", "offset"]), Some("1".into()));
    assert_eq!(le_text(le, &["Kafka", "Input", "key"]), Some("b".into()));
    assert_eq!(
        le_text(le, &["Kafka", "Input", "KafkaHeader", "H"]),
        Some("v".into())
    );
}

/// Set in the environment of the server process that `kill_9_of_a_consuming_server_loses_nothing`
/// starts and kills: `BOOTSTRAP SOURCE DESTINATION GROUP`.
const CHILD: &str = "SLUICE_KAFKA_TEST_CHILD";

/// The consuming server of `kill_9_of_a_consuming_server_loses_nothing`, run as a process of
/// its own (this test binary again); does nothing in a normal test run.
#[test]
fn child_consuming_server() {
    let Ok(spec) = std::env::var(CHILD) else {
        return;
    };
    let parts: Vec<&str> = spec.split(' ').collect();
    let [bootstrap, src, dst, group] = parts[..] else {
        panic!("{CHILD} is `{spec}`");
    };
    let _flow = common::start_on(
        bootstrap,
        &format!(
            "flow: crash\ninstances: 1\nnodes:\n  \
             in: {{ type: KafkaConsumer, broker: events, topics: [{src}], group_id: {group}, initial_offset: earliest, session_timeout_ms: 6000, wires: {{ out: [out] }} }}\n  \
             out: {{ type: KafkaProducer, broker: events, topic: {dst} }}\n"
        ),
        &[],
        Vec::new(),
    );
    // Until killed.
    loop {
        std::thread::sleep(Duration::from_secs(60));
    }
}

#[test]
fn kill_9_of_a_consuming_server_loses_nothing() {
    let Some(k) = kafka() else {
        return;
    };
    const N: usize = 5000;
    let n = unique();
    let (src, dst, group) = (
        format!("crash-in-{n}"),
        format!("crash-out-{n}"),
        format!("g-{n}"),
    );
    let bodies: Vec<String> = (0..N).map(|i| format!("m{i}")).collect();
    let messages: Vec<common::Outgoing<'_>> =
        bodies.iter().map(|b| (None, b.as_str(), &[][..])).collect();
    produce(k, &src, &messages);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let reader = {
        let seen = std::sync::Arc::clone(&seen);
        let (bootstrap, dst) = (k.bootstrap(), dst.clone());
        std::thread::spawn(move || {
            common::follow(&bootstrap, &dst, &seen, Duration::from_secs(240))
        })
    };
    let server = |what: &str| {
        std::process::Command::new(std::env::current_exe().expect("the test binary"))
            .args([
                "--exact",
                "child_consuming_server",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, format!("{} {src} {dst} {group}", k.bootstrap()))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start the {what} server: {e}"))
    };
    let count = |seen: &std::sync::Mutex<Vec<String>>| seen.lock().map(|s| s.len()).unwrap_or(0);
    let mut first = server("first");
    let deadline = std::time::Instant::now() + WAIT * 2;
    while count(&seen) < N / 10 {
        assert!(
            std::time::Instant::now() < deadline,
            "the first server processed nothing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    first.kill().expect("kill -9");
    let _ = first.wait();
    let at_kill = count(&seen);
    let mut second = server("second");
    let deadline = std::time::Instant::now() + Duration::from_secs(180);
    let distinct = |seen: &std::sync::Mutex<Vec<String>>| {
        seen.lock()
            .map(|s| s.iter().collect::<std::collections::HashSet<_>>().len())
            .unwrap_or(0)
    };
    while distinct(&seen) < N && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = second.kill();
    let _ = second.wait();
    // A killed server leaves its project folder (named after its process id) behind.
    for pid in [first.id(), second.id()] {
        if let Ok(dir) = std::fs::read_dir(std::env::temp_dir()) {
            let prefix = format!("sluice-kafka-flow-{pid}-");
            for e in dir.flatten() {
                if e.file_name().to_string_lossy().starts_with(&prefix) {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
    }
    let all = seen.lock().map(|s| s.clone()).unwrap_or_default();
    let set: std::collections::HashSet<&String> = all.iter().collect();
    let lost: Vec<&String> = bodies
        .iter()
        .filter(|b| !set.contains(b))
        .take(10)
        .collect();
    eprintln!(
        "kill -9 after {at_kill} of {N} messages: {} delivered, {} distinct, {} duplicates",
        all.len(),
        set.len(),
        all.len() - set.len()
    );
    assert!(
        lost.is_empty(),
        "lost {} messages, first {lost:?}",
        N - set.len()
    );
    drop(reader);
}
