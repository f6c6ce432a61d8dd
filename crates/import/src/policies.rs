//! The product's policy files (`.policyxml`, ACE 11 and later): what each policy holds, and
//! what it becomes in a Sluice project — a datasource (JDBC providers), a broker entry (MQTT),
//! values for the nodes that name it (`policyUrl`), or a line in the report.

use quick_xml::Reader;
use quick_xml::events::Event;

use crate::ImportError;

/// One `<policy>` of a policy file.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// The policy project (the folder holding the file's application or library): the part
    /// before `:` of a node's `{project}:name` reference.
    pub project: String,
    pub name: String,
    /// `policyType`: `JDBCProviders`, `MQEndpoint`, `MQTTSubscribe` …
    pub kind: String,
    /// The policy's properties in file order.
    pub props: Vec<(String, String)>,
    /// The file, relative to the workspace, and the line of `<policy>`.
    pub source: String,
    pub line: usize,
}

impl Policy {
    pub fn get(&self, key: &str) -> &str {
        self.props
            .iter()
            .find(|(k, _)| k == key)
            .map_or("", |(_, v)| v.as_str())
    }
}

fn line_at(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The policies of one `.policyxml` file, `shown` being its path for messages.
pub fn read(project: &str, shown: &str, text: &str) -> Result<Vec<Policy>, ImportError> {
    let mut reader = Reader::from_str(text);
    let mut out = Vec::new();
    let mut current: Option<Policy> = None;
    // Inside a property element of the current policy (its value is the last property).
    let mut field = false;
    let fail = |offset: usize, message: String| ImportError::Xmi {
        path: shown.to_string(),
        line: line_at(text, offset),
        message,
    };
    loop {
        let at = reader.buffer_position() as usize;
        let event = reader
            .read_event()
            .map_err(|e| fail(reader.error_position() as usize, e.to_string()))?;
        match event {
            Event::Start(e) if e.local_name().as_ref() == b"policy" => {
                let mut p = Policy {
                    project: project.to_string(),
                    name: String::new(),
                    kind: String::new(),
                    props: Vec::new(),
                    source: shown.to_string(),
                    line: line_at(text, at),
                };
                for a in e.attributes() {
                    let a = a.map_err(|e| fail(at, e.to_string()))?;
                    let value = a
                        .unescape_value()
                        .map_err(|e| fail(at, e.to_string()))?
                        .into_owned();
                    match a.key.local_name().as_ref() {
                        b"policyName" => p.name = value,
                        b"policyType" => p.kind = value,
                        _ => {}
                    }
                }
                current = Some(p);
            }
            Event::Start(e) if current.is_some() => {
                let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                if let Some(p) = current.as_mut() {
                    p.props.push((name, String::new()));
                    field = true;
                }
            }
            Event::Text(t) if field => {
                let value = t.xml_content().map_err(|e| fail(at, e.to_string()))?;
                if let Some((_, v)) = current.as_mut().and_then(|p| p.props.last_mut()) {
                    v.push_str(&value);
                }
            }
            Event::GeneralRef(r) if field => {
                // An entity in a value (`&amp;` in a JDBC URL): the predefined ones.
                let c = match r.as_ref() {
                    b"amp" => "&",
                    b"lt" => "<",
                    b"gt" => ">",
                    b"quot" => "\"",
                    b"apos" => "'",
                    _ => "",
                };
                if let Some((_, v)) = current.as_mut().and_then(|p| p.props.last_mut()) {
                    v.push_str(c);
                }
            }
            Event::End(e) if e.local_name().as_ref() == b"policy" => {
                if let Some(p) = current.take() {
                    if p.name.is_empty() {
                        return Err(fail(at, "a <policy> without policyName".into()));
                    }
                    out.push(p);
                }
                field = false;
            }
            Event::End(_) => {
                if field && let Some((_, v)) = current.as_mut().and_then(|p| p.props.last_mut()) {
                    *v = v.trim().to_string();
                }
                field = false;
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out)
}

/// What a policy becomes in Sluice.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A `datasources:` entry of sluice.yaml: its name and its lines.
    Datasource { name: String, lines: Vec<String> },
    /// Its values go to the nodes that name it (`policyUrl`).
    NodeValues,
    /// The embedded queue manager stands in for it.
    EmbeddedQueueManager,
    /// Nothing in Sluice takes it; why.
    Unmapped(String),
}

/// The libpq key for each JDBC property that has one.
const PG_KEYS: &[(&str, &str)] = &[
    ("serverName", "host"),
    ("portNumber", "port"),
    ("databaseName", "dbname"),
];

/// What `p` becomes; a JDBC provider names its datasource after the policy.
pub fn outcome(p: &Policy) -> Outcome {
    match p.kind.as_str() {
        "JDBCProviders" => {
            let db = p.get("databaseType");
            if !db.to_ascii_lowercase().starts_with("postgres") {
                return Outcome::Unmapped(format!(
                    "a {} database: Sluice reaches SQLite and PostgreSQL (a flow that names it \
                     gets an SQLite file until it is pointed at the database)",
                    if db.is_empty() { "JDBC" } else { db }
                ));
            }
            let conninfo: Vec<String> = PG_KEYS
                .iter()
                .filter(|(k, _)| !p.get(k).is_empty())
                .map(|(k, key)| format!("{key}={}", p.get(k)))
                .collect();
            let mut lines = vec![format!(
                "postgres: {}",
                crate::convert::scalar(&conninfo.join(" "))
            )];
            let identity = p.get("securityIdentity");
            if !identity.is_empty() {
                lines.push(format!(
                    "password_env: {}",
                    crate::convert::scalar(&env_name(identity))
                ));
            }
            Outcome::Datasource {
                name: p.name.clone(),
                lines,
            }
        }
        "MQTTSubscribe" | "MQTTPublish" | "Kafka" => Outcome::NodeValues,
        "MQEndpoint" => {
            if p.get("connection").eq_ignore_ascii_case("CLIENT") {
                Outcome::Unmapped(format!(
                    "a client connection to queue manager `{}` at {}:{}: Sluice's MQ nodes use \
                     the embedded queue manager",
                    p.get("destinationQueueManagerName"),
                    p.get("queueManagerHostname"),
                    p.get("listenerPortNumber")
                ))
            } else {
                Outcome::EmbeddedQueueManager
            }
        }
        other => Outcome::Unmapped(format!("Sluice has no {other} policies yet")),
    }
}

/// The environment variable a security identity's password is read from: `WAREHOUSE_ID` →
/// `WAREHOUSE_ID_PASSWORD`.
pub fn env_name(identity: &str) -> String {
    let base: String = identity
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{base}_PASSWORD")
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<policies>
  <policy policyType="JDBCProviders" policyName="Warehouse" policyTemplate="">
    <databaseName>stock</databaseName>
    <databaseType>PostgreSQL</databaseType>
    <serverName>db.example</serverName>
    <portNumber>5432</portNumber>
    <connectionUrlFormat>jdbc:postgresql://[serverName]:[portNumber]/[databaseName]?user=a&amp;password=b</connectionUrlFormat>
    <securityIdentity>whId</securityIdentity>
  </policy>
</policies>
"#;

    #[test]
    fn read_gives_each_policy_with_its_properties_and_line() {
        let ps = read("DefaultPolicies", "DefaultPolicies/w.policyxml", FILE).unwrap();
        assert_eq!(ps.len(), 1);
        let p = &ps[0];
        assert_eq!(
            (p.name.as_str(), p.kind.as_str(), p.line),
            ("Warehouse", "JDBCProviders", 3)
        );
        assert_eq!(p.get("serverName"), "db.example");
        assert_eq!(
            p.get("connectionUrlFormat"),
            "jdbc:postgresql://[serverName]:[portNumber]/[databaseName]?user=a&password=b"
        );
    }

    #[test]
    fn outcome_makes_a_postgres_datasource_of_a_postgres_jdbc_provider() {
        let ps = read("P", "w.policyxml", FILE).unwrap();
        assert_eq!(
            outcome(&ps[0]),
            Outcome::Datasource {
                name: "Warehouse".into(),
                lines: vec![
                    "postgres: 'host=db.example port=5432 dbname=stock'".into(),
                    "password_env: WHID_PASSWORD".into()
                ]
            }
        );
    }

    #[test]
    fn outcome_reports_a_client_mq_endpoint_and_other_databases() {
        let text = FILE.replace("PostgreSQL", "DB2 Universal Database");
        let ps = read("P", "w.policyxml", &text).unwrap();
        assert!(matches!(outcome(&ps[0]), Outcome::Unmapped(r) if r.contains("DB2")));
        let mq = r#"<policies><policy policyType="MQEndpoint" policyName="Remote">
            <connection>CLIENT</connection><destinationQueueManagerName>QM1</destinationQueueManagerName>
            </policy></policies>"#;
        let ps = read("P", "m.policyxml", mq).unwrap();
        assert!(matches!(outcome(&ps[0]), Outcome::Unmapped(r) if r.contains("QM1")));
    }

    #[test]
    fn read_names_the_line_of_a_broken_file() {
        let e = read(
            "P",
            "bad.policyxml",
            "<policies>\n<policy policyName='x'>\n</nope>",
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("bad.policyxml:3:"), "{e}");
    }
}
