//! A small W3C WebDriver client over the tests' HTTP client: enough to load a page, find,
//! click and type into elements, read what is shown, and take screenshots. (A crate such as
//! fantoccini would bring an async stack and a TLS client the tests do not otherwise need.)

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{free_port, request};

/// The W3C name of an element reference in JSON.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A laptop screen's viewport.
pub const WIDTH: u32 = 1366;
pub const HEIGHT: u32 = 860;

/// A headless Chromium session driven through chromedriver; both end when dropped.
pub struct Browser {
    driver: Child,
    port: u16,
    session: String,
}

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

impl Browser {
    /// Start chromedriver and a browser, or None (after saying why) when chromedriver is not
    /// installed outside CI.
    pub fn start() -> Option<Browser> {
        let exe = sluice_flow_testing::require_tool(
            "chromedriver",
            &["chromedriver", "/usr/bin/chromedriver"],
        )?;
        let port = free_port();
        let driver = Command::new(exe)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let mut b = Browser {
            driver,
            port,
            session: String::new(),
        };
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
                && b.call("GET", "/status", None)["value"]["ready"] == true;
            if ready {
                break;
            }
            assert!(Instant::now() < until, "chromedriver did not start in 30 s");
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut options = json!({
            "args": [
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
                "--force-device-scale-factor=1",
                format!("--window-size={WIDTH},{HEIGHT}"),
            ]
        });
        if let Some(bin) = chromium() {
            options["binary"] = json!(bin);
        }
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": options,
            "goog:loggingPrefs": {"browser": "ALL"},
        }}});
        let r = b.call("POST", "/session", Some(caps));
        b.session = r["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {r}"))
            .to_string();
        Some(b)
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let headers: &[(&str, &str)] = if method == "POST" {
            &[("Content-Type", "application/json")]
        } else {
            &[]
        };
        let r = request(self.port, method, path, headers, body.as_bytes());
        serde_json::from_slice(&r.body).unwrap_or_else(|e| {
            panic!("chromedriver {method} {path}: not JSON ({e}): {}", r.text())
        })
    }

    /// A command of this session; panics with the driver's message when it fails.
    fn cmd(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let v = self.call(method, &format!("/session/{}{path}", self.session), body);
        if let Some(err) = v["value"]["error"].as_str() {
            panic!("{method} {path}: {err}: {}", v["value"]["message"]);
        }
        v["value"].clone()
    }

    pub fn goto(&self, url: &str) {
        self.cmd("POST", "/url", Some(json!({ "url": url })));
    }

    /// Run `script` (a function body; `arguments` are `args`) in the page.
    pub fn run(&self, script: &str, args: Value) -> Value {
        self.cmd(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": args})),
        )
    }

    /// The element `css` selects, once it exists.
    pub fn find(&self, css: &str) -> String {
        self.wait(&format!("an element {css}"), || {
            let v = self.call(
                "POST",
                &format!("/session/{}/element", self.session),
                Some(json!({"using": "css selector", "value": css})),
            );
            v["value"][ELEMENT].as_str().map(str::to_string)
        })
    }

    /// Click `css` as a person would (the driver refuses a hidden or covered element).
    pub fn click(&self, css: &str) {
        let el = self.find(css);
        self.cmd("POST", &format!("/element/{el}/click"), Some(json!({})));
    }

    /// Type `text` into `css`.
    pub fn type_into(&self, css: &str, text: &str) {
        let el = self.find(css);
        self.cmd(
            "POST",
            &format!("/element/{el}/value"),
            Some(json!({ "text": text })),
        );
    }

    /// The text `css` shows (its rendered text, not hidden content), or None when absent.
    pub fn text(&self, css: &str) -> Option<String> {
        self.run(
            "const e = document.querySelector(arguments[0]); return e ? (e.innerText ?? e.textContent) : null;",
            json!([css]),
        )
        .as_str()
        .map(str::to_string)
    }

    /// Wait until `css` shows text for which `ok` holds; returns the text.
    pub fn wait_text(&self, css: &str, what: &str, ok: impl Fn(&str) -> bool) -> String {
        self.wait(&format!("{css} to show {what}"), || {
            self.text(css).filter(|t| ok(t))
        })
    }

    /// Press and release Tab, as a keyboard user moves focus.
    pub fn press_tab(&self) {
        let tab = "\u{E004}";
        self.cmd(
            "POST",
            "/actions",
            Some(
                json!({"actions": [{"type": "key", "id": "keyboard", "actions": [
                    {"type": "keyDown", "value": tab},
                    {"type": "keyUp", "value": tab},
                ]}]}),
            ),
        );
    }

    /// Whether `css` selects an element that is displayed.
    pub fn shown(&self, css: &str) -> bool {
        self.run(
            "const e = document.querySelector(arguments[0]); return !!e && e.checkVisibility();",
            json!([css]),
        ) == true
    }

    /// Poll `f` until it gives something (15 s at most).
    pub fn wait<T>(&self, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
        let until = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(v) = f() {
                return v;
            }
            if Instant::now() > until {
                let page = self.text("main").unwrap_or_default();
                panic!("timed out waiting for {what}; the page shows:\n{page}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A PNG of the viewport, saved as `docs/ui/NAME.png` when SLUICE_BLESS=1.
    pub fn screenshot(&self, name: &str) -> Vec<u8> {
        use base64::Engine;
        // Let a focus ring or transition settle, as a person would see the page.
        std::thread::sleep(Duration::from_millis(300));
        let v = self.cmd("GET", "/screenshot", None);
        let png = base64::engine::general_purpose::STANDARD
            .decode(v.as_str().unwrap_or_default())
            .expect("a base64 screenshot");
        assert!(png.starts_with(b"\x89PNG"), "not a PNG");
        if std::env::var("SLUICE_BLESS").as_deref() == Ok("1") {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/ui");
            std::fs::create_dir_all(&dir).expect("docs/ui");
            std::fs::write(dir.join(format!("{name}.png")), &png).expect("write screenshot");
        }
        png
    }

    /// Messages the page logged to the console at level SEVERE (script errors, CSP refusals).
    pub fn severe_logs(&self) -> Vec<String> {
        let v = self.call(
            "POST",
            &format!("/session/{}/se/log", self.session),
            Some(json!({"type": "browser"})),
        );
        let entries = v["value"]
            .as_array()
            .unwrap_or_else(|| panic!("chromedriver gave no browser log: {v}"));
        entries
            .iter()
            .filter(|e| e["level"] == "SEVERE")
            .map(|e| e["message"].as_str().unwrap_or_default().to_string())
            .collect()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.call("DELETE", &format!("/session/{}", self.session), None)
            }));
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
