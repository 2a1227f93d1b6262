//! dpopt: a source-to-source compiler that optimizes CUDA dynamic
//! parallelism launches annotated with `#pragma dp`.
//!
//! The pipeline has four stages, one module each (docs/ARCHITECTURE.md):
//!
//! 1. `lexer` + `parser` (+ `pragma`): tokens, functions, launches, pragmas;
//! 2. `analyzer` (+ `thread_count`): validate each pragma, build a `Plan`;
//! 3. `transform`: generate launch sites and child definitions from templates;
//! 4. `emit`: assemble the output file with `#line` directives.
//!
//! They are internal. The public API is what the command line, the tests,
//! the benchmarks and the fuzzer use: `run`, `run_with`, `run_migrating`
//! and their `Outcome`; `rewritten_ranges`, `renamed_calls` and
//! `plan_text`, views of the pipeline for tests; and the modules `source` (`SourceFile`), `unit`
//! (`Options`), `diagnostic`, `message_format`, `explain`, `output`,
//! `nvcc_wrapper` and `tune`.

// Diagnostics travel in `Err` on the cold path; their size does not matter.
#![allow(clippy::result_large_err)]

// The pipeline: internal.
mod analyzer;
#[macro_use]
mod arena;
mod atomic_fold;
mod barrier_split;
mod brackets;
mod conditional;
mod constant;
mod emit;
mod expr;
mod final_sync;
mod grammar;
mod guard;
mod hazard;
mod lexer;
mod names;
mod parser;
mod phases;
mod plan;
mod position_clone;
mod postwork;
mod pragma;
mod program;
mod record;
mod template_instance;
mod thread_count;
mod token;
mod transform;
mod uniform_return;
mod warp_exchange;
mod writer;

// What the command line, the tests, the benchmarks and the fuzzer use.
pub mod diagnostic;
pub mod explain;
pub mod message_format;
pub mod nvcc_wrapper;
pub mod output;
pub mod source;
pub mod tune;
pub mod unit;

use diagnostic::Diagnostic;
use source::SourceFile;

/// The result of running the pipeline on one file.
#[derive(Debug)]
pub struct Outcome {
    /// The transformed file, `None` when an error was reported.
    pub output: Option<Vec<u8>>,
    /// Errors and warnings, in source order.
    pub diagnostics: Vec<Diagnostic>,
    /// The rewritten sites: (site id, macros), for `dpopt check`.
    pub sites: Vec<SiteSummary>,
    /// The kernels that get `DPOPT_PARENT_BOUNDS` (qualified names).
    pub bounded_kernels: Vec<String>,
    /// The device-side syncs migrated to continuations (`--migrate-sync`),
    /// for `dpopt check`: location and description.
    pub postwork_sites: Vec<(String, String)>,
    /// The translation unit read when other files were read too (headers,
    /// child sources): diagnostics' spans are offsets into it.
    pub unit: Option<SourceFile>,
}

#[derive(Debug, Clone)]
pub struct SiteSummary {
    pub id: String,
    pub location: String,
    pub child: String,
    pub macros: Vec<(String, String)>,
    /// How the site's launches are aggregated, e.g. `consldt(warp): per
    /// parent start, deg; passed once row, col`.
    pub aggregation: Option<String>,
    /// The parent's allocations of the launch's pointers: how each is
    /// aggregated, or why it is left per thread.
    pub allocations: Vec<String>,
    /// For a promoted launch (`promote(...)`): how its chain runs and
    /// which arguments the next step gets early or at the release.
    pub promotion: Option<String>,
    /// Where its `#pragma dp acquire` stands (`FILE:LINE:COL`), applied with
    /// the site.
    pub marker: Option<String>,
    /// The child is the kernel that launches it (a recursion).
    pub recursive: bool,
}

impl Outcome {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The source the diagnostics point into: the unit, or the input.
    pub fn source<'a>(&'a self, input: &'a SourceFile) -> &'a SourceFile {
        self.unit.as_ref().unwrap_or(input)
    }
}

