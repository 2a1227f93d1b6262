//! Names in clause values that nothing in the file declares.

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::pragma::{Directive, Value};
use crate::program::Program;
use crate::source::Span;
use crate::token::{SigIdx, TokenKind};

/// Names in clause values (`threshold(TH)`) that nothing in the file
/// declares or defines: they compile only if a header or `-D` supplies them,
/// which dpopt cannot see, so it says so.
pub(super) fn unseen_names(program: &Program, directive: &Directive) -> Vec<Diagnostic> {
    let view = program.view.as_str();
    let mut out = Vec::new();
    for clause in &directive.clauses {
        for value in clause.value.values() {
            let Value::Macro(name) = value else {
                continue;
            };
            if name == "warpSize"
                || name.ends_with("_MAX")
                || declared_in_file(program, name.as_str())
            {
                continue;
            }
            let text = &view[clause.span.range()];
            let span = word_at(text, name.as_str())
                .map(|at| {
                    let start = clause.span.start() + at;
                    Span::new(start, start + name.len())
                })
                .unwrap_or(clause.span);
            out.push(Diagnostic::new(
                DiagnosticKind::UnseenName {
                    name: name.clone(),
                    clause: clause.name.spelling().to_string(),
                },
                span,
                "not declared in this file",
            ));
        }
    }
    out
}

/// Does any code token or any directive other than a `#pragma dp` name `name`?
fn declared_in_file(program: &Program, name: &str) -> bool {
    let view = program.view.as_str();
    program.defines.iter().any(|(n, _)| n == name)
        || program.sig.iter().enumerate().any(|(i, t)| match t.kind {
            TokenKind::Ident => t.text(view) == name,
            TokenKind::Directive => {
                !program.pragmas.iter().any(|p| p.token == SigIdx(i)) && {
                    let text = t.text(view);
                    word_at(text, name).is_some()
                        || text.contains('\\')
                            && word_at(&crate::phases::without_splices(text), name).is_some()
                }
            }
            _ => false,
        })
}

/// Offset of `word` in `text` as a whole identifier.
fn word_at(text: &str, word: &str) -> Option<usize> {
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let b = text.as_bytes();
    text.match_indices(word).map(|(at, _)| at).find(|&at| {
        (at == 0 || !is_ident(b[at - 1])) && !b.get(at + word.len()).is_some_and(|&c| is_ident(c))
    })
}
