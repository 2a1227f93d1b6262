//! Stage 2 (analyze): postwork, the code of a parent kernel that runs after
//! its children (paper 002). CDP1 code waits for the children with a
//! device-side `cudaDeviceSynchronize()` (or `cudaThreadSynchronize()`)
//! after its launches; CDP2 (CUDA 12+, the only CDP of sm_90) has no such
//! wait. This module finds those syncs, decides whether the code after one
//! can become a continuation kernel tail-launched after the parent grid and
//! all its children (`transform/continuation.rs`), and what that
//! continuation needs: the live locals of the thread and the parameters of
//! the kernel. It reports each sync that could be migrated (a warning
//! without `--migrate-sync`) and, with `--migrate-sync`, each that cannot
//! (an error that says how to restructure).

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::hazard::{Hazard, Hazards};
use crate::program::{FunctionId, Program};
use crate::source::SourceFile;
use crate::source::Span;
use crate::token::{Token, TokenKind};
use std::collections::BTreeSet;

/// The device-side calls that wait for children under CDP1.
pub const SYNC_CALLS: &[&str] = &["cudaDeviceSynchronize", "cudaThreadSynchronize"];

/// One device-side sync whose postwork becomes a continuation kernel.
#[derive(Debug, Clone)]
pub struct SyncSite {
    /// Names the generated entities: `<kernel symbol>_sync<k>`.
    pub id: String,
    /// Index into `Program::functions` of the kernel holding the sync.
    pub kernel: FunctionId,
    /// The name of the call as written (`cudaDeviceSynchronize`).
    pub call: String,
    /// The call's name.
    pub call_span: Span,
    /// The whole statement, `(void)` cast included, to its `;`.
    pub statement: Span,
    /// The postwork: from the end of the statement (or, for a sync that ends
    /// a top-level `if`, of that `if`) to the kernel body's closing `}`
    /// (exclusive).
    pub postwork: Span,
    /// The locals declared before the sync (at the top level of the body)
    /// that the postwork uses, in declaration order.
    pub locals: Vec<String>,
    /// What the migration does.
    pub migration: Migration,
    /// For a sync inside `#if` branches that hold the rest of the kernel:
    /// the condition of those branches (`conditional::branch_condition`),
    /// which the generated declarations and definitions keep.
    pub condition: Option<String>,
    /// A sync followed by more statements of the block of a top-level `if`:
    /// the byte offset of that `if`, before which the flag
    /// `PostworkSymbols::waited` is declared (set at the sync, a local of
    /// the continuation, which runs the rest of the block when it is set).
    pub waited_in_if: Option<usize>,
}

/// How a sync is migrated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Migration {
    /// The code after it becomes a continuation kernel.
    Continuation,
    /// Nothing runs after it in its thread (`final_sync.rs`): it goes, and
    /// the grid, which ends only after its children, waits for them.
    Dropped,
}

/// What the postwork analysis found.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    pub sites: Vec<SyncSite>,
    pub diagnostics: Vec<Diagnostic>,
}

/// A name declared by a top-level statement of a kernel body.
#[derive(Debug, Clone)]
struct Local {
    name: String,
    span: Span,
    /// `T &name` or `T &&name`: a reference, which a continuation cannot
    /// carry.
    reference: bool,
    /// `T name[N]`: an array, which decays when passed.
    array: bool,
    /// Declared `__shared__` (or `static`): not one thread's value.
    shared: bool,
}

/// Keywords that start a statement that is not a declaration.
const STATEMENT_KEYWORDS: &[&str] = &[
    "if",
    "else",
    "for",
    "while",
    "do",
    "switch",
    "return",
    "case",
    "default",
    "break",
    "continue",
    "goto",
    "using",
    "typedef",
    "asm",
    "throw",
    "namespace",
    "static_assert",
    "delete",
    "new",
    "co_await",
    "co_yield",
    "co_return",
    "sizeof",
    "typeid",
];

/// Words that are part of a type, never a declared name.
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
    "auto",
    "struct",
    "class",
    "union",
    "enum",
    "register",
    "constexpr",
];

/// Block barriers a continuation could not keep.
const BLOCK_BARRIERS: &[&str] = &[
    "__syncthreads",
    "__syncthreads_count",
    "__syncthreads_and",
    "__syncthreads_or",
    "__barrier_sync",
    "this_thread_block",
    "this_grid",
    "this_cluster",
    "tiled_partition",
    "coalesced_threads",
];

