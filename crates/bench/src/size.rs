//! Message sizes as people write them: `2kB`, `20MB`, `6543`, `256b`, `2000kB`.
//!
//! Units are decimal (1 kB = 1000 bytes, 1 MB = 1,000,000 bytes) so that the
//! seeds' own mixed spellings agree with each other (`2000kB` and `2MB` name
//! the same test); `KiB` and `MiB` are accepted for binary sizes.

use std::fmt;

use crate::error::BenchError;

/// A message size in bytes, remembering how it was written for reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageSize {
    bytes: usize,
    label: String,
}

impl MessageSize {
    /// Parses `2kB`, `20 MB`, `6543`, `256b`, `2k`, `2KiB`.
    pub fn parse(text: &str) -> Result<Self, BenchError> {
        let bytes = parse_bytes(text).ok_or_else(|| BenchError::InvalidSize(text.to_string()))?;
        if bytes == 0 {
            return Err(BenchError::InvalidSize(text.to_string()));
        }
        Ok(MessageSize {
            bytes,
            label: text.trim().to_string(),
        })
    }

    /// A size given directly in bytes.
    pub fn from_bytes(bytes: usize) -> Self {
        MessageSize {
            bytes,
            label: bytes.to_string(),
        }
    }

    /// The size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The size as it was written (`20kB`).
    pub fn label(&self) -> &str {
        &self.label
    }
}

impl fmt::Display for MessageSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

/// Parses a size into bytes, or `None` when it is not a size.
pub fn parse_bytes(text: &str) -> Option<usize> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    if number.is_empty() {
        return None;
    }
    let multiplier: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" | "bytes" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        _ => return None,
    };
    let value: f64 = number.parse().ok()?;
    let bytes = (value * multiplier).round();
    if !bytes.is_finite() || bytes < 0.0 || bytes > usize::MAX as f64 {
        return None;
    }
    Some(bytes as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_bytes_accepts_seed_spellings() {
        assert_eq!(parse_bytes("2kB"), Some(2_000));
        assert_eq!(parse_bytes("2000kB"), Some(2_000_000));
        assert_eq!(parse_bytes("2MB"), Some(2_000_000));
        assert_eq!(parse_bytes("20 MB"), Some(20_000_000));
        assert_eq!(parse_bytes("256b"), Some(256));
        assert_eq!(parse_bytes("6543"), Some(6_543));
        assert_eq!(parse_bytes("2K"), Some(2_000));
        assert_eq!(parse_bytes("2KiB"), Some(2_048));
        assert_eq!(parse_bytes("1.5kB"), Some(1_500));
    }

    #[test]
    fn parse_bytes_rejects_garbage() {
        assert_eq!(parse_bytes("kB"), None);
        assert_eq!(parse_bytes("12 parsecs"), None);
        assert_eq!(parse_bytes(""), None);
        assert!(MessageSize::parse("0").is_err());
    }
}
