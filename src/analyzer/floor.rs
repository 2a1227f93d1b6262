//! The launch-free floor (`floor`): the kernels that get a copy making no
//! device-runtime call, run from the host with a drain grid per site after
//! it, and what refuses it. The copy must make no launch and no runtime call
//! (except reads of the last error, which are `cudaSuccess` there), the
//! children must make none either (the drain runs their bodies), and every
//! host launch of the kernel in the input must see the launcher.

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::hazard::{Hazard, Hazards};
use crate::plan::{FloorKernel, FloorThreads, Plan, SiteId};
use crate::program::{FunctionId, LaunchId, Program, Resolution};
use crate::source::SourceFile;
use crate::source::Span;
use crate::token::calls;
use std::collections::BTreeMap;

pub(super) struct Floors {
    pub kernels: Vec<FloorKernel>,
    /// The sites whose recorded children the copy's own blocks can run
    /// (`Floor::join`).
    pub joins: Vec<SiteId>,
    /// The recursive sites (the child is the kernel): `Floor::recursive`;
    /// true where the drain runs several recorded blocks per block
    /// (`Floor::wide`: the child runs in any block shape, its block size a
    /// constant).
    pub recursions: Vec<(SiteId, bool)>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Whether the copy's blocks can run a site's recorded children: they run
/// them in their own block shape, several child blocks at a time, so the
/// child must not wait for, or share memory with, the other threads of its
/// block or warp, must not need launch-time shared memory, and must show
/// dpopt all it does.
fn joinable(hazards: &Hazards, child: FunctionId, smem: &Option<String>) -> bool {
    smem.is_none()
        && hazards
            .of(child)
            .first_of(&crate::hazard::NOT_SERIALIZABLE, |_| true)
            .is_none()
}

/// Device-runtime calls of the parent itself that its launch-free copy
/// stands in for without a call (`transform/renderer.rs`): reads of the
/// last error (`cudaSuccess` there), and the streams a parent creates for
/// its children and destroys (the copy launches nothing: the null stream).
pub(crate) const COPY_STANDS_IN: &[&str] = &[
    "cudaGetLastError",
    "cudaPeekAtLastError",
    "cudaStreamCreateWithFlags",
    "cudaStreamDestroy",
];

/// A launch or device-runtime call in a function or what it calls.
struct RuntimeUse {
    /// Where (a call of the function holding it, for a callee's).
    span: Span,
    what: String,
    /// The construct itself, when it is in a callee.
    inner: Option<Span>,
}

/// The first launch or device-runtime call (`cuda...(`) in `function` or a
/// device function it calls, other than the launches `allowed` and, when
/// `last_error_ok`, reads of the last error in `function` itself.
fn runtime_use(
    program: &Program,
    function: FunctionId,
    allowed: &[LaunchId],
    last_error_ok: bool,
) -> Option<RuntimeUse> {
    let view = program.view.as_str();
    let mut seen = vec![function];
    // Code in `#if` branches the command line's `-D` rules out is not compiled.
    let ruled_out = crate::conditional::ruled_out(program);
    let compiled = |offset: usize| {
        !program
            .condition_at(offset)
            .iter()
            .any(|b| ruled_out.contains(b))
    };
    let own = |f: FunctionId, last_error_ok: bool| -> Option<(Span, String)> {
        let body = program.functions[f].body;
        let launch = program
            .launches
            .with_ids()
            .find(|(i, l)| {
                l.function == Some(f) && !allowed.contains(i) && compiled(l.span.start())
            })
            .map(|(_, l)| (l.span, format!("launches `{}`", l.kernel.trim())));
        let sig = program.sig_in(body);
        let call = calls(sig, view)
            .find(|&(i, name)| {
                // A final wait that `--migrate-sync` drops (in the copy too).
                let dropped = || {
                    program.migrate_sync
                        && crate::postwork::SYNC_CALLS.contains(&name)
                        && crate::postwork::is_dropped(
                            program,
                            f,
                            program.sig_index_at(sig[i].start),
                            &ruled_out,
                        )
                };
                name.starts_with("cuda")
                    && !(last_error_ok && (COPY_STANDS_IN.contains(&name) || dropped()))
                    && compiled(sig[i].start)
            })
            .map(|(i, name)| (sig[i].span(), format!("calls `{name}` (device runtime)")));
        [launch, call]
            .into_iter()
            .flatten()
            .min_by_key(|(r, _)| r.start())
    };
    if let Some((span, what)) = own(function, last_error_ok) {
        return Some(RuntimeUse {
            span,
            what,
            inner: None,
        });
    }
    // Device functions of the file it calls, through any chain of calls:
    // reported at the call in `function`.
    let sig = program.sig_in(program.functions[function].body);
    for (i, name) in calls(sig, view) {
        let callees = match program.resolve(name, Some(function), sig[i].start, None) {
            Resolution::Found(f) => vec![f],
            Resolution::Ambiguous(all) => all,
            Resolution::NotFound => Vec::new(),
        };
        let mut stack: Vec<FunctionId> = callees
            .into_iter()
            .filter(|&f| program.functions[f].space.device && !program.functions[f].space.global)
            .collect();
        while let Some(f) = stack.pop() {
            if seen.contains(&f) {
                continue;
            }
            seen.push(f);
            if let Some((inner, what)) = own(f, false) {
                return Some(RuntimeUse {
                    span: sig[i].span(),
                    what: format!("calls `{name}`, which {what}"),
                    inner: Some(inner),
                });
            }
            let body = program.sig_in(program.functions[f].body);
            for (k, callee) in calls(body, view) {
                if let Resolution::Found(g) = program.resolve(callee, Some(f), body[k].start, None)
                {
                    if program.functions[g].space.device && !program.functions[g].space.global {
                        stack.push(g);
                    }
                }
            }
        }
    }
    None
}

fn refused(kernel: &str, span: Span, label: &str, why: String, fix: &str) -> Diagnostic {
    Diagnostic::new(
        DiagnosticKind::FloorRefused {
            kernel: kernel.to_string(),
            why,
            fix: fix.to_string(),
        },
        span,
        label.to_string(),
    )
}

/// The kernels with `floor` sites, their host launches, and why a floor
/// cannot be applied.
pub(super) fn floors(
    file: &SourceFile,
    program: &Program,
    plan: &Plan,
    hazards: &Hazards,
) -> Floors {
    let mut diagnostics = Vec::new();
    let mut by_parent: BTreeMap<FunctionId, Vec<SiteId>> = BTreeMap::new();
    for (i, site) in plan.sites.with_ids() {
        if site.floor.is_some() {
            by_parent.entry(site.parent).or_default().push(i);
        }
    }
    let mut kernels = Vec::new();
    let mut joins = Vec::new();
    let mut recursions = Vec::new();
    for (parent, sites) in by_parent {
        let f = &program.functions[parent];
        let pragma = |s: SiteId| program.pragmas[plan.sites[s].pragma].span;
        let at = pragma(sites[0]);
        let before = diagnostics.len();
        let refuse = |span: Span, label: &str, why: String, fix: &str| {
            refused(&f.name, span, label, why, fix).with_note(at, "`floor` requested here")
        };
        if !f.space.global {
            diagnostics.push(refuse(
                f.name_span,
                "a device function",
                format!("the launch is in `__device__` function `{}`, and the floor copies the kernel that holds the launch, chosen by the host", f.name),
                "put the launch in the `__global__` kernel itself, or remove `floor`",
            ));
            continue;
        }
        if f.template_header.is_some() {
            diagnostics.push(refuse(
                f.name_span,
                "a template kernel",
                "it is a template kernel".to_string(),
                "remove `floor` (template parents are not copied yet)",
            ));
            continue;
        }
        let allowed: Vec<LaunchId> = sites.iter().map(|&s| plan.sites[s].launch).collect();
        if let Some(u) = runtime_use(program, parent, &allowed, true) {
            let why = format!(
                "it {} here; its launch-free copy must make no launch and no device-runtime call (except `cudaGetLastError()`/`cudaPeekAtLastError()`, which read `cudaSuccess` there, and `cudaStreamCreateWithFlags()`/`cudaStreamDestroy()` of the streams for its children, which give the null stream there)",
                u.what
            );
            // a recursion with several launches cannot have `floor` on all of them
            let own: Vec<&crate::program::Launch> = program
                .launches
                .iter()
                .filter(|l| l.function == Some(parent))
                .collect();
            let recursion = own
                .iter()
                .any(|l| program.launched_kernels(l).contains(&parent));
            let fix = if recursion && own.len() > 1 && u.what.starts_with("launches") {
                "the drain of a recursion runs the kernel's whole body, so a recursive `floor` kernel may launch only once: move the other launches to a kernel of their own, or remove `floor`"
            } else if u.what.contains("Synchronize`") && !program.migrate_sync {
                "a CDP1 wait that is the last thing its thread runs is dropped by `dpopt transform --migrate-sync`, which then accepts `floor`; otherwise put `#pragma dp ... floor` on every launch of the kernel and keep other device-runtime calls out of it, or remove `floor`"
            } else {
                "put `#pragma dp ... floor` on every launch of the kernel and keep other device-runtime calls out of it (and of the functions it calls), or remove `floor`"
            };
            match u.inner {
                Some(inner) => diagnostics.push(
                    refused(&f.name, u.span, "this call", why, fix)
                        .with_note(inner, "here")
                        .with_note(at, "`floor` requested here"),
                ),
                None => diagnostics.push(refuse(u.span, "in the kernel", why, fix)),
            }
        }
        for &s in &sites {
            let site = &plan.sites[s];
            let child = &program.functions[site.child];
            let floor = site.floor.as_ref().expect("a floor site");
            let launch_span = program.launches[site.launch].kernel_span;
            let recursive = site.child == parent;
            if recursive && sites.len() > 1 {
                diagnostics.push(refuse(
                    launch_span,
                    "a recursive launch",
                    format!(
                        "`{}` launches itself here and has {} `floor` sites; the drain of a recursion runs the kernel's whole body, so the recursive launch must be its only one",
                        f.name,
                        sites.len()
                    ),
                    "keep one launch in a recursive `floor` kernel (move the others to a kernel of their own), or remove `floor`",
                ));
                continue;
            }
            if !site.alternatives.is_empty() || child.template_header.is_some() {
                diagnostics.push(refuse(
                    launch_span,
                    "this child",
                    format!("its child `{}` is {}", child.name, if child.template_header.is_some() {
                        "a template kernel"
                    } else {
                        "defined in several `#if` branches"
                    }),
                    "remove `floor` from this pragma (template children keep the device-side launch)",
                ));
                continue;
            }
            // A recursive child is the kernel, whose only launch is this
            // site (checked above): the drain runs the copy's body.
            if let Some(u) = (!recursive)
                .then(|| runtime_use(program, site.child, &[], false))
                .flatten()
            {
                let mut d = refused(
                    &f.name,
                    launch_span,
                    "this child",
                    format!(
                        "its child `{}` {}; the drain grid runs the child's body and can make no launch or device-runtime call",
                        child.name, u.what
                    ),
                    "remove `floor` from this pragma (children that launch keep the device-side launch)",
                )
                .with_note(u.span, "here");
                if let Some(inner) = u.inner {
                    d = d.with_note(inner, "inside");
                }
                diagnostics.push(d.with_note(at, "`floor` requested here"));
                continue;
            }
            let summary = hazards.of(site.child);
            let mut waits = vec![Hazard::Grid];
            if floor.threads == FloorThreads::Loop {
                waits.extend([Hazard::Block, Hazard::Warp, Hazard::Unseen]);
            }
            if let Some(finding) = summary.first_of(&waits, |_| true) {
                let why = if finding.hazard == Hazard::Grid {
                    format!(
                        "its child `{}` uses `{}`, and the drain grid runs the recorded blocks in turn, not side by side",
                        child.name, finding.construct
                    )
                } else {
                    format!(
                        "the block size of `{}` is not a constant, so each drain thread runs several of the child's threads in turn, and the child uses `{}`",
                        child.name, finding.construct
                    )
                };
                diagnostics.push(
                    refused(
                        &f.name,
                        finding.span,
                        "needs the child's threads together",
                        why,
                        "launch the child with a constant block size (a literal or a macro the file defines), or remove `floor`",
                    )
                    .with_note(pragma(s), "`floor` requested here"),
                );
                continue;
            }
            // The drain calls the child's body, defined after the child: the
            // floor's code after the parent must come later.
            let child_code = plan
                .children
                .iter()
                .find(|c| c.child == site.child)
                .map_or(child.body.end(), |c| {
                    c.elsewhere.unwrap_or(child.body.end())
                });
            if !recursive && child_code > f.body.start() {
                diagnostics.push(
                    refused(
                        &f.name,
                        launch_span,
                        "defined after the kernel",
                        format!(
                            "its child `{}` is defined after it, and the drain, defined after `{}`, runs the child's body",
                            child.name, f.name
                        ),
                        "define the child (or include its header) before the parent kernel, or remove `floor`",
                    )
                    .with_note(pragma(s), "`floor` requested here"),
                );
                continue;
            }
            let any_shape = joinable(hazards, site.child, &floor.smem);
            if recursive {
                recursions.push((
                    s,
                    any_shape && matches!(floor.threads, FloorThreads::Exact(_)),
                ));
            } else if any_shape {
                joins.push(s);
            }
        }
        // Host launches of the kernel in the input call the launcher, which
        // is defined after the kernel.
        let mut host_launches = Vec::new();
        for (i, l) in program.launches.with_ids() {
            let Some(h) = l.function else { continue };
            if program.functions[h].space.runs_on_device()
                || !file.in_input(l.span.start())
                || program.launched_kernels(l) != [parent]
            {
                continue;
            }
            let problem = if l.template_args.is_some() {
                Some("it names template arguments".to_string())
            } else if !(2..=4).contains(&l.config.len()) {
                Some("its configuration is not `<<<grid, block[, smem[, stream]]>>>`".to_string())
            } else if l.span.start() < f.body.end() {
                Some(format!(
                    "it comes before the definition of `{}`, after which the floor's launcher is defined",
                    f.name
                ))
            } else {
                None
            };
            match problem {
                Some(why) => diagnostics.push(
                    refused(
                        &f.name,
                        l.span,
                        "host launch",
                        format!("this host launch cannot call the launch-free copy: {why}"),
                        "launch the kernel after its definition as `kernel<<<grid, block[, smem[, stream]]>>>(args)`, or remove `floor`",
                    )
                    .with_note(at, "`floor` requested here"),
                ),
                None => host_launches.push(i),
            }
        }
        if diagnostics.len() > before {
            continue;
        }
        if host_launches.is_empty() {
            diagnostics.push(Diagnostic::new(
                DiagnosticKind::FloorUnused {
                    kernel: f.name.clone(),
                },
                at,
                "`floor` requested here",
            ));
        }
        kernels.push(FloorKernel {
            kernel: parent,
            sites,
            host_launches,
        });
    }
    Floors {
        kernels,
        joins,
        recursions,
        diagnostics,
    }
}