/// Find the device-side syncs after launches. `migrate`: `--migrate-sync`
/// was given (report what cannot be migrated as errors); without it every
/// sync that could be migrated gets a warning and nothing is rewritten.
/// `copied`: kernels whose bodies are copied for `#pragma dp` sites.
pub fn analyze(
    file: &SourceFile,
    program: &Program,
    migrate: bool,
    copied: &[FunctionId],
) -> Analysis {
    let view = &file.view;
    let mut out = Analysis::default();
    if !SYNC_CALLS.iter().any(|s| view.contains(s)) {
        return out;
    }
    let hazards = Hazards::new(program);
    let shared_names = shared_names(program);
    let launchers = launching_functions(program);
    let ruled_out = crate::conditional::ruled_out(program);
    for (f, function) in program.functions.with_ids() {
        if !function.space.runs_on_device() || !file.in_input(function.body.start()) {
            continue;
        }
        // A `__host__ __device__` function's sync is legal host code.
        if function.space.host {
            continue;
        }
        let open = function.body_tokens.start;
        let close = function.body_tokens.end;
        let body_condition = program.condition_at(function.body.start());
        let mut count = 0;
        // The sites of this kernel (indices into `out.sites`).
        let mut kernel_sites: Vec<usize> = Vec::new();
        for k in open + 1..close {
            let t = program.sig[k];
            if t.kind != TokenKind::Ident || !SYNC_CALLS.contains(&t.text(view)) {
                continue;
            }
            // A call: `name (`.
            if program.sig.get(k + 1).map(|n| n.text(view)) != Some("(") {
                continue;
            }
            // Not compiled with the command line's `-D` definitions.
            let condition = program.condition_at(t.start);
            if condition.iter().any(|b| ruled_out.contains(b)) {
                continue;
            }
            // A launch before it, in the kernel or in a function of the file
            // it calls there (directly or through calls).
            let launched = program
                .launches
                .iter()
                .any(|l| l.function == Some(f) && l.span.end() <= t.start)
                || calls_before(program, open, k)
                    .iter()
                    .any(|g| launchers.contains(g));
            // A device function's wait is refused under `--migrate-sync`
            // whether or not it launches itself: it waits for what its
            // callers launched (the CUDA guide's
            // `threadBlockDeviceSynchronize()`), and CDP2 has no such wait.
            if !launched && function.space.global {
                continue;
            }
            let call = t.text(view).to_string();
            let kernel = function.name.clone();
            let span = t.span();
            let refuse =
                |kind: DiagnosticKind, span: Span, label: &str| Diagnostic::new(kind, span, label);
            if let Some(&site) = kernel_sites
                .iter()
                .find(|&&s| out.sites[s].postwork.contains(t.start))
            {
                if migrate {
                    out.diagnostics.push(
                        refuse(
                            DiagnosticKind::SyncTwice {
                                kernel: kernel.clone(),
                                call: call.clone(),
                            },
                            span,
                            "a second wait for children",
                        )
                        .with_note(
                            out.sites[site].call_span,
                            "the first, whose continuation holds this one",
                        ),
                    );
                }
                continue;
            }
            let compiled = compiled_with(program, &ruled_out, &condition);
            let (first, _) = statement_bounds(program, open, k);
            // (In a kernel whose body is copied for `#pragma dp` sites too:
            // the copies drop it, `transform/renderer.rs`.)
            if is_dropped(program, f, k, &ruled_out) {
                count += 1;
                if !migrate {
                    out.diagnostics.push(migratable(&kernel, &call, span));
                }
                let end = program.sig[k + 3].end;
                kernel_sites.push(out.sites.len());
                out.sites.push(SyncSite {
                    id: format!("{}_sync{count}", function.symbol),
                    kernel: f,
                    call,
                    call_span: span,
                    statement: Span::new(program.sig[first].start, end),
                    postwork: Span::new(end, end),
                    locals: Vec::new(),
                    migration: Migration::Dropped,
                    condition: None,
                    waited_in_if: None,
                });
                continue;
            }
            // Inside `#if` branches: the continuation replaces the rest of
            // those branches, which must hold the rest of the kernel (what
            // follows them is compiled only without the sync).
            let directive = || {
                program.sig[open..k]
                    .iter()
                    .rev()
                    .find(|d| d.kind == TokenKind::Directive)
                    .map_or(span, |d| d.span())
            };
            let problem = if condition == body_condition
                && program.condition_at(program.sig[close].start) == body_condition
            {
                placement(program, open, k).map(|p| (p, program.sig[close].start, None))
            } else {
                match branch_end(program, k, close, &condition, &body_condition, &compiled) {
                    Some((end, guard)) => {
                        placement(program, open, k).map(|p| (p, end, Some(guard)))
                    }
                    None => Err(("an `#if` branch".to_string(), directive())),
                }
            };
            let (placed, postwork_end, guard) = match problem {
                Err((construct, at)) => {
                    if migrate {
                        out.diagnostics.push(
                            refuse(
                                DiagnosticKind::SyncNested {
                                    kernel: kernel.clone(),
                                    call: call.clone(),
                                    construct,
                                },
                                span,
                                "waits for children here",
                            )
                            .with_note(at, "inside this"),
                        );
                    }
                    continue;
                }
                Ok(placed) => placed,
            };
            if !function.space.global {
                if migrate {
                    out.diagnostics.push(refuse(
                        DiagnosticKind::SyncNotInKernel {
                            function: kernel.clone(),
                            call: call.clone(),
                        },
                        span,
                        "waits for children in a device function",
                    ));
                }
                continue;
            }
            let postwork = Span::new(placed.postwork_start, postwork_end);
            let locals = top_level_locals(program, open, placed.postwork_start);
            let used = used_names(program, postwork);
            let mut problems: Vec<Diagnostic> = Vec::new();
            if let Some((_, block)) = placed.in_if {
                // The continuation's record is made after the `if`, where
                // the block's own locals are gone.
                let inner = top_level_locals(program, block, placed.postwork_start);
                if let Some((name, at, l)) = used
                    .iter()
                    .find_map(|(n, at)| inner.iter().find(|l| &l.name == n).map(|l| (n, at, l)))
                {
                    problems.push(
                        refuse(
                            DiagnosticKind::PostworkUnsupported {
                                kernel: kernel.clone(),
                                what: format!("local `{name}`, declared in the `if` block before the sync and used after it (declare it before the `if`)"),
                            },
                            *at,
                            "used after the sync",
                        )
                        .with_note(l.span, "declared here"),
                    );
                }
            }
            if function.template_header.is_some() {
                problems.push(refuse(
                    DiagnosticKind::PostworkUnsupported {
                        kernel: kernel.clone(),
                        what: "a template kernel".to_string(),
                    },
                    span,
                    "the continuation of a template kernel",
                ));
            }
            if copied.contains(&f) {
                problems.push(refuse(
                    DiagnosticKind::PostworkUnsupported {
                        kernel: kernel.clone(),
                        what: "a kernel launched under `#pragma dp` (its body is copied into serial, coarsened or aggregated versions)".to_string(),
                    },
                    span,
                    "waits for children in a kernel dpopt also rewrites as a child",
                ));
            }
            for (name, at) in &used {
                if let Some(l) = locals.iter().find(|l| &l.name == name) {
                    if l.shared {
                        problems.push(
                            refuse(
                                DiagnosticKind::PostworkShared {
                                    kernel: kernel.clone(),
                                    name: name.clone(),
                                },
                                *at,
                                "used after the sync",
                            )
                            .with_note(l.span, "declared `__shared__` (or `static`) here"),
                        );
                    } else if l.reference || l.array {
                        problems.push(
                            refuse(
                                DiagnosticKind::PostworkUnsupported {
                                    kernel: kernel.clone(),
                                    what: format!(
                                        "local `{name}`, {}, used after the sync",
                                        if l.reference {
                                            "a reference"
                                        } else {
                                            "an array"
                                        }
                                    ),
                                },
                                *at,
                                "used after the sync",
                            )
                            .with_note(l.span, "declared here"),
                        );
                    }
                } else if shared_names.contains(name) {
                    problems.push(refuse(
                        DiagnosticKind::PostworkShared {
                            kernel: kernel.clone(),
                            name: name.clone(),
                        },
                        *at,
                        "shared memory used after the sync",
                    ));
                }
            }
            if let Some((construct, at, notes)) = barrier_in(program, &hazards, postwork) {
                let mut d = refuse(
                    DiagnosticKind::PostworkBarrier {
                        kernel: kernel.clone(),
                        construct,
                    },
                    at,
                    "after the sync",
                );
                for (s, l) in notes {
                    d = d.with_note(s, l);
                }
                problems.push(d);
            }
            if !problems.is_empty() {
                if migrate {
                    // The first problem of each kind.
                    let mut seen: Vec<&'static str> = Vec::new();
                    for d in problems {
                        if !seen.contains(&d.kind.code()) {
                            seen.push(d.kind.code());
                            out.diagnostics.push(d);
                        }
                    }
                }
                continue;
            }
            count += 1;
            let params: Vec<&str> = function
                .params
                .iter()
                .filter_map(|p| p.name.as_deref())
                .collect();
            let mut live: Vec<String> = locals
                .iter()
                .filter(|l| used.iter().any(|(n, _)| n == &l.name))
                .filter(|l| !params.contains(&l.name.as_str()))
                .map(|l| l.name.clone())
                .fold(Vec::new(), |mut v, n| {
                    if !v.contains(&n) {
                        v.push(n);
                    }
                    v
                });
            if !migrate {
                out.diagnostics.push(migratable(&kernel, &call, span));
            }
            let id = format!("{}_sync{count}", function.symbol);
            let waited_in_if = placed.in_if.map(|(kw, _)| {
                live.push(crate::names::PostworkSymbols::of(&id).waited);
                program.sig[kw].start
            });
            kernel_sites.push(out.sites.len());
            out.sites.push(SyncSite {
                id,
                kernel: f,
                call,
                call_span: span,
                statement: placed.statement,
                postwork,
                locals: live,
                migration: Migration::Continuation,
                condition: guard,
                waited_in_if,
            });
        }
    }
    if !migrate {
        out.sites.clear();
    }
    out
}

