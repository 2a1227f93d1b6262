//! Early returns that every thread of a block takes together.
//!
//! A coarsened block (and the floor's drain block) runs several original
//! blocks in turn; a thread that returned early from one would miss the
//! barriers of the original block, or meet the next block's barriers while
//! the others still wait at this one's. The split serial version
//! (`barrier_split`) marks each thread that returned, in an array as large
//! as the block. That cannot happen when the return
//! is taken by the whole block or by none of it: `if (isize == 2) { ...;
//! return; }` at the top of a recursive reduction, on a kernel parameter the
//! child never assigns. Such a return is *block-uniform* here when it stands
//! under `if`s only (no loop, `switch` or `goto`), each of whose conditions
//! is built from literals, ALL_CAPS macros, `sizeof`, `blockIdx`, `blockDim`,
//! `gridDim` and parameters the child never assigns, with no call and no
//! memory read (subscript, `->`, `*p`: another thread may write it). Then a
//! coarsened block needs no care, and the split marks the block, not each
//! thread.

use crate::program::{Function, Program};
use crate::token::{is_call_at, Token, TokenKind};

/// Is every `return` of `child` taken by all threads of a block or by none?
pub fn every_return_block_uniform(program: &Program, child: &Function) -> bool {
    let view = program.view.as_str();
    let body = program.sig_in(child.body);
    let closing_paren = |open: usize| closing(program, body, open);
    if body
        .iter()
        .any(|t| t.kind == TokenKind::Ident && t.text(view) == "goto")
    {
        return false;
    }
    // What each open brace belongs to: true for the body of an `if` or
    // `else` whose conditions are all uniform.
    let mut braces: Vec<bool> = Vec::new();
    // The uniformity of the construct whose body the next `{` opens.
    let mut pending: Option<bool> = None;
    // The uniformity of the last `if` closed at each depth, for its `else`.
    let mut last_if: Vec<Option<bool>> = vec![None];
    // The uniformity of the `else` that an `if` continues (`else if`).
    let mut chain: Option<bool> = None;
    let mut i = 0;
    while i < body.len() {
        let t = &body[i];
        let s = t.text(view);
        match s {
            "{" => {
                let enclosing = braces.last().copied().unwrap_or(true);
                braces.push(enclosing && pending.take().unwrap_or(braces.is_empty()));
                last_if.push(None);
            }
            "}" => {
                braces.pop();
                last_if.pop();
            }
            "if" if t.kind == TokenKind::Ident => {
                let Some(close) = closing_paren(i + 1) else {
                    return false;
                };
                let uniform = chain.take().unwrap_or(true)
                    && uniform_condition(program, child, &body[i + 2..close]);
                if let Some(last) = last_if.last_mut() {
                    *last = Some(uniform);
                }
                let enclosing = braces.last().copied().unwrap_or(true);
                match body.get(close + 1).map(|n| n.text(view)) {
                    Some("{") => pending = Some(uniform),
                    // `if (c) return ...;`
                    Some("return") if !(enclosing && uniform) => return false,
                    _ => {}
                }
                i = close + 1;
                continue;
            }
            "else" if t.kind == TokenKind::Ident => {
                let uniform = last_if.last().copied().flatten().unwrap_or(false);
                match body.get(i + 1).map(|n| n.text(view)) {
                    Some("{") => pending = Some(uniform),
                    Some("if") => chain = Some(uniform),
                    Some("return") if !(braces.last().copied().unwrap_or(true) && uniform) => {
                        return false
                    }
                    _ => {}
                }
            }
            "for" | "while" | "do" | "switch" if t.kind == TokenKind::Ident => {
                pending = Some(false);
                // A loop or switch without braces: its statement is not
                // uniform either; a `return` in it is refused below only
                // when it follows at once (`while (c) return;`).
                if let Some(close) = closing_paren(i + 1) {
                    if body
                        .get(close + 1)
                        .is_some_and(|n| n.text(view) == "return")
                    {
                        return false;
                    }
                }
            }
            "return" if t.kind == TokenKind::Ident && !braces.last().copied().unwrap_or(true) => {
                return false;
            }
            _ => {}
        }
        i += 1;
    }
    true
}

/// The block votes: every thread of the block gets the same result.
const VOTES: [&str; 3] = [
    "__syncthreads_or",
    "__syncthreads_and",
    "__syncthreads_count",
];

/// Is the condition the same for every thread of a block?
fn uniform_condition(program: &Program, child: &Function, tokens: &[Token]) -> bool {
    let view = program.view.as_str();
    if tokens.is_empty() {
        return false;
    }
    let mut k = 0;
    while k < tokens.len() {
        let t = &tokens[k];
        let s = t.text(view);
        let ok = match t.kind {
            TokenKind::Number | TokenKind::Char => true,
            // no memory read: other threads may write what one reads
            TokenKind::Punct if matches!(s, "[" | "->") => false,
            TokenKind::Punct
                if matches!(s, "*" | "&")
                    && (k == 0
                        || (tokens[k - 1].kind == TokenKind::Punct
                            && !matches!(tokens[k - 1].text(view), ")" | "]"))) =>
            {
                false
            }
            TokenKind::Punct => !crate::token::MODIFYING_OPERATORS.contains(&s),
            // a block vote: its argument is the thread's, its result the block's
            TokenKind::Ident if VOTES.contains(&s) && is_call_at(tokens, k, view) => {
                let Some(close) = closing(program, tokens, k + 1) else {
                    return false;
                };
                k = close + 1;
                continue;
            }
            TokenKind::Ident => {
                let member = k > 0 && matches!(tokens[k - 1].text(view), "." | "->");
                let macro_like = s.chars().any(|c| c.is_ascii_uppercase())
                    && s.chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
                let param = child.params.iter().any(|p| p.name.as_deref() == Some(s));
                !is_call_at(tokens, k, view)
                    && (member
                        || macro_like
                        || matches!(
                            s,
                            "blockIdx"
                                | "blockDim"
                                | "gridDim"
                                | "sizeof"
                                | "true"
                                | "false"
                                | "nullptr"
                        )
                        || (param && !program.assigns(child, s))
                        || vote_local(program, child, s))
            }
            _ => false,
        };
        if !ok {
            return false;
        }
        k += 1;
    }
    true
}

