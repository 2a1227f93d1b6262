//! Stage 1c: find the structure that dpopt needs in the token stream:
//! function definitions, kernel launches and `#pragma dp` directives.
//!
//! This is deliberately not a C++ parser. It matches brackets, recognises
//! declarations at namespace level by their shape (`head ( params ) {`), and
//! launch statements by their `<<<`. Everything else is opaque text that is
//! copied through unchanged.

use crate::brackets::Brackets;
use crate::phases::{directive_text, is_dp_pragma_text, pragma_operator_text};
use crate::program::{
    Declaration as DeclaredFunction, ExecutionSpace, Function, FunctionId, Functions, Launch,
    Param, PragmaSite, Program, TemplateParam, Using,
};
use crate::source::{SourceFile, Span};
use crate::token::{is_identifier, split_top_level, Angles, SigIdx, Token, TokenKind};

pub fn parse(file: &SourceFile, tokens: Vec<Token>) -> Program {
    let sig: Vec<Token> = tokens
        .iter()
        .copied()
        .filter(|t| t.kind.is_significant())
        .collect();
    let (brackets, unbalanced) = Brackets::match_in(&sig, &file.view);
    let mut program = Program {
        defines: Vec::new(),
        migrate_sync: false,
        view: file.view.clone(),
        tokens,
        sig,
        brackets,
        unbalanced,
        ..Program::default()
    };
    let view = &file.view;
    program.conditions = conditional_groups(&program.sig, view);
    let mut found = Collected::default();
    scan_scope(
        &program,
        0,
        program.sig.len(),
        &mut Vec::new(),
        false,
        &mut found,
    );
    let Collected {
        mut functions,
        mut methods,
        defaults,
        usings,
    } = found;
    program.declarations = defaults
        .iter()
        .map(|d| DeclaredFunction {
            name: d.name.clone(),
            name_span: d.name_span,
        })
        .collect();
    methods.sort_by_key(|f: &Function| f.body.start());
    program.methods = methods;
    // A default argument given in a forward declaration belongs to the
    // definition's parameters too (the generated versions need it).
    // The first declaration is where generated declarations must go: it is
    // in the function's namespace and before every use.
    for f in functions.iter_mut() {
        f.condition = program.condition_at(f.start);
    }
    for d in defaults {
        let condition = program.condition_at(d.start);
        for f in functions.iter_mut().filter(|f| {
            f.name == d.name && f.namespace == d.namespace && f.condition.starts_with(&condition)
        }) {
            f.first_declared = f.first_declared.min(d.start);
            for (param, default) in f.params.iter_mut().zip(d.defaults.iter().cloned()) {
                if param.default.is_none() {
                    param.default = default;
                }
            }
        }
    }
    functions.sort_by_key(|f: &Function| f.body.start());
    for (i, f) in functions.iter().enumerate() {
        program
            .by_name
            .entry(f.name.clone())
            .or_insert(FunctionId(i));
        program
            .named
            .entry(f.name.clone())
            .or_default()
            .push(FunctionId(i));
    }
    assign_symbols(&mut functions);
    program.functions = Functions::new(functions);
    program.usings = usings;
    program.launches = crate::program::Launches::new(find_launches(&program));
    let (pragmas, in_macro_arguments) = find_pragmas(&program);
    program.pragmas = crate::program::Pragmas::new(pragmas);
    program.pragmas_in_macro_arguments = in_macro_arguments;
    program
}

fn text<'a>(t: &Token, view: &'a str) -> &'a str {
    t.text(view)
}

/// The `#if` groups of the file: for each conditional directive, its offset
/// and the stack of (group, branch) in force after it. A group is one
/// `#if ... #endif`; its branches are numbered from 0 at each `#elif` or
/// `#else`.
fn conditional_groups(sig: &[Token], view: &str) -> Vec<(usize, Vec<(usize, usize)>)> {
    let mut out = Vec::new();
    let mut stack: Vec<(usize, usize)> = Vec::new();
    let mut groups = 0;
    for t in sig.iter().filter(|t| t.kind == TokenKind::Directive) {
        // Every conditional directive's name holds `if` or `el` (`else`,
        // `elif`, `endif`); splices and comments cannot make them appear.
        let raw = text(t, view);
        if !raw.contains("if") && !raw.contains("el") && !raw.contains('\\') {
            continue;
        }
        let logical = directive_text(raw, t.start);
        let word: String = logical
            .text
            .trim_start()
            .trim_start_matches('#')
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        match word.as_str() {
            "if" | "ifdef" | "ifndef" => {
                stack.push((groups, 0));
                groups += 1;
            }
            "elif" | "elifdef" | "elifndef" | "else" => {
                if let Some(top) = stack.last_mut() {
                    top.1 += 1;
                }
            }
            "endif" => {
                stack.pop();
            }
            _ => continue,
        }
        out.push((t.start, stack.clone()));
    }
    out
}

