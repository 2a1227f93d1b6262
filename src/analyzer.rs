//! Stage 2: check every `#pragma dp` against the program and decide what to
//! generate. All problems are collected, not just the first.

use crate::constant::Constants;
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::plan::{Aggregation, ChildPlan, Plan, Site};
use crate::pragma::parse_directive;
use crate::pragma::Value;
use crate::program::{Function, Program, Resolution};
use crate::source::SourceFile;
use crate::thread_count::{thread_count, CountSource, ThreadCount};
use crate::token::TokenKind;
use std::collections::BTreeMap;
use std::ops::Range;

/// Builtins the serial version must replace.
const ALL_BUILTINS: &[&str] = &["threadIdx", "blockIdx", "blockDim", "gridDim"];
/// Builtins the coarsened kernel replaces.
const BLOCK_BUILTINS: &[&str] = &["blockIdx", "gridDim"];

pub struct Analysis {
    pub plan: Plan,
    pub diagnostics: Vec<Diagnostic>,
}

pub fn analyze(file: &SourceFile, program: &Program) -> Analysis {
    let view = &file.view;
    let mut diagnostics = Vec::new();
    let mut plan = Plan::default();
    if program.pragmas.is_empty() {
        return Analysis { plan, diagnostics };
    }
    diagnostics.extend(crate::lexer::unreadable_tokens(&program.tokens, view));
    if !diagnostics.is_empty() {
        return Analysis { plan, diagnostics };
    }
    if let Some(at) = program.unbalanced {
        // An unclosed string or character literal is the likelier cause:
        // point at it rather than at a bracket it swallowed.
        let literal = program
            .sig
            .iter()
            .find_map(|t| crate::lexer::unterminated(t, view).map(|what| (what, t.start)));
        diagnostics.push(match literal {
            Some((what, start)) => Diagnostic::new(
                DiagnosticKind::Unterminated { what },
                start..start + 1,
                "opened here, never closed on its line",
            ),
            None => Diagnostic::new(
                DiagnosticKind::UnbalancedBrackets,
                at..at + 1,
                "no partner for this bracket",
            ),
        });
        return Analysis { plan, diagnostics };
    }
    let mut per_parent: BTreeMap<String, usize> = BTreeMap::new();
    let constants = Constants::of(program, view);
    for (index, pragma) in program.pragmas.iter().enumerate() {
        let directive = match parse_directive(&pragma.logical) {
            Ok(d) => d,
            Err(errors) => {
                diagnostics.extend(errors);
                continue;
            }
        };
        match site_for(file, program, index, directive, &mut per_parent, &constants) {
            Ok((site, warnings)) => {
                diagnostics.extend(warnings);
                plan.sites.push(site);
            }
            Err(d) => diagnostics.push(d),
        }
    }
    diagnostics.extend(check_block_aggregation(program, view, &plan));
    // Group sites by child and check the child can be transformed.
    let mut by_child: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, site) in plan.sites.iter().enumerate() {
        for child in site.children() {
            by_child.entry(child).or_default().push(i);
        }
    }
    for (child, sites) in by_child {
        let serial = sites.iter().any(|&s| plan.sites[s].threshold.is_some());
        let coarse = sites.iter().any(|&s| plan.sites[s].coarsen.is_some());
        let function = &program.functions[child];
        let facts = ChildFacts::gather(program, view, function);
        for &s in &sites {
            diagnostics.extend(check_child(program, &plan.sites[s], function, &facts));
        }
        let recursive = plan
            .sites
            .iter()
            .any(|s| s.child == child && s.threshold.is_some() && s.parent == child);
        // Before the child's first declaration: in its namespace, and before
        // every parent that launches it.
        let declare_at = function.first_declared;
        plan.children.push(ChildPlan {
            child,
            serial,
            coarse,
            uses_shared: facts.shared.is_some(),
            recursive,
            sites,
            declare_at,
        });
    }
    Analysis { plan, diagnostics }
}

