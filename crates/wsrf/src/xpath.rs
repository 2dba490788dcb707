//! The XPath 1.0 subset that queries over a resource property document need
//! (`QueryResourceProperties`, dialect `http://www.w3.org/TR/1999/REC-xpath-19991116`).
//!
//! Supported:
//! - location paths, absolute (`/`, `//`) and relative (the context node is the property
//!   document's root element), with abbreviated steps only: name tests (`tns:Value`,
//!   `tns:*`, `*`), `.`, `text()`, `node()`, `@attr`, and `//` between steps;
//! - predicates (`[expr]`; a number is a position), union `|`;
//! - `or`, `and`, `=`, `!=`, `<`, `<=`, `>`, `>=`, `+`, `-`, `*`, `div`, `mod`, unary `-`,
//!   with XPath 1.0's comparison rules between node-sets, numbers, strings and booleans;
//! - number and string literals; the functions `count`, `sum`, `boolean`, `not`, `true`,
//!   `false`, `number`, `string`, `string-length`, `concat`, `contains`, `starts-with`,
//!   `local-name`, `name`, `position`, `last`.
//!
//! Anything else (axes written out, `..`, variables, other functions) is refused with a
//! message naming it, which the service returns as `InvalidQueryExpressionFault` (or, for
//! a subscription's MessageContent filter, `InvalidMessageContentExpressionFault`).
//! A filter is evaluated with the notification message element as its context node.
//! Expressions are limited to 4,096 characters and 64 levels of nesting.

use osprey_xml::{QName, Scope};

use crate::doc::{resolve_qname, Element, Node};
use crate::messages::QueryResourcePropertiesResponse;

const MAX_LEN: usize = 4096;
const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Slash,
    DoubleSlash,
    LBracket,
    RBracket,
    LParen,
    RParen,
    At,
    Comma,
    Pipe,
    Dot,
    DotDot,
    Star,
    Op(&'static str),
    Number(f64),
    Literal(String),
    /// A name test: `prefix:local`, `prefix:*` or `local`.
    Name(String),
    /// A name followed by `(`: a function or node type.
    Function(String),
    Other(String),
}

