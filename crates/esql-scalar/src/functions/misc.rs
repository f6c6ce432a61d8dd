//! COALESCE, NULLIF, UUIDASCHAR and UUIDASBLOB.

use crate::compare;
use crate::error::ScalarError;
use crate::value::Value;

/// COALESCE(a, b, …): the first argument that is not NULL, or NULL.
pub fn coalesce(args: &[Value]) -> Value {
    args.iter()
        .find(|v| !v.is_null())
        .cloned()
        .unwrap_or(Value::Null)
}

/// NULLIF(a, b): NULL when `a = b`, otherwise `a`.
pub fn nullif(a: &Value, b: &Value) -> Result<Value, ScalarError> {
    Ok(match compare::equal(a, b)? {
        Some(true) => Value::Null,
        _ => a.clone(),
    })
}

/// UUIDASCHAR: a new random UUID as 36 characters, or the given 16-byte BLOB UUID
/// in that form.
pub fn uuid_as_char(source: Option<&Value>) -> Result<Value, ScalarError> {
    let id = match source {
        None => uuid::Uuid::new_v4(),
        Some(Value::Null) => return Ok(Value::Null),
        Some(Value::Blob(b)) => uuid::Uuid::from_slice(b)
            .map_err(|_| ScalarError::arg("UUIDASCHAR", 1, "a UUID BLOB has 16 bytes"))?,
        Some(other) => {
            return Err(ScalarError::arg(
                "UUIDASCHAR",
                1,
                format!("expected BLOB, not {}", other.type_name()),
            ));
        }
    };
    Ok(Value::from_string(id.hyphenated().to_string()))
}

/// UUIDASBLOB: a new random UUID as 16 bytes, or the given character UUID as bytes.
pub fn uuid_as_blob(source: Option<&Value>) -> Result<Value, ScalarError> {
    let id = match source {
        None => uuid::Uuid::new_v4(),
        Some(Value::Null) => return Ok(Value::Null),
        Some(Value::Character(s)) => uuid::Uuid::parse_str(s.trim())
            .map_err(|_| ScalarError::arg("UUIDASBLOB", 1, format!("'{s}' is not a UUID")))?,
        Some(other) => {
            return Err(ScalarError::arg(
                "UUIDASBLOB",
                1,
                format!("expected CHARACTER, not {}", other.type_name()),
            ));
        }
    };
    Ok(Value::from_bytes(id.as_bytes().to_vec()))
}

/// BASE64ENCODE(s): the base64 text of a BLOB, of a CHARACTER string's UTF-8 bytes, or of a
/// BIT string whose length is a multiple of 8.
pub fn base64_encode(source: &Value) -> Result<Value, ScalarError> {
    use base64::Engine as _;
    let bytes: Vec<u8> = match source {
        Value::Null => return Ok(Value::Null),
        Value::Blob(b) => b.to_vec(),
        Value::Character(c) => c.as_bytes().to_vec(),
        Value::Bit(b) => b.to_bytes().ok_or_else(|| {
            ScalarError::arg(
                "BASE64ENCODE",
                1,
                "a BIT string must have a multiple of 8 bits",
            )
        })?,
        other => {
            return Err(ScalarError::arg(
                "BASE64ENCODE",
                1,
                format!("expected BLOB, CHARACTER or BIT, not {}", other.type_name()),
            ));
        }
    };
    Ok(Value::from_string(
        base64::engine::general_purpose::STANDARD.encode(bytes),
    ))
}

/// BASE64DECODE(s): the bytes that base64 text (CHARACTER, or a BLOB of its UTF-8 bytes) stands
/// for.
pub fn base64_decode(source: &Value) -> Result<Value, ScalarError> {
    use base64::Engine as _;
    let text: &[u8] = match source {
        Value::Null => return Ok(Value::Null),
        Value::Character(c) => c.as_bytes(),
        Value::Blob(b) => b,
        other => {
            return Err(ScalarError::arg(
                "BASE64DECODE",
                1,
                format!("expected CHARACTER, not {}", other.type_name()),
            ));
        }
    };
    // Encoded text is often wrapped in lines (MIME); the line breaks carry nothing.
    let compact: Vec<u8> = text
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(&compact)
        .map(|b| Value::Blob(b.into()))
        .map_err(|e| ScalarError::arg("BASE64DECODE", 1, format!("not base64 text: {e}")))
}

/// SLEEP(ms): waits `ms` milliseconds (none when not positive) and returns TRUE.
pub fn sleep(ms: &Value) -> Result<Value, ScalarError> {
    let ms = match ms {
        Value::Null => return Ok(Value::Null),
        Value::Integer(i) => *i,
        other => {
            return Err(ScalarError::arg(
                "SLEEP",
                1,
                format!("expected INTEGER milliseconds, not {}", other.type_name()),
            ));
        }
    };
    if ms > 0 {
        std::thread::sleep(std::time::Duration::from_millis(ms as u64));
    }
    Ok(Value::Boolean(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalesce_and_nullif() {
        assert_eq!(
            coalesce(&[Value::Null, Value::Integer(2), Value::Integer(3)]),
            Value::Integer(2)
        );
        assert_eq!(coalesce(&[Value::Null]), Value::Null);
        assert_eq!(
            nullif(&Value::Integer(1), &Value::Integer(1)).unwrap(),
            Value::Null
        );
        assert_eq!(
            nullif(&Value::Integer(1), &Value::Integer(2)).unwrap(),
            Value::Integer(1)
        );
        assert_eq!(
            nullif(&Value::Integer(1), &Value::Null).unwrap(),
            Value::Integer(1)
        );
    }

    #[test]
    fn uuids_convert_between_forms() {
        let Value::Character(c) = uuid_as_char(None).unwrap() else {
            panic!("CHARACTER expected")
        };
        assert_eq!(c.len(), 36);
        let blob = uuid_as_blob(Some(&Value::Character(c.clone()))).unwrap();
        assert_eq!(uuid_as_char(Some(&blob)).unwrap(), Value::Character(c));
        let Value::Blob(b) = uuid_as_blob(None).unwrap() else {
            panic!("BLOB expected")
        };
        assert_eq!(b.len(), 16);
        assert!(uuid_as_blob(Some(&Value::from_text("nope"))).is_err());
        assert!(uuid_as_char(Some(&Value::from_bytes(vec![1u8]))).is_err());
    }

    #[test]
    fn base64_round_trips_blobs_and_rejects_bad_text() {
        let blob = Value::Blob(bytes::Bytes::from_static(b"Hello"));
        let text = base64_encode(&blob).unwrap();
        assert_eq!(text, Value::from_text("SGVsbG8="));
        assert_eq!(base64_decode(&text).unwrap(), blob);
        assert_eq!(base64_encode(&Value::Null).unwrap(), Value::Null);
        assert!(base64_decode(&Value::from_text("a*b")).is_err());
        assert!(base64_encode(&Value::Integer(1)).is_err());
    }

    #[test]
    fn sleep_returns_true_when_given_milliseconds() {
        assert_eq!(sleep(&Value::Integer(0)).unwrap(), Value::Boolean(true));
        assert!(sleep(&Value::from_text("1")).is_err());
    }
}
