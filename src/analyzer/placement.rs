//! Where the code generated for a child defined in another file goes.

use crate::plan::{Plan, SiteId};
use crate::program::{FunctionId, Program};
use crate::source::SourceFile;
use crate::token::TokenKind;

/// Where the code generated for a child defined in another file goes: a
/// line start of the input after which the child is declared: after the
/// `#include` that brings in its header, or after the input's (or an
/// included header's) first declaration of it, whichever comes first;
/// before the first parent when there is none.
pub(super) fn place_for_outside_child(
    file: &SourceFile,
    program: &Program,
    child: FunctionId,
    sites: &[SiteId],
    plan: &Plan,
) -> usize {
    let function = &program.functions[child];
    let mut places = Vec::new();
    if let Some(anchor) = file.part_at(function.start).and_then(|p| p.anchor) {
        places.push(anchor);
    }
    let first = function.first_declared;
    if file.in_input(first) {
        // The end of the declaration: its `;` (or the end of its line).
        let from = program.sig_index_at(first);
        let end = program.sig[from..]
            .iter()
            .take_while(|t| file.in_input(t.start))
            .find(|t| t.text(&file.view) == ";")
            .map_or(file.line_start(first), |t| t.end);
        places.push(end);
    } else if let Some(anchor) = file.part_at(first).and_then(|p| p.anchor) {
        places.push(anchor);
    }
    let Some(&at) = places.iter().min() else {
        let parent = sites
            .iter()
            .map(|&s| program.functions[plan.sites[s].parent].start)
            .min()
            .unwrap_or(0);
        return file.line_start(parent);
    };
    // The first line start after it (not inside a comment or directive).
    let starts = file.line_starts();
    for &line_start in &starts[starts.partition_point(|&s| s <= at)..] {
        if !file.in_input(line_start) {
            break;
        }
        let newline = program.tokens.partition_point(|t| t.end < line_start);
        if program
            .tokens
            .get(newline)
            .is_some_and(|t| t.kind == TokenKind::Newline && t.end == line_start)
        {
            return line_start;
        }
    }
    file.input_len()
}