/// What the walk over namespace scopes collects.
#[derive(Default)]
struct Collected {
    functions: Vec<Function>,
    /// Member functions defined in struct, class or union bodies.
    methods: Vec<Function>,
    defaults: Vec<Declaration>,
    usings: Vec<Using>,
}

/// Give every function a name for generated global symbols (macros) that
/// no other function of the file has: its own name when it is unique,
/// else its namespaces and name joined by `_`, numbered if still shared.
/// Definitions of one name in one namespace (overloads, or one definition
/// per `#if` branch) share their symbol.
fn assign_symbols(functions: &mut [Function]) {
    let mut spaces: std::collections::HashMap<String, Vec<Vec<String>>> = Default::default();
    for f in functions.iter() {
        let seen = spaces.entry(f.name.clone()).or_default();
        if !seen.contains(&f.namespace) {
            seen.push(f.namespace.clone());
        }
    }
    let unique = |f: &Function| spaces[&f.name].len() == 1;
    let mut taken: std::collections::HashSet<String> = functions
        .iter()
        .filter(|f| unique(f))
        .map(|f| f.name.clone())
        .collect();
    let mut given: std::collections::HashMap<(Vec<String>, String), String> = Default::default();
    for f in functions.iter_mut() {
        if unique(f) {
            f.symbol = f.name.clone();
            continue;
        }
        if let Some(symbol) = given.get(&(f.namespace.clone(), f.name.clone())) {
            f.symbol = symbol.clone();
            continue;
        }
        let mut base: Vec<&str> = f
            .namespace
            .iter()
            .map(|n| if n.is_empty() { "anon" } else { n.as_str() })
            .collect();
        base.push(&f.name);
        let base = base.join("_");
        let mut symbol = base.clone();
        let mut k = 2;
        while !taken.insert(symbol.clone()) {
            symbol = format!("{base}_{k}");
            k += 1;
        }
        given.insert((f.namespace.clone(), f.name.clone()), symbol.clone());
        f.symbol = symbol;
    }
}

/// `using namespace a::b;` (a directive) or `using a::f;` (a declaration)
/// in `scope`, from the significant tokens `start..end` (the `;` excluded).
fn using_from(
    sig: &[Token],
    view: &str,
    start: usize,
    end: usize,
    scope: &[String],
) -> Option<Using> {
    let words: Vec<&str> = sig[start..end].iter().map(|t| text(t, view)).collect();
    if words.first() != Some(&"using") {
        return None;
    }
    let (directive, path) = if words.get(1) == Some(&"namespace") {
        (true, &words[2..])
    } else {
        (false, &words[1..])
    };
    if path.is_empty() || path.iter().any(|w| !(*w == "::" || is_identifier(w))) {
        return None;
    }
    let absolute = path.first() == Some(&"::");
    let target: Vec<String> = path
        .iter()
        .filter(|w| **w != "::")
        .map(|w| w.to_string())
        .collect();
    Some(Using {
        scope: scope.to_vec(),
        target,
        absolute,
        directive,
        at: sig[start].start,
    })
}

/// The namespace a `namespace ... {` head opens: its names (`a::b` gives
/// two; an anonymous namespace is one empty name; an inline namespace adds
/// nothing, its members being found in the enclosing one).
fn namespace_names(head: &[Token], view: &str) -> Option<Vec<String>> {
    let words: Vec<&str> = head.iter().map(|t| text(t, view)).collect();
    let at = words.iter().position(|w| *w == "namespace")?;
    if words[..at].iter().any(|w| *w != "inline") {
        return None;
    }
    if words[..at].contains(&"inline") {
        return Some(Vec::new());
    }
    let names: Vec<String> = words[at + 1..]
        .iter()
        .filter(|w| **w != "::" && **w != "inline" && is_identifier(w))
        .map(|w| w.to_string())
        .collect();
    Some(if names.is_empty() {
        vec![String::new()]
    } else {
        names
    })
}

