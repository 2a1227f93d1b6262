//! Stage 2 (analyze): launches that pass a pointer to the parent's shared
//! memory. A child grid cannot access its parent's `__shared__` memory (CUDA
//! makes such an argument undefined), so the original program is already
//! wrong there; dpopt would carry the pointer on (into an aggregation record,
//! another grid, or a serial run where it happens to work) without a word.
//! A warning names the argument and the declaration: a `__shared__` variable
//! of the parent or of the file passed whole, offset or by address (`buf`,
//! `buf + i`, `&buf[i]`), or a local pointer of the parent initialized from
//! one (`char *c = buf;`). An element read (`buf[i]`) and `sizeof` are values.

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::plan::Plan;
use crate::program::Program;
use crate::source::Span;
use crate::token::{Token, TokenKind};

pub(super) fn check(program: &Program, plan: &Plan) -> Vec<Diagnostic> {
    let view = program.view.as_str();
    let text = |t: &Token| t.text(view);
    // `__shared__` declarations of the file outside function bodies
    let file_shared = shared_names(program, &program.sig, &|t| {
        !program.in_function_body(t.start)
    });
    let mut out = Vec::new();
    for site in plan.sites.iter() {
        let parent = &program.functions[site.parent];
        let body = program.sig_in(parent.body);
        let mut names = file_shared.clone();
        names.extend(shared_names(program, body, &|_| true));
        // local pointers initialized from a shared variable: `T *c = buf;`
        for k in 1..body.len().saturating_sub(2) {
            if text(&body[k - 1]) == "*"
                && body[k].kind == TokenKind::Ident
                && text(&body[k + 1]) == "="
            {
                let init: Vec<&Token> = body[k + 2..]
                    .iter()
                    .take_while(|t| !matches!(text(t), ";" | ","))
                    .collect();
                if let Some(from) = pointer_use(program, &init, &names) {
                    names.push((text(&body[k]).to_string(), from, true));
                }
            }
        }
        if names.is_empty() {
            continue;
        }
        let launch = &program.launches[site.launch];
        for &arg in &launch.args {
            let tokens: Vec<&Token> = program.sig_in(arg).iter().collect();
            if tokens.iter().any(|t| text(t) == "sizeof") {
                continue;
            }
            if let Some(declared) = pointer_use(program, &tokens, &names) {
                out.push(
                    Diagnostic::new(
                        DiagnosticKind::SharedArgument {
                            kernel: program.functions[site.child].name.clone(),
                            argument: view[arg.range()].trim().to_string(),
                        },
                        arg,
                        "a pointer to shared memory",
                    )
                    .with_note(declared, "declared `__shared__` here"),
                );
            }
        }
    }
    out
}

/// The names declared by the `__shared__` declarations among `tokens` that
/// `keep` accepts, with the span of each declaration's name.
fn shared_names(
    program: &Program,
    tokens: &[Token],
    keep: &dyn Fn(&Token) -> bool,
) -> Vec<(String, Span, bool)> {
    let view = program.view.as_str();
    let mut names = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if t.text(view) != "__shared__" || !keep(t) {
            continue;
        }
        // the declarators: identifiers followed by `[`, `;`, `,` or `=` at
        // the declaration's top level
        let mut depth = 0i32;
        for k in i + 1..tokens.len() {
            let s = tokens[k].text(view);
            match s {
                "(" | "[" | "{" | "<" => depth += 1,
                ")" | "]" | "}" | ">" => depth -= 1,
                _ => {}
            }
            if s == ";" && depth <= 0 {
                break;
            }
            let next = tokens.get(k + 1).map_or("", |n| n.text(view));
            if depth == 0
                && tokens[k].kind == TokenKind::Ident
                && matches!(next, "[" | ";" | "," | "=")
            {
                names.push((s.to_string(), tokens[k].span(), next == "["));
            }
        }
    }
    names
}

/// Whether `tokens` (an argument or an initializer) yield a pointer into one
/// of `names` (each with whether it is an array or a pointer into one, which
/// decays to a pointer when named whole): an array or pointer not
/// subscripted or accessed as a member, or any of them with its address
/// taken. A scalar named whole is its value. The span of the name's
/// declaration.
fn pointer_use(
    program: &Program,
    tokens: &[&Token],
    names: &[(String, Span, bool)],
) -> Option<Span> {
    let view = program.view.as_str();
    for (k, t) in tokens.iter().enumerate() {
        if t.kind != TokenKind::Ident {
            continue;
        }
        let Some((_, declared, decays)) = names.iter().find(|(n, _, _)| n == t.text(view)) else {
            continue;
        };
        let next = tokens.get(k + 1).map_or("", |n| n.text(view));
        let before = if k > 0 { tokens[k - 1].text(view) } else { "" };
        let addressed = before == "&";
        if addressed || (*decays && !matches!(next, "[" | "." | "->" | "(")) {
            if before == "." || before == "->" || before == "::" {
                continue;
            }
            return Some(*declared);
        }
    }
    None
}
