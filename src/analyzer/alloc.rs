//! Aggregated allocations (paper 003 Sec. II-C): the parent threads'
//! device-side `malloc`/`cudaMalloc` of a pointer that a site's launch
//! passes become one allocation per warp or per block, each thread getting a
//! slice (`templates/alloc.cuh`). A slice must never be freed on its own,
//! so every use of the pointer, in the parent and in the child parameter
//! that receives it, must be one dpopt can follow: indexing, comparisons,
//! the launch, `memcpy`/`memset`, and the `free`/`cudaFree` calls, which
//! the generated code replaces by a reference-counted release. Anything
//! else (stored, passed to a function, copied, offset) refuses the
//! aggregation: an error under `alloc(...)`, a warning under the default of
//! `consldt(...)`, which then leaves the allocation as written.

use super::block_hazards::first_wait;
use super::cannot_see;
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::hazard::{Hazard, Hazards};
use crate::plan::{AllocCall, AllocGranularity, Allocation, FreeCall, Plan, Site};
use crate::pragma::{AllocChoice, Granularity};
use crate::program::{FunctionId, Program};
use crate::source::Span;
use crate::token::{is_identifier, Token, TokenKind};
use std::ops::Range;

/// Decide every site's aggregated allocations (`Site::allocations`,
/// `Site::allocations_left`); the diagnostics of those that cannot be.
pub(super) fn allocations(
    program: &Program,
    file: &crate::source::SourceFile,
    plan: &mut Plan,
    hazards: &Hazards,
) -> Vec<Diagnostic> {
    let input = SiteInput {
        program,
        file,
        hazards,
    };
    let mut diagnostics = Vec::new();
    let mut tag = 0;
    let decided: Vec<(Vec<Allocation>, Vec<String>)> = plan
        .sites
        .iter()
        .map(|site| input.site(site, &mut tag, &mut diagnostics))
        .collect();
    for (site, (aggregated, left)) in plan.sites.iter_mut().zip(decided) {
        site.allocations = aggregated;
        site.allocations_left = left;
    }
    diagnostics
}

/// What every site's allocations are decided from.
struct SiteInput<'a> {
    program: &'a Program,
    file: &'a crate::source::SourceFile,
    hazards: &'a Hazards<'a>,
}

impl SiteInput<'_> {
    /// One site's aggregated allocations and those left per thread (with
    /// why); `tag` numbers the file's aggregated allocation calls.
    fn site(
        &self,
        site: &Site,
        tag: &mut usize,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> (Vec<Allocation>, Vec<String>) {
        let Self {
            program,
            file,
            hazards,
        } = *self;
        let (granularity, explicit) = match (&site.alloc_clause, &site.aggregation) {
            (Some((AllocChoice::None, _)), _) | (None, None) => return Default::default(),
            (Some((AllocChoice::Warp, _)), _) => (AllocGranularity::Warp, true),
            (Some((AllocChoice::Block, _)), _) => (AllocGranularity::Block, true),
            // KLAP: warp aggregation allocates per warp; the coarser
            // granularities per block (an allocation cannot wait for the
            // whole grid).
            (None, Some(a)) if a.granularity == Granularity::Warp => {
                (AllocGranularity::Warp, false)
            }
            (None, Some(_)) => (AllocGranularity::Block, false),
        };
        let context = Context {
            program,
            file,
            site,
            granularity,
            explicit,
        };
        let mut found = false;
        let mut aggregated = Vec::new();
        let mut left = Vec::new();
        let launch = &program.launches[site.launch];
        let mut seen: Vec<&str> = Vec::new();
        for arg in &launch.args {
            let [token] = program.sig_in(*arg) else {
                continue;
            };
            let pointer = token.text(&program.view);
            if token.kind != TokenKind::Ident || seen.contains(&pointer) {
                continue;
            }
            seen.push(pointer);
            let calls = allocation_calls(program, site.parent, pointer);
            if calls.is_empty() {
                continue;
            }
            found = true;
            match context.follow(pointer, &calls, hazards) {
                Ok(allocation) => aggregated.push(allocation),
                Err(refused) if explicit => diagnostics.push(refused),
                Err(refused) => {
                    left.push(format!(
                        "`{pointer}` ({}): {}",
                        file.location(refused.span.start()),
                        refused.kind.message()
                    ));
                    let mut warning = Diagnostic::new(
                        DiagnosticKind::AllocNotAggregated {
                            refused: Box::new(refused.kind),
                        },
                        refused.span,
                        refused.label,
                    );
                    warning.notes = refused.notes;
                    diagnostics.push(warning);
                }
            }
        }
        if explicit && !found {
            let clause = site.alloc_clause.as_ref().map_or(Span::at(0), |c| c.1);
            diagnostics.push(
                Diagnostic::new(
                    DiagnosticKind::AllocNotFound {
                        parent: program.functions[site.parent].name.clone(),
                    },
                    clause,
                    "no allocation to aggregate",
                )
                .with_note(
                    launch.span,
                    "none of these arguments is allocated by the parent",
                ),
            );
        }
        for allocation in &mut aggregated {
            for call in &mut allocation.calls {
                *tag += 1;
                call.tag = *tag;
            }
        }
        (aggregated, left)
    }
}

