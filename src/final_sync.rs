//! Stage 2 (analyze): a device-side sync that is the last thing its thread
//! runs. CDP1 code often ends a thread with `cudaDeviceSynchronize()` after
//! its launch (`else { child<<<...>>>(...); cudaDeviceSynchronize(); }` as
//! the kernel's last statement). Under CDP2 a grid ends only after all the
//! work it launched, so such a wait has nothing left to order: migrating it
//! is dropping it, with no continuation (`postwork.rs`).

use crate::program::Program;
use crate::token::TokenKind;

/// Is the sync statement `sig[first..=semi]`, in the kernel body whose
/// braces are the significant tokens `open` and `close`, the last thing its
/// thread runs? Nothing that `compiled` (is this token compiled together
/// with the sync?) accepts may follow it on any path, and no loop, `switch`,
/// `do` or `try` may hold it. Tells "no" whenever it cannot tell.
pub fn is_final(
    program: &Program,
    open: usize,
    close: usize,
    first: usize,
    semi: usize,
    compiled: &dyn Fn(usize) -> bool,
) -> bool {
    let sig = &program.sig;
    let blocks = (open + 1..first)
        .filter(|&j| text(program, j) == "{" && program.brackets.encloses(j, first));
    for s in std::iter::once(first).chain(blocks) {
        if !only_if_else_around(program, open, s) {
            return false;
        }
    }
    let mut j = semi + 1;
    while j < close {
        if sig[j].kind == TokenKind::Directive || !compiled(j) {
            j += 1;
            continue;
        }
        match text(program, j) {
            // An empty statement, or the end of a block around the sync
            // (an `else` branch is skipped whole, so every `}` met here
            // closes one that holds the sync).
            ";" | "}" => j += 1,
            // The `else` of an `if` whose other branch holds the sync.
            "else" => match skip_statement(program, j + 1, close) {
                Some(next) => j = next,
                None => return false,
            },
            "return" => return text(program, j + 1) == ";",
            _ => return false,
        }
    }
    true
}

fn text(program: &Program, j: usize) -> &str {
    program
        .sig
        .get(j)
        .map_or("", |t| t.text(program.view.as_str()))
}

/// Does nothing but `if (...)`, `else` (and directives) control the
/// statement or block starting at significant token `s`, up to the
/// statement that stands in its own block?
fn only_if_else_around(program: &Program, open: usize, mut s: usize) -> bool {
    let sig = &program.sig;
    while s > open + 1 {
        if sig[s - 1].kind == TokenKind::Directive {
            s -= 1;
            continue;
        }
        match text(program, s - 1) {
            "do" | "try" | "]" => return false,
            ")" => {
                let Some(kw) = program
                    .brackets
                    .partner(s - 1)
                    .and_then(|p| p.checked_sub(1))
                else {
                    return false;
                };
                if text(program, kw) != "if" {
                    // A loop, `switch`, a lambda or a macro: not followed.
                    return false;
                }
                s = kw;
            }
            "else" => {
                // `if (...) { ... } else`: go on from that `if`.
                let then_end = s - 2;
                if text(program, then_end) != "}" {
                    return false;
                }
                let Some(kw) = program
                    .brackets
                    .partner(then_end)
                    .and_then(|o| o.checked_sub(1))
                    .filter(|&p| text(program, p) == ")")
                    .and_then(|p| program.brackets.partner(p))
                    .and_then(|p| p.checked_sub(1))
                    .filter(|&kw| text(program, kw) == "if")
                else {
                    return false;
                };
                s = kw;
            }
            _ => return true,
        }
    }
    true
}

