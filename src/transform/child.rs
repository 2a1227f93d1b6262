//! Definitions shared by every site of one child kernel: the tuning macros
//! and declarations (before the first function that needs them) and the body
//! function, serial version and coarsened kernel (after the child).

use super::context::{
    AggregationContext, BlockAggregation, BodyContext, DeclarationsContext, DeferContext,
    DefinitionsContext, DirectLaunch, Fold, FoldContext, KnobMacro, MacroEntry, Resume,
    SerialVersion, TemplateContext,
};
use super::renderer::Renderer;
use super::templates::{AGGREGATION, AGGREGATION_BLOCK, AGGREGATION_GRID, FOLD, WARP_FOLD};

/// What the leading guard `if (i >= n) return;` becomes in the serial
/// version's copy of the body (`SerialVersion::guard_free`).
const GUARD_LEFT_OUT: &str =
    "/* dpopt: the bounds test, left out: this copy runs only below the bound */";
use super::{with_newlines, OUTPUT_LINE_MARKER};
use crate::names::{self, Knob, SiteSymbols};
use crate::plan::{ChildPlan, SiteId};
use crate::program::Function;
use crate::record::Member;
use crate::writer::{Fragment, Sink};

/// What a folded atomic's `atomicAdd(` becomes in a copy of the body, from
/// its index and fold.
type FoldCall = fn(usize, &Fold) -> String;

/// Parameter lists in the forms the templates need.
pub(super) struct Params {
    /// `, T *a, int n` (each unnamed parameter gets a name).
    pub(super) declared: String,
    /// The same with default arguments, for the first declaration.
    pub(super) with_defaults: String,
    /// `, a, n`
    pub(super) names: String,
}

pub(super) fn params(child: &Function) -> Params {
    let mut p = Params {
        declared: String::new(),
        with_defaults: String::new(),
        names: String::new(),
    };
    for (i, param) in child.params.iter().enumerate() {
        let (decl, name) = match &param.name {
            Some(n) => (param.declaration.clone(), n.clone()),
            None => {
                let n = format!("dpopt_arg{i}");
                (format!("{} {}", param.declaration, n), n)
            }
        };
        p.declared.push_str(&format!(", {decl}"));
        match &param.default {
            Some(d) => p.with_defaults.push_str(&format!(", {decl} = {d}")),
            None => p.with_defaults.push_str(&format!(", {decl}")),
        }
        p.names.push_str(&format!(", {name}"));
    }
    p
}

/// The launch bounds of the child's generated kernels: a recursive child's
/// hold its rewritten launch too, bounded like the child when it is one of
/// the bounded kernels.
fn launch_bounds(r: &Renderer, plan: &ChildPlan) -> String {
    let child = &r.program.functions[plan.child];
    match &child.launch_bounds {
        Some(l) => format!("{l} "),
        None if r.plan.bounded.contains(&plan.child) => "DPOPT_PARENT_BOUNDS ".to_string(),
        None => String::new(),
    }
}

/// The child's counted kernel, when some launch dpopt makes of it is not
/// coarsened: a site without `coarsen`, or the deferral queue (which keeps
/// both kinds of launch).
fn counted(r: &Renderer, plan: &ChildPlan) -> Option<String> {
    let child = &r.program.functions[plan.child];
    let uncoarsened = plan
        .sites
        .iter()
        .any(|&s| r.plan.sites[s].coarsen.is_none());
    (uncoarsened || plan.defers).then(|| names::counted(&child.name))
}

fn resume(r: &Renderer, resume_line: usize) -> Resume {
    Resume {
        line_out: OUTPUT_LINE_MARKER,
        resume_line,
        file: r.file.quoted_name(),
    }
}

fn depth_macro(child: &Function) -> String {
    Knob::SerialDepth.name(&child.symbol)
}