/// Macros that expand to `_Pragma`: a `#pragma dp` written through one is
/// invisible to dpopt (it does not expand macros), so each use that may
/// carry one gets a warning. A macro whose `_Pragma` literal starts with
/// `dp` is reported at every use (at its definition when it has none); one
/// that stringizes its argument (`_Pragma(#x)`) at each use whose argument
/// starts with `dp`.
pub fn pragma_macros(file: &SourceFile, program: &Program) -> Vec<Diagnostic> {
    let view = &file.view;
    let mut out = Vec::new();
    for t in program
        .sig
        .iter()
        .filter(|t| t.kind == TokenKind::Directive)
    {
        let logical = crate::phases::directive_text(t.text(view), t.start);
        let text = logical.text.trim_start();
        let Some(rest) = text.strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("define") else {
            continue;
        };
        let Some(op) = logical.text.find("_Pragma") else {
            continue;
        };
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        let after = logical.text[op + "_Pragma".len()..].trim_start();
        let after = after.strip_prefix('(').unwrap_or(after).trim_start();
        let literal_dp = after
            .trim_start_matches(['L', 'u', 'U', '8'])
            .strip_prefix('"')
            .is_some_and(crate::phases::is_dp_operator_text);
        let stringizes = after.starts_with('#') && !after.starts_with("##");
        if !literal_dp && !stringizes {
            continue;
        }
        let warning = |span: Range<usize>, label: &str| {
            Diagnostic::new(
                DiagnosticKind::PragmaInMacro { name: name.clone() },
                span,
                label.to_string(),
            )
            .with_note(logical.source_range(op..op + 7), "`_Pragma` here")
        };
        let mut used = false;
        for (i, u) in program.sig.iter().enumerate() {
            if u.kind != TokenKind::Ident || u.text(view) != name {
                continue;
            }
            let arg_is_dp = program.sig.get(i + 1).is_some_and(|n| n.text(view) == "(")
                && program.sig.get(i + 2).is_some_and(|a| a.text(view) == "dp");
            if literal_dp || arg_is_dp {
                used = true;
                out.push(warning(u.range(), "a `#pragma dp` through a macro"));
            }
        }
        if literal_dp && !used {
            out.push(warning(t.range(), "this macro"));
        }
    }
    out
}

