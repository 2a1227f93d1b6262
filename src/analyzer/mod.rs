//! Stage 2: check every `#pragma dp` against the program and decide what to
//! generate. All problems are collected, not just the first.
//!
//! One module per concern: `sites` resolves each pragma to its launch,
//! parent and child (and the site's clause values); `block_hazards` checks
//! the code that runs in a block-aggregated parent's blocks (its call
//! graph); `child` gathers what the child does and checks it against each
//! site's clauses; `varying` decides which aggregated arguments vary
//! between parents; `names` warns about clause values nothing declares;
//! `pragma_macros` about `#pragma dp` hidden in macros; `placement` and
//! `bounds` decide where a child's code goes, which kernels get
//! `DPOPT_PARENT_BOUNDS`, and what the sites a kernel runs state about it
//! (`parent_threads`).

mod alloc;
mod block_hazards;
mod bounds;
mod child;
mod defaults;
mod floor;
mod name_clash;
mod names;
mod pending;
mod placement;
mod pragma_macros;
mod promote;
mod shared_argument;
mod sites;
mod varying;

pub use pragma_macros::pragma_macros;

use crate::constant::Constants;
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::hazard::{Finding, Hazard, Hazards};
use crate::plan::{ChildPlan, Plan, SiteId};
use crate::pragma::parse_directive;
use crate::program::{FunctionId, Program};
use crate::source::{SourceFile, Span};
use std::collections::BTreeMap;

pub struct Analysis {
    pub plan: Plan,
    pub diagnostics: Vec<Diagnostic>,
}

