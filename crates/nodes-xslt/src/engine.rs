//! libxslt behind a safe interface: compile a stylesheet, apply it to a document's bytes, get the
//! serialised result.
//!
//! libxml2 documents and compiled stylesheets are not `Send`: a compiled stylesheet interns its
//! names in a dictionary that the transformations using it extend, so a [`Stylesheet`] stays on
//! the thread that compiled it (the raw pointer keeps the type `!Send` and `!Sync`). Callers keep
//! one copy per thread (see `cache.rs`).
//!
//! Diagnostics: libxml2 and libxslt report through printf-style callbacks; the C shim formats
//! them and hands the text to [`sluice_xslt_collect`], which appends it to a buffer of the calling
//! thread, so concurrent compilations and transformations never mix their messages.

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::Path;
use std::ptr::{self, NonNull};
use std::sync::Once;

use crate::XsltError;

#[repr(C)]
struct XmlDoc {
    _private: [u8; 0],
}
#[repr(C)]
struct XsltStylesheet {
    _private: [u8; 0],
}
#[repr(C)]
struct XsltTransformContext {
    _private: [u8; 0],
}
#[repr(C)]
struct XmlParserCtxt {
    _private: [u8; 0],
}
#[repr(C)]
struct XsltSecurityPrefs {
    _private: [u8; 0],
}

type SecurityCheck =
    unsafe extern "C" fn(*mut XsltSecurityPrefs, *mut XsltTransformContext, *const c_char) -> c_int;

unsafe extern "C" {
    fn xmlReadMemory(
        buffer: *const c_char,
        size: c_int,
        url: *const c_char,
        encoding: *const c_char,
        options: c_int,
    ) -> *mut XmlDoc;
    fn xmlFreeDoc(doc: *mut XmlDoc);
    fn xmlCtxtReadMemory(
        ctxt: *mut XmlParserCtxt,
        buffer: *const c_char,
        size: c_int,
        url: *const c_char,
        encoding: *const c_char,
        options: c_int,
    ) -> *mut XmlDoc;
    fn xmlFreeParserCtxt(ctxt: *mut XmlParserCtxt);
    fn xsltParseStylesheetDoc(doc: *mut XmlDoc) -> *mut XsltStylesheet;
    fn xsltFreeStylesheet(style: *mut XsltStylesheet);
    fn xsltNewTransformContext(
        style: *mut XsltStylesheet,
        doc: *mut XmlDoc,
    ) -> *mut XsltTransformContext;
    fn xsltFreeTransformContext(ctxt: *mut XsltTransformContext);
    fn xsltQuoteUserParams(ctxt: *mut XsltTransformContext, params: *const *const c_char) -> c_int;
    fn xsltApplyStylesheetUser(
        style: *mut XsltStylesheet,
        doc: *mut XmlDoc,
        params: *const *const c_char,
        output: *const c_char,
        profile: *mut c_void,
        ctxt: *mut XsltTransformContext,
    ) -> *mut XmlDoc;
    fn xsltSaveResultToString(
        out: *mut *mut u8,
        len: *mut c_int,
        result: *mut XmlDoc,
        style: *mut XsltStylesheet,
    ) -> c_int;
    fn xsltNewSecurityPrefs() -> *mut XsltSecurityPrefs;
    fn xsltSetSecurityPrefs(
        sec: *mut XsltSecurityPrefs,
        option: c_int,
        func: SecurityCheck,
    ) -> c_int;
    fn xsltSetCtxtSecurityPrefs(
        sec: *mut XsltSecurityPrefs,
        ctxt: *mut XsltTransformContext,
    ) -> c_int;
    fn xsltSecurityForbid(
        sec: *mut XsltSecurityPrefs,
        ctxt: *mut XsltTransformContext,
        value: *const c_char,
    ) -> c_int;

    fn sluice_xslt_init();
    fn sluice_xslt_thread_errors();
    fn sluice_xslt_error_count(style: *mut XsltStylesheet) -> c_int;
    fn sluice_xslt_failed(ctxt: *mut XsltTransformContext) -> c_int;
    fn sluice_xslt_method(style: *mut XsltStylesheet) -> *const c_char;
    fn sluice_xslt_encoding(style: *mut XsltStylesheet) -> *const c_char;
    fn sluice_xslt_free(p: *mut c_void);
    fn sluice_xslt_new_parser(style: *mut XsltStylesheet) -> *mut XmlParserCtxt;
    fn sluice_xslt_dict_size(style: *mut XsltStylesheet) -> usize;
}

