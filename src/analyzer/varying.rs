//! Which arguments of an aggregated launch vary between its parents (stored
//! per parent) and which are the same for all (passed once).

use crate::pragma::Granularity;
use crate::program::{Function, FunctionId, Launch, Program};
use crate::token::{is_call_at, TokenKind};

/// Are the parent's parameters the same for every parent of one aggregated
/// launch? Only a kernel's are (a device function's are per thread), and a
/// kernel's only within one of its grids: a group of several blocks (multiblock,
/// grid) can span grids when the kernel is also launched from the device (an
/// aggregated launch of it runs blocks of many original grids side by side).
pub(super) fn parent_params_uniform(
    program: &Program,
    parent: FunctionId,
    granularity: Granularity,
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
pub(super) fn varying_arguments(
    program: &Program,
    launch: &Launch,
    parent: FunctionId,
    child: &Function,
    work: Option<&[String]>,
    params_uniform: bool,
) -> Vec<bool> {
    let view = program.view.as_str();
    let parent_fn = &program.functions[parent];
    launch
        .args
        .iter()
        .enumerate()
        .map(|(i, arg)| {
            let text = view[arg.range()].trim();
            if let Some(work) = work {
                let param = child.params.get(i).and_then(|p| p.name.as_deref());
                return work.iter().any(|w| Some(w.as_str()) == param || w == text);
            }
            let tokens = program.sig_in(*arg);
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
                    let called = is_call_at(tokens, k, view);
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
                            || (param && params_uniform && !program.assigns(parent_fn, s)))
                }
                _ => false,
            })
        })
        .collect()
}
