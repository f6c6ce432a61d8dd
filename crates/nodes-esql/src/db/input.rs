//! DatabaseInput: polls an event table and starts an invocation per event, as the product's
//! node does with its Java methods — here declared as SQL. Each poll runs `event_query`
//! (readEvents); for each event `message_query` selects the changed row (buildMessage), the
//! message is propagated, and `end_event` deletes or marks the event (endEvent), all in one
//! unit of work with whatever the flow did on the same datasource. A failure rolls it all
//! back: the event stays and is tried again at the next poll; after `backout_threshold`
//! failed attempts `backout_event` (when given) takes it out of the way in a unit of work of
//! its own.
//!
//! `message_query`, `end_event` and `backout_event` name the event's columns as `:column`
//! markers, bound as parameters.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use sluice_db::{Datasource, SqlValue, UnitId};
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, ExampleInput, ExampleOutcome, InputNode, InstanceRunner,
    Invocation, Message, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminals,
    properties,
};
use sluice_nodes_core::terminals::{InputOutputs, end_unit_of_work, own_failure, propagate_out};
use sluice_tree::{NodeId, Text, Tree, Value, field_type};

use super::query::{OwnedRow, OwnedValue, database_error, fetch, tree_value};
use crate::host::work_key;
use crate::work::DatabaseWork;

properties! {
    /// DatabaseInput's properties.
    pub struct DatabaseInputProps {
        /// The database: a datasource named in sluice.yaml's `datasources`, else an SQLite
        /// file (relative to the project).
        datasource: String,
        /// readEvents: the SELECT that lists waiting events, oldest first; its columns are the
        /// event's (`:column` in the other statements).
        event_query: String,
        /// buildMessage: the SELECT of the changed row, with `:column` markers for the event's
        /// values; its first row's columns become the body's elements. Without it the event
        /// row itself is the body.
        message_query: Option<String>,
        /// endEvent: the DELETE or UPDATE that ends the event, with `:column` markers; run in
        /// the flow's unit of work after the flow succeeded. When it changes no row another
        /// instance ended the event first, and this invocation's work is rolled back.
        end_event: String,
        /// How long to wait before polling again when a poll found fewer than `max_events`.
        polling_interval_ms: u64 = "5000",
        /// The most events one poll takes.
        max_events: u32 = "100",
        /// The body's root element (XMLNSC): `<Event><column>value</column>…</Event>`.
        root_element: String = "Event",
        /// Failed attempts of one event before `backout_event` runs.
        backout_threshold: u32 = "3",
        /// The DELETE or UPDATE (with `:column` markers) that takes an event that keeps
        /// failing out of the way; without it such an event is tried at every poll.
        backout_event: Option<String>,
    }
}

pub static DATABASE_INPUT: NodeSpec = NodeSpec {
    type_name: "DatabaseInput",
    summary: "Polls an event table with `event_query`; for each event selects the changed row with \
              `message_query`, propagates it as the body, and ends the event with `end_event`, all in one \
              unit of work; a failure rolls back and the event is retried, then backed out.",
    inputs: &[],
    outputs: InputOutputs::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "Each new row of `orders`, recorded in `order_events`, starts the flow",
        properties: "datasource: SAMPLES, event_query: 'SELECT event_id, order_id FROM order_events ORDER BY event_id', \
                     message_query: 'SELECT id, amount FROM orders WHERE id = :order_id', \
                     end_event: 'DELETE FROM order_events WHERE event_id = :event_id'",
        esql: "",
        input: ExampleInput::xml("<Event><id>7</id><amount>1500</amount></Event>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[(
            "out",
            "<Event><id>7</id><amount>1500</amount></Event>",
        )]),
        runs: Runs::No("only an event in its table starts it."),
    }],
    builder: NodeBuilder::of::<DatabaseInputProps>(),
};

/// SQL with `:name` markers turned into `?` markers, and the names in order. Quoted text and
/// PostgreSQL's `::type` casts are left alone.
#[derive(Debug, PartialEq)]
struct Marked {
    sql: String,
    names: Vec<String>,
}

fn marked(src: &str) -> Marked {
    let mut sql = String::with_capacity(src.len());
    let mut names = Vec::new();
    let mut chars = src.char_indices().peekable();
    let mut quote: Option<char> = None;
    while let Some((_, c)) = chars.next() {
        if let Some(q) = quote {
            sql.push(c);
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                sql.push(c);
            }
            ':' if chars.peek().is_some_and(|&(_, n)| n == ':') => {
                sql.push_str("::");
                chars.next();
            }
            ':' if chars
                .peek()
                .is_some_and(|&(_, n)| n.is_ascii_alphabetic() || n == '_') =>
            {
                let mut name = String::new();
                while let Some(&(_, n)) = chars.peek() {
                    if n.is_ascii_alphanumeric() || n == '_' {
                        name.push(n);
                        chars.next();
                    } else {
                        break;
                    }
                }
                names.push(name);
                sql.push('?');
            }
            _ => sql.push(c),
        }
    }
    Marked { sql, names }
}