/// Where a sync stands: the statement of the call (`(void)` cast
/// included, to its `;`), and the offset where the postwork starts: right
/// after it at the top level of the body, or after the `if` it ends.
#[derive(Debug, Clone)]
struct Placed {
    statement: Span,
    postwork_start: usize,
    /// A sync followed by more statements of the block of a top-level `if`
    /// (no `else`): the significant tokens of that `if` keyword and of the
    /// block's `{`. The postwork then starts right after the sync.
    in_if: Option<(usize, usize)>,
}

/// The warning at a sync that `--migrate-sync` would migrate, without it.
fn migratable(kernel: &str, call: &str, span: Span) -> Diagnostic {
    Diagnostic::new(
        DiagnosticKind::SyncMigratable {
            kernel: kernel.to_string(),
            call: call.to_string(),
        },
        span,
        "CDP1: not available on sm_90 (CDP2)",
    )
}

/// Is significant token `j` compiled together with code under the `#if`
/// stack `condition` (not in another branch of one of its groups, nor in a
/// branch the command line rules out)?
fn compiled_with<'p>(
    program: &'p Program,
    ruled_out: &'p std::collections::HashSet<(usize, usize)>,
    condition: &'p [(usize, usize)],
) -> impl Fn(usize) -> bool + 'p {
    move |j: usize| {
        let c = program.condition_at(program.sig[j].start);
        !c.iter().any(|b| ruled_out.contains(b)) && !exclusive(&c, condition)
    }
}

/// Does `--migrate-sync` drop the sync call at significant token `k` in
/// kernel `f`: a statement of its own in a `__global__` kernel, and the last
/// thing its thread runs (`final_sync.rs`)? `ruled_out`:
/// `conditional::ruled_out` of the program.
pub fn is_dropped(
    program: &Program,
    f: FunctionId,
    k: usize,
    ruled_out: &std::collections::HashSet<(usize, usize)>,
) -> bool {
    let function = &program.functions[f];
    let (open, close) = (function.body_tokens.start, function.body_tokens.end);
    let (first, statement_form) = statement_bounds(program, open, k);
    let condition = program.condition_at(program.sig[k].start);
    statement_form
        && function.space.global
        && !function.space.host
        && crate::final_sync::is_final(
            program,
            open,
            close,
            first,
            k + 3,
            &compiled_with(program, ruled_out, &condition),
        )
}

