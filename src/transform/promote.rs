//! Launch promotion (`promote(...)`, `analyzer/promote.rs`): per promoted
//! launch, the chain's types and declarations before the kernel, the head's
//! start at the top of the kernel's body, the release that replaces the
//! launch, the wait (`#pragma dp acquire`), and after the kernel the step's
//! body, the step or pool kernel and the functions they share
//! (`templates/promote.cu.tera`).

use super::context::{PostworkCounter, PromoteArg, PromoteContext, PromoteKnob, PromoteParam};
use super::{Renderer, OUTPUT_LINE_MARKER};
use crate::names::{Knob, PromoteSymbols};
use crate::plan::PromoteSite;
use crate::pragma::Promotion;
use crate::source::Span;

fn context(
    r: &Renderer,
    site: &PromoteSite,
    part: &'static str,
    resume_line: usize,
) -> PromoteContext {
    let kernel = &r.program.functions[site.kernel];
    let launch = &r.program.launches[site.launch];
    let params = kernel
        .params
        .iter()
        .zip(&site.members)
        .zip(&site.early)
        .enumerate()
        .map(|(i, ((p, m), &early))| PromoteParam {
            decl: match &p.name {
                Some(_) => p.declaration.clone(),
                None => format!("{} {}", p.declaration, m.name),
            },
            name: m.name.clone(),
            member: m.decl.clone(),
            read: m.read,
            early,
            named: p.name.is_some(),
            expr: if early {
                r.render_text(launch.args[i], Some(site.kernel), &[])
                    .trim()
                    .to_string()
            } else {
                String::new()
            },
        })
        .collect();
    let knob = |k: Knob| k.name(&site.id);
    PromoteContext {
        part,
        n: PromoteSymbols::of(&site.id),
        kernel: kernel.name.clone(),
        summary: site.summary.clone(),
        location: r.file.location(r.program.pragmas[site.pragma].span.start()),
        aggregate: site.kind == Promotion::Aggregate,
        marker: site.acquire.is_some(),
        knobs: site
            .knobs
            .iter()
            .map(|k| PromoteKnob {
                what: k.knob.what(),
                site: site.id.clone(),
                name: k.name.clone(),
                global: k.global(),
                value: k.value.clone(),
            })
            .collect(),
        pool_macro: knob(Knob::PromotePool),
        ahead_macro: knob(Knob::PromoteAhead),
        params,
        bounds: kernel
            .launch_bounds
            .clone()
            .unwrap_or_else(|| "DPOPT_PARENT_BOUNDS".to_string()),
        file_name: r.file.name.clone(),
        line_out: OUTPUT_LINE_MARKER,
        resume_line,
        file: r.file.quoted_name(),
        ..PromoteContext::default()
    }
}

fn finish(r: &Renderer, text: &str) -> Vec<u8> {
    r.codec
        .to_bytes(&super::with_newlines(text, r.file.newline))
}

/// Before the kernel: the knob, the chain's types and the declarations the
/// kernel's start and release call.
pub fn declarations(r: &Renderer, site: &PromoteSite, resume_line: usize) -> Vec<u8> {
    finish(
        r,
        &r.templates
            .render(&context(r, site, "declarations", resume_line)),
    )
}

/// The head's start at the top of the kernel's body: at the line start
/// `site.head_at`, or (`head_inline`) right after the body's `{`, which it
/// then follows.
pub fn head(r: &Renderer, site: &PromoteSite) -> Vec<u8> {
    let resume = r.file.line_of(site.head_at);
    let text = r.templates.render(&context(r, site, "head", resume));
    if site.head_inline {
        finish(r, &format!("{{\n{text}"))
    } else {
        finish(r, &text)
    }
}