/// One recognized allocation call of the pointer.
#[derive(Debug, Clone)]
struct Found {
    /// Significant-token index of `malloc` or `cudaMalloc`.
    callee: usize,
    cuda: bool,
    /// Significant-token index of the pointer it assigns.
    target: usize,
}

/// What one site's allocations are checked against.
struct Context<'a> {
    program: &'a Program,
    file: &'a crate::source::SourceFile,
    site: &'a Site,
    granularity: AllocGranularity,
    explicit: bool,
}

/// How a pointer is used at one occurrence.
enum Use {
    /// Fine: it does not leave the code dpopt follows.
    Kept,
    /// Passed as the launch's argument of this index.
    Launch(usize),
    /// `free(p)` / `cudaFree(p)`: the callee's token index, `cudaFree`.
    Free(usize, bool),
    /// Declared here.
    Declared,
    /// Somewhere dpopt cannot follow: what happens there.
    Escapes(String),
}

impl Context<'_> {
    fn error(&self, kind: DiagnosticKind, span: Span, label: &str) -> Diagnostic {
        let pragma = self.program.pragmas[self.site.pragma].span;
        let why = if self.explicit {
            "allocations aggregated by this pragma"
        } else {
            "consldt(...) aggregates the parent's allocations by default"
        };
        Diagnostic::new(kind, span, label).with_note(pragma, why)
    }

    /// The pointer's allocation, when every use of it can be followed.
    fn follow(
        &self,
        pointer: &str,
        calls: &[Found],
        hazards: &Hazards,
    ) -> Result<Allocation, Diagnostic> {
        let program = self.program;
        let site = self.site;
        let parent = &program.functions[site.parent];
        let sig = &program.sig;
        let first_call = sig[calls[0].callee].span();
        let escape = |what: String, span: Span, function: &str| {
            self.error(
                DiagnosticKind::AllocEscape {
                    pointer: pointer.to_string(),
                    function: function.to_string(),
                    what,
                },
                span,
                "dpopt cannot follow the pointer past here",
            )
            .with_note(first_call, "allocated here")
        };
        if parent.space.host && parent.space.device {
            return Err(self.error(
                DiagnosticKind::AllocUnsupported {
                    pointer: pointer.to_string(),
                    what: format!(
                        "`{}` is a `__host__ __device__` function, whose host compilation keeps the call as written",
                        parent.name
                    ),
                },
                first_call,
                "allocated here",
            ));
        }
        let mut frees = Vec::new();
        let mut params = Vec::new();
        let mut declared = 0;
        let launch = &program.launches[site.launch];
        for k in occurrences(program, site.parent, pointer) {
            let found = calls.iter().any(|c| c.target == k);
            match classify(program, k, found, Some(launch)) {
                Use::Kept => {}
                Use::Declared => declared += 1,
                Use::Launch(i) => params.push(i),
                Use::Free(callee, cuda) => frees.push(FreeCall {
                    callee: sig[callee].span(),
                    cuda,
                    function: site.parent,
                }),
                Use::Escapes(what) => return Err(escape(what, sig[k].span(), &parent.name)),
            }
        }
        if declared != 1 {
            let what = if declared == 0 {
                format!("`{pointer}` is not a local variable of `{}` (a parameter or a variable of a wider scope may hold pointers from elsewhere)", parent.name)
            } else {
                format!(
                    "`{pointer}` is declared {declared} times in `{}`",
                    parent.name
                )
            };
            return Err(self.error(
                DiagnosticKind::AllocUnsupported {
                    pointer: pointer.to_string(),
                    what,
                },
                first_call,
                "allocated here",
            ));
        }
        // The child's parameter that receives the pointer, in every
        // definition of the child.
        for child in site.children() {
            let function = &program.functions[child];
            for &i in &params {
                let Some(name) = function.params.get(i).and_then(|p| p.name.as_deref()) else {
                    continue;
                };
                for k in occurrences(program, child, name) {
                    match classify(program, k, false, None) {
                        Use::Kept => {}
                        Use::Free(callee, cuda) => frees.push(FreeCall {
                            callee: sig[callee].span(),
                            cuda,
                            function: child,
                        }),
                        Use::Declared => {
                            return Err(escape(
                                format!("`{name}` is declared again"),
                                sig[k].span(),
                                &function.name,
                            ))
                        }
                        // (`classify` follows no launch in the child: one
                        // there passes the pointer on.)
                        Use::Launch(_) => {
                            return Err(escape(
                                format!("`{name}` is passed to a launch"),
                                sig[k].span(),
                                &function.name,
                            ))
                        }
                        Use::Escapes(what) => {
                            return Err(escape(what, sig[k].span(), &function.name))
                        }
                    }
                }
            }
        }
        // A free in the child is rewritten in the child itself: every launch
        // of it must pass slices, and dpopt must be able to rewrite it.
        if let Some(free) = frees.iter().find(|f| f.function != site.parent) {
            let child = &program.functions[free.function];
            if !self.file.in_input(child.start) {
                return Err(self.error(
                    DiagnosticKind::AllocUnsupported {
                        pointer: pointer.to_string(),
                        what: format!(
                            "`{}` frees it and is defined in another file, which dpopt does not rewrite",
                            child.name
                        ),
                    },
                    free.callee,
                    "frees a slice",
                ));
            }
            let other = program.launches.with_ids().find(|&(i, l)| {
                i != site.launch
                    && program
                        .launched_kernels(l)
                        .iter()
                        .any(|k| site.children().any(|c| c == *k))
            });
            if let Some((_, other)) = other {
                return Err(self
                    .error(
                        DiagnosticKind::AllocFreeShared {
                            pointer: pointer.to_string(),
                            child: child.name.clone(),
                        },
                        free.callee,
                        "frees a slice",
                    )
                    .with_note(other.span, "also launched here"));
            }
        }
        if self.granularity == AllocGranularity::Block
            && !matches!(
                site.aggregation.as_ref().map(|a| a.granularity),
                Some(Granularity::Block | Granularity::MultiBlock)
            )
        {
            // Block and multiblock aggregation checked the same already.
            if let Some(finding) = first_wait(program, site.parent, hazards) {
                let d = if finding.hazard == Hazard::Unseen {
                    cannot_see(&finding, "alloc(block)")
                } else {
                    Diagnostic::new(
                        DiagnosticKind::AllocBlockHazard {
                            function: finding.function.clone(),
                            construct: finding.construct.clone(),
                        },
                        finding.span,
                        "waits for other threads",
                    )
                };
                let pragma = program.pragmas[site.pragma].span;
                let d =
                    super::with_calls(d, &finding).with_note(pragma, "block-level allocation here");
                return Err(d);
            }
        }
        Ok(Allocation {
            pointer: pointer.to_string(),
            param: params.first().copied().unwrap_or(0),
            granularity: self.granularity,
            explicit: self.explicit,
            calls: calls
                .iter()
                .map(|c| AllocCall {
                    callee: sig[c.callee].span(),
                    cuda: c.cuda,
                    tag: 0,
                })
                .collect(),
            frees,
        })
    }
}

