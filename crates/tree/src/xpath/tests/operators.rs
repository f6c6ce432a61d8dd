//! Comparisons with XPath 1.0 node-set, string, number and boolean semantics; arithmetic;
//! boolean logic.

use crate::xpath::XValue;
use crate::xpath::tests::{SALE, eval, number, truth};

#[test]
fn seed_route_rules_hold_for_the_seed_message() {
    assert!(truth(SALE, "$Body/Parent/First = '1'"));
    assert!(truth(SALE, "$Body/Parent/Last = 'Test'"));
    assert!(truth(SALE, "count($Body/Parent/SaleList) > 1"));
    assert!(!truth(SALE, "$Body/Parent/Last = 'test'"));
    assert!(truth(SALE, "$Body/Parent [1]/First[1] = 1"));
}

#[test]
fn node_set_equality_is_existential() {
    assert!(truth(SALE, "$Body//Amount = 20"));
    assert!(truth(SALE, "$Body//Amount != 20"));
    assert!(truth(SALE, "$Body//@id = 'B1'"));
    assert!(!truth(SALE, "$Body//@id = 'C1'"));
    // An empty node-set compares false with everything, even with !=.
    assert!(!truth(SALE, "$Body/Nothing = 'x'"));
    assert!(!truth(SALE, "$Body/Nothing != 'x'"));
    assert!(!truth(SALE, "$Body/Nothing = $Body/Nothing"));
}

#[test]
fn node_set_relations_compare_as_numbers() {
    assert!(truth(SALE, "$Body//Amount > 15"));
    assert!(truth(SALE, "$Body//Amount < 6"));
    assert!(!truth(SALE, "$Body//Amount > 20"));
    assert!(truth(SALE, "15 < $Body//Amount"));
    assert!(truth(SALE, "$Body//Amount >= '20'"));
    assert!(!truth(SALE, "$Body//Initial > 0"));
}

#[test]
fn node_sets_compare_with_each_other_by_string_values() {
    assert!(truth(SALE, "$Body//Invoice[1]/@id = $Body//@id"));
    assert!(truth(SALE, "$Body//Amount > $Body/Parent/First"));
    assert!(!truth(SALE, "$Body//Initial = $Body//Amount"));
    assert!(truth(SALE, "$Body//Initial != $Body//Amount"));
}

#[test]
fn node_set_compares_with_boolean_by_emptiness() {
    assert!(truth(SALE, "$Body/Parent = true()"));
    assert!(truth(SALE, "$Body/Nothing = false()"));
    assert!(!truth(SALE, "$Body/Nothing = true()"));
}

#[test]
fn scalar_comparisons_convert_by_type_priority() {
    assert!(truth(SALE, "1 = '1.0'"));
    assert!(!truth(SALE, "'1' = '1.0'"));
    assert!(truth(SALE, "true() = 'x'"));
    assert!(truth(SALE, "false() = ''"));
    assert!(truth(SALE, "'10' > '9'"));
    assert!(truth(SALE, "1 < 2 = true()"));
    assert!(!truth(SALE, "number('x') = number('x')"));
    assert!(truth(SALE, "number('x') != number('x')"));
}

#[test]
fn arithmetic_follows_ieee_and_xpath_rules() {
    assert_eq!(number(SALE, "1 + 2 * 3"), 7.0);
    assert_eq!(number(SALE, "(1 + 2) * 3"), 9.0);
    assert_eq!(number(SALE, "7 div 2"), 3.5);
    assert_eq!(number(SALE, "7 mod 3"), 1.0);
    assert_eq!(number(SALE, "-7 mod 3"), -1.0);
    assert_eq!(number(SALE, "- - 4"), 4.0);
    assert_eq!(number(SALE, "10 - -2"), 12.0);
    assert_eq!(number(SALE, "1 div 0"), f64::INFINITY);
    assert!(number(SALE, "0 div 0").is_nan());
    assert_eq!(number(SALE, "$Body//Amount[1] * 2"), 21.0);
    assert!(number(SALE, "$Body//Initial + 1").is_nan());
}

#[test]
fn multiply_and_operator_names_are_told_apart_from_names() {
    let xml = "<r><div>6</div><mod>4</mod><and>1</and></r>";
    assert_eq!(number(xml, "$Body/r/div * $Body/r/mod"), 24.0);
    assert_eq!(number(xml, "$Body/r/div div $Body/r/mod"), 1.5);
    assert!(truth(xml, "$Body/r/and and $Body/r/*"));
    assert_eq!(number(xml, "count($Body/r/*) * 2"), 6.0);
}

#[test]
fn boolean_logic_short_circuits_and_converts() {
    assert!(truth(SALE, "1 or $Body/Nothing"));
    assert!(!truth(SALE, "0 and $Body/Parent"));
    assert!(truth(SALE, "'a' and 2"));
    assert!(!truth(SALE, "'' or 0"));
    assert!(truth(SALE, "not(0) and not('')"));
    assert_eq!(eval(SALE, "1 < 2 and 2 < 3"), XValue::Boolean(true));
}
