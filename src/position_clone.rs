//! Callees that read the thread's or block's position: a copy of a child's
//! body (its body function, serial versions, aggregated and coarsened
//! kernels, the recursive floor's body) runs with `threadIdx`, `blockIdx`,
//! `blockDim` and `gridDim` replaced by parameters, so a function it calls
//! that reads them itself would see the running kernel's positions, not
//! the child thread's. Such a callee gets a copy, `dpopt_pos_<name>`, that
//! takes the four positions as its first parameters (its builtins replaced
//! by them, its own calls of such callees rewritten the same way), and the
//! copies of bodies call it instead (`Hazards::position_calls`). The
//! original stays as written for every other caller.
//!
//! A copy is written right after the callee's definition, and its
//! declaration right before the callee's first declaration when that comes
//! earlier: wherever the callee can be called, so can its copy.

use crate::hazard::PositionCall;
use crate::program::{Function, FunctionId, Program};
use crate::source::SourceFile;
use std::collections::{HashMap, HashSet};

/// The callees to copy and the calls that copies of bodies make to them
/// (`Plan::positions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PositionClones {
    /// In source order.
    pub clones: Vec<FunctionId>,
    pub calls: Vec<PositionCall>,
    /// The position queries of block groups (`cta.thread_rank()`), which
    /// copies of bodies write as the builtins they read; in source order.
    pub queries: Vec<crate::hazard::BlockQuery>,
}

/// Which device functions of the file can be copied with the positions as
/// parameters, and why the others cannot.
#[derive(Debug, Clone, Default)]
pub struct Copyable {
    pub functions: HashSet<FunctionId>,
    pub why_not: HashMap<FunctionId, &'static str>,
}

/// Device functions defined in the input (not in a header, whose text
/// dpopt does not rewrite), declared first in the input too, free functions
/// (not members, operators or explicit specializations), that launch no
/// kernel.
pub fn copyable(file: &SourceFile, program: &Program) -> Copyable {
    let mut out = Copyable::default();
    for (i, f) in program.functions.with_ids() {
        if !f.space.device || f.space.global {
            continue;
        }
        match why_not(file, program, f) {
            None => {
                out.functions.insert(i);
            }
            Some(why) => {
                out.why_not.insert(i, why);
            }
        }
    }
    out
}

fn why_not(file: &SourceFile, program: &Program, f: &Function) -> Option<&'static str> {
    let view = program.view.as_str();
    let after_name = program.sig_index_at(f.name_span.end());
    Some(if !file.in_input(f.start) {
        "it is defined in a header, which dpopt reads but does not rewrite"
    } else if !file.in_input(f.first_declared) {
        "it is first declared in a header, which dpopt does not rewrite"
    } else if f.name.starts_with("operator") {
        "it is an operator"
    } else if view[..f.name_span.start()].trim_end().ends_with("::") {
        "it is a member function"
    } else if program.sig.get(after_name).map(|t| t.text(view)) != Some("(") {
        "it is an explicit specialization"
    } else if program
        .launches
        .iter()
        .any(|l| (f.body.start()..f.body.end()).contains(&l.span.start()))
    {
        "it launches kernels"
    } else {
        return None;
    })
}