/// Significant-token indices of the body of function `f`, braces excluded.
fn body(program: &Program, f: FunctionId) -> Range<usize> {
    let b = &program.functions[f].body_tokens;
    b.start + 1..b.end
}

fn text(program: &Program, k: usize) -> &str {
    let view = program.view.as_str();
    program.sig.get(k).map_or("", |t| t.text(view))
}

/// The occurrences of `name` in the body of `f` as a variable: not a member
/// (`x.name`, `x->name`) nor qualified (`ns::name`).
fn occurrences<'a>(
    program: &'a Program,
    f: FunctionId,
    name: &'a str,
) -> impl Iterator<Item = usize> + 'a {
    body(program, f).filter(move |&k| {
        program.sig[k].kind == TokenKind::Ident
            && text(program, k) == name
            && !matches!(text(program, k - 1), "." | "->" | "::")
    })
}

/// The recognized allocations of `pointer` in the body of `f`:
/// `cudaMalloc(&p, size)` (a cast of `&p` allowed) and
/// `p = (T *)malloc(size)` (C-style, `static_cast` or `reinterpret_cast`, in
/// a declaration too).
fn allocation_calls(program: &Program, f: FunctionId, pointer: &str) -> Vec<Found> {
    let range = body(program, f);
    let mut found = Vec::new();
    for k in range.clone() {
        let name = text(program, k);
        if !matches!(name, "malloc" | "cudaMalloc")
            || text(program, k + 1) != "("
            || matches!(text(program, k - 1), "." | "->" | "::")
        {
            continue;
        }
        let Some(close) = program.brackets.partner(k + 1) else {
            continue;
        };
        let target = if name == "cudaMalloc" {
            address_taken(program, k + 2..close)
        } else {
            assigned(program, k, close)
        };
        if let Some(target) = target.filter(|&t| text(program, t) == pointer && range.contains(&t))
        {
            found.push(Found {
                callee: k,
                cuda: name == "cudaMalloc",
                target,
            });
        }
    }
    found
}