/// Macros and declarations, inserted before `plan.declare_at`.
pub fn declarations(r: &Renderer, plan: &ChildPlan, resume_line: usize) -> Vec<u8> {
    let child = &r.program.functions[plan.child];
    // The knobs the declarations define (the aggregation templates define
    // their pools' and groups').
    let mut macros = Vec::new();
    for &s in &plan.sites {
        let site = &r.plan.sites[s];
        let location = r.file.location(r.program.pragmas[site.pragma].span.start());
        let knobs = &site.knobs;
        for kind in [Knob::Threshold, Knob::AggThreshold, Knob::Coarsen] {
            for k in knobs.iter().filter(|k| k.knob == kind) {
                macros.push(MacroEntry {
                    name: k.name.clone(),
                    global: k.global(),
                    value: k.value.clone(),
                    what: kind.what(),
                    site: site.id.clone(),
                    location: location.clone(),
                });
            }
        }
    }
    let ctx = DeclarationsContext {
        child: child.name.clone(),
        macros,
        serial: plan.serial.then(|| names::serial(&child.name)),
        serial_folded: plan
            .folds
            .as_ref()
            .map(|_| names::serial_folded(&child.name)),
        coarse: plan.coarse.then(|| names::coarse(&child.name)),
        counted: counted(r, plan),
        defer: plan.defers.then(|| names::defer(&child.name)),
        serial_call: r
            .plan
            .serial_call(plan)
            .then(|| names::serial_call(&child.name)),
        lists: plan.lists().then(|| names::DeferSymbols::of(&child.name)),
        aggregated: plan
            .sites
            .iter()
            .map(|&s| &r.plan.sites[s])
            .filter(|s| s.aggregation.is_some())
            .map(|s| s.id.clone())
            .collect(),
        stat_sites: plan
            .sites
            .iter()
            .map(|&s| SiteSymbols::of(&r.plan.sites[s].id, &child.namespace))
            .collect(),
        scope: names::scope(&child.namespace),
        recursive: plan.recursive,
        depth_macro: depth_macro(child),
        serial_depth: crate::plan::DEFAULT_SERIAL_DEPTH,
        template_header: child
            .template_header
            .as_ref()
            .map(|h| format!("{h} "))
            .unwrap_or_default(),
        params_with_defaults: params(child).with_defaults,
        launch_bounds: launch_bounds(r, plan),
        resume: resume(r, resume_line),
    };
    render(r, &ctx)
}

