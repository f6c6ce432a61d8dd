//! TLS on TCP/IP nodes against real sockets, with certificates made in the test: a relay flow
//! takes a line on the server's plain port, sends it over TLS with TCPIPClientOutput to a TLS
//! port served by TCPIPServerInput in the same flow, which echoes it, and sends the reply back.

mod common;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use common::{captured, connect, exception_text, free_addr, read_n, start};

/// PEM files of a CA, a server certificate for localhost and a client certificate it signed,
/// and of a second CA that signed neither.
struct Pki {
    dir: PathBuf,
}

impl Pki {
    fn new(name: &str) -> Pki {
        let dir =
            std::env::temp_dir().join(format!("sluice-tcpip-tls-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (ca_pem, issuer) = ca("Sluice test CA");
        let (other, _) = ca("Another CA");
        let leaf = |names: Vec<String>, usage, file: &str| {
            let key = rcgen::KeyPair::generate().unwrap();
            let mut p = rcgen::CertificateParams::new(names).unwrap();
            p.extended_key_usages = vec![usage];
            let cert = p.signed_by(&key, &issuer).unwrap();
            std::fs::write(dir.join(format!("{file}.pem")), cert.pem()).unwrap();
            std::fs::write(dir.join(format!("{file}.key")), key.serialize_pem()).unwrap();
        };
        leaf(
            vec!["localhost".into()],
            rcgen::ExtendedKeyUsagePurpose::ServerAuth,
            "server",
        );
        leaf(
            vec!["client".into()],
            rcgen::ExtendedKeyUsagePurpose::ClientAuth,
            "client",
        );
        std::fs::write(dir.join("ca.pem"), ca_pem).unwrap();
        std::fs::write(dir.join("other-ca.pem"), other).unwrap();
        Pki { dir }
    }

    fn path(&self, f: &str) -> String {
        self.dir.join(f).to_string_lossy().into_owned()
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn ca(name: &str) -> (String, rcgen::Issuer<'static, rcgen::KeyPair>) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    p.distinguished_name.push(rcgen::DnType::CommonName, name);
    let cert = p.self_signed(&key).unwrap();
    (cert.pem(), rcgen::Issuer::new(p, key))
}

/// The relay flow: `server_tls` are the TLS port's extra properties, `client_tls` the client
/// nodes'.
fn relay(tls_port: u16, server_tls: &str, client_tls: &str) -> String {
    format!(
        "flow: relay\nnodes:\n  tin: {{ type: TCPIPServerInput, port: {tls_port}, record_detection: delimited, {server_tls}, wires: {{ out: [techo] }} }}\n  techo: {{ type: TCPIPServerOutput, port: {tls_port}, output_record: delimited }}\n  in: {{ type: TCPIPServerInput, record_detection: delimited, wires: {{ out: [ask] }} }}\n  ask: {{ type: TCPIPClientOutput, connection_details: '127.0.0.1:{tls_port}', retry_attempts: 0, output_record: delimited, {client_tls}, wires: {{ out: [answer], failure: [failed] }} }}\n  answer: {{ type: TCPIPClientReceive, connection_details: '127.0.0.1:{tls_port}', record_detection: delimited, read_timeout_secs: 3, {client_tls}, wires: {{ out: [back], failure: [failed], timeout: [failed] }} }}\n  back: {{ type: TCPIPServerOutput, output_record: delimited }}\n  failed: {{ type: Capture }}\n"
    )
}

#[test]
fn lines_go_over_tls_and_back_when_the_client_trusts_the_servers_ca() {
    let pki = Pki::new("ok");
    let tls_port = free_addr().port();
    let server = format!(
        "tls_cert_file: '{}', tls_key_file: '{}'",
        pki.path("server.pem"),
        pki.path("server.key")
    );
    let client = format!(
        "tls: true, tls_ca_file: '{}', tls_server_name: localhost",
        pki.path("ca.pem")
    );
    let r = start(&relay(tls_port, &server, &client));
    let mut c = connect(r.addr);
    for line in ["one\n", "two\n"] {
        c.write_all(line.as_bytes()).unwrap();
        assert_eq!(read_n(&mut c, line.len()), line.as_bytes());
    }
}

#[test]
fn a_plaintext_client_to_a_tls_port_is_closed_and_the_port_goes_on() {
    let pki = Pki::new("plain");
    let tls_port = free_addr().port();
    let server = format!(
        "tls_cert_file: '{}', tls_key_file: '{}'",
        pki.path("server.pem"),
        pki.path("server.key")
    );
    let client = format!(
        "tls: true, tls_ca_file: '{}', tls_server_name: localhost",
        pki.path("ca.pem")
    );
    let r = start(&relay(tls_port, &server, &client));
    let mut plain = connect(std::net::SocketAddr::from(([127, 0, 0, 1], tls_port)));
    plain.write_all(b"hello\n").unwrap();
    let mut buf = [0u8; 64];
    // The server answers the bytes that are no TLS handshake with an alert at most, and closes.
    let mut got = Vec::new();
    loop {
        match plain.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    assert!(!got.windows(5).any(|w| w == b"hello"), "{got:?}");
    let mut c = connect(r.addr);
    c.write_all(b"after\n").unwrap();
    assert_eq!(read_n(&mut c, 6), b"after\n");
}

#[test]
fn client_output_fails_with_the_tls_error_when_the_server_is_signed_by_another_ca() {
    let pki = Pki::new("wrong-ca");
    let tls_port = free_addr().port();
    let server = format!(
        "tls_cert_file: '{}', tls_key_file: '{}'",
        pki.path("server.pem"),
        pki.path("server.key")
    );
    let client = format!(
        "tls: true, tls_ca_file: '{}', tls_server_name: localhost",
        pki.path("other-ca.pem")
    );
    let r = start(&relay(tls_port, &server, &client));
    let mut c = connect(r.addr);
    c.write_all(b"x\n").unwrap();
    let got = captured(&r, 1);
    let ex = exception_text(&got[0]);
    assert!(
        ex.contains("TLS handshake with 127.0.0.1:") && ex.contains("certificate"),
        "{ex}"
    );
}

#[test]
fn mutual_tls_serves_a_client_with_a_certificate_and_refuses_one_without() {
    let pki = Pki::new("mutual");
    let server = format!(
        "tls_cert_file: '{}', tls_key_file: '{}', tls_client_ca_file: '{}'",
        pki.path("server.pem"),
        pki.path("server.key"),
        pki.path("ca.pem")
    );
    let with_cert = format!(
        "tls: true, tls_ca_file: '{}', tls_server_name: localhost, tls_cert_file: '{}', tls_key_file: '{}'",
        pki.path("ca.pem"),
        pki.path("client.pem"),
        pki.path("client.key")
    );
    let tls_port = free_addr().port();
    let r = start(&relay(tls_port, &server, &with_cert));
    let mut c = connect(r.addr);
    c.write_all(b"mine\n").unwrap();
    assert_eq!(read_n(&mut c, 5), b"mine\n");
    drop(c);
    drop(r);

    let without = format!(
        "tls: true, tls_ca_file: '{}', tls_server_name: localhost",
        pki.path("ca.pem")
    );
    let tls_port = free_addr().port();
    let r = start(&relay(tls_port, &server, &without));
    let mut c = connect(r.addr);
    c.set_read_timeout(Some(Duration::from_secs(6))).unwrap();
    c.write_all(b"anon\n").unwrap();
    // TLS 1.3 clients learn of the refusal at their first read: the receive fails or times
    // out, and nothing comes back.
    let got = captured(&r, 1);
    assert_eq!(got[0].label, "failed");
    let mut buf = [0u8; 8];
    assert!(!matches!(c.read(&mut buf), Ok(n) if n > 0));
}
