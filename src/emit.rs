//! Stage 4: assemble the output file: the source with its launch sites
//! rewritten and the generated fragments inserted at line starts, written
//! through `writer::OutFile` (which numbers the `#line` directives that
//! point at the generated code itself as it writes).

use crate::names::SiteSymbols;
use crate::plan::Plan;
use crate::postwork::Migration;
use crate::program::{FunctionId, Program};
use crate::source::SourceFile;
use crate::source::Span;
use crate::token::TokenKind;
use crate::transform::child::{declarations, definitions};
use crate::transform::context::{
    BoundsContext, NamespacesContext, PreludeContext, Resume, RuntimeKnob, StatsContext,
};
use crate::transform::continuation;
use crate::transform::position_clone;
use crate::transform::promote;
use crate::transform::templates::Templates;
use crate::transform::{Renderer, OUTPUT_LINE_MARKER};
use crate::writer::{Fragment, OutFile, Sink};

/// Generate the transformed file. `output_name` names the output in the
/// `#line` directives of generated code (`<stdout>` when printed).
pub fn emit(file: &SourceFile, program: &Program, plan: &Plan, output_name: &str) -> Vec<u8> {
    // The templates are compiled once per process (a fuzzer or a test runs
    // the pipeline many times).
    static TEMPLATES: std::sync::OnceLock<Templates> = std::sync::OnceLock::new();
    let templates = TEMPLATES.get_or_init(Templates::new);
    let renderer = Renderer::new(file, program, plan, templates);
    let mut inserts: Vec<(usize, Fragment)> = Vec::new();
    // Copies of callees that read positions, first at any offset they share
    // with a child's definitions (which call them).
    for &f in &plan.positions.clones {
        let function = &program.functions[f];
        let (at, prefix) = insertion_before(file, function.first_declared);
        let resume = file.line_of(at.max(function.first_declared));
        if let Some(declaration) = position_clone::declaration(&renderer, f, resume) {
            let mut fragment = Fragment::generated_bytes(prefix);
            fragment.append(declaration);
            inserts.push((at, fragment));
        }
        let (at, prefix) = insertion_after(file, program, function.body.end());
        let mut fragment = Fragment::generated_bytes(prefix);
        fragment.append(position_clone::definition(&renderer, f, file.line_of(at)));
        inserts.push((at, fragment));
    }
    for child_plan in &plan.children {
        let child = &program.functions[child_plan.child];
        if let Some(at) = child_plan.elsewhere {
            // A child of another file: declarations and definitions at one
            // line start of the input, in the child's namespace.
            inserts.push((at, elsewhere(&renderer, child_plan, at)));
            continue;
        }
        let (at, prefix) = insertion_before(file, child_plan.declare_at);
        let mut fragment = prefix;
        fragment.extend(declarations(
            &renderer,
            child_plan,
            file.line_of(at.max(child_plan.declare_at)),
        ));
        inserts.push((at, Fragment::generated_bytes(fragment)));
        let (at, prefix) = insertion_after(file, program, child.body.end());
        let mut fragment = Fragment::generated_bytes(prefix);
        fragment.append(definitions(&renderer, child_plan, file.line_of(at)));
        inserts.push((at, fragment));
    }
    let mut overrides: Vec<(Span, String)> = Vec::new();
    for site in &plan.postwork {
        if site.migration == Migration::Dropped {
            let text = continuation::dropped_text(&renderer, site);
            overrides.push((site.statement, String::from_utf8_lossy(&text).into_owned()));
            continue;
        }
        around(
            file,
            program,
            site.kernel,
            &mut inserts,
            |resume| continuation::declarations(&renderer, site, resume),
            |resume| continuation::definitions(&renderer, site, resume),
        );
        let text = String::from_utf8_lossy(&continuation::site_text(&renderer, site)).into_owned();
        if let Some(at) = site.waited_in_if {
            // The sync is followed by more of its `if` block: a flag
            // declared before the `if` says which threads reached it, and
            // the continuation runs the rest of the block for them.
            let (declaration, waited) = continuation::waited_texts(&renderer, site);
            inserts.push((at, Fragment::generated_bytes(declaration)));
            let waited = String::from_utf8_lossy(&waited).into_owned();
            overrides.push((
                Span::new(site.statement.start(), site.postwork.end()),
                format!("{waited} {text}"),
            ));
        } else if site.statement.end() == site.postwork.start() {
            overrides.push((Span::new(site.statement.start(), site.postwork.end()), text));
        } else {
            // The sync ends a top-level `if`: it goes, and the wait (the
            // continuation) follows the `if`.
            let moved = continuation::moved_text(&renderer, site);
            overrides.push((site.statement, String::from_utf8_lossy(&moved).into_owned()));
            overrides.push((site.postwork, format!(" {text}")));
        }
    }
    for floor in &plan.floors {
        let kernel = &program.functions[floor.kernel];
        let (at, prefix) = insertion_after(file, program, kernel.body.end());
        let mut fragment = Fragment::generated_bytes(prefix);
        fragment.append(crate::transform::floor::fragment(
            &renderer,
            floor,
            file.line_of(at),
        ));
        inserts.push((at, fragment));
        overrides.extend(crate::transform::floor::host_launches(&renderer, floor));
    }
    for &kernel in &plan.bounded {
        let f = &program.functions[kernel];
        let (at, prefix) = insertion_after(file, program, f.body.end());
        let mut fragment = prefix;
        fragment.extend(bounds(&renderer, kernel, file.line_of(at)));
        inserts.push((at, Fragment::generated_bytes(fragment)));
    }
    // After the bounds declarations (which come right after the kernel): a
    // promoted kernel's step body launches the kernel itself.
    for site in &plan.promotions {
        around(
            file,
            program,
            site.kernel,
            &mut inserts,
            |resume| promote::declarations(&renderer, site, resume),
            |resume| promote::definitions(&renderer, site, resume),
        );
        if !site.head_inline {
            inserts.push((
                site.head_at,
                Fragment::generated_bytes(promote::head(&renderer, site)),
            ));
        }
        overrides.extend(promote::overrides(&renderer, site));
    }
    if plan.uses.prelude() {
        inserts.insert(0, (0, Fragment::generated_bytes(prelude(&renderer))));
    }
    let input = file.input_bytes();
    let continuations = plan
        .postwork
        .iter()
        .any(|p| p.migration == Migration::Continuation);
    if !plan.sites.is_empty() || continuations || !plan.promotions.is_empty() {
        let len = input.len();
        let mut fragment = if input.is_empty() || input.ends_with(b"\n") || input.ends_with(b"\r") {
            Vec::new()
        } else {
            file.newline.as_bytes().to_vec()
        };
        if !plan.sites.is_empty() {
            fragment.extend(stats(&renderer));
        }
        if continuations {
            fragment.extend(continuation::stats(&renderer, &plan.postwork));
        }
        if !plan.promotions.is_empty() {
            fragment.extend(promote::stats(&renderer, &plan.promotions));
        }
        inserts.push((len, Fragment::generated_bytes(fragment)));
    }
    // Stable: at one offset, definitions of an earlier child come first.
    inserts.sort_by_key(|(at, _)| *at);

    let mut out = OutFile::new(output_name, input.len() * 2);
    let mut pos = 0;
    for (at, fragment) in inserts {
        renderer.render_into(&mut out, Span::new(pos, at), None, &overrides);
        fragment.write_to(&mut out);
        pos = at;
    }
    renderer.render_into(&mut out, Span::new(pos, input.len()), None, &overrides);
    out.into_bytes()
}

