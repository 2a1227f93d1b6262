//! How many threads does a child launch need? The heuristic of paper 000
//! Sec. III-D (Fig. 4): find the ceiling division in the grid expression, take
//! its left-hand side and drop added or subtracted constants.

use crate::expr::{parse_expr, Expr};
use crate::program::{FunctionId, Launch, Program};
use crate::source::Span;
use crate::token::{is_call_at, split_top_level, Angles, SigIdx, TokenKind};

/// Where one factor of the child's thread count comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CountSource {
    /// A sub-expression of the grid expression (this byte range). The
    /// generated code evaluates it once into a variable and puts the variable
    /// in its place in the grid expression.
    InGrid(Span),
    /// The grid is a variable computed earlier; this side-effect-free
    /// expression (byte range) is evaluated again at the launch.
    Reevaluated(Span),
    /// No pattern in this grid dimension: blocks times block size.
    BlocksTimesBlockDim(usize),
}

/// The child's thread count: a product of factors, or the fallback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThreadCount {
    /// The user wrote `child_threads(EXPR)`.
    Explicit(String),
    Factors(Vec<CountSource>),
    /// No pattern matched: total threads of the grid (warned about).
    Fallback,
}

/// Analyse the grid expression of `launch` (inside function `parent`).
pub fn thread_count(program: &Program, launch: &Launch, parent: FunctionId) -> ThreadCount {
    let view = program.view.as_str();
    let grid = launch.config[0];
    let block = launch.config.get(1).map(|r| &view[r.range()]).unwrap_or("");
    let Some(expr) = parse_expr(program.sig_in(grid), view) else {
        return ThreadCount::Fallback;
    };
    let divs = ceil_div_functions(program);
    let factors = match factors_of(&expr, view, block, &divs) {
        Some(f) => f
            .into_iter()
            .map(|f| f.map_or_else(CountSource::BlocksTimesBlockDim, CountSource::InGrid))
            .collect(),
        None => match variable_definition(
            program,
            &expr,
            GridUse {
                block,
                before: launch.first_token,
                launch_at: launch.span.start(),
                divs: &divs,
            },
            parent,
            0,
        ) {
            Some(f) => f,
            None => return ThreadCount::Fallback,
        },
    };
    if factors
        .iter()
        .all(|f| matches!(f, CountSource::BlocksTimesBlockDim(_)))
    {
        ThreadCount::Fallback
    } else {
        ThreadCount::Factors(factors)
    }
}

/// For a grid expression: one entry per dimension, `Ok(range of N)` where a
/// ceiling-division pattern was found, `Err(dimension)` where not. `None`
/// when no dimension matched.
fn factors_of(
    expr: &Expr,
    view: &str,
    block: &str,
    divs: &[String],
) -> Option<Vec<Result<Span, usize>>> {
    let e = expr.stripped();
    if let Expr::Call(name, args, _) = e {
        if name == "dim3" && !args.is_empty() && args.len() <= 3 {
            let block_parts = dim3_parts(block);
            let dims: Vec<_> = args
                .iter()
                .enumerate()
                .map(|(d, a)| {
                    let b = block_parts.get(d).map(String::as_str).unwrap_or("");
                    find_count(a, view, b, divs).ok_or(d)
                })
                .collect();
            return dims.iter().any(|d| d.is_ok()).then_some(dims);
        }
    }
    find_count(e, view, block, divs).map(|r| vec![Ok(r)])
}

/// The functions of the program that compute a ceiling division of their
/// two parameters (`int divup(int n, int b) { return (n + b - 1) / b; }`,
/// also `(n - 1) / b + 1`), as CUDA code sizes grids with (`iDivUp` of the
/// CUDA samples): a call of one counts as the division it returns.
fn ceil_div_functions(program: &Program) -> Vec<String> {
    let view = program.view.as_str();
    let mut out = Vec::new();
    for f in program.functions.iter() {
        let [a, b] = f.params.as_slice() else {
            continue;
        };
        let (Some(a), Some(b)) = (a.name.as_deref(), b.name.as_deref()) else {
            continue;
        };
        // The body is `{ return EXPR; }`.
        let body = program.sig_in(f.body);
        let n = body.len();
        if n < 5 || body[1].text(view) != "return" || body[n - 2].text(view) != ";" {
            continue;
        }
        let Some(expr) = parse_expr(&body[2..n - 2], view) else {
            continue;
        };
        let divides_by_b = |e: &Expr| {
            let mut e = e.stripped();
            // `(n - 1) / b + 1`: the division is the left side.
            if let Expr::Binary(op, lhs, _, _) = e {
                if op == "+" {
                    e = lhs.stripped();
                }
            }
            matches!(e, Expr::Binary(op, _, rhs, _) if op == "/" && squeeze(&view[rhs.stripped().span().range()]) == b)
        };
        let counts_a =
            find_count(&expr, view, "", &[]).is_some_and(|r| squeeze(&view[r.range()]) == a);
        if counts_a && divides_by_b(&expr) && !out.iter().any(|o: &String| o == &f.name) {
            out.push(f.name.clone());
        }
    }
    out
}

