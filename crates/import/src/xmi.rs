//! Reading the product's message flow files (`.msgflow`, `.subflow`: XMI, as the toolkit saves
//! them) into what a flow holds: nodes, connections, promoted and user-defined properties.

use std::collections::HashMap;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use crate::ImportError;

/// What a node's `xmi:type` names.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    /// A built-in node type: `ComIbmMQInput` of `ComIbmMQInput.msgnode`.
    Builtin(String),
    /// A subflow, by the path its namespace gives (`com/example/Audit.subflow`).
    Subflow(String),
    /// A subflow's input terminal (`eflow:FCMSource`).
    Source,
    /// A subflow's output terminal (`eflow:FCMSink`).
    Sink,
    /// Anything else, as written.
    Other(String),
}

#[derive(Debug, Clone)]
pub struct XmiNode {
    pub id: String,
    pub kind: NodeKind,
    /// The node's name as the toolkit shows it (its `translation`).
    pub label: String,
    /// Every attribute but `xmi:*` and `location`, in file order.
    pub attrs: Vec<(String, String)>,
    /// Child elements of the node (Route's `filterTable` rows …): element name and attributes.
    pub children: Vec<(String, Vec<(String, String)>)>,
    /// What the import found about the node outside its file (a policy it names that does not
    /// map): what and why.
    pub problems: Vec<(String, String)>,
    pub line: usize,
}

#[derive(Debug, Clone)]
pub struct XmiConnection {
    pub source: String,
    pub source_terminal: String,
    pub target: String,
    pub target_terminal: String,
    pub line: usize,
}

/// A property the flow declares (`eStructuralFeatures`): promoted when `attributeLinks` tie it
/// to nodes' properties, user-defined otherwise.
#[derive(Debug, Clone, Default)]
pub struct XmiProperty {
    pub id: String,
    pub name: String,
    pub default: Option<String>,
    /// (node id, the node's property name) for each promoted target.
    pub targets: Vec<(String, String)>,
    pub user_defined: bool,
    pub line: usize,
}

#[derive(Debug, Clone, Default)]
pub struct XmiFlow {
    pub nodes: Vec<XmiNode>,
    pub connections: Vec<XmiConnection>,
    pub properties: Vec<XmiProperty>,
}

