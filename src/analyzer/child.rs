//! Child facts: what the child does that matters for the transformations,
//! and the checks of each site's clauses against it.

use super::{cannot_see, with_calls};
use crate::barrier_split::{Phased, Refusal};
use crate::constant::Constants;
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
    /// For a child that waits at block barriers or shares memory (and does
    /// nothing else a serial run cannot reproduce): its body split at the
    /// barriers (`barrier_split.rs`), or why it cannot be.
    pub(super) split: Option<Result<Phased, Refusal>>,
    /// For a callee's read of a position that copies of the body cannot
    /// reproduce: the function on the way that dpopt cannot copy with the
    /// positions as parameters, and why (by the finding's span).
    pub(super) uncopied: Vec<(Span, String, &'static str)>,
}

/// What the serial version of a child may reproduce by splitting the body
/// at its barriers and warp exchanges (`barrier_split.rs`).
const SPLIT_HAZARDS: [Hazard; 3] = [Hazard::Block, Hazard::Shared, Hazard::Warp];

/// Hazards that keep a child from running serially, the barriers and
/// shared memory of a split body aside (a callee's position reads are
/// reported as builtins in callees).
fn blocks_serial(f: &Finding, split: bool) -> bool {
    let position = matches!(f.hazard, Hazard::ThreadPosition | Hazard::BlockPosition);
    // of the warp operations, those the split may reproduce (exchanges and
    // warp syncs); `volatile`, matches, WMMA, ... stay out of its reach
    let splits = SPLIT_HAZARDS.contains(&f.hazard)
        && (f.hazard != Hazard::Warp || crate::warp_exchange::may_split(&f.construct));
    // a tile's rank, which a split writes with the builtins
    let tile_query = position && crate::warp_exchange::may_split_position(&f.construct);
    !(position && f.in_callee() || split && (splits || tile_query))
}

/// What the launches of `child` that run serially state about their
/// blocks: the threads per block (the child's `__launch_bounds__`, else the
/// largest constant block size of `launches`, each a launch and its parent,
/// when all are constants) and the largest dynamic shared memory (when every
/// launch's is a constant or absent).
pub(super) fn serial_shape<'a>(
    program: &Program,
    constants: &Constants,
    child: FunctionId,
    launches: impl IntoIterator<Item = (&'a crate::program::Launch, FunctionId)>,
) -> crate::barrier_split::SerialShape {
    let function = &program.functions[child];
    let declared = function.launch_bounds.as_ref().and_then(|bounds| {
        let inner = bounds
            .trim_start_matches("__launch_bounds__")
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')');
        let first = crate::token::split_top_level(
            &crate::lexer::lex_text(inner)
                .into_iter()
                .filter(|t| t.kind.is_significant())
                .collect::<Vec<_>>(),
            inner,
            crate::token::Angles::Operators,
        )
        .first()
        .and_then(|p| Some(inner[p.first()?.start..p.last()?.end].to_string()));
        first
            .and_then(|t| constants.value(&t))
            .filter(|n| (1..=1024).contains(n))
            .map(|n| n as u64)
    });
    let view = program.view.as_str();
    let mut block = Some(0u64);
    let mut dynamic_shared = Some(0u64);
    // A launch of the child by itself with its own block's dimensions
    // (`dim3 bs(blockDim.x, blockDim.y)`) runs blocks no larger than the
    // launches that started the recursion: those of the child elsewhere.
    let mut inherits = false;
    let block_of = |b: u64, launch: &crate::program::Launch, parent: FunctionId| {
        let text = &view[launch.config.get(1)?.range()];
        let n = constants.threads(text, &program.functions[parent], program)?;
        (1..=1024).contains(&n).then(|| b.max(n as u64))
    };
    for (launch, parent) in launches {
        let own = parent == child
            && launch.config.get(1).is_some_and(|r| {
                crate::constant::is_own_block(
                    &view[r.range()],
                    &program.functions[parent],
                    program,
                    launch.span.start(),
                )
            });
        if own {
            inherits = true;
        } else {
            block = block.and_then(|b| block_of(b, launch, parent));
        }
        dynamic_shared = dynamic_shared.and_then(|d| match launch.config.get(2) {
            None => Some(d),
            Some(r) => constants
                .value(&view[r.range()])
                .filter(|n| (0..=1 << 20).contains(n))
                .map(|n| d.max(n as u64)),
        });
    }
    if inherits {
        // Every launch of the child but those of itself with its own block.
        let mut started = false;
        for l in program.launches.iter() {
            let Some(parent) = l.function else { continue };
            if !program.launched_kernels(l).contains(&child) {
                continue;
            }
            let own = parent == child
                && l.config.get(1).is_some_and(|r| {
                    crate::constant::is_own_block(
                        &view[r.range()],
                        &program.functions[parent],
                        program,
                        l.span.start(),
                    )
                });
            if !own {
                started = true;
                block = block.and_then(|b| block_of(b, l, parent));
            }
        }
        if !started {
            block = None;
        }
    }
    crate::barrier_split::SerialShape {
        block: declared.or(block.filter(|&b| b > 0)),
        dynamic_shared,
    }
}