/// Resolve one pragma to its launch, parent and child.
fn site_for(
    file: &SourceFile,
    program: &Program,
    index: usize,
    directive: crate::pragma::Directive,
    per_parent: &mut BTreeMap<String, usize>,
    constants: &Constants,
) -> Result<(Site, Vec<Diagnostic>), Diagnostic> {
    let view = &file.view;
    let pragma = &program.pragmas[index];
    let Some(next) = pragma.next_token else {
        return Err(Diagnostic::new(
            DiagnosticKind::NoLaunchAfterPragma {
                found: "end of file".into(),
            },
            pragma.span.clone(),
            "nothing follows this pragma",
        ));
    };
    let next_token = program.sig[next];
    if program
        .pragmas
        .binary_search_by_key(&next, |p| p.token)
        .is_ok()
    {
        return Err(Diagnostic::new(
            DiagnosticKind::DuplicatePragma,
            next_token.range(),
            "second pragma",
        )
        .with_note(pragma.span.clone(), "first pragma"));
    }
    let Some(launch_index) = program
        .launches
        .binary_search_by_key(&next, |l| l.first_token)
        .ok()
    else {
        let following = program.sig_in(next_token.start..view.len());
        let end = following[..following.len().min(6)]
            .last()
            .map_or(next_token.end, |t| t.end);
        let found: String = view[next_token.start..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        return Err(Diagnostic::new(
            DiagnosticKind::NoLaunchAfterPragma { found },
            next_token.range(),
            "expected `kernel<<<grid, block>>>(args);` here",
        )
        .with_note(pragma.span.clone(), "this pragma"));
    };
    let launch = &program.launches[launch_index];
    let Some(parent) = launch.function else {
        return Err(Diagnostic::new(
            DiagnosticKind::LaunchOutsideFunction,
            launch.span.clone(),
            "this launch",
        ));
    };
    let parent_fn = &program.functions[parent];
    if !parent_fn.space.runs_on_device() {
        return Err(Diagnostic::new(
            DiagnosticKind::HostSideLaunch {
                function: parent_fn.name.clone(),
            },
            launch.span.clone(),
            "launched from the host",
        )
        .with_note(parent_fn.name_span.clone(), "host function"));
    }
    if launch.config.len() < 2 || launch.config.len() > 4 {
        return Err(Diagnostic::new(
            DiagnosticKind::MalformedLaunch {
                reason: format!(
                    "{} configuration arguments, expected 2 to 4",
                    launch.config.len()
                ),
            },
            launch.config_span.clone(),
            "configuration",
        ));
    }
    let simple_name = launch
        .kernel
        .rsplit("::")
        .next()
        .unwrap_or(&launch.kernel)
        .trim();
    let (child, alternatives) = match program.resolve(
        &launch.kernel,
        Some(parent),
        launch.span.start,
        Some(launch.args.len()),
    ) {
        Resolution::Found(child) => (child, Vec::new()),
        Resolution::NotFound => {
            return Err(Diagnostic::new(
                DiagnosticKind::KernelNotDefined {
                    kernel: launch.kernel.split_whitespace().collect(),
                },
                launch.kernel_span.clone(),
                "no definition of this kernel in the file",
            ))
        }
        Resolution::Ambiguous(candidates) => {
            // Definitions in different branches of `#if` groups: each one
            // gets the generated code it needs, in its own branch.
            let pairwise_exclusive = candidates
                .iter()
                .enumerate()
                .all(|(i, &a)| candidates[i + 1..].iter().all(|&b| program.exclusive(a, b)));
            if !pairwise_exclusive {
                let mut d = Diagnostic::new(
                    DiagnosticKind::AmbiguousKernel {
                        kernel: launch.kernel.split_whitespace().collect(),
                        count: candidates.len(),
                        arity: launch.args.len(),
                    },
                    launch.kernel_span.clone(),
                    "which one?",
                );
                for &c in &candidates {
                    let f = &program.functions[c];
                    d = d.with_note(f.name_span.clone(), format!("`{}`", f.qualified_name()));
                }
                return Err(d);
            }
            (candidates[0], candidates[1..].to_vec())
        }
    };
    let child_fn = &program.functions[child];
    if let Some(&other) = alternatives.iter().find(|&&a| {
        let f = &program.functions[a];
        f.space.global != child_fn.space.global
            || f.template_params.iter().any(|t| t.is_pack)
            || f.template_header.is_some() != child_fn.template_header.is_some()
    }) {
        return Err(Diagnostic::new(
            DiagnosticKind::AmbiguousKernel {
                kernel: launch.kernel.split_whitespace().collect(),
                count: alternatives.len() + 1,
                arity: launch.args.len(),
            },
            launch.kernel_span.clone(),
            "its definitions differ in kind",
        )
        .with_note(child_fn.name_span.clone(), "one definition")
        .with_note(program.functions[other].name_span.clone(), "another"));
    }
    if !child_fn.space.global {
        return Err(Diagnostic::new(
            DiagnosticKind::NotAKernel {
                kernel: simple_name.to_string(),
            },
            launch.kernel_span.clone(),
            "not a kernel",
        )
        .with_note(child_fn.name_span.clone(), "defined here"));
    }
    if child_fn.template_params.iter().any(|t| t.is_pack) {
        return Err(Diagnostic::new(
            DiagnosticKind::VariadicTemplate {
                kernel: simple_name.to_string(),
            },
            launch.kernel_span.clone(),
            "variadic kernel",
        ));
    }
    let k = per_parent.entry(parent_fn.symbol.clone()).or_insert(0);
    *k += 1;
    let id = format!("{}_{}", parent_fn.symbol, k);
    let threshold = directive.threshold().cloned();
    let coarsen = directive.coarsen().cloned();
    let mut warnings = Vec::new();
    let count = threshold.as_ref().map(|_| match directive.child_threads() {
        Some(e) => ThreadCount::Explicit(e.to_string()),
        None => {
            let tc = thread_count(program, view, launch, parent);
            // Without a division in the grid size, grid x block threads is
            // the exact count (literals, macros, dim3 variables, builtins):
            // only a rounding that was not recognised is worth a word.
            let grid_text = &view[launch.config[0].clone()];
            let rounds =
                grid_text.contains('/') || grid_text.contains(">>") || grid_text.contains("ceil");
            if tc == ThreadCount::Fallback && rounds {
                warnings.push(
                    Diagnostic::new(
                        DiagnosticKind::ThreadCountFallback {
                            kernel: simple_name.to_string(),
                        },
                        launch.config[0].clone(),
                        "no ceiling division found in this grid size",
                    )
                    .with_note(pragma.span.clone(), "threshold requested here"),
                );
            }
            tc
        }
    });
    if let (Some(t), Some(count)) = (&threshold, &count) {
        let threshold_value = match t {
            Value::Literal(n) => Some(*n as i128),
            Value::Macro(m) => constants.value(m),
        };
        let parent_fn = &program.functions[parent];
        let threads =
            |r: &Range<usize>| constants.threads(&view[r.clone()], parent_fn, program, view);
        let count_value = match count {
            ThreadCount::Explicit(e) => constants.value(e),
            ThreadCount::Factors(sources) => sources.iter().try_fold(1i128, |acc, s| {
                let v = match s {
                    CountSource::InGrid(r) | CountSource::Reevaluated(r) => {
                        constants.value(&view[r.clone()])
                    }
                    CountSource::BlocksTimesBlockDim(_) => None,
                }?;
                acc.checked_mul(v)
            }),
            ThreadCount::Fallback => threads(&launch.config[0])
                .zip(launch.config.get(1).and_then(threads))
                .and_then(|(g, b)| g.checked_mul(b)),
        };
        if let (Some(th), Some(n)) = (threshold_value, count_value) {
            warnings.push(
                Diagnostic::new(
                    DiagnosticKind::ThresholdDecided {
                        kernel: simple_name.to_string(),
                        threads: n,
                        threshold: th,
                        site: id.clone(),
                    },
                    launch.config_span.clone(),
                    format!("always {n} child threads"),
                )
                .with_note(pragma.span.clone(), "threshold requested here"),
            );
        }
    }
    let aggregation = match directive.consolidation() {
        None => None,
        Some(_) if child_fn.template_header.is_some() => {
            return Err(Diagnostic::new(
                DiagnosticKind::NotImplementedYet {
                    clause: format!("consldt on the template kernel `{simple_name}`"),
                },
                launch.kernel_span.clone(),
                "template kernel",
            ))
        }
        Some(granularity) => Some(Aggregation {
            granularity,
            recursive: site_is_recursive(program, parent, child),
            group: directive.group().cloned(),
            pool_records: directive.pool_records().cloned(),
            agg_threshold: directive.agg_threshold().cloned(),
            varying: varying_arguments(
                program,
                view,
                launch,
                parent,
                child_fn,
                directive.work(),
                parent_params_uniform(program, parent, granularity),
            ),
            asserted: directive.work().is_some(),
        }),
    };
    Ok((
        Site {
            aggregation,
            id,
            directive,
            pragma: index,
            launch: launch_index,
            parent,
            child,
            alternatives,
            threshold,
            coarsen,
            count,
        },
        warnings,
    ))
}

/// The launch is part of a recursion: the child launches itself, or the
/// parent is the child.
fn site_is_recursive(program: &Program, parent: usize, child: usize) -> bool {
    parent == child
        || program
            .launches
            .iter()
            .any(|l| l.function == Some(child) && program.launched_kernels(l).contains(&child))
}

/// Block and multiblock aggregation wait at a block barrier until every other
/// thread of the block has launched or exited. That deadlocks when code
/// running in the same blocks waits for the waiting threads: a barrier, a
/// warp-synchronous primitive, or the barrier of a second block-aggregated
/// site. Check every function that can run in the parent's blocks (the
/// parent, the functions that call it, and everything they call).
fn check_block_aggregation(program: &Program, view: &str, plan: &Plan) -> Vec<Diagnostic> {
    use crate::pragma::Granularity;
    let mut diagnostics = Vec::new();
    let mut claimed: Vec<(Vec<usize>, usize)> = Vec::new();
    for (index, site) in plan.sites.iter().enumerate() {
        let Some(aggregation) = &site.aggregation else {
            continue;
        };
        let granularity = match aggregation.granularity {
            Granularity::Block => "block",
            Granularity::MultiBlock => "multiblock",
            _ => continue,
        };
        let pragma = program.pragmas[site.pragma].span.clone();
        let functions = block_functions(program, view, site.parent);
        let hazard = |function: &str, construct: &str, span: Range<usize>, note: &str| {
            Diagnostic::new(
                DiagnosticKind::BlockAggregationHazard {
                    granularity: granularity.to_string(),
                    function: function.to_string(),
                    construct: construct.to_string(),
                },
                span,
                note.to_string(),
            )
            .with_note(pragma.clone(), "block-level aggregation requested here")
        };
        let mut found = None;
        for &f in &functions {
            let function = &program.functions[f];
            let body = program.sig_in(function.body.clone());
            if let Some(t) = body.iter().find(|t| {
                t.kind == TokenKind::Ident && {
                    let s = t.text(view);
                    BARRIERS.contains(&s) || is_warp_primitive(s) || s == "asm"
                }
            }) {
                found = Some(hazard(
                    &function.name,
                    t.text(view),
                    t.range(),
                    "waits for other threads",
                ));
                break;
            }
            // A recursive child that uses shared memory gets a barrier
            // between coarsened blocks in its aggregated kernel.
            if f == site.child && site.coarsen.is_some() {
                if let Some(t) = body
                    .iter()
                    .find(|t| t.kind == TokenKind::Ident && t.text(view) == "__shared__")
                {
                    found = Some(hazard(
                        &function.name,
                        "__shared__ (coarsening then synchronizes the block between original blocks)",
                        t.range(),
                        "shared memory in a coarsened recursive child",
                    ));
                    break;
                }
            }
        }
        if found.is_none() {
            if let Some((_, other)) = claimed
                .iter()
                .find(|(fs, _)| fs.iter().any(|f| functions.contains(f)))
            {
                found = Some(
                    hazard(
                        &program.functions[site.parent].name,
                        "a second block-aggregated launch",
                        pragma.clone(),
                        "second block-level aggregation in the same blocks",
                    )
                    .with_note(
                        program.pragmas[plan.sites[*other].pragma].span.clone(),
                        "first one",
                    ),
                );
            }
        }
        match found {
            Some(d) => diagnostics.push(d),
            None => claimed.push((functions, index)),
        }
    }
    diagnostics
}

/// The functions that can run in the blocks of `parent`: the functions that
/// (transitively) call it, and everything that they and it call.
fn block_functions(program: &Program, view: &str, parent: usize) -> Vec<usize> {
    let callees = |f: usize| -> Vec<usize> {
        let body = program.sig_in(program.functions[f].body.clone());
        body.iter()
            .enumerate()
            .filter(|(i, t)| {
                t.kind == TokenKind::Ident && body.get(i + 1).is_some_and(|n| n.text(view) == "(")
            })
            .filter_map(|(_, t)| program.function_named(t.text(view)))
            .collect()
    };
    let all: Vec<Vec<usize>> = (0..program.functions.len()).map(callees).collect();
    // Callers of the parent, transitively (kernels that reach a device function).
    let mut roots = vec![parent];
    let mut i = 0;
    while i < roots.len() {
        let f = roots[i];
        for (g, calls) in all.iter().enumerate() {
            if calls.contains(&f)
                && !roots.contains(&g)
                && program.functions[g].space.runs_on_device()
            {
                roots.push(g);
            }
        }
        i += 1;
    }
    // Everything they call.
    let mut set = roots;
    let mut i = 0;
    while i < set.len() {
        for &g in &all[set[i]] {
            if !set.contains(&g) {
                set.push(g);
            }
        }
        i += 1;
    }
    set
}

/// Are the parent's parameters the same for every parent of one aggregated
/// launch? Only a kernel's are (a device function's are per thread), and a
/// kernel's only within one of its grids: a group of several blocks (multiblock,
/// grid) can span grids when the kernel is also launched from the device (an
/// aggregated launch of it runs blocks of many original grids side by side).
fn parent_params_uniform(
    program: &Program,
    parent: usize,
    granularity: crate::pragma::Granularity,
) -> bool {
    use crate::pragma::Granularity;
    program.functions[parent].space.global
        && (matches!(granularity, Granularity::Warp | Granularity::Block)
            || !program.launches.iter().any(|l| {
                l.function
                    .is_some_and(|f| program.functions[f].space.runs_on_device())
                    && program.launched_kernels(l).contains(&parent)
            }))
}

/// Which launch arguments vary between the parents of one aggregated launch.
/// With `work(...)` the listed ones (by child parameter name or argument
/// text); otherwise an argument is invariant when it is built only from
/// literals, ALL_CAPS macros, operators and parameters of the parent that the
/// parent never assigns.
fn varying_arguments(
    program: &Program,
    view: &str,
    launch: &crate::program::Launch,
    parent: usize,
    child: &Function,
    work: Option<&[String]>,
    params_uniform: bool,
) -> Vec<bool> {
    let parent_fn = &program.functions[parent];
    launch
        .args
        .iter()
        .enumerate()
        .map(|(i, arg)| {
            let text = view[arg.clone()].trim();
            if let Some(work) = work {
                let param = child.params.get(i).and_then(|p| p.name.as_deref());
                return work.iter().any(|w| Some(w.as_str()) == param || w == text);
            }
            let tokens = program.sig_in(arg.clone());
            !tokens.iter().enumerate().all(|(k, t)| match t.kind {
                TokenKind::Number | TokenKind::Char | TokenKind::Str => true,
                TokenKind::Punct => matches!(
                    t.text(view),
                    "+" | "-"
                        | "*"
                        | "/"
                        | "%"
                        | "("
                        | ")"
                        | "<<"
                        | ">>"
                        | "&"
                        | "|"
                        | "^"
                        | "~"
                        | "!"
                ),
                TokenKind::Ident => {
                    let s = t.text(view);
                    let called = tokens.get(k + 1).is_some_and(|n| n.text(view) == "(");
                    let macro_like = s
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
                    let param = parent_fn
                        .params
                        .iter()
                        .any(|p| p.name.as_deref() == Some(s));
                    let type_word = matches!(
                        s,
                        "sizeof" | "int" | "unsigned" | "float" | "double" | "long" | "size_t"
                    );
                    !called
                        && (macro_like
                            || type_word
                            || (param
                                && params_uniform
                                && !assigned_in(program, view, parent_fn, s)))
                }
                _ => false,
            })
        })
        .collect()
}

/// Is `name` assigned, incremented or has its address taken in `function`?
fn assigned_in(program: &Program, view: &str, function: &Function, name: &str) -> bool {
    let body = program.sig_in(function.body.clone());
    body.iter().enumerate().any(|(i, t)| {
        if t.kind != TokenKind::Ident || t.text(view) != name {
            return false;
        }
        crate::token::is_modified_at(body, i, view)
    })
}

/// What the child's body does that matters for the transformations.
#[derive(Debug, Default)]
struct ChildFacts {
    /// First `__syncthreads`-like barrier.
    barrier: Option<(Range<usize>, String)>,
    /// First warp-level primitive or cooperative-groups use.
    warp: Option<(Range<usize>, String)>,
    /// First `__shared__`.
    shared: Option<Range<usize>>,
    /// First `return`.
    returns: Option<Range<usize>>,
    /// (callee name, builtin, span of the builtin in the callee) for
    /// functions called from the child that read builtins themselves.
    builtin_callees: Vec<(String, String, Range<usize>, Range<usize>)>,
}

const BARRIERS: &[&str] = &[
    "__syncthreads",
    "__syncthreads_count",
    "__syncthreads_and",
    "__syncthreads_or",
    "__barrier_sync",
];

fn is_warp_primitive(name: &str) -> bool {
    name.starts_with("__shfl")
        || name.starts_with("__ballot")
        || name.starts_with("__any")
        || name.starts_with("__all")
        || name.starts_with("__match")
        || name.starts_with("__reduce_")
        || name == "__syncwarp"
        || name == "__activemask"
        || name == "cooperative_groups"
        || name == "this_thread_block"
        || name == "tiled_partition"
        || name == "this_grid"
        || name == "coalesced_threads"
}

impl ChildFacts {
    fn gather(program: &Program, view: &str, child: &Function) -> Self {
        let mut facts = ChildFacts::default();
        let body = program.sig_in(child.body.clone());
        for (i, t) in body.iter().enumerate() {
            if t.kind != TokenKind::Ident {
                continue;
            }
            let s = t.text(view);
            if BARRIERS.contains(&s) && facts.barrier.is_none() {
                facts.barrier = Some((t.range(), s.to_string()));
            } else if is_warp_primitive(s) && facts.warp.is_none() {
                facts.warp = Some((t.range(), s.to_string()));
            } else if s == "__shared__" && facts.shared.is_none() {
                facts.shared = Some(t.range());
            } else if s == "return" && facts.returns.is_none() {
                facts.returns = Some(t.range());
            } else if body.get(i + 1).is_some_and(|n| n.text(view) == "(") {
                let mut seen = vec![child.name.clone()];
                if let Some((builtin, span)) = builtin_in_callee(program, view, s, &mut seen) {
                    if !facts.builtin_callees.iter().any(|c| c.0 == s) {
                        facts
                            .builtin_callees
                            .push((s.to_string(), builtin, t.range(), span));
                    }
                }
            }
        }
        facts
    }
}

/// Does function `name` (defined in this file), or a function it calls, read
/// a thread/block builtin? Returns the builtin and where.
fn builtin_in_callee(
    program: &Program,
    view: &str,
    name: &str,
    seen: &mut Vec<String>,
) -> Option<(String, Range<usize>)> {
    if seen.iter().any(|s| s == name) {
        return None;
    }
    seen.push(name.to_string());
    let f = &program.functions[program.function_named(name)?];
    if !f.space.runs_on_device() {
        return None;
    }
    let body = program.sig_in(f.body.clone());
    for (i, t) in body.iter().enumerate() {
        if t.kind != TokenKind::Ident {
            continue;
        }
        let s = t.text(view);
        if ALL_BUILTINS.contains(&s) {
            return Some((s.to_string(), t.range()));
        }
        if body.get(i + 1).is_some_and(|n| n.text(view) == "(") {
            if let Some(found) = builtin_in_callee(program, view, s, seen) {
                return Some(found);
            }
        }
    }
    None
}

fn check_child(
    program: &Program,
    site: &Site,
    child: &Function,
    facts: &ChildFacts,
) -> Vec<Diagnostic> {
    let pragma_span = program.pragmas[site.pragma].span.clone();
    let mut out = Vec::new();
    // threads(N)/blocks(N): one aggregated block runs several original blocks
    // or threads in turn, and threads skip the parts that are not theirs:
    // the child may not wait for the other threads of its block, and with
    // threads(N) its lanes are not the original warp's.
    let fixed = [
        ("blocks", site.directive.agg_blocks().is_some(), false),
        ("threads", site.directive.agg_threads().is_some(), true),
    ];
    for (clause, given, lanes_matter) in fixed {
        if !given {
            continue;
        }
        let offending = [
            facts.barrier.clone(),
            if lanes_matter {
                facts.warp.clone()
            } else {
                None
            },
        ];
        if let Some((span, construct)) =
            offending.into_iter().flatten().min_by_key(|(r, _)| r.start)
        {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::FixedConfigurationHazard {
                        clause: clause.to_string(),
                        kernel: child.name.clone(),
                        construct,
                    },
                    span,
                    "needs the original block's threads together",
                )
                .with_note(pragma_span.clone(), format!("`{clause}` requested here")),
            );
        }
    }
    if site.threshold.is_some() {
        let offending = [
            facts.barrier.clone(),
            facts.warp.clone(),
            facts.shared.clone().map(|r| (r, "__shared__".to_string())),
        ];
        if let Some((span, construct)) =
            offending.into_iter().flatten().min_by_key(|(r, _)| r.start)
        {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::NotSerializable {
                        kernel: child.name.clone(),
                        construct,
                    },
                    span,
                    "cannot run serially in one parent thread",
                )
                .with_note(pragma_span.clone(), "threshold requested here"),
            );
        }
    }
    for (callee, builtin, call_span, builtin_span) in &facts.builtin_callees {
        let clause = if site.threshold.is_some() {
            "threshold"
        } else if site.coarsen.is_some() && BLOCK_BUILTINS.contains(&builtin.as_str()) {
            "coarsen"
        } else {
            continue;
        };
        out.push(
            Diagnostic::new(
                DiagnosticKind::BuiltinInCallee {
                    kernel: child.name.clone(),
                    callee: callee.clone(),
                    builtin: builtin.clone(),
                    clause: clause.to_string(),
                },
                call_span.clone(),
                "this call",
            )
            .with_note(builtin_span.clone(), "reads the builtin here")
            .with_note(pragma_span.clone(), "requested here"),
        );
    }
    if site.coarsen.is_some() {
        if let (Some(ret), Some((barrier, _))) = (&facts.returns, &facts.barrier) {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::ReturnWithBarrier {
                        kernel: child.name.clone(),
                    },
                    ret.clone(),
                    "early return",
                )
                .with_note(barrier.clone(), "barrier")
                .with_note(pragma_span, "coarsen requested here"),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;
    use crate::parser::parse;

    fn analysis(text: &str) -> (Plan, Vec<Diagnostic>) {
        let file = SourceFile::new("t.cu", text.as_bytes().to_vec());
        let program = parse(&file, lex(&file));
        let a = analyze(&file, &program);
        (a.plan, a.diagnostics)
    }

    const CHILD: &str = "__global__ void child(const int *row, int start, int n, int k, int *out) { out[start] = n + k; }\n";

    #[test]
    fn invariant_arguments_are_unassigned_parent_parameters_and_constants() {
        let text = format!(
            "{CHILD}__global__ void parent(const int *row, int k, int *out, int m) {{\n  int v = threadIdx.x;\n  m += 1;\n\
             #pragma dp consldt(warp)\n  child<<<(m + 31) / 32, 32>>>(row, row[v], m, K * 2 + k, out);\n}}\n"
        );
        let (plan, diagnostics) = analysis(&text);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let a = plan.sites[0].aggregation.as_ref().unwrap();
        // row: parameter; row[v]: indexing; m: assigned in the parent;
        // K * 2 + k: macro, literal, parameter; out: parameter.
        assert_eq!(a.varying, [false, true, true, false, false]);
        assert!(!a.asserted);
    }

    #[test]
    fn parameters_of_a_device_function_vary() {
        let text = format!(
            "{CHILD}__device__ void launch(const int *row, int start, int m, int *out) {{\n\
             #pragma dp consldt(warp)\n  child<<<(m + 31) / 32, 32>>>(row, start, m, 1, out);\n}}\n"
        );
        let (plan, diagnostics) = analysis(&text);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let a = plan.sites[0].aggregation.as_ref().unwrap();
        assert_eq!(a.varying, [true, true, true, false, true]);
    }

    #[test]
    fn kernel_parameters_vary_across_grids_when_the_kernel_is_launched_from_the_device() {
        // `parent` launches itself: a grid-wide group spans many of its grids.
        let text = format!(
            "{CHILD}__global__ void parent(const int *row, int m, int *out) {{\n\
             #pragma dp consldt(grid)\n  child<<<(m + 31) / 32, 32>>>(row, 0, m, 1, out);\n\
             if (m > 1) parent<<<1, 1>>>(row, m / 2, out);\n}}\n"
        );
        let (plan, diagnostics) = analysis(&text);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let a = plan.sites[0].aggregation.as_ref().unwrap();
        assert_eq!(a.varying, [true, false, true, false, true]);
        // Within one warp they are the same.
        let warp = text.replace("consldt(grid)", "consldt(warp)");
        let (plan, _) = analysis(&warp);
        let a = plan.sites[0].aggregation.as_ref().unwrap();
        assert_eq!(a.varying, [false, false, false, false, false]);
    }

    #[test]
    fn work_names_the_varying_arguments() {
        let text = format!(
            "{CHILD}__global__ void parent(const int *row, int *out) {{\n  int v = threadIdx.x;\n\
             #pragma dp consldt(warp) work(start, n)\n  child<<<(v + 31) / 32, 32>>>(row, row[v], v, 1, out);\n}}\n"
        );
        let (plan, _) = analysis(&text);
        let a = plan.sites[0].aggregation.as_ref().unwrap();
        assert_eq!(a.varying, [false, true, true, false, false]);
        assert!(a.asserted);
    }

    #[test]
    fn template_children_are_not_aggregated_yet() {
        let text = "template <typename T> __global__ void child(T *a) { a[0] = 1; }\n\
                    __global__ void parent(float *a) {\n#pragma dp consldt(warp)\n  child<float><<<1, 32>>>(a);\n}\n";
        let (_, diagnostics) = analysis(text);
        assert!(matches!(
            diagnostics[0].kind,
            DiagnosticKind::NotImplementedYet { .. }
        ));
    }
}
