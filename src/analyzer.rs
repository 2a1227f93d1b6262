//! Stage 2: check every `#pragma dp` against the program and decide what to
//! generate. All problems are collected, not just the first.

use crate::constant::Constants;
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::hazard::{Finding, Hazard, Hazards, Summary};
use crate::plan::{Aggregation, ChildPlan, Plan, Site};
use crate::pragma::parse_directive;
use crate::pragma::{Granularity, Value};
use crate::program::{Function, Program, Resolution};
use crate::source::SourceFile;
use crate::thread_count::{thread_count, CountSource, ThreadCount};
use crate::token::TokenKind;
use std::collections::BTreeMap;
use std::ops::Range;

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
    // Only the input's tokens: the other files are read, never rewritten.
    let input_tokens = program.tokens.partition_point(|t| file.in_input(t.start));
    diagnostics.extend(crate::lexer::unreadable_tokens(
        &program.tokens[..input_tokens],
        view,
    ));
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
        diagnostics.extend(unseen_names(program, view, &directive));
        match site_for(file, program, index, directive, &mut per_parent, &constants) {
            Ok((site, warnings)) => {
                diagnostics.extend(warnings);
                plan.sites.push(site);
            }
            Err(d) => diagnostics.push(d),
        }
    }
    let hazards = Hazards::new(program, view);
    diagnostics.extend(check_block_aggregation(program, view, &plan, &hazards));
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
        let facts = ChildFacts::gather(program, view, &hazards, child);
        for &s in &sites {
            diagnostics.extend(check_child(program, &plan.sites[s], function, &facts));
        }
        let recursive = plan
            .sites
            .iter()
            .any(|s| s.child == child && s.threshold.is_some() && s.parent == child);
        // Before the child's first declaration: in its namespace, and before
        // every parent that launches it. A child defined in another file
        // gets everything at one place of the input (`elsewhere`).
        let (declare_at, elsewhere) = if file.in_input(function.start) {
            (function.first_declared, None)
        } else {
            let at = place_for_outside_child(file, program, child, &sites, &plan);
            (at, Some(at))
        };
        let names: Vec<Option<String>> = function.params.iter().map(|p| p.name.clone()).collect();
        plan.children.push(ChildPlan {
            child,
            serial,
            coarse,
            uses_shared: facts.summary.has(Hazard::Shared),
            recursive,
            serial_bound: crate::guard::bounding_parameter(&view[function.body.clone()], &names),
            defers: plan.child_defers(function, serial, &sites),
            members: crate::record::members(function),
            sites,
            declare_at,
            elsewhere,
        });
    }
    plan.bounded = kernels_to_bound(program, view, &plan);
    plan.bounded
        .retain(|&k| file.in_input(program.functions[k].start));
    plan.settle(program);
    Analysis { plan, diagnostics }
}

/// Where the code generated for a child defined in another file goes: a
/// line start of the input after which the child is declared: after the
/// `#include` that brings in its header, or after the input's (or an
/// included header's) first declaration of it, whichever comes first;
/// before the first parent when there is none.
fn place_for_outside_child(
    file: &SourceFile,
    program: &Program,
    child: usize,
    sites: &[usize],
    plan: &Plan,
) -> usize {
    let function = &program.functions[child];
    let mut places = Vec::new();
    if let Some(anchor) = file.part_at(function.start).and_then(|p| p.anchor) {
        places.push(anchor);
    }
    let first = function.first_declared;
    if file.in_input(first) {
        // The end of the declaration: its `;` (or the end of its line).
        let from = program.sig_index_at(first);
        let end = program.sig[from..]
            .iter()
            .take_while(|t| file.in_input(t.start))
            .find(|t| t.text(&file.view) == ";")
            .map_or(file.line_start(first), |t| t.end);
        places.push(end);
    } else if let Some(anchor) = file.part_at(first).and_then(|p| p.anchor) {
        places.push(anchor);
    }
    let Some(&at) = places.iter().min() else {
        let parent = sites
            .iter()
            .map(|&s| program.functions[plan.sites[s].parent].start)
            .min()
            .unwrap_or(0);
        return file.line_start(parent);
    };
    // The first line start after it (not inside a comment or directive).
    let starts = file.line_starts();
    for &line_start in &starts[starts.partition_point(|&s| s <= at)..] {
        if !file.in_input(line_start) {
            break;
        }
        let newline = program.tokens.partition_point(|t| t.end < line_start);
        if program
            .tokens
            .get(newline)
            .is_some_and(|t| t.kind == TokenKind::Newline && t.end == line_start)
        {
            return line_start;
        }
    }
    file.input_len()
}