/// The significant token after the statement starting at `j` (directives
/// before it skipped), or `None` where it cannot tell.
fn skip_statement(program: &Program, mut j: usize, limit: usize) -> Option<usize> {
    let sig = &program.sig;
    while j < limit && sig[j].kind == TokenKind::Directive {
        j += 1;
    }
    if j >= limit {
        return None;
    }
    let after_paren = |j: usize| -> Option<usize> {
        (text(program, j + 1) == "(")
            .then(|| program.brackets.partner(j + 1))
            .flatten()
            .map(|p| p + 1)
    };
    match text(program, j) {
        "{" => program.brackets.partner(j).map(|p| p + 1),
        "if" => {
            let mut next = skip_statement(program, after_paren(j)?, limit)?;
            while next < limit && sig[next].kind == TokenKind::Directive {
                next += 1;
            }
            if text(program, next) == "else" {
                next = skip_statement(program, next + 1, limit)?;
            }
            Some(next)
        }
        "for" | "while" | "switch" => skip_statement(program, after_paren(j)?, limit),
        "do" | "try" => None,
        _ => {
            let mut k = j;
            while k < limit {
                match text(program, k) {
                    ";" => return Some(k + 1),
                    "(" | "[" | "{" => k = program.brackets.partner(k)? + 1,
                    "}" => return None,
                    _ => k += 1,
                }
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    /// Is the first `cudaDeviceSynchronize();` of kernel `k` final?
    fn last(src: &str) -> bool {
        let file = SourceFile::new("t.cu", src.as_bytes().to_vec());
        let program = crate::parser::parse(&file, crate::lexer::lex(&file));
        let k = program.function_named("k").unwrap();
        let body = &program.functions[k].body_tokens;
        let at = src.find("cudaDeviceSynchronize").unwrap();
        let first = program.sig.partition_point(|t| t.start < at);
        is_final(&program, body.start, body.end, first, first + 3, &|_| true)
    }

    #[test]
    fn the_last_statement_of_nested_if_and_else_branches_is_final() {
        for body in [
            "c<<<1, 1>>>(); cudaDeviceSynchronize();",
            "c<<<1, 1>>>(); cudaDeviceSynchronize(); ;",
            "c<<<1, 1>>>(); cudaDeviceSynchronize(); return;",
            "if (a) { c<<<1, 1>>>(); cudaDeviceSynchronize(); } else { a = 2; }",
            "if (a) { a = 1; } else { c<<<1, 1>>>(); cudaDeviceSynchronize(); }",
            "if (a) { if (b) { a = 1; } else { c<<<1, 1>>>(); cudaDeviceSynchronize(); } }",
            "if (a) c<<<1, 1>>>(); if (b) cudaDeviceSynchronize(); else if (a) a = 3; else { a = 4; }",
            "if (a) { } else if (b) { c<<<1, 1>>>(); cudaDeviceSynchronize(); }",
            "{ c<<<1, 1>>>(); cudaDeviceSynchronize(); }",
        ] {
            let src = format!("__global__ void c() {{}}\n__global__ void k(int a, int b) {{\n  {body}\n}}\n");
            assert!(last(&src), "{body}");
        }
    }

    #[test]
    fn code_after_it_or_a_loop_around_it_is_not_final() {
        for body in [
            "c<<<1, 1>>>(); cudaDeviceSynchronize(); a = 1;",
            "if (a) { c<<<1, 1>>>(); cudaDeviceSynchronize(); } a = 1;",
            "if (a) { c<<<1, 1>>>(); cudaDeviceSynchronize(); a = 1; }",
            "for (;;) { c<<<1, 1>>>(); cudaDeviceSynchronize(); }",
            "for (;;) if (a) { c<<<1, 1>>>(); cudaDeviceSynchronize(); }",
            "while (a) if (b) cudaDeviceSynchronize(); else c<<<1, 1>>>();",
            "do { c<<<1, 1>>>(); cudaDeviceSynchronize(); } while (a);",
            "switch (a) { case 1: c<<<1, 1>>>(); cudaDeviceSynchronize(); }",
            "c<<<1, 1>>>(); cudaDeviceSynchronize(); return a;",
            "auto f = [&] { c<<<1, 1>>>(); cudaDeviceSynchronize(); }; f();",
        ] {
            let src = format!(
                "__global__ void c() {{}}\n__global__ void k(int a, int b) {{\n  {body}\n}}\n"
            );
            assert!(!last(&src), "{body}");
        }
    }
}
