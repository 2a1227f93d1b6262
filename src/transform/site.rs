//! A rewritten launch site: threshold and/or coarsen around one launch.

use super::context::{Count, Factor, SiteContext};
use super::renderer::Renderer;
use super::{with_newlines, OUTPUT_LINE_MARKER};
use crate::names::{self, Knob, SiteSymbols};
use crate::plan::{ChildPlan, SiteId};
use crate::program::FunctionId;
use crate::source::Span;
use crate::thread_count::{CountSource, ThreadCount};
use crate::writer::{Fragment, Sink};

/// Where a piece of the user's text stands in the site template's output:
/// the template is given `PIECE_OPEN index PIECE_CLOSE`, and the output is
/// read back into `Segment`s once (`segments`), so that nothing after that
/// looks at the text in place of a piece.
const PIECE_OPEN: char = '\u{E000}';
const PIECE_CLOSE: char = '\u{E001}';

/// A piece of the launch as written (rendered: builtins replaced in the
/// copy of a child's body, the user's bytes kept apart), and the input line
/// it starts on.
struct Piece {
    text: Fragment,
    line: usize,
}

/// A line of the template's output: generated text, and pieces (indices
/// into the site's pieces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Segment<'a> {
    Generated(&'a str),
    Piece(usize),
}

/// The template's output as lines of segments (split at its own line
/// breaks; a piece's line breaks are inside the piece).
fn segments(code: &str) -> Vec<Vec<Segment<'_>>> {
    code.split('\n')
        .map(|line| {
            let mut out = Vec::new();
            let mut rest = line;
            while let Some(open) = rest.find(PIECE_OPEN) {
                if open > 0 {
                    out.push(Segment::Generated(&rest[..open]));
                }
                let after = &rest[open + PIECE_OPEN.len_utf8()..];
                let close = after.find(PIECE_CLOSE).expect("a piece is closed");
                out.push(Segment::Piece(
                    after[..close].parse().expect("a piece's index"),
                ));
                rest = &after[close + PIECE_CLOSE.len_utf8()..];
            }
            if !rest.is_empty() || out.is_empty() {
                out.push(Segment::Generated(rest));
            }
            out
        })
        .collect()
}

/// The stream a launch is written with, its whitespace removed.
pub(super) fn written_stream(
    program: &crate::program::Program,
    launch: &crate::program::Launch,
) -> Option<String> {
    launch
        .config
        .get(3)
        .map(|s| program.view[s.range()].split_whitespace().collect())
}

