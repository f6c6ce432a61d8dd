//! The seed reports' figures, embedded from `seed-figures/*.csv`, and the
//! lookup of the row that matches one of our tests so reports can show the
//! seeds' figure beside ours.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::error::BenchError;
use crate::size::parse_bytes;

/// Every embedded seed figures file, by name.
pub const FILES: [(&str, &str); 8] = [
    (
        "wmb8_part2.csv",
        include_str!("../seed-figures/wmb8_part2.csv"),
    ),
    (
        "wmb8_scaling.csv",
        include_str!("../seed-figures/wmb8_scaling.csv"),
    ),
    (
        "wmb8_usecases.csv",
        include_str!("../seed-figures/wmb8_usecases.csv"),
    ),
    (
        "wmb8_memory.csv",
        include_str!("../seed-figures/wmb8_memory.csv"),
    ),
    (
        "iib10_zlinux_usecases.csv",
        include_str!("../seed-figures/iib10_zlinux_usecases.csv"),
    ),
    (
        "ace11_containers.csv",
        include_str!("../seed-figures/ace11_containers.csv"),
    ),
    (
        "mq91_peaks.csv",
        include_str!("../seed-figures/mq91_peaks.csv"),
    ),
    ("mq91_tls.csv", include_str!("../seed-figures/mq91_tls.csv")),
];

/// Identifies the seed row a test corresponds to: a file, plus column
/// values to match (`section`, `test`, `scenario`, `platform`, …). Message
/// size, persistence and instances are matched automatically when the file
/// has those columns and the reference does not name them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct SeedRef {
    /// The CSV file name, for example `wmb8_part2.csv`.
    pub file: String,
    /// Column values the row must have.
    #[serde(flatten)]
    pub columns: BTreeMap<String, String>,
}

/// The seeds' figures for one test.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedFigure {
    /// Where the figure comes from (`wmb8_part2.csv: MQ Nodes / Reading…`).
    pub source: String,
    /// Messages (or round trips) per second.
    pub rate: Option<f64>,
    /// % CPU busy.
    pub cpu_busy_pct: Option<f64>,
    /// CPU ms per message by the seeds' formula.
    pub cpu_ms_per_msg: Option<f64>,
    /// Server CPU µs per message measured directly (seeds/002).
    pub cpu_us_per_msg: Option<f64>,
}

/// One parsed seed CSV file.
#[derive(Debug, Clone)]
pub struct SeedTable {
    /// The file name.
    pub name: &'static str,
    /// Column names.
    pub header: Vec<String>,
    /// Rows, each as long as the header.
    pub rows: Vec<Vec<String>>,
}

impl SeedTable {
    /// Loads an embedded file by name.
    pub fn load(name: &str) -> Result<SeedTable, BenchError> {
        let (name, text) = FILES
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| BenchError::UnknownSeedFile(name.to_string()))?;
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let header = lines.next().map(parse_csv_line).unwrap_or_default();
        let rows = lines
            .map(parse_csv_line)
            .filter(|r| r.len() == header.len())
            .collect();
        Ok(SeedTable { name, header, rows })
    }

    fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    fn number(&self, row: &[String], names: &[&str]) -> Option<f64> {
        names
            .iter()
            .find_map(|n| self.column(n))
            .and_then(|i| row[i].trim().parse().ok())
    }
}

/// Finds the seed figure for a test of `size_bytes`, `persistent`, `instances`.
pub fn lookup(
    seed: &SeedRef,
    size_bytes: usize,
    persistent: bool,
    instances: Option<u32>,
) -> Result<Option<SeedFigure>, BenchError> {
    let table = SeedTable::load(&seed.file)?;
    let mut filters: Vec<(usize, String)> = Vec::new();
    for (column, value) in &seed.columns {
        let index = table.column(column).ok_or_else(|| {
            BenchError::InvalidSetting(format!(
                "seed file {} has no column `{column}` (columns: {})",
                table.name,
                table.header.join(", ")
            ))
        })?;
        filters.push((index, value.clone()));
    }
    let implicit = |name: &str| {
        table
            .column(name)
            .filter(|_| !seed.columns.contains_key(name))
    };
    let size_col = implicit("msg_size");
    let persistent_col = implicit("persistent");
    let instances_col = implicit("instances").or_else(|| implicit("count"));
    let wanted_persistence = if persistent { "FULL" } else { "NONE" };
    let found = table.rows.iter().find(|row| {
        filters
            .iter()
            .all(|(i, v)| row[*i].trim().eq_ignore_ascii_case(v.trim()))
            && size_col.is_none_or(|i| same_size(&row[i], size_bytes))
            && persistent_col.is_none_or(|i| row[i].trim().eq_ignore_ascii_case(wanted_persistence))
            && instances_col
                .zip(instances)
                .is_none_or(|(i, n)| row[i].trim() == n.to_string())
    });
    Ok(found.map(|row| {
        let label: Vec<String> = seed
            .columns
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        SeedFigure {
            source: format!("{}: {}", table.name, label.join(", ")),
            rate: table.number(
                row,
                &[
                    "msg_rate",
                    "msg_rate_per_s",
                    "msgs_per_sec",
                    "max_round_trips_per_s",
                    "max_rate",
                ],
            ),
            cpu_busy_pct: table.number(row, &["cpu_busy_pct", "cpu_pct"]),
            cpu_ms_per_msg: table.number(row, &["cpu_ms_per_msg"]),
            cpu_us_per_msg: table.number(row, &["cpu_cost_us_per_msg"]),
        }
    }))
}