/// `dim3(a, b)` -> ["a", "b"]; anything else -> [whole].
fn dim3_parts(block: &str) -> Vec<String> {
    let b = block.trim();
    let tokens = crate::lexer::lex_text(b);
    let significant: Vec<usize> = (0..tokens.len())
        .filter(|&i| tokens[i].kind.is_significant())
        .collect();
    let is_dim3 = match significant.as_slice() {
        [name, open, .., close] => {
            tokens[*name].text(b) == "dim3"
                && tokens[*open].text(b) == "("
                && tokens[*close].text(b) == ")"
                && tokens[*close].end == b.len()
        }
        _ => false,
    };
    if !is_dim3 {
        return vec![b.to_string()];
    }
    // Between the parentheses, comments and blanks included.
    let inner = &tokens[significant[1] + 1..significant[significant.len() - 1]];
    let parts = split_top_level(inner, b, Angles::Operators);
    if parts.is_empty() {
        return vec![String::new()];
    }
    parts
        .into_iter()
        .map(|part| match (part.first(), part.last()) {
            (Some(first), Some(last)) => b[first.start..last.end].trim().to_string(),
            _ => String::new(),
        })
        .collect()
}

/// Fig. 4 (a)-(e): the N of a ceiling division, as a byte range.
fn find_count(expr: &Expr, view: &str, block: &str, divs: &[String]) -> Option<Span> {
    match expr.stripped() {
        // A function of the program that is a ceiling division
        // (`divup(n, b)`, `iDivUp(n, b)`: `ceil_div_functions`).
        Expr::Call(name, args, _) if args.len() == 2 && divs.contains(name) => {
            Some(drop_constants(
                &args[0],
                view,
                &squeeze(&view[args[1].stripped().span().range()]),
                block,
            ))
        }
        Expr::Call(name, args, _)
            if matches!(name.as_str(), "ceil" | "ceilf" | "std::ceil") && args.len() == 1 =>
        {
            find_count(&args[0], view, block, divs)
        }
        Expr::Binary(op, lhs, rhs, _) if op == "/" => {
            let divisor = squeeze(&view[rhs.stripped().span().range()]);
            Some(drop_constants(lhs, view, &divisor, block))
        }
        // (a) (N - 1) / b + 1 and (c) N / b + (N % b ? 1 : 0)
        Expr::Binary(op, lhs, rhs, _) if op == "+" || op == "-" => {
            find_count(lhs, view, block, divs).or_else(|| {
                if op == "+" {
                    find_count(rhs, view, block, divs)
                } else {
                    None
                }
            })
        }
        _ => None,
    }
}

/// Remove added or subtracted constants from the left side of the division.
fn drop_constants(expr: &Expr, view: &str, divisor: &str, block: &str) -> Span {
    let e = expr.stripped();
    if let Expr::Binary(op, lhs, rhs, _) = e {
        if (op == "+" || op == "-") && is_constant(rhs, view, divisor, block) {
            return drop_constants(lhs, view, divisor, block);
        }
        if op == "+" && is_constant(lhs, view, divisor, block) {
            return drop_constants(rhs, view, divisor, block);
        }
    }
    e.span()
}

fn squeeze(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

fn is_constant(expr: &Expr, view: &str, divisor: &str, block: &str) -> bool {
    let e = expr.stripped();
    let text = squeeze(&view[e.span().range()]);
    if text == divisor || (!block.is_empty() && text == squeeze(block)) {
        return true;
    }
    match e {
        Expr::Leaf(_) => {
            let numeric = text.starts_with(|c: char| c.is_ascii_digit());
            let macro_like = text.starts_with(|c: char| c.is_ascii_uppercase())
                && text
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
            numeric || macro_like
        }
        Expr::Binary(op, a, b, _) if matches!(op.as_str(), "+" | "-" | "*") => {
            is_constant(a, view, divisor, block) && is_constant(b, view, divisor, block)
        }
        Expr::Unary(op, a, _) if op == "-" => is_constant(a, view, divisor, block),
        _ => false,
    }
}

/// Where a grid variable is used, for the search of its definition.
#[derive(Clone, Copy)]
struct GridUse<'v> {
    /// The launch's block size as written.
    block: &'v str,
    /// The definition must come before this token: the launch's first
    /// token, or the definition of the variable defined from this one.
    before: SigIdx,
    /// Byte offset of the launch, where a factor is evaluated again.
    launch_at: usize,
    /// `ceil_div_functions` of the program.
    divs: &'v [String],
}

