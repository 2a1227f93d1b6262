//! The copy of a callee that reads positions (`crate::position_clone`): the
//! callee's head and body as written, renamed, the positions as its first
//! parameters, its builtins replaced by them and its own calls of such
//! callees rewritten as in any copy of a body.

use super::context::PositionCloneContext;
use super::Renderer;
use super::OUTPUT_LINE_MARKER;
use crate::program::FunctionId;
use crate::source::Span;
use crate::writer::{Fragment, Sink};

/// One part of `position_clone.cu.tera`: `callee` and `line` (a line of
/// the input, for `#line`) where the part names them.
pub fn part(r: &Renderer, part: &'static str, callee: &str, line: usize) -> Vec<u8> {
    let text = r.templates.render(&PositionCloneContext {
        part,
        callee: callee.to_string(),
        line,
        file: r.file.quoted_name(),
        line_out: OUTPUT_LINE_MARKER,
    });
    super::child::to_output(r, &text)
}

/// The text of one part that names nothing (the parameters, the arguments).
pub fn text(r: &Renderer, which: &'static str) -> String {
    r.codec.to_text(&part(r, which, "", 0))
}

/// The copy's definition, written after the callee's.
pub fn definition(r: &Renderer, f: FunctionId, resume_line: usize) -> Fragment {
    let function = &r.program.functions[f];
    let (line, _) = r.file.line_directive_at(function.start);
    let mut out = Fragment::generated_bytes(part(r, "open", &function.name, line));
    let head = Span::new(function.start, function.body.start());
    r.render_into(&mut out, head, None, &head_overrides(r, f, head));
    r.render_into(&mut out, function.body, Some(f), r.position_calls());
    out.generated(&part(r, "close", "", resume_line));
    out
}

/// The copy's declaration, written before the callee's first declaration
/// when that precedes its definition: the declaration as written (default
/// arguments included), renamed, the positions first.
pub fn declaration(r: &Renderer, f: FunctionId, resume_line: usize) -> Option<Fragment> {
    let function = &r.program.functions[f];
    if function.first_declared >= function.start {
        return None;
    }
    let view = r.program.view.as_str();
    let sig = &r.program.sig;
    let from = r.program.sig_index_at(function.first_declared);
    let to = r.program.sig_index_at(function.start);
    let name = named_at(r, f, from, to)?;
    let close = r.program.brackets.partner(name + 1)?;
    let end = (close..to).find(|&k| sig[k].text(view) == ";")?;
    let range = Span::new(function.first_declared, sig[end].end);
    let (line, _) = r.file.line_directive_at(function.first_declared);
    let mut out = Fragment::generated_bytes(part(r, "open", &function.name, line));
    r.render_into(&mut out, range, None, &head_overrides(r, f, range));
    out.generated(&part(r, "close", "", resume_line));
    Some(out)
}

/// The name in `range` (a head of `f`, up to its body or its `;`) becomes
/// the copy's, and the positions open its parameter list (in place of
/// `void`).
fn head_overrides(r: &Renderer, f: FunctionId, range: Span) -> Vec<(Span, String)> {
    let function = &r.program.functions[f];
    let from = r.program.sig_index_at(range.start());
    let Some(k) = named_at(r, f, from, r.program.sig_index_at(range.end())) else {
        return Vec::new();
    };
    let sig = &r.program.sig;
    let open = k + 1;
    let close = r.program.brackets.partner(open).unwrap_or(open + 1);
    let params = text(r, "params");
    let paren = if function.params.is_empty() {
        // `()` or `(void)`: the positions alone.
        (
            Span::new(sig[open].start, sig[close].start),
            format!("({params}"),
        )
    } else {
        (sig[open].span(), format!("({params}, "))
    };
    vec![
        (sig[k].span(), crate::names::position_clone(&function.name)),
        paren,
    ]
}

/// The significant index of `f`'s name followed by `(` in `sig[from..to)`:
/// where a declaration or definition of it names it.
fn named_at(r: &Renderer, f: FunctionId, from: usize, to: usize) -> Option<usize> {
    let view = r.program.view.as_str();
    let sig = &r.program.sig;
    let name = r.program.functions[f].name.as_str();
    (from..to)
        .find(|&k| sig[k].text(view) == name && sig.get(k + 1).map(|t| t.text(view)) == Some("("))
}