/// In the arguments `args` of `cudaMalloc`: the first is `&p`, maybe cast
/// (`(void **)&p`, `reinterpret_cast<void **>(&p)`); the index of `p`.
fn address_taken(program: &Program, args: Range<usize>) -> Option<usize> {
    let view = program.view.as_str();
    let tokens: &[Token] = &program.sig[args.clone()];
    let parts = crate::token::split_top_level(tokens, view, crate::token::Angles::Operators);
    let first = parts.first()?;
    let amp = first.iter().position(|t| t.text(view) == "&")?;
    let cast = first[..amp].iter().all(|t| {
        t.kind == TokenKind::Ident || matches!(t.text(view), "(" | ")" | "*" | "<" | ">" | "::")
    });
    let pointer = first.get(amp + 1)?;
    let rest_closes = first[amp + 2..].iter().all(|t| t.text(view) == ")");
    (cast && rest_closes && pointer.kind == TokenKind::Ident).then(|| args.start + amp + 1)
}

/// `p = CAST malloc(size)` whose value is not used further (`;`, `,` or a
/// closing parenthesis follows): the index of `p`.
fn assigned(program: &Program, callee: usize, close: usize) -> Option<usize> {
    let mut j = callee.checked_sub(1)?;
    let mut opened = 0;
    loop {
        match text(program, j) {
            // `static_cast<T *>(` or a parenthesis around the call.
            "(" => {
                opened += 1;
                j = j.checked_sub(1)?;
                if text(program, j) == ">" {
                    while text(program, j) != "<" {
                        j = j.checked_sub(1)?;
                    }
                    j = j.checked_sub(1)?;
                    if !matches!(text(program, j), "static_cast" | "reinterpret_cast") {
                        return None;
                    }
                    j = j.checked_sub(1)?;
                }
            }
            // A C-style cast `(T *)`.
            ")" => {
                let open = program.brackets.partner(j)?;
                let typeish = (open + 1..j).all(|t| {
                    program.sig[t].kind == TokenKind::Ident
                        || matches!(text(program, t), "*" | "::" | "<" | ">")
                });
                if !typeish {
                    return None;
                }
                j = open.checked_sub(1)?;
            }
            _ => break,
        }
    }
    if j == 0 || text(program, j) != "=" || program.sig[j - 1].kind != TokenKind::Ident {
        return None;
    }
    let target = j - 1;
    if !assignment_value_unused(program, target) {
        return None;
    }
    // The value goes nowhere else: only the parentheses opened before the
    // call close after it.
    let mut after = close + 1;
    for _ in 0..opened {
        if text(program, after) != ")" {
            return None;
        }
        after += 1;
    }
    matches!(text(program, after), ";" | "," | ")").then_some(j - 1)
}

/// Is `target = ...` (at the target's index) a statement, a declaration,
/// an `if`/`while` condition or a parenthesis compared with something
/// (`if ((p = ...) == NULL)`): nothing else receives the value?
fn assignment_value_unused(program: &Program, target: usize) -> bool {
    if is_declaration(program, target) {
        return true;
    }
    let before = target - 1;
    match text(program, before) {
        ";" | "{" | "}" | "else" | "do" => true,
        // The end of a control header: `if (...) p = ...;`.
        ")" => program.brackets.partner(before).is_some_and(|open| {
            open > 0 && matches!(text(program, open - 1), "if" | "while" | "for")
        }),
        "(" => {
            let control = before > 0 && matches!(text(program, before - 1), "if" | "while");
            let compared = program
                .brackets
                .partner(before)
                .is_some_and(|close| matches!(text(program, close + 1), "==" | "!="));
            control || compared
        }
        _ => false,
    }
}

/// Keywords after which a name is an expression, not a declaration.
const EXPRESSION_KEYWORDS: &[&str] = &[
    "return",
    "case",
    "else",
    "do",
    "throw",
    "co_return",
    "sizeof",
    "delete",
    "new",
];

/// Functions that read or write through a pointer they are given and keep
/// nothing of it: the pointer may be any argument.
const NON_RETAINING: &[&str] = &[
    "memcpy", "memset", "memmove", "sizeof", "__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu",
    "__ldcv",
];

/// Functions that keep nothing of the pointer given as their first argument
/// (their other arguments are values they store: a pointer there escapes).
fn non_retaining_first(name: &str) -> bool {
    name.starts_with("atomic") || matches!(name, "__stcg" | "__stcs" | "__stwb" | "__stwt")
}

/// Where the expression that starts at token `first` is an argument of a
/// call that keeps nothing of the pointer it computes.
fn passed_to_non_retaining(program: &Program, first: usize) -> Option<bool> {
    let call = enclosing_call(program, first)?;
    let callee = text(program, call);
    let first_argument = (call + 2..first).all(|j| text(program, j) == "(");
    Some(NON_RETAINING.contains(&callee) || (first_argument && non_retaining_first(callee)))
}