/// The declarations and definitions of a child defined in another file, for
/// the line start `at` of the input: wrapped in the child's namespaces (the
/// input is taken to include its header at namespace scope).
fn elsewhere(r: &Renderer, plan: &crate::plan::ChildPlan, at: usize) -> Fragment {
    let child = &r.program.functions[plan.child];
    let resume = r.file.line_of(at);
    if child.namespace.is_empty() {
        let mut out = Fragment::generated_bytes(declarations(r, plan, resume));
        out.append(definitions(r, plan, resume));
        return out;
    }
    let namespaces = |open: bool| {
        let ctx = NamespacesContext {
            open,
            namespaces: child.namespace.clone(),
            line_out: OUTPUT_LINE_MARKER,
        };
        r.codec.to_bytes(&crate::transform::with_newlines(
            &r.templates.render(&ctx),
            r.file.newline,
        ))
    };
    let mut out = Fragment::generated_bytes(namespaces(true));
    out.generated(&declarations(r, plan, resume));
    let mut definitions = definitions(r, plan, resume);
    // The definitions end with `#line` back to the input: the namespaces
    // close before it.
    let resync = definitions.split_off_last_generated_line();
    out.append(definitions);
    out.generated(&namespaces(false));
    out.append(resync);
    out
}

/// At the top of the file: the launch-bounds macro of the parent kernels, and
/// the includes and helpers that aggregated launches need.
fn prelude(r: &Renderer) -> Vec<u8> {
    let ctx = PreludeContext {
        uses: r.plan.uses.clone(),
        // The queue of deferred launches is the same in every file: copied
        // as it is (no template to parse).
        defer_queue: if r.plan.uses.defer {
            crate::transform::templates::DEFER_QUEUE
        } else {
            ""
        },
        serial_list: if r.plan.uses.serial_list {
            crate::transform::templates::SERIAL_LIST
        } else {
            ""
        },
        floor_support: if r.plan.uses.floor {
            crate::transform::templates::FLOOR_SUPPORT
        } else {
            ""
        },
        // The count of unfinished launches is the same in every file with
        // sites or promoted chains (their step grids and pools are counted):
        // copied as it is.
        launch_budget: if r.plan.uses.stats || r.plan.uses.promote {
            crate::transform::templates::LAUNCH_BUDGET
        } else {
            ""
        },
        // The aggregated allocations' generic code, where a site has them.
        alloc_support: if r.plan.uses.alloc {
            crate::transform::templates::ALLOC_SUPPORT
        } else {
            ""
        },
        counters: counters(r.plan),
        file_name: r.file.name.clone(),
        resume_line: 1,
        file: r.file.quoted_name(),
    };
    let text = r.templates.render(&ctx);
    r.codec
        .to_bytes(&crate::transform::with_newlines(&text, r.file.newline))
}