/// Names in clause values (`threshold(TH)`) that nothing in the file
/// declares or defines: they compile only if a header or `-D` supplies them,
/// which dpopt cannot see, so it says so.
fn unseen_names(
    program: &Program,
    view: &str,
    directive: &crate::pragma::Directive,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for clause in &directive.clauses {
        for value in clause.kind.values() {
            let Value::Macro(name) = value else {
                continue;
            };
            if name == "warpSize"
                || name.ends_with("_MAX")
                || declared_in_file(program, view, name.as_str())
            {
                continue;
            }
            let text = &view[clause.span.clone()];
            let span = word_at(text, name.as_str())
                .map(|at| clause.span.start + at..clause.span.start + at + name.len())
                .unwrap_or_else(|| clause.span.clone());
            out.push(Diagnostic::new(
                DiagnosticKind::UnseenName {
                    name: name.clone(),
                    clause: clause.kind.name().to_string(),
                },
                span,
                "not declared in this file",
            ));
        }
    }
    out
}

/// Does any code token or any directive other than a `#pragma dp` name `name`?
fn declared_in_file(program: &Program, view: &str, name: &str) -> bool {
    program.defines.iter().any(|(n, _)| n == name)
        || program.sig.iter().enumerate().any(|(i, t)| match t.kind {
            TokenKind::Ident => t.text(view) == name,
            TokenKind::Directive => {
                !program.pragmas.iter().any(|p| p.token == i) && {
                    let text = t.text(view);
                    word_at(text, name).is_some()
                        || text.contains('\\')
                            && word_at(&crate::phases::without_splices(text), name).is_some()
                }
            }
            _ => false,
        })
}

/// Offset of `word` in `text` as a whole identifier.
fn word_at(text: &str, word: &str) -> Option<usize> {
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let b = text.as_bytes();
    text.match_indices(word).map(|(at, _)| at).find(|&at| {
        (at == 0 || !is_ident(b[at - 1])) && !b.get(at + word.len()).is_some_and(|&c| is_ident(c))
    })
}

