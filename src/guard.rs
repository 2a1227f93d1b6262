//! The child's leading bounds guard, for the serial version (thresholding).
//!
//! Most children begin with `int i = blockIdx.x * blockDim.x + threadIdx.x;
//! if (i >= n) return;` for a parameter `n`: every thread whose global index
//! reaches `n` does nothing. A child launched with `(n + 31) / 32` blocks of
//! 32 threads then has up to 31 such threads, and the serial version, which
//! runs every child thread in the parent thread, would run them all: on a
//! road-like graph (degree <= 4) that made the parent kernel execute 1.7x the
//! instructions of the flat code (Nsight Compute, bench/probes/road_gap.sh).
//! When the guard is found, the serial version of a one-dimensional launch
//! stops at `min(threads, n)` instead, which skips exactly the threads that
//! would return at once.

use std::ops::Range;

use crate::source::Span;
use crate::token::{is_identifier, TokenKind};

/// A body's leading guard `int i = blockIdx.x * blockDim.x + threadIdx.x;
/// if (i >= n) return;`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    /// The parameter `n`: the serial version of a 1-D launch stops there.
    pub bound: String,
    /// The `if (i >= n) return;` statement, from `if` to `;`: where the
    /// serial loop runs only threads below `n`, a copy of the body for it
    /// may leave the test out.
    pub statement: Span,
    /// The body names `blockIdx` and `threadIdx` only in the guard's index
    /// (once each): a child thread's index is all it sees of them, so the
    /// serial version may run thread `t` of a 1-D launch as thread `t` of
    /// block 0 (the same index, without block and thread counters).
    pub index_only: bool,
}

/// The guard of `body` (text starting at byte `at` of the file), if it
/// starts with one. The index must be a signed integer (so that `i >= n`
/// compares numerically for any integer `n`) and `n` a parameter; comments
/// or other statements before the guard, or any other form, give `None`
/// (the serial version then runs every thread).
pub fn guard(body: &str, at: usize, params: &[Option<String>]) -> Option<Guard> {
    let (bound, statement) = find(body, params)?;
    Some(Guard {
        bound,
        statement: Span::from(at + statement.start..at + statement.end),
        index_only: index_only(body),
    })
}

fn find(body: &str, params: &[Option<String>]) -> Option<(String, Range<usize>)> {
    // Blanks separate tokens and mean nothing else here; a comment inside
    // the guard is another form (it stays a token and matches nothing).
    let lexed: Vec<Range<usize>> = crate::lexer::lex_text(body)
        .into_iter()
        .filter(|t| !matches!(t.kind, TokenKind::Space | TokenKind::Newline))
        .map(|t| t.range())
        .collect();
    let tokens: Vec<&str> = lexed.iter().map(|r| &body[r.clone()]).collect();
    let mut rest = tokens.strip_prefix(&["{"][..])?;
    rest = rest.strip_prefix(&["const"][..]).unwrap_or(rest);
    let [type_words @ .., index, "="] = &rest[..rest.iter().position(|&t| t == "=")? + 1] else {
        return None;
    };
    const SIGNED: [&[&str]; 4] = [&["int"], &["long"], &["long", "long"], &["int64_t"]];
    if !SIGNED.contains(&type_words) || !is_identifier(index) {
        return None;
    }
    rest = &rest[type_words.len() + 2..];
    let end = rest.iter().position(|&t| t == ";")?;
    const INDEX: [&str; 4] = [
        "blockIdx.x*blockDim.x+threadIdx.x",
        "blockDim.x*blockIdx.x+threadIdx.x",
        "threadIdx.x+blockIdx.x*blockDim.x",
        "threadIdx.x+blockDim.x*blockIdx.x",
    ];
    if !INDEX.contains(&rest[..end].concat().as_str()) {
        return None;
    }
    let ["if", "(", i, ">=", bound, ")", "return", ";", ..] = &rest[end + 1..] else {
        return None;
    };
    if i != index {
        return None;
    }
    let bound = params
        .iter()
        .flatten()
        .find(|p| p.as_str() == *bound)
        .cloned()?;
    // `if` is the token after the index's `;`; the guard's `;` seven later
    let first = tokens.len() - rest.len() + end + 1;
    Some((bound, lexed[first].start..lexed[first + 7].end))
}

/// `Guard::index_only`, for a body that has the guard.
fn index_only(body: &str) -> bool {
    let tokens = crate::lexer::lex_text(body);
    let count = |name: &str| tokens.iter().filter(|t| &body[t.range()] == name).count();
    count("blockIdx") == 1 && count("threadIdx") == 1
}