/// Is token `k` (an identifier) declared there: `T *p`, `T p`, `auto p`?
fn is_declaration(program: &Program, k: usize) -> bool {
    let prev = text(program, k - 1);
    let typeish = |j: usize| {
        let t = text(program, j);
        (program.sig[j].kind == TokenKind::Ident && !EXPRESSION_KEYWORDS.contains(&t)) || t == ">"
    };
    let ends = matches!(text(program, k + 1), "=" | ";" | "," | "(" | "{" | "[");
    if !ends {
        return false;
    }
    if prev == "*" || prev == "&" {
        // `T *p`, `T **p`, `T *const p`; a deref statement `*p = x` has no
        // type before its `*`.
        let mut j = k - 1;
        while matches!(text(program, j), "*" | "&" | "const") {
            j -= 1;
        }
        return typeish(j) && text(program, k - 1) != "&";
    }
    program.sig[k - 1].kind == TokenKind::Ident && typeish(k - 1)
}

/// The call whose argument list holds token `k` directly: its name's index.
fn enclosing_call(program: &Program, k: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut j = k;
    while j > 0 {
        j -= 1;
        match text(program, j) {
            ")" | "]" | "}" => depth += 1,
            "(" if depth == 0 => {
                return (j > 0 && program.sig[j - 1].kind == TokenKind::Ident).then(|| j - 1);
            }
            "(" | "[" | "{" if depth > 0 => depth -= 1,
            "[" | "{" | ";" => return None,
            _ => {}
        }
    }
    None
}

/// How the pointer is used at its occurrence `k`. `allocated`: `k` is the
/// target of a recognized allocation. `launch`: the site's launch (in the
/// parent; `None` in the child).
fn classify(
    program: &Program,
    k: usize,
    allocated: bool,
    launch: Option<&crate::program::Launch>,
) -> Use {
    let name = text(program, k);
    let prev = text(program, k - 1);
    let next = text(program, k + 1);
    if allocated {
        return if is_declaration(program, k) {
            Use::Declared
        } else {
            Use::Kept
        };
    }
    if let Some(launch) = launch {
        if let Some(i) = launch.args.iter().position(|a| {
            let t = program.sig_in(*a);
            t.len() == 1 && t[0].start == program.sig[k].start
        }) {
            return Use::Launch(i);
        }
    }
    if next == "=" {
        let declared = is_declaration(program, k);
        if launch.is_none() && !declared {
            return Use::Escapes(format!("`{name}` is assigned"));
        }
        // `p = nullptr`, `p = NULL`, `p = 0` (a cast of them too).
        let end = (k + 2..program.sig.len())
            .find(|&j| matches!(text(program, j), ";" | ","))
            .unwrap_or(k + 2);
        let rhs: Vec<&str> = (k + 2..end)
            .map(|j| text(program, j))
            .filter(|t| !matches!(*t, "(" | ")" | "*"))
            .collect();
        let null = match rhs.as_slice() {
            [v] => matches!(*v, "nullptr" | "NULL" | "0"),
            [t, v] => is_identifier(t) && matches!(*v, "nullptr" | "NULL" | "0"),
            _ => false,
        };
        if null {
            return if declared { Use::Declared } else { Use::Kept };
        }
        return Use::Escapes(format!(
            "`{name}` is assigned a value that is not an allocation dpopt recognizes"
        ));
    }
    if is_declaration(program, k) {
        return if matches!(next, ";" | ",") {
            Use::Declared
        } else {
            Use::Escapes(format!(
                "`{name}` is declared with an initializer dpopt does not follow"
            ))
        };
    }
    if matches!(prev, "(") && next == ")" {
        let callee = text(program, k - 2);
        if matches!(callee, "free" | "cudaFree")
            && !matches!(text(program, k - 3), "." | "->" | "::")
        {
            return Use::Free(k - 2, callee == "cudaFree");
        }
    }
    // `&p[i]`, `&p->m`, `&*p`, `&(p[i])`: an address inside the slice (the
    // slice itself for element 0), safe only where a call uses it and keeps
    // nothing. A `&` after an operand is a binary and.
    let mut open = k - 1;
    while text(program, open) == "(" {
        open -= 1;
    }
    if prev == "*" {
        open = k - 2;
    }
    let unary = |j: usize| {
        text(program, j) == "&"
            && !(matches!(
                program.sig[j - 1].kind,
                TokenKind::Ident | TokenKind::Number
            ) && !EXPRESSION_KEYWORDS.contains(&text(program, j - 1))
                || text(program, j - 1) == "]")
    };
    if unary(open) {
        return match passed_to_non_retaining(program, open) {
            Some(true) => Use::Kept,
            _ => Use::Escapes(format!("an address inside `{name}` is taken")),
        };
    }
    if matches!(next, "[" | "->" | "==" | "!=" | "&&" | "||" | "?")
        || matches!(prev, "==" | "!=" | "!" | "&&" | "||")
        || (prev == "*" && !matches!(next, "++" | "--" | "+=" | "-="))
    {
        return Use::Kept;
    }
    if prev == "(" && next == ")" && matches!(text(program, k - 2), "if" | "while") {
        return Use::Kept;
    }
    if matches!(next, "+" | "-" | "++" | "--" | "+=" | "-=")
        || matches!(prev, "++" | "--" | "+" | "-")
    {
        return Use::Escapes(format!("`{name}` is offset (pointer arithmetic)"));
    }
    if matches!(prev, "(" | ",") && matches!(next, ")" | ",") {
        if let Some(call) = enclosing_call(program, k) {
            let callee = text(program, call);
            if passed_to_non_retaining(program, k) == Some(true) {
                return Use::Kept;
            }
            return Use::Escapes(format!("`{name}` is passed to `{callee}`"));
        }
        return Use::Escapes(format!(
            "`{name}` is passed to a launch or a call dpopt does not follow"
        ));
    }
    if prev == "=" {
        return Use::Escapes(format!("`{name}` is stored or copied"));
    }
    if prev == "return" {
        return Use::Escapes(format!("`{name}` is returned"));
    }
    Use::Escapes(format!("`{name}` is used in a way dpopt does not follow"))
}

