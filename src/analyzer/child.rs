//! Child facts: what the child does that matters for the transformations,
//! and the checks of each site's clauses against it.

use super::{cannot_see, with_calls};
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::hazard::{Finding, Hazard, Hazards, Summary};
use crate::plan::Site;
use crate::program::{Function, FunctionId, Program};
use crate::source::Span;
use crate::token::TokenKind;

/// What the child does that matters for the transformations.
#[derive(Debug)]
pub(super) struct ChildFacts {
    /// The hazard model of the child and everything it calls.
    pub(super) summary: Summary,
    /// First `return` of the child's own body (or `asm("exit;")`, in it or in
    /// a function it calls).
    pub(super) returns: Option<Span>,
}

impl ChildFacts {
    pub(super) fn gather(program: &Program, hazards: &Hazards, child: FunctionId) -> Self {
        let view = program.view.as_str();
        let summary = hazards.of(child);
        let body = program.sig_in(program.functions[child].body);
        let returns = body
            .iter()
            .find(|t| t.kind == TokenKind::Ident && t.text(view) == "return")
            .map(|t| t.span());
        // `asm("exit;")` ends the thread too; in a callee, at the call.
        let exit = summary
            .get(Hazard::Exit)
            .map(|f| f.calls.first().map_or(f.span, |c| c.span));
        let returns = returns.into_iter().chain(exit).min_by_key(|r| r.start());
        ChildFacts { summary, returns }
    }
}

pub(super) fn check_child(
    program: &Program,
    site: &Site,
    child: &Function,
    facts: &ChildFacts,
) -> Vec<Diagnostic> {
    let pragma_span = program.pragmas[site.pragma].span;
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
                    finding.span,
                    "needs the original block's threads together",
                )
            };
            out.push(
                with_calls(d, finding).with_note(pragma_span, format!("`{clause}` requested here")),
            );
        }
    }
    let position = |h: Hazard| matches!(h, Hazard::ThreadPosition | Hazard::BlockPosition);
    // The clause that needs a serial version: `threshold`, or `floor`, whose
    // copy runs a child serially when its work list is full.
    let serial_clause = if site.threshold.is_some() {
        Some("threshold")
    } else if site.floor.is_some() {
        Some("floor")
    } else {
        None
    };
    if let Some(clause) = serial_clause {
        // Serial in one parent thread: nothing may wait for, or exchange
        // values with, other threads, share memory with them, or read a
        // position the serial version does not replace (a callee's builtins
        // are reported below, as builtins in callees).
        if let Some(finding) = summary.first_of(&crate::hazard::NOT_SERIALIZABLE, |f| {
            !(position(f.hazard) && f.in_callee())
        }) {
            let kind = if clause == "floor" {
                DiagnosticKind::FloorRefused {
                    kernel: parent_name(program, site),
                    why: format!(
                        "child kernel `{kernel}` uses `{}`, which a serial run in the parent thread (the copy's fallback when its work list is full) cannot reproduce",
                        finding.construct
                    ),
                    fix: "remove `floor` from this pragma".to_string(),
                }
            } else {
                DiagnosticKind::NotSerializable {
                    kernel: kernel.clone(),
                    construct: finding.construct.clone(),
                }
            };
            let d = if finding.hazard == Hazard::Unseen {
                cannot_see(finding, clause)
            } else {
                Diagnostic::new(
                    kind,
                    finding.span,
                    "cannot run serially in one parent thread",
                )
            };
            out.push(
                with_calls(d, finding).with_note(pragma_span, format!("{clause} requested here")),
            );
        }
    }
    // A called function that reads a thread or block position itself: the
    // copies of the child's body replace the builtins there, not in callees.
    let mut reported: Vec<Span> = Vec::new();
    let mut in_callees: Vec<&Finding> = [Hazard::ThreadPosition, Hazard::BlockPosition]
        .iter()
        .filter_map(|&h| summary.get(h))
        .filter(|f| f.in_callee())
        .collect();
    in_callees.sort_by_key(|f| f.anchor());
    for finding in in_callees {
        // The aggregated kernels run the child's body with the original
        // positions as parameters, in one-dimensional blocks of their own
        // size: a callee's `threadIdx`, `blockDim`, `blockIdx` and `gridDim`
        // are the aggregated kernel's.
        let clause = if let Some(clause) = serial_clause {
            clause
        } else if site.coarsen.is_some() && finding.hazard == Hazard::BlockPosition {
            "coarsen"
        } else if aggregation.is_some() {
            "consldt"
        } else {
            continue;
        };
        let call = &finding.calls[0];
        if reported.contains(&call.span) {
            continue;
        }
        reported.push(call.span);
        let d = Diagnostic::new(
            DiagnosticKind::BuiltinInCallee {
                kernel: kernel.clone(),
                callee: call.callee.clone(),
                builtin: finding.construct.clone(),
                clause: clause.to_string(),
                reader: finding.function.clone(),
            },
            call.span,
            "this call",
        );
        let d = finding
            .call_notes()
            .into_iter()
            .skip(1)
            .fold(d, |d, (span, label)| d.with_note(span, label));
        out.push(
            d.with_note(finding.span, "reads the builtin here")
                .with_note(pragma_span, "requested here"),
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
                finding.span,
                "depends on the original grid's blocks",
            );
            out.push(with_calls(d, finding).with_note(pragma_span, "coarsen requested here"));
        }
        // A thread that returned would miss the barriers of its original
        // block; code dpopt cannot see might hold one. Not where every
        // barrier comes before the first return and no loop or `goto` can
        // take a thread back to one (`returns_after_every_barrier`).
        if let Some(ret) = facts
            .returns
            .as_ref()
            .filter(|_| !returns_after_every_barrier(program, child, facts))
        {
            if let Some(finding) = summary.first_of(&[Hazard::Block, Hazard::Unseen], |_| true) {
                let d = if finding.hazard == Hazard::Unseen {
                    with_calls(cannot_see(finding, "coarsen"), finding)
                        .with_note(*ret, "and the child returns early here")
                } else {
                    let d = Diagnostic::new(
                        DiagnosticKind::ReturnWithBarrier {
                            kernel: kernel.clone(),
                        },
                        *ret,
                        "early return",
                    )
                    .with_note(finding.span, "barrier");
                    with_calls(d, finding)
                };
                out.push(d.with_note(pragma_span, "coarsen requested here"));
            }
        }
    }
    out
}

/// Does every barrier of the child (and every call to code dpopt cannot
/// see) come before its first `return`, with no loop and no `goto` before
/// that `return` and no `asm("exit;")`? Then a coarsened thread that returns
/// from one original block has passed every barrier of that block, and the
/// threads that go on reach no other: the early return is safe.
fn returns_after_every_barrier(program: &Program, child: &Function, facts: &ChildFacts) -> bool {
    let Some(ret) = facts.returns else {
        return true;
    };
    if facts.summary.has(Hazard::Exit) {
        return false;
    }
    let view = program.view.as_str();
    let body = program.sig_in(child.body);
    let jumps = body.iter().any(|t| {
        t.kind == TokenKind::Ident
            && (t.text(view) == "goto"
                || (t.start < ret.start() && matches!(t.text(view), "for" | "while" | "do")))
    });
    let last_wait = facts
        .summary
        .last_of(&[Hazard::Block, Hazard::Unseen])
        .map_or(0, |f| f.anchor());
    !jumps && last_wait < ret.start()
}

/// The name of the kernel that holds the site.
fn parent_name(program: &Program, site: &Site) -> String {
    program.functions[site.parent].name.clone()
}
