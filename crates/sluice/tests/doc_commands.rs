//! The shell commands of README.md and docs/getting-started.md, run in order as a reader pastes
//! them, on a copy of the samples project: a doc whose commands no longer work fails here.
//! `… run DIR` starts the real server (on free ports: the docs' ports are rewritten), curl
//! commands go to it, and a comment that begins with a status (`# 422`) is checked.

mod common;

use std::path::Path;
use std::process::Command;

use common::Server;
use common::tempdir::TempDir;

/// The commands of the ```sh blocks of a Markdown file, a heredoc kept with its command.
fn commands(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut heredoc: Option<(String, String)> = None;
    for line in markdown.lines() {
        if !in_block {
            in_block = line.trim_start() == "```sh";
            continue;
        }
        if let Some((end, mut text)) = heredoc.take() {
            text.push('\n');
            text.push_str(line);
            if line == end {
                out.push(text);
            } else {
                heredoc = Some((end, text));
            }
            continue;
        }
        if line.trim_start().starts_with("```") {
            in_block = false;
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        match line.split_once("<<'") {
            Some((_, rest)) => {
                let end = rest.split('\'').next().unwrap_or_default().to_string();
                heredoc = Some((end, line.to_string()));
            }
            None => out.push(line.to_string()),
        }
    }
    assert!(heredoc.is_none(), "a heredoc is not closed");
    out
}

/// The project folder of a command that runs the server.
fn run_target(command: &str) -> Option<&str> {
    let rest = command
        .strip_prefix("cargo run --release -p sluice -- run ")
        .or_else(|| command.strip_prefix("sluice run "))?;
    rest.split_whitespace().next()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// The status a command's trailing comment expects (`# 200, echoed` → 200).
fn expected_status(command: &str) -> Option<u16> {
    let comment = command.rsplit_once(" # ")?.1.trim();
    comment.get(..3)?.parse().ok()
}

fn run_doc(doc: &str, work: &Path) {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(doc),
    )
    .unwrap();
    let commands = commands(&text);
    assert!(!commands.is_empty(), "{doc} has no shell commands");
    let bin_dir = Path::new(common::bin()).parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut server: Option<Server> = None;
    for c in commands {
        if let Some(dir) = run_target(&c) {
            drop(server.take());
            server = Some(Server::start(&work.join(dir)));
            continue;
        }
        if c.starts_with("scripts/") {
            // The test suite and the benchmarks: this test runs inside the first.
            continue;
        }
        let mut line = c.clone();
        if let Some(s) = &server {
            line = line
                .replace("localhost:7800", &format!("localhost:{}", s.http_port))
                .replace("localhost:7801", &format!("localhost:{}", s.admin_port));
        }
        let out = Command::new("bash")
            .args(["-c", &line])
            .current_dir(work)
            .env("PATH", &path)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{doc}: `{c}` failed: {}\n{stdout}",
            String::from_utf8_lossy(&out.stderr)
        );
        if let Some(status) = expected_status(&c) {
            assert!(
                stdout.starts_with(&format!("HTTP/1.1 {status}")),
                "{doc}: `{c}` answered:\n{stdout}"
            );
        }
    }
}

#[test]
fn the_commands_of_the_readme_and_getting_started_work_as_written() {
    if sluice_flow_testing::require_tool("curl, which the docs' commands use", &["curl"]).is_none()
    {
        return;
    }
    let work = TempDir::new("docs");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples"),
        &work.path().join("samples"),
    );
    run_doc("README.md", work.path());
    run_doc("docs/getting-started.md", work.path());
    let flow = std::fs::read_to_string(work.path().join("hello/flows/hello.yaml")).unwrap();
    assert!(
        flow.ends_with("no:    { type: HTTPReply, status: 422 }\n"),
        "{flow}"
    );
}

#[test]
fn heredocs_stay_with_their_command_and_blocks_end_at_their_fence() {
    let md = "text\n```sh\na\ncat > f <<'Y'\nx: 1\nY\n```\n```yaml\nnot: run\n```\n";
    assert_eq!(commands(md), vec!["a", "cat > f <<'Y'\nx: 1\nY"]);
    assert_eq!(expected_status("curl x     # 422"), Some(422));
    assert_eq!(expected_status("curl x"), None);
}
