//! Settling in-doubt transactions at start, before any input node starts: every transaction a
//! coordinated flow left prepared in a PostgreSQL datasource is committed when the queue
//! manager recorded the decision to commit it, and rolled back when it did not (presumed
//! abort). The protocol is in `sluice_qm`'s `indoubt` module and docs/databases.md.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Value, json};
use sluice_node_api::DatasourceDef;
use sluice_qm::QueueManager;

/// What recovery did, for the log and the admin health report.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Report {
    /// Prepared transactions committed (a decision named them).
    pub committed: usize,
    /// Prepared transactions rolled back (no decision named them).
    pub rolled_back: usize,
    /// Decisions forgotten once settled.
    pub decisions: usize,
    /// What could not be settled, and why: those transactions stay prepared (and their
    /// decisions kept) until a start that reaches them.
    pub unsettled: Vec<String>,
}

impl Report {
    /// The report as the admin API's health answer shows it.
    pub fn to_json(&self) -> Value {
        json!({
            "committed": self.committed,
            "rolled_back": self.rolled_back,
            "decisions_forgotten": self.decisions,
            "unsettled": self.unsettled,
        })
    }
}

/// Settle every transaction this queue manager coordinated and left in doubt in `datasources`.
pub fn recover(qm: &QueueManager, datasources: &BTreeMap<String, DatasourceDef>) -> Report {
    let mut report = Report::default();
    if !qm.coordinated_before() {
        return report;
    }
    let (decisions, prefix) = match (qm.decisions(), qm.xid_prefix()) {
        (Ok(d), Ok(p)) => (d, p.to_string()),
        (Err(e), _) | (_, Err(e)) => {
            tracing::error!(error = %e, "Cannot read the commit decisions; prepared transactions are left in doubt.");
            report.unsettled.push(format!("the queue manager: {e}"));
            return report;
        }
    };
    let commit: HashSet<&str> = decisions
        .iter()
        .flat_map(|d| d.xids.iter().map(String::as_str))
        .collect();
    for (name, def) in datasources {
        let DatasourceDef::Postgres {
            conninfo,
            password_env,
        } = def
        else {
            continue;
        };
        let password = password_env.as_ref().and_then(|v| std::env::var(v).ok());
        let settled = sluice_db::Registry::global()
            .postgres(name, conninfo, password.as_deref())
            .and_then(|ds| {
                for xid in ds.prepared(&prefix)? {
                    let decided = commit.contains(xid.as_str());
                    if ds.finish_prepared(&xid, decided)? {
                        if decided {
                            report.committed += 1;
                        } else {
                            report.rolled_back += 1;
                        }
                        tracing::info!(datasource = %name, %xid, outcome = if decided { "committed" } else { "rolled back" }, "Settled an in-doubt transaction.");
                    }
                }
                Ok(())
            });
        if let Err(e) = settled {
            tracing::error!(datasource = %name, error = %e, "Cannot settle the in-doubt transactions of a datasource; they stay prepared until a later start.");
            report.unsettled.push(format!("datasource {name}: {e}"));
        }
    }
    if report.unsettled.is_empty() {
        for d in &decisions {
            match qm.forget_decision(d.id) {
                Ok(()) => report.decisions += 1,
                Err(e) => tracing::warn!(error = %e, "Cannot forget a settled commit decision."),
            }
        }
    }
    if report != Report::default() {
        tracing::info!(
            committed = report.committed,
            rolled_back = report.rolled_back,
            decisions = report.decisions,
            unsettled = report.unsettled.len(),
            "Recovered coordinated transactions."
        );
    }
    report
}
