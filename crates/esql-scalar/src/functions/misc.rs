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
}