/// A declaration of a bounded kernel, after its definition, that gives it
/// `DPOPT_PARENT_BOUNDS`, or `__launch_bounds__(N)` where its sites state
/// `parent_threads(N)` (nvcc applies the launch bounds of a later
/// declaration; measured: 197 -> 64 registers): the definition itself stays
/// as written. It repeats the definition's head without default arguments
/// (C++ forbids giving them twice) and with the template header's
/// parameters only.
fn bounds(r: &Renderer, kernel: FunctionId, resume_line: usize) -> Vec<u8> {
    let f = &r.program.functions[kernel];
    let specifiers = r.head_specifiers(f);
    let ctx = BoundsContext {
        kernel: f.name.clone(),
        template_params: if f.template_header.is_some() {
            f.template_params
                .iter()
                .map(|t| t.declaration.clone())
                .collect()
        } else {
            Vec::new()
        },
        template: f.template_header.is_some(),
        specifiers,
        name: r.codec.to_text(&r.file.bytes[f.name_span.range()]),
        params: f.params.iter().map(|p| p.declaration.clone()).collect(),
        stated: r.plan.kernels.get(&kernel).cloned().unwrap_or_default(),
        resume: Resume {
            line_out: OUTPUT_LINE_MARKER,
            resume_line,
            file: r.file.quoted_name(),
        },
    };
    let text = r.templates.render(&ctx);
    r.codec
        .to_bytes(&crate::transform::with_newlines(&text, r.file.newline))
}

/// The launch counters' names, in a file with sites.
fn counters(plan: &Plan) -> Vec<crate::names::CounterName> {
    if plan.sites.is_empty() {
        return Vec::new();
    }
    crate::names::Counter::ALL
        .iter()
        .map(|c| c.describe())
        .collect()
}

