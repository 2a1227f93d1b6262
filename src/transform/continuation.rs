//! Postwork (`postwork.rs`): per migrated device-side sync, the record type,
//! postwork body function and continuation kernel (`templates/continuation.cu.tera`),
//! and the code that replaces the sync and the code after it in the parent.

use super::context::{
    ContinuationContext, ContinuationStatsContext, PostworkBody, PostworkCounter, Resume,
};
use super::Renderer;
use crate::names::PostworkSymbols;
use crate::postwork::{Migration, SyncSite};

fn context(
    r: &Renderer,
    site: &SyncSite,
    part: &'static str,
    resume_line: usize,
) -> ContinuationContext {
    let kernel = &r.program.functions[site.kernel];
    // The named parameters (the code after the sync cannot use an unnamed
    // one, and the parent could not pass it on).
    let named: Vec<(&str, &str)> = kernel
        .params
        .iter()
        .filter_map(|p| p.name.as_deref().map(|n| (p.declaration.as_str(), n)))
        .collect();
    ContinuationContext {
        part,
        id: site.id.clone(),
        n: PostworkSymbols::of(&site.id),
        kernel: kernel.name.clone(),
        call: site.call.clone(),
        condition: site.condition.clone().unwrap_or_default(),
        in_if: site.waited_in_if.is_some(),
        location: r.file.location(site.call_span.start()),
        locals: site.locals.clone(),
        params: named.iter().map(|(d, _)| format!(", {d}")).collect(),
        args: named.iter().map(|(_, n)| format!(", {n}")).collect(),
        file_name: r.file.name.clone(),
        resume: Resume {
            line_out: super::OUTPUT_LINE_MARKER,
            resume_line,
            file: r.file.quoted_name(),
        },
        body: None,
    }
}

fn finish(r: &Renderer, text: &str) -> Vec<u8> {
    r.codec
        .to_bytes(&super::with_newlines(text, r.file.newline))
}

/// Before the kernel: the record type, the constructor of a record, and
/// declarations of the body function and the continuation kernel.
pub fn declarations(r: &Renderer, site: &SyncSite, resume_line: usize) -> Vec<u8> {
    let ctx = context(r, site, "declarations", resume_line);
    finish(r, &r.templates.render(&ctx))
}

/// The text that replaces the sync statement and the code after it, up to
/// the kernel's closing brace (which stays, on its original line).
pub fn site_text(r: &Renderer, site: &SyncSite) -> Vec<u8> {
    let close = site.postwork.end();
    let ctx = context(r, site, "site", r.file.line_of(close));
    finish(r, &r.templates.render(&ctx))
}

/// What replaces a sync that ends a top-level `if` (the wait follows the
/// `if`).
pub fn moved_text(r: &Renderer, site: &SyncSite) -> Vec<u8> {
    let ctx = context(r, site, "moved", 0);
    finish(r, &r.templates.render(&ctx))
}

/// A sync before more statements of a top-level `if` block: the flag's
/// declaration (before the `if`) and what replaces the sync and the rest of
/// the block (the site's text follows it).
pub fn waited_texts(r: &Renderer, site: &SyncSite) -> (Vec<u8>, Vec<u8>) {
    let declaration = context(r, site, "waited_declaration", 0);
    let waited = context(r, site, "waited", 0);
    (
        finish(r, &r.templates.render(&declaration)),
        finish(r, &r.templates.render(&waited)),
    )
}

/// What replaces a sync that is the last thing its thread runs.
pub fn dropped_text(r: &Renderer, site: &SyncSite) -> Vec<u8> {
    let ctx = context(r, site, "dropped", 0);
    finish(r, &r.templates.render(&ctx))
}

/// After the kernel: the postwork body (builtins replaced by parameters)
/// and the continuation kernel.
pub fn definitions(r: &Renderer, site: &SyncSite, resume_line: usize) -> Vec<u8> {
    let mut ctx = context(r, site, "definitions", resume_line);
    let (body_line, body_file) = r.file.line_directive_at(site.postwork.start());
    ctx.body = Some(PostworkBody {
        body: r.render_text(site.postwork, Some(site.kernel), &[]),
        body_line,
        body_file,
    });
    finish(r, &r.templates.render(&ctx))
}

/// At the end of the file: `dpopt_postwork_report` (with `-DDPOPT_STATS`).
pub fn stats(r: &Renderer, sites: &[SyncSite]) -> Vec<u8> {
    // The counters are declared before each kernel, in its namespaces.
    let counters: Vec<PostworkCounter> = sites
        .iter()
        .filter(|s| s.migration == Migration::Continuation)
        .map(|s| PostworkCounter {
            condition: s.condition.clone().unwrap_or_default(),
            id: s.id.clone(),
            counters: format!(
                "{}::{}",
                crate::names::scope(&r.program.functions[s.kernel].namespace),
                PostworkSymbols::of(&s.id).stats
            ),
        })
        .collect();
    let ctx = ContinuationStatsContext {
        part: "stats",
        id: "",
        n: PostworkSymbols::of(""),
        locals: Vec::new(),
        sites: counters,
        file_name: r.file.name.clone(),
    };
    finish(r, &r.templates.render(&ctx))
}
