//! The C shim behind a safe interface.

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::Path;
use std::ptr::NonNull;
use std::sync::Once;

use crate::{MAX_VIOLATIONS, ValidationError, ViolationKind, XsdError};

#[repr(C)]
struct XmlSchema {
    _private: [u8; 0],
}

type SinkFn = extern "C" fn(
    sink: *mut c_void,
    level: c_int,
    line: c_int,
    column: c_int,
    file: *const c_char,
    path: *const c_char,
    message: *const c_char,
);

unsafe extern "C" {
    fn sluice_xsd_init();
    fn sluice_xsd_compile(
        path: *const c_char,
        sink_fn: SinkFn,
        sink: *mut c_void,
    ) -> *mut XmlSchema;
    fn sluice_xsd_compile_with(
        path: *const c_char,
        docs: *const MemoryDoc,
        count: c_int,
        sink_fn: SinkFn,
        sink: *mut c_void,
    ) -> *mut XmlSchema;
    fn sluice_xsd_free(schema: *mut XmlSchema);
    fn sluice_xsd_validate(
        schema: *mut XmlSchema,
        buf: *const c_char,
        len: c_int,
        sink_fn: SinkFn,
        sink: *mut c_void,
    ) -> c_int;
}

/// The shim's `sluice_xsd_doc`: a schema document served from memory under a path.
#[repr(C)]
struct MemoryDoc {
    url: *const c_char,
    text: *const c_char,
}

// libxml2's xmlErrorLevel.
const XML_ERR_WARNING: c_int = 1;
const XML_ERR_FATAL: c_int = 3;

/// One diagnostic as libxml2 gave it.
struct Diagnostic {
    level: c_int,
    line: u32,
    column: u32,
    file: String,
    path: String,
    message: String,
}

#[derive(Default)]
struct Sink {
    diagnostics: Vec<Diagnostic>,
    dropped: usize,
}

fn text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: libxml2 and the shim pass NUL-terminated strings that live for the callback.
    let s = unsafe { CStr::from_ptr(p) }.to_string_lossy();
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Called by the shim for each diagnostic. Must not unwind into C.
extern "C" fn collect(
    sink: *mut c_void,
    level: c_int,
    line: c_int,
    column: c_int,
    file: *const c_char,
    path: *const c_char,
    message: *const c_char,
) {
    if sink.is_null() {
        return;
    }
    // SAFETY: `sink` is the `&mut Sink` the Rust caller passed for the duration of the call;
    // libxml2 calls back on the calling thread only.
    let sink = unsafe { &mut *sink.cast::<Sink>() };
    if level == XML_ERR_WARNING {
        return;
    }
    if sink.diagnostics.len() >= MAX_VIOLATIONS {
        sink.dropped += 1;
        return;
    }
    sink.diagnostics.push(Diagnostic {
        level,
        line: u32::try_from(line).unwrap_or(0),
        column: u32::try_from(column).unwrap_or(0),
        file: text(file),
        path: text(path),
        message: text(message),
    });
}

fn init() {
    static INIT: Once = Once::new();
    // SAFETY: xmlInitParser, once per process, before any validation.
    INIT.call_once(|| unsafe { sluice_xsd_init() });
}

/// A compiled schema. It is never changed after compilation; validations only read it.
pub(crate) struct Schema(NonNull<XmlSchema>);

// SAFETY: libxml2 does not modify a compiled xmlSchema while validating; each validation has
// its own xmlSchemaValidCtxt and parser (see shim.c), so the schema may be used from any
// thread and by several at once. It is freed once, in Drop, when no one holds it.
unsafe impl Send for Schema {}
unsafe impl Sync for Schema {}

impl Drop for Schema {
    fn drop(&mut self) {
        // SAFETY: the pointer came from xmlSchemaParse and is freed only here.
        unsafe { sluice_xsd_free(self.0.as_ptr()) };
    }
}

impl Schema {
    pub(crate) fn compile(path: &Path) -> Result<Schema, XsdError> {
        Schema::compile_with(path, &[])
    }

