//! What a workspace holds besides its flows, as the project takes it: the schemas' message
//! types, the policies nodes name, and the queues, datasources and brokers of sluice.yaml.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::convert::scalar;
use crate::policies::{self, Outcome, Policy};
use crate::{ImportError, Summary, io, table, xmi};

/// The `schemaLocation`s a schema includes or imports.
pub(crate) fn schema_locations(text: &str) -> Vec<String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut out = Vec::new();
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e))
                if matches!(e.local_name().as_ref(), b"include" | b"import") =>
            {
                out.extend(
                    e.attributes()
                        .flatten()
                        .find(|a| a.key.as_ref() == b"schemaLocation")
                        .and_then(|a| a.unescape_value().ok().map(|v| v.into_owned())),
                );
            }
            Ok(Event::Eof) | Err(_) => break,
            Ok(_) => {}
        }
    }
    out
}

/// The names of a schema's global elements (the `xs:element`s directly under `xs:schema`).
pub(crate) fn global_elements(text: &str) -> Vec<String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut depth = 0usize;
    let mut out = Vec::new();
    loop {
        let (e, empty) = match reader.read_event() {
            Ok(Event::Start(e)) => (e, false),
            Ok(Event::Empty(e)) => (e, true),
            Ok(Event::End(_)) => {
                depth = depth.saturating_sub(1);
                continue;
            }
            Ok(Event::Eof) | Err(_) => break,
            Ok(_) => continue,
        };
        if depth == 1 && e.local_name().as_ref() == b"element" {
            let name = e
                .attributes()
                .flatten()
                .find(|a| a.key.as_ref() == b"name")
                .and_then(|a| a.unescape_value().ok().map(|v| v.into_owned()));
            out.extend(name);
        }
        if !empty {
            depth += 1;
        }
    }
    out
}

/// Nodes that name a policy (`policyUrl="{Project}:Name"`): an MQTT policy's values replace
/// the node's own, as the product does at run time; an MQ endpoint for the local queue manager
/// needs nothing; any other is a problem of the node, with why.
pub(crate) fn apply_policies(flow: &mut xmi::XmiFlow, policies: &[Policy]) {
    for n in &mut flow.nodes {
        let Some(at) = n.attrs.iter().position(|(k, _)| k == "policyUrl") else {
            continue;
        };
        let (_, url) = n.attrs.remove(at);
        if url.is_empty() {
            continue;
        }
        let (project, name) = match url.split_once(':') {
            Some((p, name)) => (p.trim_matches(['{', '}']), name),
            None => ("", url.as_str()),
        };
        let found = policies
            .iter()
            .find(|p| p.name == name && (project.is_empty() || p.project == project));
        let what = format!("policy `{url}`");
        let Some(p) = found else {
            n.problems
                .push((what, "no policy file of the workspace defines it".into()));
            continue;
        };
        match policies::outcome(p) {
            Outcome::NodeValues => {
                for (k, v) in &p.props {
                    match n.attrs.iter_mut().find(|(a, _)| a == k) {
                        Some((_, old)) => old.clone_from(v),
                        None => n.attrs.push((k.clone(), v.clone())),
                    }
                }
            }
            Outcome::EmbeddedQueueManager => {}
            Outcome::Unmapped(why) => n.problems.push((what, why)),
            Outcome::Datasource { .. } => n.problems.push((
                what,
                "a JDBC provider policy becomes a datasource; name it in the node's `datasource`"
                    .into(),
            )),
        }
    }
}

/// The queues MQ nodes name, the datasources ESQL nodes name, the brokers MQTT nodes name.
pub(crate) fn collect_resources(flow: &xmi::XmiFlow, summary: &mut Summary) {
    for n in &flow.nodes {
        if let xmi::NodeKind::Builtin(product) = &n.kind
            && table::node_type(product)
                .is_some_and(|t| t.props.iter().any(|p| p.conv == table::Conv::Broker))
        {
            let (name, lines) = table::broker(product, &n.attrs);
            summary.brokers.insert(name, lines);
        }
        // An MQOutput writing to a destination list or the reply-to queue ignores its queue.
        let elsewhere = n.attrs.iter().any(|(k, v)| {
            k == "destinationMode"
                && matches!(
                    v.as_str(),
                    "list" | "destinationList" | "reply" | "replyToQueue"
                )
        });
        for (k, v) in &n.attrs {
            if v.is_empty() {
                continue;
            }
            match k.as_str() {
                "queueName" if elsewhere => {}
                "queueName" => {
                    summary.queues.insert(v.clone());
                }
                "dataSource" => {
                    summary.datasources.insert(v.clone());
                }
                _ => {}
            }
        }
    }
}

