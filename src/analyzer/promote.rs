//! Launch promotion (`promote(...)`, paper 003 Sec. III): a single-block
//! kernel that launches itself once per step (a producer-consumer chain).
//! The next step is launched when a step starts and waits for the step's
//! release at the launch, so the checks here are about what a step must
//! know at its start: the launch is the kernel's only launch of itself, not
//! in a loop, of one block, with a block size and shared memory known at
//! the start; each argument is either known at the start (the successor
//! gets it early) or postponed to the release. `#pragma dp acquire` marks
//! where a promoted step waits; the code before it may use only what it
//! gets early.

use super::sites::{resolve, Resolved};
use super::{cannot_see, with_calls};
use crate::constant::Constants;
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::hazard::{Hazard, Hazards};
use crate::plan::{PromoteSite, DEFAULT_PROMOTE_POOL};
use crate::pragma::{Directive, Promotion, Value};
use crate::program::{Function, PragmaId, Program};
use crate::source::SourceFile;
use crate::source::Span;
use crate::token::{is_call_at, Token, TokenKind};
use std::collections::BTreeMap;

/// The promoted site of pragma `index` (with `promote(...)`), or what makes
/// it impossible.
pub(super) fn promote_site(
    file: &SourceFile,
    program: &Program,
    index: PragmaId,
    directive: &Directive,
    per_parent: &mut BTreeMap<String, usize>,
    constants: &Constants,
    hazards: &Hazards,
) -> Result<PromoteSite, Vec<Diagnostic>> {
    let view = &file.view;
    let Resolved {
        launch: launch_index,
        parent,
        child,
        alternatives,
    } = resolve(file, program, index).map_err(|d| vec![d])?;
    let (kind, pool) = directive.promotion().expect("a `promote` directive");
    let launch = &program.launches[launch_index];
    let kernel = &program.functions[parent];
    let name = kernel.name.clone();
    let pragma_span = program.pragmas[index].span;
    let unsupported = |what: &str, span: Span, label: &str| {
        Diagnostic::new(
            DiagnosticKind::PromoteUnsupported {
                kernel: name.clone(),
                what: what.to_string(),
            },
            span,
            label,
        )
    };
    if child != parent {
        let d = Diagnostic::new(
            DiagnosticKind::PromoteNotRecursive {
                kernel: launch.simple_name().to_string(),
                parent: name.clone(),
            },
            launch.kernel_span,
            "not the kernel this launch is in",
        );
        return Err(vec![
            d.with_note(kernel.name_span, "the launch is in this function")
        ]);
    }
    let mut errors = Vec::new();
    if !alternatives.is_empty() {
        errors.push(unsupported(
            "it is defined in several `#if` branches",
            launch.kernel_span,
            "which definition?",
        ));
    }
    if kernel.template_header.is_some() {
        errors.push(unsupported(
            "it is a template (each instantiation would need a chain of its own)",
            kernel.name_span,
            "a template kernel",
        ));
    }
    if let Some(p) = kernel.params.iter().find(|p| p.declaration.contains('&')) {
        errors.push(unsupported(
            "a parameter is a reference (the steps' arguments are stored by value)",
            kernel.name_span,
            &format!("`{}`", p.declaration),
        ));
    }
    if launch.args.len() != kernel.params.len() {
        errors.push(unsupported(
            "the launch leaves parameters to their default arguments (write every argument)",
            launch.span,
            "fewer arguments than parameters",
        ));
    }
    if !one_block(view, constants, &launch.config[0]) {
        errors.push(
            Diagnostic::new(
                DiagnosticKind::PromoteGrid {
                    kernel: name.clone(),
                },
                launch.config[0],
                "the grid of the next step",
            )
            .with_note(pragma_span, "promotion requested here"),
        );
    }
    if let Some(stream) = launch.config.get(3) {
        let text: String = view[stream.range()].split_whitespace().collect();
        if !matches!(
            text.as_str(),
            "0" | "NULL" | "nullptr" | "cudaStreamFireAndForget"
        ) {
            errors.push(unsupported(
                "the launch names a stream (a promoted step runs beside its predecessor, in a fire-and-forget stream of its own)",
                *stream,
                "this stream",
            ));
        }
    }
    let body = kernel.body_tokens.start;
    if let Some((construct, at)) = loop_around(program, body, launch.first_token.0) {
        errors.push(
            Diagnostic::new(
                DiagnosticKind::PromotePlacement {
                    kernel: name.clone(),
                    construct: format!("inside {construct}"),
                },
                launch.span,
                "may run more than once per step",
            )
            .with_note(at, "this loop"),
        );
    }
    if let Some(other) = program.launches.iter().find(|l| {
        l.function == Some(parent)
            && l.span != launch.span
            && program.launched_kernels(l).contains(&parent)
    }) {
        errors.push(
            Diagnostic::new(
                DiagnosticKind::PromotePlacement {
                    kernel: name.clone(),
                    construct: "not the kernel's only launch of itself".to_string(),
                },
                launch.span,
                "promoted",
            )
            .with_note(other.span, "another launch of the kernel"),
        );
    }
    let summary = hazards.of(parent);
    for (hazard, what, label) in [
        (
            Hazard::Exit,
            "a thread ends without `return` (PTX `exit`): the step's end, which releases or ends the chain, is counted when each thread returns",
            "ends the thread",
        ),
        (
            Hazard::Grid,
            "it synchronizes its grid (a pool block runs many steps; a step's grid is one block anyway)",
            "grid synchronization",
        ),
    ] {
        if let Some(f) = summary.get(hazard) {
            errors.push(with_calls(unsupported(what, f.span, label), f));
        }
    }
    if kind == Promotion::Aggregate {
        errors.extend(pool_checks(program, kernel, &summary, &pragma_span));
    }
    let early = early_arguments(program, constants, kernel, &launch.args);
    let usable = |n: &str| usable_at_start(program, constants, kernel, &early, n);
    let invariant = |n: &str| invariant_name(program, constants, kernel, &launch.args, n);
    for (i, what) in [(1, "block size"), (2, "dynamic shared memory")] {
        let Some(range) = launch.config.get(i) else {
            continue;
        };
        let tokens = program.sig_in(*range);
        let problem = if kind == Promotion::Aggregate {
            // Every step of the pool runs with the pool's configuration.
            if is_block_dim(view, tokens) {
                None
            } else {
                first_not_known(view, tokens, &invariant, false)
            }
        } else {
            first_not_known(view, tokens, &usable, true)
        };
        if let Some(t) = problem {
            let what = if kind == Promotion::Aggregate {
                if i == 1 {
                    "block size (with `aggregate`, the same in every step: the pool's)"
                } else {
                    "dynamic shared memory (with `aggregate`, the same in every step: the pool's)"
                }
            } else {
                what
            };
            errors.push(
                Diagnostic::new(
                    DiagnosticKind::PromoteConfig {
                        kernel: name.clone(),
                        what,
                        name: t.text(view).to_string(),
                    },
                    t.range(),
                    "not known when the step starts",
                )
                .with_note(pragma_span, "promotion requested here"),
            );
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let k = per_parent.entry(kernel.symbol.clone()).or_insert(0);
    *k += 1;
    let id = format!("{}_{}", kernel.symbol, k);
    let open = kernel.body.start();
    let line_end = view[open..]
        .find(['\n', '\r'])
        .map_or(view.len(), |i| open + i);
    let rest_blank = view[open + 1..line_end].trim().is_empty();
    let next_line = file
        .line_starts()
        .iter()
        .copied()
        .find(|&s| s > open)
        .filter(|&s| rest_blank && s < kernel.body.end() && file.in_input(s));
    Ok(PromoteSite {
        id,
        summary: directive.summary(),
        pragma: index,
        launch: launch_index,
        kernel: parent,
        kind,
        pool: pool
            .cloned()
            .unwrap_or(Value::Literal(DEFAULT_PROMOTE_POOL)),
        acquire: None,
        early,
        members: crate::record::members(kernel),
        head_at: next_line.unwrap_or(open + 1),
        head_inline: next_line.is_none(),
        knobs: Vec::new(),
    })
}

/// What a pool of blocks that run one step after another cannot run: a
/// thread that returned would miss the barriers of the rest of its step (a
/// block barrier in the kernel), and a block index read in a called
/// function would read the pool block's.
fn pool_checks(
    program: &Program,
    kernel: &Function,
    summary: &crate::hazard::Summary,
    pragma: &Span,
) -> Vec<Diagnostic> {
    let view = program.view.as_str();
    let mut out = Vec::new();
    let returns = program
        .sig_in(kernel.body)
        .iter()
        .find(|t| t.kind == TokenKind::Ident && t.text(view) == "return")
        .map(Token::range);
    if let (Some(_), Some(f)) = (&returns, summary.get(Hazard::Unseen)) {
        out.push(
            with_calls(cannot_see(f, "promote(aggregate)"), f)
                .with_note(*pragma, "promotion requested here"),
        );
    }
    if let (Some(at), Some(barrier)) = (returns, summary.get(Hazard::Block)) {
        let d = Diagnostic::new(
            DiagnosticKind::PromoteUnsupported {
                kernel: kernel.name.clone(),
                what: format!(
                    "with `aggregate` a block runs one step after another, and a thread that returns early would miss the next barrier (`{}`) of the other threads",
                    barrier.construct
                ),
            },
            at,
            "returns early",
        );
        out.push(
            with_calls(d.with_note(barrier.span, "waits for the block"), barrier)
                .with_note(*pragma, "promotion requested here"),
        );
    }
    // The promoted copies call callees as written (no copies taking the
    // positions: `position_clone.rs` serves the copies of children's bodies).
    if let Some(f) = summary.first_of(&[Hazard::BlockPosition, Hazard::BlockCloned], |_| true) {
        let d = Diagnostic::new(
            DiagnosticKind::BuiltinInCallee {
                kernel: kernel.name.clone(),
                callee: f.function.clone(),
                builtin: f.construct.clone(),
                clause: "promote(aggregate)".to_string(),
                reader: f.function.clone(),
                uncopied: None,
            },
            f.span,
            "reads the pool block's position, not the step's",
        );
        out.push(with_calls(d, f).with_note(*pragma, "promotion requested here"));
    }
    out
}

/// Does the grid expression say one block (`1`, `1u`, `dim3(1)`,
/// `dim3(1, 1, 1)`, a constant that is 1)?
fn one_block(view: &str, constants: &Constants, grid: &Span) -> bool {
    let text: String = view[grid.range()].split_whitespace().collect();
    let inner = text
        .strip_prefix("dim3(")
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or(&text);
    inner.split(',').all(|part| {
        let part = part.trim_end_matches(['u', 'U', 'l', 'L']);
        part == "1" || constants.value(part) == Some(1)
    })
}

/// The loop around the launch statement starting at significant token
/// `first` (in the body opened at `open`): its keyword and span.
fn loop_around(program: &Program, open: usize, first: usize) -> Option<(String, Span)> {
    let view = program.view.as_str();
    let sig = &program.sig;
    // The launch statement and every block around it, each with the
    // statements that control it (`if (...)`, `for (...)`, `do`, ...).
    let blocks = (open + 1..first)
        .filter(|&j| sig[j].text(view) == "{" && program.brackets.encloses(j, first));
    for mut s in std::iter::once(first).chain(blocks) {
        while s > open + 1 {
            // The pragma itself (and any other directive) stands between.
            if sig[s - 1].kind == TokenKind::Directive {
                s -= 1;
                continue;
            }
            let prev = &sig[s - 1];
            match prev.text(view) {
                "do" => return Some(("a `do` loop".to_string(), prev.span())),
                ")" => {
                    let Some(kw) = program
                        .brackets
                        .partner(s - 1)
                        .and_then(|p| p.checked_sub(1))
                    else {
                        break;
                    };
                    match sig[kw].text(view) {
                        w @ ("for" | "while") => {
                            return Some((format!("a `{w}` loop"), sig[kw].span()))
                        }
                        "if" | "switch" => s = kw,
                        _ => break,
                    }
                }
                _ => break,
            }
        }
    }
    None
}

/// Per parameter: is the launch's argument for it known when a step starts?
/// An argument is when it is built from literals, constants, the builtins
/// a step has from its start (`blockIdx`, `blockDim`, `gridDim`) and
/// parameters that are themselves known and never assigned: a fixed point
/// from "every argument is".
fn early_arguments(
    program: &Program,
    constants: &Constants,
    kernel: &Function,
    args: &[Span],
) -> Vec<bool> {
    let view = program.view.as_str();
    let mut early = vec![true; kernel.params.len()];
    loop {
        let next: Vec<bool> = (0..kernel.params.len())
            .map(|i| {
                args.get(i).is_some_and(|a| {
                    let usable = |n: &str| usable_at_start(program, constants, kernel, &early, n);
                    first_not_known(view, program.sig_in(*a), &usable, true).is_none()
                })
            })
            .collect();
        if next == early {
            return early;
        }
        early = next;
    }
}

/// Can an expression evaluated at a step's start use `name`: a parameter
/// known early that the kernel never assigns (nor declares again), or a
/// constant?
fn usable_at_start(
    program: &Program,
    constants: &Constants,
    kernel: &Function,
    early: &[bool],
    name: &str,
) -> bool {
    known_name(program, constants, kernel, name, &|i| {
        early[i] && !changed_in(program, kernel, name)
    })
}

/// Is `name` the same in every step: a parameter the launch passes on
/// unchanged, or a constant?
fn invariant_name(
    program: &Program,
    constants: &Constants,
    kernel: &Function,
    args: &[Span],
    name: &str,
) -> bool {
    let view = program.view.as_str();
    known_name(program, constants, kernel, name, &|i| {
        args.get(i).is_some_and(|a| view[a.range()].trim() == name)
            && !changed_in(program, kernel, name)
    })
}

/// The index of parameter `name` of the kernel.
fn param_index(kernel: &Function, name: &str) -> Option<usize> {
    kernel
        .params
        .iter()
        .position(|p| p.name.as_deref() == Some(name))
}

/// Does a step know `name` at its start, by `param` for a parameter
/// (given its index)? Another name must be a constant of the file (a macro,
/// or a `constexpr`/`const`/`enum` integer) that the kernel does not declare
/// itself: the next step's arguments are computed outside the kernel.
fn known_name(
    program: &Program,
    constants: &Constants,
    kernel: &Function,
    name: &str,
    param: &dyn Fn(usize) -> bool,
) -> bool {
    let view = program.view.as_str();
    match param_index(kernel, name) {
        Some(i) => param(i),
        None => {
            let macro_like = name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
            let body = program.sig_in(kernel.body);
            (macro_like || constants.value(name).is_some())
                && !(0..body.len())
                    .any(|i| body[i].text(view) == name && declared_at(body, i, view))
        }
    }
}

/// Is `name` assigned, incremented, its address taken, or declared again
/// in the kernel's body?
fn changed_in(program: &Program, kernel: &Function, name: &str) -> bool {
    let view = program.view.as_str();
    let body = program.sig_in(kernel.body);
    body.iter().enumerate().any(|(i, t)| {
        t.kind == TokenKind::Ident
            && t.text(view) == name
            && ((crate::token::is_modified_at(body, i, view)
                && !dereferenced(body, i, view)
                && !element_address(body, i, view))
                || declared_at(body, i, view))
    })
}

/// Is identifier `i` dereferenced (`*p = x` assigns what `p` points to,
/// not `p`): after a unary `*`?
fn dereferenced(tokens: &[Token], i: usize, view: &str) -> bool {
    i > 0
        && tokens[i - 1].text(view) == "*"
        && (i < 2 || {
            let before = &tokens[i - 2];
            let b = before.text(view);
            !(matches!(before.kind, TokenKind::Ident | TokenKind::Number) || matches!(b, ")" | "]"))
                || matches!(b, "return" | "case")
        })
}

/// Is `&` before identifier `i` the address of an element or member
/// (`&a[k]`, `&s.f`, `&p->f`), not of the variable?
fn element_address(tokens: &[Token], i: usize, view: &str) -> bool {
    i > 0
        && tokens[i - 1].text(view) == "&"
        && matches!(
            tokens.get(i + 1).map_or("", |t| t.text(view)),
            "[" | "." | "->"
        )
}

/// Is identifier `i` declared there: after a type word (`int`, `auto`,
/// `size_t`, `float4`, ... with `*`, `&` or `const` between) and before what
/// ends a declarator? (Words dpopt cannot tell from variables, such as a
/// class name, are not read as types: `n * data[i]` is a product.)
pub(super) fn declared_at(tokens: &[Token], i: usize, view: &str) -> bool {
    const TYPES: &[&str] = &[
        "int", "unsigned", "signed", "long", "short", "char", "float", "double", "bool", "auto",
        "size_t", "dim3", "uint3", "int2", "int4", "float2", "float3", "float4",
    ];
    let next = tokens.get(i + 1).map_or("", |t| t.text(view));
    if !matches!(next, "=" | ";" | "," | "(" | "[" | "{" | ")" | ":") {
        return false;
    }
    let mut k = i;
    while k > 0 && matches!(tokens[k - 1].text(view), "*" | "&" | "const") {
        k -= 1;
    }
    k > 0 && {
        let t = tokens[k - 1].text(view);
        TYPES.contains(&t) || t.ends_with("_t")
    }
}

/// Is this configuration exactly the step's own block size (`blockDim`,
/// `blockDim.x`, `dim3(blockDim.x, blockDim.y, blockDim.z)`, ...)?
fn is_block_dim(view: &str, tokens: &[Token]) -> bool {
    let text: String = tokens.iter().map(|t| t.text(view)).collect();
    matches!(
        text.as_str(),
        "blockDim"
            | "blockDim.x"
            | "dim3(blockDim.x)"
            | "dim3(blockDim.x,blockDim.y)"
            | "dim3(blockDim.x,blockDim.y,blockDim.z)"
    )
}

/// The first token of an expression that a step does not know at its start
/// (`None`: it knows all of it). `known`: which names (parameters,
/// constants) it may use; `builtins`: whether `blockIdx`, `blockDim` and
/// `gridDim` count.
fn first_not_known<'t>(
    view: &str,
    tokens: &'t [Token],
    known: &dyn Fn(&str) -> bool,
    builtins: bool,
) -> Option<&'t Token> {
    const OPERATORS: &[&str] = &[
        "+", "-", "*", "/", "%", "(", ")", "<<", ">>", "&", "|", "^", "~", "!", "<", ">", "<=",
        ">=", "==", "!=", "&&", "||", "?", ":", ",",
    ];
    const TYPE_WORDS: &[&str] = &[
        "sizeof", "int", "unsigned", "signed", "long", "short", "char", "float", "double",
        "size_t", "bool", "const",
    ];
    tokens.iter().enumerate().find_map(|(k, t)| {
        let text = t.text(view);
        let known = match t.kind {
            TokenKind::Number | TokenKind::Char => true,
            TokenKind::Punct => {
                OPERATORS.contains(&text)
                    // `.x` of a builtin.
                    || (text == "." && builtins && k > 0 && is_builtin(tokens[k - 1].text(view)))
            }
            TokenKind::Ident => {
                let member = k > 0 && tokens[k - 1].text(view) == ".";
                if member {
                    matches!(text, "x" | "y" | "z")
                } else if is_call_at(tokens, k, view) {
                    text == "dim3"
                } else {
                    (builtins && is_builtin(text)) || TYPE_WORDS.contains(&text) || known(text)
                }
            }
            _ => false,
        };
        (!known).then_some(t)
    })
}

