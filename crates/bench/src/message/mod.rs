//! The seeds' SaleList test message (seeds/000 Appendix C) at any size and in
//! any of the representations the seeds' tests used.
//!
//! A message is made by repeating the SaleList structure, as the seeds did,
//! until one more repetition would pass the target; the remaining bytes are
//! then made up exactly — by adding words to the descriptions of the last
//! repetitions in the text formats, by a length-prefixed filler in the fixed
//! layout — so every message is the target size to the byte.

pub mod content;
pub mod writers;

use std::fmt;
use std::str::FromStr;

use crate::error::BenchError;
use content::{FILLER_WORDS, Rng, SaleList};

/// A representation of the SaleList content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Generic XML, white space removed.
    Xml,
    /// The same content as JSON.
    Json,
    /// XML inside a SOAP 1.1 envelope, as the seeds' SOAP tests sent it.
    Soap,
    /// SOAP with Attachments: a `multipart/related` body whose root part is a SOAP 1.1
    /// SaleRequest envelope and whose attachment is the `xml` message.
    Swa,
    /// Fixed-length records (the seeds' CWF form).
    Fixed,
    /// Comma-separated fields, one line per SaleList (the seeds' TDS form).
    Delimited,
    /// An HL7 v2 order message: segments ended by carriage returns, fields by `|`, components
    /// by `^` (the seeds' HL7 TDS case).
    Hl7,
    /// A SWIFT MT543 (deliver against payment): header blocks, then the text block's
    /// `:TAG:value` fields (the seeds' SWIFT TDS case).
    Swift,
}

impl Format {
    /// Every format, in the order reports list them.
    pub const ALL: [Format; 8] = [
        Format::Xml,
        Format::Json,
        Format::Soap,
        Format::Swa,
        Format::Fixed,
        Format::Delimited,
        Format::Hl7,
        Format::Swift,
    ];

    /// The name used on the command line and in suites.
    pub fn name(self) -> &'static str {
        match self {
            Format::Xml => "xml",
            Format::Json => "json",
            Format::Soap => "soap",
            Format::Swa => "swa",
            Format::Fixed => "fixed",
            Format::Delimited => "delimited",
            Format::Hl7 => "hl7",
            Format::Swift => "swift",
        }
    }

    /// The Content-Type an HTTP client sends with this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Xml => "application/xml",
            Format::Json => "application/json",
            Format::Soap => "text/xml; charset=utf-8",
            Format::Swa => writers::SWA_CONTENT_TYPE,
            Format::Fixed | Format::Delimited | Format::Hl7 | Format::Swift => {
                "application/octet-stream"
            }
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = BenchError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        Format::ALL
            .into_iter()
            .find(|f| f.name() == lower)
            .or(match lower.as_str() {
                "cwf" => Some(Format::Fixed),
                "tds" | "csv" => Some(Format::Delimited),
                _ => None,
            })
            .ok_or_else(|| BenchError::UnknownFormat(s.to_string()))
    }
}

/// Generates a message of exactly `target` bytes in `format`; the same
/// `seed` always gives the same bytes.
pub fn generate(format: Format, target: usize, seed: u64) -> Result<Vec<u8>, BenchError> {
    let mut rng = Rng::new(seed);
    let mut scratch = Vec::with_capacity(4096);
    let mut lists: Vec<SaleList> = Vec::new();
    let mut body_len = 0usize;
    loop {
        let next = content::sale_list(lists.len(), &mut rng);
        scratch.clear();
        writers::write_sale_list(format, lists.len(), &next, &mut scratch);
        let with_next = envelope_len(format, lists.len() + 1) + body_len + scratch.len();
        if with_next > target {
            if lists.is_empty() {
                return Err(BenchError::SizeTooSmall {
                    format: format.name().to_string(),
                    target,
                    minimum: with_next,
                });
            }
            break;
        }
        body_len += scratch.len();
        lists.push(next);
    }
    let count = lists.len();
    let gap = target - (envelope_len(format, count) + body_len);
    let filler = if format == Format::Fixed {
        gap
    } else {
        stretch(&mut lists, gap);
        0
    };
    let mut out = Vec::with_capacity(target);
    writers::write_start(format, count, &mut out);
    for (index, list) in lists.iter().enumerate() {
        writers::write_sale_list(format, index, list, &mut out);
    }
    writers::write_end(format, filler, &mut out);
    if out.len() != target {
        return Err(BenchError::Internal(format!(
            "generated {} bytes for a {target}-byte {format} message",
            out.len()
        )));
    }
    Ok(out)
}

/// The bytes of the envelope around `count` repetitions (without filler).
fn envelope_len(format: Format, count: usize) -> usize {
    let mut buf = Vec::with_capacity(1024);
    writers::write_start(format, count, &mut buf);
    writers::write_end(format, 0, &mut buf);
    buf.len()
}

/// Roughly how many bytes one description grows by at least, so that a
/// small gap lengthens a few descriptions by some words rather than many
/// by a lone space.
const STRETCH_STEP: usize = 24;

/// Lengthens the descriptions of the last repetitions by `extra` bytes in
/// total, spread over as many descriptions as the gap allows.
fn stretch(lists: &mut [SaleList], extra: usize) {
    if extra == 0 {
        return;
    }
    let mut descriptions: Vec<&mut String> = lists
        .iter_mut()
        .rev()
        .flat_map(|list| list.invoices.iter_mut().rev())
        .flat_map(|invoice| invoice.items.iter_mut().rev())
        .map(|item| &mut item.description)
        .collect();
    let count = (extra / STRETCH_STEP).clamp(1, descriptions.len().max(1));
    let base = extra / count;
    for (index, description) in descriptions.iter_mut().take(count).enumerate() {
        // The remainder goes to the first ones, one byte each.
        let share = base + usize::from(index < extra % count);
        let mut remaining = share;
        let mut word = index;
        while remaining > 0 {
            let next = FILLER_WORDS[word % FILLER_WORDS.len()];
            word += 1;
            // A space then the word; the last one is cut to fit exactly.
            description.push(' ');
            remaining -= 1;
            let take = next.len().min(remaining);
            description.push_str(&next[..take]);
            remaining -= take;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_parses_names_and_aliases() {
        assert_eq!("XML".parse::<Format>().ok(), Some(Format::Xml));
        assert_eq!("cwf".parse::<Format>().ok(), Some(Format::Fixed));
        assert!("yaml".parse::<Format>().is_err());
    }

    #[test]
    fn generate_hits_exact_size_for_every_format() {
        for format in Format::ALL {
            for target in [2_000, 2_048, 5_001, 20_000, 200_000] {
                let message = generate(format, target, 1);
                assert_eq!(
                    message.map(|m| m.len()).ok(),
                    Some(target),
                    "{format} {target}"
                );
            }
        }
    }

    #[test]
    fn generate_rejects_sizes_below_one_repetition() {
        let err = generate(Format::Soap, 100, 1);
        assert!(matches!(err, Err(BenchError::SizeTooSmall { .. })));
    }

    #[test]
    fn generate_is_deterministic_and_seed_dependent() {
        let a = generate(Format::Json, 20_000, 5).ok();
        let b = generate(Format::Json, 20_000, 5).ok();
        let c = generate(Format::Json, 20_000, 6).ok();
        assert!(a.is_some());
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
