//! Location paths: variables, steps, abbreviations, predicates, axes, node tests.

use crate::xpath::tests::{SALE, eval, message, names, string, values};
use crate::xpath::tree_api::{Message, Text, Tree, Value, field_type};
use crate::xpath::{XPath, XPathContext, XValue};

#[test]
fn body_path_selects_first_when_following_children() {
    assert_eq!(values(SALE, "$Body/Parent/First"), ["1"]);
    assert_eq!(values(SALE, "$Body/Parent/Last"), ["Test"]);
}

#[test]
fn root_variable_and_absolute_path_reach_the_same_nodes() {
    assert_eq!(values(SALE, "$Root/XMLNSC/Parent/Last"), ["Test"]);
    assert_eq!(values(SALE, "/XMLNSC/Parent/Last"), ["Test"]);
    assert_eq!(values(SALE, "XMLNSC/Parent/Last"), ["Test"]);
    assert_eq!(names(SALE, "/"), ["Root"]);
    assert_eq!(names(SALE, "$Root/*"), ["Properties", "XMLNSC"]);
}

#[test]
fn wildcard_selects_child_elements_in_document_order() {
    assert_eq!(
        names(SALE, "$Body/Parent/*"),
        ["First", "SaleList", "SaleList", "Last"]
    );
    assert_eq!(names(SALE, "$Body/*/SaleList/*/Amount").len(), 3);
}

#[test]
fn descendant_paths_find_nodes_at_any_depth_in_document_order() {
    assert_eq!(values(SALE, "$Body//Amount"), ["10.5", "20", "5"]);
    assert_eq!(values(SALE, "//Initial"), ["K", "L"]);
    assert_eq!(
        values(SALE, "$Body/Parent//Invoice/@id"),
        ["A1", "A2", "B1"]
    );
    assert_eq!(
        names(SALE, "$Body/descendant::Invoice[1]/descendant-or-self::*"),
        ["Invoice", "Initial", "Amount"]
    );
}

#[test]
fn descendant_results_are_deduplicated_when_contexts_nest() {
    let xml = "<a><b><b><c>1</c></b></b></a>";
    assert_eq!(values(xml, "$Body//b//c"), ["1"]);
    assert_eq!(names(xml, "$Body//b"), ["b", "b"]);
}

#[test]
fn dot_and_dot_dot_move_to_self_and_parent() {
    assert_eq!(names(SALE, "$Body/Parent/First/."), ["First"]);
    assert_eq!(names(SALE, "$Body/Parent/First/.."), ["Parent"]);
    assert_eq!(names(SALE, "$Body/Parent/SaleList/.."), ["Parent"]);
    assert_eq!(
        names(SALE, "$Body/Parent/SaleList/Invoice/@id/.."),
        ["Invoice", "Invoice", "Invoice"]
    );
}

#[test]
fn attributes_are_selected_by_name_and_wildcard() {
    assert_eq!(
        values(SALE, "$Body/Parent/SaleList/Invoice/@id"),
        ["A1", "A2", "B1"]
    );
    assert_eq!(
        names(SALE, "$Body/Parent/SaleList[1]/Invoice[1]/@*"),
        ["@id", "@kind"]
    );
    assert_eq!(
        values(SALE, "$Body/Parent/SaleList/Invoice/attribute::kind"),
        ["x"]
    );
    // Attributes are not children.
    assert!(names(SALE, "$Body/Parent/SaleList/Invoice/id").is_empty());
}

#[test]
fn text_and_node_tests_select_values_and_mixed_content() {
    assert_eq!(values(SALE, "$Body/Parent/First/text()"), ["1"]);
    let xml = "<p>one<b>two</b>three<!--note--></p>";
    assert_eq!(values(xml, "$Body/p/text()"), ["one", "three"]);
    assert_eq!(
        names(xml, "$Body/p/node()"),
        ["#text", "b", "#text", "#comment"]
    );
    assert_eq!(values(xml, "$Body/p/comment()"), ["note"]);
    assert_eq!(string(xml, "$Body/p"), "onetwothree");
}