/// The grid is a name: find its last definition in the parent before its
/// use (`int g = ...;`, `g = ...;`, `dim3 g(...);`) and analyse that.
fn variable_definition(
    program: &Program,
    expr: &Expr,
    at: GridUse,
    parent: FunctionId,
    depth: usize,
) -> Option<Vec<CountSource>> {
    let view = program.view.as_str();
    let Expr::Leaf(range) = expr.stripped() else {
        return None;
    };
    let name = &view[range.range()];
    if depth > 3 || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let function = &program.functions[parent];
    let sig = &program.sig;
    let body = function.body_tokens.start + 1..at.before.0;
    // The last token naming the variable followed by `=`, `(` or `{` that
    // starts its definition.
    let def_at = body.clone().rev().find(|&i| {
        sig[i].kind == TokenKind::Ident
            && sig[i].text(view) == name
            && matches!(sig.get(i + 1).map(|t| t.text(view)), Some("=" | "(" | "{"))
            && (i == 0 || !matches!(sig[i - 1].text(view), "." | "->" | "::"))
            && (sig.get(i + 1).map(|t| t.text(view)) == Some("=")
                || sig[i - 1].kind == TokenKind::Ident && sig[i - 1].text(view) != "return"
                || sig[i - 1].text(view) == "," && in_declaration(program, i - 1))
    })?;
    let opener = sig[def_at + 1].text(view);
    let (init_tokens, init_is_dim3_args) = match opener {
        "=" => {
            let end = (def_at + 2..at.before.0)
                .find(|&i| matches!(sig[i].text(view), ";" | ","))
                .filter(|&i| program.brackets.partner(i).is_none())?;
            (
                &sig[def_at + 2..statement_end(program, def_at + 2, end)],
                false,
            )
        }
        _ => {
            let close = program.brackets.partner(def_at + 1)?;
            (&sig[def_at + 2..close], true)
        }
    };
    let scope_ok = encloses(program, def_at, at.before.0);
    let def_end = init_tokens.last()?.end;
    let pieces: Vec<Option<Expr>> = if init_is_dim3_args {
        split_top_level(init_tokens, view, Angles::Operators)
            .into_iter()
            .map(|t| parse_expr(t, view))
            .collect()
    } else {
        vec![parse_expr(init_tokens, view)]
    };
    let block = at.block;
    let combined: Vec<Result<Span, usize>> = if pieces.len() == 1 {
        let e = pieces[0].as_ref()?;
        match factors_of(e, view, block, at.divs) {
            Some(f) => f,
            None => {
                // One more level: `int nb = ...; dim3 g(nb);`.
                let inner = GridUse {
                    before: SigIdx(def_at),
                    ..at
                };
                return variable_definition(program, e, inner, parent, depth + 1)
                    .filter(|_| scope_ok);
            }
        }
    } else {
        let parts = dim3_parts(block);
        pieces
            .iter()
            .enumerate()
            .map(|(d, p)| {
                p.as_ref()
                    .and_then(|e| {
                        find_count(
                            e,
                            view,
                            parts.get(d).map(String::as_str).unwrap_or(""),
                            at.divs,
                        )
                    })
                    .ok_or(d)
            })
            .collect()
    };
    // A grid has at most three dimensions (`dim3 g(a, b, c, d)` is no grid).
    if !scope_ok || combined.len() > 3 || combined.iter().all(|c| c.is_err()) {
        return None;
    }
    let mut factors = Vec::new();
    for c in combined {
        match c {
            Ok(r) => {
                if !reevaluation_is_safe(program, r, def_end, at.launch_at) {
                    return None;
                }
                factors.push(CountSource::Reevaluated(r));
            }
            Err(d) => factors.push(CountSource::BlocksTimesBlockDim(d)),
        }
    }
    Some(factors)
}

