//! A rewritten launch site: threshold and/or coarsen around one launch.

use super::context::{Count, Factor, SiteContext};
use super::renderer::Renderer;
use super::{with_newlines, OUTPUT_LINE_MARKER};
use crate::names::{self, Knob, SiteSymbols};
use crate::plan::SiteId;
use crate::program::FunctionId;
use crate::thread_count::{CountSource, ThreadCount};

/// The replacement for pragma + launch statement of site `index`, followed
/// by a `#line` directive that resynchronises with the original file.
pub fn site_code(r: &Renderer, index: SiteId, copy_of: Option<FunctionId>) -> Vec<u8> {
    let substitute = copy_of.is_some();
    // User text goes into the template as placeholders, so that indenting
    // the generated lines never touches the user's own line breaks.
    // Each piece remembers the line it comes from: a generated line that
    // carries user text gets a `#line` naming that line, so that nvcc's
    // messages about the user's own code point at it.
    let pieces = std::cell::RefCell::new(Vec::<(String, usize)>::new());
    let piece = |text: String, from: usize| -> String {
        let mut p = pieces.borrow_mut();
        p.push((text, r.file.line_of(from)));
        format!("\u{E000}{}\u{E001}", p.len() - 1)
    };
    let site = &r.plan.sites[index];
    let launch = &r.program.launches[site.launch];
    let file = r.file;
    let child = &r.program.functions[site.child];
    const DIMS: [&str; 3] = ["x", "y", "z"];

    let mut counts: Vec<Count> = Vec::new();
    let mut grid_overrides = Vec::new();
    let mut factors: Vec<Factor> = Vec::new();
    match &site.count {
        None => {}
        Some(ThreadCount::Explicit(e)) => {
            counts.push(Count::new(
                "dpopt_n0",
                piece(
                    r.substitute_text(e, substitute),
                    r.program.pragmas[site.pragma].span.start,
                ),
                "child_threads(...) of the pragma",
            ));
            factors.push(Factor::var("dpopt_n0".into()));
        }
        Some(ThreadCount::Fallback) => {}
        Some(ThreadCount::Factors(sources)) => {
            for source in sources {
                let var = format!("dpopt_n{}", counts.len());
                match source {
                    CountSource::InGrid(range) => {
                        counts.push(Count::new(
                            &var,
                            piece(r.render_text(range.clone(), copy_of, &[]), range.start),
                            "child thread count, from the grid size",
                        ));
                        grid_overrides.push((range.clone(), var.clone()));
                        factors.push(Factor::var(var));
                    }
                    CountSource::Reevaluated(range) => {
                        counts.push(Count::new(
                            &var,
                            piece(r.render_text(range.clone(), copy_of, &[]), range.start),
                            &format!(
                                "child thread count, from the grid size computed at line {}",
                                file.line_of(range.start)
                            ),
                        ));
                        factors.push(Factor::var(var));
                    }
                    CountSource::BlocksTimesBlockDim(d) => {
                        factors.push(Factor::dim(DIMS[*d]));
                    }
                }
            }
        }
    }

    let config: Vec<String> = launch
        .config
        .iter()
        .map(|c| piece(r.render_text(c.clone(), copy_of, &[]), c.start))
        .collect();
    let grid = piece(
        r.render_text(launch.config[0].clone(), copy_of, &grid_overrides),
        launch.config[0].start,
    );
    // Shared memory and stream are always passed, so that the stream can be
    // overridden at compile time (DPOPT_STREAM_<site>, DPOPT_LAUNCH_STREAM).
    // A launch written without a stream (or into stream 0) goes to
    // DPOPT_DIRECT_STREAM, fire-and-forget unless overridden: dpopt already
    // assumes that a site's children are independent of each other
    // (thresholding runs some of them before earlier ones finish), and the
    // block's NULL stream both serializes them and hung intermittently on an
    // H200 (docs/AGGREGATION.md, "Streams").
    let written_stream = launch
        .config
        .get(3)
        .map(|s| file.view[s.clone()].split_whitespace().collect::<String>());
    let user_stream = match written_stream.as_deref() {
        None | Some("0" | "NULL" | "nullptr" | "(cudaStream_t)0" | "cudaStream_t(0)") => None,
        Some(_) => Some(config[3].clone()),
    };
    let args: Vec<String> = launch
        .args
        .iter()
        .map(|a| piece(r.render_text(a.clone(), copy_of, &[]), a.start))
        .collect();
    // In a __host__ __device__ function the host compilation keeps the
    // launch as written: the generated versions exist on the device only.
    let parent = &r.program.functions[site.parent];
    let host_device = parent.space.host && parent.space.device;
    let original = host_device.then(|| {
        piece(
            r.render_text(launch.span.clone(), copy_of, &[]),
            launch.span.start,
        )
    });

    // Generated functions live beside the child: qualify them like the launch
    // qualifies the kernel (`ns::child` -> `ns::dpopt_serial_child`).
    let kernel_text = &file.view[launch.kernel_span.clone()];
    let qualifier = kernel_text.rfind("::").map_or(String::new(), |i| {
        kernel_text[..i + 2].split_whitespace().collect()
    });
    // A recursive child's serial version calls itself through its body: the
    // depth of that recursion is bounded (each level is a stack frame).
    let recursive = r
        .plan
        .children
        .iter()
        .any(|c| site.children().any(|s| s == c.child) && c.recursive);
    let nested = recursive && copy_of.is_some_and(|c| site.children().any(|s| s == c));
    let defers = r
        .plan
        .children
        .iter()
        .find(|c| c.child == site.child)
        .is_some_and(|c| c.defers);
    let symbols = SiteSymbols::of(&site.id, &child.namespace);
    let ctx = SiteContext {
        summary: site.summary.clone(),
        site: site.id.clone(),
        location: file.location(r.program.pragmas[site.pragma].span.start),
        counts,
        grid,
        block: config[1].clone(),
        threshold: site.threshold.is_some(),
        coarsen: site.coarsen.is_some(),
        factors,
        threshold_macro: site.threshold_macro(),
        coarsen_macro: site.coarsen_macro(),
        kernel: piece(
            r.codec.to_text(&file.bytes[launch.kernel_span.clone()]),
            launch.kernel_span.start,
        ),
        targs: launch.template_args.clone().unwrap_or_default(),
        args,
        serial: format!("{qualifier}{}", names::serial(&child.name)),
        launcher: format!("{qualifier}{}", symbols.launcher),
        aggregate: site.aggregation.is_some(),
        shared_memory: config.get(2).cloned(),
        site_stream: symbols.site_stream.clone(),
        user_stream,
        original,
        n: symbols,
        depth_arg: if !recursive {
            String::new()
        } else if nested {
            ", dpopt_depth + 1".to_string()
        } else {
            ", 1u".to_string()
        },
        depth_limit: nested.then(|| Knob::SerialDepth.name(&child.symbol)),
        coarse: format!("{qualifier}{}", names::coarse(&child.name)),
        defer: if defers {
            format!("{qualifier}{}", names::defer(&child.name))
        } else {
            String::new()
        },
    };
    let code = r.templates.render(&ctx);

    // Indent every line after the first like the launch statement.
    let indent = file.indentation_at(launch.span.start);
    let pieces = pieces.into_inner();
    let mut text = String::new();
    // The `#if` of a __host__ __device__ parent goes before the site's first
    // line, which continues the pragma's.
    let code = match code.split_once('\n') {
        Some((first, rest)) if host_device => {
            text.push_str(first);
            text.push('\n');
            rest
        }
        _ => code.as_str(),
    };
    let quoted = file.quoted_name();
    let mut state = LineState::Input(file.line_of(r.program.pragmas[site.pragma].span.start));
    for (i, line) in code.trim_end().lines().enumerate() {
        if i > 0 {
            text.push('\n');
            let scaffolding = !line.contains('\u{E000}') && !line.starts_with('#');
            if scaffolding && state != LineState::Output {
                text.push_str(OUTPUT_LINE_MARKER);
                text.push('\n');
                state = LineState::Output;
            }
            if scaffolding {
                text.push_str(&indent);
            }
        }
        write_mapped(
            &mut text,
            line,
            &pieces,
            &mut state,
            i == 0,
            &indent,
            &quoted,
        );
    }
    let resume = file.line_of(launch.span.end.saturating_sub(1));
    text.push_str(&format!("\n#line {resume} {quoted}\n"));
    // The rest of the launch's line now starts a line: a stray `#` there
    // (no directive where it stood) must not become one.
    let rest = file.view[launch.span.end..].trim_start_matches([' ', '\t', '\x0b', '\x0c', '\0']);
    if rest.starts_with('#') || rest.starts_with("%:") {
        text.push_str("; ");
    }
    r.codec.to_bytes(&with_newlines(&text, file.newline))
}