/// The first significant token of the sync call at `k` (`::` and a
/// `(void)` cast before it included), and whether the call is a statement
/// of its own, `name ( ) ;` (its `;` is then `k + 3`).
fn statement_bounds(program: &Program, open: usize, k: usize) -> (usize, bool) {
    let view = program.view.as_str();
    let sig = &program.sig;
    let close = program.brackets.partner(k + 1).unwrap_or(k + 1);
    let statement_form = close == k + 2 && sig.get(k + 3).map(|t| t.text(view)) == Some(";");
    let mut first = k;
    if first > open + 1 && sig[first - 1].text(view) == "::" {
        first -= 1;
    }
    let k0 = first;
    if k0 >= open + 4
        && sig[k0 - 1].text(view) == ")"
        && sig[k0 - 2].text(view) == "void"
        && sig[k0 - 3].text(view) == "("
    {
        first = k0 - 3;
    }
    (first, statement_form)
}

/// Are two `#if` stacks in different branches of one group (so that at
/// most one of them is compiled)?
fn exclusive(a: &[(usize, usize)], b: &[(usize, usize)]) -> bool {
    a.iter()
        .zip(b)
        .find(|(x, y)| x != y)
        .is_some_and(|(x, y)| x.0 == y.0)
}

/// For a sync at significant token `k` inside `#if` branches nested in the
/// kernel body's own (`condition` extends `body` by them): where those
/// branches end (the byte offset of the directive that leaves them) and
/// their condition, when they hold the rest of the kernel: every token from
/// there to the body's closing brace (at `close`, in the body's branch) is
/// a directive or compiled only without the sync.
fn branch_end(
    program: &Program,
    k: usize,
    close: usize,
    condition: &[(usize, usize)],
    body: &[(usize, usize)],
    compiled: &dyn Fn(usize) -> bool,
) -> Option<(usize, String)> {
    let sig = &program.sig;
    if !condition.starts_with(body) || program.condition_at(sig[close].start) != body {
        return None;
    }
    let end = (k + 1..close).find(|&j| {
        sig[j].kind == TokenKind::Directive
            && !program
                .condition_at(sig[j].start + 1)
                .starts_with(condition)
    })?;
    let rest_elsewhere = (end..close).all(|j| sig[j].kind == TokenKind::Directive || !compiled(j));
    if !rest_elsewhere {
        return None;
    }
    let guard = crate::conditional::branch_condition(program, &condition[body.len()..])?;
    Some((sig[end].start, guard))
}

/// Is significant token `j` the start of a statement at the top level of
/// the body opened at `open`?
fn starts_statement(program: &Program, open: usize, j: usize) -> bool {
    let view = program.view.as_str();
    let sig = &program.sig;
    j == open + 1 || {
        let prev = &sig[j - 1];
        matches!(prev.text(view), ";" | "}") || prev.kind == TokenKind::Directive
    }
}

/// The keyword `if` whose condition closes at significant token `close`
/// (a `)`), when that `if` is a statement at the top level of the body.
fn top_level_if(program: &Program, open: usize, close: usize) -> Option<usize> {
    let view = program.view.as_str();
    let sig = &program.sig;
    let paren = program.brackets.partner(close)?;
    let kw = paren.checked_sub(1)?;
    (kw > open && sig[kw].text(view) == "if" && starts_statement(program, open, kw)).then_some(kw)
}

/// Can the sync at significant token `k` (in the body opened at `open`) be
/// migrated? It must be a statement of its own, at the top level of the
/// body, or the last statement of a top-level `if` without `else` (the
/// CDP1 idiom `if (threadIdx.x == 0) { launch; cudaDeviceSynchronize(); }`):
/// then the postwork is the code after the `if`, which every thread runs
/// after the children (a thread that skipped the wait only runs later).
/// Otherwise what encloses it (a description and a span).
fn placement(program: &Program, open: usize, k: usize) -> Result<Placed, (String, Span)> {
    let view = program.view.as_str();
    let sig = &program.sig;
    let expression = |at: Span| Err(("an expression (its result is used)".to_string(), at));
    let (first, statement_form) = statement_bounds(program, open, k);
    // The innermost bracket around the call.
    let mut enclosing = None;
    for (j, t) in sig.iter().enumerate().take(first).skip(open + 1) {
        if matches!(t.text(view), "(" | "{" | "[") && program.brackets.encloses(j, k) {
            enclosing = Some(j);
        }
    }
    let after = |j: usize| sig.get(j).map(|t| t.text(view)).unwrap_or("");
    if let Some(j) = enclosing {
        if sig[j].text(view) != "{" {
            return expression(sig[j].span());
        }
        // The last statement of the block of a top-level `if`, no `else`.
        let block_end = program.brackets.partner(j).unwrap_or(j);
        let if_kw = (j > open + 1 && sig[j - 1].text(view) == ")")
            .then(|| top_level_if(program, open, j - 1))
            .flatten();
        let last = k + 4 == block_end;
        let direct = enclosing_of(program, open, j).is_none();
        if let (Some(kw), true, true) = (if_kw, statement_form, direct) {
            if after(block_end + 1) != "else" {
                // The last statement: the postwork follows the `if`. Before
                // more statements of the block: it starts after the sync,
                // and the continuation runs the rest of the block for the
                // threads that reached the sync.
                return Ok(Placed {
                    statement: Span::new(sig[first].start, sig[k + 3].end),
                    postwork_start: if last {
                        sig[block_end].end
                    } else {
                        sig[k + 3].end
                    },
                    in_if: (!last).then_some((kw, j)),
                });
            }
        }
        return Err((control_of(program, j), sig[j].span()));
    }
    if !statement_form {
        return expression(sig[k].span());
    }
    let end = sig[k + 3].end;
    if starts_statement(program, open, first) {
        return Ok(Placed {
            statement: Span::new(sig[first].start, end),
            postwork_start: end,
            in_if: None,
        });
    }
    let prev = &sig[first - 1];
    let prev_text = prev.text(view);
    if matches!(prev_text, "else" | "do") {
        return Err((format!("the statement of `{prev_text}`"), prev.span()));
    }
    if prev_text == ")" {
        // `if (cond) cudaDeviceSynchronize();` at the top level, no `else`.
        if let Some(kw) = top_level_if(program, open, first - 1) {
            if after(k + 4) != "else" {
                return Ok(Placed {
                    statement: Span::new(sig[first].start, end),
                    postwork_start: end,
                    in_if: None,
                });
            }
            return Err(("an `if` with an `else`".to_string(), sig[kw].span()));
        }
        if let Some(kw) = program
            .brackets
            .partner(first - 1)
            .and_then(|p| p.checked_sub(1))
            .map(|q| &sig[q])
        {
            let w = kw.text(view);
            if matches!(w, "if" | "for" | "while" | "switch") {
                return Err((format!("the statement of `{w}`"), kw.span()));
            }
        }
    }
    if prev_text == ":" {
        return Err(("a labelled statement".to_string(), prev.span()));
    }
    expression(sig[k].span())
}