fn tokenize(s: &str) -> Result<Vec<Tok>, String> {
    let b: Vec<char> = s.chars().collect();
    let mut out: Vec<Tok> = Vec::new();
    let mut i = 0;
    // XPath 1.0 §3.7: after these, `*` and names are operands, not operators.
    let operand_expected = |out: &[Tok]| match out.last() {
        None => true,
        Some(t) => matches!(
            t,
            Tok::At
                | Tok::LParen
                | Tok::LBracket
                | Tok::Comma
                | Tok::Op(_)
                | Tok::Slash
                | Tok::DoubleSlash
                | Tok::Pipe
        ),
    };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        match c {
            ' ' | '\t' | '\r' | '\n' => {
                i += 1;
                continue;
            }
            '/' if next == Some('/') => {
                out.push(Tok::DoubleSlash);
                i += 2;
                continue;
            }
            '/' => out.push(Tok::Slash),
            '[' => out.push(Tok::LBracket),
            ']' => out.push(Tok::RBracket),
            '(' => out.push(Tok::LParen),
            ')' => out.push(Tok::RParen),
            '@' => out.push(Tok::At),
            ',' => out.push(Tok::Comma),
            '|' => out.push(Tok::Pipe),
            '=' => out.push(Tok::Op("=")),
            '!' if next == Some('=') => {
                out.push(Tok::Op("!="));
                i += 2;
                continue;
            }
            '<' | '>' => {
                let op = match (c, next == Some('=')) {
                    ('<', true) => "<=",
                    ('<', false) => "<",
                    (_, true) => ">=",
                    _ => ">",
                };
                out.push(Tok::Op(op));
                i += op.len();
                continue;
            }
            '+' => out.push(Tok::Op("+")),
            '-' => out.push(Tok::Op("-")),
            '*' => {
                if operand_expected(&out) {
                    out.push(Tok::Star);
                } else {
                    out.push(Tok::Op("*"));
                }
            }
            '$' => return Err("variables ($name) are not supported".into()),
            '"' | '\'' => {
                let end = b[i + 1..]
                    .iter()
                    .position(|&x| x == c)
                    .ok_or("a string literal is not closed")?;
                out.push(Tok::Literal(b[i + 1..i + 1 + end].iter().collect()));
                i += end + 2;
                continue;
            }
            '.' if next == Some('.') => {
                out.push(Tok::DotDot);
                i += 2;
                continue;
            }
            '.' if !next.is_some_and(|n| n.is_ascii_digit()) => out.push(Tok::Dot),
            c if c.is_ascii_digit() || c == '.' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_digit() || b[i] == '.') {
                    i += 1;
                }
                let text: String = b[start..i].iter().collect();
                let n = text
                    .parse()
                    .map_err(|_| format!("{text:?} is not a number"))?;
                out.push(Tok::Number(n));
                continue;
            }
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while i < b.len()
                    && (b[i].is_alphanumeric() || matches!(b[i], '_' | '-' | '.' | ':'))
                {
                    // `::` is an axis, not part of a name.
                    if b[i] == ':' && b.get(i + 1) == Some(&':') {
                        break;
                    }
                    i += 1;
                }
                let mut name: String = b[start..i].iter().collect();
                if name.ends_with(':') && b.get(i) == Some(&'*') {
                    name.push('*');
                    i += 1;
                }
                if b.get(i) == Some(&':') && b.get(i + 1) == Some(&':') {
                    return Err(format!(
                        "axis {name}:: is not supported (use the abbreviated syntax)"
                    ));
                }
                if !operand_expected(&out) {
                    match name.as_str() {
                        "and" | "or" | "div" | "mod" => {
                            out.push(Tok::Op(match name.as_str() {
                                "and" => "and",
                                "or" => "or",
                                "div" => "div",
                                _ => "mod",
                            }));
                            continue;
                        }
                        _ => return Err(format!("unexpected name {name:?}")),
                    }
                }
                let mut j = i;
                while j < b.len() && b[j].is_whitespace() {
                    j += 1;
                }
                if b.get(j) == Some(&'(') {
                    out.push(Tok::Function(name));
                } else {
                    out.push(Tok::Name(name));
                }
                continue;
            }
            other => out.push(Tok::Other(other.to_string())),
        }
        i += 1;
    }
    Ok(out)
}

#[derive(Debug, Clone, PartialEq)]
enum Test {
    /// `*`
    Any,
    /// `prefix:*`
    Namespace(String),
    /// A QName.
    Name(QName),
    /// `text()`
    Text,
    /// `node()`
    Node,
    /// `.`
    SelfNode,
}

#[derive(Debug, Clone, PartialEq)]
struct Step {
    /// True for `//` before this step (descendant-or-self).
    descendants: bool,
    attribute: bool,
    test: Test,
    predicates: Vec<Ast>,
}

#[derive(Debug, Clone, PartialEq)]
enum Ast {
    Path { absolute: bool, steps: Vec<Step> },
    Union(Box<Ast>, Box<Ast>),
    Binary(&'static str, Box<Ast>, Box<Ast>),
    Negate(Box<Ast>),
    Number(f64),
    Literal(String),
    Call(String, Vec<Ast>),
}

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    ast: Ast,
}

struct Parser<'s> {
    toks: Vec<Tok>,
    at: usize,
    scope: &'s Scope,
    depth: usize,
}