/// What replaces the pragma and the promoted launch: in the kernel itself
/// (`copy` false: the head) and in a step's body (builtins replaced).
pub fn release(r: &Renderer, site: &PromoteSite, copy: bool) -> String {
    let launch = &r.program.launches[site.launch];
    let copy_of = copy.then_some(site.kernel);
    let mut ctx = context(
        r,
        site,
        "release",
        r.file.line_of(launch.span.end().saturating_sub(1)),
    );
    ctx.args = launch
        .args
        .iter()
        .zip(&site.early)
        .map(|(a, &early)| PromoteArg {
            text: r.render_text(*a, copy_of, &[]).trim().to_string(),
            line: r.file.line_of(a.start()),
            early,
        })
        .collect();
    // The launch as written up to its arguments: `kernel<<<config>>>`.
    let head = Span::new(launch.span.start(), launch.config_span.end());
    ctx.launch = r.render_text(head, copy_of, &[]);
    ctx.launch_line = r.file.line_of(launch.span.start());
    r.codec.to_text(&finish(r, &r.templates.render(&ctx)))
}

/// What replaces `#pragma dp acquire` in the kernel itself: the head waits
/// for no step.
pub fn marker(r: &Renderer, site: &PromoteSite) -> String {
    r.templates.render(&context(r, site, "marker", 0))
}

/// A promoted step's wait: at `#pragma dp acquire` (`marker`), or at the
/// start of the step's body.
fn acquire(r: &Renderer, site: &PromoteSite, marker: bool, resume_line: usize) -> String {
    let mut ctx = context(r, site, "acquire", resume_line);
    ctx.marker = marker;
    r.codec.to_text(&finish(r, &r.templates.render(&ctx)))
}

/// After the kernel: the successor's arguments, the chain's functions, the
/// step's body and the step (basic) or pool (aggregate) kernel.
pub fn definitions(r: &Renderer, site: &PromoteSite, resume_line: usize) -> Vec<u8> {
    let kernel = &r.program.functions[site.kernel];
    let launch = &r.program.launches[site.launch];
    let pragma = &r.program.pragmas[site.pragma];
    let mut ctx = context(r, site, "definitions", resume_line);
    let config = |i: usize| {
        launch
            .config
            .get(i)
            .map(|c| r.render_text(*c, Some(site.kernel), &[]).trim().to_string())
    };
    ctx.block = config(1).unwrap_or_default();
    ctx.smem = config(2).unwrap_or_else(|| "0".to_string());
    let mut overrides = vec![(
        Span::new(pragma.span.start(), launch.span.end()),
        release(r, site, true),
    )];
    match site.acquire {
        Some(m) => {
            let span = r.program.pragmas[m].span;
            let text = acquire(r, site, true, r.file.line_of(span.start()));
            overrides.push((span, text));
        }
        None => ctx.start_acquire = acquire(r, site, false, r.file.line_of(kernel.body.start())),
    }
    let inner = Span::new(kernel.body.start() + 1, kernel.body.end() - 1);
    let (body_line, body_file) = r.file.line_directive_at(kernel.body.start());
    ctx.body = r.render_text(inner, Some(site.kernel), &overrides);
    ctx.body_line = body_line;
    ctx.body_file = body_file;
    finish(r, &r.templates.render(&ctx))
}

/// The overrides of the kernel's own text: the promoted launch, the marker,
/// and the body's `{` when the head's start follows it on its line.
pub fn overrides(r: &Renderer, site: &PromoteSite) -> Vec<(Span, String)> {
    let launch = &r.program.launches[site.launch];
    let pragma = &r.program.pragmas[site.pragma];
    let mut out = vec![(
        Span::new(pragma.span.start(), launch.span.end()),
        release(r, site, false),
    )];
    if let Some(m) = site.acquire {
        out.push((r.program.pragmas[m].span, marker(r, site)));
    }
    if site.head_inline {
        let open = r.program.functions[site.kernel].body.start();
        out.push((Span::new(open, open + 1), r.codec.to_text(&head(r, site))));
    }
    out
}

/// At the end of the file: `dpopt_promote_report` (with `-DDPOPT_STATS`).
pub fn stats(r: &Renderer, sites: &[PromoteSite]) -> Vec<u8> {
    let counters = sites
        .iter()
        .map(|s| PostworkCounter {
            id: s.id.clone(),
            condition: String::new(),
            counters: format!(
                "{}::{}",
                crate::names::scope(&r.program.functions[s.kernel].namespace),
                PromoteSymbols::of(&s.id).stats
            ),
        })
        .collect();
    let ctx = PromoteContext {
        part: "stats",
        sites: counters,
        file_name: r.file.name.clone(),
        ..PromoteContext::default()
    };
    finish(r, &r.templates.render(&ctx))
}