/// Host functions that print and reset every site's launch counters
/// (compiled only with `-DDPOPT_STATS`), at the end of the file.
fn stats(r: &Renderer) -> Vec<u8> {
    let sites: Vec<SiteSymbols> = r
        .plan
        .sites
        .iter()
        .map(|s| SiteSymbols::of(&s.id, &r.program.functions[s.child].namespace))
        .collect();
    let knobs = r
        .plan
        .sites
        .iter()
        .flat_map(|s| {
            let scope = crate::names::scope(&r.program.functions[s.child].namespace);
            s.knobs
                .iter()
                .filter(|k| k.knob.at_run_time())
                .map(move |k| RuntimeKnob {
                    global: k.global(),
                    name: k.name.clone(),
                    scope: scope.clone(),
                })
        })
        .collect();
    let ctx = StatsContext {
        file_name: r.file.name.clone(),
        alloc: r.plan.uses.alloc,
        sites,
        counters: counters(r.plan),
        knobs,
    };
    let text = r.templates.render(&ctx);
    r.codec
        .to_bytes(&crate::transform::with_newlines(&text, r.file.newline))
}

/// Fragments around kernel `kernel`: declarations before its first
/// declaration, definitions after its body; each is given the input's line
/// it hands the numbering back to.
fn around(
    file: &SourceFile,
    program: &Program,
    kernel: FunctionId,
    inserts: &mut Vec<(usize, Fragment)>,
    declarations: impl FnOnce(usize) -> Vec<u8>,
    definitions: impl FnOnce(usize) -> Vec<u8>,
) {
    let kernel = &program.functions[kernel];
    let (at, mut fragment) = insertion_before(file, kernel.first_declared);
    fragment.extend(declarations(file.line_of(at.max(kernel.first_declared))));
    inserts.push((at, Fragment::generated_bytes(fragment)));
    let (at, mut fragment) = insertion_after(file, program, kernel.body.end());
    fragment.extend(definitions(file.line_of(at)));
    inserts.push((at, Fragment::generated_bytes(fragment)));
}

/// Where to insert text before the declaration starting at `offset`: the
/// start of its line when only blanks precede it there, else `offset` itself
/// with a line break first.
fn insertion_before(file: &SourceFile, offset: usize) -> (usize, Vec<u8>) {
    let line_start = file.line_start(offset);
    if file.view[line_start..offset].trim().is_empty() {
        (line_start, Vec::new())
    } else {
        (offset, file.newline.as_bytes().to_vec())
    }
}

/// Where to insert text after a definition ending at `end`: the first line
/// start after it that is not inside a comment or directive; at the end of
/// the file (with a line break first when the file does not end with one).
fn insertion_after(file: &SourceFile, program: &Program, end: usize) -> (usize, Vec<u8>) {
    let starts = file.line_starts();
    for &line_start in &starts[starts.partition_point(|&s| s <= end)..] {
        if !file.in_input(line_start) {
            break;
        }
        // The byte before a line start ends a line; is it a plain newline token?
        let newline = program.tokens.partition_point(|t| t.end < line_start);
        if program
            .tokens
            .get(newline)
            .is_some_and(|t| t.kind == TokenKind::Newline && t.end == line_start)
            && between_declarations(file, program, end, line_start)
        {
            return (line_start, Vec::new());
        }
    }
    let len = file.input_len();
    let prefix = if file.input_bytes().ends_with(b"\n") || file.input_bytes().ends_with(b"\r") {
        Vec::new()
    } else {
        file.newline.as_bytes().to_vec()
    };
    (len, prefix)
}

/// Is `line_start` (after the end `end` of a definition) between two
/// declarations of the file: no bracket opened since `end` is still open,
/// and the code since `end` (if any) ends with `;`, `}` or a directive?
fn between_declarations(
    file: &SourceFile,
    program: &Program,
    end: usize,
    line_start: usize,
) -> bool {
    let sig = &program.sig;
    let from = sig.partition_point(|t| t.start < end);
    let to = sig.partition_point(|t| t.start < line_start);
    let open = (from..to).any(|k| {
        matches!(sig[k].text(&file.view), "(" | "[" | "{")
            && match program.brackets.partner(k) {
                Some(partner) => partner >= to,
                None => true,
            }
    });
    let ended = match sig[from..to].last() {
        Some(t) => t.kind == TokenKind::Directive || matches!(t.text(&file.view), ";" | "}"),
        None => true,
    };
    !open && ended
}