pub fn analyze(file: &SourceFile, program: &Program) -> Analysis {
    let view = &file.view;
    let mut diagnostics = Vec::new();
    let mut plan = Plan::default();
    if program.pragmas.is_empty() {
        return Analysis { plan, diagnostics };
    }
    // Only the input's tokens: the other files are read, never rewritten.
    let input_tokens = program.tokens.partition_point(|t| file.in_input(t.start));
    diagnostics.extend(crate::lexer::unreadable_tokens(
        &program.tokens[..input_tokens],
        view,
    ));
    if !diagnostics.is_empty() {
        return Analysis { plan, diagnostics };
    }
    if let Some(at) = program.unbalanced {
        // An unclosed string or character literal is the likelier cause:
        // point at it rather than at a bracket it swallowed.
        let literal = program
            .sig
            .iter()
            .find_map(|t| crate::lexer::unterminated(t, view).map(|what| (what, t.start)));
        diagnostics.push(match literal {
            Some((what, start)) => Diagnostic::new(
                DiagnosticKind::Unterminated { what },
                start..start + 1,
                "opened here, never closed on its line",
            ),
            None => Diagnostic::new(
                DiagnosticKind::UnbalancedBrackets,
                at..at + 1,
                "no partner for this bracket",
            ),
        });
        return Analysis { plan, diagnostics };
    }
    let mut per_parent: BTreeMap<String, usize> = BTreeMap::new();
    let constants = Constants::of(program);
    let hazards =
        Hazards::new(program).with_copyable(crate::position_clone::copyable(file, program));
    let mut markers = Vec::new();
    for (index, pragma) in program.pragmas.with_ids() {
        let directive = match parse_directive(&pragma.logical) {
            Ok(d) => d,
            Err(errors) => {
                diagnostics.extend(errors);
                continue;
            }
        };
        diagnostics.extend(names::clause_names(program, pragma, &directive));
        // Launch promotion: its own sites and markers (`promote.rs`).
        if directive.is_acquire() {
            markers.push(index);
            continue;
        }
        if directive.promotion().is_some() {
            match promote::promote_site(
                file,
                program,
                index,
                &directive,
                &mut per_parent,
                &constants,
                &hazards,
            ) {
                Ok(site) => plan.promotions.push(site),
                Err(errors) => diagnostics.extend(errors),
            }
            continue;
        }
        // A bare pragma takes the default configuration (`defaults.rs`).
        let site = if directive.clauses.is_empty() {
            defaults::default_site(
                file,
                program,
                index,
                directive,
                &mut per_parent,
                &constants,
                &hazards,
            )
        } else {
            sites::site_for(file, program, index, directive, &mut per_parent, &constants)
        };
        match site {
            Ok((site, warnings)) => {
                diagnostics.extend(warnings);
                plan.sites.push(site);
            }
            Err(d) => diagnostics.push(d),
        }
    }
    diagnostics.extend(promote::attach_markers(
        file,
        program,
        &mut plan.promotions,
        &markers,
    ));
    diagnostics.extend(promote::check_not_a_child(
        program,
        &plan.promotions,
        &plan.sites,
    ));
    diagnostics.extend(block_hazards::check_block_aggregation(
        program, &plan, &hazards,
    ));
    // Group sites by child and check the child can be transformed.
    let mut by_child: BTreeMap<FunctionId, Vec<SiteId>> = BTreeMap::new();
    for (i, site) in plan.sites.with_ids() {
        for child in site.children() {
            by_child.entry(child).or_default().push(i);
        }
    }
    for (child, sites) in by_child {
        // The floor's copy runs a child serially when its work list is full.
        let serial_sites: Vec<SiteId> = sites
            .iter()
            .copied()
            .filter(|&s| plan.sites[s].threshold.is_some() || plan.sites[s].floor.is_some())
            .collect();
        let coarse = sites.iter().any(|&s| plan.sites[s].coarsen.is_some());
        let function = &program.functions[child];
        // The serial version's per-thread arrays hold the block of every
        // launch that runs serially.
        let gather = |serial_sites: &[SiteId]| {
            let shape = child::serial_shape(
                program,
                &constants,
                child,
                serial_sites
                    .iter()
                    .map(|&s| &plan.sites[s])
                    .map(|s| (&program.launches[s.launch], s.parent)),
            );
            child::ChildFacts::gather(program, &hazards, &constants, child, shape)
        };
        let mut facts = gather(&serial_sites);
        let mut serial = !serial_sites.is_empty();
        // A launch coarsened or aggregated without `threshold` still gets a
        // serial version where the child can run serially, for its launches
        // that find no room (pending-launch limit): without one they failed
        // there (a recursion's, and the launches a recursion's blocks make).
        // Their blocks join the serial version's shape, unless that keeps the
        // child from running serially (then they keep no fallback).
        let fallbacks = fallback_sites(program, &plan, &sites, child);
        if !fallbacks.is_empty() {
            let all: Vec<SiteId> = serial_sites.iter().chain(&fallbacks).copied().collect();
            let with = gather(&all);
            let serializable = fallbacks.iter().all(|&s| {
                let mut site = plan.sites[s].clone();
                site.threshold = Some(crate::pragma::Value::Literal(1));
                !child::check_child(program, &site, function, &with)
                    .iter()
                    .any(Diagnostic::is_error)
            });
            if serializable {
                facts = with;
                serial = true;
            }
        }
        for &s in &sites {
            diagnostics.extend(child::check_child(
                program,
                &plan.sites[s],
                function,
                &facts,
            ));
        }
        let recursive = serial
            && recursion_sites(&plan, &sites, child).any(|s| {
                s.child == child
                    && (s.threshold.is_some() || s.floor.is_some() || s.serial_fallback())
            });
        // Before the child's first declaration: in its namespace, and before
        // every parent that launches it. A child defined in another file
        // gets everything at one place of the input (`elsewhere`).
        let (declare_at, elsewhere) = if file.in_input(function.start) {
            (function.first_declared, None)
        } else {
            let at = placement::place_for_outside_child(file, program, child, &sites, &plan);
            (at, Some(at))
        };
        let names: Vec<Option<String>> = function.params.iter().map(|p| p.name.clone()).collect();
        let guard =
            crate::guard::guard(&view[function.body.range()], function.body.start(), &names);
        // Folding needs the serial version to run the child's threads in
        // turn with nothing between them: no recursion, no launch of its own.
        // Only the launch-free copy (`floor`) runs the folded version: in a
        // kernel that also launches, folded serial versions next to launches
        // hung the device runtime (bench/results/2026-11-24-h100-fold-hang.txt).
        let folds = (serial
            && sites.iter().any(|&s| plan.sites[s].floor.is_some())
            && !recursive
            && facts
                .summary
                .first_of(&crate::hazard::NOT_SERIALIZABLE, |_| true)
                .is_none()
            && !program.launches.iter().any(|l| l.function == Some(child)))
        .then(|| {
            // without atomics to fold, still the copy without the bounds test
            crate::atomic_fold::folds(program, function)
                .or_else(|| guard.is_some().then(crate::atomic_fold::AtomicFolds::none))
        })
        .flatten();
        plan.children.push(ChildPlan {
            child,
            serial,
            coarse,
            uses_shared: facts.summary.has(Hazard::Shared),
            recursive,
            guard,
            folds,
            phased: if serial {
                facts.split.and_then(Result::ok)
            } else {
                None
            },
            defers: plan.child_defers(function, serial, &sites),
            members: crate::record::members(function),
            sites,
            declare_at,
            elsewhere,
        });
    }
    diagnostics.extend(pending::check(program, &plan));
    diagnostics.extend(shared_argument::check(program, &plan));
    let floors = floor::floors(file, program, &plan, &hazards);
    diagnostics.extend(floors.diagnostics);
    plan.floors = floors.kernels;
    for s in floors.joins {
        if let Some(f) = plan.sites[s].floor.as_mut() {
            f.join = true;
        }
    }
    for (s, wide) in floors.recursions {
        if let Some(f) = plan.sites[s].floor.as_mut() {
            f.recursive = true;
            f.wide = wide;
        }
    }
    diagnostics.extend(alloc::allocations(program, file, &mut plan, &hazards));
    plan.bounded = bounds::kernels_to_bound(program, &plan);
    plan.bounded
        .retain(|&k| file.in_input(program.functions[k].start));
    let (kernels, differ) = bounds::kernel_clauses(program, &plan);
    plan.kernels = kernels;
    diagnostics.extend(differ);
    // A promoted kernel runs generated code too (its start, the release, and
    // as pool or step kernels): launchable with 1,024 threads like a parent.
    for p in &plan.promotions {
        let k = p.kernel;
        if program.functions[k].launch_bounds.is_none() && !plan.bounded.contains(&k) {
            plan.bounded.push(k);
        }
    }
    plan.positions = positions(&plan, &hazards);
    plan.settle(program);
    let uses = &plan.uses;
    diagnostics.extend(name_clash::check(
        program,
        uses.cooperative_groups || uses.cub || uses.floor || uses.alloc,
    ));
    drop_decided_thresholds_of_refused_pragmas(&mut diagnostics);
    Analysis { plan, diagnostics }
}