impl ChildFacts {
    pub(super) fn gather(
        program: &Program,
        hazards: &Hazards,
        constants: &Constants,
        child: FunctionId,
        shape: crate::barrier_split::SerialShape,
    ) -> Self {
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
        let split = (summary.first_of(&SPLIT_HAZARDS, |_| true).is_some()
            && summary
                .first_of(&crate::hazard::NOT_SERIALIZABLE, |f| blocks_serial(f, true))
                .is_none())
        .then(|| crate::barrier_split::phased(program, hazards, constants, child, shape));
        let uncopied = [Hazard::ThreadPosition, Hazard::BlockPosition]
            .iter()
            .filter_map(|&h| summary.get(h))
            .filter_map(|f| {
                f.calls
                    .iter()
                    .map(|c| c.callee.as_str())
                    .chain(std::iter::once(f.function.as_str()))
                    .find_map(|name| hazards.why_not_copied(name).map(|why| (name, why)))
                    .map(|(name, why)| (f.span, name.to_string(), why))
            })
            .collect();
        ChildFacts {
            summary,
            returns,
            split,
            uncopied,
        }
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
        // What keeps the child from running serially: a construct the split
        // at barriers does not take, else why the split failed.
        let other = summary.first_of(&crate::hazard::NOT_SERIALIZABLE, |f| blocks_serial(f, true));
        if let (None, Some(Err(refusal))) = (other, facts.split.as_ref()) {
            let d = refusal.notes.iter().fold(
                Diagnostic::new(
                    DiagnosticKind::BarrierSplit {
                        clause: clause.to_string(),
                        kernel: kernel.clone(),
                        why: refusal.why.clone(),
                        fix: refusal.fix.clone(),
                    },
                    refusal.span,
                    "the split at barriers stops here",
                ),
                |d, (span, label)| d.with_note(*span, label.clone()),
            );
            out.push(d.with_note(pragma_span, format!("{clause} requested here")));
        } else if let Some(finding) = other {
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
    // A called function that reads a thread or block position itself, where
    // the copies of the child's body cannot call a copy of it taking the
    // positions (`position_clone.rs`; copyable ones are `ThreadCloned`).
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
        // size: an uncopied callee's `threadIdx`, `blockDim`, `blockIdx` and
        // `gridDim` are the aggregated kernel's.
        // The split serial version runs the bodies of some callees in place,
        // their builtins replaced (and refuses other callees that read one).
        let in_place = facts.split.as_ref().is_some_and(|s| {
            s.as_ref()
                .is_ok_and(|p| p.inlined.iter().any(|c| *c == finding.calls[0].span))
        });
        let clause = if let Some(clause) = serial_clause.filter(|_| !in_place) {
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
                uncopied: facts
                    .uncopied
                    .iter()
                    .find(|(span, _, _)| *span == finding.span)
                    .map(|(_, name, why)| (name.clone(), why.to_string())),
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
            .filter(|_| !returns_safely(program, child, facts))
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
    // A recursive child's split serial version launches its own children
    // as written (`transform/site.rs`); the floor's copy of a recursion runs
    // its serial version through the work queue's recorded bodies instead,
    // which are not split.
    if site.floor.is_some() && site.parent == site.child {
        if let Some(Ok(_)) = facts.split.as_ref() {
            if let Some(finding) = summary.first_of(&SPLIT_HAZARDS, |_| true) {
                let d = Diagnostic::new(
                    DiagnosticKind::FloorRefused {
                        kernel: parent_name(program, site),
                        why: format!(
                            "child kernel `{kernel}` launches itself and waits at block barriers or shares memory; the floor's work queue runs a recursion's blocks one thread at a time without splitting them at barriers"
                        ),
                        fix: "use `threshold` at this launch instead of `floor` (its serial version splits the body at its barriers)".to_string(),
                    },
                    finding.span,
                    "barrier or shared memory",
                );
                out.push(with_calls(d, finding).with_note(pragma_span, "`floor` requested here"));
            }
        }
    }
    // The floor's drain blocks run recorded blocks in turn, as a coarsened
    // block does: a thread that returned before a barrier would miss it in
    // the next recorded block (the drain would hang).
    if site.floor.is_some() {
        if let Some(ret) = facts
            .returns
            .as_ref()
            .filter(|_| !returns_safely(program, child, facts))
        {
            if let Some(finding) = summary.first_of(&[Hazard::Block], |_| true) {
                let d = Diagnostic::new(
                    DiagnosticKind::FloorRefused {
                        kernel: parent_name(program, site),
                        why: format!(
                            "child kernel `{kernel}` returns early and also synchronizes the block; the drain's blocks run the recorded blocks in turn, and a thread that returned would miss the barriers of the next"
                        ),
                        fix: "replace the early `return` by an `if` around the rest of the body, or remove `floor` from this pragma".to_string(),
                    },
                    *ret,
                    "early return",
                )
                .with_note(finding.span, "barrier");
                out.push(with_calls(d, finding).with_note(pragma_span, "`floor` requested here"));
            }
        }
    }
    out
}

/// Can a coarsened block (or the floor's drain block) run the child's
/// original blocks in turn although it returns early? When every barrier
/// comes before the first return, or every return is taken by a whole block
/// together (`uniform_return`).
fn returns_safely(program: &Program, child: &Function, facts: &ChildFacts) -> bool {
    returns_after_every_barrier(program, child, facts)
        || (!facts.summary.has(Hazard::Exit)
            && crate::uniform_return::every_return_block_uniform(program, child))
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
