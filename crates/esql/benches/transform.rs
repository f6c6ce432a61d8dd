//! Thread CPU time per message of the Transformation use case (`samples/esql/transform.esql`)
//! as the flow runs it: a message built the way HTTPInput builds it (Properties, an HTTP header
//! tree, an XMLNSC body parsed on demand), the Compute node's `Transform` module, and the
//! XMLNSC serialisation of OutputRoot's body that HTTPReply does.
//!
//! `cargo bench -p sluice-esql --bench transform -- [ROUNDS] [MESSAGES_PER_ROUND]` prints the best
//! round (thread CPU µs per message) for 2 kB, 20 kB and 200 kB SaleList messages, with the
//! allocations one message makes and, for scale, the CPU of parsing the body completely. The
//! machine is shared: compare two builds by alternating them and taking the minimum of several
//! runs, never by single figures.
//!
//! Environment: `TRANSFORM_OUT=DIR` writes each size's output body to `DIR/out-SIZE.xml` (to
//! check two builds for byte-identical output); `TRANSFORM_ONLY=20kB` runs one size (for
//! profiling); `TRANSFORM_COMPLETE=1` parses the input completely before the module runs (the
//! cost of on-demand parsing is the difference); `TRANSFORM_SIZES=1` prints the element counts of
//! the input and output trees.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use sluice_esql::runtime::{Module, NoPropagation, Program, RunOptions};
use sluice_parsers::xmlnsc;
use sluice_tree::field_type;
use sluice_tree::{Message, Text, Tree, Value};

/// The system allocator, counting allocations so that the bench can report them per message.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is passed unchanged to the system allocator, which upholds the contract.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's layout is passed on as it came.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const SIZES: [(usize, &str); 3] = [(2_000, "2kB"), (20_000, "20kB"), (200_000, "200kB")];

/// The calling thread's CPU time in nanoseconds.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec and the clock id is a constant the kernel knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn module() -> Module {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/esql");
    let program = Program::compile_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "{}",
            e.iter().map(|x| x.render()).collect::<Vec<_>>().join("\n")
        )
    });
    Arc::new(program)
        .module("Transform")
        .expect("samples/esql defines Transform")
}

/// The input message as HTTPInput builds it: Properties, HTTPInputHeader, then the body.
fn input(body: &Bytes, parser: &Arc<xmlnsc::XmlnscParser>) -> Message {
    let mut msg = Message::new();
    let root = &mut msg.root;
    let r = root.root();
    let props = root.first_child(r).ok().flatten().expect("Properties");
    for (name, v) in [("Encoding", 546), ("CodedCharSetId", 1208)] {
        root.create_last_child(
            props,
            field_type::NAME_VALUE,
            Text::from_static(name),
            Value::Integer(v),
        )
        .expect("property");
    }
    let h = root
        .create_last_child(
            r,
            field_type::NAME,
            Text::from_static("HTTPInputHeader"),
            Value::Null,
        )
        .expect("header");
    for (name, value) in [
        (
            "X-Original-HTTP-Command",
            "POST /samples/transform HTTP/1.1",
        ),
        ("Host", "127.0.0.1:17800"),
        ("Content-Type", "text/xml"),
        ("Content-Length", "20000"),
    ] {
        let n = root.alloc_text(name.as_bytes());
        let v = root.alloc_text(value.as_bytes());
        root.create_last_child(h, field_type::NAME_VALUE, n, Value::Character(v))
            .expect("header field");
    }
    let b = xmlnsc::attach(root, r, body.clone(), Arc::clone(parser));
    if std::env::var_os("TRANSFORM_COMPLETE").is_some() {
        root.expand_all(b).expect("parses");
    }
    msg
}

/// One message through the flow's work; returns the reply body.
fn transform(module: &Module, body: &Bytes, parser: &Arc<xmlnsc::XmlnscParser>) -> Vec<u8> {
    let mut msg = input(body, parser);
    let mut env = Tree::new("Environment");
    let outcome = module
        .run(
            &mut msg,
            &mut env,
            &mut NoPropagation,
            &RunOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let mut out = outcome.output.expect("an output message");
    if std::env::var_os("TRANSFORM_SIZES").is_some() {
        eprintln!(
            "input {} bytes: {} input elements, {} output elements",
            body.len(),
            msg.root.len(),
            out.root.len()
        );
    }
    let b = out.body().expect("body").expect("a body");
    let mut bytes = Vec::new();
    xmlnsc::serialize_to(&mut out.root, b, &mut bytes).expect("serialises");
    bytes
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let rounds = args.first().copied().unwrap_or(7);
    let per_round = args.get(1).copied().unwrap_or(0);
    let module = module();
    let parser = Arc::new(xmlnsc::XmlnscParser::default());
    let out_dir = std::env::var_os("TRANSFORM_OUT");
    // `TRANSFORM_ONLY=20kB` measures one size (for profiling).
    let only = std::env::var("TRANSFORM_ONLY").ok();
    for (size, label) in SIZES {
        if only.as_deref().is_some_and(|o| o != label) {
            continue;
        }
        let body = sluice_bench::message::generate(sluice_bench::message::Format::Xml, size, 1)
            .expect("a SaleList message");
        let body = Bytes::from(body);
        // About 40 ms of work per round whatever the size.
        let n = if per_round > 0 {
            per_round
        } else {
            (4_000_000 / size).max(20)
        };
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        let first = transform(&module, &body, &parser);
        let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
        if let Some(dir) = &out_dir {
            std::fs::write(Path::new(dir).join(format!("out-{label}.xml")), &first)
                .expect("writes the output");
        }
        let mut best = u64::MAX;
        for _ in 0..rounds {
            let t0 = thread_cpu_ns();
            for _ in 0..n {
                std::hint::black_box(transform(&module, &body, &parser));
            }
            best = best.min((thread_cpu_ns() - t0) / n as u64);
        }
        // For scale: the same body parsed completely, nothing else.
        let mut parse_best = u64::MAX;
        for _ in 0..rounds {
            let t0 = thread_cpu_ns();
            for _ in 0..n {
                let mut msg = input(&body, &parser);
                let b = msg.body().expect("body").expect("a body");
                msg.root.expand_all(b).expect("parses");
                std::hint::black_box(msg);
            }
            parse_best = parse_best.min((thread_cpu_ns() - t0) / n as u64);
        }
        println!(
            "{label:>6}: {:8.1} µs/message (best of {rounds} rounds of {n}, output {} bytes, \
             {allocations} allocations; complete parse alone {:.1} µs)",
            best as f64 / 1000.0,
            first.len(),
            parse_best as f64 / 1000.0
        );
    }
}
