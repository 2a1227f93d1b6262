//! The kernels that get `DPOPT_PARENT_BOUNDS`: those that run a rewritten
//! launch, directly or through the device functions they call; and the
//! block size that `parent_threads(N)` states for some of them.

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::plan::Plan;
use crate::pragma::Value;
use crate::program::Program;
use crate::token::calls;
use std::collections::BTreeMap;

/// The bounded kernels, and the block size stated for those whose sites
/// state one.
pub(super) struct Bounds {
    pub kernels: Vec<usize>,
    pub stated: BTreeMap<usize, Value>,
    pub diagnostics: Vec<Diagnostic>,
}

/// The kernels that run a rewritten launch: the sites' parents when they
/// are kernels, and the kernels that call (through any chain of calls) a
/// device function that is one; those that declare `__launch_bounds__` or
/// `__maxnreg__` themselves keep theirs. A kernel takes the
/// `parent_threads(N)` of the sites it runs: every one that states it must
/// state the same N.
pub(super) fn kernels_to_bound(program: &Program, view: &str, plan: &Plan) -> Bounds {
    let parents: Vec<usize> = plan.sites.iter().map(|s| s.parent).collect();
    let mut kernels: Vec<usize> = reaching(program, view, parents)
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
    // Per kernel, the first site stating a block size and that size.
    let mut first: BTreeMap<usize, (usize, &Value)> = BTreeMap::new();
    let mut diagnostics = Vec::new();
    let mut reach_of: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, site) in plan.sites.iter().enumerate() {
        let Some(value) = &site.parent_threads else {
            continue;
        };
        let reach = reach_of
            .entry(site.parent)
            .or_insert_with(|| reaching(program, view, vec![site.parent]));
        for &k in reach.iter().filter(|k| kernels.contains(k)) {
            match first.get(&k) {
                None => {
                    first.insert(k, (i, value));
                }
                Some(&(other, stated)) if stated != value => {
                    let pragma = |s: usize| program.pragmas[plan.sites[s].pragma].span.clone();
                    diagnostics.push(
                        Diagnostic::new(
                            DiagnosticKind::ParentThreadsDiffer {
                                kernel: program.functions[k].name.clone(),
                                first: stated.to_source(),
                                second: value.to_source(),
                            },
                            pragma(i),
                            format!("`parent_threads({})` here", value.to_source()),
                        )
                        .with_note(
                            pragma(other),
                            format!("`parent_threads({})` here", stated.to_source()),
                        )
                        .with_note(
                            program.functions[k].name_span.clone(),
                            "the kernel that runs both",
                        ),
                    );
                }
                Some(_) => {}
            }
        }
    }
    let stated = first
        .into_iter()
        .map(|(k, (_, value))| (k, value.clone()))
        .collect();
    Bounds {
        kernels,
        stated,
        diagnostics,
    }
}

/// `start` and the functions running on the device that call one of them,
/// through any chain of calls, up to the kernels.
fn reaching(program: &Program, view: &str, start: Vec<usize>) -> Vec<usize> {
    let mut reach = start;
    let mut i = 0;
    while i < reach.len() {
        let target = &program.functions[reach[i]];
        if !target.space.global {
            for (k, f) in program.functions.iter().enumerate() {
                if reach.contains(&k) || !f.space.runs_on_device() {
                    continue;
                }
                let body = program.sig_in(f.body.clone());
                if calls(body, view).any(|(_, name)| name == target.name) {
                    reach.push(k);
                }
            }
        }
        i += 1;
    }
    reach
}
