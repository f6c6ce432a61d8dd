//! The short form of a fuzz target, for `cargo test` on stable without libFuzzer: run its body
//! over the checked-in seed corpus, then over inputs derived from the seeds by the same kinds
//! of mutation libFuzzer makes (flips, inserts, deletions, splices, truncations).

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

/// The seed files of a corpus directory, by name, sorted; panics when there are none, so a
/// moved corpus fails the test instead of passing it empty.
pub fn seeds(dir: &str) -> Vec<(String, Vec<u8>)> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("corpus {dir}: {e}"));
    let mut out: Vec<(String, Vec<u8>)> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let data = std::fs::read(e.path()).unwrap_or_else(|err| panic!("{name}: {err}"));
            (name, data)
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "corpus {dir} holds no seeds");
    out
}

/// Run `body` on `input`, naming the input when it panics.
pub fn run_named(name: &str, input: &[u8], body: &impl Fn(&[u8])) {
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| body(input))) {
        eprintln!("input {name} ({} bytes) failed: {input:02x?}", input.len());
        resume_unwind(p);
    }
}

/// Run `body` on every seed of `dir` (`.../corpus/<target>`) and on every saved finding in
/// the matching `.../artifacts/<target>` directory, if there is one; returns the seeds.
pub fn run_seeds(dir: &str, body: impl Fn(&[u8])) -> Vec<(String, Vec<u8>)> {
    let seeds = seeds(dir);
    for (name, data) in &seeds {
        run_named(name, data, &body);
    }
    // A fuzzing run creates the directory even when it finds nothing, so it may be empty.
    let artifacts = dir.replace("/corpus/", "/artifacts/");
    let found = std::fs::read_dir(&artifacts)
        .into_iter()
        .flatten()
        .flatten();
    for entry in found.filter(|e| e.path().is_file()) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let data = std::fs::read(entry.path()).unwrap_or_else(|e| panic!("{name}: {e}"));
        run_named(&format!("artifact {name}"), &data, &body);
    }
    seeds
}

/// A small deterministic generator (xorshift64*), so a failure reproduces from its number.
pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// The next number.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Bytes that often matter to parsers and decoders.
const INTERESTING: &[u8] = &[
    0, 1, 0x7f, 0x80, 0xff, b'<', b'>', b'"', b'{', b'}', b'[', b']', b':', b'\n',
];

/// Input number `i` derived from the seeds by one to four mutations.
pub fn mutant(seeds: &[(String, Vec<u8>)], i: u64) -> Vec<u8> {
    let mut rng = Rng::new(i);
    let mut v = seeds[rng.below(seeds.len())].1.clone();
    for _ in 0..=rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(6) {
            0 if at < v.len() => v[at] ^= 1 << rng.below(8),
            1 => v.insert(at, INTERESTING[rng.below(INTERESTING.len())]),
            2 if at < v.len() => {
                let n = rng.below(v.len() - at + 1).min(16);
                v.drain(at..at + n);
            }
            3 => {
                let other = &seeds[rng.below(seeds.len())].1;
                let from = rng.below(other.len());
                let n = rng.below(other.len() - from + 1).min(64);
                v.splice(at..at, other[from..from + n].iter().copied());
            }
            4 => v.truncate(at),
            _ if at < v.len() => v[at] = rng.next() as u8,
            _ => v.push(rng.next() as u8),
        }
    }
    v
}

/// Run `body` on `count` mutants of the seeds.
pub fn run_mutants(seeds: &[(String, Vec<u8>)], count: u64, body: impl Fn(&[u8])) {
    for i in 0..count {
        let input = mutant(seeds, i);
        run_named(&format!("mutant {i}"), &input, &body);
    }
}