// libxml2's parser options (parser.h).
const XML_PARSE_NOENT: c_int = 1 << 1;
const XML_PARSE_DTDLOAD: c_int = 1 << 2;
const XML_PARSE_DTDATTR: c_int = 1 << 3;
const XML_PARSE_NONET: c_int = 1 << 11;
const XML_PARSE_NOCDATA: c_int = 1 << 14;
/// Stylesheets are the project's own files: read them as xsltproc does (its
/// `XSLT_PARSE_OPTIONS`), so that a stylesheet behaves here as it does there.
const STYLESHEET_OPTIONS: c_int =
    XML_PARSE_NOENT | XML_PARSE_DTDLOAD | XML_PARSE_DTDATTR | XML_PARSE_NOCDATA;
/// Messages come from outside: no external DTD or entity is loaded (no XXE), nothing from the
/// network; CDATA becomes text, as XSLT's data model has it.
const MESSAGE_OPTIONS: c_int = XML_PARSE_NONET | XML_PARSE_NOCDATA;

// libxslt's security options (security.h).
const XSLT_SECPREF_WRITE_FILE: c_int = 2;
const XSLT_SECPREF_CREATE_DIRECTORY: c_int = 3;
const XSLT_SECPREF_READ_NETWORK: c_int = 4;
const XSLT_SECPREF_WRITE_NETWORK: c_int = 5;

thread_local! {
    static DIAGNOSTICS: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Called by the C shim with one formatted diagnostic. Must not unwind into C.
#[unsafe(no_mangle)]
extern "C" fn sluice_xslt_collect(text: *const c_char) {
    if text.is_null() {
        return;
    }
    // SAFETY: the shim passes a NUL-terminated buffer that lives for this call.
    let text = unsafe { CStr::from_ptr(text) }.to_string_lossy();
    let _ = DIAGNOSTICS.try_with(|d| {
        if let Ok(mut d) = d.try_borrow_mut()
            && d.len() < 64 * 1024
        {
            d.push_str(&text);
        }
    });
}

fn init() {
    static INIT: Once = Once::new();
    // SAFETY: the shim's initialisation takes no arguments; Once runs it exactly once.
    INIT.call_once(|| unsafe { sluice_xslt_init() });
    // SAFETY: sets this thread's libxml2 error callback; no arguments.
    unsafe { sluice_xslt_thread_errors() };
    take_diagnostics();
}

fn take_diagnostics() -> String {
    DIAGNOSTICS
        .try_with(|d| d.try_borrow_mut().map(|mut d| std::mem::take(&mut *d)))
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default()
}

/// The security preferences every transformation runs with: stylesheets may read files
/// (`document()`, imports) but not write files, create folders or use the network.
fn security() -> *mut XsltSecurityPrefs {
    struct Prefs(*mut XsltSecurityPrefs);
    // SAFETY: the preferences are written once, below, and only read afterwards.
    unsafe impl Send for Prefs {}
    unsafe impl Sync for Prefs {}
    static PREFS: std::sync::OnceLock<Prefs> = std::sync::OnceLock::new();
    PREFS
        .get_or_init(|| {
            // SAFETY: plain constructor and setters of libxslt; a null result is checked.
            unsafe {
                let sec = xsltNewSecurityPrefs();
                if !sec.is_null() {
                    for option in [
                        XSLT_SECPREF_WRITE_FILE,
                        XSLT_SECPREF_CREATE_DIRECTORY,
                        XSLT_SECPREF_READ_NETWORK,
                        XSLT_SECPREF_WRITE_NETWORK,
                    ] {
                        xsltSetSecurityPrefs(sec, option, xsltSecurityForbid);
                    }
                }
                Prefs(sec)
            }
        })
        .0
}

/// xsl:output's method, which decides how the result is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputMethod {
    Xml,
    Html,
    Text,
}

