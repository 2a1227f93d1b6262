//! The kernels that get `DPOPT_PARENT_BOUNDS`: those that run a rewritten
//! launch, directly or through the device functions they call.

use crate::plan::Plan;
use crate::program::Program;
use crate::token::calls;

/// The kernels that run a rewritten launch: the sites' parents when they
/// are kernels, and the kernels that call (through any chain of calls) a
/// device function that is one; those that declare `__launch_bounds__` or
/// `__maxnreg__` themselves keep theirs.
pub(super) fn kernels_to_bound(program: &Program, view: &str, plan: &Plan) -> Vec<usize> {
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
                if calls(body, view).any(|(_, name)| name == target.name) {
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