/// The callees that the copies of bodies call as copies taking the
/// positions (`position_clone.rs`): those of the children's bodies and of
/// recursive floor kernels' bodies, the functions whose copies replace the
/// builtins.
fn positions(plan: &Plan, hazards: &Hazards) -> crate::position_clone::PositionClones {
    let mut roots: Vec<FunctionId> = plan.children.iter().map(|c| c.child).collect();
    roots.extend(
        plan.floors
            .iter()
            .filter(|f| {
                f.sites
                    .iter()
                    .any(|&s| plan.sites[s].floor.as_ref().is_some_and(|x| x.recursive))
            })
            .map(|f| f.kernel),
    );
    let (clones, calls) = hazards.position_calls(&roots);
    let queries = if roots.is_empty() {
        Vec::new()
    } else {
        hazards.block_queries()
    };
    crate::position_clone::PositionClones {
        clones,
        calls,
        queries,
    }
}

/// A pragma refused with an error produces no output, so a warning that its
/// threshold always decides the same way (`threshold_decided`) would only
/// contradict the error (e.g. a child that cannot run serially at all).
fn drop_decided_thresholds_of_refused_pragmas(diagnostics: &mut Vec<Diagnostic>) {
    let refused: Vec<Span> = diagnostics
        .iter()
        .filter(|d| d.is_error())
        .flat_map(|d| {
            d.notes
                .iter()
                .map(|(s, _)| *s)
                .chain(std::iter::once(d.span))
        })
        .collect();
    diagnostics.retain(|d| {
        !matches!(d.kind, DiagnosticKind::ThresholdDecided { .. })
            || !d.notes.iter().any(|(s, _)| refused.contains(s))
    });
}

/// `d` with one note per call leading to the construct of `finding`.
fn with_calls(d: Diagnostic, finding: &Finding) -> Diagnostic {
    finding
        .call_notes()
        .into_iter()
        .fold(d, |d, (span, label)| d.with_note(span, label))
}

/// "`clause` cannot be applied: dpopt cannot see ...", at the unseen call or
/// assembly (the calls leading there are left to the caller).
fn cannot_see(finding: &Finding, clause: &str) -> Diagnostic {
    let why = finding.unseen.unwrap_or(crate::hazard::Unseen::Asm);
    let label = match why {
        crate::hazard::Unseen::Declared => "dpopt cannot see this function's body",
        crate::hazard::Unseen::Pointer => "dpopt cannot see which function this calls",
        crate::hazard::Unseen::Asm => "dpopt cannot read this assembly",
    };
    let d = Diagnostic::new(
        DiagnosticKind::CannotSee {
            clause: clause.to_string(),
            function: finding.function.clone(),
            what: finding.construct.clone(),
            why,
        },
        finding.span,
        label,
    );
    match &finding.declared {
        Some(declared) => d.with_note(*declared, "declared here, defined in another file"),
        None => d,
    }
}