fn is_builtin(name: &str) -> bool {
    matches!(name, "blockIdx" | "blockDim" | "gridDim")
}

/// Attach each `#pragma dp acquire` (indices into `Program::pragmas`) to
/// the promoted site of the kernel it stands in, or report why it cannot
/// be; then check what the code before it uses.
pub(super) fn attach_markers(
    file: &SourceFile,
    program: &Program,
    promotions: &mut [PromoteSite],
    markers: &[PragmaId],
) -> Vec<Diagnostic> {
    let view = &file.view;
    let mut out = Vec::new();
    let misplaced = |reason: String, span: Span, label: &str| {
        Diagnostic::new(DiagnosticKind::AcquirePlacement { reason }, span, label)
    };
    for &m in markers {
        let pragma = &program.pragmas[m];
        let span = pragma.span;
        let Some(site) = promotions.iter_mut().find(|p| {
            let f = &program.functions[p.kernel];
            f.body.start() < span.start() && span.start() < f.body.end()
        }) else {
            out.push(misplaced(
                "is not in a kernel whose launch of itself has `#pragma dp promote(...)`"
                    .to_string(),
                span,
                "no promoted step waits here",
            ));
            continue;
        };
        let kernel = &program.functions[site.kernel];
        let launch = &program.launches[site.launch];
        if let Some(first) = site.acquire {
            out.push(
                misplaced(
                    format!("is given twice in `{}`", kernel.name),
                    span,
                    "a second marker",
                )
                .with_note(program.pragmas[first].span, "the first"),
            );
            continue;
        }
        let open = kernel.body_tokens.start;
        let at = pragma.token.0;
        let nested = (open + 1..at).find(|&j| {
            matches!(program.sig[j].text(view), "{" | "(") && program.brackets.encloses(j, at)
        });
        if let Some(j) = nested {
            out.push(
                misplaced(
                    format!(
                        "must stand at the top level of the body of `{}`, not inside a block",
                        kernel.name
                    ),
                    span,
                    "inside a block",
                )
                .with_note(program.sig[j].range(), "the block"),
            );
            continue;
        }
        if program.condition_at(span.start()) != program.condition_at(kernel.body.start()) {
            out.push(misplaced(
                "must not stand in an `#if` branch the kernel's body does not hold whole"
                    .to_string(),
                span,
                "in an `#if` branch",
            ));
            continue;
        }
        if span.start() > launch.span.start() {
            out.push(
                misplaced(
                    format!("must come before the promoted launch of `{}`", kernel.name),
                    span,
                    "after the launch",
                )
                .with_note(launch.span, "the promoted launch"),
            );
            continue;
        }
        // The independent prologue: no postponed argument, and with a pool
        // no early return (its blocks wait at the marker together).
        let prologue = program.sig_in(kernel.body.start() + 1..span.start());
        let late: Vec<(&str, usize)> = kernel
            .params
            .iter()
            .enumerate()
            .filter(|(i, _)| !site.early[*i])
            .filter_map(|(i, p)| p.name.as_deref().map(|n| (n, i)))
            .collect();
        let use_of_late = prologue.iter().find_map(|t| {
            let text = t.text(view);
            late.iter()
                .find(|(n, _)| t.kind == TokenKind::Ident && *n == text)
                .map(|&(n, i)| (t, n, i))
        });
        if let Some((t, n, i)) = use_of_late {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::AcquirePostponed {
                        kernel: kernel.name.clone(),
                        name: n.to_string(),
                    },
                    t.range(),
                    "used before the step waits",
                )
                .with_note(launch.args[i], "the previous step computes it here")
                .with_note(span, "the step waits here"),
            );
            continue;
        }
        if site.kind == Promotion::Aggregate {
            if let Some(r) = prologue
                .iter()
                .find(|t| t.kind == TokenKind::Ident && t.text(view) == "return")
            {
                out.push(
                    Diagnostic::new(
                        DiagnosticKind::PromoteUnsupported {
                            kernel: kernel.name.clone(),
                            what: "with `aggregate` the threads of a pool block wait at `#pragma dp acquire` together, and a thread that returned before it would not".to_string(),
                        },
                        r.range(),
                        "returns before the marker",
                    )
                    .with_note(span, "the step waits here"),
                );
                continue;
            }
        }
        site.acquire = Some(m);
    }
    out
}