/// Walk declarations at namespace level (or, with `member`, in a struct,
/// class or union body) between significant tokens `from..to`, collecting
/// function definitions. `namespace`: the names of the enclosing namespaces.
fn scan_scope(
    program: &Program,
    from: usize,
    to: usize,
    namespace: &mut Vec<String>,
    member: bool,
    found: &mut Collected,
) {
    let view = program.view.as_str();
    let sig = &program.sig;
    let mut head_start = from;
    let mut i = from;
    while i < to {
        let t = &sig[i];
        if t.kind == TokenKind::Directive {
            head_start = i + 1;
            i += 1;
            continue;
        }
        match text(t, view) {
            ";" => {
                if i > head_start && !member {
                    if let Some(u) = using_from(sig, view, head_start, i, namespace) {
                        found.usings.push(u);
                    } else if let Some(mut d) = declared_defaults(program, head_start, i) {
                        d.namespace = namespace.clone();
                        found.defaults.push(d);
                    }
                }
                head_start = i + 1
            }
            "(" | "[" => {
                i = program.brackets.skip(i);
                continue;
            }
            "{" => {
                let Some(close) = program.brackets.partner(i) else {
                    return;
                };
                let head = &sig[head_start..i];
                let words: Vec<&str> = head.iter().map(|t| text(t, view)).collect();
                let opened = namespace_names(head, view);
                let transparent = opened.is_some()
                    || head
                        .windows(2)
                        .any(|w| text(&w[0], view) == "extern" && w[1].kind == TokenKind::Str)
                        && head.len() == 2;
                // `struct`/`class` in a template header (`template <class T>`)
                // does not make the head a class's.
                let after_template = if words.first() == Some(&"template") {
                    skip_angles(sig, view, head_start + 1, i).map_or(0, |e| e - head_start)
                } else {
                    0
                };
                let aggregate = words[after_template..]
                    .iter()
                    .any(|w| matches!(*w, "struct" | "class" | "union" | "enum"))
                    && !words[after_template..].contains(&"(");
                if transparent {
                    let depth = namespace.len();
                    namespace.extend(opened.unwrap_or_default());
                    scan_scope(program, i + 1, close, namespace, member, found);
                    namespace.truncate(depth);
                } else if aggregate {
                    if !words.contains(&"enum") {
                        scan_scope(program, i + 1, close, namespace, true, found);
                    }
                } else if let Some(mut f) = function_from_head(program, head_start, i, close)
                    // a free operator (`operator+(a, b)`) is not called by
                    // name; a member one is followed through its class
                    // (`hazard.rs`)
                    .filter(|f| member || f.name != "operator")
                {
                    let qualifier = std::mem::take(&mut f.namespace);
                    f.namespace = namespace.iter().cloned().chain(qualifier).collect();
                    if member {
                        found.methods.push(f);
                    } else {
                        found.functions.push(f);
                    }
                }
                i = close + 1;
                head_start = i;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

const NOT_A_NAME: &[&str] = &[
    "__launch_bounds__",
    "__attribute__",
    "__declspec",
    "noexcept",
    "throw",
    "decltype",
    "alignas",
    "__align__",
    "__maxnreg__",
    "__cluster_dims__",
];

/// Build a `Function` from its head (significant tokens `start..open`) and
/// its body (`open..=close`), or `None` when the head is not a function's.
/// The parts of a function head (significant tokens `start..end`): where
/// its template header ends, its name, its parameter parentheses and its
/// `__launch_bounds__`. `None` when the head is not a function's.
struct HeadShape {
    template_end: usize,
    name_at: usize,
    params: (usize, usize),
    launch_bounds: Option<String>,
}

fn head_shape(program: &Program, start: usize, open: usize) -> Option<HeadShape> {
    let view = program.view.as_str();
    let sig = &program.sig;
    let mut name_at = None;
    let mut params_group = None;
    let mut launch_bounds = None;
    let mut template_end = start;
    if start < open && text(&sig[start], view) == "template" {
        template_end = skip_angles(sig, view, start + 1, open)?;
    }
    // An operator (`operator()(int v)`, `operator T *()`, `operator+=(...)`):
    // named `operator`, its parameters the first parentheses after the
    // operator's own symbol.
    if let Some(at) = (template_end..open).find(|&i| text(&sig[i], view) == "operator") {
        let first = if text(&sig[at + 1], view) == "(" && text(&sig[at + 2], view) == ")" {
            at + 3
        } else {
            at + 1
        };
        let popen = (first..open).find(|&i| text(&sig[i], view) == "(")?;
        let pclose = program.brackets.partner(popen)?;
        let launch_bounds = (template_end..at)
            .find(|&i| text(&sig[i], view) == "__launch_bounds__")
            .and_then(|i| {
                let close = program.brackets.partner(i + 1)?;
                Some(view[sig[i].start..sig[close].end].to_string())
            });
        return Some(HeadShape {
            template_end,
            name_at: at,
            params: (popen, pclose),
            launch_bounds,
        });
    }
    let mut i = template_end;
    while i < open {
        let s = text(&sig[i], view);
        if s == "(" {
            let close_paren = program.brackets.partner(i)?;
            if i > template_end && sig[i - 1].kind == TokenKind::Ident {
                let before = text(&sig[i - 1], view);
                if before == "__launch_bounds__" {
                    launch_bounds = Some(view[sig[i - 1].start..sig[close_paren].end].to_string());
                } else if !NOT_A_NAME.contains(&before) {
                    name_at = Some(i - 1);
                    params_group = Some((i, close_paren));
                }
            }
            i = close_paren + 1;
            continue;
        }
        if s == "=" {
            // An initializer such as `int table[] = {...}`: not a function.
            return None;
        }
        i += 1;
    }
    Some(HeadShape {
        template_end,
        name_at: name_at?,
        params: params_group?,
        launch_bounds,
    })
}

/// Default arguments given in a declaration `head ( params ) ;` (significant
/// tokens `start..end`), by function name.
fn declared_defaults(program: &Program, start: usize, end: usize) -> Option<Declaration> {
    let view = program.view.as_str();
    let shape = head_shape(program, start, end)?;
    if text(&program.sig[shape.name_at], view) == "operator" {
        return None;
    }
    let (popen, pclose) = shape.params;
    let params = params_of(&program.sig[popen + 1..pclose], view);
    Some(Declaration {
        name: text(&program.sig[shape.name_at], view).to_string(),
        name_span: program.sig[shape.name_at].span(),
        namespace: Vec::new(),
        start: program.sig[start].start,
        defaults: params.into_iter().map(|p| p.default).collect(),
    })
}

/// A function declaration without a body (`head ( params ) ;`).
struct Declaration {
    name: String,
    name_span: Span,
    namespace: Vec<String>,
    start: usize,
    defaults: Vec<Option<String>>,
}

fn function_from_head(
    program: &Program,
    start: usize,
    open: usize,
    close: usize,
) -> Option<Function> {
    let view = program.view.as_str();
    let sig = &program.sig;
    let HeadShape {
        template_end,
        name_at,
        params: (popen, pclose),
        launch_bounds,
    } = head_shape(program, start, open)?;
    let mut space = ExecutionSpace::default();
    for t in &sig[template_end..name_at] {
        match text(t, view) {
            "__global__" => space.global = true,
            "__device__" => space.device = true,
            "__host__" => space.host = true,
            _ => {}
        }
    }
    if !space.global && !space.device {
        space.host = true;
    }
    let (template_header, template_params) = if template_end > start {
        let header = view[sig[start].start..sig[template_end - 1].end].to_string();
        let params = template_params(&sig[start + 2..template_end - 1], view);
        (Some(header), params)
    } else {
        (None, Vec::new())
    };
    // `a::f` defined outside its namespace: the qualifier is part of where
    // the function lives.
    let mut qualifier = Vec::new();
    let mut q = name_at;
    while q >= template_end + 2
        && text(&sig[q - 1], view) == "::"
        && sig[q - 2].kind == TokenKind::Ident
    {
        qualifier.insert(0, text(&sig[q - 2], view).to_string());
        q -= 2;
    }
    Some(Function {
        name: text(&sig[name_at], view).to_string(),
        namespace: qualifier,
        symbol: String::new(),
        condition: Vec::new(),
        name_span: sig[name_at].span(),
        space,
        start: sig[start].start,
        template_header,
        template_params,
        launch_bounds,
        params: params_of(&sig[popen + 1..pclose], view),
        body: Span::new(sig[open].start, sig[close].end),
        body_tokens: open..close,
        first_declared: sig[start].start,
    })
}

/// Index just past the `>` closing the `<` at `at`, or `None`.
fn skip_angles(sig: &[Token], view: &str, at: usize, limit: usize) -> Option<usize> {
    if at >= limit || text(&sig[at], view) != "<" {
        return None;
    }
    let mut depth = 0i32;
    let mut paren = 0i32;
    for (i, t) in sig.iter().enumerate().take(limit).skip(at) {
        match text(t, view) {
            "(" | "[" => paren += 1,
            ")" | "]" => paren -= 1,
            "<" if paren == 0 => depth += 1,
            ">" if paren == 0 => depth -= 1,
            ">>" if paren == 0 => depth -= 2,
            _ => {}
        }
        if depth <= 0 {
            return Some(i + 1);
        }
    }
    None
}

fn template_params(tokens: &[Token], view: &str) -> Vec<TemplateParam> {
    split_top_level(tokens, view, Angles::Brackets)
        .into_iter()
        .filter(|p| !p.is_empty())
        .map(|p| {
            let end = p
                .iter()
                .position(|t| text(t, view) == "=")
                .unwrap_or(p.len());
            let decl = &p[..end];
            let is_pack = decl.iter().any(|t| text(t, view) == "...");
            let name = decl
                .iter()
                .rev()
                .find(|t| t.kind == TokenKind::Ident)
                .map(|t| text(t, view).to_string())
                .unwrap_or_default();
            let declaration = match (decl.first(), decl.last()) {
                (Some(a), Some(b)) => view[a.start..b.end].to_string(),
                _ => String::new(),
            };
            let default = match (p.get(end + 1), p.last()) {
                (Some(a), Some(b)) => Some(view[a.start..b.end].to_string()),
                _ => None,
            };
            TemplateParam {
                declaration,
                name,
                is_pack,
                default,
            }
        })
        .collect()
}

const TYPE_WORDS: &[&str] = &[
    "int",
    "unsigned",
    "signed",
    "long",
    "short",
    "char",
    "float",
    "double",
    "bool",
    "void",
    "const",
    "volatile",
    "size_t",
    "__restrict__",
    "auto",
];

fn params_of(tokens: &[Token], view: &str) -> Vec<Param> {
    if tokens.is_empty() || (tokens.len() == 1 && text(&tokens[0], view) == "void") {
        return Vec::new();
    }
    split_top_level(tokens, view, Angles::Brackets)
        .into_iter()
        .map(|p| {
            let eq = p.iter().position(|t| text(t, view) == "=");
            let decl = &p[..eq.unwrap_or(p.len())];
            let default = eq.map(|e| {
                let rest = &p[e + 1..];
                match (rest.first(), rest.last()) {
                    (Some(a), Some(b)) => view[a.start..b.end].to_string(),
                    _ => String::new(),
                }
            });
            let declaration = match (decl.first(), decl.last()) {
                (Some(a), Some(b)) => view[a.start..b.end].to_string(),
                _ => String::new(),
            };
            Param {
                declaration,
                name: param_name(decl, view),
                default,
            }
        })
        .collect()
}

fn param_name(decl: &[Token], view: &str) -> Option<String> {
    // `int a[4]`: the name stands before the first `[`.
    let end = decl
        .iter()
        .position(|t| text(t, view) == "[")
        .unwrap_or(decl.len());
    let decl = &decl[..end];
    // `void (*f)(int)`: the name stands inside the first parentheses.
    if let Some(open) = decl.iter().position(|t| text(t, view) == "(") {
        return decl[open..]
            .iter()
            .find(|t| t.kind == TokenKind::Ident)
            .map(|t| text(t, view).to_string());
    }
    let last = decl.last()?;
    if decl.len() < 2 || last.kind != TokenKind::Ident || TYPE_WORDS.contains(&text(last, view)) {
        return None;
    }
    let before = text(&decl[decl.len() - 2], view);
    if before == "::" {
        return None;
    }
    Some(text(last, view).to_string())
}

/// Find every launch statement `name<targs><<<config>>>(args);`.
fn find_launches(program: &Program) -> Vec<Launch> {
    let view = program.view.as_str();
    let sig = &program.sig;
    let mut launches = Vec::new();
    for (i, t) in sig.iter().enumerate() {
        if t.kind != TokenKind::Punct {
            continue;
        }
        // `<<<`, or `<<` `<` (a formatter's `k << <g, b >> > (x);`).
        let opener = match text(t, view) {
            "<<<" => i,
            "<<" if sig.get(i + 1).is_some_and(|n| text(n, view) == "<") => i + 1,
            _ => continue,
        };
        if let Some(launch) = launch_at(program, i, opener) {
            launches.push(launch);
        }
    }
    launches
}

/// The launch whose opening chevrons are the significant tokens
/// `chevrons..=opener` (one `<<<`, or `<<` and `<`).
fn launch_at(program: &Program, chevrons: usize, opener: usize) -> Option<Launch> {
    let view = program.view.as_str();
    let sig = &program.sig;
    // Backwards: optional template arguments, then the kernel name.
    let mut j = chevrons.checked_sub(1)?;
    let mut template_args = None;
    if matches!(text(&sig[j], view), ">" | ">>") {
        let close = j;
        let mut depth = 0i32;
        loop {
            match text(&sig[j], view) {
                ">" => depth += 1,
                ">>" => depth += 2,
                "<" => depth -= 1,
                ";" | "{" | "}" => return None,
                _ => {}
            }
            if depth == 0 {
                break;
            }
            j = j.checked_sub(1)?;
        }
        template_args = Some(view[sig[j].start..sig[close].end].to_string());
        j = j.checked_sub(1)?;
    }
    if sig[j].kind != TokenKind::Ident {
        return None;
    }
    let name_token = j;
    let mut first = j;
    while first >= 2
        && text(&sig[first - 1], view) == "::"
        && sig[first - 2].kind == TokenKind::Ident
    {
        first -= 2;
    }
    if first >= 1 && text(&sig[first - 1], view) == "::" {
        first -= 1;
    }
    // Forwards: the configuration up to `>>>` (or `>>` `>`).
    let mut k = opener + 1;
    let mut parts = Vec::new();
    let mut part_start = k;
    loop {
        let s = text(sig.get(k)?, view);
        match s {
            "(" | "[" | "{" => {
                k = program.brackets.partner(k)? + 1;
                continue;
            }
            ";" | ")" | "]" | "}" => return None,
            "," => {
                parts.push(span_of(sig, part_start, k)?);
                part_start = k + 1;
            }
            ">>>" | ">>" if s == ">>>" || sig.get(k + 1).is_some_and(|n| text(n, view) == ">") => {
                // `<<<>>>`: no configuration at all (reported as such).
                if !(parts.is_empty() && part_start == k) {
                    parts.push(span_of(sig, part_start, k)?);
                }
                break;
            }
            _ => {}
        }
        k += 1;
    }
    let close_first = k;
    let close_chevrons = if text(&sig[k], view) == ">>" {
        k + 1
    } else {
        k
    };
    let open = close_chevrons + 1;
    if text(sig.get(open)?, view) != "(" {
        return None;
    }
    let close = program.brackets.partner(open)?;
    let semicolon = close + 1;
    if text(sig.get(semicolon)?, view) != ";" {
        return None;
    }
    let args = if close == open + 1 {
        Vec::new()
    } else {
        split_top_level(&sig[open + 1..close], view, Angles::Brackets)
            .into_iter()
            .map(|p| match (p.first(), p.last()) {
                (Some(a), Some(b)) => Span::new(a.start, b.end),
                _ => Span::at(sig[open].end),
            })
            .collect()
    };
    let start = sig[first].start;
    // Functions are sorted by body start and never nest.
    let candidate = program
        .functions
        .as_slice()
        .partition_point(|f| f.body.start() < start);
    let function = candidate
        .checked_sub(1)
        .map(FunctionId)
        .filter(|&i| start < program.functions[i].body.end());
    Some(Launch {
        kernel: view[sig[first].start..sig[name_token].end].to_string(),
        kernel_span: Span::new(sig[first].start, sig[name_token].end),
        template_args,
        span: Span::new(start, sig[semicolon].end),
        config: parts,
        args,
        config_span: Span::new(sig[chevrons].start, sig[close_chevrons].end),
        open_chevrons: Span::new(sig[chevrons].start, sig[opener].end),
        close_chevrons: Span::new(sig[close_first].start, sig[close_chevrons].end),
        function,
        first_token: SigIdx(first),
    })
}

fn span_of(sig: &[Token], from: usize, to: usize) -> Option<Span> {
    if from >= to {
        return None;
    }
    Some(Span::new(sig[from].start, sig[to - 1].end))
}

/// Every `#pragma dp` directive and `_Pragma("dp ...")` operator, in order.
/// What counts as one is decided on the text after translation phases 1-3
/// (src/phases.rs), as the preprocessor decides it.
fn find_pragmas(program: &Program) -> (Vec<PragmaSite>, Vec<(Span, String)>) {
    let view = program.view.as_str();
    let sig = &program.sig;
    let mut pragmas = Vec::new();
    let mut in_arguments = Vec::new();
    let mut function_macros: Option<std::collections::HashSet<String>> = None;
    for (i, t) in sig.iter().enumerate() {
        let (span, logical, last) = match t.kind {
            TokenKind::Directive => {
                let logical = directive_text(text(t, view), t.start);
                if !is_dp_pragma_text(&logical.text) {
                    continue;
                }
                (t.span(), logical, i)
            }
            TokenKind::Ident if is_pragma_operator_name(text(t, view)) => {
                let Some((literal, close)) = pragma_operator(sig, view, i) else {
                    continue;
                };
                let logical =
                    pragma_operator_text(text(&sig[literal], view), sig[literal].start, t.start);
                if !is_dp_pragma_text(&logical.text) {
                    continue;
                }
                let macros = function_macros.get_or_insert_with(|| function_macro_names(sig, view));
                if let Some(name) = enclosing_macro_call(sig, view, i, macros) {
                    in_arguments.push((Span::new(t.start, sig[close].end), name));
                    continue;
                }
                (Span::new(t.start, sig[close].end), logical, close)
            }
            _ => continue,
        };
        pragmas.push(PragmaSite {
            span,
            logical,
            token: SigIdx(i),
            next_token: (last + 1 < sig.len()).then_some(SigIdx(last + 1)),
        });
    }
    (pragmas, in_arguments)
}

/// Names of the function-like macros the file defines (`#define NAME(`).
fn function_macro_names(sig: &[Token], view: &str) -> std::collections::HashSet<String> {
    sig.iter()
        .filter(|t| t.kind == TokenKind::Directive && text(t, view).contains("define"))
        .filter_map(|t| {
            let logical = directive_text(text(t, view), t.start);
            let rest = logical.text.trim_start().strip_prefix('#')?;
            let rest = rest.trim_start().strip_prefix("define")?;
            let rest = rest.trim_start_matches([' ', '\t']);
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
                .collect();
            (!name.is_empty() && rest[name.len()..].starts_with('(')).then_some(name)
        })
        .collect()
}

/// The function-like macro in whose arguments significant token `at`
/// stands, if any (looked for up to 4,096 tokens back).
fn enclosing_macro_call(
    sig: &[Token],
    view: &str,
    at: usize,
    macros: &std::collections::HashSet<String>,
) -> Option<String> {
    if macros.is_empty() {
        return None;
    }
    let mut depth = 0usize;
    for j in (at.saturating_sub(4096)..at).rev() {
        match text(&sig[j], view) {
            ")" => depth += 1,
            "(" if depth > 0 => depth -= 1,
            "(" => {
                let name = crate::phases::without_splices(text(sig.get(j.checked_sub(1)?)?, view));
                if macros.contains(&name) {
                    return Some(name);
                }
            }
            _ => {}
        }
    }
    None
}

/// `_Pragma`, also when a line splice splits it.
pub fn is_pragma_operator_name(text: &str) -> bool {
    text == "_Pragma" || (text.contains('\\') && crate::phases::without_splices(text) == "_Pragma")
}

/// `_Pragma ( [prefix] "literal" )` at significant token `at`: the index of
/// the literal and of the `)`.
fn pragma_operator(sig: &[Token], view: &str, at: usize) -> Option<(usize, usize)> {
    if text(sig.get(at + 1)?, view) != "(" {
        return None;
    }
    let mut literal = at + 2;
    let first = sig.get(literal)?;
    // The encoding prefix touches the literal, or only line splices stand
    // between them (phase 2 joins them).
    let joined = |from: usize, to: usize| {
        let gap = &view[from..to];
        gap.is_empty() || gap.contains('\\') && crate::phases::without_splices(gap).is_empty()
    };
    if first.kind == TokenKind::Ident
        && matches!(
            crate::phases::without_splices(text(first, view)).as_str(),
            "L" | "u8" | "u" | "U"
        )
        && sig
            .get(literal + 1)
            .is_some_and(|s| s.start >= first.end && joined(first.end, s.start))
    {
        literal += 1;
    }
    let lit = sig.get(literal)?;
    if lit.kind != TokenKind::Str || !text(lit, view).starts_with('"') {
        return None;
    }
    (text(sig.get(literal + 1)?, view) == ")").then_some((literal, literal + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;
    use crate::program::{LaunchId, PragmaId};

    fn program(text: &str) -> (SourceFile, Program) {
        let file = SourceFile::new("t.cu", text.as_bytes().to_vec());
        let tokens = lex(&file);
        let p = parse(&file, tokens);
        (file, p)
    }

    #[test]
    fn finds_kernels_templates_and_namespaces() {
        let (_, p) = program(
            "struct S { int f() { return 1; } };\n\
             namespace ns {\n\
             template <typename T, int N = 4>\n\
             __global__ void __launch_bounds__(256) child(T *a, const int n = 3, float) { a[0] = n; }\n\
             }\n\
             __device__ int helper(int x) { return x; }\n\
             int table[] = {1, 2};\n\
             int main(void) { return 0; }\n",
        );
        let names: Vec<_> = p
            .functions
            .as_slice()
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(names, ["child", "helper", "main"]);
        let child = &p.functions[FunctionId(0)];
        assert!(child.space.global && !child.space.host);
        assert_eq!(
            child.template_header.as_deref(),
            Some("template <typename T, int N = 4>")
        );
        assert_eq!(
            child
                .template_params
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>(),
            ["T", "N"]
        );
        assert_eq!(
            child.launch_bounds.as_deref(),
            Some("__launch_bounds__(256)")
        );
        assert_eq!(child.params[1].declaration, "const int n");
        assert_eq!(child.params[1].default.as_deref(), Some("3"));
        assert_eq!(child.params[2].name, None);
        assert!(p.functions[FunctionId(2)].space.host);
    }

    #[test]
    fn finds_launches_with_templates_and_four_config_parts() {
        let (file, p) = program(
            "__global__ void k(int a) {}\n\
             __global__ void parent(int n) {\n  k<float><<<dim3(n, 2), 32, 0, s>>>(f(a, b), n);\n}\n",
        );
        assert_eq!(p.launches.len(), 1);
        let l = &p.launches[LaunchId(0)];
        assert_eq!(l.kernel, "k");
        assert_eq!(l.template_args.as_deref(), Some("<float>"));
        let config: Vec<_> = l.config.iter().map(|r| &file.view[r.range()]).collect();
        assert_eq!(config, ["dim3(n, 2)", "32", "0", "s"]);
        let args: Vec<_> = l.args.iter().map(|r| &file.view[r.range()]).collect();
        assert_eq!(args, ["f(a, b)", "n"]);
        assert_eq!(p.functions[l.function.unwrap()].name, "parent");
    }

    #[test]
    fn defaults_of_a_forward_declaration_reach_the_definition() {
        let (_, p) = program(
            "__global__ void k(int a, int b = 3);\n__global__ void p() {}\n__global__ void k(int a, int b) { }\n",
        );
        let k = &p.functions[p.function_named("k").unwrap()];
        assert_eq!(k.params[0].default, None);
        assert_eq!(k.params[1].default.as_deref(), Some("3"));
    }

    #[test]
    fn pragmas_point_at_the_next_token() {
        let (file, p) = program("void f() {\n#pragma dp threshold(2)\n  k<<<1, 1>>>();\n}\n");
        assert_eq!(p.pragmas.len(), 1);
        let next = p.pragmas[PragmaId(0)].next_token.unwrap();
        assert_eq!(p.sig[next.0].text(&file.view), "k");
        assert_eq!(p.launches[LaunchId(0)].first_token, next);
    }

    #[test]
    fn launch_arguments_split_at_top_level_commas_only() {
        let (file, p) = program(
            "template <int A, int B> __global__ void k(int a, int b, int c) {}\n\
             __global__ void parent(int n) {\n  k<1, 2><<<n, 32>>>(f(n, 1), g<int, 2>(n), a[n, 1]);\n}\n",
        );
        let l = &p.launches[LaunchId(0)];
        let args: Vec<&str> = l.args.iter().map(|r| &file.view[r.range()]).collect();
        assert_eq!(args, ["f(n, 1)", "g<int, 2>(n)", "a[n, 1]"]);
        assert_eq!(l.template_args.as_deref(), Some("<1, 2>"));
        let config: Vec<&str> = l.config.iter().map(|r| &file.view[r.range()]).collect();
        assert_eq!(config, ["n", "32"]);
        assert_eq!(&file.view[l.kernel_span.range()], "k");
        assert_eq!(l.function, Some(FunctionId(1)));
    }

    #[test]
    fn launch_spans_cover_the_statement() {
        let text = "__global__ void k() {}\n__global__ void parent() {\n  k<<<1, 1>>>();\n}\n";
        let (file, p) = program(text);
        let l = &p.launches[LaunchId(0)];
        assert_eq!(&file.view[l.span.range()], "k<<<1, 1>>>();");
        assert_eq!(&file.view[l.config_span.range()], "<<<1, 1>>>");
        assert!(l.args.is_empty());
        assert_eq!(p.sig[l.first_token.0].text(&file.view), "k");
    }

    #[test]
    fn forward_declarations_and_class_bodies() {
        let (_, p) = program(
            "__global__ void child(int *a);\n\
             struct S {\n  __device__ int get() { return 1; }\n};\n\
             __global__ void child(int *a) { a[0] = 1; }\n",
        );
        // A class body is opaque: its member functions are not functions
        // of the program (only kernels and functions at namespace level are).
        let names: Vec<&str> = p
            .functions
            .as_slice()
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(names, ["child"]);
        let child = &p.functions[FunctionId(0)];
        // The forward declaration comes first: generated declarations go there.
        assert_eq!(child.first_declared, 0);
        assert!(child.start > 0);
    }

    #[test]
    fn chevrons_written_with_blanks_are_a_launch() {
        let src = "__global__ void k(int *a, int n) {}\n__global__ void parent(int *a, int n) {\n  k << <(n + 31) / 32, 32 >> > (a, n >> 1);\n  k<<<n >> 2, 32>>>(a, n);\n}\n";
        let file = SourceFile::new("t.cu", src.as_bytes().to_vec());
        let program = parse(&file, crate::lexer::lex(&file));
        assert_eq!(program.launches.len(), 2);
        let l = &program.launches.as_slice()[0];
        assert_eq!(&src[l.config_span.range()], "<< <(n + 31) / 32, 32 >> >");
        assert_eq!(&src[l.open_chevrons.range()], "<< <");
        assert_eq!(&src[l.close_chevrons.range()], ">> >");
        let config: Vec<&str> = l.config.iter().map(|c| &src[c.range()]).collect();
        assert_eq!(config, ["(n + 31) / 32", "32"]);
        let args: Vec<&str> = l.args.iter().map(|c| &src[c.range()]).collect();
        assert_eq!(args, ["a", "n >> 1"]);
        // A shift in the configuration is not its end.
        let config: Vec<&str> = program.launches.as_slice()[1]
            .config
            .iter()
            .map(|c| &src[c.range()])
            .collect();
        assert_eq!(config, ["n >> 2", "32"]);
    }
}