fn line_at(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

fn attrs_of(
    e: &BytesStart<'_>,
    path: &str,
    line: usize,
) -> Result<Vec<(String, String)>, ImportError> {
    let mut out = Vec::new();
    for a in e.attributes() {
        let a = a.map_err(|err| ImportError::Xmi {
            path: path.to_string(),
            line,
            message: err.to_string(),
        })?;
        let key = String::from_utf8_lossy(a.key.as_ref()).into_owned();
        let value = a
            .unescape_value()
            .map_err(|err| ImportError::Xmi {
                path: path.to_string(),
                line,
                message: err.to_string(),
            })?
            .into_owned();
        out.push((key, value));
    }
    Ok(out)
}

fn get<'a>(attrs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Read one flow file. `path` is for messages only.
pub fn read(path: &str, text: &str) -> Result<XmiFlow, ImportError> {
    let mut reader = Reader::from_str(text);
    let mut flow = XmiFlow::default();
    let mut namespaces: HashMap<String, String> = HashMap::new();
    // Open elements, innermost last, by local name.
    let mut stack: Vec<String> = Vec::new();
    let mut node: Option<XmiNode> = None;
    let mut promoted: Option<(String, Vec<String>)> = None;
    loop {
        let at = reader.buffer_position() as usize;
        let event = reader.read_event().map_err(|e| ImportError::Xmi {
            path: path.to_string(),
            line: line_at(text, reader.error_position() as usize),
            message: e.to_string(),
        })?;
        let (e, empty) = match &event {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) => {
                let name = stack.pop().unwrap_or_default();
                if name == "nodes"
                    && let Some(n) = node.take()
                {
                    flow.nodes.push(n);
                }
                if name == "attributeLinks" {
                    promoted = None;
                }
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        let line = line_at(text, at);
        let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
        let attrs = attrs_of(e, path, line)?;
        if stack.is_empty() {
            for (k, v) in &attrs {
                if let Some(prefix) = k.strip_prefix("xmlns:") {
                    namespaces.insert(prefix.to_string(), v.clone());
                }
            }
        }
        match name.as_str() {
            "nodes" if stack.last().is_some_and(|p| p == "composition") => {
                let ty = get(&attrs, "xmi:type").unwrap_or_default();
                let n = XmiNode {
                    id: get(&attrs, "xmi:id").unwrap_or_default().to_string(),
                    kind: kind_of(ty, &namespaces),
                    label: String::new(),
                    attrs: attrs
                        .iter()
                        .filter(|(k, _)| !k.starts_with("xmi:") && k != "location")
                        .cloned()
                        .collect(),
                    children: Vec::new(),
                    problems: Vec::new(),
                    line,
                };
                if empty {
                    flow.nodes.push(n);
                } else {
                    node = Some(n);
                }
            }
            "translation" if stack.last().is_some_and(|p| p == "nodes") => {
                if let Some(n) = node.as_mut() {
                    n.label = get(&attrs, "string")
                        .or_else(|| get(&attrs, "key"))
                        .unwrap_or_default()
                        .to_string();
                }
            }
            "connections" if stack.last().is_some_and(|p| p == "composition") => {
                flow.connections.push(XmiConnection {
                    source: get(&attrs, "sourceNode").unwrap_or_default().to_string(),
                    source_terminal: get(&attrs, "sourceTerminalName")
                        .unwrap_or_default()
                        .to_string(),
                    target: get(&attrs, "targetNode").unwrap_or_default().to_string(),
                    target_terminal: get(&attrs, "targetTerminalName")
                        .unwrap_or_default()
                        .to_string(),
                    line,
                });
            }
            "eStructuralFeatures" => flow.properties.push(XmiProperty {
                id: get(&attrs, "xmi:id").unwrap_or_default().to_string(),
                name: get(&attrs, "name").unwrap_or_default().to_string(),
                default: get(&attrs, "defaultValueLiteral").map(str::to_string),
                line,
                ..XmiProperty::default()
            }),
            "propertyDescriptor" => {
                if get(&attrs, "userDefined") == Some("true")
                    && let Some(id) = get(&attrs, "describedAttribute")
                    && let Some(p) = flow.properties.iter_mut().find(|p| p.id == id)
                {
                    p.user_defined = true;
                }
            }
            "attributeLinks" => {
                let prop = get(&attrs, "promotedAttribute")
                    .unwrap_or_default()
                    .to_string();
                let nodes = get(&attrs, "overriddenNodes")
                    .unwrap_or_default()
                    .split_whitespace()
                    .map(str::to_string)
                    .collect();
                promoted = Some((prop, nodes));
            }
            "overriddenAttribute" => {
                // `ComIbmMQInput.msgnode#Property.queueName`: the node's property.
                if let Some((prop, nodes)) = &promoted
                    && let Some(href) = get(&attrs, "href")
                    && let Some((_, attr)) = href.rsplit_once("#Property.")
                    && let Some(p) = flow.properties.iter_mut().find(|p| &p.id == prop)
                {
                    for n in nodes {
                        p.targets.push((n.clone(), attr.to_string()));
                    }
                }
            }
            _ if stack.last().is_some_and(|p| p == "nodes") => {
                if let Some(n) = node.as_mut() {
                    n.children.push((name.clone(), attrs));
                }
            }
            _ => {}
        }
        if !empty {
            stack.push(name);
        }
    }
    Ok(flow)
}

fn kind_of(ty: &str, namespaces: &HashMap<String, String>) -> NodeKind {
    match ty {
        "eflow:FCMSource" => return NodeKind::Source,
        "eflow:FCMSink" => return NodeKind::Sink,
        _ => {}
    }
    let prefix = ty.rsplit_once(':').map_or(ty, |(p, _)| p);
    let uri = namespaces.get(prefix).map_or(prefix, String::as_str);
    if let Some(builtin) = uri.strip_suffix(".msgnode") {
        // The connector nodes (MQTT, Kafka …) share their file names and differ by folder.
        if builtin.starts_with("com/ibm/connector/") {
            return NodeKind::Builtin(builtin.replace('/', "_"));
        }
        NodeKind::Builtin(builtin.rsplit('/').next().unwrap_or(builtin).to_string())
    } else if uri.ends_with(".subflow") || uri.ends_with(".msgflow") {
        NodeKind::Subflow(uri.to_string())
    } else {
        NodeKind::Other(ty.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLOW: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<ecore:EPackage xmi:version="2.0" xmlns:xmi="http://www.omg.org/XMI" xmlns:ComIbmMQInput.msgnode="ComIbmMQInput.msgnode" xmlns:ComIbmCompute.msgnode="ComIbmCompute.msgnode" xmlns:audit_Audit.subflow="audit/Audit.subflow" xmlns:ecore="http://www.eclipse.org/emf/2002/Ecore" xmlns:eflow="http://www.ibm.com/wbi/2005/eflow" xmlns:utility="http://www.ibm.com/wbi/2005/eflow_utility" nsURI="Orders.msgflow" nsPrefix="Orders.msgflow">
  <eClassifiers xmi:type="eflow:FCMComposite" name="FCMComposite_1">
    <eSuperTypes href="http://www.ibm.com/wbi/2005/eflow#//FCMBlock"/>
    <eStructuralFeatures xmi:type="ecore:EAttribute" xmi:id="Property.inQueue" name="inQueue" defaultValueLiteral="ORDERS.IN">
      <eType xmi:type="ecore:EDataType" href="http://www.eclipse.org/emf/2002/Ecore#//EString"/>
    </eStructuralFeatures>
    <eStructuralFeatures xmi:type="ecore:EAttribute" xmi:id="Property.Region" name="Region" defaultValueLiteral="EU"/>
    <composition>
      <nodes xmi:type="ComIbmMQInput.msgnode:FCMComposite_1" xmi:id="FCMComposite_1_1" location="20,20" queueName="IN" messageDomainProperty="XMLNSC">
        <translation xmi:type="utility:ConstantString" string="MQ Input"/>
      </nodes>
      <nodes xmi:type="ComIbmCompute.msgnode:FCMComposite_1" xmi:id="FCMComposite_1_2" location="120,20" computeExpression="esql://routine/shop#Enrich.Main">
        <translation xmi:type="utility:ConstantString" string="Enrich"/>
      </nodes>
      <nodes xmi:type="audit_Audit.subflow:FCMComposite_1" xmi:id="FCMComposite_1_3" location="220,20">
        <translation xmi:type="utility:ConstantString" string="Audit"/>
      </nodes>
      <nodes xmi:type="eflow:FCMSink" xmi:id="OutTerminal.Done" location="320,20">
        <translation xmi:type="utility:TranslatableString" key="Done" bundleName="Orders" pluginId="x"/>
      </nodes>
      <connections xmi:type="eflow:FCMConnection" xmi:id="FCMConnection_1" targetNode="FCMComposite_1_2" sourceNode="FCMComposite_1_1" sourceTerminalName="OutTerminal.out" targetTerminalName="InTerminal.in"/>
    </composition>
    <propertyOrganizer>
      <propertyDescriptor groupName="Group.Basic" configurable="true" describedAttribute="Property.inQueue">
        <propertyName xmi:type="utility:TranslatableString" key="Property.inQueue"/>
        <propertyDescriptor groupName="Group.Basic" configurable="true" userDefined="true" describedAttribute="Property.Region">
          <propertyName xmi:type="utility:TranslatableString" key="Property.Region"/>
        </propertyDescriptor>
      </propertyDescriptor>
    </propertyOrganizer>
    <attributeLinks promotedAttribute="Property.inQueue" overriddenNodes="FCMComposite_1_1">
      <overriddenAttribute href="ComIbmMQInput.msgnode#Property.queueName"/>
    </attributeLinks>
  </eClassifiers>
</ecore:EPackage>
"#;

    #[test]
    fn read_gives_nodes_connections_and_properties_when_the_file_is_well_formed() {
        let f = read("Orders.msgflow", FLOW).unwrap();
        assert_eq!(f.nodes.len(), 4);
        assert_eq!(f.nodes[0].kind, NodeKind::Builtin("ComIbmMQInput".into()));
        assert_eq!(f.nodes[0].label, "MQ Input");
        assert_eq!(f.nodes[0].line, 10);
        assert!(
            f.nodes[0]
                .attrs
                .contains(&("queueName".into(), "IN".into()))
        );
        assert_eq!(
            f.nodes[2].kind,
            NodeKind::Subflow("audit/Audit.subflow".into())
        );
        assert_eq!(f.nodes[3].kind, NodeKind::Sink);
        assert_eq!(f.nodes[3].label, "Done");
        assert_eq!(f.connections.len(), 1);
        assert_eq!(f.connections[0].source_terminal, "OutTerminal.out");
        let q = &f.properties[0];
        assert_eq!(
            q.targets,
            vec![("FCMComposite_1_1".into(), "queueName".into())]
        );
        assert!(!q.user_defined);
        assert!(f.properties[1].user_defined);
        assert_eq!(f.properties[1].default.as_deref(), Some("EU"));
    }

    #[test]
    fn read_names_the_line_when_the_xml_is_malformed() {
        let broken = FLOW.replace("</composition>", "</compositio>");
        match read("Orders.msgflow", &broken) {
            Err(ImportError::Xmi { line, .. }) => assert!(line > 20, "{line}"),
            other => panic!("{other:?}"),
        }
    }

    proptest::proptest! {
        /// Any damage to a flow file gives a flow or an error, and converting what was read
        /// never panics either.
        #[test]
        fn read_never_panics_when_the_file_is_damaged(
            cuts in proptest::collection::vec((0usize..4000, 0usize..40, "[<>\"=/: a-zA-Z._#&;]{0,6}"), 1..6)
        ) {
            let mut text = FLOW.to_string();
            for (at, len, insert) in cuts {
                let at = at.min(text.len());
                let end = (at + len).min(text.len());
                if text.is_char_boundary(at) && text.is_char_boundary(end) {
                    text.replace_range(at..end, &insert);
                }
            }
            if let Ok(f) = read("damaged.msgflow", &text) {
                let _ = crate::convert::convert("damaged", &f, false, &crate::Alone);
                let _ = crate::convert::convert("damaged", &f, true, &crate::Alone);
            }
        }
    }
}
