//! `#pragma dp` written through a macro (`_Pragma` in a `#define`): dpopt
//! does not expand macros, so it warns where one may hide a site.

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::program::Program;
use crate::source::SourceFile;
use crate::source::Span;
use crate::token::{is_call_at, TokenKind};

/// Macros that expand to `_Pragma`: a `#pragma dp` written through one is
/// invisible to dpopt (it does not expand macros), so each use that may
/// carry one gets a warning. A macro whose `_Pragma` literal starts with
/// `dp` is reported at every use (at its definition when it has none); one
/// that stringizes its argument (`_Pragma(#x)`) at each use whose argument
/// starts with `dp`.
pub fn pragma_macros(file: &SourceFile, program: &Program) -> Vec<Diagnostic> {
    let view = &file.view;
    let mut out = Vec::new();
    for t in program
        .sig
        .iter()
        .filter(|t| t.kind == TokenKind::Directive && file.in_input(t.start))
    {
        let logical = crate::phases::directive_text(t.text(view), t.start);
        let text = logical.text.trim_start();
        let Some(rest) = text.strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("define") else {
            continue;
        };
        let Some(op) = logical.text.find("_Pragma") else {
            continue;
        };
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        let after = logical.text[op + "_Pragma".len()..].trim_start();
        let after = after.strip_prefix('(').unwrap_or(after).trim_start();
        let literal_dp = after
            .trim_start_matches(['L', 'u', 'U', '8'])
            .strip_prefix('"')
            .is_some_and(crate::phases::is_dp_operator_text);
        let stringizes = after.starts_with('#') && !after.starts_with("##");
        if !literal_dp && !stringizes {
            continue;
        }
        let warning = |span: Span, label: &str| {
            Diagnostic::new(
                DiagnosticKind::PragmaInMacro {
                    name: name.clone(),
                    in_arguments: false,
                },
                span,
                label.to_string(),
            )
            .with_note(logical.source_span(op..op + 7), "`_Pragma` here")
        };
        let mut used = false;
        for (i, u) in program.sig.iter().enumerate() {
            // A use may be split by a line splice (`NA\` newline `ME`).
            if u.kind != TokenKind::Ident
                || !file.in_input(u.start)
                || crate::phases::without_splices(u.text(view)) != name
            {
                continue;
            }
            let arg_is_dp = is_call_at(&program.sig, i, view)
                && program
                    .sig
                    .get(i + 2)
                    .is_some_and(|a| crate::phases::without_splices(a.text(view)) == "dp");
            if literal_dp || arg_is_dp {
                used = true;
                out.push(warning(u.span(), "a `#pragma dp` through a macro"));
            }
        }
        if literal_dp && !used {
            out.push(warning(t.span(), "this macro"));
        }
    }
    for (span, name) in &program.pragmas_in_macro_arguments {
        out.push(Diagnostic::new(
            DiagnosticKind::PragmaInMacro {
                name: name.clone(),
                in_arguments: true,
            },
            *span,
            "in the macro's arguments",
        ));
    }
    out
}