/// Which file the line numbers of the lines being written follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineState {
    /// The input, the next line being this one.
    Input(usize),
    /// The output file itself.
    Output,
}

/// Write one line of the template's output with its placeholders filled.
/// Before each piece of user text that does not come from the line the
/// numbering is at, the line is broken and a `#line` names the piece's line
/// (except on the site's first line, which continues the pragma's line).
fn write_mapped(
    out: &mut String,
    line: &str,
    pieces: &[(String, usize)],
    state: &mut LineState,
    first: bool,
    indent: &str,
    quoted_file: &str,
) {
    let mut rest = line;
    let mut at_line_start = !first;
    while let Some(open) = rest.find('\u{E000}') {
        let after = &rest[open + '\u{E000}'.len_utf8()..];
        let close = after.find('\u{E001}').expect("placeholder is closed");
        let index: usize = after[..close].parse().expect("placeholder index");
        let (piece, from) = (&pieces[index].0, pieces[index].1);
        let before = &rest[..open];
        if !first && *state != LineState::Input(from) {
            if !at_line_start {
                out.push('\n');
            }
            out.push_str(&format!("#line {from} {quoted_file}\n"));
            out.push_str(indent);
            out.push_str(if at_line_start {
                before
            } else {
                before.trim_start()
            });
        } else {
            if at_line_start {
                out.push_str(indent);
            }
            out.push_str(before);
        }
        out.push_str(piece);
        *state = LineState::Input(from + crate::source::line_breaks(piece));
        at_line_start = false;
        rest = &after[close + '\u{E001}'.len_utf8()..];
    }
    out.push_str(rest);
    if let LineState::Input(l) = state {
        *state = LineState::Input(*l + 1);
    }
}