const FUNCTIONS: [&str; 16] = [
    "count",
    "sum",
    "boolean",
    "not",
    "true",
    "false",
    "number",
    "string",
    "string-length",
    "concat",
    "contains",
    "starts-with",
    "local-name",
    "name",
    "position",
    "last",
];

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == Some(t) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, t: &Tok, what: &str) -> Result<(), String> {
        if self.eat(t) {
            Ok(())
        } else {
            Err(format!("expected {what}"))
        }
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!(
                "the expression nests deeper than {MAX_DEPTH} levels"
            ));
        }
        Ok(())
    }

    fn binary(
        &mut self,
        ops: &[&'static str],
        next: fn(&mut Self) -> Result<Ast, String>,
    ) -> Result<Ast, String> {
        let mut left = next(self)?;
        while let Some(Tok::Op(op)) = self.peek() {
            let Some(op) = ops.iter().find(|o| *o == op).copied() else {
                break;
            };
            self.at += 1;
            let right = next(self)?;
            left = Ast::Binary(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn expr(&mut self) -> Result<Ast, String> {
        self.enter()?;
        let r = self.binary(&["or"], |p| {
            p.binary(&["and"], |p| {
                p.binary(&["=", "!="], |p| {
                    p.binary(&["<", "<=", ">", ">="], |p| {
                        p.binary(&["+", "-"], |p| p.binary(&["*", "div", "mod"], Self::unary))
                    })
                })
            })
        });
        self.depth -= 1;
        r
    }

    fn unary(&mut self) -> Result<Ast, String> {
        if self.eat(&Tok::Op("-")) {
            self.enter()?;
            let inner = self.unary()?;
            self.depth -= 1;
            return Ok(Ast::Negate(Box::new(inner)));
        }
        let mut left = self.path_or_primary()?;
        while self.eat(&Tok::Pipe) {
            let right = self.path_or_primary()?;
            left = Ast::Union(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn path_or_primary(&mut self) -> Result<Ast, String> {
        match self.peek().cloned() {
            Some(Tok::Number(n)) => {
                self.at += 1;
                Ok(Ast::Number(n))
            }
            Some(Tok::Literal(s)) => {
                self.at += 1;
                Ok(Ast::Literal(s))
            }
            Some(Tok::LParen) => {
                self.at += 1;
                let e = self.expr()?;
                self.expect(&Tok::RParen, "`)`")?;
                if matches!(
                    self.peek(),
                    Some(Tok::Slash | Tok::DoubleSlash | Tok::LBracket)
                ) {
                    return Err(
                        "filtering or stepping from a parenthesized expression is not supported"
                            .into(),
                    );
                }
                Ok(e)
            }
            Some(Tok::Function(f)) if f != "text" && f != "node" => {
                self.at += 1;
                if !FUNCTIONS.contains(&f.as_str()) {
                    return Err(format!("function {f}() is not supported"));
                }
                self.expect(&Tok::LParen, "`(`")?;
                let mut args = Vec::new();
                if !self.eat(&Tok::RParen) {
                    loop {
                        args.push(self.expr()?);
                        if self.eat(&Tok::RParen) {
                            break;
                        }
                        self.expect(&Tok::Comma, "`,` or `)`")?;
                    }
                }
                Ok(Ast::Call(f, args))
            }
            _ => self.path(),
        }
    }

    fn path(&mut self) -> Result<Ast, String> {
        let mut steps = Vec::new();
        let mut absolute = false;
        let mut descendants = false;
        if self.eat(&Tok::Slash) {
            absolute = true;
            if !self.starts_step() {
                return Ok(Ast::Path { absolute, steps });
            }
        } else if self.eat(&Tok::DoubleSlash) {
            absolute = true;
            descendants = true;
        }
        loop {
            steps.push(self.step(descendants)?);
            if self.eat(&Tok::Slash) {
                descendants = false;
            } else if self.eat(&Tok::DoubleSlash) {
                descendants = true;
            } else {
                break;
            }
        }
        Ok(Ast::Path { absolute, steps })
    }

    fn starts_step(&self) -> bool {
        matches!(
            self.peek(),
            Some(Tok::Name(_) | Tok::Star | Tok::At | Tok::Dot | Tok::DotDot | Tok::Function(_))
        )
    }

    fn step(&mut self, descendants: bool) -> Result<Step, String> {
        let attribute = self.eat(&Tok::At);
        let test = match self.peek().cloned() {
            Some(Tok::Dot) if !attribute => Test::SelfNode,
            Some(Tok::DotDot) => return Err("the parent step `..` is not supported".into()),
            Some(Tok::Star) => Test::Any,
            Some(Tok::Name(n)) => match n.strip_suffix(":*") {
                Some(prefix) => Test::Namespace(
                    self.scope
                        .bindings()
                        .filter(|(p, _)| *p == prefix)
                        .last()
                        .map(|(_, u)| u.to_owned())
                        .ok_or_else(|| format!("prefix {prefix:?} is not declared"))?,
                ),
                None if attribute && !n.contains(':') => Test::Name(QName::new("", n)),
                None => Test::Name(resolve_qname(self.scope, &n)?),
            },
            Some(Tok::Function(f)) if f == "text" || f == "node" => {
                self.at += 1;
                self.expect(&Tok::LParen, "`(`")?;
                self.expect(&Tok::RParen, "`)`")?;
                self.at -= 1;
                if f == "text" {
                    Test::Text
                } else {
                    Test::Node
                }
            }
            Some(t) => return Err(format!("unexpected {t:?} where a step was expected")),
            None => return Err("the expression ends where a step was expected".into()),
        };
        self.at += 1;
        let mut predicates = Vec::new();
        while self.eat(&Tok::LBracket) {
            predicates.push(self.expr()?);
            self.expect(&Tok::RBracket, "`]`")?;
        }
        Ok(Step {
            descendants,
            attribute,
            test,
            predicates,
        })
    }
}

/// A node of the property document.
#[derive(Debug, Clone, Copy)]
enum N<'a> {
    /// The document node (parent of the root element).
    Document(&'a Element),
    Element(&'a Element),
    Text(&'a str),
    Attribute(&'a QName, &'a str),
}

impl N<'_> {
    fn string_value(&self) -> String {
        match self {
            N::Document(e) | N::Element(e) => e.string_value(),
            N::Text(t) => (*t).to_owned(),
            N::Attribute(_, v) => (*v).to_owned(),
        }
    }

    fn same(&self, other: &N<'_>) -> bool {
        match (self, other) {
            (N::Document(a), N::Document(b)) | (N::Element(a), N::Element(b)) => {
                std::ptr::eq(*a, *b)
            }
            (N::Text(a), N::Text(b)) => std::ptr::eq(*a, *b),
            (N::Attribute(a, _), N::Attribute(b, _)) => std::ptr::eq(*a, *b),
            _ => false,
        }
    }
}

#[derive(Debug, Clone)]
enum Value<'a> {
    Nodes(Vec<N<'a>>),
    Number(f64),
    Str(String),
    Bool(bool),
}

fn number_of(s: &str) -> f64 {
    s.trim().parse().unwrap_or(f64::NAN)
}

fn format_number(n: f64) -> String {
    if n.is_nan() {
        "NaN".into()
    } else if n.is_infinite() {
        if n > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else if n == n.trunc() && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

impl Value<'_> {
    fn boolean(&self) -> bool {
        match self {
            Value::Nodes(n) => !n.is_empty(),
            Value::Number(n) => *n != 0.0 && !n.is_nan(),
            Value::Str(s) => !s.is_empty(),
            Value::Bool(b) => *b,
        }
    }

    fn number(&self) -> f64 {
        match self {
            Value::Nodes(n) => n.first().map_or(f64::NAN, |n| number_of(&n.string_value())),
            Value::Number(n) => *n,
            Value::Str(s) => number_of(s),
            Value::Bool(b) => f64::from(u8::from(*b)),
        }
    }

    fn string(&self) -> String {
        match self {
            Value::Nodes(n) => n.first().map(N::string_value).unwrap_or_default(),
            Value::Number(n) => format_number(*n),
            Value::Str(s) => s.clone(),
            Value::Bool(b) => b.to_string(),
        }
    }
}

struct Ctx<'a> {
    node: N<'a>,
    position: usize,
    size: usize,
    root: &'a Element,
}

impl Expr {
    /// Parses `text` with the namespaces of `scope` (those in scope at the
    /// `QueryExpression` element).
    ///
    /// # Errors
    /// A message saying what is malformed or outside the supported subset.
    pub fn parse(text: &str, scope: &Scope) -> Result<Expr, String> {
        if text.len() > MAX_LEN {
            return Err(format!(
                "the expression is longer than {MAX_LEN} characters"
            ));
        }
        let toks = tokenize(text)?;
        if toks.is_empty() {
            return Err("the expression is empty".into());
        }
        if let Some(Tok::Other(c)) = toks.iter().find(|t| matches!(t, Tok::Other(_))) {
            return Err(format!("unexpected character {c:?}"));
        }
        let mut p = Parser {
            toks,
            at: 0,
            scope,
            depth: 0,
        };
        let ast = p.expr()?;
        if let Some(t) = p.peek() {
            return Err(format!("unexpected {t:?} after the end of the expression"));
        }
        Ok(Expr { ast })
    }

    /// The expression's boolean value over `doc` (XPath's `boolean()`; a number is
    /// true when non-zero): how a MessageContent filter decides.
    pub fn matches(&self, doc: &Element) -> bool {
        let ctx = Ctx {
            node: N::Element(doc),
            position: 1,
            size: 1,
            root: doc,
        };
        eval(&self.ast, &ctx).boolean()
    }

    /// Evaluates the expression over `doc` (the context node is its root element).
    pub fn evaluate(&self, doc: &Element) -> QueryResult {
        let ctx = Ctx {
            node: N::Element(doc),
            position: 1,
            size: 1,
            root: doc,
        };
        match eval(&self.ast, &ctx) {
            Value::Nodes(nodes) => QueryResult::Nodes(
                nodes
                    .into_iter()
                    .map(|n| match n {
                        N::Document(e) | N::Element(e) => QueryNode::Element(e.clone()),
                        N::Text(t) => QueryNode::Text(t.to_owned()),
                        N::Attribute(_, v) => QueryNode::Text(v.to_owned()),
                    })
                    .collect(),
            ),
            v => QueryResult::Value(v.string()),
        }
    }
}

/// What a query selected.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryResult {
    /// Nodes, in document order.
    Nodes(Vec<QueryNode>),
    /// A number, string or boolean, as `string()` writes it.
    Value(String),
}

/// A selected node.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryNode {
    /// An element (copied with its content).
    Element(Element),
    /// A text or attribute node's value.
    Text(String),
}

impl QueryResult {
    /// The `QueryResourcePropertiesResponse` carrying the result.
    pub fn into_response(self) -> QueryResourcePropertiesResponse {
        match self {
            QueryResult::Value(v) => QueryResourcePropertiesResponse::Value(v),
            QueryResult::Nodes(nodes) => {
                let mut elements = Vec::new();
                let mut text = String::new();
                for n in nodes {
                    match n {
                        QueryNode::Element(e) => elements.push(e),
                        QueryNode::Text(t) => text.push_str(&t),
                    }
                }
                if elements.is_empty() {
                    QueryResourcePropertiesResponse::Value(text)
                } else {
                    QueryResourcePropertiesResponse::Nodes(elements)
                }
            }
        }
    }
}

fn eval<'a>(ast: &Ast, ctx: &Ctx<'a>) -> Value<'a> {
    match ast {
        Ast::Number(n) => Value::Number(*n),
        Ast::Literal(s) => Value::Str(s.clone()),
        Ast::Negate(e) => Value::Number(-eval(e, ctx).number()),
        Ast::Union(a, b) => {
            let mut nodes = match eval(a, ctx) {
                Value::Nodes(n) => n,
                _ => Vec::new(),
            };
            if let Value::Nodes(more) = eval(b, ctx) {
                for m in more {
                    if !nodes.iter().any(|n| n.same(&m)) {
                        nodes.push(m);
                    }
                }
            }
            Value::Nodes(nodes)
        }
        Ast::Path { absolute, steps } => {
            let start = if *absolute {
                N::Document(ctx.root)
            } else {
                ctx.node
            };
            let mut nodes = vec![start];
            for step in steps {
                nodes = apply_step(step, &nodes, ctx.root);
            }
            Value::Nodes(nodes)
        }
        Ast::Binary(op, a, b) => binary(op, a, b, ctx),
        Ast::Call(f, args) => call(f, args, ctx),
    }
}

fn binary<'a>(op: &str, a: &Ast, b: &Ast, ctx: &Ctx<'a>) -> Value<'a> {
    let l = eval(a, ctx);
    // `or` and `and` evaluate their right operand only when it decides the result.
    match op {
        "or" => return Value::Bool(l.boolean() || eval(b, ctx).boolean()),
        "and" => return Value::Bool(l.boolean() && eval(b, ctx).boolean()),
        _ => {}
    }
    let r = eval(b, ctx);
    match op {
        "+" => Value::Number(l.number() + r.number()),
        "-" => Value::Number(l.number() - r.number()),
        "*" => Value::Number(l.number() * r.number()),
        "div" => Value::Number(l.number() / r.number()),
        "mod" => Value::Number(l.number() % r.number()),
        cmp => Value::Bool(compare(cmp, &l, &r)),
    }
}

fn compare_atoms(op: &str, l: &Value<'_>, r: &Value<'_>) -> bool {
    let equality = op == "=" || op == "!=";
    let result = if !equality {
        let (x, y) = (l.number(), r.number());
        match op {
            "<" => x < y,
            "<=" => x <= y,
            ">" => x > y,
            _ => x >= y,
        }
    } else if matches!(l, Value::Bool(_)) || matches!(r, Value::Bool(_)) {
        l.boolean() == r.boolean()
    } else if matches!(l, Value::Number(_)) || matches!(r, Value::Number(_)) {
        l.number() == r.number()
    } else {
        l.string() == r.string()
    };
    if op == "!=" {
        !result
    } else {
        result
    }
}

fn compare(op: &str, l: &Value<'_>, r: &Value<'_>) -> bool {
    // XPath 1.0 §3.4: a node-set compares true when some node's value does.
    match (l, r) {
        (Value::Nodes(ls), Value::Nodes(rs)) => ls.iter().any(|x| {
            rs.iter().any(|y| {
                compare_atoms(
                    op,
                    &Value::Str(x.string_value()),
                    &Value::Str(y.string_value()),
                )
            })
        }),
        (Value::Nodes(ns), Value::Bool(_)) | (Value::Bool(_), Value::Nodes(ns)) => {
            let nb = Value::Bool(!ns.is_empty());
            match l {
                Value::Nodes(_) => compare_atoms(op, &nb, r),
                _ => compare_atoms(op, l, &nb),
            }
        }
        (Value::Nodes(ns), other) => ns.iter().any(|n| {
            let v = match other {
                Value::Number(_) => Value::Number(number_of(&n.string_value())),
                _ => Value::Str(n.string_value()),
            };
            compare_atoms(op, &v, other)
        }),
        (other, Value::Nodes(ns)) => ns.iter().any(|n| {
            let v = match other {
                Value::Number(_) => Value::Number(number_of(&n.string_value())),
                _ => Value::Str(n.string_value()),
            };
            compare_atoms(op, other, &v)
        }),
        _ => compare_atoms(op, l, r),
    }
}

fn call<'a>(f: &str, args: &[Ast], ctx: &Ctx<'a>) -> Value<'a> {
    let arg = |i: usize| args.get(i).map(|a| eval(a, ctx));
    let arg_or_context = |i: usize| arg(i).unwrap_or_else(|| Value::Nodes(vec![ctx.node]));
    match f {
        "count" => Value::Number(match arg(0) {
            Some(Value::Nodes(n)) => n.len() as f64,
            _ => f64::NAN,
        }),
        "sum" => Value::Number(match arg(0) {
            Some(Value::Nodes(n)) => n.iter().map(|n| number_of(&n.string_value())).sum(),
            _ => f64::NAN,
        }),
        "boolean" => Value::Bool(arg(0).is_some_and(|v| v.boolean())),
        "not" => Value::Bool(!arg(0).is_some_and(|v| v.boolean())),
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "number" => Value::Number(arg_or_context(0).number()),
        "string" => Value::Str(arg_or_context(0).string()),
        "string-length" => Value::Number(arg_or_context(0).string().chars().count() as f64),
        "concat" => Value::Str(args.iter().map(|a| eval(a, ctx).string()).collect()),
        "contains" => Value::Bool(
            arg(0)
                .zip(arg(1))
                .is_some_and(|(a, b)| a.string().contains(&b.string())),
        ),
        "starts-with" => Value::Bool(
            arg(0)
                .zip(arg(1))
                .is_some_and(|(a, b)| a.string().starts_with(&b.string())),
        ),
        "local-name" | "name" => {
            let v = arg_or_context(0);
            let name = match &v {
                Value::Nodes(n) => match n.first() {
                    Some(N::Element(e)) => e.name.local().to_owned(),
                    Some(N::Attribute(q, _)) => q.local().to_owned(),
                    _ => String::new(),
                },
                _ => String::new(),
            };
            Value::Str(name)
        }
        "position" => Value::Number(ctx.position as f64),
        "last" => Value::Number(ctx.size as f64),
        _ => Value::Nodes(Vec::new()),
    }
}