#[cfg(test)]
mod tests {
    use super::guard;

    fn bounding_parameter(body: &str, params: &[Option<String>]) -> Option<String> {
        guard(body, 0, params).map(|g| g.bound)
    }

    fn index_only(body: &str) -> bool {
        guard(body, 0, &params(&["n"])).expect("a guard").index_only
    }

    #[test]
    fn the_guard_statement_from_if_to_semicolon() {
        let body = "{\n  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= deg)  return;\n  x[i] = 1;\n}";
        let g = guard(body, 0, &params(&["x", "deg"])).expect("a guard");
        assert_eq!(&body[g.statement.range()], "if (i >= deg)  return;");
        let moved = guard(body, 100, &params(&["x", "deg"])).expect("a guard");
        assert_eq!(moved.statement.start(), g.statement.start() + 100);
        assert_eq!(
            guard("{ int i = 0; if (i >= deg) return; }", 0, &params(&["deg"])),
            None
        );
    }

    #[test]
    fn index_only_when_the_guard_alone_names_the_indices() {
        assert!(index_only(
            "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; y[i] = blockDim.x; }"
        ));
        assert!(!index_only(
            "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; if (threadIdx.x == 0) f(); }"
        ));
        assert!(!index_only(
            "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; s[blockIdx.x] = i; }"
        ));
    }

    fn params(names: &[&str]) -> Vec<Option<String>> {
        names.iter().map(|n| Some(n.to_string())).collect()
    }

    #[test]
    fn finds_the_usual_guard() {
        let body = "{\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= deg) return;\n  x[i] = 1;\n}";
        assert_eq!(
            bounding_parameter(body, &params(&["x", "deg"])),
            Some("deg".to_string())
        );
        let body = "{ const int j = threadIdx.x + blockIdx.x * blockDim.x; if (j >= n) return; }";
        assert_eq!(
            bounding_parameter(body, &params(&["n"])),
            Some("n".to_string())
        );
    }

    #[test]
    fn refuses_other_forms() {
        let p = params(&["n"]);
        // unsigned index: `i >= n` would compare as unsigned for a negative n
        assert_eq!(
            bounding_parameter(
                "{ unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; }",
                &p
            ),
            None
        );
        assert_eq!(
            bounding_parameter(
                "{ auto i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; }",
                &p
            ),
            None
        );
        // a bound that is not a parameter, another comparison, a 2-D index, a statement first
        assert_eq!(
            bounding_parameter(
                "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= m) return; }",
                &p
            ),
            None
        );
        assert_eq!(
            bounding_parameter(
                "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i > n) return; }",
                &p
            ),
            None
        );
        assert_eq!(
            bounding_parameter(
                "{ int i = blockIdx.y * blockDim.x + threadIdx.x; if (i >= n) return; }",
                &p
            ),
            None
        );
        assert_eq!(
            bounding_parameter(
                "{ f(); int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; }",
                &p
            ),
            None
        );
        assert_eq!(
            bounding_parameter(
                "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n + 1) return; }",
                &p
            ),
            None
        );
        assert_eq!(
            bounding_parameter(
                "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) { return; } }",
                &p
            ),
            None
        );
    }

    #[test]
    fn every_signed_index_type() {
        let p = params(&["n"]);
        for ty in [
            "int",
            "const int",
            "long",
            "const long",
            "long long",
            "const long long",
            "int64_t",
            "const int64_t",
        ] {
            let body = format!(
                "{{ {ty} i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; }}"
            );
            assert_eq!(bounding_parameter(&body, &p), Some("n".to_string()), "{ty}");
        }
        // `long long` split over lines and blanks is the same type.
        let body = "{\n  long\n  long   idx = threadIdx.x + blockDim.x * blockIdx.x;\n  if (idx >= n) return;\n}";
        assert_eq!(bounding_parameter(body, &p), Some("n".to_string()));
        for ty in ["unsigned long long", "long int", "longlong", "short"] {
            let body = format!(
                "{{ {ty} i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; }}"
            );
            assert_eq!(bounding_parameter(&body, &p), None, "{ty}");
        }
    }

    #[test]
    fn comments_in_the_guard_are_another_form() {
        let p = params(&["n"]);
        for body in [
            "{ // first\n int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; }",
            "{ int /* index */ i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; }",
            "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) /* done */ return; }",
        ] {
            assert_eq!(bounding_parameter(body, &p), None, "{body}");
        }
    }
}