#[test]
fn numeric_predicates_select_by_position() {
    assert_eq!(values(SALE, "$Body/Parent/SaleList[2]/Invoice/@id"), ["B1"]);
    assert_eq!(
        values(SALE, "$Body/Parent/SaleList/Invoice[1]/@id"),
        ["A1", "B1"]
    );
    assert_eq!(
        values(SALE, "$Body/Parent/SaleList/Invoice[last()]/@id"),
        ["A2", "B1"]
    );
    assert_eq!(
        names(SALE, "$Body/Parent/*[position() < 3]"),
        ["First", "SaleList"]
    );
    assert_eq!(
        names(SALE, "$Body/Parent/*[position() <= 2]"),
        ["First", "SaleList"]
    );
    assert_eq!(names(SALE, "$Body/Parent/*[last() - 1]"), ["SaleList"]);
    assert!(names(SALE, "$Body/Parent/*[0]").is_empty());
    assert!(names(SALE, "$Body/Parent/*[1.5]").is_empty());
}

#[test]
fn boolean_predicates_filter_by_content() {
    assert_eq!(
        values(SALE, "$Body/Parent/SaleList/Invoice[Amount > 6]/@id"),
        ["A1", "A2"]
    );
    assert_eq!(
        values(SALE, "$Body/Parent/SaleList/Invoice[@id = 'A2']/Initial"),
        ["L"]
    );
    assert_eq!(
        values(SALE, "$Body/Parent/SaleList/Invoice[Initial]/@id"),
        ["A1", "A2"]
    );
    assert_eq!(
        values(SALE, "$Body/Parent/SaleList/Invoice[not(Initial)]/@id"),
        ["B1"]
    );
    assert_eq!(
        values(SALE, "$Body/Parent/SaleList/Invoice[Initial][2]/@id"),
        ["A2"]
    );
    assert_eq!(
        values(
            SALE,
            "$Body/Parent/SaleList[Invoice[@id = 'B1']]/Invoice/Amount"
        ),
        ["5"]
    );
}

#[test]
fn filter_expressions_count_positions_in_document_order() {
    assert_eq!(values(SALE, "($Body//Invoice)[2]/@id"), ["A2"]);
    assert_eq!(values(SALE, "($Body//Invoice)[last()]/@id"), ["B1"]);
    assert_eq!(values(SALE, "($Body//Amount | $Body//Initial)[1]"), ["K"]);
}

#[test]
fn reverse_axes_count_positions_backwards() {
    assert_eq!(
        names(SALE, "$Body/Parent/Last/preceding-sibling::*[1]"),
        ["SaleList"]
    );
    assert_eq!(
        names(SALE, "$Body/Parent/First/following-sibling::*"),
        ["SaleList", "SaleList", "Last"]
    );
    assert_eq!(
        names(SALE, "$Body//Amount[1]/ancestor::*[2]"),
        ["SaleList", "SaleList"]
    );
    assert_eq!(
        names(SALE, "$Body//Initial[1]/ancestor-or-self::*[last()]"),
        ["Root"]
    );
    assert_eq!(names(SALE, "$Body/Parent/self::Parent"), ["Parent"]);
    assert!(names(SALE, "$Body/Parent/self::Other").is_empty());
}

#[test]
fn union_merges_in_document_order_without_duplicates() {
    assert_eq!(
        values(SALE, "$Body/Parent/Last | $Body/Parent/First"),
        ["1", "Test"]
    );
    assert_eq!(
        values(SALE, "$Body/Parent/First | $Body/Parent/*[1]"),
        ["1"]
    );
    assert_eq!(
        values(SALE, "$Body//@id | $Body//Amount"),
        ["A1", "10.5", "A2", "20", "B1", "5"]
    );
}