#[cfg(test)]
mod tests {
    use crate::diagnostic::Diagnostic;
    use crate::lexer::lex;
    use crate::parser::parse;
    use crate::plan::Plan;
    use crate::source::SourceFile;

    fn analysis(text: &str) -> (Plan, Vec<Diagnostic>, String) {
        let file = SourceFile::new("t.cu", text.as_bytes().to_vec());
        let program = parse(&file, lex(&file));
        let a = crate::analyzer::analyze(&file, &program);
        (a.plan, a.diagnostics, text.to_string())
    }

    /// (pointer, granularity, explicit, callees, frees as `name@function`)
    /// of every aggregated allocation; the codes of the diagnostics.
    fn summary(text: &str) -> (Vec<String>, Vec<&'static str>) {
        let file = SourceFile::new("t.cu", text.as_bytes().to_vec());
        let program = parse(&file, lex(&file));
        let (plan, diagnostics, text) = analysis(text);
        let allocations = plan
            .sites
            .iter()
            .flat_map(|s| &s.allocations)
            .map(|a| {
                let calls: Vec<&str> = a.calls.iter().map(|c| &text[c.callee.range()]).collect();
                let frees: Vec<String> = a
                    .frees
                    .iter()
                    .map(|f| {
                        format!(
                            "{}@{}",
                            &text[f.callee.range()],
                            program.functions[f.function].name
                        )
                    })
                    .collect();
                format!(
                    "{} {} {} [{}] [{}]",
                    a.pointer,
                    a.granularity.spelling(),
                    if a.explicit { "clause" } else { "default" },
                    calls.join(" "),
                    frees.join(" ")
                )
            })
            .collect();
        (
            allocations,
            diagnostics.iter().map(|d| d.kind.code()).collect(),
        )
    }

    const CHILD: &str =
        "__global__ void child(float *buf, int n) { if (threadIdx.x < n) buf[threadIdx.x] = n; }\n";

    fn parent(body: &str, pragma: &str) -> String {
        format!("{CHILD}__global__ void parent(int n, float **keep) {{\n{body}\n#pragma dp {pragma}\n  child<<<1, 32>>>(buf, n);\n}}\n")
    }

    #[test]
    fn allocation_forms_are_recognized() {
        for (body, callee) in [
            ("float *buf = (float *)malloc(n * 4);", "malloc"),
            (
                "float *buf;\n  buf = static_cast<float *>(malloc(n * 4));",
                "malloc",
            ),
            (
                "float *buf = reinterpret_cast<float *>(malloc(n * 4));",
                "malloc",
            ),
            ("auto buf = (float *)malloc(n * 4);", "malloc"),
            (
                "float *buf = nullptr;\n  if ((buf = (float *)malloc(n * 4)) == NULL) return;",
                "malloc",
            ),
            ("float *buf;\n  cudaMalloc(&buf, n * 4);", "cudaMalloc"),
            (
                "float *buf;\n  if (cudaMalloc((void **)&buf, n * 4) != cudaSuccess) return;",
                "cudaMalloc",
            ),
            (
                "float *buf;\n  cudaMalloc(reinterpret_cast<void **>(&buf), n * 4);",
                "cudaMalloc",
            ),
        ] {
            let (allocations, codes) = summary(&parent(body, "alloc(warp)"));
            assert_eq!(codes, Vec::<&str>::new(), "{body}");
            assert_eq!(
                allocations,
                [format!("buf warp clause [{callee}] []")],
                "{body}"
            );
        }
    }

