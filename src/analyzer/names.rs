//! Names in clause values: ones that nothing in the file declares (a
//! warning: a header or `-D` may supply them), and ones the generated code
//! cannot see where it uses them (an error).

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::expr::CAST_WORDS;
use crate::lexer::lex_text;
use crate::pragma::{ClauseName, ClauseValue, Directive, Value};
use crate::program::{PragmaSite, Program};
use crate::source::Span;
use crate::token::{SigIdx, TokenKind};

/// Names in clause values (`threshold(TH)`) that nothing in the file
/// declares or defines: they compile only if a header or `-D` supplies them,
/// which dpopt cannot see, so it says so.
///
/// A name the file declares only inside functions is an error: a clause
/// value must be a constant of the whole file (the generated kernels and
/// `static_assert`s use it), and `child_threads(EXPR)` is evaluated in the
/// parent before the launch, so its names must be the parent's (declared
/// before the pragma) or the file's.
pub(super) fn clause_names(
    program: &Program,
    pragma: &PragmaSite,
    directive: &Directive,
) -> Vec<Diagnostic> {
    let view = program.view.as_str();
    let mut out = Vec::new();
    let span_of = |clause_span: Span, name: &str| {
        let text = &view[clause_span.range()];
        // Past the clause's own name: `n` in `child_threads(n)`.
        let open = text.find('(').map_or(0, |i| i + 1);
        word_at(&text[open..], name)
            .map(|at| {
                let start = clause_span.start() + open + at;
                Span::new(start, start + name.len())
            })
            .unwrap_or(clause_span)
    };
    let unseen = |name: &str, clause: ClauseName, span: Span| {
        Diagnostic::new(
            DiagnosticKind::UnseenName {
                name: name.to_string(),
                clause: clause.spelling().to_string(),
            },
            span,
            "not declared in this file",
        )
    };
    let parent = program
        .functions
        .iter()
        .find(|f| f.body.range().contains(&pragma.span.start()));
    for clause in &directive.clauses {
        for value in clause.value.values() {
            let Value::Macro(name) = value else {
                continue;
            };
            let name = name.as_str();
            if name == "warpSize" || name.ends_with("_MAX") {
                continue;
            }
            let span = span_of(clause.span, name);
            let o = occurs(program, name);
            if !o.anywhere() {
                out.push(unseen(name, clause.name, span));
            } else if !o.file_scope && declared_in_functions(program, name).next().is_some() {
                out.push(Diagnostic::new(
                    DiagnosticKind::ValueNotConstant {
                        name: name.to_string(),
                        clause: clause.name.spelling().to_string(),
                    },
                    span,
                    "a parameter or local",
                ));
            }
        }
        let ClauseValue::Expression(expr) = &clause.value else {
            continue;
        };
        for name in expression_names(expr) {
            let span = span_of(clause.span, name);
            let o = occurs(program, name);
            if !o.anywhere() {
                out.push(unseen(name, clause.name, span));
                continue;
            }
            // declared only in functions (a parameter, a local), none of
            // them the parent before the launch: a name used in functions but
            // declared in none may be a header's macro
            let in_parent = |d: &Declared| match d {
                Declared::Param(f) => parent.is_some_and(|p| std::ptr::eq(p, *f)),
                Declared::Local(at) => {
                    parent.is_some_and(|f| (f.start..pragma.span.start()).contains(at))
                }
            };
            let mut declared = declared_in_functions(program, name).peekable();
            if !o.file_scope && declared.peek().is_some() && !declared.any(|d| in_parent(&d)) {
                out.push(Diagnostic::new(
                    DiagnosticKind::NameNotVisible {
                        name: name.to_string(),
                        parent: parent.map_or_else(String::new, |f| f.name.clone()),
                    },
                    span,
                    "not declared in the parent before the launch",
                ));
            }
        }
    }
    out
}