/// Body function, serial version and coarsened kernel, inserted after the
/// child's definition: the body function's head, the child's body (the
/// user's bytes, builtins replaced by parameters), the rest.
pub fn definitions(r: &Renderer, plan: &ChildPlan, resume_line: usize) -> Fragment {
    let child = &r.program.functions[plan.child];
    let p = params(child);
    let tpl = TemplateParts::of(child);
    let serial = plan.serial.then(|| names::serial(&child.name));
    let coarse = plan.coarse.then(|| names::coarse(&child.name));
    let deferral = if plan.defers {
        let queue = &plan.members;
        let reads: Vec<String> = queue
            .iter()
            .map(|m| format!("dpopt_r.{}{}", m.name, m.read))
            .collect();
        r.templates.render(&DeferContext {
            child: child.name.clone(),
            counted: names::counted(&child.name),
            q: names::DeferSymbols::of(&child.name),
            defer: names::defer(&child.name),
            serial: names::serial(&child.name),
            coarse: coarse.clone(),
            recursive: plan.lists(),
            depth_macro: depth_macro(child),
            params: p.declared.clone(),
            defer_members: queue.iter().map(|m| m.decl.clone()).collect(),
            defer_names: queue.iter().map(|m| m.name.clone()).collect(),
            defer_args: reads.join(", "),
            defer_reads: reads.iter().map(|r| format!(", {r}")).collect(),
            args: p.names.clone(),
        })
    } else {
        String::new()
    };
    // The body's own file and line (a header's, for a child defined there).
    let (body_line, body_file) = r.file.line_directive_at(child.body.start());
    let head = BodyContext {
        child: child.name.clone(),
        template_header: tpl.header.clone(),
        inline: "__forceinline__ ",
        body_fn: names::body(&child.name),
        recursive: plan.recursive,
        params: p.declared.clone(),
        body_line,
        body_file,
        line_out: OUTPUT_LINE_MARKER,
    };
    // A child with folds has a serial version (`ChildPlan::folds`).
    let folds: Vec<Fold> = plan
        .folds
        .iter()
        .flat_map(|f| f.atomics.iter())
        .enumerate()
        .map(|(k, a)| Fold {
            name: names::fold(&child.name, k),
            warp_name: names::warp_fold(&child.name, k),
            value_type: a.value_type,
            register_type: a.register_type,
            identity: a.identity,
            location: r.file.location(a.head.start()),
        })
        .collect();
    let ctx = DefinitionsContext {
        child: child.name.clone(),
        serial_versions: serial
            .iter()
            .filter(|_| plan.phased.is_none())
            .map(|name| SerialVersion {
                name: name.clone(),
                run_fn: names::body(&child.name),
                folded: false,
                guard_free: false,
            })
            .chain(plan.folds.is_some().then(|| SerialVersion {
                name: names::serial_folded(&child.name),
                run_fn: names::serial_body(&child.name),
                folded: true,
                guard_free: plan.guard.is_some(),
            }))
            .collect(),
        fold_atomic: plan.folds.as_ref().map_or("", |f| f.op.atomic()),
        folds,
        template_header: tpl.header,
        template_names: tpl.args,
        body_fn: names::body(&child.name),
        recursive: plan.recursive,
        params: p.declared,
        arg_names: p.names,
        serial,
        serial_call: r
            .plan
            .serial_call(plan)
            .then(|| names::serial_call(&child.name)),
        serial_bound: plan.guard.as_ref().map(|g| g.bound.clone()),
        serial_index_only: plan.guard.as_ref().is_some_and(|g| g.index_only),
        coarse,
        counted: counted(r, plan),
        launch_bounds: launch_bounds(r, plan),
        uses_shared: plan.uses_shared,
        deferral,
        aggregation: plan
            .sites
            .iter()
            .filter(|&&s| r.plan.sites[s].aggregation.is_some())
            .map(|&s| aggregation(r, plan, s))
            .collect(),
        resume: resume(r, resume_line),
    };
    let mut out = Fragment::generated_bytes(render(r, &head));
    let positions = r.position_calls();
    r.render_into(&mut out, child.body, Some(plan.child), positions);
    if let Some(folds) = &plan.folds {
        // Two more copies of the body: the serial version's (each folded
        // atomic's `atomicAdd(` becomes `fold(at, run, `) and the drains'
        // (it becomes the per-warp function's `name(`); the address and
        // the value stay the user's bytes.
        let copies: [(&'static str, String, FoldCall); 2] = [
            (FOLD, names::serial_body(&child.name), |k, f| {
                format!("{}(dpopt_at{k}, dpopt_run{k}, ", f.name)
            }),
            (WARP_FOLD, names::warp_body(&child.name), |_, f| {
                format!("{}(", f.warp_name)
            }),
        ];
        // without atomics to fold, the drains run the body itself
        for (template, copy_fn, call) in copies
            .into_iter()
            .filter(|&(t, _, _)| t == FOLD || !folds.atomics.is_empty())
        {
            let fold = FoldContext {
                template,
                child: child.name.clone(),
                template_header: head.template_header.clone(),
                copy_fn,
                params: head.params.clone(),
                atomic: folds.op.atomic(),
                op: folds.op,
                folds: ctx.folds.clone(),
                body_line: head.body_line,
                body_file: head.body_file.clone(),
                line_out: OUTPUT_LINE_MARKER,
            };
            out.generated(&render(r, &fold));
            let mut calls: Vec<(crate::source::Span, String)> = folds
                .atomics
                .iter()
                .zip(&ctx.folds)
                .enumerate()
                .map(|(k, (a, f))| (a.head, call(k, f)))
                .collect();
            // The serial version's copy runs only below the guard's bound
            // (its 1-D loop): without the test, the compiler overlaps the
            // loads of consecutive child threads as it does in a loop of
            // the flat code.
            if let (FOLD, Some(guard)) = (template, &plan.guard) {
                calls.push((guard.statement, GUARD_LEFT_OUT.to_string()));
            }
            calls.extend(positions.iter().cloned());
            r.render_into(&mut out, child.body, Some(plan.child), &calls);
        }
    }
    if let (Some(phased), Some(name)) = (&plan.phased, &ctx.serial) {
        out.append(super::serial_split::serial_split(
            r,
            plan,
            phased,
            name.clone(),
            head.template_header.clone(),
            head.params.clone(),
        ));
    }
    out.generated(&render(r, &ctx));
    out
}

/// Is the site's launch written into `cudaStreamTailLaunch` (knosvoxel's
/// BFS elects its grid's last block, which launches the next level there:
/// the next level must not start before every block of this one is done)?
fn tail_launched(r: &Renderer, site: &crate::plan::Site) -> bool {
    let launch = &r.program.launches[site.launch];
    matches!(
        super::site::written_stream(r.program, launch).as_deref(),
        Some("cudaStreamTailLaunch" | "(cudaStreamTailLaunch)")
    )
}

/// The record type, aggregated kernel and launcher of one aggregated site.
fn aggregation(r: &Renderer, plan: &ChildPlan, index: SiteId) -> String {
    let site = &r.plan.sites[index];
    let aggregation = site.aggregation.as_ref().expect("an aggregated site");
    let child = &r.program.functions[plan.child];
    let p = params(child);
    // A template child: every entity of the site is a template over the
    // child's parameters, which the site's launch names or deduces.
    let tpl = TemplateParts::of(child);
    let targs = &tpl.args;
    let (mut varying, mut invariant, mut varying_names, mut invariant_names) =
        (vec![], vec![], vec![], vec![]);
    let mut record_args = String::new();
    let mut pool_args = Vec::new();
    for (i, Member { decl, name, read }) in plan.members.iter().cloned().enumerate() {
        // An argument left to its default is the same for every parent.
        let varies = aggregation.varying.get(i).copied().unwrap_or(false);
        if varies {
            varying.push(decl);
            record_args.push_str(&format!(", dpopt_r.{name}{read}"));
            pool_args.push(format!("dpopt_r.{name}{read}"));
            varying_names.push(name);
        } else {
            invariant.push(decl);
            record_args.push_str(&format!(", dpopt_s.{name}{read}"));
            pool_args.push(format!("dpopt_s.{name}{read}"));
            invariant_names.push(name);
        }
    }
    let symbols = SiteSymbols::of(&site.id, &child.namespace);
    let direct = DirectLaunch {
        child: child.name.clone(),
        counted_fn: names::counted(&child.name),
        coarse_fn: names::coarse(&child.name),
        coarse: site.coarsen.is_some(),
        // With a serial version (some site thresholds this child), a direct
        // launch that finds no room (pending-launch limit) runs serially
        // instead (templates/recover.cu.tera).
        // A recursive child's runs through its listed runner (no depth).
        serial_fn: plan.serial.then(|| {
            if plan.lists() {
                names::DeferSymbols::of(&child.name).runner
            } else {
                names::serial(&child.name)
            }
        }),
        // Grid aggregation's fallbacks never defer.
        defer_fn: (plan.defers && aggregation.granularity != crate::pragma::Granularity::Grid)
            .then(|| names::defer(&child.name)),
        depth: if plan.recursive && !plan.lists() {
            format!(", {}", Knob::SerialDepth.name(&child.symbol))
        } else {
            String::new()
        },
        targs: targs.clone(),
        arg_names: p.names.clone(),
        stats_of: symbols.stats_of.clone(),
    };
    let blocks = aggregation.blocks.as_ref().map(|v| v.to_source());
    let threads = aggregation.threads.as_ref().map(|v| v.to_source());
    use crate::pragma::Granularity;
    let pooled = matches!(
        aggregation.granularity,
        Granularity::Grid | Granularity::MultiBlock
    );
    if aggregation.granularity == Granularity::Grid {
        let args = pool_args.join(", ");
        record_args = format!("{}{}", if args.is_empty() { "" } else { ", " }, args);
    }
    // The site's pool and group knobs, defined by the templates.
    let knob = |kind: Knob| {
        site.knob(kind).map(|k| KnobMacro {
            name: k.name.clone(),
            global: k.global(),
            value: k.value.clone(),
        })
    };
    let ctx = AggregationContext {
        template: match aggregation.granularity {
            Granularity::Warp => AGGREGATION,
            Granularity::Grid => AGGREGATION_GRID,
            Granularity::Block | Granularity::MultiBlock => AGGREGATION_BLOCK,
        },
        site: site.id.clone(),
        n: symbols,
        location: r.file.location(r.program.pragmas[site.pragma].span.start()),
        child: child.name.clone(),
        body_fn: names::body(&child.name),
        params: p.declared.clone(),
        recursive: plan.recursive,
        agg_bounds: if r.plan.bounded.contains(&plan.child) {
            "DPOPT_PARENT_BOUNDS "
        } else {
            ""
        },
        tpl: tpl.header.clone(),
        tpl_args: tpl.args.clone(),
        tpl_lead: tpl.lead,
        tpl_args_lead: tpl.args_lead,
        coarse: site.coarsen.is_some(),
        agg_stream: if tail_launched(r, site) {
            "cudaStreamTailLaunch".to_string()
        } else {
            "DPOPT_AGG_STREAM".to_string()
        },
        varying,
        invariant,
        varying_names,
        invariant_names,
        record_args,
        uses_shared: plan.uses_shared,
        agg_threshold: aggregation.agg_threshold.is_some(),
        agg_threshold_macro: site.agg_threshold_macro(),
        asserted: aggregation.asserted,
        direct,
        block_loop: blocks.is_some(),
        thread_loop: threads.is_some(),
        agg_blocks: blocks.unwrap_or_default(),
        agg_threads: threads.unwrap_or_default(),
        pool_args: if pooled { pool_args } else { Vec::new() },
        pools: knob(Knob::Pools),
        pool_records: knob(Knob::PoolRecords),
        blocks: matches!(
            aggregation.granularity,
            Granularity::Block | Granularity::MultiBlock
        )
        .then(|| BlockAggregation {
            multiblock: aggregation.granularity == Granularity::MultiBlock,
            group: knob(Knob::Group).unwrap_or_else(|| KnobMacro {
                name: Knob::Group.name(&site.id),
                global: Knob::Group.global(),
                value: aggregation.group.to_source(),
            }),
            pool_blocks: knob(Knob::PoolBlocks).unwrap_or_else(|| KnobMacro {
                name: Knob::PoolBlocks.name(&site.id),
                global: Knob::PoolBlocks.global(),
                value: aggregation.pool_blocks.to_string(),
            }),
        }),
    };
    r.templates.render(&ctx)
}

/// A template child's parameters as generated code needs them (all empty
/// for a child that is no template).
struct TemplateParts {
    /// `template <typename T, int N> ` (no defaults).
    header: String,
    /// `<T, N>`.
    args: String,
    /// `typename T, int N, `: before further parameters of a template.
    lead: String,
    /// `T, N, `: before further arguments.
    args_lead: String,
}

impl TemplateParts {
    fn of(child: &crate::program::Function) -> TemplateParts {
        if child.template_params.is_empty() {
            return TemplateParts {
                header: String::new(),
                args: String::new(),
                lead: String::new(),
                args_lead: String::new(),
            };
        }
        let decls: Vec<&str> = child
            .template_params
            .iter()
            .map(|t| t.declaration.as_str())
            .collect();
        let names: Vec<&str> = child
            .template_params
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        TemplateParts {
            header: format!("template <{}> ", decls.join(", ")),
            args: format!("<{}>", names.join(", ")),
            lead: format!("{}, ", decls.join(", ")),
            args_lead: format!("{}, ", names.join(", ")),
        }
    }
}

fn render<C: TemplateContext>(r: &Renderer, ctx: &C) -> Vec<u8> {
    to_output(r, &r.templates.render(ctx))
}

/// Generated text as the output's bytes (its line breaks, its encoding).
pub(super) fn to_output(r: &Renderer, text: &str) -> Vec<u8> {
    r.codec.to_bytes(&with_newlines(text, r.file.newline))
}