/// sluice.yaml with the queues, datasources and brokers the flows name, and the datasources
/// the policies define. A datasource without a policy becomes an SQLite file under data/ until
/// the user points it at the database it stands for.
pub(crate) fn write_settings(to: &Path, summary: &Summary) -> Result<(), ImportError> {
    let path = to.join("sluice.yaml");
    let mut sources: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (_, o) in &summary.policies {
        if let Outcome::Datasource { name, lines } = o {
            sources.insert(name.clone(), lines.clone());
        }
    }
    for d in &summary.datasources {
        sources.entry(d.clone()).or_insert_with(|| {
            let file = d.replace(|c: char| !c.is_ascii_alphanumeric(), "_");
            vec![format!(
                "sqlite: data/{file}.sqlite   # point this at the real database"
            )]
        });
    }
    if path.exists()
        || (summary.queues.is_empty() && sources.is_empty() && summary.brokers.is_empty())
    {
        return Ok(());
    }
    if sources.values().flatten().any(|l| l.starts_with("sqlite:")) {
        let data = to.join("data");
        std::fs::create_dir_all(&data).map_err(io(&data))?;
    }
    let mut text = String::from(
        "# Written by `sluice import`: the queues, datasources and brokers of the imported flows.\n",
    );
    if !summary.queues.is_empty() {
        text.push_str("queues:\n");
        for q in &summary.queues {
            let _ = writeln!(text, "  - name: {}", scalar(q));
        }
    }
    if !sources.is_empty() {
        text.push_str("datasources:\n");
        for (name, lines) in &sources {
            let _ = writeln!(text, "  {}:", scalar(name));
            for l in lines {
                let _ = writeln!(text, "    {l}");
            }
        }
    }
    if !summary.brokers.is_empty() {
        text.push_str("brokers:\n");
        for (name, lines) in &summary.brokers {
            let _ = writeln!(text, "  {}:", scalar(name));
            for l in lines {
                let _ = writeln!(text, "    {l}");
            }
        }
    }
    std::fs::write(&path, text).map_err(io(&path))
}

/// The EXTERNAL variables each ESQL module of the workspace declares, by `SCHEMA.Module` (or
/// `Module` without a broker schema): its own and its schema's. A file that does not parse is
/// left out (its modules then take every user-defined property, as before).
pub(crate) fn esql_externals(files: &[(PathBuf, String)]) -> BTreeMap<String, Vec<String>> {
    use sluice_esql::syntax::ast::{DeclareModifier, Item};
    let externals = |items: &[Item]| -> Vec<String> {
        items
            .iter()
            .filter_map(|i| match i {
                Item::Declare(d) if d.modifier == Some(DeclareModifier::External) => {
                    Some(d.names.iter().map(|n| n.name.clone()))
                }
                _ => None,
            })
            .flatten()
            .collect()
    };
    let parsed: Vec<_> = files
        .iter()
        .filter_map(|(f, _)| std::fs::read_to_string(f).ok())
        .filter_map(|text| sluice_esql::syntax::parse(&text).ok())
        .collect();
    let schema_of = |f: &sluice_esql::syntax::ast::File| {
        f.schema.as_ref().map(|s| s.dotted()).unwrap_or_default()
    };
    let mut by_schema: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in &parsed {
        by_schema
            .entry(schema_of(f))
            .or_default()
            .extend(externals(&f.items));
    }
    let mut out = BTreeMap::new();
    for f in &parsed {
        let schema = schema_of(f);
        for item in &f.items {
            if let Item::Module(m) = item {
                let mut names = externals(&m.items);
                names.extend(by_schema.get(&schema).cloned().unwrap_or_default());
                let key = if schema.is_empty() {
                    m.name.name.clone()
                } else {
                    format!("{schema}.{}", m.name.name)
                };
                out.insert(key, names);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn esql_externals_gives_each_module_its_own_and_its_schemas() {
        let dir = std::env::temp_dir().join(format!("sluice-import-ext-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.esql");
        std::fs::write(
            &a,
            "BROKER SCHEMA shop\nDECLARE Region EXTERNAL CHARACTER 'EU';\n\
             CREATE COMPUTE MODULE Enrich\n DECLARE Rate EXTERNAL INTEGER 1;\n\
             CREATE FUNCTION Main() RETURNS BOOLEAN BEGIN RETURN TRUE; END;\nEND MODULE;\n\
             CREATE COMPUTE MODULE Plain\nCREATE FUNCTION Main() RETURNS BOOLEAN BEGIN RETURN TRUE; END;\nEND MODULE;\n",
        )
        .unwrap();
        let b = dir.join("b.esql");
        std::fs::write(
            &b,
            "CREATE FILTER MODULE Check\nCREATE FUNCTION Main() RETURNS BOOLEAN BEGIN RETURN TRUE; END;\nEND MODULE;\n",
        )
        .unwrap();
        let got = esql_externals(&[(a, "a.esql".into()), (b, "b.esql".into())]);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(got["shop.Enrich"], ["Rate", "Region"]);
        assert_eq!(got["shop.Plain"], ["Region"]);
        assert!(got["Check"].is_empty());
    }
}
