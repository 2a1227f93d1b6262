//! Stage 2 (analyze): children whose own launches pile up against the
//! pending-launch limit once dpopt rewrites their launch: coarsened children
//! that launch kernels themselves, and recursions rewritten at their own
//! launch whose kernel launches others without `#pragma dp`.
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
//!
//! The same program with `threshold` at its recursive launch alone (its fill
//! and per-pixel launches without `#pragma dp`) failed at 2,048 x 2,048 with
//! the default limit, as written and with every recursive launch serial; with
//! the limit at 32,768, or `#pragma dp threshold` at all three launches, it
//! gave the original's image (bench/results/2026-11-28-h200-split-pending.txt).
//! Such a site (a recursion rewritten at its own launch, not `floor`, whose
//! kernel launches another kernel without `#pragma dp`) gets a warning too.
//! So does a recursion aggregated at its own launch without `threshold`:
//! with `consldt(grid)` or `consldt(warp)` alone at its three launches the
//! same program failed at 2,048 x 2,048 in 12 of 14 runs, where the original
//! ran within the default limit, and with `threshold(128)` added it gave the
//! original's image (bench/results/2026-11-28-h200-position-callees.txt).
//! A coarsened or aggregated launch whose child can run serially gets a
//! serial version for its launches that find no room even without
//! `threshold` (`Site::serial_fallback`): neither warning applies to it.

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
    // A recursion rewritten at its own launch: dpopt's launches of it go to
    // a fire-and-forget stream (or run serially, one thread for a grid), so
    // the launches its blocks make without `#pragma dp` pile up.
    let mut warned: Vec<crate::program::FunctionId> = Vec::new();
    for site in plan.sites.iter() {
        if site.parent != site.child || site.floor.is_some() || warned.contains(&site.child) {
            continue;
        }
        let coarsen_only = !matches!(site.coarsen, None | Some(crate::pragma::Value::Literal(1)))
            && site.threshold.is_none()
            && site.aggregation.is_none();
        if coarsen_only {
            continue; // dpopt::coarsen_pending below
        }
        if site.aggregation.is_some() && site.threshold.is_none() && !serial(plan, site.child) {
            warned.push(site.child);
            out.push(Diagnostic::new(
                DiagnosticKind::AggregationPending {
                    kernel: program.functions[site.child].name.clone(),
                },
                program.pragmas[site.pragma].span,
                "the recursion's launch, aggregated here without a fallback",
            ));
            continue;
        }
        let plain = program.launches.with_ids().find(|(id, l)| {
            l.function == Some(site.child) && !plan.sites.iter().any(|s| s.launch == *id)
        });
        let Some((_, launch)) = plain else {
            continue;
        };
        warned.push(site.child);
        let kernel = program.functions[site.child].name.clone();
        let launched = view[launch.kernel_span.range()].to_string();
        out.push(
            Diagnostic::new(
                DiagnosticKind::RecursionPending {
                    kernel: kernel.clone(),
                    launched: launched.clone(),
                },
                program.pragmas[site.pragma].span,
                "the recursion's launch, rewritten here",
            )
            .with_note(
                launch.span,
                format!("`{launched}` launched without `#pragma dp`"),
            ),
        );
    }
    for site in plan.sites.iter() {
        // coarsen(1) runs every block as its own: nothing changes
        if matches!(site.coarsen, None | Some(crate::pragma::Value::Literal(1)))
            || site.threshold.is_some()
            || site.aggregation.is_some()
            || site.floor.is_some()
        {
            continue;
        }
        // a launch of a child with a serial version runs serially when it
        // finds no room
        let Some(launch) = program.launches.with_ids().find_map(|(id, l)| {
            let covered = plan
                .sites
                .iter()
                .any(|s| s.launch == id && serial(plan, s.child));
            (l.function == Some(site.child) && !covered).then_some(l)
        }) else {
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

/// Has the child a serial version, which its launches that find no room run?
fn serial(plan: &Plan, child: crate::program::FunctionId) -> bool {
    plan.children.iter().any(|c| c.child == child && c.serial)
}