/// The names an expression reads as variables or constants: not what it
/// calls, not members (`e.end`, `p->n`, `ns::x`), not type words.
fn expression_names(expr: &str) -> Vec<&str> {
    const OTHER_WORDS: &[&str] = &[
        "sizeof",
        "alignof",
        "true",
        "false",
        "nullptr",
        "threadIdx",
        "blockIdx",
        "blockDim",
        "gridDim",
        "warpSize",
    ];
    let tokens: Vec<_> = lex_text(expr)
        .into_iter()
        .filter(|t| t.kind.is_significant())
        .collect();
    let text = |i: usize| &expr[tokens[i].range()];
    let mut names: Vec<&str> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let name = &expr[t.range()];
        let member = i > 0 && matches!(text(i - 1), "." | "->" | "::");
        let call = tokens
            .get(i + 1)
            .is_some_and(|_| matches!(text(i + 1), "(" | "<" | "::"));
        if t.kind == TokenKind::Ident
            && !member
            && !call
            && !CAST_WORDS.contains(&name)
            && !OTHER_WORDS.contains(&name)
            && !name.ends_with("_MAX")
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    names
}

/// Where a function of the file declares a name.
enum Declared<'p> {
    /// A parameter of this function.
    Param(&'p crate::program::Function),
    /// A local, at this byte offset.
    Local(usize),
}

/// The declarations of `name` in the file's functions: its parameters, and
/// locals after a type word (`int n = ...`; `promote::declared_at`).
fn declared_in_functions<'p>(
    program: &'p Program,
    name: &'p str,
) -> impl Iterator<Item = Declared<'p>> + 'p {
    let view = program.view.as_str();
    let params = program
        .functions
        .iter()
        .filter(move |f| f.params.iter().any(|p| p.name.as_deref() == Some(name)))
        .map(Declared::Param);
    let locals = program.functions.iter().flat_map(move |f| {
        let body = f.body_tokens.clone();
        body.filter(move |&i| {
            program.sig[i].kind == TokenKind::Ident
                && program.sig[i].text(view) == name
                && super::promote::declared_at(&program.sig, i, view)
        })
        .map(move |i| Declared::Local(program.sig[i].start))
    });
    params.chain(locals)
}

/// Where a name occurs in the file, outside `#pragma dp` lines.
#[derive(Debug, Clone, Copy, Default)]
struct Occurs {
    /// In a directive (a macro), or a token outside every function (at
    /// namespace or class scope): visible to every function after it.
    file_scope: bool,
    /// A token inside a function.
    in_functions: bool,
}

impl Occurs {
    fn anywhere(self) -> bool {
        self.file_scope || self.in_functions
    }
}

fn occurs(program: &Program, name: &str) -> Occurs {
    let view = program.view.as_str();
    let inside_function = |at: usize| {
        program
            .functions
            .iter()
            .any(|f| (f.start..f.body.end()).contains(&at))
    };
    let mut o = Occurs {
        file_scope: program.defines.iter().any(|(n, _)| n == name),
        ..Occurs::default()
    };
    for (i, t) in program.sig.iter().enumerate() {
        match t.kind {
            TokenKind::Ident if t.text(view) == name => {
                if inside_function(t.start) {
                    o.in_functions = true;
                } else {
                    o.file_scope = true;
                }
            }
            TokenKind::Directive
                if !program.pragmas.iter().any(|p| p.token == SigIdx(i))
                    && defines_word(t.text(view), name) =>
            {
                o.file_scope = true;
            }
            _ => {}
        }
        if o.file_scope && o.in_functions {
            break;
        }
    }
    o
}

/// Does a directive's text name `name` (continuation lines spliced)?
fn defines_word(text: &str, name: &str) -> bool {
    word_at(text, name).is_some()
        || text.contains('\\') && word_at(&crate::phases::without_splices(text), name).is_some()
}

/// Offset of `word` in `text` as a whole identifier.
fn word_at(text: &str, word: &str) -> Option<usize> {
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let b = text.as_bytes();
    text.match_indices(word).map(|(at, _)| at).find(|&at| {
        (at == 0 || !is_ident(b[at - 1])) && !b.get(at + word.len()).is_some_and(|&c| is_ident(c))
    })
}
