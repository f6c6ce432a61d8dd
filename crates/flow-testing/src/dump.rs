//! A readable, stable dump of a message tree for expected-output files: one element per line,
//! indented by depth, with its value and type. Field types other than the generic name, value and
//! name-value are shown in hex so that domain-specific kinds (XML attributes…) are pinned too.

use std::fmt::Write;

use sluice_node_api::Message;
use sluice_tree::{NodeId, Tree, Value, field_type};

/// What the dump hides.
#[derive(Clone, Debug, Default)]
pub struct DumpOptions {
    /// Element names whose values vary from run to run (ids, times); shown as `<masked>`.
    pub masked_fields: Vec<String>,
}

impl DumpOptions {
    fn masks(&self, name: &str) -> bool {
        self.masked_fields.iter().any(|m| m == name)
    }
}

/// Root, LocalEnvironment, Environment (when given) and ExceptionList, each parsed in full.
pub fn dump_message(msg: &Message, environment: Option<&Tree>, opts: &DumpOptions) -> String {
    let mut out = String::new();
    out.push_str(&dump_tree(&msg.root, opts));
    out.push_str(&dump_tree(&msg.local_environment, opts));
    if let Some(env) = environment {
        out.push_str(&dump_tree(env, opts));
    }
    out.push_str(&dump_tree(&msg.exception_list, opts));
    out
}

/// Every element of `tree`, parsing what is not parsed yet (on a copy: the caller's tree keeps
/// its on-demand state). A parse error is shown where it stopped the dump.
pub fn dump_tree(tree: &Tree, opts: &DumpOptions) -> String {
    let mut t = tree.clone();
    let root = t.root();
    let parse_error = t.expand_all(root).err();
    let mut out = String::new();
    write_element(&t, root, 0, opts, &mut out);
    if let Some(e) = parse_error {
        let _ = writeln!(out, "  !! the rest does not parse: {e}");
    }
    out
}

fn write_element(t: &Tree, id: NodeId, depth: usize, opts: &DumpOptions, out: &mut String) {
    // An explicit stack rather than recursion: message trees can be deep.
    let mut stack = vec![(id, depth)];
    while let Some((id, depth)) = stack.pop() {
        let _ = write!(out, "{:indent$}", "", indent = depth * 2);
        let ns = t.namespace_bytes(id);
        if !ns.is_empty() {
            let _ = write!(out, "{{{}}}", String::from_utf8_lossy(ns));
        }
        let name = String::from_utf8_lossy(t.name_bytes(id)).into_owned();
        out.push_str(&name);
        let ft = t.field_type(id);
        if ![field_type::NAME, field_type::NAME_VALUE, 0].contains(&ft) {
            let _ = write!(out, " [0x{ft:08X}]");
        }
        let v = t.value(id);
        if !v.is_null() {
            if opts.masks(&name) {
                out.push_str(" = <masked>");
            } else {
                let _ = write!(out, " = {} : {}", render_value(t, v), v.type_name());
            }
        }
        if t.is_pending(id) {
            out.push_str(" (unparsed)");
        }
        out.push('\n');
        let mut kids = Vec::new();
        let mut c = t.peek_first_child(id);
        while let Some(k) = c {
            kids.push((k, depth + 1));
            c = t.peek_next_sibling(k);
        }
        stack.extend(kids.into_iter().rev());
    }
}

/// A value as ESQL literal-like text; control characters escaped so that one element stays on
/// one line.
fn render_value(t: &Tree, v: Value) -> String {
    match v {
        Value::Character(s) => format!("'{}'", escape(&t.str(s))),
        Value::Decimal(s) => t.str(s).into_owned(),
        Value::Blob(b) => {
            let mut s = String::from("X'");
            for byte in t.bytes(b) {
                let _ = write!(s, "{byte:02x}");
            }
            s.push('\'');
            s
        }
        Value::Bit(b) => format!("B'{}'", t.str(b)),
        Value::Boolean(b) => if b { "TRUE" } else { "FALSE" }.to_string(),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => format!("{f:?}"),
        // Dates, times and intervals in their ISO text, which the masker recognises when they
        // vary between runs (a file's LastModified).
        Value::Date(_)
        | Value::Time(_)
        | Value::GmtTime(_)
        | Value::Timestamp(_)
        | Value::GmtTimestamp(_)
        | Value::Interval { .. } => {
            let mut text = Vec::new();
            sluice_tree::text_form::write_value(t, v, &mut text);
            String::from_utf8_lossy(&text).into_owned()
        }
        other => format!("{other:?}"),
    }
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}