/// A promoted kernel whose body dpopt also copies for another site (it is
/// the child of a `#pragma dp` launch): refused.
pub(super) fn check_not_a_child(
    program: &Program,
    promotions: &[PromoteSite],
    sites: &crate::plan::Sites,
) -> Vec<Diagnostic> {
    promotions
        .iter()
        .filter_map(|p| {
            let other = sites.iter().find(|s| s.children().any(|c| c == p.kernel))?;
            let kernel = &program.functions[p.kernel];
            Some(
                Diagnostic::new(
                    DiagnosticKind::PromoteUnsupported {
                        kernel: kernel.name.clone(),
                        what: "another `#pragma dp` launches it too (its body would be copied for both)".to_string(),
                    },
                    program.launches[p.launch].span,
                    "promoted",
                )
                .with_note(
                    program.launches[other.launch].span,
                    "a `#pragma dp` launch of the same kernel",
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::diagnostic::Diagnostic;
    use crate::lexer::lex;
    use crate::parser::parse;
    use crate::plan::{Plan, PromoteSite};
    use crate::pragma::Promotion;
    use crate::source::SourceFile;

    fn analysis(text: &str) -> (Plan, Vec<Diagnostic>) {
        let file = SourceFile::new("t.cu", text.as_bytes().to_vec());
        let program = parse(&file, lex(&file));
        let a = super::super::analyze(&file, &program);
        (a.plan, a.diagnostics)
    }

    fn promoted(text: &str) -> PromoteSite {
        let (plan, diagnostics) = analysis(text);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        plan.promotions.into_iter().next().expect("a promoted site")
    }

    fn codes(text: &str) -> Vec<&'static str> {
        analysis(text).1.iter().map(|d| d.kind.code()).collect()
    }

    #[test]
    fn arguments_known_at_the_start_are_early() {
        let p = promoted(
            "#define CHUNK 64\n__global__ void step(int *data, int n, int base, int offset, int *out) {\n\
             int kept = data[base];\n  *out = offset;\n  data[base] = 0;\n  int *q = &data[1];\n\
             if (base + CHUNK < n) {\n#pragma dp promote(basic)\n\
             step<<<1, blockDim.x>>>(data, n, base + CHUNK, offset + kept, out);\n  }\n}\n",
        );
        // data: written through, never assigned; out: dereferenced; base +
        // CHUNK: a parameter and a macro; offset + kept: a local.
        assert_eq!(p.early, [true, true, true, false, true]);
        assert_eq!(p.kind, Promotion::Basic);
        assert_eq!(p.id, "step_1");
        assert!(!p.head_inline);
    }

    #[test]
    fn an_assigned_parameter_makes_what_uses_it_postponed() {
        let p = promoted(
            "__global__ void step(int *a, int n, int k) {\n  n -= 1;\n  int k2 = k;\n\
             if (n > 0) {\n#pragma dp promote(aggregate, 4)\n  step<<<1, 32>>>(a, n, k + 1);\n  }\n}\n",
        );
        // n is assigned: its argument (n itself, after the assignment) is
        // postponed; k + 1 is known.
        assert_eq!(p.early, [true, false, true]);
        assert_eq!(p.kind, Promotion::Aggregate);
        assert_eq!(p.pool.to_source(), "4");
    }

    #[test]
    fn early_arguments_are_a_fixed_point() {
        // b follows a (postponed), c follows b: both postponed.
        let p = promoted(
            "__global__ void step(int a, int b, int c) {\n  int x = a * 2;\n\
             if (x < 100) {\n#pragma dp promote(basic)\n  step<<<1, 32>>>(x, a, b);\n  }\n}\n",
        );
        assert_eq!(p.early, [false, false, false]);
    }

    #[test]
    fn a_local_constant_is_not_known_outside_the_kernel() {
        let text = "__global__ void step(int *a, int n) {\n  const int STRIDE = 4;\n\
                    if (n > 0) {\n#pragma dp promote(basic)\n  step<<<1, 32>>>(a + STRIDE, n - 1);\n  }\n}\n";
        assert_eq!(promoted(text).early, [false, true]);
    }

    #[test]
    fn what_cannot_be_promoted() {
        let loop_launch = "__global__ void step(int n) {\n  while (n > 0) {\n    --n;\n\
                           #pragma dp promote(basic)\n    step<<<1, 32>>>(n);\n  }\n}\n";
        assert_eq!(codes(loop_launch), ["dpopt::promote_placement"]);
        let do_loop = "__global__ void step(int n) {\n  do\n\
                       #pragma dp promote(basic)\n    step<<<1, 32>>>(n - 1);\n  while (0);\n}\n";
        assert_eq!(codes(do_loop), ["dpopt::promote_placement"]);
        let twice = "__global__ void step(int n) {\n  if (n > 2) step<<<1, 32>>>(n - 2);\n\
                     if (n > 1) {\n#pragma dp promote(basic)\n    step<<<1, 32>>>(n - 1);\n  }\n}\n";
        assert_eq!(codes(twice), ["dpopt::promote_placement"]);
        let grid = "__global__ void step(int n) {\n  if (n > 1) {\n#pragma dp promote(basic)\n\
                    step<<<dim3(2, 1), 32>>>(n - 1);\n  }\n}\n";
        assert_eq!(codes(grid), ["dpopt::promote_grid"]);
        let one = "#define ONE 1\n__global__ void step(int n) {\n  if (n > 1) {\n#pragma dp promote(basic)\n\
                   step<<<dim3(ONE, 1, 1), 32>>>(n - 1);\n  }\n}\n";
        assert!(codes(one).is_empty());
        // With a pool, every step runs with the pool's block size.
        let varying_block =
            "__global__ void step(int n) {\n  if (n > 1) {\n#pragma dp promote(aggregate)\n\
                             step<<<1, n * 32>>>(n - 1);\n  }\n}\n";
        assert_eq!(codes(varying_block), ["dpopt::promote_config"]);
        assert!(codes(&varying_block.replace("aggregate", "basic")).is_empty());
        let pool_return = "__global__ void step(int n) {\n  if (threadIdx.x > 8) return;\n  __syncthreads();\n\
                           if (n > 1) {\n#pragma dp promote(aggregate)\n  step<<<1, 32>>>(n - 1);\n  }\n}\n";
        assert_eq!(codes(pool_return), ["dpopt::promote_unsupported"]);
        assert!(codes(&pool_return.replace("aggregate", "basic")).is_empty());
        let exit = "__global__ void step(int n) {\n  if (n == 5) asm(\"exit;\");\n\
                    if (n > 1) {\n#pragma dp promote(basic)\n  step<<<1, 32>>>(n - 1);\n  }\n}\n";
        assert_eq!(codes(exit), ["dpopt::promote_unsupported"]);
    }

    #[test]
    fn the_marker_stands_alone_at_the_top_level_before_the_launch() {
        let base = "__global__ void step(int *a, int n, int acc) {\n  int v = a[n];\nMARKER\n\
                    if (n > 0) {\n#pragma dp promote(basic)\n    step<<<1, 32>>>(a, n - 1, acc + v);\n  }\nAFTER\n}\n";
        let at = |marker: &str, after: &str| base.replace("MARKER", marker).replace("AFTER", after);
        let p = promoted(&at("#pragma dp acquire", ""));
        assert!(p.acquire.is_some());
        assert_eq!(
            codes(&at("", "#pragma dp acquire")),
            ["dpopt::acquire_placement"]
        );
        assert_eq!(
            codes(&at("{\n#pragma dp acquire\n}", "")),
            ["dpopt::acquire_placement"]
        );
        assert_eq!(
            codes(&at("#pragma dp acquire\n#pragma dp acquire", "")),
            ["dpopt::acquire_placement"]
        );
        // acc is postponed: the code before the marker may not use it.
        assert_eq!(
            codes(&at("  v += acc;\n#pragma dp acquire", "")),
            ["dpopt::acquire_postponed"]
        );
        let outside = "__global__ void k(int *a) {\n#pragma dp acquire\n  a[0] = 1;\n}\n";
        assert_eq!(codes(outside), ["dpopt::acquire_placement"]);
    }

    #[test]
    fn code_after_the_brace_puts_the_head_inline() {
        let p = promoted(
            "__global__ void step(int n) { int m = n - 1;\n  if (m > 0) {\n#pragma dp promote(basic)\n\
             step<<<1, 32>>>(m);\n  }\n}\n",
        );
        assert!(p.head_inline);
    }
}