    #[test]
    fn every_allocation_of_the_pointer_and_every_free_is_rewritten() {
        let text = "__global__ void child(float *buf, int n) {\n  buf[threadIdx.x] = n;\n  if (threadIdx.x == 0) cudaFree(buf);\n}\n\
             __global__ void parent(int n) {\n  float *buf = nullptr;\n  if (n % 2) buf = (float *)malloc(n * 4);\n  \
             else if (cudaMalloc((void **)&buf, n * 4) != cudaSuccess) buf = nullptr;\n  if (!buf) return;\n  \
             memset(buf, 0, n * 4);\n\
             #pragma dp alloc(block)\n  child<<<1, 32>>>(buf, n);\n  if (cudaGetLastError() != cudaSuccess) free(buf);\n}\n";
        let (allocations, codes) = summary(text);
        assert_eq!(codes, Vec::<&str>::new());
        assert_eq!(
            allocations,
            ["buf block clause [malloc cudaMalloc] [free@parent cudaFree@child]"]
        );
    }

    #[test]
    fn consldt_aggregates_allocations_by_default_at_its_granularity() {
        let body = "float *buf = (float *)malloc(n * 4);";
        for (pragma, expected) in [
            ("consldt(warp)", vec!["buf warp default [malloc] []"]),
            ("consldt(block)", vec!["buf block default [malloc] []"]),
            (
                "consldt(multiblock, 8)",
                vec!["buf block default [malloc] []"],
            ),
            ("consldt(grid)", vec!["buf block default [malloc] []"]),
            (
                "consldt(grid) alloc(warp)",
                vec!["buf warp clause [malloc] []"],
            ),
            ("consldt(warp) alloc(none)", vec![]),
            ("coarsen(2)", vec![]),
        ] {
            let (allocations, codes) = summary(&parent(body, pragma));
            assert_eq!(codes, Vec::<&str>::new(), "{pragma}");
            assert_eq!(allocations, expected, "{pragma}");
        }
    }

    #[test]
    fn uses_dpopt_cannot_follow_refuse_the_allocation() {
        for (body, what) in [
            (
                "float *buf = (float *)malloc(n * 4);\n  keep[0] = buf;",
                "stored or copied",
            ),
            (
                "float *buf = (float *)malloc(n * 4);\n  helper(buf);",
                "passed to `helper`",
            ),
            (
                "float *buf = (float *)malloc(n * 4);\n  float *alias = buf;",
                "stored or copied",
            ),
            (
                "float *buf = (float *)malloc(n * 4);\n  buf += 4;",
                "offset",
            ),
            (
                "float *buf = (float *)malloc(n * 4);\n  keep[1] = buf + 1;",
                "offset",
            ),
            (
                "float *buf = (float *)malloc(n * 4);\n  buf = keep[0];",
                "not an allocation",
            ),
            ("float *buf = (float *)malloc(n * 4);\n  float *q = &buf[0];", "address inside"),
            ("float *buf = (float *)malloc(n * 4);\n  float *q = &(buf[0]);", "address inside"),
            ("float *buf = (float *)malloc(n * 4);\n  float *q = &*buf;", "address inside"),
            (
                "float *buf = (float *)malloc(n * 4);\n  atomicExch((unsigned long long *)keep, (unsigned long long)&buf[0]);",
                "address inside",
            ),
        ] {
            let (allocations, codes) = summary(&parent(body, "alloc(warp)"));
            assert!(allocations.is_empty(), "{body}");
            assert_eq!(codes, ["dpopt::alloc_escape"], "{body}");
            let (_, diagnostics, _) = analysis(&parent(body, "alloc(warp)"));
            assert!(
                diagnostics[0].kind.message().contains(what),
                "{body}: {}",
                diagnostics[0].kind.message()
            );
            // Under consldt the same is a warning, and the allocation stays.
            let (allocations, codes) = summary(&parent(body, "consldt(warp)"));
            assert!(allocations.is_empty(), "{body}");
            assert_eq!(codes, ["dpopt::alloc_not_aggregated"], "{body}");
        }
    }

    #[test]
    fn the_child_parameter_is_followed_too() {
        for (child, code) in [
            (
                "buf[threadIdx.x] = n; float v = __ldcg(&buf[1]); atomicAdd(&buf[0], v);",
                None,
            ),
            (
                "memcpy(buf, &n, sizeof(int)); __stcg(&buf[2], 1.0f); int b = n & buf[0] > 0;",
                None,
            ),
            (
                "float2 *p = (float2 *)&buf[0]; (void)p;",
                Some("dpopt::alloc_escape"),
            ),
            ("if (buf != nullptr && threadIdx.x == 0) free(buf);", None),
            ("keep(buf);", Some("dpopt::alloc_escape")),
            ("buf = nullptr;", Some("dpopt::alloc_escape")),
            (
                "float *buf2 = buf; buf2[0] = 1;",
                Some("dpopt::alloc_escape"),
            ),
            ("other<<<1, 1>>>(buf);", Some("dpopt::alloc_escape")),
        ] {
            let text = format!(
                "__device__ void keep(float *);\n__global__ void other(float *b) {{ b[0] = 0; }}\n\
                 __global__ void child(float *buf, int n) {{ {child} }}\n\
                 __global__ void parent(int n) {{\n  float *buf = (float *)malloc(n * 4);\n#pragma dp alloc(warp)\n  child<<<1, 32>>>(buf, n);\n}}\n"
            );
            let (allocations, codes) = summary(&text);
            match code {
                None => {
                    assert_eq!(codes, Vec::<&str>::new(), "{child}");
                    assert_eq!(allocations.len(), 1, "{child}");
                }
                Some(code) => {
                    assert_eq!(codes, [code], "{child}");
                    assert!(allocations.is_empty(), "{child}");
                }
            }
        }
    }