/// The replacement for pragma + launch statement of site `index`, followed
/// by a `#line` directive that resynchronises with the original file,
/// written into `out`: the user's text of the launch as the user's bytes.
pub fn site_code(r: &Renderer, index: SiteId, copy_of: Option<FunctionId>, out: &mut impl Sink) {
    let substitute = copy_of.is_some();
    // User text goes into the template as pieces, so that indenting the
    // generated lines never touches the user's own line breaks. Each piece
    // remembers the line it comes from: a generated line that carries user
    // text gets a `#line` naming that line, so that nvcc's messages about
    // the user's own code point at it.
    let pieces = std::cell::RefCell::new(Vec::<Piece>::new());
    let piece = |text: Fragment, from: usize| -> String {
        let mut p = pieces.borrow_mut();
        p.push(Piece {
            text,
            line: r.file.line_of(from),
        });
        format!("{PIECE_OPEN}{}{PIECE_CLOSE}", p.len() - 1)
    };
    let rendered = |range: Span, overrides: &[(Span, String)]| {
        let mut f = Fragment::default();
        r.render_into(&mut f, range, copy_of, overrides);
        f
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
                    {
                        let mut f = Fragment::default();
                        f.user(&r.codec.to_bytes(&r.substitute_text(e, substitute)));
                        f
                    },
                    r.program.pragmas[site.pragma].span.start(),
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
                            piece(rendered(*range, &[]), range.start()),
                            "child thread count, from the grid size",
                        ));
                        grid_overrides.push((*range, var.clone()));
                        factors.push(Factor::var(var));
                    }
                    CountSource::Reevaluated(range) => {
                        counts.push(Count::new(
                            &var,
                            piece(rendered(*range, &[]), range.start()),
                            &format!(
                                "child thread count, from the grid size computed at line {}",
                                file.line_of(range.start())
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
        .map(|c| piece(rendered(*c, &[]), c.start()))
        .collect();
    let grid = piece(
        rendered(launch.config[0], &grid_overrides),
        launch.config[0].start(),
    );
    // Shared memory and stream are always passed, so that the stream can be
    // overridden at compile time (DPOPT_STREAM_<site>, DPOPT_LAUNCH_STREAM).
    // A launch written without a stream (or into stream 0) goes to
    // DPOPT_DIRECT_STREAM, fire-and-forget unless overridden: dpopt already
    // assumes that a site's children are independent of each other
    // (thresholding runs some of them before earlier ones finish), and the
    // block's NULL stream both serializes them and hung intermittently on an
    // H200 (docs/AGGREGATION.md, "Streams").
    let user_stream = match written_stream(r.program, launch).as_deref() {
        None | Some("0" | "NULL" | "nullptr" | "(cudaStream_t)0" | "cudaStream_t(0)") => None,
        Some(_) => Some(config[3].clone()),
    };
    let args: Vec<String> = launch
        .args
        .iter()
        .map(|a| piece(rendered(*a, &[]), a.start()))
        .collect();
    // In a __host__ __device__ function the host compilation keeps the
    // launch as written: the generated versions exist on the device only.
    let parent = &r.program.functions[site.parent];
    let host_device = parent.space.host && parent.space.device;
    let original = host_device.then(|| piece(rendered(launch.span, &[]), launch.span.start()));

    // Generated functions live beside the child: qualify them like the launch
    // qualifies the kernel (`ns::child` -> `ns::dpopt_serial_child`).
    let kernel_text = &file.view[launch.kernel_span.range()];
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
    let child_plan = r.plan.children.iter().find(|c| c.child == site.child);
    // In the split serial version of a recursive child that holds a block's
    // arrays (threads' variables kept across barriers, shared memory), its
    // own launches of the child are made as written (counted, coarsened
    // where asked), never serially, aggregated or deferred: each of those
    // paths calls the serial version again, and a serial version with such
    // arrays must not call itself (a recursion's stack size is not known to
    // ptxas: a thread then has cudaLimitStackSize, 1 KiB by default). One
    // without arrays is thresholded like the body.
    let launch_only = r.split
        && nested
        && child_plan
            .and_then(|c| c.phased.as_ref())
            .map_or(true, |p| p.holds_arrays());
    if launch_only {
        // no threshold to compare with: only the counts the grid names
        counts.retain(|c| grid_overrides.iter().any(|(_, v)| *v == c.var));
    }
    let defers = child_plan.is_some_and(|c| c.defers);
    // A recursive child's fallback runs listed (`ChildPlan::lists`).
    let lists = child_plan.is_some_and(ChildPlan::lists) && !launch_only;
    let queue = names::DeferSymbols::of(&child.name);
    let symbols = SiteSymbols::of(&site.id, &child.namespace);
    let floor = (r.floor && site.floor.is_some()).then(|| symbols.floor_push.clone());
    // A recursive floor site: its serial version is the copy's, which runs
    // the copy's body and records in the queue (the ticket names the launch).
    let floor_recursive = site.floor.as_ref().is_some_and(|f| f.recursive);
    let ctx = SiteContext {
        summary: if launch_only {
            format!(
                "{} (in the split serial version: launched as written)",
                site.summary
            )
        } else {
            site.summary.clone()
        },
        site: site.id.clone(),
        location: file.location(r.program.pragmas[site.pragma].span.start()),
        counts,
        grid,
        block: config[1].clone(),
        threshold: site.threshold.is_some() && !launch_only,
        coarsen: site.coarsen.is_some(),
        factors,
        threshold_macro: site.threshold_macro(),
        coarsen_macro: site.coarsen_macro(),
        kernel: format!("{qualifier}{}", names::counted(&child.name)),
        targs: launch.template_args.clone().unwrap_or_default(),
        args,
        // In the launch-free copy (no device-runtime call), the serial
        // version that folds the child's last atomics, where it has one.
        serial: if floor.is_some() && floor_recursive {
            names::floor_serial(&child.name)
        } else if r.floor && child_plan.is_some_and(|c| c.folds.is_some()) {
            format!("{qualifier}{}", names::serial_folded(&child.name))
        } else {
            format!("{qualifier}{}", names::serial(&child.name))
        },
        child_serial: child_plan.is_some_and(|c| c.serial) && !launch_only,
        launcher: format!("{qualifier}{}", symbols.launcher),
        aggregate: site.aggregation.is_some() && !launch_only,
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
        // A recursive child's listed runner; for a coarsened launch of
        // another child that runs serially only when it finds no room, the
        // child's out-of-line serial call.
        runner: if lists {
            Some(format!("{qualifier}{}", queue.runner))
        } else if site.coarsened_fallback()
            && !launch_only
            && child_plan.is_some_and(|c| r.plan.serial_call(c))
        {
            Some(format!(
                "{qualifier}{}{}",
                names::serial_call(&child.name),
                launch.template_args.as_deref().unwrap_or("")
            ))
        } else {
            None
        },
        listed: (lists && nested).then(|| format!("{qualifier}{}", queue.push)),
        defer: if defers && !launch_only {
            format!("{qualifier}{}", names::defer(&child.name))
        } else {
            String::new()
        },
        floor_ticket: if floor.is_some() && floor_recursive {
            ", dpopt_ticket".to_string()
        } else {
            String::new()
        },
        floor,
    };
    let code = r.templates.render(&ctx);

    // Indent every line after the first like the launch statement.
    let indent = file.indentation_at(launch.span.start());
    let pieces = pieces.into_inner();
    let mut w = Writer {
        out,
        text: String::new(),
        r,
    };
    let lines = segments(code.trim_end());
    let mut lines = lines.iter();
    // The `#if` of a __host__ __device__ parent goes before the site's first
    // line, which continues the pragma's.
    if host_device {
        for segment in lines.next().into_iter().flatten() {
            match *segment {
                Segment::Generated(text) => w.text(text),
                Segment::Piece(index) => w.piece(&pieces[index].text),
            }
        }
        w.text("\n");
    }
    let quoted = file.quoted_name();
    let mut state = LineState::Input(file.line_of(r.program.pragmas[site.pragma].span.start()));
    for (i, line) in lines.enumerate() {
        if i > 0 {
            w.text("\n");
            let scaffolding = !line.iter().any(|s| matches!(s, Segment::Piece(_)))
                && !matches!(line.first(), Some(Segment::Generated(t)) if t.starts_with('#'));
            if scaffolding && state != LineState::Output {
                w.text(OUTPUT_LINE_MARKER);
                w.text("\n");
                state = LineState::Output;
            }
            if scaffolding {
                w.text(&indent);
            }
        }
        write_mapped(&mut w, line, &pieces, &mut state, i == 0, &indent, &quoted);
    }
    let resume = file.line_of(launch.span.end().saturating_sub(1));
    w.text(&format!("\n#line {resume} {quoted}\n"));
    // The rest of the launch's line now starts a line: a stray `#` there
    // (no directive where it stood) must not become one.
    let rest = file.view[launch.span.end()..].trim_start_matches([' ', '\t', '\x0b', '\x0c', '\0']);
    if rest.starts_with('#') || rest.starts_with("%:") {
        w.text("; ");
    }
    w.flush();
}

/// The site's output: generated text gathered and written in the file's
/// encoding and line endings, pieces written as they were rendered.
struct Writer<'w, 'r, S: Sink> {
    out: &'w mut S,
    text: String,
    r: &'w Renderer<'r>,
}

impl<S: Sink> Writer<'_, '_, S> {
    fn text(&mut self, text: &str) {
        self.text.push_str(text);
    }

    fn piece(&mut self, piece: &Fragment) {
        self.flush();
        piece.write_to(self.out);
    }

    fn flush(&mut self) {
        if !self.text.is_empty() {
            let text = with_newlines(&self.text, self.r.file.newline);
            self.out.generated(&self.r.codec.to_bytes(&text));
            self.text.clear();
        }
    }
}

/// Which file the line numbers of the lines being written follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineState {
    /// The input, the next line being this one.
    Input(usize),
    /// The output file itself.
    Output,
}

/// Write one line of the template's output with its pieces. Before each
/// piece that does not come from the line the numbering is at, the line is
/// broken and a `#line` names the piece's line (except on the site's first
/// line, which continues the pragma's line).
fn write_mapped(
    w: &mut Writer<'_, '_, impl Sink>,
    line: &[Segment<'_>],
    pieces: &[Piece],
    state: &mut LineState,
    first: bool,
    indent: &str,
    quoted_file: &str,
) {
    let mut at_line_start = !first;
    // Generated text since the last piece.
    let mut before = String::new();
    for segment in line {
        let index = match *segment {
            Segment::Generated(text) => {
                before.push_str(text);
                continue;
            }
            Segment::Piece(index) => index,
        };
        let Piece {
            text: piece,
            line: from,
        } = &pieces[index];
        if !first && *state != LineState::Input(*from) {
            if !at_line_start {
                w.text("\n");
            }
            w.text(&format!("#line {from} {quoted_file}\n"));
            w.text(indent);
            w.text(if at_line_start {
                &before
            } else {
                before.trim_start()
            });
        } else {
            if at_line_start {
                w.text(indent);
            }
            w.text(&before);
        }
        w.piece(piece);
        *state = LineState::Input(from + piece.line_breaks());
        at_line_start = false;
        before.clear();
    }
    w.text(&before);
    if let LineState::Input(l) = state {
        *state = LineState::Input(*l + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_read_back_once_into_segments() {
        let code = format!("a{PIECE_OPEN}0{PIECE_CLOSE}b\n{PIECE_OPEN}12{PIECE_CLOSE}\n");
        assert_eq!(
            segments(&code),
            [
                vec![
                    Segment::Generated("a"),
                    Segment::Piece(0),
                    Segment::Generated("b")
                ],
                vec![Segment::Piece(12)],
                vec![Segment::Generated("")],
            ]
        );
    }
}