fn matches_test(test: &Test, n: &N<'_>) -> bool {
    match (test, n) {
        (Test::Node, _) => true,
        (Test::Text, N::Text(_)) => true,
        (Test::Any, N::Element(_) | N::Attribute(..)) => true,
        (Test::Namespace(ns), N::Element(e)) => e.name.ns() == ns,
        (Test::Namespace(ns), N::Attribute(q, _)) => q.ns() == ns,
        (Test::Name(q), N::Element(e)) => e.name == *q,
        (Test::Name(q), N::Attribute(a, _)) => *a == q,
        _ => false,
    }
}

fn children<'a>(n: &N<'a>) -> Vec<N<'a>> {
    match n {
        N::Document(root) => vec![N::Element(root)],
        N::Element(e) => e
            .children
            .iter()
            .map(|c| match c {
                Node::Element(e) => N::Element(e),
                Node::Text(t) => N::Text(t),
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn descendants_or_self<'a>(n: N<'a>, out: &mut Vec<N<'a>>) {
    out.push(n);
    for c in children(&n) {
        descendants_or_self(c, out);
    }
}

fn apply_step<'a>(step: &Step, input: &[N<'a>], root: &'a Element) -> Vec<N<'a>> {
    let mut out: Vec<N<'a>> = Vec::new();
    for node in input {
        let contexts = if step.descendants {
            let mut all = Vec::new();
            descendants_or_self(*node, &mut all);
            all
        } else {
            vec![*node]
        };
        for c in contexts {
            let candidates: Vec<N<'a>> = if step.test == Test::SelfNode {
                vec![c]
            } else if step.attribute {
                match c {
                    N::Element(e) => e
                        .attributes
                        .iter()
                        .map(|(q, v)| N::Attribute(q, v.as_str()))
                        .collect(),
                    _ => Vec::new(),
                }
            } else {
                children(&c)
            };
            let mut selected: Vec<N<'a>> = candidates
                .into_iter()
                .filter(|n| step.test == Test::SelfNode || matches_test(&step.test, n))
                .collect();
            for pred in &step.predicates {
                let size = selected.len();
                selected = selected
                    .into_iter()
                    .enumerate()
                    .filter(|(i, n)| {
                        let ctx = Ctx {
                            node: *n,
                            position: i + 1,
                            size,
                            root,
                        };
                        match eval(pred, &ctx) {
                            Value::Number(p) => p == (i + 1) as f64,
                            v => v.boolean(),
                        }
                    })
                    .map(|(_, n)| n)
                    .collect();
            }
            for s in selected {
                if !out.iter().any(|o| o.same(&s)) {
                    out.push(s);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