/// Seed sizes are as printed (`2kB`, `2000kB`, `2k`); within 5 % counts as
/// the same test.
fn same_size(printed: &str, bytes: usize) -> bool {
    parse_bytes(printed).is_some_and(|seed| {
        let (a, b) = (seed as f64, bytes as f64);
        (a - b).abs() <= 0.05 * a.max(b)
    })
}

/// Splits one CSV line, honouring double quotes and `""` escapes.
pub fn parse_csv_line(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    fields.push(field);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed(file: &str, columns: &[(&str, &str)]) -> SeedRef {
        SeedRef {
            file: file.into(),
            columns: columns
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn every_embedded_file_parses_with_rows() {
        for (name, _) in FILES {
            let table = SeedTable::load(name).expect("embedded file");
            assert!(!table.rows.is_empty(), "{name}");
        }
    }

    #[test]
    fn parse_csv_line_handles_quoted_commas() {
        let fields = parse_csv_line(r#"a,"b, c",d"#);
        assert_eq!(fields, vec!["a", "b, c", "d"]);
        assert_eq!(parse_csv_line(r#""x""y""#), vec![r#"x"y"#]);
    }

    #[test]
    fn lookup_matches_part2_row_by_size_and_persistence() {
        let s = seed(
            "wmb8_part2.csv",
            &[
                ("section", "MQ Nodes"),
                ("test", "Reading and writing to an MQ Queue"),
            ],
        );
        let f = lookup(&s, 2_000, false, Some(1))
            .ok()
            .flatten()
            .expect("row");
        assert_eq!(f.rate, Some(17716.8));
        assert_eq!(f.cpu_ms_per_msg, Some(0.1));
        // 2000kB is the seeds' spelling of 2 MB.
        let big = lookup(&s, 2_000_000, false, Some(1))
            .ok()
            .flatten()
            .expect("row");
        assert_eq!(big.rate, Some(312.0));
    }

    #[test]
    fn lookup_reads_ace_direct_cpu_cost() {
        let s = seed(
            "ace11_containers.csv",
            &[
                ("platform", "Linux"),
                ("scenario", "HTTP BLOB Echo"),
                ("product", "ACE 11.0.0.4"),
                ("concurrency", "1"),
            ],
        );
        let f = lookup(&s, 2_000, false, Some(1))
            .ok()
            .flatten()
            .expect("row");
        assert_eq!(f.rate, Some(2761.20));
        assert_eq!(f.cpu_us_per_msg, Some(363.13));
    }

    #[test]
    fn lookup_matches_scaling_rows_by_instances() {
        let s = seed("wmb8_scaling.csv", &[("scaling_kind", "instances")]);
        let f = lookup(&s, 2_000, false, Some(3))
            .ok()
            .flatten()
            .expect("row");
        assert_eq!(f.rate, Some(4566.3));
    }

    #[test]
    fn lookup_rejects_unknown_files_and_columns() {
        assert!(lookup(&seed("nope.csv", &[]), 1, false, Some(1)).is_err());
        assert!(
            lookup(
                &seed("wmb8_part2.csv", &[("colour", "red")]),
                1,
                false,
                Some(1)
            )
            .is_err()
        );
        let none = lookup(
            &seed("wmb8_part2.csv", &[("section", "Nothing")]),
            2_000,
            false,
            None,
        );
        assert!(matches!(none, Ok(None)));
    }
}