/// The `check` line of a promoted launch.
fn promotion_summary(
    file: &SourceFile,
    program: &program::Program,
    p: &plan::PromoteSite,
) -> SiteSummary {
    let kernel = &program.functions[p.kernel];
    let names = |early: bool| {
        let v: Vec<String> = p
            .members
            .iter()
            .zip(&p.early)
            .filter(|(_, &e)| e == early)
            .map(|(m, _)| m.name.clone())
            .collect();
        if v.is_empty() {
            "-".to_string()
        } else {
            v.join(", ")
        }
    };
    let how = match p.kind {
        pragma::Promotion::Basic => {
            "each step a grid, launched when its predecessor starts".to_string()
        }
        pragma::Promotion::Aggregate => {
            "a pool of blocks takes the steps one after another".to_string()
        }
    };
    let wait = match p.acquire {
        Some(m) => format!(
            "waits at `#pragma dp acquire` ({})",
            file.location(program.pragmas[m].span.start())
        ),
        None => "waits at its start".to_string(),
    };
    SiteSummary {
        id: p.id.clone(),
        location: file.location(program.pragmas[p.pragma].span.start()),
        child: kernel.name.clone(),
        macros: p
            .knobs
            .iter()
            .map(|k| (k.name.clone(), k.value.clone()))
            .collect(),
        aggregation: None,
        allocations: Vec::new(),
        recursive: false,
        marker: p
            .acquire
            .map(|m| file.location(program.pragmas[m].span.start())),
        promotion: Some(format!(
            "{}: {how}; a step {wait}; early: {}; at the release: {}",
            p.summary.trim_start_matches("#pragma dp "),
            names(true),
            names(false)
        )),
    }
}

/// `FILE:LINE:COL` as a key that sorts by line, then column.
fn location_key(location: &str) -> (usize, usize) {
    let mut parts = location.rsplitn(3, ':');
    let column = parts.next().and_then(|c| c.parse().ok()).unwrap_or(0);
    let line = parts.next().and_then(|l| l.parse().ok()).unwrap_or(0);
    (line, column)
}

/// The byte ranges of the input that a transform rewrites: each `#pragma
/// dp` directive through the end of the launch statement it stands before,
/// each `#pragma dp acquire` marker, the `{` of a promoted kernel's body
/// (the head's start may follow it on its line) and each host launch of a
/// `floor` parent. Everything outside them is copied as it is.
pub fn rewritten_ranges(file: &SourceFile) -> Vec<source::Span> {
    let program = parser::parse(file, lexer::lex(file));
    let mut ranges = Vec::new();
    for pragma in &program.pragmas {
        let directive = pragma::parse_directive(&pragma.logical).ok();
        if directive
            .as_ref()
            .is_some_and(pragma::Directive::is_acquire)
        {
            ranges.push(pragma.span);
            continue;
        }
        let Some(launch) = program
            .launches
            .iter()
            .find(|l| Some(l.first_token) == pragma.next_token)
        else {
            continue;
        };
        ranges.push(source::Span::new(pragma.span.start(), launch.span.end()));
        let promoted = directive.as_ref().is_some_and(|d| d.promotion().is_some());
        if let (true, Some(kernel)) = (promoted, launch.function) {
            let open = program.functions[kernel].body.start();
            ranges.push(source::Span::new(open, open + 1));
        }
    }
    // Host launches of a `floor` parent call its launcher instead.
    let plan = analyzer::analyze(file, &program).plan;
    for floor in &plan.floors {
        for &l in &floor.host_launches {
            ranges.push(program.launches[l].span);
        }
    }
    ranges
}

/// The calls a transform renames, in source order: the callees of the
/// parent's aggregated allocations (`malloc`/`cudaMalloc`) and of their
/// frees, each with the name that replaces it (in the file and in every copy
/// of a body), for the preservation test.
pub fn renamed_calls(file: &SourceFile) -> Vec<(source::Span, String)> {
    let program = parser::parse(file, lexer::lex(file));
    analyzer::analyze(file, &program).plan.renamed_calls()
}

/// The analyzer's `Plan` of the input alone, as `{:#?}` writes it, and the
/// diagnostics: what is decided before any code is generated (defaults,
/// pools, knobs, serial bounds, deferral), for snapshots.
pub fn plan_text(file: &SourceFile) -> (String, Vec<Diagnostic>) {
    let program = parser::parse(file, lexer::lex(file));
    let analysis = analyzer::analyze(file, &program);
    (format!("{:#?}", analysis.plan), analysis.diagnostics)
}

