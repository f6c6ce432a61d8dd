//! String scanning agrees with a plain byte-by-byte reading wherever the quote, escape, control
//! character or multi-byte UTF-8 character falls, and at the end of the buffer.

use proptest::prelude::*;

use crate::json::scan::scan_string;

/// What [`scan_string`] answers, scanning byte by byte.
fn bytewise(src: &[u8]) -> Result<(usize, bool, Vec<u8>), String> {
    let body = &src[1..];
    let Some(stop) = body
        .iter()
        .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
    else {
        return Err("unterminated at 0".into());
    };
    match body[stop] {
        b'"' => match std::str::from_utf8(&body[..stop]) {
            Ok(_) => Ok((stop + 2, false, Vec::new())),
            Err(e) => Err(format!("invalid UTF-8 at {}", 1 + e.valid_up_to())),
        },
        _ => Err("slow path".into()),
    }
}

fn scanned(src: &[u8]) -> Result<(usize, bool, Vec<u8>), String> {
    let mut decoded = Vec::new();
    match scan_string(src, 0, &mut decoded) {
        Ok((end, true)) => Ok((end, true, decoded)),
        Ok((end, false)) => Ok((end, false, Vec::new())),
        Err(e) => Err(e.to_string()),
    }
}

/// Compare where the byte-by-byte answer is simple (no escapes or control characters), and
/// otherwise only that both agree on the end position or both fail.
fn agree(src: &[u8]) {
    let want = bytewise(src);
    let got = scanned(src);
    match (&want, &got) {
        (Err(w), _) if w == "slow path" => {}
        (Ok(w), Ok(g)) => assert_eq!(w, g, "{src:?}"),
        (Err(_), Err(_)) => {}
        _ => panic!("{src:?}: byte by byte {want:?}, scanned {got:?}"),
    }
}

#[test]
fn closing_quote_in_every_lane_and_at_the_buffer_end() {
    for len in 0..20 {
        let mut s = vec![b'"'];
        s.extend(std::iter::repeat_n(b'a', len));
        agree(&s);
        s.push(b'"');
        assert_eq!(scanned(&s), Ok((len + 2, false, Vec::new())));
        s.extend_from_slice(b"tail");
        assert_eq!(scanned(&s), Ok((len + 2, false, Vec::new())));
    }
}

#[test]
fn multi_byte_utf8_and_broken_utf8_in_every_lane() {
    for at in 0..17 {
        let mut s = vec![b'"'];
        s.extend(std::iter::repeat_n(b'a', at));
        s.extend_from_slice("\u{e9}\u{20ac}\u{1F600}".as_bytes());
        s.push(b'"');
        assert_eq!(scanned(&s), Ok((s.len(), false, Vec::new())));
        let mut broken = s.clone();
        broken[1 + at + 2] = b'x';
        agree(&broken);
        assert!(scanned(&broken).is_err());
        // A character cut by the closing quote.
        let mut cut = vec![b'"'];
        cut.extend(std::iter::repeat_n(b'a', at));
        cut.extend_from_slice(&[0xe2, 0x82, b'"']);
        agree(&cut);
        assert!(scanned(&cut).is_err());
    }
}

#[test]
fn escapes_and_control_characters_in_every_lane() {
    for at in 0..17 {
        let mut s = vec![b'"'];
        s.extend(std::iter::repeat_n(b'a', at));
        s.extend_from_slice(b"\\n\xc3\xa9\"");
        let mut want = vec![b'a'; at];
        want.extend_from_slice(b"\n\xc3\xa9");
        assert_eq!(scanned(&s), Ok((s.len(), true, want)));
        let mut c = vec![b'"'];
        c.extend(std::iter::repeat_n(b'a', at));
        c.extend_from_slice(b"\x1fb\"");
        assert!(scanned(&c).is_err());
        let mut del = vec![b'"'];
        del.extend(std::iter::repeat_n(b'a', at));
        del.extend_from_slice(b"\x7f\"");
        assert_eq!(scanned(&del), Ok((del.len(), false, Vec::new())));
    }
}

proptest! {
    #[test]
    fn strings_scan_as_byte_by_byte(
        body in prop::collection::vec(
            prop_oneof![
                Just(b'a'), Just(b'"'), Just(b'\\'), Just(0x1f), Just(0x7f),
                Just(0xc3), Just(0xa9), Just(0xe2), Just(0x82), Just(0xac), Just(0xff),
                any::<u8>(),
            ],
            0..40,
        ),
    ) {
        let mut s = vec![b'"'];
        s.extend_from_slice(&body);
        agree(&s);
    }
}
