use super::*;
use osprey_xml::Limits;

fn doc() -> Element {
    Element::parse(
        br#"<c:Doc xmlns:c="urn:c"><c:Value>5</c:Value><c:Name>alpha</c:Name><c:Item n="1">10</c:Item><c:Item n="2">20</c:Item><c:Nested><c:Value>7</c:Value></c:Nested></c:Doc>"#,
        &Limits::default(),
    )
    .unwrap()
}

fn scope() -> Scope {
    let mut s = Scope::default();
    s.bind("c", "urn:c");
    s
}

fn eval_str(expr: &str) -> QueryResult {
    Expr::parse(expr, &scope())
        .unwrap_or_else(|e| panic!("{expr}: {e}"))
        .evaluate(&doc())
}

fn value(expr: &str) -> String {
    match eval_str(expr) {
        QueryResult::Value(v) => v,
        other => panic!("{expr}: expected a value, got {other:?}"),
    }
}

fn texts(expr: &str) -> Vec<String> {
    match eval_str(expr) {
        QueryResult::Nodes(n) => n
            .into_iter()
            .map(|n| match n {
                QueryNode::Element(e) => e.string_value(),
                QueryNode::Text(t) => t,
            })
            .collect(),
        other => panic!("{expr}: expected nodes, got {other:?}"),
    }
}

#[test]
fn paths_select_what_xpath_selects() {
    assert_eq!(texts("/*/c:Value"), ["5"]);
    assert_eq!(texts("c:Value"), ["5"]);
    assert_eq!(texts("//c:Value"), ["5", "7"]);
    assert_eq!(texts("/c:Doc/c:Item"), ["10", "20"]);
    assert_eq!(texts("c:Item[2]"), ["20"]);
    assert_eq!(texts("c:Item[@n = '1']"), ["10"]);
    assert_eq!(texts("c:Item[. > 15]"), ["20"]);
    assert_eq!(texts("c:Item[last()]"), ["20"]);
    assert_eq!(texts("c:Value | c:Name"), ["5", "alpha"]);
    assert_eq!(texts("c:Value/text()"), ["5"]);
    assert_eq!(texts("c:*[1]"), ["5"]);
    assert_eq!(texts("c:Item/@n"), ["1", "2"]);
    assert_eq!(texts("c:Nested//c:Value"), ["7"]);
    assert!(texts("c:Missing").is_empty());
}

#[test]
fn scalars_follow_xpath_1_0() {
    assert_eq!(value("/*/c:Value > 3"), "true");
    assert_eq!(value("c:Value = 5 and c:Name = 'alpha'"), "true");
    assert_eq!(value("c:Value != 5 or false()"), "false");
    assert_eq!(value("count(c:Item)"), "2");
    assert_eq!(value("sum(c:Item) div 4"), "7.5");
    assert_eq!(value("c:Value * 2 - 1"), "9");
    assert_eq!(value("-c:Value mod 3"), "-2");
    assert_eq!(value("string-length(c:Name)"), "5");
    assert_eq!(value("concat(c:Name, '-', c:Value)"), "alpha-5");
    assert_eq!(
        value("contains(c:Name, 'ph') and starts-with(c:Name, 'al')"),
        "true"
    );
    assert_eq!(value("local-name(c:*[2])"), "Name");
    assert_eq!(value("not(c:Missing)"), "true");
    assert_eq!(value("number('x')"), "NaN");
    assert_eq!(value("boolean(c:Item[. = 20])"), "true");
    // A node-set equals a value when any node does.
    assert_eq!(value("c:Item = 20"), "true");
    assert_eq!(value("c:Item = c:Value"), "false");
}

#[test]
fn everything_outside_the_subset_is_refused_by_name() {
    for (expr, why) in [
        ("child::c:Value", "axis"),
        ("c:Value/..", "parent"),
        ("$x", "variables"),
        ("id('a')", "function id()"),
        ("(c:Item)[1]", "parenthesized"),
        ("c:Value[", "expected"),
        ("x:Value", "not declared"),
        ("'open", "not closed"),
        ("c:Value #", "unexpected character"),
        ("", "empty"),
        ("1 2", "after the end"),
    ] {
        let err = Expr::parse(expr, &scope()).unwrap_err();
        assert!(err.contains(why), "{expr:?}: {err}");
    }
}

#[test]
fn deep_or_long_expressions_are_refused_not_overflowed() {
    let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(Expr::parse(&deep, &scope()).unwrap_err().contains("longer"));
    let nested = format!("{}1{}", "(".repeat(100), ")".repeat(100));
    assert!(Expr::parse(&nested, &scope())
        .unwrap_err()
        .contains("deeper"));
    let minus = format!("{}1", "-".repeat(1000));
    assert!(Expr::parse(&minus, &scope())
        .unwrap_err()
        .contains("deeper"));
}