/// The innermost bracket (after `open`) around significant token `k`.
fn enclosing_of(program: &Program, open: usize, k: usize) -> Option<usize> {
    let view = program.view.as_str();
    let mut enclosing = None;
    for (j, t) in program.sig.iter().enumerate().take(k).skip(open + 1) {
        if matches!(t.text(view), "(" | "{" | "[") && program.brackets.encloses(j, k) {
            enclosing = Some(j);
        }
    }
    enclosing
}

/// What the brace block opened at significant token `j` belongs to.
fn control_of(program: &Program, j: usize) -> String {
    let view = program.view.as_str();
    let sig = &program.sig;
    let Some(prev) = j.checked_sub(1).map(|p| &sig[p]) else {
        return "a block".to_string();
    };
    let p = prev.text(view);
    if matches!(p, "else" | "do" | "try") {
        let article = if p == "do" { "a" } else { "an" };
        return format!("{article} `{p}` block");
    }
    if p == ")" {
        if let Some(w) = program
            .brackets
            .partner(j - 1)
            .and_then(|q| q.checked_sub(1))
            .map(|q| sig[q].text(view))
        {
            if matches!(w, "if" | "for" | "while" | "switch") {
                let article = if w == "if" { "an" } else { "a" };
                return format!("{article} `{w}` block");
            }
        }
    }
    "a block".to_string()
}

/// The names declared by the top-level statements of the body opened at
/// significant token `open`, before byte offset `before`.
fn top_level_locals(program: &Program, open: usize, before: usize) -> Vec<Local> {
    let view = program.view.as_str();
    let sig = &program.sig;
    let end = sig.partition_point(|t| t.start < before);
    let mut locals = Vec::new();
    let mut k = open + 1;
    while k < end {
        if sig[k].kind == TokenKind::Directive {
            k += 1;
            continue;
        }
        let start = k;
        let first = sig[k].text(view);
        let control = STATEMENT_KEYWORDS.contains(&first) || first == "{";
        // One statement: to `;` at depth 0, or to the end of a brace group
        // of a control statement (or a block).
        let mut stop = k;
        while stop < end {
            let t = sig[stop].text(view);
            if matches!(t, "(" | "[" | "{") {
                let brace = t == "{";
                stop = program.brackets.skip(stop);
                if brace && control {
                    // `else` continues an `if`, `while` ends a `do`.
                    let next = sig.get(stop).map(|n| n.text(view)).unwrap_or("");
                    if next != "else" && next != "while" {
                        break;
                    }
                }
                continue;
            }
            stop += 1;
            if t == ";" {
                break;
            }
        }
        if !control && sig[start].kind == TokenKind::Ident {
            declared_in(program, start, stop.min(end), &mut locals);
        }
        k = stop.max(k + 1);
    }
    locals
}

/// The names a declaration statement `sig[from..to]` declares.
fn declared_in(program: &Program, from: usize, to: usize, out: &mut Vec<Local>) {
    let view = program.view.as_str();
    let sig = &program.sig;
    let words: Vec<&str> = sig[from..to].iter().map(|t| t.text(view)).collect();
    let shared = words
        .iter()
        .any(|w| matches!(*w, "__shared__" | "static" | "extern"));
    let mut found = false;
    let mut k = from;
    while k < to {
        let t = &sig[k];
        let text = t.text(view);
        if matches!(text, "(" | "[" | "{") && k > from {
            // An initializer or a bracket group: skip it (a name before `[`
            // or `{` was handled when the name was seen).
            k = program.brackets.skip(k);
            continue;
        }
        if t.kind == TokenKind::Ident && k > from && !TYPE_WORDS.contains(&text) {
            let next = sig.get(k + 1).map(|n| n.text(view)).unwrap_or("");
            let prev = sig[k - 1];
            let prev_text = prev.text(view);
            let typed = prev.kind == TokenKind::Ident
                || matches!(prev_text, "*" | "&" | "&&" | ">" | "::")
                || (prev_text == "," && found);
            // `T name(args)`: direct initialization (after a type name only:
            // `a * f(b);` is an expression).
            let direct = next == "(" && prev.kind == TokenKind::Ident;
            if typed && prev_text != "::" && (matches!(next, "=" | ";" | "," | "[" | "{") || direct)
            {
                found = true;
                out.push(Local {
                    name: text.to_string(),
                    span: t.span(),
                    reference: matches!(prev_text, "&" | "&&"),
                    array: next == "[",
                    shared,
                });
                // Skip the initializer to the next `,` or `;` at depth 0.
                k += 1;
                while k < to && !matches!(sig[k].text(view), "," | ";") {
                    if matches!(sig[k].text(view), "(" | "[" | "{") {
                        k = program.brackets.skip(k);
                    } else {
                        k += 1;
                    }
                }
                continue;
            }
        }
        if matches!(text, "=" | "." | "->") && !found {
            // An expression statement.
            return;
        }
        k += 1;
    }
}

