//! Atomics folded into registers in the serial version (thresholding).
//!
//! A child that adds its thread's share to one slot of its parent,
//! `atomicAdd(&y[r], v)` (a row's sum in SpMV, a vertex's triangle count),
//! does one atomic per child thread. Serialized in the parent thread those
//! become a chain of atomics to one address where the flat code would sum
//! in a register (SpMV on balanced rows, bench/results/2026-11-24-h100-fold-ab.csv).
//! The serial version of the launch-free copy (`floor`) therefore runs a
//! copy of the body in which such a statement folds its operand into a
//! register, and applies the register with one atomic after the last child
//! thread. Only an address that is the same for every child thread is
//! folded (a pointer parameter, indexed by parameters and constants, none of
//! them written by the body): the loop over the child's threads then holds
//! no atomic at all, and its loads of consecutive threads overlap.
//! Serial versions in kernels that also launch keep every atomic: there,
//! the folded version made the device runtime hang
//! (bench/results/2026-11-24-h100-fold-hang.txt).
//!
//! Why this keeps the program's meaning: the child's threads run in any
//! order and nothing orders them (the child has no barrier, warp operation
//! or shared memory: the serial version requires that already), so running
//! every thread's code up to its last atomic first, and the atomics after,
//! is one of the original's executions. The folded atomics are exactly the
//! last things their threads do (only other folded atomics, `return` and
//! closing braces follow them), all of one integer operation (add, sub,
//! and, or, xor, min, max: associative and commutative, with wrapping
//! arithmetic), and their values are not used. A folded atomic is delayed,
//! never moved before its own thread's earlier effects. Floating-point
//! atomics are not folded: a register sum rounds differently from any order
//! of single adds.

use crate::program::{Function, Program};
use crate::source::Span;
use crate::token::{is_modified_at, split_top_level, Angles, Token, TokenKind};

/// The integer atomic a folded statement performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FoldOp {
    Add,
    Sub,
    And,
    Or,
    Xor,
    Min,
    Max,
}

impl FoldOp {
    const ALL: [FoldOp; 7] = [
        FoldOp::Add,
        FoldOp::Sub,
        FoldOp::And,
        FoldOp::Or,
        FoldOp::Xor,
        FoldOp::Min,
        FoldOp::Max,
    ];

    /// The CUDA function, e.g. `atomicAdd`.
    pub fn atomic(self) -> &'static str {
        match self {
            FoldOp::Add => "atomicAdd",
            FoldOp::Sub => "atomicSub",
            FoldOp::And => "atomicAnd",
            FoldOp::Or => "atomicOr",
            FoldOp::Xor => "atomicXor",
            FoldOp::Min => "atomicMin",
            FoldOp::Max => "atomicMax",
        }
    }

    fn named(name: &str) -> Option<FoldOp> {
        FoldOp::ALL.into_iter().find(|op| op.atomic() == name)
    }

    /// Does the register hold a sum (kept unsigned, so that it wraps as
    /// the atomics do)?
    fn sums(self) -> bool {
        matches!(self, FoldOp::Add | FoldOp::Sub)
    }

    /// The register's first value: the operation's identity on
    /// `value_type`, so that every folded value is combined alike (no test
    /// for the first one in the loop over the child's threads).
    fn identity(self, value_type: &str) -> &'static str {
        let signed = !value_type.starts_with("unsigned");
        let wide = value_type.contains("long long");
        match (self, signed, wide) {
            (FoldOp::Add | FoldOp::Sub | FoldOp::Or | FoldOp::Xor, ..) => "0",
            (FoldOp::And, ..) | (FoldOp::Min, false, _) => "~0ull",
            (FoldOp::Max, false, _) => "0",
            (FoldOp::Min, true, false) => "2147483647",
            (FoldOp::Min, true, true) => "9223372036854775807ll",
            (FoldOp::Max, true, false) => "(-2147483647 - 1)",
            (FoldOp::Max, true, true) => "(-9223372036854775807ll - 1)",
        }
    }
}

/// One folded statement, `atomicAdd(A, V);`, and its register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldedAtomic {
    /// The atomic's name and its `(`: replaced by a call of the fold.
    pub head: Span,
    /// The type the atomic operates on (`int`, `unsigned long long`).
    pub value_type: &'static str,
    /// The register's type: the unsigned type of the same width for sums.
    pub register_type: &'static str,
    /// The register's first value, the operation's identity (`0` for a
    /// sum, the type's largest value for a minimum).
    pub identity: &'static str,
}

/// The folded atomics of a child's body, in source order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtomicFolds {
    pub op: FoldOp,
    pub atomics: Vec<FoldedAtomic>,
}

