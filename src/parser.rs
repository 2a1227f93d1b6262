//! Stage 1c: find the structure that dpopt needs in the token stream:
//! function definitions, kernel launches and `#pragma dp` directives.
//!
//! This is deliberately not a C++ parser. It matches brackets, recognises
//! declarations at namespace level by their shape (`head ( params ) {`), and
//! launch statements by their `<<<`. Everything else is opaque text that is
//! copied through unchanged.

use crate::pragma::is_dp_pragma;
use crate::program::{
    Declaration as DeclaredFunction, ExecutionSpace, Function, Launch, Param, PragmaSite, Program,
    TemplateParam,
};
use crate::source::SourceFile;
use crate::token::{Token, TokenKind};

pub fn parse(file: &SourceFile, tokens: Vec<Token>) -> Program {
    let sig: Vec<Token> = tokens
        .iter()
        .copied()
        .filter(|t| t.kind.is_significant())
        .collect();
    let (partner, unbalanced) = match_brackets(&sig, &file.view);
    let mut program = Program {
        tokens,
        sig,
        partner,
        unbalanced,
        ..Program::default()
    };
    let view = &file.view;
    let mut found = Found::default();
    scan_scope(&program, view, 0, program.sig.len(), false, &mut found);
    let Found {
        mut functions,
        mut methods,
        declarations: defaults,
    } = found;
    program.declarations = defaults
        .iter()
        .map(|d| DeclaredFunction {
            name: d.name.clone(),
            name_span: d.name_span.clone(),
        })
        .collect();
    methods.sort_by_key(|f: &Function| f.body.start);
    program.methods = methods;
    // A default argument given in a forward declaration belongs to the
    // definition's parameters too (the generated versions need it).
    // The first declaration is where generated declarations must go: it is
    // in the function's namespace and before every use.
    for d in defaults {
        for f in functions.iter_mut().filter(|f| f.name == d.name) {
            f.first_declared = f.first_declared.min(d.start);
            for (param, default) in f.params.iter_mut().zip(d.defaults.iter().cloned()) {
                if param.default.is_none() {
                    param.default = default;
                }
            }
        }
    }
    functions.sort_by_key(|f: &Function| f.body.start);
    for (i, f) in functions.iter().enumerate() {
        program.by_name.entry(f.name.clone()).or_insert(i);
    }
    program.functions = functions;
    program.launches = find_launches(&program, view);
    program.pragmas = find_pragmas(&program, view);
    program
}

fn text<'a>(t: &Token, view: &'a str) -> &'a str {
    t.text(view)
}