    #[test]
    fn a_child_that_frees_must_be_launched_only_by_the_site() {
        let text = "__global__ void child(float *buf) { if (threadIdx.x == 0) free(buf); }\n\
                    __global__ void parent(int n) {\n  float *buf = (float *)malloc(n * 4);\n#pragma dp alloc(warp)\n  child<<<1, 32>>>(buf);\n}\n\
                    __global__ void again(float *p) { child<<<1, 32>>>(p); }\n";
        let (allocations, codes) = summary(text);
        assert!(allocations.is_empty());
        assert_eq!(codes, ["dpopt::alloc_free"]);
        // Without the free, the other launch does not matter.
        let (allocations, codes) =
            summary(&text.replace("if (threadIdx.x == 0) free(buf);", "buf[0] = 1;"));
        assert_eq!(codes, Vec::<&str>::new());
        assert_eq!(allocations, ["buf warp clause [malloc] []"]);
    }

    #[test]
    fn what_is_not_a_local_allocation_is_refused_or_not_found() {
        // Not declared in the parent.
        let text = format!("{CHILD}__global__ void parent(float *buf, int n) {{\n  buf = (float *)malloc(n * 4);\n#pragma dp alloc(warp)\n  child<<<1, 32>>>(buf, n);\n}}\n");
        assert_eq!(summary(&text).1, ["dpopt::alloc_unsupported"]);
        // A __host__ __device__ parent.
        let text = format!("{CHILD}__host__ __device__ void parent(int n) {{\n  float *buf = (float *)malloc(n * 4);\n#pragma dp alloc(warp)\n  child<<<1, 32>>>(buf, n);\n}}\n");
        assert_eq!(summary(&text).1, ["dpopt::alloc_unsupported"]);
        // An allocation into memory, or whose value is used further, is
        // no allocation of a local pointer.
        for body in [
            "float *buf = keep[0];\n  keep[0] = (float *)malloc(n * 4);",
            "float *buf = (float *)malloc(n * 4) + 1;",
            "float *buf;\n  keep[0] = (buf = (float *)malloc(n * 4));",
            "float *other, *buf;\n  other = buf = (float *)malloc(n * 4);",
        ] {
            assert_eq!(
                summary(&parent(body, "alloc(warp)")).1,
                ["dpopt::alloc_not_found"],
                "{body}"
            );
            assert_eq!(
                summary(&parent(body, "consldt(warp)")).1,
                Vec::<&str>::new(),
                "{body}"
            );
        }
    }

    #[test]
    fn block_allocation_needs_a_block_without_waits() {
        let body = "float *buf = (float *)malloc(n * 4);\n  __syncwarp();";
        assert_eq!(
            summary(&parent(body, "alloc(block)")).1,
            ["dpopt::alloc_block"]
        );
        assert_eq!(summary(&parent(body, "alloc(warp)")).1, Vec::<&str>::new());
        // consldt(grid) allocates per block by default: left per thread.
        assert_eq!(
            summary(&parent(body, "consldt(grid)")).1,
            ["dpopt::alloc_not_aggregated"]
        );
        // consldt(block) reports the wait itself.
        assert_eq!(
            summary(&parent(body, "consldt(block)")).1,
            ["dpopt::block_aggregation"]
        );
    }

    #[test]
    fn calls_get_tags_unique_in_the_file() {
        let text = format!(
            "{CHILD}__global__ void p1(int n) {{\n  float *buf = (float *)malloc(n * 4);\n#pragma dp alloc(warp)\n  child<<<1, 32>>>(buf, n);\n}}\n\
             __global__ void p2(int n) {{\n  float *buf;\n  cudaMalloc(&buf, 4);\n  if (n) cudaMalloc(&buf, n * 4);\n#pragma dp alloc(block)\n  child<<<1, 32>>>(buf, n);\n}}\n"
        );
        let (plan, diagnostics, _) = analysis(&text);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let tags: Vec<usize> = plan
            .sites
            .iter()
            .flat_map(|s| &s.allocations)
            .flat_map(|a| &a.calls)
            .map(|c| c.tag)
            .collect();
        assert_eq!(tags, [1, 2, 3]);
    }
}