impl AtomicFolds {
    /// No atomic to fold: the serial version of the launch-free copy still
    /// runs its own copy of the body, without the leading bounds test
    /// (`ChildPlan::guard`).
    pub fn none() -> AtomicFolds {
        AtomicFolds {
            op: FoldOp::Add,
            atomics: Vec::new(),
        }
    }
}

/// Integer types an atomic may operate on, as declared (the words before
/// the `*`), with their canonical spelling and unsigned counterpart.
const INTEGERS: [(&[&str], &str, &str); 10] = [
    (&["int"], "int", "unsigned int"),
    (&["signed"], "int", "unsigned int"),
    (&["signed", "int"], "int", "unsigned int"),
    (&["int32_t"], "int", "unsigned int"),
    (&["unsigned"], "unsigned int", "unsigned int"),
    (&["unsigned", "int"], "unsigned int", "unsigned int"),
    (&["uint32_t"], "unsigned int", "unsigned int"),
    (
        &["unsigned", "long", "long"],
        "unsigned long long",
        "unsigned long long",
    ),
    (
        &["unsigned", "long", "long", "int"],
        "unsigned long long",
        "unsigned long long",
    ),
    (&["long", "long"], "long long", "unsigned long long"),
];

/// The atomics of `child`'s body that its serial version folds, if any.
/// The caller has established that the child's threads may run one after
/// the other (no barrier, warp operation, shared memory or unseen code) and
/// that the child launches nothing.
pub fn folds(program: &Program, child: &Function) -> Option<AtomicFolds> {
    let view = program.view.as_str();
    let (open, close) = (child.body_tokens.start, child.body_tokens.end);
    let sig = &program.sig;
    let text = |k: usize| sig[k].text(view);
    // Code whose order dpopt does not follow.
    if (open + 1..close).any(|k| matches!(text(k), "goto" | "asm" | "setjmp" | "<<<")) {
        return None;
    }
    // A launch spelled `<< <`.
    let (start, end) = (sig[open].start, sig[close].end);
    if program
        .launches
        .iter()
        .any(|l| start < l.span.start() && l.span.end() < end)
    {
        return None;
    }
    let mut candidates: Vec<Candidate> = (open + 1..close)
        .filter_map(|k| candidate(program, child, k))
        .collect();
    // Each must be its thread's last effect: after it, only other
    // candidates, `return;`, empty statements and closing braces. Dropping
    // one can make an earlier one fail: repeat until none is dropped.
    loop {
        let before = candidates.len();
        let ends: Vec<(usize, usize)> = candidates.iter().map(|c| (c.first, c.last)).collect();
        candidates.retain(|c| {
            let mut k = c.last + 1;
            while k < close {
                if let Some(&(_, last)) = ends.iter().find(|(first, _)| *first == k) {
                    k = last + 1;
                    continue;
                }
                match text(k) {
                    "}" | ";" => k += 1,
                    "return" if k + 1 < close && text(k + 1) == ";" => k += 2,
                    _ => return false,
                }
            }
            true
        });
        if candidates.len() == before {
            break;
        }
    }
    let op = candidates.first()?.op;
    // One operation: folds of different operations on addresses that alias
    // could reach memory in another order than their threads ran them.
    if candidates.iter().any(|c| c.op != op) {
        return None;
    }
    Some(AtomicFolds {
        op,
        atomics: candidates
            .into_iter()
            .map(|c| FoldedAtomic {
                head: Span::from(sig[c.first].start..sig[c.first + 1].end),
                value_type: c.value_type,
                register_type: if op.sums() {
                    c.register_type
                } else {
                    c.value_type
                },
                identity: op.identity(c.value_type),
            })
            .collect(),
    })
}

/// A statement `atomicOp(A, V);` that may be folded, before the check that
/// nothing follows it.
struct Candidate {
    op: FoldOp,
    /// Significant positions of the atomic's name and of the `;`.
    first: usize,
    last: usize,
    value_type: &'static str,
    register_type: &'static str,
}