/// The `)` closing the `(` at `tokens[open]`, `tokens` a run of the
/// program's significant tokens (`Program::brackets`).
fn closing(program: &Program, tokens: &[Token], open: usize) -> Option<usize> {
    let view = program.view.as_str();
    (tokens.get(open)?.text(view) == "(").then_some(())?;
    let base = program.sig_index_at(tokens.first()?.start);
    program
        .brackets
        .partner(base + open)
        .map(|k| k - base)
        .filter(|&k| k < tokens.len())
}

/// Is `name` a local of `child` declared once with a block vote as its
/// whole initializer (`int error = __syncthreads_or(count);`) and never
/// assigned or given away by address after?
fn vote_local(program: &Program, child: &Function, name: &str) -> bool {
    let view = program.view.as_str();
    let body = program.sig_in(child.body);
    let mut declared = 0;
    for (i, t) in body.iter().enumerate() {
        if t.kind != TokenKind::Ident
            || t.text(view) != name
            || (i > 0 && matches!(body[i - 1].text(view), "." | "->" | "::"))
        {
            continue;
        }
        let text = |k: usize| body.get(k).map_or("", |t| t.text(view));
        let declaration = i > 0
            && body[i - 1].kind == TokenKind::Ident
            && text(i - 1) != "return"
            && text(i + 1) == "="
            && VOTES.contains(&text(i + 2))
            && closing(program, body, i + 3).is_some_and(|c| text(c + 1) == ";");
        if declaration {
            declared += 1;
        } else if crate::token::is_modified_at(body, i, view) || text(i - 1) == "&" {
            return false;
        }
    }
    declared == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uniform(body: &str) -> bool {
        let src = format!("__global__ void child(int *a, unsigned n, int m) {{\n{body}\n}}\n");
        let file = crate::source::SourceFile::new("t.cu", src.as_bytes().to_vec());
        let program = crate::parser::parse(&file, crate::lexer::lex(&file));
        let child = program.function_named("child").expect("child");
        every_return_block_uniform(&program, &program.functions[child])
    }

    #[test]
    fn returns_taken_by_the_whole_block() {
        assert!(uniform(
            "  if (n == 2) { a[0] = 1; return; }\n  __syncthreads();"
        ));
        assert!(uniform("  if (n < 2) return;\n  __syncthreads();"));
        assert!(uniform(
            "  if (blockIdx.x * blockDim.x >= n) return;\n  __syncthreads();"
        ));
        assert!(uniform(
            "  if (n > 4) { if (m == 1) return; } else if (MAX_N < n) { return; }"
        ));
        assert!(uniform("  __syncthreads();\n  a[threadIdx.x] = 0;"));
        // a block vote, or a local it initializes and nothing assigns after
        assert!(uniform(
            "  int bad = a[threadIdx.x] < 0;\n  int error = __syncthreads_or(bad);\n  if (!error) return;\n  __syncthreads();"
        ));
        assert!(uniform(
            "  if (!__syncthreads_and(a[threadIdx.x] > 0)) { return; }\n  __syncthreads();"
        ));
    }

    #[test]
    fn returns_some_threads_take() {
        // a thread's index, a local, an assigned parameter, a call, a loop
        assert!(!uniform(
            "  if (threadIdx.x == 0) return;\n  __syncthreads();"
        ));
        assert!(!uniform("  int k = a[0];\n  if (k) return;"));
        assert!(!uniform("  m = a[0];\n  if (m) return;"));
        assert!(!uniform("  if (f(n)) return;"));
        assert!(!uniform("  if (a[n] > 4) return;"));
        assert!(!uniform("  if (*a) return;"));
        assert!(!uniform(
            "  for (int i = 0; i < n; ++i) { if (n == 3) return; }"
        ));
        assert!(!uniform(
            "  if (threadIdx.x) { a[0] = 1; } else { return; }"
        ));
        assert!(!uniform(
            "  if (threadIdx.x) { a[0] = 1; } else if (n) { return; }"
        ));
        assert!(!uniform("  while (n) return;"));
        assert!(!uniform("  if (n) goto done;\n done: return;"));
        // a vote's local assigned again by one thread
        assert!(!uniform(
            "  int error = __syncthreads_or(a[threadIdx.x]);\n  if (threadIdx.x == 0) error = 0;\n  if (error) return;"
        ));
        // a vote's argument alone is the thread's
        assert!(!uniform(
            "  int e = __syncthreads_or(a[0]) + a[threadIdx.x];\n  if (e) return;"
        ));
    }
}