/// The identifiers the postwork uses as names (not members), with the
/// first place of each.
fn used_names(program: &Program, range: Span) -> Vec<(String, Span)> {
    let view = program.view.as_str();
    let tokens: &[Token] = program.sig_in(range);
    let mut out: Vec<(String, Span)> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if t.kind != TokenKind::Ident {
            continue;
        }
        let prev = if i > 0 { tokens[i - 1].text(view) } else { "" };
        if matches!(prev, "." | "->" | "::") {
            continue;
        }
        let name = t.text(view);
        if !out.iter().any(|(n, _)| n == name) {
            out.push((name.to_string(), t.span()));
        }
    }
    out
}

/// Names declared `__shared__` anywhere in the file.
fn shared_names(program: &Program) -> Vec<String> {
    let view = program.view.as_str();
    let sig = &program.sig;
    let mut out = Vec::new();
    for (k, t) in sig.iter().enumerate() {
        if t.text(view) != "__shared__" {
            continue;
        }
        // The last identifier before `;`, `[` or `=` of this declaration.
        let mut j = k + 1;
        let mut last = None;
        while j < sig.len() && !matches!(sig[j].text(view), ";" | "[" | "=" | "{" | "(") {
            if sig[j].kind == TokenKind::Ident {
                last = Some(sig[j].text(view).to_string());
            }
            j += 1;
        }
        if let Some(n) = last {
            out.push(n);
        }
    }
    out
}

/// The first barrier, warp operation or shared-memory declaration the
/// postwork reaches, directly or through a call.
#[allow(clippy::type_complexity)]
fn barrier_in(
    program: &Program,
    hazards: &Hazards,
    range: Span,
) -> Option<(String, Span, Vec<(Span, String)>)> {
    let view = program.view.as_str();
    let mut tokens = program.sig_in(range);
    // Leading `__syncthreads();` (the CDP1 idiom `if (threadIdx.x == 0)
    // cudaDeviceSynchronize(); __syncthreads();`): the continuation starts
    // after every thread of the grid has passed the sync, so the barrier
    // holds; in a block continuation it is a barrier of the threads that
    // reached the sync, and alone in a thread it passes at once.
    while tokens.len() >= 4
        && tokens[0].text(view) == "__syncthreads"
        && tokens[1].text(view) == "("
        && tokens[2].text(view) == ")"
        && tokens[3].text(view) == ";"
    {
        tokens = &tokens[4..];
    }
    for (i, t) in tokens.iter().enumerate() {
        if t.kind != TokenKind::Ident {
            continue;
        }
        let name = t.text(view);
        if BLOCK_BARRIERS.contains(&name)
            || crate::hazard::is_warp_intrinsic(name)
            || name == "__shared__"
        {
            return Some((name.to_string(), t.span(), Vec::new()));
        }
        if tokens.get(i + 1).map(|n| n.text(view)) == Some("(") {
            let prev = if i > 0 { tokens[i - 1].text(view) } else { "" };
            if matches!(prev, "." | "->") {
                continue;
            }
            if let crate::program::Resolution::Found(g) = program.resolve(name, None, t.start, None)
            {
                let summary = hazards.of(g);
                if let Some(finding) = summary.first_of(
                    &[Hazard::Block, Hazard::Warp, Hazard::Grid, Hazard::Shared],
                    |_| true,
                ) {
                    let mut notes = vec![(t.span(), format!("calls `{name}`"))];
                    notes.push((finding.span, format!("`{}` is here", finding.construct)));
                    return Some((finding.construct.clone(), t.span(), notes));
                }
            }
        }
    }
    None
}