/// The launches of `child` among `sites` that the child itself makes: a
/// recursion's (what `ChildPlan::recursive` and `fallback_sites` ask).
fn recursion_sites<'p>(
    plan: &'p Plan,
    sites: &'p [SiteId],
    child: FunctionId,
) -> impl Iterator<Item = &'p crate::plan::Site> + 'p {
    sites
        .iter()
        .map(|&s| &plan.sites[s])
        .filter(move |s| s.parent == child)
}

/// The child's sites (it, or one of its alternatives, is their child) of
/// which [`crate::plan::Site::serial_fallback`] holds. A recursive template
/// child has no deferral queue, so no listed runner, and no out-of-line
/// serial call (`Plan::serial_call`): its coarsened launches outside its
/// recursion keep no fallback, which inline would raise the parent's
/// registers.
fn fallback_sites(
    program: &Program,
    plan: &Plan,
    sites: &[SiteId],
    child: FunctionId,
) -> Vec<SiteId> {
    // a recursive template child: no listed runner, no serial call
    let template = program.functions[child].template_header.is_some()
        && recursion_sites(plan, sites, child).next().is_some();
    sites
        .iter()
        .copied()
        .filter(|&s| {
            let site = &plan.sites[s];
            site.serial_fallback()
                && !(template && site.coarsened_fallback() && site.parent != child)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;
    use crate::parser::parse;
    use crate::plan::Plan;
    use crate::pragma::Value;

    fn analysis(text: &str) -> (Plan, Vec<Diagnostic>) {
        let file = SourceFile::new("t.cu", text.as_bytes().to_vec());
        let program = parse(&file, lex(&file));
        let a = analyze(&file, &program);
        (a.plan, a.diagnostics)
    }

    const CHILD: &str = "__global__ void child(const int *row, int start, int n, int k, int *out) { out[start] = n + k; }\n";

    #[test]
    fn invariant_arguments_are_unassigned_parent_parameters_and_constants() {
        let text = format!(
            "{CHILD}__global__ void parent(const int *row, int k, int *out, int m) {{\n  int v = threadIdx.x;\n  m += 1;\n\
             #pragma dp consldt(warp)\n  child<<<(m + 31) / 32, 32>>>(row, row[v], m, K * 2 + k, out);\n}}\n"
        );
        let (plan, diagnostics) = analysis(&text);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let a = plan.sites[SiteId(0)].aggregation.as_ref().unwrap();
        // row: parameter; row[v]: indexing; m: assigned in the parent;
        // K * 2 + k: macro, literal, parameter; out: parameter.
        assert_eq!(a.varying, [false, true, true, false, false]);
        assert!(!a.asserted);
    }

    #[test]
    fn positive_clauses_land_where_their_rows_say() {
        let text = format!(
            "{CHILD}__global__ void parent(const int *row, int k, int *out, int m) {{\n\
             #pragma dp threshold(64) coarsen(4) consldt(warp) agg_threshold(2) threads(32) blocks(8) parent_threads(256)\n\
               child<<<(m + 31) / 32, 32>>>(row, 0, m, k, out);\n}}\n"
        );
        let (plan, diagnostics) = analysis(&text);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let site = &plan.sites[SiteId(0)];
        assert_eq!(site.threshold, Some(Value::Literal(64)));
        assert_eq!(site.coarsen, Some(Value::Literal(4)));
        let a = site.aggregation.as_ref().unwrap();
        assert_eq!(a.agg_threshold, Some(Value::Literal(2)));
        assert_eq!(a.threads, Some(Value::Literal(32)));
        assert_eq!(a.blocks, Some(Value::Literal(8)));
        let parent = plan.sites[SiteId(0)].parent;
        assert_eq!(
            plan.kernels[&parent].parent_threads,
            Some(Value::Literal(256))
        );
    }

    #[test]
    fn a_macro_above_a_clauses_limit_is_refused_at_the_clause() {
        let text = format!(
            "#define PT 2048\n{CHILD}__global__ void parent(const int *row, int k, int *out, int m) {{\n\
             #pragma dp coarsen(2) parent_threads(PT)\n  child<<<(m + 31) / 32, 32>>>(row, 0, m, k, out);\n}}\n"
        );
        let (_, diagnostics) = analysis(&text);
        assert_eq!(
            diagnostics.iter().map(|d| &d.kind).collect::<Vec<_>>(),
            [&DiagnosticKind::AboveLimit {
                clause: "parent_threads".into(),
                value: "PT".into(),
                limit: crate::pragma::MAX_BLOCK_THREADS
            }]
        );
    }

    #[test]
    fn parameters_of_a_device_function_vary() {
        let text = format!(
            "{CHILD}__device__ void launch(const int *row, int start, int m, int *out) {{\n\
             #pragma dp consldt(warp)\n  child<<<(m + 31) / 32, 32>>>(row, start, m, 1, out);\n}}\n"
        );
        let (plan, diagnostics) = analysis(&text);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let a = plan.sites[SiteId(0)].aggregation.as_ref().unwrap();
        assert_eq!(a.varying, [true, true, true, false, true]);
    }

    #[test]
    fn kernel_parameters_vary_across_grids_when_the_kernel_is_launched_from_the_device() {
        // `parent` launches itself: a grid-wide group spans many of its grids.
        let text = format!(
            "{CHILD}__global__ void parent(const int *row, int m, int *out) {{\n\
             #pragma dp consldt(grid)\n  child<<<(m + 31) / 32, 32>>>(row, 0, m, 1, out);\n\
             if (m > 1) parent<<<1, 1>>>(row, m / 2, out);\n}}\n"
        );
        let (plan, diagnostics) = analysis(&text);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let a = plan.sites[SiteId(0)].aggregation.as_ref().unwrap();
        assert_eq!(a.varying, [true, false, true, false, true]);
        // Within one warp they are the same.
        let warp = text.replace("consldt(grid)", "consldt(warp)");
        let (plan, _) = analysis(&warp);
        let a = plan.sites[SiteId(0)].aggregation.as_ref().unwrap();
        assert_eq!(a.varying, [false, false, false, false, false]);
    }

    #[test]
    fn work_names_the_varying_arguments() {
        let text = format!(
            "{CHILD}__global__ void parent(const int *row, int *out) {{\n  int v = threadIdx.x;\n\
             #pragma dp consldt(warp) work(start, n)\n  child<<<(v + 31) / 32, 32>>>(row, row[v], v, 1, out);\n}}\n"
        );
        let (plan, _) = analysis(&text);
        let a = plan.sites[SiteId(0)].aggregation.as_ref().unwrap();
        assert_eq!(a.varying, [false, true, true, false, false]);
        assert!(a.asserted);
    }

    #[test]
    fn template_children_are_aggregated() {
        let text = "template <typename T> __global__ void child(T *a) { a[0] = 1; }\n\
                    __global__ void parent(float *a) {\n#pragma dp consldt(warp)\n  child<float><<<1, 32>>>(a);\n}\n";
        let (plan, diagnostics) = analysis(text);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert!(plan.sites[SiteId(0)].aggregation.is_some());
    }

    #[test]
    fn site_ids_count_per_parent_and_recursion_is_found() {
        let text = "__global__ void child(int *a, int n) { a[0] = n; }\n\
                    __global__ void p1(int *a, int n) {\n#pragma dp threshold(64)\n  child<<<n, 32>>>(a, n);\n\
                    #pragma dp coarsen(2)\n  child<<<n, 32>>>(a, n);\n}\n\
                    __global__ void p2(int *a, int n) {\n#pragma dp threshold(64) consldt(warp)\n  child<<<n, 32>>>(a, n);\n}\n\
                    __global__ void tree(int *a, int n) {\n  if (n > 1) {\n#pragma dp consldt(warp)\n    tree<<<1, 32>>>(a, n / 2);\n  }\n}\n";
        let (plan, diagnostics) = analysis(text);
        assert!(diagnostics.iter().all(|d| !d.is_error()), "{diagnostics:?}");
        let ids: Vec<&str> = plan.sites.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["p1_1", "p1_2", "p2_1", "tree_1"]);
        let recursive: Vec<bool> = plan
            .sites
            .iter()
            .map(|s| s.aggregation.as_ref().is_some_and(|a| a.recursive))
            .collect();
        assert_eq!(recursive, [false, false, false, true]);
        // One child plan per child, with every site that launches it.
        let children: Vec<(FunctionId, Vec<SiteId>)> = plan
            .children
            .iter()
            .map(|c| (c.child, c.sites.clone()))
            .collect();
        assert_eq!(
            children,
            [
                (FunctionId(0), vec![SiteId(0), SiteId(1), SiteId(2)]),
                (FunctionId(3), vec![SiteId(3)])
            ]
        );
        assert!(plan.children[0].serial && plan.children[0].coarse);
    }

    #[test]
    fn kernels_that_reach_a_site_get_bounds_unless_they_have_their_own() {
        let text = "__global__ void child(int *a) { a[0] = 1; }\n\
                    __device__ void launch(int *a) {\n#pragma dp threshold(64)\n  child<<<1, 32>>>(a);\n}\n\
                    __global__ void k1(int *a) { launch(a); }\n\
                    __global__ void __launch_bounds__(128) k2(int *a) { launch(a); }\n\
                    __global__ void k3(int *a) { a[1] = 2; }\n";
        let file = SourceFile::new("t.cu", text.as_bytes().to_vec());
        let program = parse(&file, lex(&file));
        let a = analyze(&file, &program);
        let bounded: Vec<&str> = a
            .plan
            .bounded
            .iter()
            .map(|&k| program.functions[k].name.as_str())
            .collect();
        assert_eq!(bounded, ["k1"]);
    }

    #[test]
    fn parent_threads_bounds_the_kernels_that_run_the_site() {
        let text = "__global__ void child(int *a) { a[0] = 1; }\n\
                    __device__ void launch(int *a) {\n#pragma dp coarsen(2) parent_threads(256)\n  child<<<1, 32>>>(a);\n}\n\
                    __global__ void k1(int *a) { launch(a); }\n\
                    __global__ void k2(int *a) {\n#pragma dp coarsen(2)\n  child<<<1, 32>>>(a);\n}\n";
        let file = SourceFile::new("t.cu", text.as_bytes().to_vec());
        let program = parse(&file, lex(&file));
        let a = analyze(&file, &program);
        assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
        let stated: Vec<(&str, Option<&Value>)> = a
            .plan
            .kernels
            .iter()
            .map(|(&k, v)| {
                (
                    program.functions[k].name.as_str(),
                    v.parent_threads.as_ref(),
                )
            })
            .collect();
        assert_eq!(stated, [("k1", Some(&Value::Literal(256)))]);
        assert_eq!(a.plan.bounded.len(), 2);
    }

    #[test]
    fn a_bare_pragma_takes_the_default_of_its_class_that_the_site_accepts() {
        let summary = |text: &str| {
            let (plan, diagnostics) = analysis(text);
            assert!(diagnostics.is_empty(), "{diagnostics:?}");
            plan.sites[crate::plan::SiteId(0)].summary.clone()
        };
        let plain = format!(
            "{CHILD}__global__ void parent(const int *row, int *out, int n) {{\n#pragma dp\n  child<<<(n + 31) / 32, 32>>>(row, 0, n, 1, out);\n}}\n"
        );
        assert_eq!(
            summary(&plain),
            format!("#pragma dp (the default: {})", defaults::OTHER[0])
        );
        // A child that waits at a barrier runs serially split at it.
        let barrier = "__global__ void child(int *a, int n) {\n  __shared__ int s[32];\n  s[threadIdx.x] = n;\n  __syncthreads();\n  a[threadIdx.x] = s[0];\n}\n\
                       __global__ void parent(int *a, int n) {\n#pragma dp\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}\n";
        assert_eq!(
            summary(barrier),
            format!("#pragma dp (the default: {})", defaults::OTHER[0])
        );
        // A barrier that not every thread reaches in step cannot be split
        // at: no threshold.
        let uneven = barrier.replace(
            "  __syncthreads();",
            "  if (threadIdx.x < n) { __syncthreads(); }",
        );
        assert_eq!(
            summary(&uneven),
            "#pragma dp (the default: coarsen(8) consldt(grid))"
        );
        let tree = "__global__ void tree(int *a, int n) {\n  if (n > 1) {\n#pragma dp\n    tree<<<(n + 31) / 32, 32>>>(a, n / 2);\n  }\n}\n";
        assert_eq!(
            summary(tree),
            format!("#pragma dp (the default: {})", defaults::RECURSIVE[0])
        );
        // The same kernel launched by the host after its definition: the
        // floor's work queue runs every level without a launch.
        let hosted = format!("{tree}void run(int *a, int n) {{ tree<<<1, 32>>>(a, n); }}\n");
        assert_eq!(
            summary(&hosted),
            format!("#pragma dp (the default: {})", defaults::RECURSIVE_FLOOR)
        );
        // Launched before its definition, the launcher cannot be called
        // there: the floor would be refused, so the default is the next.
        let early = format!("__global__ void tree(int *a, int n);\nvoid run(int *a, int n) {{ tree<<<1, 32>>>(a, n); }}\n{tree}");
        assert_eq!(
            summary(&early),
            format!("#pragma dp (the default: {})", defaults::RECURSIVE[0])
        );
        // A hosted recursion whose launch passes shared memory that is not a
        // constant (NVIDIA's cdpQuadtree): the floor refuses it, so the
        // default is the next candidate the site accepts, not an error.
        let sized = "__global__ void build(int *a, int d) {\n  extern __shared__ int s[];\n  s[threadIdx.x] = d;\n  __syncthreads();\n  if (d >= 4) return;\n  if (threadIdx.x == 0) {\n#pragma dp\n    build<<<4, 32, 32 * sizeof(int) * (d + 1)>>>(a, d + 1);\n  }\n}\nvoid run(int *a) { build<<<1, 32, 32 * sizeof(int)>>>(a, 0); }\n";
        let (plan, diagnostics) = analysis(sized);
        assert!(
            !diagnostics.iter().any(Diagnostic::is_error),
            "{diagnostics:?}"
        );
        assert_eq!(
            plan.sites[crate::plan::SiteId(0)].summary,
            format!("#pragma dp (the default: {})", defaults::RECURSIVE[3])
        );
        // A recursive kernel that waits at a barrier: serial (split at the
        // barrier), but no block aggregation (its block waits).
        let waits = "__global__ void tree(int *a, int n) {\n  __syncthreads();\n  if (n > 1) {\n#pragma dp\n    tree<<<(n + 31) / 32, 32>>>(a, n / 2);\n  }\n}\n";
        let (plan, _) = analysis(waits);
        assert_eq!(
            plan.sites[crate::plan::SiteId(0)].summary,
            format!("#pragma dp (the default: {})", defaults::RECURSIVE[1])
        );
    }

    #[test]
    fn launches_without_threshold_fall_back_where_the_child_runs_serially() {
        let child = |pragma: &str, body: &str, recursive: bool| {
            let launch = if recursive { "refine" } else { "leaf" };
            format!(
                "__global__ void leaf(int *a, int d) {{ a[threadIdx.x] += d; }}\n__global__ void refine(int *a, int d) {{\n{body}  if (threadIdx.x == 0 && d < 3) {{\n#pragma dp {pragma}\n    {launch}<<<4, 32>>>(a, d + 1);\n  }}\n}}\n"
            )
        };
        let serial = |text: &str| {
            let (plan, diagnostics) = analysis(text);
            assert!(
                !diagnostics.iter().any(Diagnostic::is_error),
                "{diagnostics:?}"
            );
            let c = &plan.children[0];
            assert!(!(plan.serial_call(c) && c.lists()));
            (c.serial, c.lists() || plan.serial_call(c))
        };
        // (serial version, fallback out of line: listed or the serial call)
        // an aggregated recursion: a serial version, its fallbacks listed
        assert_eq!(serial(&child("consldt(warp)", "", true)), (true, true));
        assert_eq!(serial(&child("consldt(grid)", "", true)), (true, false));
        // a recursion's coarsened launch
        assert_eq!(serial(&child("coarsen(4)", "", true)), (true, true));
        // an aggregated launch of another kernel: the serial version, no lists
        assert_eq!(serial(&child("consldt(warp)", "", false)), (true, false));
        // a coarsened launch of another kernel: the serial version, called
        // out of line (registers)
        assert_eq!(serial(&child("coarsen(4)", "", false)), (true, true));
        // ... a template child too (the call is a template)
        let template = child("coarsen(4)", "", false)
            .replace(
                "__global__ void leaf(int *a",
                "template <int K>\n__global__ void leaf(int *a",
            )
            .replace("leaf<<<", "leaf<2><<<");
        assert_eq!(serial(&template), (true, true));
        // a child that cannot run serially (a warp match) gets none
        let shuffle = "  a[threadIdx.x] = __match_any_sync(0xffffffffu, d);\n";
        assert_eq!(
            serial(&child("consldt(warp)", shuffle, true)),
            (false, false)
        );
        // one that every thread of the block reaches splits at it
        let shuffle = "  a[threadIdx.x] = __shfl_down_sync(0xffffffffu, d, 1);\n";
        assert_eq!(serial(&child("consldt(warp)", shuffle, true)), (true, true));
    }

    #[test]
    fn coarsening_takes_a_child_that_returns_only_after_its_barriers() {
        let codes = |child_body: &str| {
            let text = format!(
                "__global__ void child(int *a, int n) {{\n  __shared__ int s;\n{child_body}}}\n__global__ void parent(int *a, int n) {{\n#pragma dp coarsen(4)\n  child<<<n, 32>>>(a, n);\n}}\n"
            );
            let (_, diagnostics) = analysis(&text);
            diagnostics
                .iter()
                .filter(|d| d.is_error())
                .map(|d| d.kind.code())
                .collect::<Vec<_>>()
        };
        // NVIDIA's cdpSimplePrint: the block's one barrier, then the return.
        assert_eq!(
            codes("  if (threadIdx.x == 0) s = n;\n  __syncthreads();\n  a[blockIdx.x] = s;\n  if (n > 4) return;\n  a[0] = 1;\n"),
            Vec::<&str>::new()
        );
        // A thread that returned before a barrier would miss it.
        assert_eq!(
            codes("  if (threadIdx.x >= n) return;\n  __syncthreads();\n  a[0] = s;\n"),
            ["dpopt::return_with_barrier"]
        );
        // A loop takes the threads that did not return back to the barrier.
        assert_eq!(
            codes("  for (int i = 0; i < n; ++i) {\n    __syncthreads();\n    if (a[i] == 0) return;\n  }\n"),
            ["dpopt::return_with_barrier"]
        );
        // A barrier after the return, in another branch's path, with a
        // condition some threads may take and others not.
        assert_eq!(
            codes("  if (a[n] > 4) return;\n  a[0] = 1;\n  __syncthreads();\n"),
            ["dpopt::return_with_barrier"]
        );
        // The same return on a parameter: the whole block takes it or none.
        assert_eq!(
            codes("  if (n > 4) return;\n  a[0] = 1;\n  __syncthreads();\n"),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn clause_values_nothing_declares_are_warned_about_at_the_name() {
        let text = "#define TH 64\n__global__ void child(int *a) { a[0] = 1; }\n\
                    __global__ void parent(int *a) {\n#pragma dp threshold(TH) coarsen(CF)\n  child<<<1, 32>>>(a);\n}\n";
        let (_, diagnostics) = analysis(text);
        let unseen: Vec<(&str, &str)> = diagnostics
            .iter()
            .filter(|d| d.kind.code() == "dpopt::unseen_name")
            .map(|d| (d.kind.code(), &text[d.span.range()]))
            .collect();
        assert_eq!(unseen, [("dpopt::unseen_name", "CF")]);
    }

    #[test]
    fn clause_names_the_parent_cannot_see_are_errors_unless_a_header_may_define_them() {
        let codes = |pragma: &str| {
            let text = format!(
                "__global__ void child(int *a, int n) {{\n  int i = threadIdx.x;\n  if (i < n * ITEMS && n > TH) a[i] = 1;\n}}\n\
                 __global__ void parent(int *a, int th, int m) {{\n  int k = m + 1;\n{pragma}\n  child<<<(m + 63) / 64, 64>>>(a, m);\n  int late = k;\n  a[0] = late;\n}}\n"
            );
            let (_, diagnostics) = analysis(&text);
            let mut codes: Vec<&'static str> = diagnostics
                .iter()
                .map(|d| d.kind.code())
                .filter(|c| c.contains("name") || c.contains("constant"))
                .collect();
            codes.dedup();
            codes
        };
        // used in functions, declared in none: a header's macro, perhaps
        assert_eq!(
            codes("#pragma dp threshold(TH) child_threads(m * ITEMS)"),
            Vec::<&str>::new()
        );
        // the parent's parameter as a clause value
        assert_eq!(
            codes("#pragma dp threshold(th)"),
            ["dpopt::value_not_constant"]
        );
        // the parent's parameter and local before the launch: seen there
        assert_eq!(
            codes("#pragma dp threshold(64) child_threads(th + k)"),
            Vec::<&str>::new()
        );
        // another function's local, and a local declared after the launch
        assert_eq!(
            codes("#pragma dp threshold(64) child_threads(i)"),
            ["dpopt::name_not_visible"]
        );
        assert_eq!(
            codes("#pragma dp threshold(64) child_threads(late)"),
            ["dpopt::name_not_visible"]
        );
        // declared nowhere
        assert_eq!(
            codes("#pragma dp threshold(64) child_threads(q)"),
            ["dpopt::unseen_name"]
        );
    }
}
