//! A template function's instance in text: its template parameters' names
//! replaced by the arguments it runs with, and the template arguments a call
//! leaves to deduction, told from the declared types of its arguments
//! (`barrier_split.rs` runs a template callee's body in place this way).

use crate::lexer::lex_text;
use crate::token::TokenKind;

/// `text` with each identifier named in `args` replaced by its argument,
/// but a member's name (`x.T`, `p->T`, `S::T`), which names no template
/// parameter.
pub fn substitute(text: &str, args: &[(String, String)]) -> String {
    if args.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut prev = "";
    for t in lex_text(text) {
        let word = &text[t.range()];
        let member = matches!(prev, "." | "->" | "::");
        match args.iter().find(|(name, _)| name == word) {
            Some((_, arg)) if t.kind == TokenKind::Ident && !member => out.push_str(arg),
            _ => out.push_str(word),
        }
        if t.kind.is_significant() {
            prev = word;
        }
    }
    out
}

/// Does a template parameter's declaration (`typename T`, `int N`) declare
/// a type?
pub fn declares_type(declaration: &str) -> bool {
    matches!(
        declaration.split_whitespace().next(),
        Some("typename" | "class")
    )
}

/// A template argument as the instance writes it in place of the
/// parameter's name: a type as written, a value in parentheses unless it is
/// one token (`(BS * 2)`, `8`).
pub fn argument_text(words: &[String], is_type: bool) -> String {
    let text = words.join(" ").replace(" :: ", "::");
    if is_type || words.len() == 1 {
        text
    } else {
        format!("({text})")
    }
}

/// The type of a literal argument (`0.0f`, `1`, `2.5`, `true`), as the
/// deduction of a template parameter taken by value sees it.
pub fn literal_type(text: &str) -> Option<&'static str> {
    if matches!(text, "true" | "false") {
        return Some("bool");
    }
    let first = text.chars().next()?;
    if !first.is_ascii_digit() && first != '.' {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    if lower.starts_with("0x") {
        return integer_type(&lower);
    }
    let floating = lower.contains('.') || lower.contains('e');
    if floating {
        return Some(if lower.ends_with('f') {
            "float"
        } else {
            "double"
        });
    }
    integer_type(&lower)
}

fn integer_type(lower: &str) -> Option<&'static str> {
    let suffix: String = lower
        .chars()
        .rev()
        .take_while(|c| matches!(c, 'u' | 'l'))
        .collect();
    Some(match (suffix.contains('u'), suffix.matches('l').count()) {
        (false, 0) => "int",
        (true, 0) => "unsigned int",
        (false, 1) => "long",
        (true, 1) => "unsigned long",
        (false, _) => "long long",
        (true, _) => "unsigned long long",
    })
}

/// How a function parameter's declaration takes template parameter `name`,
/// when deduction tells it from the argument's type: by value or by `const
/// &` (`T v`, `const T v`, `const T &v`), or through a pointer (`T *p`,
/// `const T *p`). `words`: the declaration's significant tokens without
/// the parameter's own name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    Value,
    Pointer { to_const: bool },
}

pub fn taken(words: &[&str], name: &str) -> Option<Taken> {
    let plain: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| !matches!(*w, "__restrict__" | "__restrict"))
        .collect();
    match plain[..] {
        [t] | ["const", t] | [t, "const"] | ["const", t, "&"] | [t, "const", "&"] if t == name => {
            Some(Taken::Value)
        }
        [t, "*"] | [t, "*", "const"] if t == name => Some(Taken::Pointer { to_const: false }),
        ["const", t, "*"] | [t, "const", "*"] | ["const", t, "*", "const"] if t == name => {
            Some(Taken::Pointer { to_const: true })
        }
        _ => None,
    }
}

/// The template argument deduced from an argument of type `arg` (as
/// `barrier_split::type_text` writes a variable's type: without the
/// variable's own `const`) for a parameter that takes it as `how`.
pub fn deduced(arg: &str, how: Taken) -> Option<String> {
    match how {
        Taken::Value => Some(arg.to_string()),
        Taken::Pointer { to_const } => {
            let pointee = arg.trim_end().strip_suffix('*')?.trim_end();
            let pointee = if to_const {
                pointee
                    .strip_prefix("const ")
                    .or_else(|| pointee.strip_suffix(" const"))
                    .unwrap_or(pointee)
            } else {
                pointee
            };
            (!pointee.is_empty()).then(|| pointee.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn substitutes_names_but_not_members_strings_or_comments() {
        let a = args(&[("T", "float"), ("N", "8")]);
        assert_eq!(
            substitute(
                "static __shared__ T s[N]; x.T = p->N + S::T; /* T */ \"T\" (T)(0)",
                &a
            ),
            "static __shared__ float s[8]; x.T = p->N + S::T; /* T */ \"T\" (float)(0)"
        );
        assert_eq!(substitute("Tx TT T_", &a), "Tx TT T_");
    }

    #[test]
    fn literals_have_their_types() {
        assert_eq!(literal_type("0.0f"), Some("float"));
        assert_eq!(literal_type("1e-6F"), Some("float"));
        assert_eq!(literal_type("2.5"), Some("double"));
        assert_eq!(literal_type("1"), Some("int"));
        assert_eq!(literal_type("1u"), Some("unsigned int"));
        assert_eq!(literal_type("1ULL"), Some("unsigned long long"));
        assert_eq!(literal_type("0x10"), Some("int"));
        assert_eq!(literal_type("true"), Some("bool"));
        assert_eq!(literal_type("x"), None);
    }

    #[test]
    fn deduction_reads_values_and_pointers() {
        assert_eq!(taken(&["T"], "T"), Some(Taken::Value));
        assert_eq!(taken(&["const", "T", "&"], "T"), Some(Taken::Value));
        assert_eq!(taken(&["T", "&"], "T"), None);
        assert_eq!(taken(&["U"], "T"), None);
        assert_eq!(
            taken(&["const", "T", "*", "__restrict__"], "T"),
            Some(Taken::Pointer { to_const: true })
        );
        assert_eq!(deduced("float", Taken::Value).as_deref(), Some("float"));
        assert_eq!(
            deduced("const float *", Taken::Pointer { to_const: true }).as_deref(),
            Some("float")
        );
        assert_eq!(
            deduced("const float *", Taken::Pointer { to_const: false }).as_deref(),
            Some("const float")
        );
        assert_eq!(deduced("float", Taken::Pointer { to_const: false }), None);
    }

    #[test]
    fn values_are_parenthesized_types_are_not() {
        let w = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(argument_text(&w("BS * 2"), false), "(BS * 2)");
        assert_eq!(argument_text(&w("8"), false), "8");
        assert_eq!(argument_text(&w("unsigned int"), true), "unsigned int");
        assert_eq!(argument_text(&w("cub :: half_t"), true), "cub::half_t");
        assert!(declares_type("typename T") && declares_type("class U") && !declares_type("int N"));
    }
}