#[test]
fn prefixed_names_match_namespaces_from_the_compile_time_map() {
    let xml =
        "<{urn:o}Order><{urn:o}Id>7</{urn:o}Id><Id>8</Id><{urn:p}Id>9</{urn:p}Id></{urn:o}Order>";
    let mut m = message(xml);
    let mut env = Tree::new("Environment");
    let mut cx = XPathContext::new(&mut m, &mut env);
    let ns = [("o", "urn:o"), ("p", "urn:p")];
    let q = |cx: &mut XPathContext<'_>, e: &str| {
        let x = XPath::compile_with_namespaces(e, &ns).expect("compiles");
        x.evaluate_string(cx).expect("evaluates")
    };
    assert_eq!(q(&mut cx, "$Body/o:Order/o:Id"), "7");
    assert_eq!(q(&mut cx, "$Body/o:Order/Id"), "8");
    assert_eq!(q(&mut cx, "$Body/o:Order/p:Id"), "9");
    assert_eq!(q(&mut cx, "count($Body/o:Order/o:*)"), "1");
    assert_eq!(q(&mut cx, "count($Body/o:Order/*)"), "3");
    assert_eq!(q(&mut cx, "name($Body/*/p:Id)"), "p:Id");
    assert_eq!(q(&mut cx, "local-name($Body/*/p:Id)"), "Id");
    assert_eq!(q(&mut cx, "namespace-uri($Body/*)"), "urn:o");
    assert!(XPath::compile("$Body/o:Order").is_err());
}

#[test]
fn variables_reach_each_tree_of_the_assembly() {
    let mut m = message(SALE);
    let le = m.local_environment.root();
    let dest = m
        .local_environment
        .create_last_child(
            le,
            field_type::NAME,
            Text::from_static("Destination"),
            Value::Null,
        )
        .expect("create");
    let t = m.local_environment.alloc_text(b"Q1");
    m.local_environment
        .create_last_child(
            dest,
            field_type::NAME_VALUE,
            Text::from_static("Queue"),
            Value::Character(t),
        )
        .expect("create");
    let mut env = Tree::new("Environment");
    let er = env.root();
    env.create_last_child(
        er,
        field_type::NAME_VALUE,
        Text::from_static("Count"),
        Value::Integer(3),
    )
    .expect("create");
    let mut cx = XPathContext::new(&mut m, &mut env);
    let s = |cx: &mut XPathContext<'_>, e: &str| {
        XPath::compile(e)
            .expect("compiles")
            .evaluate_string(cx)
            .expect("evaluates")
    };
    assert_eq!(s(&mut cx, "$LocalEnvironment/Destination/Queue"), "Q1");
    assert_eq!(s(&mut cx, "$Environment/Count + 1"), "4");
    assert_eq!(s(&mut cx, "name($ExceptionList)"), "ExceptionList");
    assert_eq!(s(&mut cx, "name($Body)"), "XMLNSC");
    assert_eq!(s(&mut cx, "count($Root/Properties)"), "1");
    // Union across trees keeps the trees' order.
    let x = XPath::compile("$Environment/Count | $LocalEnvironment/Destination/Queue")
        .expect("compiles");
    let XValue::NodeSet(ns) = x.evaluate(&mut cx).expect("evaluates") else {
        panic!("node-set")
    };
    assert_eq!(ns.len(), 2);
    assert_eq!(cx.string_value(ns[0]).expect("value"), "Q1");
}

#[test]
fn missing_environment_and_body_are_empty_node_sets() {
    let mut m = Message::new();
    let mut cx = XPathContext::without_environment(&mut m);
    for e in [
        "count($Environment)",
        "count($Body)",
        "count($Environment/a)",
    ] {
        let x = XPath::compile(e).expect("compiles");
        assert_eq!(
            x.evaluate(&mut cx).expect("evaluates"),
            XValue::Number(0.0),
            "{e}"
        );
    }
}

#[test]
fn typed_values_read_as_strings_and_numbers() {
    let mut m = Message::new();
    let r = m.root.root();
    let body = m
        .root
        .create_last_child(r, field_type::NAME, Text::from_static("JSON"), Value::Null)
        .expect("create");
    for (name, v) in [
        ("i", Value::Integer(42)),
        ("f", Value::Float(2.5)),
        ("b", Value::Boolean(true)),
        ("d", Value::Date(0)),
    ] {
        m.root
            .create_last_child(body, field_type::NAME_VALUE, Text::from_static(name), v)
            .expect("create");
    }
    let mut cx = XPathContext::without_environment(&mut m);
    let s = |cx: &mut XPathContext<'_>, e: &str| {
        XPath::compile(e)
            .expect("compiles")
            .evaluate_string(cx)
            .expect("evaluates")
    };
    assert_eq!(s(&mut cx, "$Body/i"), "42");
    assert_eq!(s(&mut cx, "$Body/i * 2"), "84");
    assert_eq!(s(&mut cx, "$Body/f + 1"), "3.5");
    assert_eq!(s(&mut cx, "$Body/b"), "true");
    assert_eq!(s(&mut cx, "$Body/d"), "1970-01-01");
    assert_eq!(s(&mut cx, "$Body"), "422.5true1970-01-01");
    assert_eq!(s(&mut cx, "sum($Body/i | $Body/f)"), "44.5");
}