/// The functions of the file that launch kernels, directly or through the
/// functions of the file they call.
fn launching_functions(program: &Program) -> Vec<FunctionId> {
    let mut launching: BTreeSet<FunctionId> =
        program.launches.iter().filter_map(|l| l.function).collect();
    let callees: Vec<(FunctionId, Vec<FunctionId>)> = program
        .functions
        .with_ids()
        .map(|(id, f)| {
            (
                id,
                calls_before(program, f.body_tokens.start, f.body_tokens.end),
            )
        })
        .collect();
    // To a fixed point: each round marks the callers of marked functions.
    loop {
        let mut changed = false;
        for (f, calls) in &callees {
            if !launching.contains(f) && calls.iter().any(|g| launching.contains(g)) {
                launching.insert(*f);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    launching.into_iter().collect()
}

/// The functions of the file called between significant tokens `open` and
/// `end` (`name (`, not a member call).
fn calls_before(program: &Program, open: usize, end: usize) -> Vec<FunctionId> {
    let view = program.view.as_str();
    let sig = &program.sig;
    let mut out = Vec::new();
    for k in open + 1..end.min(sig.len()) {
        let t = &sig[k];
        if t.kind != TokenKind::Ident || sig.get(k + 1).map(|n| n.text(view)) != Some("(") {
            continue;
        }
        if k > 0 && matches!(sig[k - 1].text(view), "." | "->") {
            continue;
        }
        if let Some(fs) = program.named.get(t.text(view)) {
            for &g in fs {
                if !out.contains(&g) {
                    out.push(g);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(src: &str, migrate: bool) -> (SourceFile, Analysis) {
        let file = SourceFile::new("t.cu", src.as_bytes().to_vec());
        let program = crate::parser::parse(&file, crate::lexer::lex(&file));
        let a = analyze(&file, &program, migrate, &[]);
        (file, a)
    }

    #[test]
    fn finds_a_top_level_sync_and_its_live_locals() {
        let src = "__global__ void c(int *a) {}\n__global__ void k(int *a, int n) {\n  int i = threadIdx.x, j = 2;\n  float unused = 1.0f;\n  if (i < n) { c<<<1, 1>>>(a); }\n  cudaDeviceSynchronize();\n  a[i] += j;\n}\n";
        let (_, a) = run(src, true);
        assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
        assert_eq!(a.sites.len(), 1);
        assert_eq!(a.sites[0].locals, ["i", "j"]);
        assert_eq!(a.sites[0].id, "k_sync1");
    }

    #[test]
    fn without_migrate_it_warns_and_rewrites_nothing() {
        let src = "__global__ void c() {}\n__global__ void k() {\n  c<<<1, 1>>>();\n  (void)cudaThreadSynchronize();\n}\n";
        let (_, a) = run(src, false);
        assert!(a.sites.is_empty());
        assert_eq!(a.diagnostics.len(), 1);
        assert_eq!(a.diagnostics[0].kind.code(), "dpopt::cdp1_sync");
    }

    #[test]
    fn a_sync_in_a_loop_is_refused() {
        let src = "__global__ void c() {}\n__global__ void k() {\n  for (int r = 0; r < 2; ++r) {\n    c<<<1, 1>>>();\n    cudaDeviceSynchronize();\n  }\n}\n";
        let (_, a) = run(src, true);
        assert!(a.sites.is_empty());
        assert_eq!(a.diagnostics[0].kind.code(), "dpopt::postwork_nested");
        assert!(a.diagnostics[0].kind.message().contains("`for` block"));
    }

    #[test]
    fn a_sync_ending_a_top_level_if_waits_after_the_if() {
        let src = "__global__ void c() {}\n__global__ void k(int *a) {\n  int v = a[threadIdx.x];\n  if (threadIdx.x == 0) {\n    int inner = 1;\n    c<<<1, 1>>>();\n    cudaDeviceSynchronize();\n  }\n  __syncthreads();\n  a[threadIdx.x] = v + 1;\n}\n";
        let (file, a) = run(src, true);
        assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
        let site = &a.sites[0];
        assert_eq!(
            &file.view[site.statement.range()],
            "cudaDeviceSynchronize();"
        );
        assert!(file.view[site.postwork.range()]
            .trim_start()
            .starts_with("__syncthreads();"));
        // `inner` is out of scope after the `if`.
        assert_eq!(site.locals, ["v"]);
        // The braceless form too.
        let src = "__global__ void c() {}\n__global__ void k() {\n  c<<<1, 1>>>();\n  if (threadIdx.x == 0) (void)cudaDeviceSynchronize();\n}\n";
        assert_eq!(run(src, true).1.sites.len(), 1);
    }

    #[test]
    fn a_sync_in_an_if_with_else_or_a_nested_block_is_refused_when_code_follows() {
        for src in [
            "__global__ void c() {}\n__global__ void k(int *a) {\n  if (threadIdx.x == 0) { c<<<1, 1>>>(); cudaDeviceSynchronize(); } else { }\n  a[0] = 1;\n}\n",
            "__global__ void c() {}\n__global__ void k(int *a) {\n  if (threadIdx.x == 0) { c<<<1, 1>>>(); cudaDeviceSynchronize(); a[0] = 1; } else { }\n}\n",
            "__global__ void c() {}\n__global__ void k(int *a) {\n  c<<<1, 1>>>();\n  if (threadIdx.x == 0) cudaDeviceSynchronize(); else c<<<1, 1>>>();\n  a[0] = 1;\n}\n",
            "__global__ void c() {}\n__global__ void k(int *a) {\n  { if (threadIdx.x == 0) { c<<<1, 1>>>(); cudaDeviceSynchronize(); } }\n  a[0] = 1;\n}\n",
        ] {
            let (_, a) = run(src, true);
            assert!(a.sites.is_empty(), "{src}");
            assert_eq!(a.diagnostics[0].kind.code(), "dpopt::postwork_nested", "{src}");
        }
    }

    #[test]
    fn a_sync_that_ends_its_thread_is_dropped() {
        for src in [
            "__global__ void c() {}\n__global__ void k() {\n  if (threadIdx.x == 0) { c<<<1, 1>>>(); cudaDeviceSynchronize(); } else { }\n}\n",
            "__global__ void c() {}\n__global__ void k() {\n  c<<<1, 1>>>();\n  if (threadIdx.x == 0) cudaDeviceSynchronize(); else c<<<1, 1>>>();\n}\n",
            "__global__ void c() {}\n__global__ void k(int n) {\n  if (n < 64) { }\n  else {\n#ifdef PROFILE\n    n = 2;\n#endif\n    c<<<1, 1>>>();\n#if CDP1\n    cudaDeviceSynchronize();\n#else\n    n = 3;\n#endif\n  }\n}\n",
        ] {
            let (file, a) = run(src, true);
            assert!(a.diagnostics.is_empty(), "{src}: {:?}", a.diagnostics);
            assert_eq!(a.sites.len(), 1, "{src}");
            assert_eq!(a.sites[0].migration, Migration::Dropped);
            assert_eq!(&file.view[a.sites[0].statement.range()], "cudaDeviceSynchronize();");
        }
    }

    #[test]
    fn a_sync_before_more_of_a_top_level_if_block_waits_after_the_if() {
        let src = "__global__ void c() {}\n__global__ void k(int **buf, int n) {\n  int v = n;\n  if (threadIdx.x == 0) {\n    c<<<1, 1>>>();\n    cudaDeviceSynchronize();\n    free(*buf);\n  }\n  buf[1][0] = v;\n}\n";
        let (file, a) = run(src, true);
        assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
        let site = &a.sites[0];
        assert_eq!(site.migration, Migration::Continuation);
        assert_eq!(site.waited_in_if, Some(src.find("if (").unwrap()));
        assert!(file.view[site.postwork.range()]
            .trim_start()
            .starts_with("free(*buf);"));
        assert_eq!(site.locals, ["v", "dpopt_waited_k_sync1"]);
        // A local of the block, declared before the sync, is out of scope
        // where the record is made.
        let src = "__global__ void c() {}\n__global__ void k(int *a) {\n  if (threadIdx.x == 0) {\n    int w = a[0];\n    c<<<1, 1>>>();\n    cudaDeviceSynchronize();\n    a[1] = w;\n  }\n}\n";
        let (_, a) = run(src, true);
        assert!(a.sites.is_empty());
        assert_eq!(a.diagnostics[0].kind.code(), "dpopt::postwork_unsupported");
        assert!(a.diagnostics[0].kind.message().contains("local `w`"));
    }

    #[test]
    fn a_barrier_after_the_start_of_the_postwork_is_refused() {
        let src = "__global__ void c() {}\n__global__ void k(int *a) {\n  c<<<1, 1>>>();\n  cudaDeviceSynchronize();\n  __syncthreads();\n  a[threadIdx.x] = 1;\n  __syncthreads();\n}\n";
        let (file, a) = run(src, true);
        assert_eq!(a.diagnostics.len(), 1);
        assert_eq!(a.diagnostics[0].kind.code(), "dpopt::postwork_barrier");
        assert_eq!(file.line_col(a.diagnostics[0].span.start()), (7, 3));
    }

    #[test]
    fn declarations_are_told_from_expression_statements() {
        let src = "struct S { __device__ S(int) {} };\n__global__ void c() {}\n__global__ void k(int *p, int n) {\n  S s(n);\n  int a = 1, *b = p, c2[2];\n  unsigned long long d{3};\n  a = n;\n  p[0] = a * n;\n  delete p;\n  c<<<1, 1>>>();\n  cudaDeviceSynchronize();\n  p[s.f + a + *b + c2[0] + d + n] = 0;\n}\n";
        let file = SourceFile::new("t.cu", src.as_bytes().to_vec());
        let program = crate::parser::parse(&file, crate::lexer::lex(&file));
        let k = program.function_named("k").unwrap();
        let open = program.functions[k].body_tokens.start;
        let locals = top_level_locals(&program, open, src.find("c<<<").unwrap());
        let names: Vec<(&str, bool)> = locals.iter().map(|l| (l.name.as_str(), l.array)).collect();
        assert_eq!(
            names,
            [
                ("s", false),
                ("a", false),
                ("b", false),
                ("c2", true),
                ("d", false)
            ]
        );
    }

    #[test]
    fn a_launch_in_a_called_function_counts() {
        let src = "__global__ void c() {}\n__device__ void spawn() { c<<<1, 1>>>(); }\n__device__ void outer() { spawn(); }\n__global__ void k(int *a) {\n  outer();\n  ::cudaDeviceSynchronize();\n  a[0] = 1;\n}\n";
        let (_, a) = run(src, true);
        assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
        assert_eq!(a.sites.len(), 1);
    }

    #[test]
    fn an_if_branch_must_hold_the_rest_of_the_kernel() {
        // Code after the branch, compiled with it: refused.
        let src = "__global__ void c() {}\n__global__ void k(int *a) {\n  c<<<1, 1>>>();\n#ifdef CDP1\n  cudaDeviceSynchronize();\n#endif\n  a[0] = 1;\n}\n";
        let (file, a) = run(src, true);
        assert!(a.sites.is_empty());
        assert_eq!(a.diagnostics[0].kind.code(), "dpopt::postwork_nested");
        assert!(a.diagnostics[0].kind.message().contains("`#if` branch"));
        assert_eq!(
            &file.view[a.diagnostics[0].notes[0].0.range()],
            "#ifdef CDP1"
        );
        // The branch holds the rest (the `#else` is not compiled with it):
        // the postwork ends at the `#else`, and the generated code keeps
        // the branch's condition.
        let src = "__global__ void c() {}\n__global__ void k(int *a) {\n  c<<<1, 1>>>();\n#if ALLOC == 0\n  cudaDeviceSynchronize();\n  a[0] = 1;\n#else\n  a[0] = 2;\n#endif\n}\n";
        let (file, a) = run(src, true);
        assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
        let site = &a.sites[0];
        assert_eq!(file.view[site.postwork.range()].trim(), "a[0] = 1;");
        assert_eq!(site.condition.as_deref(), Some("(ALLOC == 0)"));
    }

    #[test]
    fn a_sync_that_the_definitions_rule_out_is_not_a_site() {
        let src = "__global__ void c() {}\n__global__ void k(int *a) {\n  c<<<1, 1>>>();\n#if ALLOC == 0\n  cudaDeviceSynchronize();\n#endif\n  a[0] = 1;\n}\n";
        let file = SourceFile::new("t.cu", src.as_bytes().to_vec());
        let mut program = crate::parser::parse(&file, crate::lexer::lex(&file));
        program.defines = vec![("ALLOC".to_string(), "2".to_string())];
        let a = analyze(&file, &program, true, &[]);
        assert!(
            a.sites.is_empty() && a.diagnostics.is_empty(),
            "{:?}",
            a.diagnostics
        );
    }

    #[test]
    fn a_sync_without_launch_before_is_not_a_site() {
        let src = "__global__ void k() {\n  cudaDeviceSynchronize();\n}\n";
        let (_, a) = run(src, true);
        assert!(a.sites.is_empty() && a.diagnostics.is_empty());
    }
}