    /// Compile the schema at `path`, reading the documents `memory` (path, text) from memory
    /// rather than from files.
    pub(crate) fn compile_with(path: &Path, memory: &[(&Path, &str)]) -> Result<Schema, XsdError> {
        init();
        let file = path.display().to_string();
        let c_string = |bytes: &[u8], what: &Path| {
            CString::new(bytes).map_err(|_| XsdError::Compile {
                file: what.display().to_string(),
                line: 0,
                message: "the path or the schema contains a NUL byte".into(),
            })
        };
        let c_path = c_string(path.as_os_str().as_encoded_bytes(), path)?;
        let mut owned = Vec::with_capacity(memory.len());
        for (p, text) in memory {
            owned.push((
                c_string(p.as_os_str().as_encoded_bytes(), p)?,
                c_string(text.as_bytes(), p)?,
            ));
        }
        let docs: Vec<MemoryDoc> = owned
            .iter()
            .map(|(u, t)| MemoryDoc {
                url: u.as_ptr(),
                text: t.as_ptr(),
            })
            .collect();
        let count = c_int::try_from(docs.len()).map_err(|_| XsdError::Compile {
            file: file.clone(),
            line: 0,
            message: "too many schema documents".into(),
        })?;
        let mut sink = Sink::default();
        // SAFETY: the path and every document's strings are NUL-terminated and live in `owned`
        // until the call returns; the shim reads `docs` only during the call, on this thread;
        // `sink` outlives the call, which calls `collect` only while it runs.
        let schema = unsafe {
            if docs.is_empty() {
                sluice_xsd_compile(c_path.as_ptr(), collect, (&raw mut sink).cast::<c_void>())
            } else {
                sluice_xsd_compile_with(
                    c_path.as_ptr(),
                    docs.as_ptr(),
                    count,
                    collect,
                    (&raw mut sink).cast::<c_void>(),
                )
            }
        };
        match NonNull::new(schema) {
            Some(s) => Ok(Schema(s)),
            None => Err(compile_error(&file, sink)),
        }
    }

    pub(crate) fn validate(&self, document: &[u8]) -> Result<(), Vec<ValidationError>> {
        init();
        let Ok(len) = c_int::try_from(document.len()) else {
            return Err(vec![ValidationError {
                kind: ViolationKind::NotWellFormed,
                line: 0,
                column: 0,
                path: String::new(),
                message: format!(
                    "the document is {} bytes, more than the validator reads (2 GiB)",
                    document.len()
                ),
            }]);
        };
        let mut sink = Sink::default();
        // SAFETY: the schema is alive (self); the buffer is `len` bytes; `sink` outlives the
        // call.
        let rc = unsafe {
            sluice_xsd_validate(
                self.0.as_ptr(),
                document.as_ptr().cast::<c_char>(),
                len,
                collect,
                (&raw mut sink).cast::<c_void>(),
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let mut errors: Vec<ValidationError> = sink
            .diagnostics
            .into_iter()
            .map(|d| ValidationError {
                kind: if d.level == XML_ERR_FATAL {
                    ViolationKind::NotWellFormed
                } else {
                    ViolationKind::Invalid
                },
                line: d.line,
                column: d.column,
                path: d.path,
                message: d.message,
            })
            .collect();
        if rc < 0 || errors.is_empty() {
            errors.push(ValidationError {
                kind: ViolationKind::Invalid,
                line: 0,
                column: 0,
                path: String::new(),
                message: "the validator could not run (out of memory)".into(),
            });
        }
        if sink.dropped > 0
            && let Some(last) = errors.last_mut()
        {
            last.message
                .push_str(&format!(" (and {} more violations)", sink.dropped));
        }
        Err(errors)
    }
}

/// The compile diagnostics as one error: the first one's file and line, every message.
fn compile_error(file: &str, sink: Sink) -> XsdError {
    let first = sink.diagnostics.first();
    let message = if sink.diagnostics.is_empty() {
        "the schema does not compile".to_string()
    } else {
        sink.diagnostics
            .iter()
            .enumerate()
            .map(|(i, d)| {
                if i == 0 || d.file.is_empty() {
                    d.message.clone()
                } else {
                    format!("{}:{}: {}", d.file, d.line, d.message)
                }
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    XsdError::Compile {
        file: first
            .filter(|d| !d.file.is_empty())
            .map_or_else(|| file.to_string(), |d| d.file.clone()),
        line: first.map_or(0, |d| d.line),
        message,
    }
}