/// Does the text hold a backslash that ends a line (blanks may follow it)?
fn has_line_splice(bytes: &[u8]) -> bool {
    bytes.iter().enumerate().any(|(i, &b)| {
        b == b'\\'
            && bytes[i + 1..]
                .iter()
                .find(|&&c| !matches!(c, b' ' | b'\t' | 0x0b | 0x0c | 0))
                .map_or(true, |&c| c == b'\n' || c == b'\r')
    })
}

/// Run lex -> parse -> analyze, and transform + emit when there is no error,
/// on the input alone. `output_name` is used in `#line` directives for
/// generated code.
pub fn run(file: &SourceFile, output_name: &str, generate: bool) -> Outcome {
    run_with(file, None, output_name, generate)
}

/// `run`, reading the headers the input includes and the other sources
/// `options` names too (`unit.rs`), when given.
pub fn run_with(
    input: &SourceFile,
    options: Option<&unit::Options>,
    output_name: &str,
    generate: bool,
) -> Outcome {
    run_migrating(input, options, false, output_name, generate)
}

/// `run_with`, and with `migrate` (`--migrate-sync`) every device-side
/// `cudaDeviceSynchronize()` after launches becomes a tail-launched
/// continuation (`postwork.rs`); without it each one that could is reported
/// with a warning and left as written.
pub fn run_migrating(
    input: &SourceFile,
    options: Option<&unit::Options>,
    migrate: bool,
    output_name: &str,
    generate: bool,
) -> Outcome {
    let file = input;
    // Fast path: a file that cannot hold a `#pragma dp` (or `_Pragma`) nor a
    // device-side sync is passed through byte for byte. A line splice can
    // split any word, so a file with one takes the full path.
    let spliced = has_line_splice(&file.bytes);
    let may_hold_pragma = (file.view.contains("dp")
        && (file.view.contains("pragma") || file.view.contains("Pragma")))
        || spliced;
    let may_sync = postwork::SYNC_CALLS.iter().any(|s| file.view.contains(s));
    // The unit (the input and the files it includes or names), read once.
    // A file that cannot hold a pragma takes the fast path unless a file it
    // reads holds one: that one is not applied, but is said so
    // (`dpopt::pragma_not_applied`).
    let mut loaded = None;
    if !may_hold_pragma && !may_sync {
        let elsewhere = options
            .filter(|o| file.view.contains("#include") || !o.child_sources.is_empty())
            .map(|o| unit::load(file, o))
            .filter(|u| {
                let others = &u.file.view[u.file.input_len()..];
                others.contains("dp") && (others.contains("pragma") || others.contains("Pragma"))
            });
        match elsewhere {
            Some(u) => loaded = Some(u),
            None => {
                return Outcome {
                    output: Some(file.bytes.clone()),
                    diagnostics: Vec::new(),
                    sites: Vec::new(),
                    bounded_kernels: Vec::new(),
                    postwork_sites: Vec::new(),
                    unit: None,
                }
            }
        }
    }
    let (unit, tokens) = match (loaded, options) {
        (Some(unit), _) => (Some(unit.file), unit.tokens),
        (None, Some(options)) => {
            let unit = unit::load(file, options);
            (Some(unit.file), unit.tokens)
        }
        (None, None) => (None, lexer::lex(file)),
    };
    let file = unit.as_ref().unwrap_or(input);
    let mut program = parser::parse(file, tokens);
    if let Some(options) = options {
        program.defines = options.defines.clone();
    }
    program.migrate_sync = migrate;
    // Only the input is rewritten: directives in other files are not sites,
    // and each one is reported as not applied.
    let not_applied: Vec<Diagnostic> = program
        .pragmas
        .iter()
        .filter(|p| !file.in_input(p.span.start()))
        .map(|p| {
            Diagnostic::new(
                diagnostic::DiagnosticKind::PragmaNotApplied {
                    file: file.local(p.span.start()).0.name.clone(),
                },
                p.span,
                "not applied",
            )
        })
        .collect();
    program.pragmas.retain(|p| file.in_input(p.span.start()));
    let mut hidden = if file.view.contains("_Pragma") || spliced {
        analyzer::pragma_macros(file, &program)
    } else {
        Vec::new()
    };
    hidden.extend(not_applied);
    let (mut plan, mut diagnostics) = if program.pragmas.is_empty() {
        (plan::Plan::default(), hidden)
    } else {
        let analysis = analyzer::analyze(file, &program);
        let mut diagnostics = analysis.diagnostics;
        diagnostics.extend(hidden);
        (analysis.plan, diagnostics)
    };
    // Kernels whose bodies are copied for `#pragma dp` sites (promoted
    // kernels too).
    let copied: Vec<program::FunctionId> = plan
        .sites
        .iter()
        .flat_map(|s| s.children().collect::<Vec<_>>())
        .chain(plan.promotions.iter().map(|p| p.kernel))
        .collect();
    let post = postwork::analyze(file, &program, migrate, &copied);
    diagnostics.extend(post.diagnostics);
    plan.postwork = post.sites;
    diagnostics.sort_by_key(|d| d.span.start());
    if program.pragmas.is_empty() && plan.postwork.is_empty() {
        let failed = diagnostics.iter().any(Diagnostic::is_error);
        return Outcome {
            output: (!failed).then(|| input.bytes.clone()),
            diagnostics,
            sites: Vec::new(),
            bounded_kernels: Vec::new(),
            postwork_sites: Vec::new(),
            unit,
        };
    }
    let sites = plan
        .sites
        .iter()
        .map(|s| {
            let macros = s
                .knobs
                .iter()
                .map(|k| (k.name.clone(), k.value.clone()))
                .collect();
            let child = &program.functions[s.child];
            let aggregation = s.aggregation.as_ref().map(|a| {
                let name = |i: usize| {
                    child
                        .params
                        .get(i)
                        .and_then(|p| p.name.clone())
                        .unwrap_or_else(|| format!("dpopt_arg{i}"))
                };
                let (per_parent, shared): (Vec<usize>, Vec<usize>) = (0..child.params.len())
                    .partition(|&i| a.varying.get(i).copied().unwrap_or(false));
                let list = |v: Vec<usize>| {
                    if v.is_empty() {
                        "-".to_string()
                    } else {
                        v.into_iter().map(name).collect::<Vec<_>>().join(", ")
                    }
                };
                let granularity = match a.granularity {
                    pragma::Granularity::Warp => "warp",
                    pragma::Granularity::Block => "block",
                    pragma::Granularity::MultiBlock => "multiblock",
                    pragma::Granularity::Grid => "grid",
                };
                format!(
                    "consldt({granularity}): stored per parent: {}; passed once{}: {}",
                    list(per_parent),
                    if a.asserted {
                        " (asserted by work(...))"
                    } else {
                        ""
                    },
                    list(shared)
                )
            });
            SiteSummary {
                allocations: explain::allocations(file, &program, s),
                id: s.id.clone(),
                location: file.location(program.pragmas[s.pragma].span.start()),
                child: child.name.clone(),
                macros,
                aggregation,
                promotion: None,
                marker: None,
                recursive: s.child == s.parent,
            }
        })
        .chain(
            plan.promotions
                .iter()
                .map(|p| promotion_summary(file, &program, p)),
        )
        .collect::<Vec<_>>();
    let mut sites = sites;
    if !plan.promotions.is_empty() {
        sites.sort_by_key(|s| location_key(&s.location));
    }
    let has_errors = diagnostics.iter().any(Diagnostic::is_error);
    let output = (!has_errors && generate).then(|| emit::emit(file, &program, &plan, output_name));
    let bounded_kernels = plan
        .bounded
        .iter()
        .map(|&k| program.functions[k].qualified_name())
        .collect();
    let postwork_sites = plan
        .postwork
        .iter()
        .map(|p| {
            let locals = if p.locals.is_empty() {
                "-".to_string()
            } else {
                p.locals.join(", ")
            };
            let kernel = &program.functions[p.kernel].name;
            let what = match p.migration {
                postwork::Migration::Dropped => format!(
                    "sync site {} (kernel `{kernel}`): `{}()` is dropped: nothing runs after it in its thread, and a CDP2 grid ends only after its children",
                    p.id, p.call
                ),
                postwork::Migration::Continuation => format!(
                    "sync site {} (kernel `{kernel}`): the code after `{}()`{} runs in continuation {}, tail-launched per block; carries the kernel's parameters and locals: {locals}",
                    p.id,
                    p.call,
                    if p.waited_in_if.is_some() { " (the rest of its `if` block, for the threads that reached it, then the code after the `if`)" } else { "" },
                    names::PostworkSymbols::of(&p.id).continuation
                ),
            };
            (file.location(p.call_span.start()), what)
        })
        .collect();
    Outcome {
        output,
        diagnostics,
        sites,
        bounded_kernels,
        postwork_sites,
        unit,
    }
}
