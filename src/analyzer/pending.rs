//! Stage 2 (analyze): coarsened children that launch kernels themselves.
//! A coarsened block runs several blocks of the child one after the other,
//! so the launches those blocks make come later and more of them are pending
//! at once. On temporal-hpc's Mandelbrot (a recursive launch whose blocks each
//! launch a fill, a per-pixel or a recursive grid), `coarsen(8)` at the
//! recursive launch made the program need a pending-launch limit above 8,192
//! where the original ran within the default 2,048: launches failed, and the
//! image lost regions. A site whose coarsened launch has no fallback (no
//! `threshold`, `consldt` or `floor`) gets a warning, unless the file sets the
//! limit itself (`cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount,
//! ...)`) or `-D DPOPT_PENDING_LIMIT` states it.

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::plan::Plan;
use crate::program::Program;
use crate::token::TokenKind;

pub(super) fn check(program: &Program, plan: &Plan) -> Vec<Diagnostic> {
    let view = program.view.as_str();
    let limit_set = program
        .defines
        .iter()
        .any(|(name, _)| name == "DPOPT_PENDING_LIMIT")
        || program.sig.iter().any(|t| {
            t.kind == TokenKind::Ident && t.text(view) == "cudaLimitDevRuntimePendingLaunchCount"
        });
    if limit_set {
        return Vec::new();
    }
    let mut out = Vec::new();
    for site in plan.sites.iter() {
        // coarsen(1) runs every block as its own: nothing changes
        if matches!(site.coarsen, None | Some(crate::pragma::Value::Literal(1)))
            || site.threshold.is_some()
            || site.aggregation.is_some()
            || site.floor.is_some()
        {
            continue;
        }
        let Some(launch) = program
            .launches
            .iter()
            .find(|l| l.function == Some(site.child))
        else {
            continue;
        };
        let kernel = program.functions[site.child].name.clone();
        out.push(
            Diagnostic::new(
                DiagnosticKind::CoarsenPending {
                    kernel: kernel.clone(),
                },
                program.pragmas[site.pragma].span,
                "coarsened here",
            )
            .with_note(launch.span, format!("`{kernel}` launches here")),
        );
    }
    out
}