/// The kernels that run a rewritten launch: the sites' parents when they
/// are kernels, and the kernels that call (through any chain of calls) a
/// device function that is one; those that declare `__launch_bounds__` or
/// `__maxnreg__` themselves keep theirs.
fn kernels_to_bound(program: &Program, view: &str, plan: &Plan) -> Vec<usize> {
    let mut reach: Vec<usize> = plan.sites.iter().map(|s| s.parent).collect();
    let mut i = 0;
    while i < reach.len() {
        let target = &program.functions[reach[i]];
        if !target.space.global {
            for (k, f) in program.functions.iter().enumerate() {
                if reach.contains(&k) || !f.space.runs_on_device() {
                    continue;
                }
                let body = program.sig_in(f.body.clone());
                let calls = body.windows(2).any(|w| {
                    w[0].kind == TokenKind::Ident
                        && w[0].text(view) == target.name
                        && w[1].text(view) == "("
                });
                if calls {
                    reach.push(k);
                }
            }
        }
        i += 1;
    }
    let mut kernels: Vec<usize> = reach
        .into_iter()
        .filter(|&k| {
            let f = &program.functions[k];
            let head = &view[f.start..f.body.start];
            // `void ns::k(...) {...}`: a qualified name cannot be declared
            // again outside its namespace.
            let qualified = view[f.start..f.name_span.start].trim_end().ends_with("::");
            // A literal left open in the head ends at its line: repeated on
            // one line it would swallow what follows (and could turn text
            // after it into a directive).
            let unterminated = program
                .sig_in(f.start..f.name_span.start)
                .iter()
                .any(|t| crate::lexer::unterminated(t, view).is_some());
            f.space.global
                && !qualified
                && !unterminated
                && f.launch_bounds.is_none()
                && !head.contains("__launch_bounds__")
                && !head.contains("__maxnreg__")
        })
        .collect();
    kernels.sort_unstable();
    kernels.dedup();
    kernels
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
        .filter(|t| t.kind == TokenKind::Directive && file.in_input(t.start))
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
                DiagnosticKind::PragmaInMacro {
                    name: name.clone(),
                    in_arguments: false,
                },
                span,
                label.to_string(),
            )
            .with_note(logical.source_range(op..op + 7), "`_Pragma` here")
        };
        let mut used = false;
        for (i, u) in program.sig.iter().enumerate() {
            // A use may be split by a line splice (`NA\` newline `ME`).
            if u.kind != TokenKind::Ident
                || !file.in_input(u.start)
                || crate::phases::without_splices(u.text(view)) != name
            {
                continue;
            }
            let arg_is_dp = program.sig.get(i + 1).is_some_and(|n| n.text(view) == "(")
                && program
                    .sig
                    .get(i + 2)
                    .is_some_and(|a| crate::phases::without_splices(a.text(view)) == "dp");
            if literal_dp || arg_is_dp {
                used = true;
                out.push(warning(u.range(), "a `#pragma dp` through a macro"));
            }
        }
        if literal_dp && !used {
            out.push(warning(t.range(), "this macro"));
        }
    }
    for (span, name) in &program.pragmas_in_macro_arguments {
        out.push(Diagnostic::new(
            DiagnosticKind::PragmaInMacro {
                name: name.clone(),
                in_arguments: true,
            },
            span.clone(),
            "in the macro's arguments",
        ));
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
                    "{} configuration argument(s), expected 2 to 4",
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
    let resolution = match program.resolve(
        &launch.kernel,
        Some(parent),
        launch.span.start,
        Some(launch.args.len()),
    ) {
        // A definition in the unit itself (the input and its headers) wins
        // over one in a `--child-source` file (another translation unit).
        Resolution::Ambiguous(candidates) => {
            let in_unit = |&c: &usize| {
                file.part_at(program.functions[c].start)
                    .map_or(true, |p| p.origin == crate::source::Origin::Header)
            };
            let own: Vec<usize> = candidates.iter().copied().filter(in_unit).collect();
            match own.as_slice() {
                [] => Resolution::Ambiguous(candidates),
                [one] => Resolution::Found(*one),
                _ => Resolution::Ambiguous(own),
            }
        }
        other => other,
    };
    let (child, alternatives) = match resolution {
        Resolution::Found(child) => (child, Vec::new()),
        Resolution::NotFound => {
            return Err(Diagnostic::new(
                DiagnosticKind::KernelNotDefined {
                    kernel: launch.kernel.split_whitespace().collect(),
                    searched: file.searched.clone(),
                },
                launch.kernel_span.clone(),
                "no definition of this kernel found",
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
    if let Some(&other) = alternatives
        .iter()
        .find(|&&a| !file.in_input(program.functions[a].start) || !file.in_input(child_fn.start))
    {
        // Code for a child of another file goes to one place of the input,
        // outside the `#if` branches it is defined in.
        return Err(Diagnostic::new(
            DiagnosticKind::AmbiguousKernel {
                kernel: launch.kernel.split_whitespace().collect(),
                count: alternatives.len() + 1,
                arity: launch.args.len(),
            },
            launch.kernel_span.clone(),
            "defined in `#if` branches of another file",
        )
        .with_note(child_fn.name_span.clone(), "one definition")
        .with_note(program.functions[other].name_span.clone(), "another"));
    }
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
    let aggregation = directive.consolidation().map(|granularity| Aggregation {
        agg_threshold: directive.agg_threshold().cloned(),
        blocks: directive.agg_blocks().cloned(),
        threads: directive.agg_threads().cloned(),
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
        ..Aggregation::defaulted(
            granularity,
            site_is_recursive(program, parent, child),
            directive.group().cloned(),
            directive.pool_records().cloned(),
        )
    });
    Ok((
        Site {
            aggregation,
            id,
            summary: directive.summary(),
            pragma: index,
            launch: launch_index,
            parent,
            child,
            alternatives,
            threshold,
            coarsen,
            count,
            knobs: Vec::new(),
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
/// warp-synchronous primitive or grid synchronization; and dpopt must see
/// all that code. (Every block-aggregated site of a kernel waits at the same
/// named barrier, so several sites in one block take part in the same
/// barrier instances and need nothing more: docs/AGGREGATION.md.) Check
/// every function that can run in the parent's blocks (the parent, the
/// functions that call it, and everything they call) with the hazard model.
fn check_block_aggregation(
    program: &Program,
    view: &str,
    plan: &Plan,
    hazards: &Hazards,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for site in &plan.sites {
        let Some(aggregation) = &site.aggregation else {
            continue;
        };
        let granularity = match aggregation.granularity {
            Granularity::Block => "block",
            Granularity::MultiBlock => "multiblock",
            _ => continue,
        };
        let pragma = program.pragmas[site.pragma].span.clone();
        let (roots, functions) = block_functions(program, view, site.parent);
        let hazard = |finding: &Finding, construct: &str, note: &str| {
            let d = if finding.hazard == Hazard::Unseen {
                cannot_see(finding, &format!("consldt({granularity})"))
            } else {
                Diagnostic::new(
                    DiagnosticKind::BlockAggregationHazard {
                        granularity: granularity.to_string(),
                        function: finding.function.clone(),
                        construct: construct.to_string(),
                    },
                    finding.span.clone(),
                    note.to_string(),
                )
            };
            with_calls(d, finding)
                .with_note(pragma.clone(), "block-level aggregation requested here")
        };
        let waits = [Hazard::Warp, Hazard::Block, Hazard::Grid, Hazard::Unseen];
        let mut found = roots.iter().find_map(|&f| {
            hazards
                .of(f)
                .first_of(&waits, |_| true)
                .map(|finding| hazard(finding, &finding.construct, "waits for other threads"))
        });
        // A recursive child that uses shared memory gets a barrier between
        // coarsened blocks in its aggregated kernel.
        if found.is_none() && site.coarsen.is_some() && functions.contains(&site.child) {
            if let Some(finding) = hazards.of(site.child).get(Hazard::Shared) {
                found = Some(hazard(
                    finding,
                    &format!(
                        "{} (coarsening then synchronizes the block between original blocks)",
                        finding.construct
                    ),
                    "shared memory in a coarsened recursive child",
                ));
            }
        }
        diagnostics.extend(found);
    }
    diagnostics
}

/// The functions that can run in the blocks of `parent`: the roots (the
/// parent and the device functions that, transitively, call it) and
/// everything (roots included) that can run there (what they call).
fn block_functions(program: &Program, view: &str, parent: usize) -> (Vec<usize>, Vec<usize>) {
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
    let mut set = roots.clone();
    let mut i = 0;
    while i < set.len() {
        for &g in &all[set[i]] {
            if !set.contains(&g) {
                set.push(g);
            }
        }
        i += 1;
    }
    (roots, set)
}

/// `d` with one note per call leading to the construct of `finding`.
fn with_calls(d: Diagnostic, finding: &Finding) -> Diagnostic {
    finding
        .call_notes()
        .into_iter()
        .fold(d, |d, (span, label)| d.with_note(span, label))
}

/// "`clause` cannot be applied: dpopt cannot see ...", at the unseen call or
/// assembly (the calls leading there are left to the caller).
fn cannot_see(finding: &Finding, clause: &str) -> Diagnostic {
    let why = finding.unseen.unwrap_or(crate::hazard::Unseen::Asm);
    let label = match why {
        crate::hazard::Unseen::Declared => "dpopt cannot see this function's body",
        crate::hazard::Unseen::Pointer => "dpopt cannot see which function this calls",
        crate::hazard::Unseen::Asm => "dpopt cannot read this assembly",
    };
    let d = Diagnostic::new(
        DiagnosticKind::CannotSee {
            clause: clause.to_string(),
            function: finding.function.clone(),
            what: finding.construct.clone(),
            why,
        },
        finding.span.clone(),
        label,
    );
    match &finding.declared {
        Some(declared) => d.with_note(declared.clone(), "declared here, defined in another file"),
        None => d,
    }
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

/// What the child does that matters for the transformations.
#[derive(Debug)]
struct ChildFacts {
    /// The hazard model of the child and everything it calls.
    summary: Summary,
    /// First `return` of the child's own body (or `asm("exit;")`, in it or in
    /// a function it calls).
    returns: Option<Range<usize>>,
}

impl ChildFacts {
    fn gather(program: &Program, view: &str, hazards: &Hazards, child: usize) -> Self {
        let summary = hazards.of(child);
        let body = program.sig_in(program.functions[child].body.clone());
        let returns = body
            .iter()
            .find(|t| t.kind == TokenKind::Ident && t.text(view) == "return")
            .map(|t| t.range());
        // `asm("exit;")` ends the thread too; in a callee, at the call.
        let exit = summary
            .get(Hazard::Exit)
            .map(|f| f.calls.first().map_or(f.span.clone(), |c| c.span.clone()));
        let returns = returns.into_iter().chain(exit).min_by_key(|r| r.start);
        ChildFacts { summary, returns }
    }
}

fn check_child(
    program: &Program,
    site: &Site,
    child: &Function,
    facts: &ChildFacts,
) -> Vec<Diagnostic> {
    let pragma_span = program.pragmas[site.pragma].span.clone();
    let summary = &facts.summary;
    let kernel = child.name.clone();
    let mut out = Vec::new();
    // threads(N)/blocks(N): one aggregated block runs several original blocks
    // or threads in turn, and threads skip the parts that are not theirs:
    // the child may not wait for the other threads of its block, and with
    // threads(N) its lanes are not the original warp's.
    let aggregation = site.aggregation.as_ref();
    let fixed = [
        (
            "blocks",
            aggregation.is_some_and(|a| a.blocks.is_some()),
            false,
        ),
        (
            "threads",
            aggregation.is_some_and(|a| a.threads.is_some()),
            true,
        ),
    ];
    for (clause, given, lanes_matter) in fixed {
        if !given {
            continue;
        }
        let mut waits = vec![Hazard::Block, Hazard::Grid, Hazard::Unseen];
        if lanes_matter {
            waits.push(Hazard::Warp);
        }
        if let Some(finding) = summary.first_of(&waits, |_| true) {
            let d = if finding.hazard == Hazard::Unseen {
                cannot_see(finding, clause)
            } else {
                Diagnostic::new(
                    DiagnosticKind::FixedConfigurationHazard {
                        clause: clause.to_string(),
                        kernel: kernel.clone(),
                        construct: finding.construct.clone(),
                    },
                    finding.span.clone(),
                    "needs the original block's threads together",
                )
            };
            out.push(
                with_calls(d, finding)
                    .with_note(pragma_span.clone(), format!("`{clause}` requested here")),
            );
        }
    }
    let position = |h: Hazard| matches!(h, Hazard::ThreadPosition | Hazard::BlockPosition);
    if site.threshold.is_some() {
        // Serial in one parent thread: nothing may wait for, or exchange
        // values with, other threads, share memory with them, or read a
        // position the serial version does not replace (a callee's builtins
        // are reported below, as builtins in callees).
        let serial = [
            Hazard::Warp,
            Hazard::Block,
            Hazard::Grid,
            Hazard::Shared,
            Hazard::ThreadPosition,
            Hazard::BlockPosition,
            Hazard::Exit,
            Hazard::Unseen,
        ];
        if let Some(finding) = summary.first_of(&serial, |f| !(position(f.hazard) && f.in_callee()))
        {
            let d = if finding.hazard == Hazard::Unseen {
                cannot_see(finding, "threshold")
            } else {
                Diagnostic::new(
                    DiagnosticKind::NotSerializable {
                        kernel: kernel.clone(),
                        construct: finding.construct.clone(),
                    },
                    finding.span.clone(),
                    "cannot run serially in one parent thread",
                )
            };
            out.push(
                with_calls(d, finding).with_note(pragma_span.clone(), "threshold requested here"),
            );
        }
    }
    // A called function that reads a thread or block position itself: the
    // copies of the child's body replace the builtins there, not in callees.
    let mut reported: Vec<Range<usize>> = Vec::new();
    let mut in_callees: Vec<&Finding> = [Hazard::ThreadPosition, Hazard::BlockPosition]
        .iter()
        .filter_map(|&h| summary.get(h))
        .filter(|f| f.in_callee())
        .collect();
    in_callees.sort_by_key(|f| f.anchor());
    for finding in in_callees {
        let clause = if site.threshold.is_some() {
            "threshold"
        } else if site.coarsen.is_some() && finding.hazard == Hazard::BlockPosition {
            "coarsen"
        } else {
            continue;
        };
        let call = &finding.calls[0];
        if reported.contains(&call.span) {
            continue;
        }
        reported.push(call.span.clone());
        let d = Diagnostic::new(
            DiagnosticKind::BuiltinInCallee {
                kernel: kernel.clone(),
                callee: call.callee.clone(),
                builtin: finding.construct.clone(),
                clause: clause.to_string(),
            },
            call.span.clone(),
            "this call",
        );
        let d = finding
            .call_notes()
            .into_iter()
            .skip(1)
            .fold(d, |d, (span, label)| d.with_note(span, label));
        out.push(
            d.with_note(finding.span.clone(), "reads the builtin here")
                .with_note(pragma_span.clone(), "requested here"),
        );
    }
    if site.coarsen.is_some() {
        // Grid synchronization, and a block index that the coarsened kernel
        // does not replace (a callee's is a builtin in a callee, above).
        if let Some(finding) = summary.first_of(&[Hazard::Grid, Hazard::BlockPosition], |f| {
            !(f.hazard == Hazard::BlockPosition && f.in_callee())
        }) {
            let d = Diagnostic::new(
                DiagnosticKind::NotCoarsenable {
                    kernel: kernel.clone(),
                    construct: finding.construct.clone(),
                },
                finding.span.clone(),
                "depends on the original grid's blocks",
            );
            out.push(
                with_calls(d, finding).with_note(pragma_span.clone(), "coarsen requested here"),
            );
        }
        // A thread that returned would miss the barriers of its original
        // block; code dpopt cannot see might hold one.
        if let Some(ret) = &facts.returns {
            if let Some(finding) = summary.first_of(&[Hazard::Block, Hazard::Unseen], |_| true) {
                let d = if finding.hazard == Hazard::Unseen {
                    with_calls(cannot_see(finding, "coarsen"), finding)
                        .with_note(ret.clone(), "and the child returns early here")
                } else {
                    let d = Diagnostic::new(
                        DiagnosticKind::ReturnWithBarrier {
                            kernel: kernel.clone(),
                        },
                        ret.clone(),
                        "early return",
                    )
                    .with_note(finding.span.clone(), "barrier");
                    with_calls(d, finding)
                };
                out.push(d.with_note(pragma_span, "coarsen requested here"));
            }
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
    fn template_children_are_aggregated() {
        let text = "template <typename T> __global__ void child(T *a) { a[0] = 1; }\n\
                    __global__ void parent(float *a) {\n#pragma dp consldt(warp)\n  child<float><<<1, 32>>>(a);\n}\n";
        let (plan, diagnostics) = analysis(text);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert!(plan.sites[0].aggregation.is_some());
    }
}