/// A compiled stylesheet, usable on the thread that compiled it.
pub struct Stylesheet {
    style: NonNull<XsltStylesheet>,
    /// The parser of the messages it transforms, sharing its dictionary; null when libxml2
    /// could not make one (messages are then parsed with a parser of their own).
    parser: *mut XmlParserCtxt,
    method: OutputMethod,
    encoding: Option<String>,
}

impl Drop for Stylesheet {
    fn drop(&mut self) {
        // SAFETY: we own the parser and the stylesheet (and through it its document); the
        // parser holds a reference on the stylesheet's dictionary, so it goes first.
        unsafe {
            if !self.parser.is_null() {
                xmlFreeParserCtxt(self.parser);
            }
            xsltFreeStylesheet(self.style.as_ptr())
        }
    }
}

/// Names a stylesheet's dictionary may gather from messages before the stylesheet's owner
/// should compile a fresh copy (see [`Stylesheet::is_worn`]): messages with ever new names must
/// not grow a long-lived dictionary without bound.
const MAX_DICTIONARY_NAMES: usize = 200_000;

fn c_text(p: *const c_char) -> Option<String> {
    // SAFETY: the shim returns either null or a string owned by the stylesheet.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

impl Stylesheet {
    /// Compile `source`; `path` is its location, against which xsl:include, xsl:import and
    /// `document()` resolve, and which diagnostics name.
    pub fn compile(source: &[u8], path: &Path) -> Result<Stylesheet, XsltError> {
        init();
        let compile_error = |diagnostics: String| XsltError::compile(path, diagnostics);
        let len = c_int::try_from(source.len())
            .map_err(|_| compile_error("the stylesheet is larger than 2 GB".into()))?;
        let url = CString::new(path.to_string_lossy().as_bytes())
            .map_err(|_| compile_error("the stylesheet's path contains a NUL byte".into()))?;
        // SAFETY: the buffer and URL outlive the call; libxml2 copies what it keeps.
        let doc = unsafe {
            xmlReadMemory(
                source.as_ptr().cast(),
                len,
                url.as_ptr(),
                ptr::null(),
                STYLESHEET_OPTIONS,
            )
        };
        if doc.is_null() {
            return Err(compile_error(take_diagnostics()));
        }
        // SAFETY: on success the stylesheet owns `doc`; on failure (null) we still own it.
        let style = unsafe { xsltParseStylesheetDoc(doc) };
        let Some(style) = NonNull::new(style) else {
            // SAFETY: not taken over by libxslt, freed once here.
            unsafe { xmlFreeDoc(doc) };
            return Err(compile_error(take_diagnostics()));
        };
        // SAFETY: `style` is a valid stylesheet from here on; the shim only reads its fields.
        let (errors, method, encoding) = unsafe {
            (
                sluice_xslt_error_count(style.as_ptr()),
                c_text(sluice_xslt_method(style.as_ptr())),
                c_text(sluice_xslt_encoding(style.as_ptr())),
            )
        };
        // SAFETY: a valid stylesheet; the parser is freed before it (Drop).
        let parser = unsafe { sluice_xslt_new_parser(style.as_ptr()) };
        let sheet = Stylesheet {
            style,
            parser,
            method: match method.as_deref() {
                Some("text") => OutputMethod::Text,
                Some("html") => OutputMethod::Html,
                _ => OutputMethod::Xml,
            },
            encoding,
        };
        let diagnostics = take_diagnostics();
        if errors > 0 {
            return Err(compile_error(diagnostics));
        }
        if !diagnostics.is_empty() {
            tracing::warn!(stylesheet = %path.display(), warnings = %diagnostics.trim_end(), "Stylesheet compiled with warnings.");
        }
        Ok(sheet)
    }

    /// Whether messages have filled the stylesheet's dictionary with so many names that the
    /// cache should compile a fresh copy.
    pub fn is_worn(&self) -> bool {
        // SAFETY: a valid stylesheet.
        unsafe { sluice_xslt_dict_size(self.style.as_ptr()) > MAX_DICTIONARY_NAMES }
    }

    pub fn method(&self) -> OutputMethod {
        self.method
    }

    /// xsl:output's encoding, when the stylesheet names one.
    pub fn encoding(&self) -> Option<&str> {
        self.encoding.as_deref()
    }

    /// Whether the result is UTF-8 text (the encoding the XMLNSC and JSON parsers read).
    pub fn writes_utf8(&self) -> bool {
        self.encoding
            .as_deref()
            .is_none_or(|e| e.eq_ignore_ascii_case("utf-8") || e.eq_ignore_ascii_case("utf8"))
    }

    /// Apply the stylesheet to the XML document in `input`, with string parameters (name,
    /// value), and return the result serialised as xsl:output says.
    pub fn transform(
        &self,
        input: &[u8],
        params: &[(String, String)],
    ) -> Result<Vec<u8>, XsltError> {
        init();
        let len = c_int::try_from(input.len()).map_err(|_| XsltError::Input {
            diagnostics: "the message is larger than 2 GB".into(),
        })?;
        let mut owned = Vec::with_capacity(params.len() * 2);
        for (name, value) in params {
            let bad = |what: &str| XsltError::Parameter {
                name: name.clone(),
                message: format!("its {what} contains a NUL character"),
            };
            owned.push(CString::new(name.as_str()).map_err(|_| bad("name"))?);
            owned.push(CString::new(value.as_str()).map_err(|_| bad("value"))?);
        }
        let mut pointers: Vec<*const c_char> = owned.iter().map(|c| c.as_ptr()).collect();
        pointers.push(ptr::null());

        // SAFETY: the buffer outlives the call; the URL is a static C string; the parser is
        // this stylesheet's, used by this thread only.
        let doc = unsafe {
            if self.parser.is_null() {
                xmlReadMemory(
                    input.as_ptr().cast(),
                    len,
                    c"message".as_ptr(),
                    ptr::null(),
                    MESSAGE_OPTIONS,
                )
            } else {
                xmlCtxtReadMemory(
                    self.parser,
                    input.as_ptr().cast(),
                    len,
                    c"message".as_ptr(),
                    ptr::null(),
                    MESSAGE_OPTIONS,
                )
            }
        };
        if doc.is_null() {
            return Err(XsltError::Input {
                diagnostics: take_diagnostics(),
            });
        }
        let doc = Owned(doc, xmlFreeDoc);
        // SAFETY: both pointers are valid; the context is freed before the document below.
        let ctxt = unsafe { xsltNewTransformContext(self.style.as_ptr(), doc.0) };
        if ctxt.is_null() {
            return Err(XsltError::Transform {
                diagnostics: take_diagnostics(),
            });
        }
        let ctxt = Owned(ctxt, xsltFreeTransformContext);
        let sec = security();
        // SAFETY: valid context; the parameter array is NUL-terminated and outlives the call
        // (libxslt copies the values it keeps).
        let quoted = unsafe {
            if !sec.is_null() {
                xsltSetCtxtSecurityPrefs(sec, ctxt.0);
            }
            if params.is_empty() {
                0
            } else {
                xsltQuoteUserParams(ctxt.0, pointers.as_ptr())
            }
        };
        if quoted != 0 {
            return Err(XsltError::Parameter {
                name: params
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                message: first_diagnostic(take_diagnostics()),
            });
        }
        // SAFETY: stylesheet, document and context are valid and belong together.
        let result = unsafe {
            xsltApplyStylesheetUser(
                self.style.as_ptr(),
                doc.0,
                ptr::null(),
                ptr::null(),
                ptr::null_mut(),
                ctxt.0,
            )
        };
        let result = (!result.is_null()).then(|| Owned(result, xmlFreeDoc));
        // SAFETY: valid context.
        let failed = unsafe { sluice_xslt_failed(ctxt.0) } != 0;
        let Some(result) = result.filter(|_| !failed) else {
            return Err(XsltError::Transform {
                diagnostics: take_diagnostics(),
            });
        };
        let mut out: *mut u8 = ptr::null_mut();
        let mut out_len: c_int = 0;
        // SAFETY: valid result and stylesheet; libxslt allocates `out` with xmlMalloc.
        let rc = unsafe {
            xsltSaveResultToString(&mut out, &mut out_len, result.0, self.style.as_ptr())
        };
        let bytes = if out.is_null() {
            Vec::new()
        } else {
            // SAFETY: libxslt wrote `out_len` bytes at `out`; we copy them, then free it once.
            let v = unsafe { std::slice::from_raw_parts(out, out_len.max(0) as usize) }.to_vec();
            unsafe { sluice_xslt_free(out.cast()) };
            v
        };
        if rc != 0 {
            return Err(XsltError::Transform {
                diagnostics: take_diagnostics(),
            });
        }
        let messages = take_diagnostics();
        if !messages.is_empty() {
            tracing::info!(messages = %messages.trim_end(), "The stylesheet wrote messages.");
        }
        // Freed in this order: result, context, input document.
        drop(result);
        drop(ctxt);
        drop(doc);
        Ok(bytes)
    }
}

fn first_diagnostic(d: String) -> String {
    d.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("libxslt refused it")
        .trim()
        .to_string()
}

/// A libxml2 or libxslt object freed by its destructor when dropped.
struct Owned<T>(*mut T, unsafe extern "C" fn(*mut T));

impl<T> Drop for Owned<T> {
    fn drop(&mut self) {
        // SAFETY: each Owned holds a distinct, valid pointer that nothing else frees.
        unsafe { (self.1)(self.0) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sheet(body: &str) -> String {
        format!(
            "<xsl:stylesheet version=\"1.0\" xmlns:xsl=\"http://www.w3.org/1999/XSL/Transform\">{body}</xsl:stylesheet>"
        )
    }

    #[test]
    fn transform_refuses_a_parameter_when_its_value_holds_a_nul() {
        let s = Stylesheet::compile(sheet("").as_bytes(), Path::new("/p/s.xsl")).expect("compiles");
        let e = s
            .transform(b"<a/>", &[("p".into(), "x\0y".into())])
            .expect_err("fails");
        assert!(
            matches!(e, XsltError::Parameter { ref name, .. } if name == "p"),
            "{e}"
        );
    }

    #[test]
    fn compile_reads_output_settings_through_imports() {
        let s = Stylesheet::compile(
            sheet("<xsl:output method=\"text\" encoding=\"ISO-8859-1\"/>").as_bytes(),
            Path::new("/p/s.xsl"),
        )
        .expect("compiles");
        assert_eq!(s.method(), OutputMethod::Text);
        assert_eq!(s.encoding(), Some("ISO-8859-1"));
        assert!(!s.writes_utf8());
        let plain =
            Stylesheet::compile(sheet("").as_bytes(), Path::new("/p/t.xsl")).expect("compiles");
        assert_eq!(plain.method(), OutputMethod::Xml);
        assert!(plain.writes_utf8());
    }

    #[test]
    fn diagnostics_stay_with_their_thread_when_threads_compile_at_once() {
        let threads: Vec<_> = (0..4)
            .map(|i| {
                std::thread::spawn(move || {
                    let mut seen = Vec::new();
                    for _ in 0..50 {
                        let path = format!("/p/bad{i}.xsl");
                        let bad = sheet("<xsl:template match=\"/\"><xsl:value-of/></xsl:template>");
                        match Stylesheet::compile(bad.as_bytes(), Path::new(&path)) {
                            Err(XsltError::Compile { message, .. }) => seen.push(message),
                            _ => seen.push("compiled".into()),
                        }
                    }
                    (i, seen)
                })
            })
            .collect();
        for t in threads {
            let (i, seen) = t.join().expect("thread");
            for m in seen {
                assert!(m.contains(&format!("bad{i}.xsl")), "thread {i} got: {m}");
                for other in (0..4).filter(|&o| o != i) {
                    assert!(
                        !m.contains(&format!("bad{other}.xsl")),
                        "thread {i} got: {m}"
                    );
                }
            }
        }
    }
}
