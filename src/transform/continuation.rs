//! Postwork (`postwork.rs`): per migrated device-side sync, the record type,
//! postwork body function and continuation kernel (`templates/continuation.cu.tera`),
//! and the code that replaces the sync and the code after it in the parent.

use super::templates::CONTINUATION;
use super::Renderer;
use crate::postwork::SyncSite;

fn context(r: &Renderer, site: &SyncSite, part: &str, resume_line: usize) -> tera::Context {
    let kernel = &r.program.functions[site.kernel];
    // The named parameters (the code after the sync cannot use an unnamed
    // one, and the parent could not pass it on).
    let named: Vec<(&str, &str)> = kernel
        .params
        .iter()
        .filter_map(|p| p.name.as_deref().map(|n| (p.declaration.as_str(), n)))
        .collect();
    let params: String = named.iter().map(|(d, _)| format!(", {d}")).collect();
    let names: Vec<&str> = named.iter().map(|(_, n)| *n).collect();
    let args: String = names.iter().map(|n| format!(", {n}")).collect();
    let mut ctx = tera::Context::new();
    ctx.insert("part", part);
    ctx.insert("id", &site.id);
    ctx.insert("kernel", &kernel.name);
    ctx.insert("call", &site.call);
    ctx.insert("location", &r.file.location(site.call_span.start));
    ctx.insert("locals", &site.locals);
    ctx.insert("params", &params);
    ctx.insert("args", &args);
    ctx.insert("line_out", super::OUTPUT_LINE_MARKER);
    ctx.insert("resume_line", &resume_line);
    ctx.insert("file", &r.file.quoted_name());
    ctx.insert("file_name", &r.file.name);
    ctx
}

fn finish(r: &Renderer, text: &str) -> Vec<u8> {
    r.codec
        .to_bytes(&super::with_newlines(text, r.file.newline))
}

/// Before the kernel: the record type, the constructor of a record, and
/// declarations of the body function and the continuation kernel.
pub fn declarations(r: &Renderer, site: &SyncSite, resume_line: usize) -> Vec<u8> {
    let ctx = context(r, site, "declarations", resume_line);
    finish(r, &r.templates.render(CONTINUATION, &ctx))
}

/// The text that replaces the sync statement and the code after it, up to
/// the kernel's closing brace (which stays, on its original line).
pub fn site_text(r: &Renderer, site: &SyncSite) -> Vec<u8> {
    let close = site.postwork.end;
    let ctx = context(r, site, "site", r.file.line_of(close));
    finish(r, &r.templates.render(CONTINUATION, &ctx))
}

/// What replaces a sync that ends a top-level `if` (the wait follows the
/// `if`).
pub fn moved_text(r: &Renderer, site: &SyncSite) -> Vec<u8> {
    let ctx = context(r, site, "moved", 0);
    finish(r, &r.templates.render(CONTINUATION, &ctx))
}

/// After the kernel: the postwork body (builtins replaced by parameters)
/// and the continuation kernel.
pub fn definitions(r: &Renderer, site: &SyncSite, resume_line: usize) -> Vec<u8> {
    let mut ctx = context(r, site, "definitions", resume_line);
    ctx.insert(
        "body",
        &r.render_text(site.postwork.clone(), Some(site.kernel), &[]),
    );
    let (body_line, body_file) = r.file.line_directive_at(site.postwork.start);
    ctx.insert("body_line", &body_line);
    ctx.insert("body_file", &body_file);
    finish(r, &r.templates.render(CONTINUATION, &ctx))
}

/// At the end of the file: `dpopt_postwork_report` (with `-DDPOPT_STATS`).
pub fn stats(r: &Renderer, sites: &[SyncSite]) -> Vec<u8> {
    let mut ctx = tera::Context::new();
    ctx.insert("part", "stats");
    ctx.insert("id", "");
    ctx.insert("locals", &Vec::<String>::new());
    // The counters are declared before each kernel, in its namespaces (an
    // anonymous one needs no name: its members are visible around it).
    #[derive(serde::Serialize)]
    struct Counter {
        id: String,
        counters: String,
    }
    let counters: Vec<Counter> = sites
        .iter()
        .map(|s| {
            let mut path = String::new();
            for n in &r.program.functions[s.kernel].namespace {
                if !n.is_empty() {
                    path.push_str("::");
                    path.push_str(n);
                }
            }
            Counter {
                id: s.id.clone(),
                counters: format!("{path}::dpopt_postwork_stats_{}", s.id),
            }
        })
        .collect();
    ctx.insert("sites", &counters);
    ctx.insert("file_name", &r.file.name);
    finish(r, &r.templates.render(CONTINUATION, &ctx))
}
