//! Block and multiblock aggregation make a block's launching threads wait
//! for the others: the functions that run in the parent's blocks (the call
//! graph around the parent) must not wait for them in turn.

use super::{cannot_see, with_calls};
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::hazard::{Finding, Hazard, Hazards};
use crate::plan::Plan;
use crate::pragma::Granularity;
use crate::program::{FunctionId, Program};
use crate::token::calls;
use std::collections::BTreeMap;

/// Block and multiblock aggregation wait at a block barrier until every other
/// thread of the block has launched or exited. That deadlocks when code
/// running in the same blocks waits for the waiting threads: a barrier, a
/// warp-synchronous primitive or grid synchronization; and dpopt must see
/// all that code. (Every block-aggregated site of a kernel waits at the same
/// named barrier, so several sites in one block take part in the same
/// barrier instances and need nothing more: docs/AGGREGATION.md.) Check
/// every function that can run in the parent's blocks (the parent, the
/// functions that call it, and everything they call) with the hazard model.
pub(super) fn check_block_aggregation(
    program: &Program,
    plan: &Plan,
    hazards: &Hazards,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for site in plan.sites.iter() {
        let Some(aggregation) = &site.aggregation else {
            continue;
        };
        let granularity = match aggregation.granularity {
            Granularity::Block => "block",
            Granularity::MultiBlock => "multiblock",
            _ => continue,
        };
        let pragma = program.pragmas[site.pragma].span;
        let (_, functions) = block_functions(program, site.parent);
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
                    finding.span,
                    note.to_string(),
                )
            };
            with_calls(d, finding).with_note(pragma, "block-level aggregation requested here")
        };
        let mut found = first_wait(program, site.parent, hazards)
            .map(|finding| hazard(&finding, &finding.construct, "waits for other threads"));
        // A recursive child that uses shared memory gets a barrier between
        // coarsened blocks in its aggregated kernel.
        if found.is_none() && site.coarsen.is_some() && functions.contains(&site.child) {
            if let Some(finding) = hazards.of(site.child).get(Hazard::Shared) {
                found = Some(hazard(
                    finding,
                    &finding.construct,
                    "shared memory in a coarsened recursive child: its block waits between original blocks (without `coarsen`, this granularity applies)",
                ));
            }
        }
        diagnostics.extend(found);
    }
    diagnostics
}

/// The first construct by which code running in the blocks of `parent` (the
/// parent and the functions that call it, with what they call) waits for
/// other threads, or calls code dpopt cannot see.
pub(super) fn first_wait(
    program: &Program,
    parent: FunctionId,
    hazards: &Hazards,
) -> Option<Finding> {
    let (roots, _) = block_functions(program, parent);
    let waits = [Hazard::Warp, Hazard::Block, Hazard::Grid, Hazard::Unseen];
    roots
        .iter()
        .find_map(|&f| hazards.of(f).first_of(&waits, |_| true).cloned())
}

/// The functions that can run in the blocks of `parent`: the roots (the
/// parent and the device functions that, transitively, call it) and
/// everything (roots included) that can run there (what they call).
fn block_functions(program: &Program, parent: FunctionId) -> (Vec<FunctionId>, Vec<FunctionId>) {
    let view = program.view.as_str();
    let callees = |f: FunctionId| -> Vec<FunctionId> {
        let body = program.sig_in(program.functions[f].body);
        calls(body, view)
            .filter_map(|(_, name)| program.function_named(name))
            .collect()
    };
    let all: BTreeMap<FunctionId, Vec<FunctionId>> =
        program.functions.ids().map(|f| (f, callees(f))).collect();
    // Callers of the parent, transitively (kernels that reach a device function).
    let mut roots = vec![parent];
    let mut i = 0;
    while i < roots.len() {
        let f = roots[i];
        for (&g, calls) in &all {
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
        for &g in &all[&set[i]] {
            if !set.contains(&g) {
                set.push(g);
            }
        }
        i += 1;
    }
    (roots, set)
}
