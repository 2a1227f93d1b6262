//! Stage 2 (analyze): names of the file that the generated code's headers
//! make ambiguous. The code generated for `consldt(...)` and `floor`
//! includes CUB and cooperative groups, whose headers declare
//! `std::complex`; a file (or a header it includes) that declares its own
//! `complex` at namespace scope and says `using namespace std;` compiled as
//! written, but its uses of `complex` are ambiguous in the output
//! (temporal-hpc's Mandelbrot programs). A warning names both places.

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::program::Program;
use crate::source::Span;
use crate::token::TokenKind;

/// The `std` names the generated code's headers declare that a program is
/// known to declare for itself.
const STD_NAMES: &[&str] = &["complex"];

/// The warnings, when the generated code includes those headers
/// (`includes_std_headers`).
pub(super) fn check(program: &Program, includes_std_headers: bool) -> Vec<Diagnostic> {
    if !includes_std_headers || !program.view.contains("namespace") {
        return Vec::new();
    }
    let view = program.view.as_str();
    let sig = &program.sig;
    let text = |k: usize| sig.get(k).map_or("", |t| t.text(view));
    let outside_functions = |offset: usize| !program.in_function_body(offset);
    // `using namespace std;` (or `::std`) outside any function body.
    let Some(directive) = (0..sig.len()).find(|&k| {
        text(k) == "using"
            && text(k + 1) == "namespace"
            && (text(k + 2) == "std" && text(k + 3) == ";"
                || text(k + 2) == "::" && text(k + 3) == "std" && text(k + 4) == ";")
            && outside_functions(sig[k].start)
    }) else {
        return Vec::new();
    };
    let using = Span::new(sig[directive].start, sig[directive + 2].end);
    let mut out = Vec::new();
    for &name in STD_NAMES {
        // `struct|class|union NAME` with a body or `;`, `using NAME =`,
        // `typedef ... NAME;`, outside function bodies.
        let declared = (1..sig.len()).find(|&k| {
            sig[k].kind == TokenKind::Ident
                && text(k) == name
                && outside_functions(sig[k].start)
                && text(k - 1) != "::"
                && text(k - 1) != "."
                && text(k - 1) != "->"
                && (matches!(text(k - 1), "struct" | "class" | "union")
                    && matches!(text(k + 1), "{" | ";" | ":")
                    || text(k - 1) == "using" && text(k + 1) == "="
                    || text(k + 1) == ";" && typedef_before(program, k))
        });
        if let Some(k) = declared {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::StdNameClash {
                        name: name.to_string(),
                    },
                    sig[k].span(),
                    "declared by the file",
                )
                .with_note(using, "brings `std::` names in"),
            );
        }
    }
    out
}

/// Is the statement that ends after significant token `k` a `typedef`?
fn typedef_before(program: &Program, k: usize) -> bool {
    let view = program.view.as_str();
    let sig = &program.sig;
    let mut j = k;
    while j > 0 {
        j -= 1;
        match sig[j].text(view) {
            ";" | "{" | "}" => return false,
            "typedef" => return true,
            _ => {}
        }
    }
    false
}