/// Is the `,` at significant token `comma` one between the declarators of
/// a declaration (`dim3 bs(16, 16), grid(...)`): does its statement start
/// with a type and a name (`T name`, `const T name`)?
fn in_declaration(program: &Program, comma: usize) -> bool {
    let view = program.view.as_str();
    let sig = &program.sig;
    let mut j = comma;
    while j > 0 {
        let t = sig[j - 1].text(view);
        if matches!(t, ";" | "{" | "}") || sig[j - 1].kind == TokenKind::Directive {
            break;
        }
        j = match t {
            ")" | "]" => program.brackets.partner(j - 1).unwrap_or(j - 1),
            _ => j - 1,
        };
    }
    if sig.get(j).map(|t| t.text(view)) == Some("const") {
        j += 1;
    }
    let ident = |k: usize| sig.get(k).is_some_and(|t| t.kind == TokenKind::Ident);
    ident(j)
        && ident(j + 1)
        && !matches!(
            sig[j].text(view),
            "return" | "case" | "goto" | "delete" | "throw"
        )
}

fn statement_end(program: &Program, from: usize, candidate: usize) -> usize {
    let view = program.view.as_str();
    // `candidate` is the first `;` or `,` after `from`; skip commas inside
    // brackets by walking with the bracket partners.
    let mut i = from;
    while i < candidate {
        if matches!(program.sig[i].text(view), "(" | "[" | "{") {
            if let Some(p) = program.brackets.partner(i) {
                if p >= candidate {
                    return (p + 1..program.sig.len())
                        .find(|&k| matches!(program.sig[k].text(view), ";" | ","))
                        .unwrap_or(p + 1);
                }
                i = p;
            }
        }
        i += 1;
    }
    candidate
}

/// Is the definition at significant token `def` in a block that also holds
/// the launch at `launch` (so every name it uses is still in scope)?
fn encloses(program: &Program, def: usize, launch: usize) -> bool {
    let view = program.view.as_str();
    let mut depth = 0i32;
    for i in (0..def).rev() {
        match program.sig[i].text(view) {
            "}" => depth += 1,
            "{" if depth > 0 => depth -= 1,
            "{" => return program.brackets.encloses(i, launch),
            _ => {}
        }
    }
    false
}

