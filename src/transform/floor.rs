//! The launch-free floor (`floor`) of one kernel: after its definition, each
//! site's work list, recording function and drain grid, the copy of the
//! kernel whose sites record large children instead of launching them, and
//! the host function that launches the copy and the drains; and the host
//! launches of the kernel, rewritten to call that function.

use super::child::params;
use super::context::{
    FloorContext, FloorDrain, FloorJoin, FloorRecursion, FloorSiteContext, KnobMacro, Resume,
};
use super::renderer::Renderer;
use super::templates::{FLOOR, FLOOR_LAUNCHER, FLOOR_RBODY};
use super::{with_newlines, OUTPUT_LINE_MARKER};
use crate::names::{self, Knob, SiteSymbols};
use crate::plan::{FloorKernel, FloorThreads, SiteId};
use crate::source::Span;
use crate::writer::{Fragment, Sink};

fn knob_macro(site: &crate::plan::Site, knob: Knob) -> Option<KnobMacro> {
    site.knob(knob).map(|k| KnobMacro {
        name: k.name.clone(),
        global: k.global(),
        value: k.value.clone(),
    })
}

/// The drain's threads per block: the child's constant block size, or the
/// threads knob.
fn drain_threads(site: &crate::plan::Site) -> String {
    match site.floor.as_ref().map(|f| f.threads) {
        Some(FloorThreads::Exact(n)) => n.to_string(),
        _ => Knob::FloorThreads.name(&site.id),
    }
}

/// The drain's threads per block: a wide queue's drain runs
/// `DPOPT_FLOOR_QUEUE_WIDTH` recorded blocks at once.
fn drain_block(site: &crate::plan::Site) -> String {
    let threads = drain_threads(site);
    if site.floor.as_ref().is_some_and(|f| f.wide) {
        format!("({threads}u * DPOPT_FLOOR_QUEUE_WIDTH({threads}u))")
    } else {
        threads
    }
}

/// One site's work list, recording function and drain kernel.
fn site_text(r: &Renderer, index: SiteId) -> String {
    let site = &r.plan.sites[index];
    let floor = site.floor.as_ref().expect("a floor site");
    let plan = r
        .plan
        .children
        .iter()
        .find(|c| c.child == site.child)
        .expect("the child's plan");
    let child = &r.program.functions[site.child];
    let exact = matches!(floor.threads, FloorThreads::Exact(_));
    // `disaggregate.cu.tera` reads a record of type `n.record`: the work
    // list's.
    let mut n = SiteSymbols::of(&site.id, &child.namespace);
    n.record = n.floor_record.clone();
    let ctx = FloorSiteContext {
        site: site.id.clone(),
        n,
        location: r.file.location(r.program.pragmas[site.pragma].span.start()),
        records: knob_macro(site, Knob::FloorRecords).expect("records knob"),
        blocks: knob_macro(site, Knob::FloorBlocks).expect("blocks knob"),
        threads_knob: knob_macro(site, Knob::FloorThreads),
        join: knob_macro(site, Knob::FloorJoin),
        threads: drain_threads(site),
        exact,
        bound: plan.guard.as_ref().map(|g| &g.bound).and_then(|bound| {
            plan.members
                .iter()
                .find(|m| &m.name == bound)
                .map(|m| (format!("dpopt_r.{}{}", m.name, m.read), bound.clone()))
        }),
        members: plan.members.iter().map(|m| m.decl.clone()).collect(),
        member_names: plan.members.iter().map(|m| m.name.clone()).collect(),
        params: params(child).declared,
        // A recursion's drain runs the copy's body (its launch records in
        // the queue), from depth 0, for the launch's ticket.
        body_fn: if floor.recursive {
            names::floor_rbody(&child.name)
        } else if plan.folds.as_ref().is_some_and(|f| !f.atomics.is_empty()) {
            names::warp_body(&child.name)
        } else {
            names::body(&child.name)
        },
        tpl_args: String::new(),
        record_args: plan
            .members
            .iter()
            .map(|m| format!(", dpopt_r.{}{}", m.name, m.read))
            .chain(floor.recursive.then(|| ", dpopt_ticket".to_string()))
            .collect(),
        coarse: site.coarsen.is_some(),
        uses_shared: plan.uses_shared,
        recursive: floor.recursive,
        block_loop: true,
        thread_loop: !exact,
        queue: floor.recursive,
        wide: floor.wide,
        drain_threads: drain_block(site),
        sub_thread: if floor.wide {
            format!("threadIdx.x - dpopt_sub * {}u", drain_threads(site))
        } else {
            "threadIdx.x".to_string()
        },
    };
    r.templates.render(&ctx)
}

