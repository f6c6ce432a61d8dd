//! The queue manager's client protocol on arbitrary connection bytes: frame reading, every
//! request decoder (CONNECT, DEFINE/ALTER JSON, PUT/DEAD_LETTER messages, GET options and
//! browse cursors, …) and the operations they run on an in-memory queue manager.
//!
//! Byte 0 picks the authentication: bit 0 set = anonymous connections are accepted (the
//! connection starts authenticated, so frames up to the full size limit are read); clear =
//! the peer must first CONNECT as user `app`, password `secret`, or with token `tok` (frames
//! before that are limited to 64 KiB). The rest is what the client sends.
//!
//! Checks: no panic, no wait, and the answer is a sequence of well-formed frames.

use std::collections::HashMap;

use sluice_qm::net::{AuthConfig, STATUS_ERR, STATUS_OK, serve_bytes};
use sluice_qm::{Message, PutOptions, QmConfig, QueueDef, QueueManager};

/// Answer bytes are cut at this size by the server hook.
const ANSWER_CAP: usize = 16 << 20;

/// Run one input.
pub fn run(data: &[u8]) {
    let (flags, input) = match data.split_first() {
        Some((f, rest)) => (*f, rest),
        None => (0, data),
    };
    let auth = if flags & 1 != 0 {
        AuthConfig::anonymous()
    } else {
        AuthConfig {
            allow_anonymous: false,
            users: HashMap::from([("app".to_string(), "secret".to_string())]),
            tokens: vec!["tok".into()],
        }
    };
    let qm = QueueManager::open_in_memory(QmConfig::default()).expect("in-memory queue manager");
    qm.define(QueueDef::local("Q")).expect("queue Q defines");
    qm.put("Q", Message::new("seed"), &PutOptions::default())
        .expect("a message goes to Q");

    let (answer, _ended) = serve_bytes(qm, auth, input);

    // The answer is whole frames: len u32 (counting what follows), id u32, status u8, payload.
    let mut at = 0usize;
    while at < answer.len() {
        let rest = &answer[at..];
        if rest.len() < 9 {
            assert_eq!(
                answer.len(),
                ANSWER_CAP,
                "answer ends inside a frame header"
            );
            break;
        }
        let len = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        assert!(len >= 5, "answer frame of length {len}");
        assert!(
            rest[8] == STATUS_OK || rest[8] == STATUS_ERR,
            "answer status {}",
            rest[8]
        );
        if rest.len() < 4 + len {
            assert_eq!(answer.len(), ANSWER_CAP, "answer ends inside a frame");
            break;
        }
        at += 4 + len;
    }
}