/// Pair up (), [] and {} among significant tokens.
fn match_brackets(sig: &[Token], view: &str) -> (Vec<Option<usize>>, Option<usize>) {
    let mut partner = vec![None; sig.len()];
    let mut stack: Vec<usize> = Vec::new();
    let mut unbalanced = None;
    for (i, t) in sig.iter().enumerate() {
        if t.kind != TokenKind::Punct {
            continue;
        }
        let s = text(t, view);
        match s {
            "(" | "[" | "{" => stack.push(i),
            ")" | "]" | "}" => {
                let open = match s {
                    ")" => "(",
                    "]" => "[",
                    _ => "{",
                };
                match stack.last() {
                    Some(&j) if text(&sig[j], view) == open => {
                        stack.pop();
                        partner[i] = Some(j);
                        partner[j] = Some(i);
                    }
                    _ => {
                        unbalanced.get_or_insert(t.start);
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(&j) = stack.first() {
        unbalanced.get_or_insert(sig[j].start);
    }
    (partner, unbalanced)
}

/// What `scan_scope` collects.
#[derive(Default)]
struct Found {
    functions: Vec<Function>,
    methods: Vec<Function>,
    declarations: Vec<Declaration>,
}

/// Walk declarations at namespace level (or, with `member`, in a struct,
/// class or union body) between significant tokens `from..to`, collecting
/// function definitions.
fn scan_scope(
    program: &Program,
    view: &str,
    from: usize,
    to: usize,
    member: bool,
    found: &mut Found,
) {
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
                    found
                        .declarations
                        .extend(declared_defaults(program, view, head_start, i));
                }
                head_start = i + 1
            }
            "(" | "[" => {
                i = program.partner[i].map_or(i + 1, |p| p + 1);
                continue;
            }
            "{" => {
                let Some(close) = program.partner[i] else {
                    return;
                };
                let head = &sig[head_start..i];
                let words: Vec<&str> = head.iter().map(|t| text(t, view)).collect();
                let transparent = words.contains(&"namespace")
                    || head
                        .windows(2)
                        .any(|w| text(&w[0], view) == "extern" && w[1].kind == TokenKind::Str)
                        && head.len() == 2;
                let aggregate = words
                    .iter()
                    .any(|w| matches!(*w, "struct" | "class" | "union" | "enum"));
                if transparent {
                    scan_scope(program, view, i + 1, close, member, found);
                } else if aggregate {
                    if !words.contains(&"enum") {
                        scan_scope(program, view, i + 1, close, true, found);
                    }
                } else if let Some(f) = function_from_head(program, view, head_start, i, close) {
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

fn head_shape(program: &Program, view: &str, start: usize, open: usize) -> Option<HeadShape> {
    let sig = &program.sig;
    let mut name_at = None;
    let mut params_group = None;
    let mut launch_bounds = None;
    let mut template_end = start;
    if start < open && text(&sig[start], view) == "template" {
        template_end = skip_angles(sig, view, start + 1, open)?;
    }
    let mut i = template_end;
    while i < open {
        let s = text(&sig[i], view);
        if s == "(" {
            let close_paren = program.partner[i]?;
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
fn declared_defaults(
    program: &Program,
    view: &str,
    start: usize,
    end: usize,
) -> Option<Declaration> {
    let shape = head_shape(program, view, start, end)?;
    let (popen, pclose) = shape.params;
    let params = params_of(&program.sig[popen + 1..pclose], view);
    Some(Declaration {
        name: text(&program.sig[shape.name_at], view).to_string(),
        name_span: program.sig[shape.name_at].range(),
        start: program.sig[start].start,
        defaults: params.into_iter().map(|p| p.default).collect(),
    })
}

/// A function declaration without a body (`head ( params ) ;`).
struct Declaration {
    name: String,
    name_span: std::ops::Range<usize>,
    start: usize,
    defaults: Vec<Option<String>>,
}

fn function_from_head(
    program: &Program,
    view: &str,
    start: usize,
    open: usize,
    close: usize,
) -> Option<Function> {
    let sig = &program.sig;
    let HeadShape {
        template_end,
        name_at,
        params: (popen, pclose),
        launch_bounds,
    } = head_shape(program, view, start, open)?;
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
    Some(Function {
        name: text(&sig[name_at], view).to_string(),
        name_span: sig[name_at].range(),
        space,
        start: sig[start].start,
        template_header,
        template_params,
        launch_bounds,
        params: params_of(&sig[popen + 1..pclose], view),
        body: sig[open].start..sig[close].end,
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

/// Split tokens at commas that are not nested in brackets or angles.
fn split_top_level<'t>(tokens: &'t [Token], view: &str) -> Vec<&'t [Token]> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut angle = 0i32;
    let mut start = 0;
    for (i, t) in tokens.iter().enumerate() {
        match text(t, view) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            "<" if depth == 0 => angle += 1,
            ">" if depth == 0 && angle > 0 => angle -= 1,
            ">>" if depth == 0 && angle > 0 => angle = (angle - 2).max(0),
            "," if depth == 0 && angle == 0 => {
                parts.push(&tokens[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < tokens.len() || !parts.is_empty() {
        parts.push(&tokens[start..]);
    }
    parts
}

fn template_params(tokens: &[Token], view: &str) -> Vec<TemplateParam> {
    split_top_level(tokens, view)
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
            TemplateParam {
                declaration,
                name,
                is_pack,
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
    split_top_level(tokens, view)
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
fn find_launches(program: &Program, view: &str) -> Vec<Launch> {
    let sig = &program.sig;
    let mut launches = Vec::new();
    for (i, t) in sig.iter().enumerate() {
        if t.kind != TokenKind::Punct || text(t, view) != "<<<" {
            continue;
        }
        if let Some(launch) = launch_at(program, view, i) {
            launches.push(launch);
        }
    }
    launches
}

fn launch_at(program: &Program, view: &str, chevrons: usize) -> Option<Launch> {
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
    // Forwards: the configuration up to `>>>`.
    let mut k = chevrons + 1;
    let mut parts = Vec::new();
    let mut part_start = k;
    loop {
        let s = text(sig.get(k)?, view);
        match s {
            "(" | "[" | "{" => {
                k = program.partner[k]? + 1;
                continue;
            }
            ";" | ")" | "]" | "}" => return None,
            "," => {
                parts.push(span_of(sig, part_start, k)?);
                part_start = k + 1;
            }
            ">>>" => {
                parts.push(span_of(sig, part_start, k)?);
                break;
            }
            _ => {}
        }
        k += 1;
    }
    let close_chevrons = k;
    let open = close_chevrons + 1;
    if text(sig.get(open)?, view) != "(" {
        return None;
    }
    let close = program.partner[open]?;
    let semicolon = close + 1;
    if text(sig.get(semicolon)?, view) != ";" {
        return None;
    }
    let args = if close == open + 1 {
        Vec::new()
    } else {
        split_top_level(&sig[open + 1..close], view)
            .into_iter()
            .map(|p| match (p.first(), p.last()) {
                (Some(a), Some(b)) => a.start..b.end,
                _ => sig[open].end..sig[open].end,
            })
            .collect()
    };
    let start = sig[first].start;
    // Functions are sorted by body start and never nest.
    let candidate = program.functions.partition_point(|f| f.body.start < start);
    let function = candidate
        .checked_sub(1)
        .filter(|&i| start < program.functions[i].body.end);
    Some(Launch {
        kernel: view[sig[first].start..sig[name_token].end].to_string(),
        kernel_span: sig[first].start..sig[name_token].end,
        template_args,
        span: start..sig[semicolon].end,
        config: parts,
        args,
        config_span: sig[chevrons].start..sig[close_chevrons].end,
        function,
        first_token: first,
        last_token: semicolon,
    })
}

fn span_of(sig: &[Token], from: usize, to: usize) -> Option<std::ops::Range<usize>> {
    if from >= to {
        return None;
    }
    Some(sig[from].start..sig[to - 1].end)
}

fn find_pragmas(program: &Program, view: &str) -> Vec<PragmaSite> {
    program
        .sig
        .iter()
        .enumerate()
        .filter(|(_, t)| t.kind == TokenKind::Directive && is_dp_pragma(text(t, view)))
        .map(|(i, t)| PragmaSite {
            span: t.range(),
            token: i,
            next_token: (i + 1 < program.sig.len()).then_some(i + 1),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;

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
        let names: Vec<_> = p.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["child", "helper", "main"]);
        let child = &p.functions[0];
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
        assert!(p.functions[2].space.host);
    }

    #[test]
    fn finds_launches_with_templates_and_four_config_parts() {
        let (file, p) = program(
            "__global__ void k(int a) {}\n\
             __global__ void parent(int n) {\n  k<float><<<dim3(n, 2), 32, 0, s>>>(f(a, b), n);\n}\n",
        );
        assert_eq!(p.launches.len(), 1);
        let l = &p.launches[0];
        assert_eq!(l.kernel, "k");
        assert_eq!(l.template_args.as_deref(), Some("<float>"));
        let config: Vec<_> = l.config.iter().map(|r| &file.view[r.clone()]).collect();
        assert_eq!(config, ["dim3(n, 2)", "32", "0", "s"]);
        let args: Vec<_> = l.args.iter().map(|r| &file.view[r.clone()]).collect();
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
        let next = p.pragmas[0].next_token.unwrap();
        assert_eq!(p.sig[next].text(&file.view), "k");
        assert_eq!(p.launches[0].first_token, next);
    }
}
