//! A module's statements allocate nothing on the heap per statement or per loop iteration: run
//! over 4N repeating items, a loop body makes no more allocations than over N, give or take the
//! few times a growing tree arena doubles.
//!
//! The counting allocator counts on the calling thread only, so that the test harness's other
//! threads do not disturb the count.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

use bytes::Bytes;
use sluice_esql::runtime::{Module, NoPropagation, Program, RunOptions};
use sluice_parsers::xmlnsc;
use sluice_tree::{Message, Tree};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count_one() {
    // `try_with`: a thread being torn down has no counter left, and needs none.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every call is passed unchanged to the system allocator, which upholds the contract.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: the caller's layout is passed on as it came.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// The loop body exercises what a transformation does per repeating element: FOR over `[]`
/// and WHILE over MOVE, a FUNCTION and a PROCEDURE with REFERENCE parameters, CASTs both ways,
/// concatenation, string functions, LIKE, CARDINALITY, a computed field name, and SET of
/// CHARACTER variables and fields.
const PROGRAM: &str = r#"
CREATE COMPUTE MODULE Repeating
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		CREATE LASTCHILD OF OutputRoot DOMAIN('XMLNSC') NAME 'XMLNSC';
		DECLARE summary REFERENCE TO OutputRoot.XMLNSC;
		CREATE LASTCHILD OF summary AS summary NAME 'Summary';
		DECLARE seen INTEGER 0;
		DECLARE gifts INTEGER 0;
		DECLARE total FLOAT 0;
		DECLARE code CHARACTER '';
		FOR line AS InputRoot.XMLNSC.Order.Item[] DO
			SET seen = seen + 1;
			DECLARE price FLOAT CAST(line.Price AS FLOAT) * 1.6;
			SET total = total + price * CAST(line.Qty AS INTEGER);
			SET code = Code(line.Name, seen);
			SET summary.LastCode = code;
			SET summary.LastCost = CAST(price AS CHARACTER);
			CALL Tally(line, summary, gifts);
		END FOR;
		DECLARE walker REFERENCE TO InputRoot.XMLNSC.Order.Item[1];
		DECLARE names CHARACTER;
		WHILE LASTMOVE(walker) DO
			IF UPPER(TRIM(walker.Kind)) = 'GIFT' THEN
				SET names = LEFT(walker.Name, 4) || '/' || RIGHT(walker.Name, 2);
			END IF;
			MOVE walker NEXTSIBLING NAME 'Item';
		END WHILE;
		SET summary.Count = seen;
		SET summary.Gifts = gifts;
		SET summary.Names = names;
		SET summary.Total = CAST(total AS CHARACTER);
		RETURN TRUE;
	END;

	CREATE FUNCTION Code(IN name CHARACTER, IN n INTEGER) RETURNS CHARACTER
	BEGIN
		RETURN SUBSTRING(name FROM 1 FOR 3) || '-' || CAST(n AS CHARACTER);
	END;

	CREATE PROCEDURE Tally(IN line REFERENCE, IN summary REFERENCE, INOUT gifts INTEGER)
	BEGIN
		DECLARE kind CHARACTER line.Kind;
		IF kind LIKE 'g%' AND CARDINALITY(line.*[]) = 4 THEN
			SET gifts = gifts + 1;
		END IF;
		DECLARE field CHARACTER 'LastKind';
		SET summary.{field} = kind;
	END;
END MODULE;
"#;

fn module() -> Module {
    let program = Program::compile(&[("repeating.esql".to_string(), PROGRAM.to_string())])
        .unwrap_or_else(|e| {
            panic!(
                "{}",
                e.iter().map(|x| x.render()).collect::<Vec<_>>().join("\n")
            )
        });
    Arc::new(program).module("Repeating").expect("module")
}

fn order(items: usize) -> Bytes {
    let mut xml = String::from("<Order>");
    for i in 0..items {
        let kind = if i % 3 == 0 { "gift" } else { "plain" };
        xml.push_str(&format!(
            "<Item><Name>Item number {i}</Name><Kind>{kind}</Kind><Price>{}.25</Price>\
             <Qty>{}</Qty></Item>",
            i % 50,
            i % 7 + 1
        ));
    }
    xml.push_str("</Order>");
    Bytes::from(xml)
}

/// Run the module over an order of `items` items, parsed completely beforehand (parsing is
/// not the runtime's to answer for); returns the allocations of the run alone and the output.
fn run(module: &Module, items: usize) -> (u64, String) {
    let mut msg = Message::new();
    let r = msg.root.root();
    let body = xmlnsc::attach(
        &mut msg.root,
        r,
        order(items),
        Arc::new(xmlnsc::XmlnscParser::default()),
    );
    msg.root.expand_all(body).expect("the order parses");
    let mut env = Tree::new("Environment");
    let before = allocations();
    let outcome = module
        .run(
            &mut msg,
            &mut env,
            &mut NoPropagation,
            &RunOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let used = allocations() - before;
    let mut out = outcome.output.expect("an output message");
    let root = out.root.root();
    out.root.expand_all(root).expect("output expands");
    (used, format!("{:?}", out.root))
}

#[test]
fn loop_iterations_allocate_nothing_when_items_repeat() {
    const N: usize = 100;
    let module = module();
    // A first run settles what is made once per program (compiled EVAL texts, caches).
    run(&module, N);
    let (small, out) = run(&module, N);
    assert!(out.contains("Count (0x03000000) = Integer(100)"), "{out}");
    assert!(out.contains("Gifts (0x03000000) = Integer(34)"), "{out}");
    assert!(out.contains("LastCode (0x03000000) = 'Ite-100'"), "{out}");
    assert!(out.contains("Names (0x03000000) = 'Item/99'"), "{out}");
    assert!(out.contains("LastKind (0x03000000) = 'gift'"), "{out}");
    let (large, out) = run(&module, 4 * N);
    assert!(out.contains("Count (0x03000000) = Integer(400)"), "{out}");
    // Between N and 4N items each growing buffer (the output tree's elements and text, the
    // FOR statement's list) doubles about twice more; one allocation per item would add 300.
    let growth = large.saturating_sub(small);
    assert!(
        growth <= 12,
        "{small} allocations for {N} items but {large} for {}: about {} per item",
        4 * N,
        growth as f64 / (3 * N) as f64
    );
}