impl Marked {
    /// The values of the event's columns the markers name.
    fn parameters(&self, event: &OwnedRow) -> Result<Vec<SqlValue>, NodeError> {
        self.names
            .iter()
            .map(|n| {
                event
                    .columns
                    .iter()
                    .position(|c| c.eq_ignore_ascii_case(n))
                    .and_then(|i| event.values.get(i))
                    .map(OwnedValue::to_param)
                    .ok_or_else(|| {
                        NodeError::recoverable(format!(
                            "`:{n}` names no column of the event (its columns: {})",
                            event.columns.join(", ")
                        ))
                    })
            })
            .collect()
    }
}

impl BuildNode for DatabaseInputProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        if self.max_events == 0 {
            return Err(ConfigError::property("max_events", "must be at least 1"));
        }
        if self.datasource == sluice_db::IN_MEMORY {
            return Err(ConfigError::property(
                "datasource",
                "an in-memory database has no events for anyone to record",
            ));
        }
        let db = crate::program::database(b, Some(&self.datasource))?
            .ok_or_else(|| ConfigError::property("datasource", "a datasource is required"))?;
        Ok(NodeImpl::Input(Arc::new(DatabaseInput {
            db,
            event_query: self.event_query,
            message_query: self.message_query.as_deref().map(marked),
            end_event: marked(&self.end_event),
            backout_event: self.backout_event.as_deref().map(marked),
            interval: Duration::from_millis(self.polling_interval_ms),
            max_events: self.max_events as usize,
            root_element: self.root_element,
            backout_threshold: self.backout_threshold.max(1),
            failures: Mutex::new(HashMap::new()),
            label: b.label.to_string(),
            flow: b.flow.to_string(),
        })))
    }
}

struct DatabaseInput {
    db: Arc<Datasource>,
    event_query: String,
    message_query: Option<Marked>,
    end_event: Marked,
    backout_event: Option<Marked>,
    interval: Duration,
    max_events: usize,
    root_element: String,
    backout_threshold: u32,
    /// Failed attempts by event (its values, as text), shared by the instances.
    failures: Mutex<HashMap<String, u32>>,
    label: String,
    flow: String,
}

/// What became of one event.
#[derive(Debug, PartialEq)]
enum Outcome {
    Done,
    /// Another instance ended it first.
    Taken,
    Failed,
}

/// The event's identity for counting its failures.
fn event_key(event: &OwnedRow) -> String {
    format!("{:?}", event.values)
}

/// `name` folder under `parent` holding one name-value element per column of `row`.
fn row_folder(
    t: &mut Tree,
    parent: NodeId,
    name: &str,
    row: Option<&OwnedRow>,
) -> Result<(), NodeError> {
    let name = t.alloc_text(name.as_bytes());
    let folder = t.create_last_child(parent, field_type::NAME, name, Value::Null)?;
    if let Some(row) = row {
        for (c, v) in row.columns.iter().zip(&row.values) {
            let n = t.alloc_text(c.as_bytes());
            let v = tree_value(t, v.as_ref());
            t.create_last_child(folder, field_type::NAME_VALUE, n, v)?;
        }
    }
    Ok(())
}

impl DatabaseInput {
    /// The message for an event: its row as the XMLNSC body, the event in
    /// `LocalEnvironment.DatabaseInput.Event`.
    fn message(&self, event: &OwnedRow, row: Option<&OwnedRow>) -> Result<Message, NodeError> {
        let mut msg = Message::new();
        let r = msg.root.root();
        let body = msg.root.create_last_child(
            r,
            field_type::NAME,
            Text::from_static("XMLNSC"),
            Value::Null,
        )?;
        row_folder(&mut msg.root, body, &self.root_element, row)?;
        let le = &mut msg.local_environment;
        let lr = le.root();
        let folder = le.create_last_child(
            lr,
            field_type::NAME,
            Text::from_static("DatabaseInput"),
            Value::Null,
        )?;
        row_folder(le, folder, "Event", Some(event))?;
        Ok(msg)
    }