/// Evaluating the count expression again at the launch must not change the
/// program: no assignments, increments or calls to unknown functions, and
/// none of its names assigned between the definition and the launch.
fn reevaluation_is_safe(program: &Program, range: Span, def_end: usize, launch: usize) -> bool {
    let view = program.view.as_str();
    const PURE: &[&str] = &[
        "min", "max", "abs", "ceil", "ceilf", "floor", "floorf", "sqrt", "sqrtf", "dim3",
    ];
    let tokens = program.sig_in(range);
    let mut names = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let s = t.text(view);
        if crate::token::MODIFYING_OPERATORS.contains(&s) {
            return false;
        }
        if t.kind == TokenKind::Ident {
            if is_call_at(tokens, i, view) && !PURE.contains(&s) {
                return false;
            }
            names.push(s);
        }
    }
    let between = program.sig_in(def_end..launch);
    for (i, t) in between.iter().enumerate() {
        if t.kind == TokenKind::Ident && names.contains(&t.text(view)) {
            let assigned = crate::token::is_modified_at(between, i, view);
            if assigned {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;
    use crate::parser::parse;
    use crate::source::SourceFile;

    fn count(body: &str) -> (SourceFile, ThreadCount) {
        let text = format!(
            "__global__ void c(int n) {{}}\n__global__ void p(int n, int *r) {{\n{body}\n}}\n"
        );
        let file = SourceFile::new("t.cu", text.into_bytes());
        let program = parse(&file, lex(&file));
        let launch = program.launches[crate::program::LaunchId(0)].clone();
        let tc = thread_count(&program, &launch, launch.function.unwrap());
        (file, tc)
    }

    fn texts(file: &SourceFile, tc: &ThreadCount) -> Vec<String> {
        let ThreadCount::Factors(f) = tc else {
            return vec![format!("{tc:?}")];
        };
        f.iter()
            .map(|s| match s {
                CountSource::InGrid(r) => format!("grid:{}", &file.view[r.range()]),
                CountSource::Reevaluated(r) => format!("again:{}", &file.view[r.range()]),
                CountSource::BlocksTimesBlockDim(d) => format!("blocks*dim{d}"),
            })
            .collect()
    }

    #[test]
    fn figure_4_patterns() {
        let cases = [
            ("c<<<(n - 1) / 128 + 1, 128>>>(n);", "grid:n"),
            ("c<<<(n + 128 - 1) / 128, 128>>>(n);", "grid:n"),
            (
                "c<<<(r[1] - r[0] + B - 1) / B, B>>>(n);",
                "grid:r[1] - r[0]",
            ),
            ("c<<<n / 64 + ((n % 64 == 0) ? 0 : 1), 64>>>(n);", "grid:n"),
            ("c<<<ceil((float)n / 32), 32>>>(n);", "grid:n"),
            ("c<<<(int)ceil(n / (float)32), 32>>>(n);", "grid:n"),
            ("c<<<(n + NT - 1) / NT, NT>>>(n);", "grid:n"),
        ];
        for (body, expected) in cases {
            let (file, tc) = count(body);
            assert_eq!(texts(&file, &tc), [expected], "{body}");
        }
    }

    #[test]
    fn a_ceiling_division_function_counts_as_its_division() {
        for helper in [
            "__host__ __device__ int divup(int n, int b) { return (n + b - 1) / b; }",
            "__device__ inline unsigned divup(unsigned a, unsigned b) { return (a - 1) / b + 1; }",
        ] {
            let text = format!("{helper}\n__global__ void c(int n) {{}}\n__global__ void p(int n, int *r) {{\n  c<<<divup(r[1] - r[0], 32), 32>>>(n);\n  c<<<dim3(divup(n, 16), divup(n + 2, 16)), dim3(16, 16)>>>(n);\n}}\n");
            let file = SourceFile::new("t.cu", text.into_bytes());
            let program = parse(&file, lex(&file));
            let launches = program.launches.as_slice();
            let tc = thread_count(&program, &launches[0], launches[0].function.unwrap());
            assert_eq!(texts(&file, &tc), ["grid:r[1] - r[0]"], "{helper}");
            let tc = thread_count(&program, &launches[1], launches[1].function.unwrap());
            assert_eq!(texts(&file, &tc), ["grid:n", "grid:n"], "{helper}");
        }
        // Not a ceiling division: the fallback.
        let text = "__device__ int half(int n, int b) { return n / 2; }\n__global__ void c(int n) {}\n__global__ void p(int n) {\n  c<<<half(n, 32), 32>>>(n);\n}\n";
        let file = SourceFile::new("t.cu", text.as_bytes().to_vec());
        let program = parse(&file, lex(&file));
        let l = &program.launches.as_slice()[0];
        assert_eq!(
            thread_count(&program, l, l.function.unwrap()),
            ThreadCount::Fallback
        );
    }

    #[test]
    fn a_grid_declared_after_another_variable_is_found() {
        let (file, tc) =
            count("  dim3 bs(16, 16), grid((n + 15) / 16, (n + 15) / 16);\n  c<<<grid, bs>>>(n);");
        assert_eq!(texts(&file, &tc), ["again:n", "again:n"]);
    }

    #[test]
    fn dim3_grids_multiply_dimensions() {
        let (file, tc) = count("c<<<dim3((n + 15) / 16, 4), dim3(16, 16)>>>(n);");
        assert_eq!(texts(&file, &tc), ["grid:n", "blocks*dim1"]);
    }

    #[test]
    fn grid_computed_into_a_variable() {
        let (file, tc) = count(
            "int deg = r[1] - r[0];\nint blocks = (deg + 127) / 128;\nc<<<blocks, 128>>>(n);",
        );
        assert_eq!(texts(&file, &tc), ["again:deg"]);
        let (file, tc) = count("int nb = (n + 31) / 32;\ndim3 g(nb);\nc<<<g, 32>>>(n);");
        assert_eq!(texts(&file, &tc), ["again:n"]);
    }

    #[test]
    fn unsafe_reevaluation_falls_back() {
        let (_, tc) = count("int blocks = (f(n) + 127) / 128;\nc<<<blocks, 128>>>(n);");
        assert_eq!(tc, ThreadCount::Fallback);
        let (_, tc) = count("int blocks = (n + 127) / 128;\nn = 0;\nc<<<blocks, 128>>>(n);");
        assert_eq!(tc, ThreadCount::Fallback);
        let (_, tc) =
            count("int blocks;\n{ int m = n; blocks = (m + 127) / 128; }\nc<<<blocks, 128>>>(n);");
        assert_eq!(tc, ThreadCount::Fallback);
    }

    #[test]
    fn no_division_falls_back() {
        let (_, tc) = count("c<<<n, 32>>>(n);");
        assert_eq!(tc, ThreadCount::Fallback);
    }

    #[test]
    fn dim3_block_parts() {
        assert_eq!(super::dim3_parts(" dim3(32, 4) "), ["32", "4"]);
        assert_eq!(
            super::dim3_parts("dim3 (f(a, b), /* y */ 2)"),
            ["f(a, b)", "/* y */ 2"]
        );
        assert_eq!(super::dim3_parts("dim3(a < b, c)"), ["a < b", "c"]);
        assert_eq!(super::dim3_parts("dim3()"), [""]);
        assert_eq!(super::dim3_parts("256"), ["256"]);
        assert_eq!(super::dim3_parts("dim3(8) * 2"), ["dim3(8) * 2"]);
    }
}