/// The floor of `kernel`, inserted after its definition.
pub fn fragment(r: &Renderer, floor: &FloorKernel, resume_line: usize) -> Fragment {
    let f = &r.program.functions[floor.kernel];
    let first = &r.plan.sites[floor.sites[0]];
    let mut launcher_params = String::new();
    let mut clone_params = String::new();
    let mut names_list = Vec::new();
    for (i, p) in f.params.iter().enumerate() {
        let (decl, name) = match &p.name {
            Some(n) => (p.declaration.clone(), n.clone()),
            None => {
                let n = format!("dpopt_arg{i}");
                (format!("{} {n}", p.declaration), n)
            }
        };
        // The launcher is host code: `__grid_constant__` is the kernel's.
        launcher_params.push_str(&format!(", {}", without_grid_constant(&decl)));
        clone_params.push_str(&format!("{decl}, "));
        names_list.push(name);
    }
    // The body function takes the parameters as a device function can.
    let body_params: String = f
        .params
        .iter()
        .map(|p| format!("{}, ", without_grid_constant(&p.declaration)))
        .collect();
    let bounds = if f.launch_bounds.is_none() && r.plan.bounded.contains(&floor.kernel) {
        " DPOPT_PARENT_BOUNDS".to_string()
    } else {
        String::new()
    };
    let join_knob = |s: SiteId| {
        r.plan.sites[s]
            .knob(Knob::FloorJoin)
            .map(|k| k.name.clone())
    };
    let joins: Vec<FloorJoin> = floor
        .sites
        .iter()
        .filter_map(|&s| {
            let site = &r.plan.sites[s];
            let n = SiteSymbols::of(&site.id, &r.program.functions[site.child].namespace);
            join_knob(s).map(|knob| FloorJoin {
                knob,
                function: n.floor_join,
                count: format!("{}_count", n.floor_local),
            })
        })
        .collect();
    let args = names_list.join(", ");
    let recursive = floor
        .sites
        .iter()
        .any(|&s| r.plan.sites[s].floor.as_ref().is_some_and(|f| f.recursive));
    let (body_line, body_file) = r.file.line_directive_at(f.body.start());
    let mut ctx = FloorContext {
        template: FLOOR,
        kernel: f.name.clone(),
        location: r.file.location(f.name_span.start()),
        floor_knob: knob_macro(first, Knob::Floor).expect("floor knob"),
        sites: floor.sites.iter().map(|&s| site_text(r, s)).collect(),
        drains: floor
            .sites
            .iter()
            .map(|&s| {
                let site = &r.plan.sites[s];
                let fl = site.floor.as_ref().expect("a floor site");
                FloorDrain {
                    join: join_knob(s),
                    kernel: SiteSymbols::of(&site.id, &r.program.functions[site.child].namespace)
                        .drain,
                    threads: drain_block(site),
                    smem: fl.smem.clone().unwrap_or_else(|| "0".to_string()),
                    blocks: Knob::FloorBlocks.name(&site.id),
                    queue: fl.recursive,
                    exact: match fl.threads {
                        FloorThreads::Exact(n) => Some(n),
                        _ => None,
                    },
                    host_args: if fl.recursive {
                        names_list.iter().map(|n| format!(", {n}")).collect()
                    } else {
                        String::new()
                    },
                }
            })
            .collect(),
        clone: names::floor_copy(&f.name),
        launcher: names::floor_launcher(&f.name),
        specifiers: r.head_specifiers(f).join(" "),
        bounds,
        body_fn: names::floor_body(&f.name),
        body_params,
        joins,
        clone_params,
        launcher_params,
        args_lead: names_list.iter().map(|n| format!("{n}, ")).collect(),
        args,
        body_line,
        body_file,
        recursion: recursive.then(|| {
            let p = params(f);
            FloorRecursion {
                rbody: names::floor_rbody(&f.name),
                serial: names::floor_serial(&f.name),
                params: p.declared,
                arg_names: p.names,
            }
        }),
        resume: Resume {
            line_out: OUTPUT_LINE_MARKER,
            resume_line,
            file: r.file.quoted_name(),
        },
    };
    // The copy's head, the body as the user wrote it (its sites recording
    // for the drains), then the launcher.
    let render = |ctx: &FloorContext| {
        r.codec
            .to_bytes(&with_newlines(&r.templates.render(ctx), r.file.newline))
    };
    let mut out = Fragment::generated_bytes(render(&ctx));
    r.for_floor().render_into(&mut out, f.body, None, &[]);
    if recursive {
        // The body again, as the function the queue's drain and the serial
        // version run: builtins as parameters, its launch recording.
        ctx.template = FLOOR_RBODY;
        out.generated(&render(&ctx));
        r.for_floor()
            .render_into(&mut out, f.body, Some(floor.kernel), r.position_calls());
    }
    ctx.template = FLOOR_LAUNCHER;
    out.generated(&render(&ctx));
    out
}

/// A parameter declaration without `__grid_constant__`, which only a
/// kernel's parameters may carry.
fn without_grid_constant(declaration: &str) -> String {
    if !declaration.contains("__grid_constant__") {
        return declaration.to_string();
    }
    declaration
        .split_whitespace()
        .filter(|w| *w != "__grid_constant__")
        .collect::<Vec<_>>()
        .join(" ")
}

/// The host launches of `kernel` rewritten to call the floor's launcher:
/// `k<<<g, b>>>(x)` becomes `dpopt_floor_launch_k(g, b, 0, 0, x)`, the
/// configuration and arguments kept as written (and on their lines).
pub fn host_launches(r: &Renderer, floor: &FloorKernel) -> Vec<(Span, String)> {
    let f = &r.program.functions[floor.kernel];
    let view = &r.file.view;
    let mut out = Vec::new();
    for &l in &floor.host_launches {
        let launch = &r.program.launches[l];
        let kernel_text = &view[launch.kernel_span.range()];
        let qualifier: String = kernel_text.rfind("::").map_or(String::new(), |i| {
            kernel_text[..i + 2].split_whitespace().collect()
        });
        out.push((
            Span::new(launch.kernel_span.start(), launch.open_chevrons.end()),
            format!("{qualifier}{}(", names::floor_launcher(&f.name)),
        ));
        let close = launch.close_chevrons.start();
        let paren = r.program.sig[r.program.sig_index_at(launch.config_span.end())].end;
        let mut text = ", 0".repeat(4 - launch.config.len());
        if !launch.args.is_empty() {
            text.push_str(", ");
        }
        out.push((Span::new(close, paren), text));
    }
    out
}
