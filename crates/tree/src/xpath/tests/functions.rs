//! The core function library.

use crate::xpath::XValue;
use crate::xpath::tests::{SALE, eval, number, string, truth};

#[test]
fn count_and_sum_cover_whole_node_sets() {
    assert_eq!(number(SALE, "count($Body/Parent/SaleList)"), 2.0);
    assert_eq!(number(SALE, "count($Body//Invoice)"), 3.0);
    assert_eq!(number(SALE, "count($Body//Invoice | $Body//Invoice)"), 3.0);
    assert_eq!(number(SALE, "count($Body//b)"), 0.0);
    assert_eq!(number(SALE, "sum($Body//Amount)"), 35.5);
    assert_eq!(number(SALE, "sum($Body//Nothing)"), 0.0);
}

#[test]
fn string_takes_the_first_node_in_document_order() {
    assert_eq!(string(SALE, "$Body//Amount"), "10.5");
    assert_eq!(string(SALE, "$Body//Amount | $Body/Parent/First"), "1");
    assert_eq!(string(SALE, "$Body/Parent/SaleList[2]"), "5");
    assert_eq!(string(SALE, "$Body/Nothing"), "");
    assert_eq!(string(SALE, "12.50"), "12.5");
    assert_eq!(string(SALE, "1 = 1"), "true");
    assert_eq!(
        eval(SALE, "string()"),
        XValue::String("1K10.5L205Test".to_owned())
    );
}

#[test]
fn number_and_boolean_convert_values() {
    assert_eq!(number(SALE, "$Body/Parent/First"), 1.0);
    assert!(number(SALE, "'abc'").is_nan());
    assert_eq!(number(SALE, "true()"), 1.0);
    assert_eq!(number(SALE, "' -3.25 '"), -3.25);
    assert!(truth(SALE, "boolean($Body/Parent)"));
    assert!(!truth(SALE, "boolean($Body/Nothing)"));
    assert!(!truth(SALE, "boolean(0 div 0)"));
    assert!(truth(SALE, "boolean('false')"));
    assert!(truth(SALE, "true() and not(false())"));
}

#[test]
fn string_functions_follow_xpath_definitions() {
    assert!(truth(SALE, "contains($Body/Parent/Last, 'es')"));
    assert!(truth(SALE, "starts-with($Body/Parent/Last, 'Te')"));
    assert!(!truth(SALE, "starts-with($Body/Parent/Last, 'te')"));
    assert_eq!(
        string(
            SALE,
            "concat($Body/Parent/First, '-', $Body/Parent/Last, '!')"
        ),
        "1-Test!"
    );
    assert_eq!(number(SALE, "string-length($Body/Parent/Last)"), 4.0);
    assert_eq!(number(SALE, "string-length('naïve')"), 5.0);
    assert_eq!(string(SALE, "normalize-space('  a \n b  ')"), "a b");
    assert_eq!(string(SALE, "substring('12345', 2, 3)"), "234");
    assert_eq!(string(SALE, "substring('12345', 2)"), "2345");
    assert_eq!(string(SALE, "substring-before('1999/04/01', '/')"), "1999");
    assert_eq!(string(SALE, "substring-after('1999/04/01', '/')"), "04/01");
    assert_eq!(string(SALE, "translate('bar', 'abc', 'ABC')"), "BAr");
}

#[test]
fn context_functions_use_the_focus() {
    assert_eq!(string(SALE, "$Body/Parent/*[string-length() = 4]"), "Test");
    assert_eq!(string(SALE, "$Body/Parent/*[normalize-space() = '1']"), "1");
    assert_eq!(string(SALE, "$Body/Parent/*[number() = 1]"), "1");
    assert_eq!(string(SALE, "$Body/Parent/*[string() = 'Test']"), "Test");
    assert_eq!(
        string(SALE, "name($Body/Parent/*[position() = last()])"),
        "Last"
    );
    assert_eq!(
        string(SALE, "$Body/Parent/*[local-name() = 'Last']"),
        "Test"
    );
    assert_eq!(number(SALE, "position()"), 1.0);
    assert_eq!(number(SALE, "last()"), 1.0);
}

#[test]
fn name_functions_read_element_and_attribute_names() {
    assert_eq!(string(SALE, "name($Body/Parent/*[2])"), "SaleList");
    assert_eq!(string(SALE, "local-name($Body//@kind)"), "kind");
    assert_eq!(string(SALE, "name($Body/Nothing)"), "");
    assert_eq!(string(SALE, "name($Body/Parent/First/text())"), "");
    assert_eq!(string(SALE, "namespace-uri($Body/Parent)"), "");
}

#[test]
fn rounding_functions_follow_xpath() {
    assert_eq!(number(SALE, "floor(-1.5)"), -2.0);
    assert_eq!(number(SALE, "ceiling(1.2)"), 2.0);
    assert_eq!(number(SALE, "round(2.5)"), 3.0);
    assert_eq!(number(SALE, "round(-2.5)"), -2.0);
    assert_eq!(number(SALE, "round($Body//Amount)"), 11.0);
}