    /// buildMessage, propagate and endEvent in one unit of work.
    fn process(&self, runner: &mut dyn InstanceRunner, event: &OwnedRow) -> Outcome {
        let mut inv = Invocation::new();
        let joined = inv.unit_of_work.get_or_join(&work_key(&self.db), || {
            let unit = UnitId::next();
            self.db
                .begin(unit)
                .map(|_| DatabaseWork::new(self.db.clone(), unit))
        });
        if let Err(error) = joined {
            tracing::error!(%error, flow = %self.flow, node = %self.label, "Failed to begin a unit of work for an event.");
            return Outcome::Failed;
        }
        let built = match &self.message_query {
            None => self.message(event, Some(event)),
            Some(q) => q
                .parameters(event)
                .and_then(|p| fetch(&self.db, &q.sql, &p, 1))
                .and_then(|rows| self.message(event, rows.first())),
        };
        let result = match built {
            Ok(mut msg) => propagate_out(runner, &mut inv, &mut msg),
            Err(e) => match self.message(event, None) {
                Ok(mut msg) => {
                    own_failure(runner, &mut inv, &mut msg, e, &self.label, "DatabaseInput")
                }
                Err(_) => Err(e),
            },
        };
        let mut taken = false;
        let result = result.and_then(|()| {
            let p = self.end_event.parameters(event)?;
            let conn = self.db.statement().map_err(database_error)?;
            let n = conn
                .execute(&self.end_event.sql, &p)
                .map_err(database_error)?;
            if n == 0 {
                taken = true;
                return Err(NodeError::recoverable(
                    "the event was ended by another instance",
                ));
            }
            Ok(())
        });
        if taken {
            inv.unit_of_work.rollback();
            return Outcome::Taken;
        }
        match end_unit_of_work(&mut inv, result) {
            Ok(()) => Outcome::Done,
            Err(error) => {
                tracing::error!(%error, flow = %self.flow, node = %self.label, "Failed to process a database event; it is rolled back and will be retried.");
                Outcome::Failed
            }
        }
    }

    /// Count a failed attempt; at the threshold run `backout_event` in a unit of work of its own.
    fn failed(&self, event: &OwnedRow) {
        let key = event_key(event);
        let attempts = {
            let mut f = self.failures.lock();
            let n = f.entry(key.clone()).or_insert(0);
            *n += 1;
            *n
        };
        if attempts < self.backout_threshold {
            return;
        }
        let Some(backout) = &self.backout_event else {
            return;
        };
        let unit = UnitId::next();
        let r = backout.parameters(event).and_then(|p| {
            self.db.begin(unit).map_err(database_error)?;
            let conn = self.db.statement().map_err(database_error)?;
            conn.execute(&backout.sql, &p).map_err(database_error)?;
            drop(conn);
            self.db.commit(unit).map_err(database_error)
        });
        match r {
            Ok(()) => {
                self.failures.lock().remove(&key);
                tracing::warn!(flow = %self.flow, node = %self.label, attempts, "Backed out a database event that kept failing.");
            }
            Err(error) => {
                self.db.rollback(unit);
                tracing::error!(%error, flow = %self.flow, node = %self.label, "Failed to back out a database event.");
            }
        }
    }

    /// readEvents: the waiting events, at most `max_events`.
    fn poll(&self) -> Result<Vec<OwnedRow>, NodeError> {
        fetch(&self.db, &self.event_query, &[], self.max_events)
    }
}

impl InputNode for DatabaseInput {
    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        while !runner.stop().is_stopped() {
            let events = match self.poll() {
                Ok(e) => e,
                Err(error) => {
                    tracing::error!(%error, flow = %self.flow, node = %self.label, "Failed to read database events.");
                    Vec::new()
                }
            };
            let mut failed_any = false;
            for event in &events {
                if runner.stop().is_stopped() {
                    return;
                }
                match self.process(runner, event) {
                    Outcome::Done => {
                        self.failures.lock().remove(&event_key(event));
                    }
                    Outcome::Taken => {}
                    Outcome::Failed => {
                        failed_any = true;
                        self.failed(event);
                    }
                }
            }
            // A full poll may have left events behind: poll again at once, unless some failed
            // (they would be retried in a tight loop).
            if (events.len() < self.max_events || failed_any) && runner.stop().sleep(self.interval)
            {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marked_replaces_named_markers_when_outside_quotes_and_casts() {
        let m = marked("UPDATE t SET s = ':done', at = now()::text WHERE id = :id AND k = :Key_2");
        assert_eq!(
            m.sql,
            "UPDATE t SET s = ':done', at = now()::text WHERE id = ? AND k = ?"
        );
        assert_eq!(m.names, ["id", "Key_2"]);
    }

    #[test]
    fn parameters_fail_when_a_marker_names_no_event_column() {
        let m = marked("DELETE FROM e WHERE id = :nope");
        let event = OwnedRow {
            columns: Arc::from(vec!["id".to_string()]),
            values: vec![OwnedValue::Integer(1)],
        };
        let e = m.parameters(&event).expect_err("no such column");
        assert!(e.exception.text.contains("`:nope` names no column"), "{e}");
    }
}