fn candidate(program: &Program, child: &Function, k: usize) -> Option<Candidate> {
    let view = program.view.as_str();
    let sig = &program.sig;
    let text = |k: usize| sig[k].text(view);
    let open = child.body_tokens.start;
    if sig[k].kind != TokenKind::Ident {
        return None;
    }
    let op = FoldOp::named(text(k))?;
    // An expression statement of its own: not `x = atomicAdd(...)`, not
    // `::atomicAdd`, not the body of a loop.
    if !statement_start(program, k) || text(k + 1) != "(" {
        return None;
    }
    let close_paren = program.brackets.partner(k + 1)?;
    if text(close_paren + 1) != ";" {
        return None;
    }
    // In no loop, switch or expression: every brace that holds it is the
    // body's, a plain block's or a branch's.
    for j in open + 1..k {
        if program.brackets.encloses(j, k) {
            match text(j) {
                "{" if j == open || statement_start(program, j) || branch_block(program, j) => {}
                _ => return None,
            }
        }
    }
    let args = split_top_level(&sig[k + 2..close_paren], view, Angles::Operators);
    let [address, _value] = args.as_slice() else {
        return None;
    };
    let (value_type, register_type) = address_type(program, child, address)?;
    Some(Candidate {
        op,
        first: k,
        last: close_paren + 1,
        value_type,
        register_type,
    })
}

/// Does a statement start at significant position `k` (after `;`, `{`,
/// `}`, `else` or an `if`'s condition)?
fn statement_start(program: &Program, k: usize) -> bool {
    let view = program.view.as_str();
    let Some(prev) = k.checked_sub(1).map(|p| program.sig[p].text(view)) else {
        return false;
    };
    match prev {
        ";" | "{" | "}" | "else" => true,
        ")" => if_condition_ends_at(program, k - 1),
        _ => false,
    }
}

/// Is the `{` at `k` the block of an `if` or an `else`?
fn branch_block(program: &Program, k: usize) -> bool {
    let view = program.view.as_str();
    match k.checked_sub(1).map(|p| program.sig[p].text(view)) {
        Some("else") => true,
        Some(")") => if_condition_ends_at(program, k - 1),
        _ => false,
    }
}

/// Does the `)` at `k` close an `if`'s condition?
fn if_condition_ends_at(program: &Program, k: usize) -> bool {
    let view = program.view.as_str();
    program
        .brackets
        .partner(k)
        .and_then(|p| p.checked_sub(1))
        .is_some_and(|p| program.sig[p].text(view) == "if")
}

/// The type an atomic's address points to, when the address is the same
/// for every child thread: a pointer parameter of an integer type (`p`,
/// `p + e` or `&p[e]`), `e` made of parameters, literals and arithmetic,
/// every parameter neither written nor declared again by the body: (the
/// type, the register type of a sum).
fn address_type(
    program: &Program,
    child: &Function,
    address: &[Token],
) -> Option<(&'static str, &'static str)> {
    let view = program.view.as_str();
    let words: Vec<&str> = address.iter().map(|t| t.text(view)).collect();
    let (base, index) = match words.as_slice() {
        [p] => (*p, &address[1..]),
        [p, "+", ..] => (*p, &address[2..]),
        ["&", p, "[", .., "]"] => {
            // `&p[e]`, the `]` closing the `[` after p (not `&p[i][j]`).
            let open = program.sig_index_at(address[2].start);
            if program.brackets.partner(open)? != program.sig_index_at(address.last()?.start) {
                return None;
            }
            (*p, &address[3..address.len() - 1])
        }
        _ => return None,
    };
    if !invariant(program, child, index) {
        return None;
    }
    let param = child
        .params
        .iter()
        .find(|p| p.name.as_deref() == Some(base))?;
    if declared_again(program, child, base) || written(program, child, base) {
        return None;
    }
    let decl: Vec<&str> = crate::lexer::lex_text(&param.declaration)
        .into_iter()
        .filter(|t| t.kind.is_significant())
        .map(|t| &param.declaration[t.range()])
        .collect();
    let star = decl.iter().position(|&w| w == "*")?;
    // After the `*`: qualifiers of the pointer itself, then the name.
    if !decl[star + 1..decl.len() - 1]
        .iter()
        .all(|w| matches!(*w, "const" | "__restrict__" | "__restrict"))
    {
        return None;
    }
    INTEGERS
        .iter()
        .find(|(words, _, _)| *words == &decl[..star])
        .map(|&(_, value, register)| (value, register))
}

/// Is the expression `tokens` the same for every child thread: parameters
/// that the body neither writes nor declares again, literals, arithmetic
/// and parentheses (no call, subscript, member or dereference)?
fn invariant(program: &Program, child: &Function, tokens: &[Token]) -> bool {
    let view = program.view.as_str();
    tokens.iter().enumerate().all(|(i, t)| match t.kind {
        TokenKind::Number => true,
        TokenKind::Ident => {
            !tokens.get(i + 1).is_some_and(|n| n.text(view) == "(")
                && child
                    .params
                    .iter()
                    .any(|p| p.name.as_deref() == Some(t.text(view)))
                && !written(program, child, t.text(view))
                && !declared_again(program, child, t.text(view))
        }
        TokenKind::Punct => match t.text(view) {
            "+" | "-" | "/" | "%" | "<<" | ">>" | "|" | "^" | "~" | "(" | ")" => true,
            // binary only: after an operand
            "*" | "&" => {
                i > 0
                    && (matches!(tokens[i - 1].kind, TokenKind::Ident | TokenKind::Number)
                        || tokens[i - 1].text(view) == ")")
            }
            _ => false,
        },
        _ => false,
    })
}