#[test]
fn changed_trees_find_attributes_added_after_content() {
    let mut m = message(SALE);
    let first = m
        .root
        .path(m.root.root(), &["XMLNSC", "Parent", "First"])
        .expect("path")
        .expect("exists");
    let t = m.root.alloc_text(b"late");
    m.root
        .create_last_child(
            first,
            0x0300_0100,
            Text::from_static("flag"),
            Value::Character(t),
        )
        .expect("create");
    let mut cx = XPathContext::without_environment(&mut m);
    let x = XPath::compile("$Body/Parent/First/@flag").expect("compiles");
    assert_eq!(x.evaluate_string(&mut cx).expect("evaluates"), "late");
    // The attribute is not part of the element's string value.
    let x = XPath::compile("string($Body/Parent/First)").expect("compiles");
    assert_eq!(x.evaluate_string(&mut cx).expect("evaluates"), "1");
}

#[test]
fn node_set_results_are_returned_whole() {
    match eval(SALE, "$Body/Parent/SaleList") {
        XValue::NodeSet(ns) => assert_eq!(ns.len(), 2),
        other => panic!("{other:?}"),
    }
}

#[test]
fn xmlnsc_field_types_map_to_xpath_node_kinds() {
    use crate::field_type::xmlnsc;
    let mut m = Message::new();
    let t = &mut m.root;
    let r = t.root();
    let body = t
        .create_last_child(
            r,
            field_type::NAME,
            Text::from_static("XMLNSC"),
            Value::Null,
        )
        .expect("create");
    t.create_last_child(
        body,
        xmlnsc::XML_DECLARATION,
        Text::from_static("XmlDeclaration"),
        Value::Null,
    )
    .expect("create");
    let parent = t
        .create_last_child(
            body,
            field_type::NAME,
            Text::from_static("Parent"),
            Value::Null,
        )
        .expect("create");
    let uri = t.alloc_text(b"urn:p");
    t.create_last_child(
        parent,
        xmlnsc::SINGLE_NAMESPACE_DECL,
        Text::from_static("p"),
        Value::Character(uri),
    )
    .expect("create");
    let id = t.alloc_text(b"7");
    t.create_last_child(
        parent,
        xmlnsc::SINGLE_ATTRIBUTE,
        Text::from_static("id"),
        Value::Character(id),
    )
    .expect("create");
    let pi = t.alloc_text(b"go");
    t.create_last_child(
        parent,
        xmlnsc::PROCESSING_INSTRUCTION,
        Text::from_static("target"),
        Value::Character(pi),
    )
    .expect("create");
    let one = t.alloc_text(b"1");
    t.create_last_child(
        parent,
        field_type::NAME_VALUE,
        Text::from_static("First"),
        Value::Character(one),
    )
    .expect("create");
    let mut cx = XPathContext::without_environment(&mut m);
    let s = |cx: &mut XPathContext<'_>, e: &str| {
        XPath::compile(e)
            .expect("compiles")
            .evaluate_string(cx)
            .expect("evaluates")
    };
    assert_eq!(s(&mut cx, "count($Body/*)"), "1");
    assert_eq!(s(&mut cx, "count($Body/node())"), "1");
    assert_eq!(s(&mut cx, "count($Body/Parent/@*)"), "1");
    assert_eq!(s(&mut cx, "$Body/Parent/@id"), "7");
    assert_eq!(
        s(&mut cx, "$Body/Parent/processing-instruction('target')"),
        "go"
    );
    assert_eq!(
        s(
            &mut cx,
            "count($Body/Parent/processing-instruction('other'))"
        ),
        "0"
    );
    assert_eq!(s(&mut cx, "count($Body/Parent/node())"), "2");
    assert_eq!(s(&mut cx, "$Body/Parent"), "1");
}
