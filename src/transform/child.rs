//! Definitions shared by every site of one child kernel: the tuning macros
//! and declarations (before the first function that needs them) and the body
//! function, serial version and coarsened kernel (after the child).

use super::renderer::Renderer;
use super::templates::{
    AGGREGATION, AGGREGATION_BLOCK, AGGREGATION_GRID, DECLARATIONS, DEFER, DEFINITIONS,
};
use super::{with_newlines, OUTPUT_LINE_MARKER};
use crate::plan::{ChildPlan, Plan};
use crate::program::Function;
use tera::Context;

#[derive(serde::Serialize)]
struct MacroEntry {
    name: String,
    global: &'static str,
    value: String,
    what: &'static str,
    site: String,
    location: String,
}

/// Parameter lists in the forms the templates need.
struct Params {
    /// `, T *a, int n` (each unnamed parameter gets a name).
    declared: String,
    /// The same with default arguments, for the first declaration.
    with_defaults: String,
    /// `, a, n`
    names: String,
}

fn params(child: &Function) -> Params {
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

fn common_context(r: &Renderer, plan: &ChildPlan, resume_line: usize) -> Context {
    let child = &r.program.functions[plan.child];
    let p = params(child);
    let mut ctx = Context::new();
    ctx.insert("child", &child.name);
    ctx.insert("serial", &format!("dpopt_serial_{}", child.name));
    ctx.insert("coarse", &format!("dpopt_coarse_{}", child.name));
    ctx.insert("body_fn", &format!("dpopt_body_{}", child.name));
    ctx.insert("params", &p.declared);
    ctx.insert("params_with_defaults", &p.with_defaults);
    ctx.insert("arg_names", &p.names);
    // A recursive child's generated kernels hold its rewritten launch too:
    // bounded like the child when it is one of the bounded kernels.
    let bounded = r.plan.bounded.contains(&plan.child);
    ctx.insert(
        "launch_bounds",
        &match &child.launch_bounds {
            Some(l) => format!("{l} "),
            None if bounded => "DPOPT_PARENT_BOUNDS ".to_string(),
            None => String::new(),
        },
    );
    ctx.insert(
        "agg_bounds",
        &if bounded { "DPOPT_PARENT_BOUNDS " } else { "" },
    );
    ctx.insert("serial_needed", &plan.serial);
    ctx.insert("recursive", &plan.recursive);
    ctx.insert(
        "depth_macro",
        &format!("DPOPT_SERIAL_DEPTH_{}", child.symbol),
    );
    ctx.insert("serial_depth", &crate::plan::DEFAULT_SERIAL_DEPTH);
    ctx.insert("line_out", OUTPUT_LINE_MARKER);
    ctx.insert("resume_line", &resume_line);
    ctx.insert("file", &r.file.quoted_name());
    ctx
}

/// Macros and declarations, inserted before `plan.declare_at`.
pub fn declarations(r: &Renderer, plan: &ChildPlan, resume_line: usize) -> Vec<u8> {
    let child = &r.program.functions[plan.child];
    let mut ctx = common_context(r, plan, resume_line);
    let mut macros = Vec::new();
    for &s in &plan.sites {
        let site = &r.plan.sites[s];
        let location = r.file.location(r.program.pragmas[site.pragma].span.start);
        if let Some(v) = &site.threshold {
            macros.push(MacroEntry {
                name: site.threshold_macro(),
                global: "DPOPT_THRESHOLD",
                value: v.to_source(),
                what: "threshold",
                site: site.id.clone(),
                location: location.clone(),
            });
        }
        if let Some(v) = site
            .aggregation
            .as_ref()
            .and_then(|a| a.agg_threshold.as_ref())
        {
            macros.push(MacroEntry {
                name: site.agg_threshold_macro(),
                global: "DPOPT_AGG_THRESHOLD",
                value: v.to_source(),
                what: "aggregation threshold",
                site: site.id.clone(),
                location: location.clone(),
            });
        }
        if let Some(v) = &site.coarsen {
            macros.push(MacroEntry {
                name: site.coarsen_macro(),
                global: "DPOPT_COARSEN",
                value: v.to_source(),
                what: "coarsening factor",
                site: site.id.clone(),
                location,
            });
        }
    }
    ctx.insert("macros", &macros);
    let aggregated: Vec<&str> = plan
        .sites
        .iter()
        .map(|&s| &r.plan.sites[s])
        .filter(|s| s.aggregation.is_some())
        .map(|s| s.id.as_str())
        .collect();
    ctx.insert("aggregated", &aggregated);
    let stat_sites: Vec<&str> = plan
        .sites
        .iter()
        .map(|&s| r.plan.sites[s].id.as_str())
        .collect();
    ctx.insert("stat_sites", &stat_sites);
    ctx.insert(
        "serial",
        &plan.serial.then(|| format!("dpopt_serial_{}", child.name)),
    );
    ctx.insert(
        "coarse",
        &plan.coarse.then(|| format!("dpopt_coarse_{}", child.name)),
    );
    ctx.insert(
        "defer",
        &defers(r.plan, child, plan).then(|| format!("dpopt_defer_{}", child.name)),
    );
    ctx.insert(
        "template_header",
        &child
            .template_header
            .as_ref()
            .map(|h| format!("{h} "))
            .unwrap_or_default(),
    );
    render(r, DECLARATIONS, &ctx)
}

/// Body function, serial version and coarsened kernel, inserted after the
/// child's definition.
pub fn definitions(r: &Renderer, plan: &ChildPlan, resume_line: usize) -> Vec<u8> {
    let child = &r.program.functions[plan.child];
    let mut ctx = common_context(r, plan, resume_line);
    let tpl = TemplateParts::of(child);
    ctx.insert("template_header", &tpl.header);
    ctx.insert("template_names", &tpl.args);
    ctx.insert(
        "serial",
        &plan.serial.then(|| format!("dpopt_serial_{}", child.name)),
    );
    ctx.insert(
        "coarse",
        &plan.coarse.then(|| format!("dpopt_coarse_{}", child.name)),
    );
    ctx.insert("inline", "__forceinline__ ");
    ctx.insert("uses_shared", &plan.uses_shared);
    let queue = members(child);
    ctx.insert(
        "defer",
        &defers(r.plan, child, plan).then(|| format!("dpopt_defer_{}", child.name)),
    );
    ctx.insert(
        "defer_members",
        &queue.iter().map(|m| m.decl.as_str()).collect::<Vec<_>>(),
    );
    ctx.insert(
        "defer_names",
        &queue.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(),
    );
    let reads: Vec<String> = queue
        .iter()
        .map(|m| format!("dpopt_r.{}{}", m.name, m.read))
        .collect();
    ctx.insert("defer_args", &reads.join(", "));
    ctx.insert(
        "defer_reads",
        &reads.iter().map(|r| format!(", {r}")).collect::<String>(),
    );
    let names: Vec<Option<String>> = child.params.iter().map(|p| p.name.clone()).collect();
    ctx.insert(
        "serial_bound",
        &crate::guard::bounding_parameter(&r.file.view[child.body.clone()], &names),
    );
    // The body's own file and line (a header's, for a child defined there).
    let (body_line, body_file) = r.file.line_directive_at(child.body.start);
    ctx.insert("body_line", &body_line);
    ctx.insert("body_file", &body_file);
    ctx.insert("body", "\u{E000}body\u{E001}");
    let aggregation: String = plan
        .sites
        .iter()
        .filter(|&&s| r.plan.sites[s].aggregation.is_some())
        .map(|&s| aggregation(r, plan, s))
        .collect();
    ctx.insert("aggregation", &aggregation);
    let deferral = if defers(r.plan, child, plan) {
        r.templates.render(DEFER, &ctx)
    } else {
        String::new()
    };
    ctx.insert("deferral", &deferral);
    let text = r.templates.render(DEFINITIONS, &ctx);
    let text = with_newlines(&text, r.file.newline);
    let body = r.render(child.body.clone(), Some(plan.child), &[]);
    let (before, after) = text
        .split_once("\u{E000}body\u{E001}")
        .expect("body placeholder");
    let mut out = r.codec.to_bytes(before);
    out.extend(body);
    out.extend(r.codec.to_bytes(after));
    out
}

/// The record type, aggregated kernel and launcher of one aggregated site.
fn aggregation(r: &Renderer, plan: &ChildPlan, index: usize) -> String {
    let site = &r.plan.sites[index];
    let aggregation = site.aggregation.as_ref().expect("an aggregated site");
    let child = &r.program.functions[plan.child];
    let p = params(child);
    let mut ctx = common_context(r, plan, 0);
    // A template child: every entity of the site is a template over the
    // child's parameters, which the site's launch names or deduces.
    let tpl = TemplateParts::of(child);
    ctx.insert("tpl", &tpl.header);
    ctx.insert("tpl_args", &tpl.args);
    ctx.insert("tpl_lead", &tpl.lead);
    ctx.insert("tpl_args_lead", &tpl.args_lead);
    let targs = &tpl.args;
    let (mut varying, mut invariant, mut varying_names, mut invariant_names) =
        (vec![], vec![], vec![], vec![]);
    let mut record_args = String::new();
    let mut pool_args = Vec::new();
    for (i, Member { decl, name, read }) in members(child).into_iter().enumerate() {
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
    let names = p.names.trim_start_matches(", ");
    let direct = if site.coarsen.is_some() {
        format!("dpopt_coarse_{}{targs}<<<dpopt_lgrid, dpopt_block, dpopt_smem, dpopt_stream>>>(dpopt_ogrid{})", child.name, p.names)
    } else {
        format!(
            "{}{targs}<<<dpopt_ogrid, dpopt_block, dpopt_smem, dpopt_stream>>>({names})",
            child.name
        )
    };
    // With a serial version (some site thresholds this child), a direct
    // launch that finds no room (pending-launch limit) runs serially instead
    // (templates/recover.cu.tera).
    let direct_serial = if plan.serial {
        let depth = if plan.recursive {
            format!(", DPOPT_SERIAL_DEPTH_{}", child.symbol)
        } else {
            String::new()
        };
        format!(
            "dpopt_serial_{}{targs}(dpopt_ogrid, dpopt_block{depth}{})",
            child.name, p.names
        )
    } else {
        String::new()
    };
    ctx.insert("site", &site.id);
    ctx.insert(
        "location",
        &r.file.location(r.program.pragmas[site.pragma].span.start),
    );
    ctx.insert("coarse", &site.coarsen.is_some());
    ctx.insert("varying", &varying);
    ctx.insert("invariant", &invariant);
    ctx.insert("varying_names", &varying_names);
    ctx.insert("invariant_names", &invariant_names);
    ctx.insert("record_args", &record_args);
    ctx.insert("uses_shared", &plan.uses_shared);
    ctx.insert("agg_threshold", &aggregation.agg_threshold.is_some());
    ctx.insert("agg_threshold_macro", &site.agg_threshold_macro());
    ctx.insert("asserted", &aggregation.asserted);
    ctx.insert("direct_launch", &direct);
    ctx.insert("direct_serial", &direct_serial);
    let direct_defer = if defers(r.plan, child, plan) {
        let lgrid = if site.coarsen.is_some() {
            "dpopt_lgrid"
        } else {
            "dpopt_ogrid"
        };
        format!(
            "dpopt_defer_{}(DPOPT_STATS_OF_{}, {}, {lgrid}, dpopt_ogrid, dpopt_block, dpopt_smem{})",
            child.name,
            site.id,
            site.coarsen.is_some(),
            p.names
        )
    } else {
        String::new()
    };
    ctx.insert("direct_defer", &direct_defer);
    let blocks = site.directive.agg_blocks().map(|v| v.to_source());
    let threads = site.directive.agg_threads().map(|v| v.to_source());
    ctx.insert("block_loop", &blocks.is_some());
    ctx.insert("thread_loop", &threads.is_some());
    ctx.insert("agg_blocks", &blocks.unwrap_or_default());
    ctx.insert("agg_threads", &threads.unwrap_or_default());
    use crate::pragma::Granularity;
    let pooled = matches!(
        aggregation.granularity,
        Granularity::Grid | Granularity::MultiBlock
    );
    if pooled {
        // Records in the site's __device__ pool: launched from a record.
        let args = pool_args.join(", ");
        let record_launch = if site.coarsen.is_some() {
            format!(
                "dpopt_coarse_{}{targs}<<<dim3(dpopt_r.dpopt_lgrid), dim3(dpopt_r.dpopt_block), dpopt_r.dpopt_smem, cudaStreamFireAndForget>>>(dim3(dpopt_r.dpopt_ogrid){}{args})",
                child.name,
                if args.is_empty() { "" } else { ", " }
            )
        } else {
            format!("{}{targs}<<<dim3(dpopt_r.dpopt_ogrid), dim3(dpopt_r.dpopt_block), dpopt_r.dpopt_smem, cudaStreamFireAndForget>>>({args})", child.name)
        };
        ctx.insert("record_launch", &record_launch);
        ctx.insert("pools", &aggregation.pools());
        ctx.insert("pool_records", &aggregation.pool_records_source());
    }
    match aggregation.granularity {
        Granularity::Warp => r.templates.render(AGGREGATION, &ctx),
        Granularity::Grid => {
            let args = pool_args.join(", ");
            ctx.insert(
                "record_args",
                &format!("{}{}", if args.is_empty() { "" } else { ", " }, args),
            );
            r.templates.render(AGGREGATION_GRID, &ctx)
        }
        Granularity::Block | Granularity::MultiBlock => {
            ctx.insert(
                "multiblock",
                &(aggregation.granularity == Granularity::MultiBlock),
            );
            ctx.insert("group", &aggregation.group_source());
            ctx.insert("pool_blocks", &crate::plan::DEFAULT_POOL_BLOCKS);
            r.templates.render(AGGREGATION_BLOCK, &ctx)
        }
    }
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

/// A parameter declaration as a struct member: top-level `const` removed
/// (records are assigned), unnamed parameters named.
/// A child parameter as a record member.
struct Member {
    /// `int n`, `const float *a`, `dpopt_bytes<Graph> g`.
    decl: String,
    /// The parameter's name (`dpopt_argN` when unnamed).
    name: String,
    /// What reads the value back from the member: `.get()` for a class
    /// kept as its bytes (as kernel arguments are copied: records need no
    /// constructor, whatever the class declares), else nothing.
    read: &'static str,
}

fn members(child: &Function) -> Vec<Member> {
    child
        .params
        .iter()
        .enumerate()
        .map(|(i, param)| {
            let name = param
                .name
                .clone()
                .unwrap_or_else(|| format!("dpopt_arg{i}"));
            let member = member_declaration(&param.declaration, &name, param.name.is_none());
            match byte_stored_type(&member, &name) {
                Some(ty) => Member {
                    decl: format!("dpopt_bytes<{ty}> {name}"),
                    name,
                    read: ".get()",
                },
                None => Member {
                    decl: member,
                    name,
                    read: "",
                },
            }
        })
        .collect()
}

/// Whether a record of the child's parameters keeps one as its bytes
/// (`dpopt_bytes`, from the prelude).
pub fn stores_bytes(child: &Function) -> bool {
    members(child).iter().any(|m| !m.read.is_empty())
}

/// Whether the child has a queue of deferred launches (templates/defer.cu.tera):
/// a child with a serial version, except templates (their queue would be one
/// per instantiation), when a site's launch can defer: a thresholded site
/// that is not aggregated, or the direct-launch fallback of warp, block and
/// multiblock aggregation (grid aggregation's fallbacks never defer).
pub fn defers(all: &Plan, child: &Function, plan: &ChildPlan) -> bool {
    plan.serial
        && child.template_header.is_none()
        && plan.sites.iter().any(|&s| {
            let site = &all.sites[s];
            match &site.aggregation {
                None => site.threshold.is_some(),
                Some(a) => a.granularity != crate::pragma::Granularity::Grid,
            }
        })
}

fn member_declaration(declaration: &str, name: &str, unnamed: bool) -> String {
    let mut decl = declaration.trim().to_string();
    if unnamed {
        decl = format!("{decl} {name}");
    }
    if let Some(rest) = decl.strip_prefix("const ") {
        if !rest.contains('*') && !rest.contains('&') {
            decl = rest.to_string();
        }
    }
    decl.replace("* const ", "* ").replace("*const ", "*")
}

/// The type of a record member that is stored as bytes: one passed by
/// value whose type is not built from fundamental types alone (a class, a
/// vector type such as `float4`, a typedef): it may have constructors or a
/// destructor, which a `__device__` pool or a launch-parameter record cannot
/// run. Pointers, references and arrays (pointers too) are stored as they are.
fn byte_stored_type(member: &str, name: &str) -> Option<String> {
    const FUNDAMENTAL: &[&str] = &[
        "const",
        "volatile",
        "signed",
        "unsigned",
        "short",
        "long",
        "int",
        "char",
        "bool",
        "float",
        "double",
        "size_t",
        "ptrdiff_t",
        "int8_t",
        "int16_t",
        "int32_t",
        "int64_t",
        "uint8_t",
        "uint16_t",
        "uint32_t",
        "uint64_t",
        "uintptr_t",
        "intptr_t",
        "__int128",
        "std",
    ];
    if member.contains(['*', '&', '[', '(']) {
        return None;
    }
    let ty = member.trim_end().strip_suffix(name)?.trim_end();
    let words: Vec<&str> = ty
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    if words.is_empty() || words.iter().all(|w| FUNDAMENTAL.contains(w)) {
        return None;
    }
    Some(ty.to_string())
}

fn render(r: &Renderer, template: &str, ctx: &Context) -> Vec<u8> {
    let text = r.templates.render(template, ctx);
    r.codec.to_bytes(&with_newlines(&text, r.file.newline))
}
