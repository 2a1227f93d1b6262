//! The kernels that run a rewritten launch, directly or through the device
//! functions they call: those that get `DPOPT_PARENT_BOUNDS`, and what the
//! sites they run state about them (`Lands::Kernel` clauses:
//! `parent_threads(N)`).

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::plan::{Kernel, Plan, SiteId};
use crate::pragma::{ClauseName, Lands, Takes, Value};
use crate::program::{FunctionId, Program};
use crate::token::calls;
use std::collections::BTreeMap;

/// The kernels that run a rewritten launch: the sites' parents when they
/// are kernels, and the kernels that call (through any chain of calls) a
/// device function that is one; those that declare `__launch_bounds__` or
/// `__maxnreg__` themselves keep theirs.
pub(super) fn kernels_to_bound(program: &Program, plan: &Plan) -> Vec<FunctionId> {
    let view = program.view.as_str();
    let parents: Vec<FunctionId> = plan.sites.iter().map(|s| s.parent).collect();
    let mut kernels: Vec<FunctionId> = reaching(program, parents)
        .into_iter()
        .filter(|&k| {
            let f = &program.functions[k];
            let head = &view[f.start..f.body.start()];
            // `void ns::k(...) {...}`: a qualified name cannot be declared
            // again outside its namespace.
            let qualified = view[f.start..f.name_span.start()]
                .trim_end()
                .ends_with("::");
            // A literal left open in the head ends at its line: repeated on
            // one line it would swallow what follows (and could turn text
            // after it into a directive).
            let unterminated = program
                .sig_in(f.start..f.name_span.start())
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

/// Per kernel, what the sites it runs state about it: the clauses whose
/// row says `Lands::Kernel`, each put where its row says. Every site a
/// kernel runs that states such a clause must state the same value.
pub(super) fn kernel_clauses(
    program: &Program,
    plan: &Plan,
) -> (BTreeMap<FunctionId, Kernel>, Vec<Diagnostic>) {
    // Per kernel and clause, the first site stating it and its value.
    let mut first: BTreeMap<(FunctionId, ClauseName), (SiteId, &Value)> = BTreeMap::new();
    let mut diagnostics = Vec::new();
    let mut reach_of: BTreeMap<FunctionId, Vec<FunctionId>> = BTreeMap::new();
    for (i, site) in plan.sites.with_ids() {
        if site.kernel_clauses.is_empty() {
            continue;
        }
        let reach = reach_of
            .entry(site.parent)
            .or_insert_with(|| reaching(program, vec![site.parent]));
        for &k in reach.iter().filter(|&&k| program.functions[k].space.global) {
            for (clause, value) in &site.kernel_clauses {
                match first.get(&(k, *clause)) {
                    None => {
                        first.insert((k, *clause), (i, value));
                    }
                    Some(&(other, stated)) if stated != value => {
                        let pragma = |s: SiteId| program.pragmas[plan.sites[s].pragma].span;
                        let written =
                            |v: &Value| format!("`{}({})` here", clause.spelling(), v.to_source());
                        diagnostics.push(
                            Diagnostic::new(
                                DiagnosticKind::KernelClauseDiffers {
                                    clause: *clause,
                                    kernel: program.functions[k].name.clone(),
                                    first: stated.to_source(),
                                    second: value.to_source(),
                                },
                                pragma(i),
                                written(value),
                            )
                            .with_note(pragma(other), written(stated))
                            .with_note(program.functions[k].name_span, "the kernel that runs both"),
                        );
                    }
                    Some(_) => {}
                }
            }
        }
    }
    let mut kernels: BTreeMap<FunctionId, Kernel> = BTreeMap::new();
    for ((k, clause), (_, value)) in first {
        if let Takes::Positive {
            lands: Lands::Kernel { set, .. },
            ..
        } = clause.takes()
        {
            set(kernels.entry(k).or_default(), value.clone());
        }
    }
    (kernels, diagnostics)
}

/// `start` and the functions running on the device that call one of them,
/// through any chain of calls, up to the kernels.
fn reaching(program: &Program, start: Vec<FunctionId>) -> Vec<FunctionId> {
    let view = program.view.as_str();
    let mut reach = start;
    let mut i = 0;
    while i < reach.len() {
        let target = &program.functions[reach[i]];
        if !target.space.global {
            for (k, f) in program.functions.with_ids() {
                if reach.contains(&k) || !f.space.runs_on_device() {
                    continue;
                }
                let body = program.sig_in(f.body);
                if calls(body, view).any(|(_, name)| name == target.name) {
                    reach.push(k);
                }
            }
        }
        i += 1;
    }
    reach
}