/// Does the body write `name` (assign, increment, take its address)?
fn written(program: &Program, child: &Function, name: &str) -> bool {
    let view = program.view.as_str();
    let (open, close) = (child.body_tokens.start, child.body_tokens.end);
    let body = &program.sig[open + 1..close];
    (0..body.len()).any(|k| {
        body[k].text(view) == name
            && is_modified_at(body, k, view)
            // `&p[i]` takes an element's address, not p's
            && !(k > 0
                && body[k - 1].text(view) == "&"
                && body.get(k + 1).is_some_and(|n| n.text(view) == "["))
    })
}

/// Does the body declare a variable named `name` (which would hide the
/// parameter)? Conservatively: `name` after a word other than `return`, or
/// after `*`, `&` or `,` outside parentheses and brackets.
fn declared_again(program: &Program, child: &Function, name: &str) -> bool {
    let view = program.view.as_str();
    let (open, close) = (child.body_tokens.start, child.body_tokens.end);
    let sig = &program.sig;
    (open + 1..close).any(|k| {
        if sig[k].text(view) != name {
            return false;
        }
        let prev = &sig[k - 1];
        match prev.text(view) {
            "return" | "case" | "sizeof" => false,
            _ if prev.kind == TokenKind::Ident => true,
            "*" | "&" | "," => !(open + 1..k)
                .any(|j| matches!(sig[j].text(view), "(" | "[") && program.brackets.encloses(j, k)),
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::{folds, AtomicFolds, FoldOp, INTEGERS};
    use crate::lexer::lex;
    use crate::parser::parse;
    use crate::source::SourceFile;

    /// The folds of the kernel `child` in `text`, with each head's text.
    fn folded(text: &str) -> Option<(AtomicFolds, Vec<String>)> {
        let file = SourceFile::new("t.cu", text.as_bytes().to_vec());
        let program = parse(&file, lex(&file));
        let child = program
            .function_named("child")
            .expect("a kernel named child");
        let f = folds(&program, &program.functions[child])?;
        let heads = f
            .atomics
            .iter()
            .map(|a| program.view[a.head.range()].to_string())
            .collect();
        Some((f, heads))
    }

    #[test]
    fn registers_start_at_the_operations_identity() {
        let cases = [
            (FoldOp::Add, "int", "0"),
            (FoldOp::And, "unsigned int", "~0ull"),
            (FoldOp::Min, "unsigned long long", "~0ull"),
            (FoldOp::Min, "int", "2147483647"),
            (FoldOp::Min, "long long", "9223372036854775807ll"),
            (FoldOp::Max, "unsigned int", "0"),
            (FoldOp::Max, "int", "(-2147483647 - 1)"),
            (FoldOp::Max, "long long", "(-9223372036854775807ll - 1)"),
        ];
        for (op, ty, identity) in cases {
            assert_eq!(op.identity(ty), identity, "{op:?} on {ty}");
        }
        // every value type the folds accept: a minimum starts at its largest value
        for (_, ty, _) in INTEGERS {
            let largest = match ty {
                "int" => "2147483647",
                "long long" => "9223372036854775807ll",
                _ => "~0ull",
            };
            assert_eq!(FoldOp::Min.identity(ty), largest, "{ty}");
        }
    }

    #[test]
    fn folds_a_row_sum() {
        let (f, heads) = folded(
            "__global__ void child(const int* col, const int* val, const int* x, int* y, int start, int len, int r) {\n\
             int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= len) return;\n\
             atomicAdd(&y[r], val[start + i] * x[col[start + i]]);\n}\n",
        )
        .expect("folded");
        assert_eq!(f.op, FoldOp::Add);
        assert_eq!(heads, ["atomicAdd("]);
        assert_eq!(f.atomics[0].value_type, "int");
        assert_eq!(f.atomics[0].register_type, "unsigned int");
    }

    #[test]
    fn folds_the_last_statements_of_a_branch() {
        let (f, heads) = folded(
            "__global__ void child(const int* row, int u, unsigned long long* tri, unsigned long long *__restrict__ total) {\n\
             unsigned c = row[threadIdx.x];\n  if (c > 0) {\n    atomicAdd(&tri[u], (unsigned long long)c);\n\
             atomicAdd(total, (unsigned long long)c);\n  }\n}\n",
        )
        .expect("folded");
        assert_eq!(heads, ["atomicAdd(", "atomicAdd("]);
        assert_eq!(f.atomics[1].value_type, "unsigned long long");
        // min keeps the signed type: its order is the type's
        let (f, _) = folded(
            "__global__ void child(int *m, int v) { if (v < m[0]) atomicMin(m, v + (int)threadIdx.x); }",
        )
        .expect("folded");
        assert_eq!((f.op, f.atomics[0].register_type), (FoldOp::Min, "int"));
    }

    #[test]
    fn folds_only_what_nothing_follows() {
        // the else branch's atomic is the last thing its threads do; the
        // if branch's is followed by `else ...` in the text: not folded
        let (_, heads) = folded(
            "__global__ void child(int* y, int v) {\n  if (v > 0) atomicAdd(y, v);\n  else atomicAdd(y, -v);\n}\n",
        )
        .expect("folded");
        assert_eq!(heads.len(), 1);
        // an early return, nested branches, a trailing `return;`
        let (f, _) = folded(
            "__global__ void child(unsigned* y, int n, unsigned v) {\n  if (threadIdx.x >= n) return;\n\
             if (v) {\n    if (v & 1u) {\n      atomicOr(&y[n - 1], v);\n      return;\n    }\n  }\n}\n",
        )
        .expect("folded");
        assert_eq!(f.op, FoldOp::Or);
        let cases = [
            "__global__ void child(int* y, int n) { while (n--) atomicAdd(y, n); }",
            "__global__ void child(int* y, int n) { do { atomicAdd(y, n); } while (0); }",
            "__global__ void child(int* y, int n) { switch (n) { case 1: atomicAdd(y, n); } }",
            "__global__ void child(int* y, int n) { atomicAdd((int*)y, n); }",
            "__global__ void child(int* y, int r) { for (int r = 0; r < 2; ++r) {} atomicAdd(&y[r], 1); }",
            "template <typename T> __global__ void child(T* y, T v) { atomicAdd(y, v); }",
        ];
        for text in cases {
            assert!(folded(text).is_none(), "folded: {text}");
        }
    }

    #[test]
    fn refuses_what_it_cannot_fold() {
        let cases = [
            // a float sum rounds differently
            "__global__ void child(float* y, float v) { atomicAdd(y, v); }",
            // the value is used
            "__global__ void child(int* y, int* o) { o[threadIdx.x] = atomicAdd(y, 1); }",
            // something follows it
            "__global__ void child(int* y, int* o) { atomicAdd(y, 1); o[threadIdx.x] = 2; }",
            // in a loop of the child
            "__global__ void child(int* y, int n) { for (int k = 0; k < n; ++k) atomicAdd(y, k); }",
            "__global__ void child(int* y, int n) { for (int k = 0; k < n; ++k) { atomicAdd(y, k); } }",
            // an else branch follows
            "__global__ void child(int* y, int* o, int v) { if (v) { atomicAdd(y, v); } else { o[0] = 1; } }",
            // two operations
            "__global__ void child(int* y, int* z, int v) { atomicAdd(y, v); atomicMax(z, v); }",
            // not a parameter, or a parameter declared again
            "__global__ void child(int* y, int v) { int* p = y + 1; atomicAdd(p, v); }",
            "__global__ void child(int* y, int v) { { float* y = 0; } atomicAdd(y, v); }",
            // an element of an element, a member
            "__global__ void child(int* y, int v) { atomicAdd(&y[v][0], v); }",
            // a volatile or const pointee
            "__global__ void child(volatile int* y, int v) { atomicAdd(y, v); }",
            // an address that differs between child threads, or may
            "__global__ void child(int* y, const int* k) { atomicAdd(&y[k[threadIdx.x]], 1); }",
            "__global__ void child(int* y, int r) { int i = threadIdx.x; atomicAdd(&y[r + i], 1); }",
            "__global__ void child(int* y, int r) { r += threadIdx.x; atomicAdd(&y[r], 1); }",
            "__global__ void child(int* y, int r) { y += threadIdx.x; atomicAdd(y, r); }",
            "__global__ void child(int* y, int r, int* w) { atomicAdd(&y[r * *w], 1); }",
        ];
        for text in cases {
            assert!(folded(text).is_none(), "folded: {text}");
        }
    }
}
