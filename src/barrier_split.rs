//! The serial version of a child that waits at block barriers: the child's
//! body split at its `__syncthreads();` statements into phases, each run by
//! the parent thread for every thread of the block before the next one
//! starts (loop fission at barriers, as MCUDA translates CUDA for CPUs).
//!
//! What the split accepts (docs/PRAGMA.md, "Children with barriers"):
//!
//! - `__syncthreads();` (or a cooperative-groups block group's sync) as a
//!   statement of the body, or of the braced body of a `for`, `while`,
//!   `do ... while (...);`, `if`/`else` or plain block whose head every
//!   thread of the block computes alike (it reads no thread index, no variable of a thread, no
//!   parameter the body assigns, and calls nothing but `min`, `max`,
//!   `sizeof`, casts and pure math functions, `UNIFORM_CALLS`): those constructs run once per block, around the phases of
//!   their bodies;
//! - `__shared__` variables of a constant size declared at the top of such a
//!   body: one local array of the parent thread per block; `extern
//!   __shared__` arrays point into a local buffer as large as the launches'
//!   constant dynamic shared memory; the body's atomics go to stand-ins that
//!   take a local address;
//! - a thread's variables that live across a barrier: recomputed in each
//!   phase when their initializer reads only indices, dimensions, constants
//!   and parameters the body never assigns, otherwise kept per thread in
//!   local arrays of the block's size (a constant bound: the child's
//!   `__launch_bounds__`, or the constant block size of every launch that
//!   runs serially); the parameters the body assigns are kept per thread
//!   the same way;
//! - `return` anywhere: the thread skips the phases that follow.
//! - a block vote (`__syncthreads_or`, `__syncthreads_and`,
//!   `__syncthreads_count`) in the head of such a `while`, `do ... while` or
//!   `if` (`Phased::votes`): a phase folds its argument over the block's
//!   threads (before an `if` or `while`, and at the end of a loop's body),
//!   and the head reads the fold;
//! - a warp exchange (`__shfl_down_sync(m, v, d)`, `__ballot_sync(m, p)`,
//!   `__reduce_add_sync(m, v)`, ... `warp_exchange.rs`) in a statement that
//!   every thread of the block reaches (`Phased::exchanges`): a phase stores
//!   each thread's value in its slot, and the statement, in the next phase,
//!   calls the intrinsic's stand-in, which reads its warp's slots;
//!   `__syncwarp();` and a tile's `tile.sync();` there split as barriers;
//! - an `if` whose body exchanges within warps but waits at no barrier of
//!   the block, under a condition of each thread (`Step::Guard`): each
//!   thread's condition is stored, and the body's phases run the threads
//!   whose condition holds;
//! - a construct's body without braces: the serial version writes them;
//! - `break;` or `continue;` of a barrier loop, alone or under an `if` whose
//!   condition every thread computes alike (`if (i == iteration - 1)
//!   break;`), as a statement of the loop's body or of a construct in it
//!   (`Step::Leave`): run once per block between the phases; not a
//!   `continue` that would skip a vote folded at the end of each round.
//!
//! Device functions that wait or share memory, called as statements, run in
//! place (`Step::Call`), each call a scope of its own (`Scope`); variables
//! every thread computes alike that only construct heads assign, or that
//! nothing assigns and a head reads, or counters that every loop using them
//! starts afresh (`restarted_counter`), are computed once per block
//! (`Phased::uniform`); a block group's position queries read the builtins
//! (`block_query`); a recursive child splits too.
//!
//! Everything else (a barrier in a per-thread statement, in a callee called
//! otherwise, under a non-uniform condition or in a `switch`, other `break`
//! or `continue` of a barrier loop, `goto`, lambdas, a variable kept per
//! thread whose type is `auto` or a reference) is refused with the reason.

use crate::constant::Constants;
use crate::hazard::{Hazard, Hazards};
use crate::program::{FunctionId, Program};
use crate::source::Span;
use crate::token::{is_modified_at, split_top_level, Angles, Token, TokenKind};
use crate::warp_exchange::{Exchange, WarpOp};
use std::collections::{BTreeSet, HashMap, HashSet};

/// What the launches that run a child serially state about its blocks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SerialShape {
    /// Threads per block, at most (a constant).
    pub block: Option<u64>,
    /// Dynamic shared memory in bytes, at most (a constant).
    pub dynamic_shared: Option<u64>,
}

/// A child's body split at its barriers (`ChildPlan::phased`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phased {
    /// The body's top level: phases and the block-level constructs between.
    pub steps: Vec<Step>,
    /// Every phase, by id (source order).
    pub phases: Vec<Phase>,
    /// `__shared__` declarations, made local arrays of each block's run.
    pub shared: Vec<Shared>,
    /// A thread's variables used in a later phase than their declaration,
    /// and the parameters the body assigns.
    pub vars: Vec<Var>,
    /// Some thread may return before a later phase: each thread has a flag.
    pub done_flags: bool,
    /// Every return before a later phase is taken by a whole block together:
    /// the block has one flag, and the phases after it run no thread.
    pub block_done: bool,
    /// Threads per block the per-thread arrays hold, when some are needed.
    pub bound: Option<u64>,
    /// Bytes of the buffer that stands for dynamic shared memory, when the
    /// child declares `extern __shared__` arrays.
    pub dynamic_shared: Option<u64>,
    /// How many barrier statements the body is split at.
    pub barriers: usize,
    /// The names of the atomic functions the body calls, where it shares
    /// memory: the serial version calls `dpopt_serial_<name>` instead, which
    /// reads and writes a local address (a shared array's stand-in) plainly.
    pub atomics: Vec<Span>,
    /// The calls whose callee's body the split runs in place (the callee's
    /// name where called, in call order).
    pub inlined: Vec<Span>,
    /// Variables computed once per block (`int nt = min(d, N);` or `int s;`
    /// whose only writes are construct heads, `for (; nt > 1; nt /= 2)`),
    /// declared before the threads of the phase that declares them.
    pub uniform: Vec<Uniform>,
    /// The block votes in construct heads (`while (__syncthreads_or(x))`,
    /// `do { ... } while (__syncthreads_count(p) > 0);`, `if
    /// (__syncthreads_and(ok))`): each a phase that folds the argument of
    /// every thread (`Phase::vote`), the head reading the result.
    pub votes: Vec<Vote>,
    /// The warp exchanges in statements (`__shfl_down_sync(m, v, d)`,
    /// `__ballot_sync(m, p)`, ...): each a phase that stores every thread's
    /// value (`Phase::exchange`), the statement in the next phase reading
    /// the values of its warp's lanes through the intrinsic's stand-in.
    pub exchanges: Vec<Exchange>,
    /// How many `Step::Guard`s the body has (each a flag per thread).
    pub guards: usize,
    /// The calls whose callee declares a name of the variable that takes
    /// its result (`val = warp_sum(val);` with `float warp_sum(float val)`).
    pub result_refs: Vec<ResultRef>,
    /// In the bodies of the template callees run in place, each name of a
    /// template parameter and the argument written there instead
    /// (`static __shared__ T shared[32];` of `blockReduceSum<float>`), and in
    /// the body of a function whose `__shared__` variable has the name of an
    /// earlier function's, each use of the name and the new one.
    pub instances: Vec<(Span, String)>,
}

/// `val = warp_sum(val);` where the callee has a `val` of its own: in the
/// callee's final phase, `auto &dpopt_result<call> = val;` binds the
/// caller's variable before the callee's scope opens, and the callee's
/// `return` assigns it through the reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultRef {
    /// The callee's final phase.
    pub phase: usize,
    /// The call (`Step::Call::scope`).
    pub call: usize,
    /// The caller's variable.
    pub target: String,
}

/// `__syncthreads_or`, `__syncthreads_and` or `__syncthreads_count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoteOp {
    Or,
    And,
    Count,
}

impl VoteOp {
    fn of(name: &str) -> Option<VoteOp> {
        Some(match name {
            "__syncthreads_or" => VoteOp::Or,
            "__syncthreads_and" => VoteOp::And,
            "__syncthreads_count" => VoteOp::Count,
            _ => return None,
        })
    }

    /// The intrinsic's name.
    pub fn name(self) -> &'static str {
        match self {
            VoteOp::Or => "__syncthreads_or",
            VoteOp::And => "__syncthreads_and",
            VoteOp::Count => "__syncthreads_count",
        }
    }
}

/// A block vote in a construct head: the whole call, which the head reads
/// as the fold of its argument over the block's threads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vote {
    pub op: VoteOp,
    /// From the intrinsic's name to its `)`.
    pub call: Span,
}

impl Phased {
    /// The phases the serial version runs (those with statements).
    pub fn stretches(&self) -> usize {
        fn count(steps: &[Step]) -> usize {
            steps
                .iter()
                .map(|s| match s {
                    Step::Phase(_) => 1,
                    Step::Construct {
                        body, otherwise, ..
                    } => count(body) + otherwise.as_ref().map_or(0, |(_, o)| count(o)),
                    Step::Call { body, .. } => count(body),
                    Step::Guard {
                        body, otherwise, ..
                    } => count(body) + otherwise.as_deref().map_or(0, count),
                    Step::Leave(_) => 0,
                })
                .sum()
        }
        count(&self.steps)
    }
}

/// One step of a body: a phase, or a construct run once per block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Phase(usize),
    Construct {
        /// `for (...) {`, `while (...) {`, `if (...) {`, or the `{` of a
        /// plain block: its head up to the body's opening brace.
        head: Span,
        body: Vec<Step>,
        /// `else {` and the steps of its body.
        otherwise: Option<(Span, Vec<Step>)>,
        /// A `do` loop's `while (...);` after its body.
        tail: Option<Span>,
    },
    /// A call of a device function that waits at barriers or shares memory,
    /// as a statement (`f(a, b);`, `v = f(a, b);`, `T v = f(a, b);`): the
    /// callee's body split in place, its parameters bound to the arguments
    /// at the start of each of its phases.
    /// `if (wid == 0) val = warp_sum(val);`: an `if` whose body exchanges
    /// values within warps but waits at no barrier of the block, under a
    /// condition each thread computes for itself (`Phased::guards`): the
    /// phase before stores each thread's condition (`Phase::guard`), and
    /// each phase of the body (`otherwise`: of the `else`) runs the threads
    /// whose condition holds (does not hold).
    Guard {
        guard: usize,
        body: Vec<Step>,
        otherwise: Option<Vec<Step>>,
    },
    /// `if (done) break;`, `if (i == iteration - 1) break;`, `continue;`:
    /// a `break` or `continue` of the barrier loop around it, under a
    /// condition every thread of the block computes alike (a head), run
    /// once per block between the phases (the whole statement).
    Leave(Span),
    Call {
        /// The call's scope (`Scope`): `Some(scope)` is its callee's body.
        scope: usize,
        /// The callee's name.
        callee: String,
        /// The callee's body (its recomputed declarations follow the
        /// parameters' bindings).
        body_span: Span,
        binds: Vec<Bind>,
        body: Vec<Step>,
    },
}

/// A parameter of an inlined callee: `declaration = (argument);` in each
/// of the callee's phases (the argument has no side effect, so evaluating
/// it again gives the same value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bind {
    /// The parameter's declaration, e.g. `const int *row`.
    pub declaration: String,
    pub name: String,
    /// The argument at the call.
    pub arg: Span,
    /// The argument reads nothing of one thread (parameters the body never
    /// assigns, block indices, dimensions, constants): bound once per block,
    /// before the callee's first phase, where its construct heads and the
    /// variables computed once per block can read it.
    pub block: bool,
    /// The callee assigns the parameter: it is bound once, in the callee's
    /// first phase, to each thread's kept copy (`Keep::Param`), which the
    /// later phases read.
    pub assigned: bool,
    /// A group of the block passed for a parameter of a group type (`reduce_sum(g, ...)`
    /// with `thread_group g`): bound once per block to a new handle of the block's group,
    /// the argument not evaluated (a group's queries read only the builtins).
    pub group: bool,
}

/// Statements between two barriers (or a barrier and a construct).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phase {
    /// The bytes, from the end of what comes before to the start of what
    /// comes after.
    pub range: Span,
    /// The `return ... ;` statements in it.
    pub returns: Vec<Span>,
    /// Runs last for every thread that gets there (the top level's last
    /// phase): a `return` there needs no flag.
    pub last: bool,
    /// The final `return` of an inlined callee: its keyword and what
    /// replaces it (`v =` for the call's result, `(void)`, or nothing).
    pub result: Option<(Span, String)>,
    /// The phase is the argument of `Phased::votes[i]` (its range), which
    /// each thread folds into the vote's result.
    pub vote: Option<usize>,
    /// The phase is the value of `Phased::exchanges[i]` (its range), which
    /// each thread stores in its exchange slot.
    pub exchange: Option<usize>,
    /// The phase is the condition of the `i`-th `Step::Guard` (its range),
    /// which each thread stores as its own.
    pub guard: Option<usize>,
}

/// A `__shared__` declaration at the top of a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shared {
    /// From the declaration's first token to its `;`.
    pub statement: Span,
    /// The `__shared__` keyword, left out of the local copy.
    pub keyword: Span,
    /// `static` (`static __shared__ int part[32];`), left out too: the
    /// local copy is each block run's own, not one of the whole program.
    pub statics: Vec<Span>,
    /// `extern __shared__ T name[];`: (element type, name), a pointer into
    /// the serial version's buffer of dynamic shared memory.
    pub dynamic: Option<(String, String)>,
}

/// How a variable gets from one phase to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Keep {
    /// Its declaration, copied to the start of each later phase that uses it.
    Recompute { declaration: Span },
    /// Kept per thread: `storage name[bound]array`; in its own phase each
    /// span of `rewrites` becomes its text (the declaration up to the name
    /// becomes the name; in a statement of several declarators, the first
    /// kept one also turns the statement's commas into `;`, giving the
    /// declarators that are not kept their type again).
    Store {
        storage: String,
        array: String,
        rewrites: Vec<(Span, String)>,
    },
    /// An assigned parameter, kept per thread: the child's from the start
    /// of each block (`bound_in` is `None`), a callee's from its argument in
    /// the callee's first phase, `bound_in`.
    Param {
        storage: String,
        bound_in: Option<usize>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Var {
    pub name: String,
    /// The body that declares it.
    pub scope: Scope,
    pub keep: Keep,
    /// The phase that declares it (`None` for a parameter).
    pub declared_in: Option<usize>,
    /// The other phases that name it.
    pub used_in: Vec<usize>,
}

/// A variable computed once per block (`Phased::uniform`): every thread
/// would give it the same value, and only construct heads, which run once
/// per block, assign it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uniform {
    /// The phase whose declarations hold it.
    pub phase: usize,
    /// What runs before that phase's threads.
    pub declaration: BlockDeclaration,
    /// The phase's own text rewritten, where the declaration was.
    pub rewrites: Vec<(Span, String)>,
}

/// The declaration of a variable computed once per block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockDeclaration {
    /// The user's statement as it stands (`int s;`, `int nt = min(d, 64);`).
    Statement(Span),
    /// One declarator of a statement of several, with the statement's type
    /// (`unsigned s;` out of `unsigned tid = threadIdx.x, s;`).
    Declarator(String),
}

/// Where a name is declared: `None` for the child's body, `Some(k)` for
/// the body of the k-th call whose callee the split runs in place (each call
/// its own scope, also where one callee is called twice). The generated code
/// nests them as the source does: a callee's phase declares the caller's
/// variables that its arguments read, then, in a brace of its own, the
/// callee's parameters and variables, so the same name may stand in both.
pub type Scope = Option<usize>;

/// What `Walk::variables` finds.
struct Variables {
    vars: Vec<Var>,
    /// Declarations computed once per block (`Phased::uniform`).
    uniform: Vec<Uniform>,
    /// Per call run in place, per parameter: bound once per block.
    block_binds: Vec<Vec<bool>>,
    /// The calls whose result goes through a reference (`Phased::result_refs`).
    result_refs: Vec<usize>,
}

/// Why a child with barriers has no serial version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub span: Span,
    pub why: String,
    pub fix: String,
    /// Notes: the calls that lead to a callee's construct.
    pub notes: Vec<(Span, String)>,
}

/// Sets `Bind::block` of each call run in place, in walk order.
fn mark_block_binds(steps: &mut [Step], flags: &mut impl Iterator<Item = Vec<bool>>) {
    for step in steps {
        match step {
            Step::Phase(_) | Step::Leave(_) => {}
            Step::Construct {
                body, otherwise, ..
            } => {
                mark_block_binds(body, flags);
                if let Some((_, o)) = otherwise {
                    mark_block_binds(o, flags);
                }
            }
            Step::Guard {
                body, otherwise, ..
            } => {
                mark_block_binds(body, flags);
                if let Some(o) = otherwise {
                    mark_block_binds(o, flags);
                }
            }
            Step::Call { binds, body, .. } => {
                // a call's flags before those of the calls its callee makes
                if let Some(f) = flags.next() {
                    for (b, block) in binds.iter_mut().zip(f) {
                        b.block = block;
                    }
                }
                mark_block_binds(body, flags);
            }
        }
    }
}

/// The size of the tile a parameter declared `declaration` takes: `[const]
/// [cg::]thread_block_tile<N> [&]name`.
fn tile_parameter<'d>(declaration: &'d str, name: &str) -> Option<&'d str> {
    let tokens = crate::lexer::lex_text(declaration);
    let words: Vec<&str> = tokens
        .iter()
        .filter(|t| t.kind.is_significant())
        .map(|t| &declaration[t.range()])
        .filter(|w| !matches!(*w, "const" | "&" | "cg" | "cooperative_groups" | "::"))
        .collect();
    match words[..] {
        ["thread_block_tile", "<", n, ">", p] if p == name => Some(n),
        _ => None,
    }
}

/// Is `v` the size of a tile of at most a warp (1, 2, 4, 8, 16 or 32)?
fn warp_tile(v: i128) -> bool {
    (1..=32).contains(&v) && (v as u32).is_power_of_two()
}

/// Why the split does not take the warp operation `construct`.
fn warp_refusal(construct: &str) -> String {
    if construct == "volatile" {
        "`volatile` memory of a warp-synchronous exchange (lanes that read each other's writes without a barrier), which the split cannot order: it reproduces the `__shfl*_sync`, `__ballot_sync`, `__any_sync`, `__all_sync` and `__reduce_*_sync` intrinsics and `__syncwarp();`".to_string()
    } else if WarpOp::of(construct).is_some() || construct == "__syncwarp" {
        format!("`{construct}` stands where not every thread of the block reaches it together, or with another barrier or exchange in its statement: the split takes a warp exchange (or `__syncwarp();`) in a statement of the body, or of a `for`, `while`, `if` or block whose head every thread computes alike, one in a statement, not in a loop of the statement, with an argument that neither assigns nor calls")
    } else {
        format!("`{construct}` is a warp operation the split does not reproduce: it takes the `__shfl*_sync`, `__ballot_sync`, `__any_sync`, `__all_sync` and `__reduce_*_sync` intrinsics and `__syncwarp();`")
    }
}

fn refuse(span: Span, why: impl Into<String>, fix: impl Into<String>) -> Refusal {
    Refusal {
        span,
        why: why.into(),
        fix: fix.into(),
        notes: Vec::new(),
    }
}

/// The atomic functions the serial version of a body that shares memory
/// redirects (`templates/serial_split.cu.tera` defines a stand-in for each).
pub const SERIAL_ATOMICS: &[&str] = &[
    "atomicAdd",
    "atomicSub",
    "atomicExch",
    "atomicMin",
    "atomicMax",
    "atomicInc",
    "atomicDec",
    "atomicCAS",
    "atomicAnd",
    "atomicOr",
    "atomicXor",
];

/// Calls a uniform head may make: functions of their arguments alone
/// (casts, and the math library's pure functions, as Rodinia's backprop
/// loops `for (int i = 1; i <= __log2f(HEIGHT); i++)`).
const UNIFORM_CALLS: &[&str] = &[
    "min",
    "max",
    "sizeof",
    "static_cast",
    "int",
    "unsigned",
    "long",
    "float",
    "double",
    "size_t",
    "umin",
    "umax",
    "llmin",
    "llmax",
    "abs",
    "fabs",
    "fabsf",
    "fminf",
    "fmaxf",
    "sqrt",
    "sqrtf",
    "cbrtf",
    "ceil",
    "ceilf",
    "floor",
    "floorf",
    "truncf",
    "roundf",
    "rintf",
    "log2",
    "log2f",
    "__log2f",
    "logf",
    "__logf",
    "exp2f",
    "expf",
    "__expf",
    "powf",
    "__powf",
    "__float2int_rn",
    "__float2int_rz",
    "__float2uint_rn",
    "__int2float_rn",
    "__popc",
    "__clz",
    "__ffs",
];

/// Words that start a statement which is not a declaration.
const NOT_A_TYPE: &[&str] = &[
    "return",
    "delete",
    "new",
    "throw",
    "goto",
    "break",
    "continue",
    "case",
    "default",
    "else",
    "typedef",
    "using",
    "static_assert",
    "asm",
    "__asm__",
    "__asm",
    "sizeof",
    "if",
    "for",
    "while",
    "do",
    "switch",
];

/// Tokens after which `*` and `&` are unary (a dereference, an address).
const BEFORE_UNARY: &[&str] = &[
    "=", "(", ",", "+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "?", ":", "!", "~", "<",
    ">", "<=", ">=", "==", "!=", "&&", "||",
];

/// Type words a recomputed initializer may use in a cast.
const CAST_WORDS: &[&str] = &[
    "int", "unsigned", "signed", "long", "short", "char", "float", "double", "bool", "size_t",
    "const", "sizeof", "true", "false",
];

/// What a statement's phase before it folds or stores (`Walk::region_in`).
#[derive(Clone, Copy)]
enum Point {
    Vote(VoteOp),
    Exchange(WarpOp),
}

/// The head of a construct run once per block, checked for uniformity.
struct Head {
    /// Significant-token range of what the parentheses hold.
    from: usize,
    to: usize,
    /// The regions it stands in.
    chain: Vec<usize>,
    /// The variable a `for` head declares.
    loop_var: Option<String>,
    /// The regions its body stands in (`chain` and the body's own).
    body: Vec<usize>,
}

/// A call whose callee's body the split runs in place.
struct Inline {
    callee: FunctionId,
    /// The callee's name where called.
    name_span: Span,
    /// The phases of the callee's body.
    phases: std::ops::Range<usize>,
    /// The parameters' names.
    params: Vec<String>,
    /// Each parameter's argument (significant-token range).
    bind_args: Vec<(usize, usize)>,
    /// Which parameters the callee assigns (`Bind::assigned`).
    assigned: Vec<bool>,
    /// Which parameters are the block's group (`Bind::group`).
    groups: Vec<bool>,
    /// The regions the callee's body stands in (its own last).
    chain: Vec<usize>,
    /// The regions the call stands in.
    caller_chain: Vec<usize>,
    /// The scope the call stands in: the child's body, or the body of the
    /// callee that makes it (a callee of a callee).
    caller: Scope,
    /// The phase of the callee's final `return value;`.
    ret_phase: Option<usize>,
    /// `v = f(...)`: the variable assigned.
    target: Option<String>,
    /// `T v = f(...)`: the variable declared and its type, kept per thread.
    declared: Option<(String, String, Span)>,
}

struct Walk<'p> {
    program: &'p Program,
    view: &'p str,
    sig: &'p [Token],
    phases: Vec<Phase>,
    /// Per phase: its region's id and the chain of enclosing regions.
    phase_regions: Vec<Vec<usize>>,
    /// Per phase: significant-token range of its statements.
    phase_tokens: Vec<Vec<(usize, usize)>>,
    barriers: HashSet<usize>,
    shared: Vec<Shared>,
    shared_names: HashSet<String>,
    /// The scope (`Walk::scope`) of each `__shared__` name.
    shared_scopes: HashSet<(Scope, String)>,
    /// Declarations at the top of a region: (phase, region chain, statement
    /// sig range).
    declarations: Vec<(usize, Vec<usize>, usize, usize)>,
    /// Heads of constructs, with the chain of regions they are in.
    heads: Vec<Head>,
    regions: usize,
    conditions: Vec<(usize, usize)>,
    /// Significant indices of declared names (a declaration is no write).
    declared_at: HashSet<usize>,
    /// Where the hazard model sees the body wait for its block: (start,
    /// end) offsets of each construct.
    block_waits: Vec<(usize, usize)>,
    /// Where the hazard model sees the body wait for its warp (a tile's
    /// `tile.sync()`): (start, end) offsets of each construct.
    warp_waits: Vec<(usize, usize)>,
    /// Variables that hold the block's group (`hazard.rs`).
    block_groups: HashSet<String>,
    /// Those that hold the whole block's group for certain, whose position
    /// queries read the builtins (`Hazards::definite_block_groups`).
    block_handles: HashSet<String>,
    /// The launches' dynamic shared memory, at most (a constant).
    dynamic_shared: Option<u64>,
    hazards: &'p Hazards<'p>,
    child: FunctionId,
    /// Walking the bodies of the callees called here (run in place), the
    /// innermost last: each call's name and its index in `inlines`.
    inlining: Vec<(Span, usize)>,
    /// The regions that are bodies of barrier loops, and whether a
    /// `continue` may leave each (`Step::Leave`).
    loop_regions: HashMap<usize, bool>,
    /// The regions that are bodies of callees run in place.
    inline_regions: HashSet<usize>,
    /// The regions that are bodies of guards (`Step::Guard`), and how many
    /// guards there are.
    guard_regions: HashSet<usize>,
    guards: usize,
    /// The calls whose callee's body runs in place (`Step::Call`).
    inlines: Vec<Inline>,
    /// Set when the body declares `extern __shared__` arrays.
    dynamic_bytes: Option<u64>,
    /// The block votes of construct heads (`Phased::votes`), and the
    /// significant-token range of each call (name to `)`, inclusive), which
    /// the heads' uniformity check leaves out.
    votes: Vec<Vote>,
    vote_calls: Vec<(usize, usize)>,
    /// The warp exchanges (`Phased::exchanges`), and the significant-token
    /// range of each call (name to `)`, inclusive).
    exchanges: Vec<Exchange>,
    exchange_calls: Vec<(usize, usize)>,
    /// The start of each warp intrinsic the split reproduces (exchanges,
    /// `__syncwarp` statements).
    warp_known: HashSet<usize>,
    /// A phase kept although it holds no statement: the first of a callee
    /// that assigns a parameter, where the parameter is bound.
    keep_phase: Option<usize>,
    /// The template callees run in place: each one's template parameters'
    /// names and the arguments it runs with (`Walk::instantiate`).
    instances: HashMap<FunctionId, Vec<(String, String)>>,
    /// The function that declares each `__shared__` name first, and the
    /// names of later functions' `__shared__` variables that the split
    /// renames in their bodies (old name, new name).
    shared_owners: HashMap<String, FunctionId>,
    renames: HashMap<FunctionId, Vec<(String, String)>>,
    /// The tiles of the block the bodies make (`cg::thread_block_tile<32>
    /// tile = cg::tiled_partition<32>(block);`): each variable's name and
    /// the tile's size, 1 to 32 (`Walk::collect_tiles`).
    tiles: HashMap<String, String>,
    constants: &'p Constants,
}

/// The split of `child`'s body, or why there is none. `bound`: the threads
/// per block of every launch that runs serially, when known.
pub fn phased(
    program: &Program,
    hazards: &Hazards,
    constants: &Constants,
    child: FunctionId,
    shape: SerialShape,
) -> Result<Phased, Refusal> {
    let bound = shape.block;
    let function = &program.functions[child];
    let (own, calls) = hazards.own(child);
    let mut walk = Walk {
        program,
        view: &program.view,
        sig: &program.sig,
        phases: Vec::new(),
        phase_regions: Vec::new(),
        phase_tokens: Vec::new(),
        barriers: HashSet::new(),
        shared: Vec::new(),
        shared_names: HashSet::new(),
        shared_scopes: HashSet::new(),
        declarations: Vec::new(),
        heads: Vec::new(),
        regions: 0,
        conditions: program.condition_at(function.body.start()),
        declared_at: HashSet::new(),
        block_waits: own
            .iter()
            .filter(|f| f.hazard == Hazard::Block)
            .map(|f| (f.span.start(), f.span.end()))
            .collect(),
        warp_waits: own
            .iter()
            .filter(|f| f.hazard == Hazard::Warp)
            .map(|f| (f.span.start(), f.span.end()))
            .collect(),
        block_groups: hazards.block_groups(child),
        block_handles: hazards.definite_block_groups(child),
        dynamic_shared: shape.dynamic_shared,
        dynamic_bytes: None,
        votes: Vec::new(),
        vote_calls: Vec::new(),
        exchanges: Vec::new(),
        exchange_calls: Vec::new(),
        warp_known: HashSet::new(),
        keep_phase: None,
        instances: HashMap::new(),
        shared_owners: HashMap::new(),
        renames: HashMap::new(),
        tiles: HashMap::new(),
        constants,
        hazards,
        child,
        inlining: Vec::new(),
        loop_regions: HashMap::new(),
        guard_regions: HashSet::new(),
        guards: 0,
        inline_regions: HashSet::new(),
        inlines: Vec::new(),
    };
    let (open, close) = (function.body_tokens.start, function.body_tokens.end);
    walk.collect_tiles(open, close);
    walk.regions = 1;
    let steps = walk.region(open, close, &[0])?;
    if let Some(Step::Phase(last)) = steps.last() {
        walk.phases[*last].last = true;
    }
    // Callees that wait or share memory themselves, where the split does not
    // run their bodies in place; with callees run in place, callees that
    // read a position too (the serial version replaces the builtins only in
    // the bodies it copies).
    let inlined_at: HashSet<usize> = walk.inlines.iter().map(|i| i.name_span.start()).collect();
    let mut all_calls: Vec<crate::hazard::OwnCall> = calls;
    // Each construct, with the call that runs its callee's body in place.
    let mut owns: Vec<(crate::hazard::Finding, Option<Span>)> =
        own.into_iter().map(|f| (f, None)).collect();
    for i in &walk.inlines {
        let (o, c) = hazards.own(i.callee);
        owns.extend(o.into_iter().map(|f| (f, Some(i.name_span))));
        all_calls.extend(c);
    }
    let own = owns;
    for crate::hazard::OwnCall {
        span,
        callee,
        summary,
        copied,
    } in &all_calls
    {
        if inlined_at.contains(&span.start()) {
            continue;
        }
        let kinds: &[Hazard] = if walk.inlines.is_empty() {
            &[Hazard::Block, Hazard::Shared, Hazard::Warp]
        } else {
            &[
                Hazard::Block,
                Hazard::Shared,
                Hazard::Warp,
                Hazard::ThreadPosition,
                Hazard::BlockPosition,
            ]
        };
        // With callees run in place, a callee's call of a function that
        // reads a builtin itself goes to its copy taking the positions
        // (`position_clone.rs`), or is refused here: the child-level check
        // exempts the calls that run in place.
        let uncopied = (!walk.inlines.is_empty() && !copied)
            .then(|| summary.first_of(&[Hazard::ThreadBuiltin, Hazard::BlockBuiltin], |_| true))
            .flatten();
        if let Some(f) = summary.first_of(kinds, |_| true).or(uncopied) {
            let why = if f.hazard == Hazard::Warp && f.construct == "volatile" {
                format!(
                    "the child calls `{callee}`, which leads to {} (in `{}`)",
                    warp_refusal(&f.construct),
                    f.function
                )
            } else if matches!(f.hazard, Hazard::Block | Hazard::Shared | Hazard::Warp) {
                format!(
                    "the child calls `{callee}`, which leads to `{}` in `{}`; the split runs in place only a device function of the file called as a statement (`f(...);`, `v = f(...);`, `T v = f(...);`) at the top of the child's body (or of such a callee's body) or of a braced `for`, `while`, `do` or `if` body whose head every thread computes alike, and not recursive",
                    f.construct, f.function
                )
            } else {
                format!(
                    "the child calls `{callee}`, which reads `{}` in `{}`; the split's serial version replaces the builtins only in the bodies it runs in place and in the functions dpopt copies with the positions as parameters (not this one: {})",
                    f.construct,
                    f.function,
                    hazards.why_not_copied(callee).unwrap_or("it reads the position another way")
                )
            };
            let mut r = refuse(
                f.span,
                why,
                "move the barriers and `__shared__` declarations into the child's body or a callee called as a statement, or remove `threshold`/`floor`",
            );
            r.notes.push((*span, format!("calls `{callee}`")));
            r.notes.extend(f.call_notes());
            return Err(r);
        }
    }
    // Every barrier and shared declaration the hazard model sees must be one
    // the split recognized.
    for (f, via) in &own {
        let known = match f.hazard {
            Hazard::Block => walk.barriers.contains(&f.span.start()),
            Hazard::Shared => walk
                .shared
                .iter()
                .any(|s| s.keyword.start() == f.span.start()),
            Hazard::Warp => walk.warp_known.contains(&f.span.start()),
            // a tile's rank (the child's own: a callee's positions are
            // refused where it is called, but its tiles' queries)
            Hazard::ThreadPosition | Hazard::BlockPosition => {
                via.is_some()
                    || walk
                        .tile_query(walk.program.sig_index_at(f.span.start()))
                        .is_some()
            }
            _ => true,
        };
        if !known {
            let sync_form = f.construct == "__syncthreads"
                || f.construct.ends_with(".sync()")
                || f.construct.starts_with("cg::sync(")
                || f.construct.starts_with("cooperative_groups::sync(");
            let why = if f.hazard == Hazard::Warp {
                warp_refusal(&f.construct)
            } else if matches!(f.hazard, Hazard::ThreadPosition | Hazard::BlockPosition) {
                format!("`{}` reads a position the split does not replace: it writes with the builtins the queries of the block's group and of a tile of it of a constant size (`cg::thread_block_tile<32> t = cg::tiled_partition<32>(block);`, `t.thread_rank()`)", f.construct)
            } else if f.hazard == Hazard::Block && !sync_form {
                format!("`{}` is a barrier the split does not take: it splits at `__syncthreads();`, the syncs of cooperative-groups block groups, and a block vote (`__syncthreads_or`, `_and`, `_count`) in the head of a `while`, `do ... while` or `if`", f.construct)
            } else if f.hazard == Hazard::Block {
                format!("`{}` stands where not every thread of the block reaches it in step: the split takes `__syncthreads();` as a statement of the body, or of the braced body of a `for`, `while`, `if` or block whose head every thread computes alike", f.construct)
            } else {
                format!("`{}` is not a `__shared__` variable of constant size declared at the top of the body (or of a barrier loop's body)", f.construct)
            };
            let mut r = refuse(
                f.span,
                why,
                "rewrite the child so, or remove `threshold`/`floor` from this pragma",
            );
            if let Some(call) = via {
                let name = &program.view[call.range()];
                r.notes.push((
                    *call,
                    format!("calls `{name}`, whose body the split runs in place"),
                ));
            }
            return Err(r);
        }
    }
    let mut bodies = vec![(open, close)];
    bodies.extend(walk.inlines.iter().map(|i| {
        let f = &program.functions[i.callee];
        (f.body_tokens.start, f.body_tokens.end)
    }));
    let mut atomics = Vec::new();
    let shared_pointers = walk.shared_pointers(&bodies);
    for &(open, close) in &bodies {
        walk.check_body(open, close)?;
        atomics.extend(walk.shared_atomics(open, close, &shared_pointers)?);
    }
    let Variables {
        vars,
        uniform,
        block_binds,
        result_refs,
    } = walk.variables(function, &bodies, constants)?;
    let mut results = Vec::new();
    for k in result_refs {
        let i = &walk.inlines[k];
        let (Some(phase), Some(target)) = (
            i.ret_phase,
            i.target
                .clone()
                .or(i.declared.as_ref().map(|(n, ..)| n.clone())),
        ) else {
            continue;
        };
        if let Some((_, with)) = &mut walk.phases[phase].result {
            *with = format!("dpopt_result{k} =");
        }
        results.push(ResultRef {
            phase,
            call: k,
            target,
        });
    }
    let mut steps = steps;
    mark_block_binds(&mut steps, &mut block_binds.into_iter());
    // A thread that returns before a later phase is marked, so that the later
    // phases skip it; where every return is taken by a whole block
    // (`uniform_return`), the block is marked instead.
    let returns_early = walk.phases.iter().any(|p| !p.last && !p.returns.is_empty());
    let block_done =
        returns_early && crate::uniform_return::every_return_block_uniform(program, function);
    let done_flags = returns_early && !block_done;
    let needs_bound = done_flags
        || !walk.exchanges.is_empty()
        || walk.guards > 0
        || vars
            .iter()
            .any(|v| !matches!(v.keep, Keep::Recompute { .. }));
    let bound = if needs_bound {
        match bound {
            Some(b) => Some(b),
            None => {
                let v = vars
                    .iter()
                    .find(|v| !matches!(v.keep, Keep::Recompute { .. }));
                let what = match v {
                    Some(v) => format!(
                        "variable `{}` lives across a barrier and is kept per thread",
                        v.name
                    ),
                    None if !walk.exchanges.is_empty() => {
                        "a warp exchange stores each thread's value".to_string()
                    }
                    None => {
                        "a thread may return before a barrier and is marked per thread".to_string()
                    }
                };
                return Err(refuse(
                    function.name_span,
                    format!("{what}, in an array as large as the child's block, whose size is not a constant"),
                    "launch the child with a constant block size, or give it `__launch_bounds__(N)`",
                ));
            }
        }
    } else {
        None
    };
    let inlined = walk.inlines.iter().map(|i| i.name_span).collect();
    let instances = walk.instance_tokens();
    Ok(Phased {
        inlined,
        uniform,
        steps,
        phases: walk.phases,
        shared: walk.shared,
        vars,
        done_flags,
        block_done,
        bound,
        dynamic_shared: walk.dynamic_bytes,
        barriers: walk.barriers.len(),
        atomics,
        votes: walk.votes,
        exchanges: walk.exchanges,
        guards: walk.guards,
        result_refs: results,
        instances,
    })
}

impl Phased {
    /// Does a run of the split serial version hold arrays of a block on the
    /// stack (threads' variables and return flags kept across barriers,
    /// shared memory)?
    pub fn holds_arrays(&self) -> bool {
        self.bound.is_some() || !self.shared.is_empty() || self.dynamic_shared.is_some()
    }
}

impl<'p> Walk<'p> {
    /// The scope of what the walk is reading now: the child's body, or the
    /// callee being run in place (its index in `inlines` once pushed).
    fn scope(&self) -> Scope {
        self.inlining.last().map(|&(_, k)| k)
    }

    /// The scope of phase `q`: the innermost call whose phases hold it
    /// (a call's index is later than its caller's).
    fn phase_scope(&self, q: usize) -> Scope {
        self.inlines.iter().rposition(|i| i.phases.contains(&q))
    }

    /// The scope of what stands in the regions `chain`.
    fn chain_scope(&self, chain: &[usize]) -> Scope {
        self.inlines
            .iter()
            .rposition(|i| chain.starts_with(&i.chain))
    }

    /// The scopes around `scope`, innermost first: `scope`, the scope its
    /// call stands in, ..., the child's body (`None`).
    fn scope_chain(&self, scope: Scope) -> Vec<Scope> {
        let mut out = vec![scope];
        let mut at = scope;
        while let Some(k) = at {
            at = self.inlines[k].caller;
            out.push(at);
        }
        out
    }

    fn text(&self, i: usize) -> &'p str {
        self.sig.get(i).map_or("", |t| t.text(self.view))
    }

    fn partner(&self, i: usize) -> usize {
        self.program.brackets.partner(i).unwrap_or(i)
    }

    /// The `(` of a call of the function named at `i`: right after the name,
    /// or after the explicit template arguments (`blockReduceSum<float>(`).
    fn call_open(&self, i: usize) -> Option<usize> {
        match self.sig.get(i + 1)?.text(self.view) {
            "(" => return Some(i + 1),
            "<" => {}
            _ => return None,
        }
        let mut depth = 0i32;
        let mut j = i + 1;
        while j < self.sig.len() {
            match self.text(j) {
                "<" => depth += 1,
                ">" => depth -= 1,
                ">>" => depth -= 2,
                "(" | "[" => j = self.partner(j),
                ";" | "{" | "}" | "&&" | "||" => return None,
                _ => {}
            }
            if depth <= 0 {
                return (depth == 0 && self.text(j + 1) == "(").then_some(j + 1);
            }
            j += 1;
        }
        None
    }

    /// The name of the function called with the `(` at `open`: the
    /// identifier before it, or before its explicit template arguments.
    fn callee_name_before(&self, open: usize) -> Option<usize> {
        let at = open.checked_sub(1)?;
        if self.text(at) != ">" {
            return Some(at);
        }
        let mut depth = 0i32;
        let mut j = at;
        loop {
            match self.text(j) {
                ">" => depth += 1,
                ">>" => depth += 2,
                "<" => depth -= 1,
                ")" | "]" => j = self.program.brackets.partner(j)?,
                ";" | "{" | "}" | "&&" | "||" => return None,
                _ => {}
            }
            if depth == 0 {
                let name = j.checked_sub(1)?;
                return (self.call_open(name) == Some(open)).then_some(name);
            }
            j = j.checked_sub(1)?;
        }
    }

    /// The end (exclusive) of the statement starting at `k`, before `limit`.
    fn statement_end(&self, k: usize, limit: usize) -> usize {
        let mut k = k;
        while k < limit && self.sig[k].kind == TokenKind::Directive {
            k += 1;
        }
        if k >= limit {
            return limit;
        }
        match self.text(k) {
            "{" => self.partner(k) + 1,
            "if" => {
                let after = self.statement_end(self.partner(k + 1) + 1, limit);
                let mut e = after;
                while e < limit && self.sig[e].kind == TokenKind::Directive {
                    e += 1;
                }
                if self.text(e) == "else" {
                    self.statement_end(e + 1, limit)
                } else {
                    after
                }
            }
            "for" | "while" | "switch" => self.statement_end(self.partner(k + 1) + 1, limit),
            "do" => {
                let body = self.statement_end(k + 1, limit);
                // `while ( ... ) ;`
                (self.partner(body + 1) + 2).min(limit)
            }
            _ => {
                let mut j = k;
                while j < limit && self.text(j) != ";" {
                    if matches!(self.text(j), "(" | "[" | "{") {
                        j = self.partner(j);
                    }
                    j += 1;
                }
                (j + 1).min(limit)
            }
        }
    }

    fn has_barrier(&self, from: usize, to: usize) -> bool {
        let (lo, hi) = (self.sig[from].start, self.sig[to - 1].end);
        (from..to).any(|i| {
            matches!(self.text(i), "__syncthreads" | "__syncwarp")
                || self.calls_waiting(i)
                || self.exchange_call_at(i).is_some()
                || (self.text(i) == "sync"
                    && i >= 2
                    && self.text(i - 1) == "."
                    && self
                        .warp_waits
                        .iter()
                        .any(|&(a, _)| a == self.sig[i - 2].start))
        }) || self.block_waits.iter().any(|&(a, _)| lo <= a && a < hi)
    }

    /// The warp exchange called at `sig[i]`, with its arguments' count in
    /// the intrinsic's range.
    fn exchange_call_at(&self, i: usize) -> Option<WarpOp> {
        if self.text(i + 1) != "(" {
            return None;
        }
        if self.tile_reduce_at(i).is_some() {
            return Some(WarpOp::TileReduce);
        }
        let close = self.partner(i + 1);
        let args = self.arguments(i + 1, close);
        if let Some(_size) = self.tile_member(i) {
            let op = WarpOp::of_member(self.text(i))?;
            return (args.len() == op.member_arguments()).then_some(op);
        }
        let op = WarpOp::of(self.text(i))?;
        if matches!(self.text(i.wrapping_sub(1)), "." | "->" | "::") {
            return None;
        }
        op.arguments().contains(&args.len()).then_some(op)
    }

    /// `cg::reduce(tile, value, op)` named at `i` (the `reduce`), `tile` one
    /// of `Walk::tiles`: the call's first token and the tile's size.
    /// Its result is the one the tile's lanes compute in the library's
    /// butterfly (`op(out, tile.shfl_xor(out, mask))` for masks from half
    /// the tile down), which for the integer operations that the hardware
    /// reduces (`__reduce_add_sync`, ...) is the same value.
    fn tile_reduce_at(&self, i: usize) -> Option<(usize, &str)> {
        if self.text(i) != "reduce" || self.text(i + 1) != "(" || i < 1 {
            return None;
        }
        let first = if self.text(i - 1) == "::" {
            (i >= 2 && matches!(self.text(i - 2), "cg" | "cooperative_groups")).then(|| i - 2)?
        } else if matches!(self.text(i - 1), "." | "->")
            || self.program.named.contains_key("reduce")
        {
            return None;
        } else {
            i
        };
        if first >= 1 && self.text(first - 1) == "::" {
            return None;
        }
        let close = self.partner(i + 1);
        let args = self.arguments(i + 1, close);
        let [(a, b), _, _] = args[..] else {
            return None;
        };
        if b != a + 1 {
            return None;
        }
        let size = self.tiles.get(self.text(a))?;
        Some((first, size.as_str()))
    }

    /// The size of the tile whose member is named at `i` (`tile.shfl_down`,
    /// `tile` one of `Walk::tiles`).
    fn tile_member(&self, i: usize) -> Option<&str> {
        if i < 2 || self.text(i - 1) != "." || self.sig[i - 2].kind != TokenKind::Ident {
            return None;
        }
        if i >= 3 && matches!(self.text(i - 3), "." | "->" | "::") {
            return None;
        }
        self.tiles.get(self.text(i - 2)).map(String::as_str)
    }

    /// A tile's size written `n`, as the split writes it: a literal or a
    /// constant of at most a warp (`16u`), or a template parameter of the
    /// child (`(unsigned)(tile_sz)`; a tile whose member functions
    /// exchange has at most 32 threads).
    fn tile_size(&self, n: &str) -> Option<String> {
        if let Some(v) = self.constants.value(n) {
            return warp_tile(v).then(|| format!("{v}u"));
        }
        let child = &self.program.functions[self.child];
        child
            .template_params
            .iter()
            .any(|p| p.name == n && !crate::template_instance::declares_type(&p.declaration))
            .then(|| format!("(unsigned)({n})"))
    }

    /// At `i`, `[cg::]tiled_partition<N>(block)` ending before `to`, `block`
    /// the block's group (a variable that holds it for certain, or made in
    /// place): the tile's size (a literal 1, 2, 4, 8, 16 or 32) and the
    /// index after it.
    fn tile_creation(&self, i: usize, to: usize) -> Option<(String, usize)> {
        let mut j = i;
        if matches!(self.text(j), "cg" | "cooperative_groups") && self.text(j + 1) == "::" {
            j += 2;
        }
        if self.text(j) != "tiled_partition"
            || self.text(j + 1) != "<"
            || self.text(j + 3) != ">"
            || self.text(j + 4) != "("
        {
            return None;
        }
        let size = self.tile_size(self.text(j + 2))?;
        let close = self.partner(j + 4);
        let arg = j + 5;
        let block = if close == arg + 1 {
            self.block_handles.contains(self.text(arg))
        } else {
            self.block_group_creation(arg, close) == Some(close)
        };
        (block && close < to).then_some((size, close + 1))
    }

    /// Record the tiles the body `open..close` makes: `[const]
    /// [cg::]thread_block_tile<N> name = <tile_creation>;` or `auto name =
    /// <tile_creation>;`. A name made twice with different sizes is left out.
    fn collect_tiles(&mut self, open: usize, close: usize) {
        let mut found: Vec<(String, String)> = Vec::new();
        for i in open..close {
            if self.text(i) != "=" || self.sig[i.saturating_sub(1)].kind != TokenKind::Ident {
                continue;
            }
            let Some((size, after)) = self.tile_creation(i + 1, close) else {
                continue;
            };
            if self.text(after) != ";" {
                continue;
            }
            let name = i - 1;
            let typed = match self.text(name - 1) {
                "auto" => true,
                ">" => {
                    name >= 4
                        && self.text(name - 4) == "thread_block_tile"
                        && self.text(name - 3) == "<"
                        && self.tile_size(self.text(name - 2)).as_ref() == Some(&size)
                }
                _ => false,
            };
            if typed {
                found.push((self.text(name).to_string(), size));
            }
        }
        for (name, size) in found {
            match self.tiles.get(&name) {
                Some(s) if *s != size => {
                    self.tiles.remove(&name);
                }
                _ => {
                    self.tiles.insert(name, size);
                }
            }
        }
    }

    /// At `i`, a query of one of the tiles (`tile.thread_rank()`,
    /// `tile.size()`, `Walk::tiles`): what the split writes instead, with
    /// the builtins, whether every thread of the block reads it alike, and
    /// the index after it.
    fn tile_query(&self, i: usize) -> Option<(String, bool, usize)> {
        let size = self.tiles.get(self.text(i))?;
        if self.text(i + 1) != "."
            || self.text(i + 3) != "("
            || self.text(i + 4) != ")"
            || (i > 0 && matches!(self.text(i - 1), "." | "->" | "::"))
        {
            return None;
        }
        let rank = "(dpopt_threadIdx.x + dpopt_blockDim.x * (dpopt_threadIdx.y + dpopt_blockDim.y * dpopt_threadIdx.z))";
        let threads = "(dpopt_blockDim.x * dpopt_blockDim.y * dpopt_blockDim.z)";
        let (text, uniform) = match self.text(i + 2) {
            "thread_rank" => (format!("((unsigned){rank} % {size})"), false),
            "meta_group_rank" => (format!("((unsigned){rank} / {size})"), false),
            "meta_group_size" => (
                format!("(((unsigned){threads} + {size} - 1u) / {size})"),
                true,
            ),
            "size" | "num_threads" => (size.clone(), true),
            _ => return None,
        };
        Some((text, uniform, i + 5))
    }

    /// The arguments of the parentheses `open..=close` (significant-token
    /// ranges, split at their top-level commas).
    fn arguments(&self, open: usize, close: usize) -> Vec<(usize, usize)> {
        let mut args = Vec::new();
        if open + 1 >= close {
            return args;
        }
        let mut from = open + 1;
        let mut i = from;
        while i <= close {
            if i == close || self.text(i) == "," {
                args.push((from, i));
                from = i + 1;
            } else if matches!(self.text(i), "(" | "[" | "{") {
                i = self.partner(i);
            }
            i += 1;
        }
        args
    }

    /// Is the statement `sig[k..end)` `__syncwarp();` or `__syncwarp(mask);`
    /// with a mask that neither assigns nor calls? Where every thread of
    /// the block reaches it together, a barrier of the block does what it
    /// asks.
    fn is_warp_sync(&self, k: usize, end: usize) -> bool {
        // a tile's `tile.sync();`, which the hazard model sees as a warp's
        if end == k + 6
            && self.sig[k].kind == TokenKind::Ident
            && self.text(k + 1) == "."
            && self.text(k + 2) == "sync"
            && self.text(k + 3) == "("
            && self.text(k + 4) == ")"
            && self.text(k + 5) == ";"
            && self
                .warp_waits
                .contains(&(self.sig[k].start, self.sig[k + 4].end))
        {
            return true;
        }
        if self.text(k) != "__syncwarp" || self.text(k + 1) != "(" {
            return false;
        }
        let close = self.partner(k + 1);
        close + 2 == end
            && self.text(close + 1) == ";"
            && !(k + 2..close).any(|i| self.writes(i) || self.text(i + 1) == "(")
    }

    /// Is `f` a device function that waits at barriers or shares memory
    /// (one the split may run in place)?
    fn waits(&self, f: FunctionId) -> bool {
        self.program.functions[f].space.device
            && self
                .hazards
                .of(f)
                .first_of(&[Hazard::Block, Hazard::Shared, Hazard::Warp], |_| true)
                .is_some()
    }

    /// Is `sig[i]` the name of a call of such a function?
    fn calls_waiting(&self, i: usize) -> bool {
        self.sig[i].kind == TokenKind::Ident
            && self.call_open(i).is_some()
            && !matches!(self.text(i.wrapping_sub(1)), "." | "->")
            && self
                .program
                .named
                .get(self.text(i))
                .is_some_and(|fs| fs.iter().any(|&f| self.waits(f)))
    }

    /// Is the statement `sig[k..end)` a barrier of the whole block:
    /// `__syncthreads();`, or the sync of a cooperative-groups block group
    /// (`cta.sync();`, `cg::sync(cta);`, `cg::this_thread_block().sync();`,
    /// where `cta` is a variable the hazard model knows as the block's
    /// group)?
    fn is_barrier(&self, k: usize, end: usize) -> bool {
        if self.text(k) == "__syncthreads"
            && self.text(k + 1) == "("
            && self.text(k + 2) == ")"
            && self.text(k + 3) == ";"
            && end == k + 4
        {
            return true;
        }
        if end < k + 2 || self.text(end - 1) != ";" {
            return false;
        }
        let (start, stop) = (self.sig[k].start, self.sig[end - 2].end);
        if !self.block_waits.contains(&(start, stop)) {
            return false;
        }
        let text: String = (k..end - 1).map(|i| self.text(i)).collect();
        let group = |name: &str| self.block_groups.contains(name);
        if let Some(object) = text.strip_suffix(".sync()") {
            return object.ends_with("this_thread_block()") || group(object);
        }
        for prefix in ["cg::sync(", "cooperative_groups::sync(", "sync("] {
            if let Some(arg) = text.strip_prefix(prefix).and_then(|t| t.strip_suffix(')')) {
                return arg.ends_with("this_thread_block()") || group(arg);
            }
        }
        false
    }

    fn same_conditions(&self, offset: usize) -> bool {
        self.program.condition_at(offset) == self.conditions
    }

    /// The steps of the region between the braces `open` and `close`.
    fn region(&mut self, open: usize, close: usize, chain: &[usize]) -> Result<Vec<Step>, Refusal> {
        self.region_in(
            open + 1,
            close,
            self.sig[open].end,
            self.sig[close].start,
            chain,
        )
    }

    /// The steps of the statements `sig[first..end)`, the phases' bytes
    /// running from offset `start` to `stop` (a braced body's inside, or an
    /// unbraced body's statement).
    fn region_in(
        &mut self,
        first: usize,
        close: usize,
        start: usize,
        stop: usize,
        chain: &[usize],
    ) -> Result<Vec<Step>, Refusal> {
        let mut steps = Vec::new();
        let mut phase_start = start;
        let mut statements: Vec<(usize, usize)> = Vec::new();
        // `#pragma unroll` and the like right before a construct: written
        // with its head, once per block
        let mut pragmas: Option<usize> = None;
        let mut k = first;
        while k < close {
            if self.sig[k].kind == TokenKind::Directive {
                let pragma = self
                    .text(k)
                    .trim_start_matches('#')
                    .trim_start()
                    .starts_with("pragma");
                pragmas = match pragmas {
                    Some(p) if pragma => Some(p),
                    None if pragma => Some(k),
                    _ => None,
                };
                k += 1;
                continue;
            }
            let lead = pragmas.take();
            let end = self.statement_end(k, close);
            let warp_sync = self.is_warp_sync(k, end);
            let barrier = warp_sync || self.is_barrier(k, end);
            let vote = if barrier {
                None
            } else {
                self.statement_vote(k, end)
            };
            let exchange = if barrier || vote.is_some() {
                None
            } else {
                self.statement_exchange(k, end)
            };
            // A compound statement holding a barrier runs once per block;
            // a barrier inside any other statement is reported below as one
            // the split does not take.
            let construct = !barrier
                && vote.is_none()
                && exchange.is_none()
                && matches!(self.text(k), "for" | "while" | "if" | "{" | "do" | "switch")
                && self.has_barrier(k, end);
            // an `if` that exchanges within warps and waits at no barrier of
            // the block: each thread's condition guards the phases of its body
            let guard = construct && self.text(k) == "if" && !self.block_barrier_in(k, end);
            // A statement's vote or exchange: the phase before, the phase
            // that folds (a vote) or stores (an exchange) each thread's
            // argument, then the statement in the next phase, reading the
            // fold or its warp's values where it made the call.
            let point = match (vote, exchange) {
                (Some((name, op)), _) => Some((name, Point::Vote(op))),
                (None, Some((name, op))) => Some((name, Point::Exchange(op))),
                (None, None) => None,
            };
            if let Some((name, point)) = point {
                if !self.same_conditions(self.sig[k].start) {
                    let what = match point {
                        Point::Vote(_) => "a block vote",
                        Point::Exchange(_) => "a warp exchange",
                    };
                    return Err(refuse(
                        self.sig[name].span(),
                        format!("{what} stands inside an `#if` group of the body"),
                        "keep barriers and warp exchanges outside `#if` groups, or remove `threshold`/`floor`",
                    ));
                }
                steps.push(Step::Phase(self.phase(
                    phase_start,
                    self.sig[k].start,
                    std::mem::take(&mut statements),
                    chain,
                )));
                let folds = match point {
                    Point::Vote(op) => self.vote_phase(name, op, chain)?,
                    Point::Exchange(op) => self.exchange_phase(name, op, chain)?,
                };
                steps.push(Step::Phase(folds));
                self.shared_declaration(k, end)?;
                statements.push((k, end));
                phase_start = self.sig[k].start;
            } else if guard {
                steps.push(Step::Phase(self.phase(
                    phase_start,
                    self.sig[k].start,
                    std::mem::take(&mut statements),
                    chain,
                )));
                steps.extend(self.guard(k, end, chain)?);
                phase_start = self.sig[end - 1].end;
            } else if barrier || construct {
                let at = self.sig[k].start;
                if !self.same_conditions(at) || !self.same_conditions(self.sig[end - 1].end) {
                    return Err(refuse(
                        self.sig[k].span(),
                        "a barrier stands inside an `#if` group of the body",
                        "keep barriers outside `#if` groups, or remove `threshold`/`floor`",
                    ));
                }
                // the pragmas before a construct go with its head
                let head_start = match lead {
                    Some(p) if construct => self.sig[p].start,
                    _ => at,
                };
                steps.push(Step::Phase(self.phase(
                    phase_start,
                    head_start,
                    std::mem::take(&mut statements),
                    chain,
                )));
                if barrier {
                    self.barriers.insert(at);
                    if warp_sync {
                        self.warp_known.insert(at);
                    }
                } else {
                    let mut made = self.construct(k, end, chain)?;
                    for step in &mut made {
                        if let Step::Construct { head, .. } = step {
                            if head.start() == at {
                                *head = Span::from(head_start..head.end());
                            }
                        }
                    }
                    steps.extend(made);
                }
                phase_start = self.sig[end - 1].end;
            } else if let Some(cond) = self.leave_statement(k, end, chain) {
                // The phase before, then the statement once per block; its
                // condition is checked as a head.
                steps.push(Step::Phase(self.phase(
                    phase_start,
                    self.sig[k].start,
                    std::mem::take(&mut statements),
                    chain,
                )));
                if let Some((from, to)) = cond {
                    self.heads.push(Head {
                        from,
                        to,
                        chain: chain.to_vec(),
                        loop_var: None,
                        body: chain.to_vec(),
                    });
                }
                steps.push(Step::Leave(Span::from(
                    self.sig[k].start..self.sig[end - 1].end,
                )));
                phase_start = self.sig[end - 1].end;
            } else if let Some((at, callee)) = self.call_to_split(k, end) {
                // The phase before the call first: phases are numbered in
                // the order they run.
                steps.push(Step::Phase(self.phase(
                    phase_start,
                    self.sig[k].start,
                    std::mem::take(&mut statements),
                    chain,
                )));
                steps.push(self.inline_call(k, end, chain, at, callee)?);
                phase_start = self.sig[end - 1].end;
            } else {
                self.shared_declaration(k, end)?;
                statements.push((k, end));
            }
            k = end;
        }
        steps.push(Step::Phase(self.phase(
            phase_start,
            stop,
            statements,
            chain,
        )));
        // Phases without a statement are left out (but the first of a
        // callee whose assigned parameters it binds).
        steps.retain(|s| match s {
            Step::Phase(p) => {
                !self.phase_tokens[*p].is_empty()
                    || self.has_directive(self.phases[*p].range)
                    || self.keep_phase == Some(*p)
            }
            _ => true,
        });
        Ok(steps)
    }

    /// Does the statement `sig[k..end)` end with a call of a device function
    /// of the file that waits at barriers or shares memory, after nothing or
    /// an `=` (`f(a);`, `v = f(a);`, `T v = f(a);`)? The call's name and the
    /// callee; `inline_call` checks the rest.
    fn call_to_split(&self, k: usize, end: usize) -> Option<(usize, FunctionId)> {
        if end < k + 4 || self.text(end - 1) != ";" {
            return None;
        }
        // The call: `name ( ... )` ending the statement.
        let close_paren = end - 2;
        if self.text(close_paren) != ")" {
            return None;
        }
        let open_paren = self.partner(close_paren);
        if open_paren == close_paren || open_paren < k + 1 {
            return None;
        }
        let at = self.callee_name_before(open_paren)?;
        if at < k || self.sig[at].kind != TokenKind::Ident || (at > k && self.text(at - 1) != "=") {
            return None;
        }
        let name = self.text(at);
        let candidates = self.program.named.get(name)?;
        let callees: Vec<FunctionId> = candidates
            .iter()
            .copied()
            .filter(|&f| self.waits(f))
            .collect();
        let [callee] = callees[..] else {
            return None;
        };
        Some((at, callee))
    }

    /// The call statement `sig[k..end)` of `callee` (its name at `at`): the
    /// callee's body split in place.
    fn inline_call(
        &mut self,
        k: usize,
        end: usize,
        chain: &[usize],
        at: usize,
        callee: FunctionId,
    ) -> Result<Step, Refusal> {
        let name = self.text(at);
        let (open_paren, close_paren) = (self.call_open(at).unwrap_or(at + 1), end - 2);
        let span = self.sig[at].span();
        let function = &self.program.functions[callee];
        let not_here = |why: String| {
            Err(refuse(
                span,
                why,
                "write the callee's barriers and `__shared__` declarations into the child's body, or remove `threshold`/`floor`",
            ))
        };
        if callee == self.child {
            return not_here(format!("`{name}` is the child itself"));
        }
        // A callee that calls itself, directly or through others, has no
        // body to run in place.
        if let Some(first) = self
            .inlining
            .iter()
            .position(|&(_, j)| self.inlines[j].callee == callee)
        {
            let cycle: Vec<Span> = self.inlining[first..].iter().map(|&(s, _)| s).collect();
            let path: Vec<String> = cycle
                .iter()
                .map(|s| format!("`{}`", &self.program.view[s.range()]))
                .chain(std::iter::once(format!("`{name}`")))
                .collect();
            let mut r = refuse(
                span,
                format!("`{name}` waits or shares memory and calls itself ({}); the split runs in place only callees that do not recurse", path.join(" calls ")),
                "write the recursion as a loop, or remove `threshold`/`floor`",
            );
            for s in cycle {
                r.notes
                    .push((s, format!("calls `{}`", &self.program.view[s.range()])));
            }
            return Err(r);
        }
        // What the call statement does with the result.
        let (target, declared) = if at == k {
            (None, None)
        } else if at == k + 2 && self.sig[k].kind == TokenKind::Ident {
            (Some(self.text(k).to_string()), None)
        } else {
            let decls = declarators(self.sig, self.view, k, end);
            match decls.as_deref() {
                Some([d]) if d.init && !d.array && d.at + 2 == at => {
                    let storage = declarator_type(self.sig, self.view, k, d, d)
                        .map(|t| self.instantiate_at(k, &t))
                        .ok_or_else(|| {
                        refuse(
                            self.sig[d.at].span(),
                            format!("`{}` takes the result of `{name}`, whose body the split runs in place, so it is kept per thread, which needs a named type that is not a reference", d.name),
                            format!("give `{}` its type", d.name),
                        )
                    })?;
                    (
                        None,
                        Some((d.name.clone(), storage, self.sig[d.at].span())),
                    )
                }
                _ => return not_here(format!("the call of `{name}` is not a statement of its own (`{name}(...);`, `v = {name}(...);` or `T v = {name}(...);`)")),
            }
        };
        // The arguments: evaluated again in each of the callee's phases.
        let mut args = Vec::new();
        if open_paren + 1 < close_paren {
            let mut from = open_paren + 1;
            let mut i = from;
            while i <= close_paren {
                if i == close_paren || self.text(i) == "," {
                    args.push((from, i));
                    from = i + 1;
                } else if matches!(self.text(i), "(" | "[" | "{") {
                    i = self.partner(i);
                }
                i += 1;
            }
        }
        if args.len() != function.params.len() {
            return not_here(format!(
                "the call of `{name}` leaves parameters to their default arguments"
            ));
        }
        for &(from, to) in &args {
            for i in from..to {
                let t = self.text(i);
                let side_effect = crate::token::MODIFYING_OPERATORS.contains(&t)
                    || (self.sig[i].kind == TokenKind::Ident
                        && self.text(i + 1) == "("
                        && !UNIFORM_CALLS.contains(&t)
                        && !CAST_WORDS.contains(&t));
                if side_effect || from == to {
                    return Err(refuse(
                        self.sig[i.min(to.saturating_sub(1)).max(from)].span(),
                        format!("an argument of `{name}` assigns or calls a function; the split evaluates it again in each of the callee's phases"),
                        "compute the argument into a variable before the call",
                    ));
                }
            }
        }
        // A template: its parameters' names in its body and declarations
        // written as the arguments it runs with.
        if function.template_header.is_some() {
            let instance = self.instance(at, open_paren, callee, &args, chain)?;
            self.instances.insert(callee, instance);
        }
        let mut params = Vec::new();
        let mut bind_args = Vec::new();
        let mut assigned = Vec::new();
        let mut groups = Vec::new();
        let mut binds = Vec::new();
        let callee_groups = self.hazards.definite_block_groups(callee);
        let (open, close) = (function.body_tokens.start, function.body_tokens.end);
        for (p, &(from, to)) in function.params.iter().zip(&args) {
            let Some(pname) = p.name.clone() else {
                continue;
            };
            if p.declaration.contains('[') || p.declaration.contains('(') {
                return not_here(format!(
                    "parameter `{pname}` of `{name}` is an array or a function"
                ));
            }
            let declaration = self.instantiate(callee, &p.declaration);
            // a tile of the block passed for a parameter of its tile type
            // (the CUDA guide's `reduce_sum_tile_shfl<32>(tile32, v)`)
            if let (Some(size), true) = (
                tile_parameter(&declaration, &pname).and_then(|n| self.tile_size(n)),
                to == from + 1,
            ) {
                if self.tiles.get(self.text(from)) == Some(&size) {
                    self.tiles.insert(pname.clone(), size);
                }
            }
            let written = (open..close).any(|i| self.text(i) == pname && self.writes(i));
            if written && param_storage(&declaration, &pname).is_none() {
                return not_here(format!("`{name}` assigns its parameter `{pname}`, which the split would keep per thread, but it is a reference or has no named type"));
            }
            // the block's group passed for a group parameter taken by value
            // or by `const &`
            let group = !written
                && callee_groups.contains(&pname)
                && (!p.declaration.contains('&') || p.declaration.contains("const"))
                && ((to == from + 1 && self.block_handles.contains(self.text(from)))
                    || self.block_group_creation(from, to + 1) == Some(to));
            params.push(pname.clone());
            bind_args.push((from, to));
            assigned.push(written);
            groups.push(group);
            binds.push(Bind {
                declaration,
                name: pname,
                arg: Span::from(self.sig[from].start..self.sig[to - 1].end),
                block: false,
                assigned: written,
                group,
            });
        }
        // The callee's own barriers and block groups.
        let (own, _) = self.hazards.own(callee);
        self.block_waits.extend(
            own.iter()
                .filter(|f| f.hazard == Hazard::Block)
                .map(|f| (f.span.start(), f.span.end())),
        );
        self.warp_waits.extend(
            own.iter()
                .filter(|f| f.hazard == Hazard::Warp)
                .map(|f| (f.span.start(), f.span.end())),
        );
        self.block_groups.extend(self.hazards.block_groups(callee));
        self.block_handles
            .extend(self.hazards.definite_block_groups(callee));
        // A position the split does not replace (a tile's rank, a group
        // that may be a tile, `%tid`): the parent thread's own.
        self.collect_tiles(open, close);
        if let Some(f) = own.iter().find(|f| {
            matches!(f.hazard, Hazard::ThreadPosition | Hazard::BlockPosition)
                && self
                    .tile_query(self.program.sig_index_at(f.span.start()))
                    .is_none()
        }) {
            return not_here(format!(
                "`{name}` reads `{}`, a position the split does not replace (only the block group's queries and the builtins)",
                f.construct
            ));
        }
        let mut inner = chain.to_vec();
        inner.push(self.regions);
        self.inline_regions.insert(self.regions);
        self.regions += 1;
        let first_phase = self.phases.len();
        // an assigned parameter is bound in the callee's first phase, kept
        // where the body starts with a construct
        let keep_phase = std::mem::replace(
            &mut self.keep_phase,
            assigned.contains(&true).then_some(first_phase),
        );
        // The call's index, before those of the calls its callee makes.
        let index = self.inlines.len();
        self.inlines.push(Inline {
            callee,
            name_span: span,
            phases: first_phase..first_phase,
            params,
            bind_args,
            assigned: assigned.clone(),
            groups,
            chain: inner.clone(),
            caller_chain: chain.to_vec(),
            caller: self.scope(),
            ret_phase: None,
            target: target.clone(),
            declared: declared.clone(),
        });
        self.inlining.push((span, index));
        // the callee's own `#if` groups
        let conditions = std::mem::replace(
            &mut self.conditions,
            self.program.condition_at(function.body.start()),
        );
        let body = self.region(open, close, &inner);
        self.conditions = conditions;
        self.inlining.pop();
        self.keep_phase = keep_phase;
        let body = body?;
        let phases = first_phase..self.phases.len();
        // An assigned parameter takes its argument in the callee's first
        // phase, which every thread that makes the call runs.
        if assigned.contains(&true)
            && !matches!(body.first(), Some(Step::Phase(q)) if *q == first_phase)
        {
            return not_here(format!("`{name}` assigns a parameter and starts with a construct that waits at a barrier; the split binds such a parameter in the callee's first phase"));
        }
        // One `return`, the callee's last statement, ending its last phase.
        let last_statement = match body.last() {
            Some(Step::Phase(q)) => self.phase_tokens[*q].last().map(|&(s, e)| (*q, s, e)),
            _ => None,
        };
        let mut ret_phase = None;
        if let Some((q, s, _)) = last_statement.filter(|&(_, s, _)| self.text(s) == "return") {
            let keyword = self.sig[s].span();
            let valued = self.text(s + 1) != ";";
            let with = match (&target, &declared, valued) {
                (_, _, false) => String::new(),
                (Some(v), _, true) | (_, Some((v, _, _)), true) => format!("{v} ="),
                (None, None, true) => "(void)".to_string(),
            };
            self.phases[q]
                .returns
                .retain(|r| r.start() != keyword.start());
            self.phases[q].result = Some((keyword, with));
            ret_phase = Some(q);
        } else if target.is_some() || declared.is_some() {
            return not_here(format!("`{name}` does not end with `return value;`, which the split takes as the call's result"));
        }
        if let Some(r) = phases
            .clone()
            .find_map(|q| self.phases[q].returns.first().copied())
        {
            return Err(refuse(
                r,
                format!("a `return` of `{name}` before its end; the split runs the callee's body in place and takes only a final `return`"),
                "end the callee with its only `return`",
            ));
        }
        self.inlines[index].phases = phases;
        self.inlines[index].ret_phase = ret_phase;
        Ok(Step::Call {
            scope: index,
            callee: name.to_string(),
            body_span: function.body,
            binds,
            body,
        })
    }

    fn has_directive(&self, range: Span) -> bool {
        self.program
            .sig_in(range)
            .iter()
            .any(|t| t.kind == TokenKind::Directive)
    }

    fn phase(
        &mut self,
        start: usize,
        end: usize,
        statements: Vec<(usize, usize)>,
        chain: &[usize],
    ) -> usize {
        let id = self.phases.len();
        let range = Span::from(start..end);
        let mut returns = Vec::new();
        for &(s, e) in &statements {
            let mut i = s;
            while i < e {
                if self.text(i) == "return" {
                    let mut j = i;
                    while j < e && self.text(j) != ";" {
                        if matches!(self.text(j), "(" | "[" | "{") {
                            j = self.partner(j);
                        }
                        j += 1;
                    }
                    returns.push(Span::from(self.sig[i].start..self.sig[j.min(e - 1)].end));
                    i = j;
                }
                i += 1;
            }
        }
        for &(s, e) in &statements {
            self.declarations_in(id, chain, s, e);
        }
        self.phases.push(Phase {
            range,
            returns,
            last: false,
            result: None,
            vote: None,
            exchange: None,
            guard: None,
        });
        self.phase_regions.push(chain.to_vec());
        self.phase_tokens.push(statements);
        id
    }

    fn declarations_in(&mut self, phase: usize, chain: &[usize], s: usize, e: usize) {
        if let Some(decls) = declarators(self.sig, self.view, s, e) {
            self.declared_at.extend(decls.iter().map(|d| d.at));
            self.declarations.push((phase, chain.to_vec(), s, e));
        }
    }

    /// The body of a construct starting at `sig[at]`, before `limit`: a
    /// braced one's `{` and `}`, or an unbraced statement's first token and
    /// its last (the `;`).
    fn body_tokens(&self, at: usize, limit: usize) -> (usize, usize) {
        if self.text(at) == "{" {
            (at, self.partner(at))
        } else {
            (at, self.statement_end(at, limit).saturating_sub(1).max(at))
        }
    }

    /// The steps of a body `body_tokens` gave: the region between braces,
    /// or the unbraced statement, which the serial version writes in
    /// braces of its own.
    fn body(&mut self, first: usize, last: usize, chain: &[usize]) -> Result<Vec<Step>, Refusal> {
        if self.text(first) == "{" {
            self.region(first, last, chain)
        } else {
            let (start, stop) = (self.sig[first - 1].end, self.sig[last].end);
            self.region_in(first, last + 1, start, stop, chain)
        }
    }

    /// Does `sig[from..to)` wait at a barrier of the whole block (a
    /// `__syncthreads`, a block group's sync, a block vote, a call of a
    /// function that does)?
    fn block_barrier_in(&self, from: usize, to: usize) -> bool {
        let (lo, hi) = (self.sig[from].start, self.sig[to - 1].end);
        (from..to).any(|i| {
            self.text(i) == "__syncthreads"
                || self.vote_call_at(i).is_some()
                || (self.calls_waiting(i)
                    && self.program.named.get(self.text(i)).is_some_and(|fs| {
                        fs.iter().any(|&f| {
                            self.hazards
                                .of(f)
                                .first_of(&[Hazard::Block], |_| true)
                                .is_some()
                        })
                    }))
        }) || self.block_waits.iter().any(|&(a, _)| lo <= a && a < hi)
    }

    /// The `if` statement `sig[k..end)` as a guard (`Step::Guard`): the
    /// phase that stores each thread's condition, then the guarded body
    /// (and `else` body).
    fn guard(&mut self, k: usize, end: usize, chain: &[usize]) -> Result<Vec<Step>, Refusal> {
        let paren = k + 1;
        let close_paren = self.partner(paren);
        if let Some(i) = (paren + 1..close_paren).find(|&i| {
            self.exchange_call_at(i).is_some()
                || self.calls_waiting(i)
                || self.text(i) == "__syncwarp"
        }) {
            return Err(refuse(
                self.sig[i].span(),
                "a warp exchange in the condition of an `if` whose body exchanges too",
                "compute the condition in a statement before the `if`",
            ));
        }
        let index = self.guards;
        self.guards += 1;
        let id = self.value_phase(paren + 1, close_paren, chain, |p| p.guard = Some(index));
        let branch = |w: &mut Self, at: usize| -> Result<(Vec<Step>, usize), Refusal> {
            let (first, last) = w.body_tokens(at, end);
            let mut inner = chain.to_vec();
            let region = w.regions;
            w.regions += 1;
            w.guard_regions.insert(region);
            inner.push(region);
            Ok((w.body(first, last, &inner)?, last))
        };
        let (body, last) = branch(self, close_paren + 1)?;
        let mut e = last + 1;
        while e < end && self.sig[e].kind == TokenKind::Directive {
            e += 1;
        }
        let otherwise = if e < end && self.text(e) == "else" {
            Some(branch(self, e + 1)?.0)
        } else {
            None
        };
        Ok(vec![
            Step::Phase(id),
            Step::Guard {
                guard: index,
                body,
                otherwise,
            },
        ])
    }

    /// A construct holding barriers: run once per block; a block vote in
    /// its head (`Phased::votes`) is a phase of its own before the
    /// construct (`if`, `while`) and at the end of its body (`while`,
    /// `do`).
    fn construct(&mut self, k: usize, end: usize, chain: &[usize]) -> Result<Vec<Step>, Refusal> {
        let word = self.text(k);
        let braced = |w: &Self, at: usize| -> Result<usize, Refusal> {
            if w.text(at) == "{" {
                Ok(at)
            } else {
                Err(refuse(
                    w.sig[at.min(w.sig.len() - 1)].span(),
                    "a construct holding a barrier has a body without braces",
                    "put the body in braces `{ ... }`",
                ))
            }
        };
        let mut inner = chain.to_vec();
        let region = self.regions;
        self.regions += 1;
        inner.push(region);
        match word {
            "{" => {
                let body = self.region(k, self.partner(k), &inner)?;
                Ok(vec![Step::Construct {
                    head: self.sig[k].span(),
                    body,
                    otherwise: None,
                    tail: None,
                }])
            }
            "do" => {
                // `do { ... } while (condition);`, the condition every
                // thread computes alike
                let body_open = braced(self, k + 1)?;
                let body_close = self.partner(body_open);
                let paren = body_close + 2;
                if self.text(body_close + 1) != "while" || self.text(paren) != "(" {
                    return Err(refuse(
                        self.sig[k].span(),
                        "a `do` loop holding a barrier without `while (...);` after its braced body",
                        "write the loop as `do { ... } while (condition);`",
                    ));
                }
                let close_paren = self.partner(paren);
                self.heads.push(Head {
                    from: paren + 1,
                    to: close_paren,
                    chain: chain.to_vec(),
                    loop_var: None,
                    body: inner.clone(),
                });
                let vote = self.vote_in(paren + 1, close_paren)?;
                self.loop_regions.insert(region, vote.is_none());
                let mut body = self.region(body_open, body_close, &inner)?;
                if let Some((name, op)) = vote {
                    body.push(Step::Phase(self.vote_phase(name, op, &inner)?));
                }
                Ok(vec![Step::Construct {
                    head: Span::from(self.sig[k].start..self.sig[body_open].end),
                    body,
                    otherwise: None,
                    tail: Some(Span::from(
                        self.sig[body_close + 1].start..self.sig[(close_paren + 1).min(end - 1)].end,
                    )),
                }])
            }
            "for" | "while" | "if" => {
                let paren = k + 1;
                let close_paren = self.partner(paren);
                let head = Span::from(self.sig[k].start..self.sig[close_paren].end);
                let loop_var = if word == "for" {
                    self.for_variable(paren + 1, close_paren)
                } else {
                    None
                };
                self.heads.push(Head {
                    from: paren + 1,
                    to: close_paren,
                    chain: chain.to_vec(),
                    loop_var: loop_var.clone(),
                    body: inner.clone(),
                });
                let vote = self.vote_in(paren + 1, close_paren)?;
                if let (Some((name, _)), "for") = (vote, word) {
                    return Err(refuse(
                        self.sig[name].span(),
                        "a block vote in the head of a `for` loop holding a barrier",
                        "write the loop as `while (...) { ... }` or `do { ... } while (...);`",
                    ));
                }
                // Before the construct: the vote its head reads first.
                let before = match vote {
                    Some((name, op)) => Some(self.vote_phase(name, op, chain)?),
                    None => None,
                };
                let (body_open, body_close) = self.body_tokens(close_paren + 1, end);
                if let Some(v) = &loop_var {
                    for i in body_open..body_close {
                        if self.text(i) == v && self.writes(i) {
                            return Err(refuse(
                                self.sig[i].span(),
                                format!("the barrier loop's variable `{v}` is assigned in its body, so the threads may not agree on it"),
                                "assign the loop variable in the loop's head only",
                            ));
                        }
                    }
                }
                if word != "if" {
                    self.loop_regions
                        .insert(region, word == "for" || vote.is_none());
                }
                let mut body = self.body(body_open, body_close, &inner)?;
                if let (Some((name, op)), "while") = (vote, word) {
                    // and again at the end of each round, for the next test
                    body.push(Step::Phase(self.vote_phase(name, op, &inner)?));
                }
                let mut otherwise = None;
                let mut e = body_close + 1;
                while e < end && self.sig[e].kind == TokenKind::Directive {
                    e += 1;
                }
                if word == "if" && e < end && self.text(e) == "else" {
                    let (else_open, else_close) = self.body_tokens(e + 1, end);
                    let mut other = chain.to_vec();
                    let r = self.regions;
                    self.regions += 1;
                    other.push(r);
                    let steps = self.body(else_open, else_close, &other)?;
                    let word_end = if self.text(else_open) == "{" { else_open } else { e };
                    otherwise = Some((Span::from(self.sig[e].start..self.sig[word_end].end), steps));
                }
                Ok(before
                    .map(Step::Phase)
                    .into_iter()
                    .chain(std::iter::once(Step::Construct {
                        head: Span::from(
                            head.start()
                                ..if self.text(body_open) == "{" {
                                    self.sig[body_open].end
                                } else {
                                    head.end()
                                },
                        ),
                        body,
                        otherwise,
                        tail: None,
                    }))
                    .collect())
            }
            _ => Err(refuse(
                self.sig[k].span(),
                format!("a barrier stands inside a `{word}` statement, which the split cannot run once per block"),
                "put barriers at the top of the body or of a braced `for`, `while` or `if` body",
            )),
        }
    }

    /// The one block vote of a statement that holds no other barrier and
    /// runs it once (`int any = __syncthreads_or(bad);`, `flags |=
    /// __syncthreads_count(p) << 1;`, or in an `if`'s head: `if
    /// (!__syncthreads_or(x)) return;`): its name's index and operation.
    /// Not in loops, `switch` or braces, whose votes the constructs take.
    fn statement_vote(&self, k: usize, end: usize) -> Option<(usize, VoteOp)> {
        if matches!(
            self.text(k),
            "for" | "while" | "do" | "switch" | "{" | "return" | "else"
        ) {
            return None;
        }
        let votes: Vec<(usize, VoteOp)> = (k..end)
            .filter_map(|i| Some((i, self.vote_call_at(i)?)))
            .collect();
        let [(name, op)] = votes.as_slice() else {
            return None;
        };
        let (name, op) = (*name, *op);
        let close = self.partner(name + 1);
        if self.text(k) == "if" && !(k + 1 < name && close < self.partner(k + 1)) {
            return None; // the vote is in the body: the construct's
        }
        // no other barrier in the statement, and no loop around the vote
        let (vote_lo, vote_hi) = (self.sig[name].start, self.sig[close].end);
        let other_wait = (k..end).any(|i| {
            (i < name || i > close)
                && (self.text(i) == "__syncthreads"
                    || self.calls_waiting(i)
                    || matches!(self.text(i), "for" | "while" | "do"))
        }) || self.block_waits.iter().any(|&(a, _)| {
            self.sig[k].start <= a && a < self.sig[end - 1].end && !(vote_lo <= a && a < vote_hi)
        });
        (!other_wait).then_some((name, op))
    }

    /// The one warp exchange of a statement that holds no other barrier,
    /// vote or exchange and runs it once (`val += __shfl_down_sync(m, val,
    /// d);`, `unsigned b = __ballot_sync(m, p);`, or in an `if`'s head whose
    /// body waits at nothing): its name's index and operation. Not in
    /// loops, `switch` or braces, which hold it as constructs.
    fn statement_exchange(&self, k: usize, end: usize) -> Option<(usize, WarpOp)> {
        if matches!(
            self.text(k),
            "for" | "while" | "do" | "switch" | "{" | "return" | "else"
        ) {
            return None;
        }
        let calls: Vec<(usize, WarpOp)> = (k..end)
            .filter_map(|i| Some((i, self.exchange_call_at(i)?)))
            .collect();
        let [(name, op)] = calls.as_slice() else {
            return None;
        };
        let (name, op) = (*name, *op);
        let close = self.partner(name + 1);
        if self.text(k) == "if" && !(k + 1 < name && close < self.partner(k + 1)) {
            return None; // in the body: the construct's
        }
        let (lo, hi) = (self.sig[name].start, self.sig[close].end);
        let other_wait = (k..end).any(|i| {
            (i < name || i > close)
                && (matches!(self.text(i), "__syncthreads" | "__syncwarp")
                    || self.calls_waiting(i)
                    || self.vote_call_at(i).is_some()
                    || matches!(self.text(i), "for" | "while" | "do"))
        }) || (name + 2..close)
            .any(|i| self.exchange_call_at(i).is_some() || self.vote_call_at(i).is_some())
            || self.block_waits.iter().any(|&(a, _)| {
                self.sig[k].start <= a && a < self.sig[end - 1].end && !(lo <= a && a < hi)
            });
        (!other_wait).then_some((name, op))
    }

    /// A phase that stores the exchanged value (the second argument of the
    /// call named at `name`) of every thread in its slot; the statement's
    /// phase after it reads them (`Phased::exchanges`).
    fn exchange_phase(
        &mut self,
        name: usize,
        op: WarpOp,
        chain: &[usize],
    ) -> Result<usize, Refusal> {
        let open = name + 1;
        let close = self.partner(open);
        let args = self.arguments(open, close);
        let reduce = self.tile_reduce_at(name).map(|(f, s)| (f, s.to_string()));
        let tile = self
            .tile_member(name)
            .map(str::to_string)
            .or_else(|| reduce.as_ref().map(|(_, s)| s.clone()));
        // a tile's member: the value first, the call from the tile's name;
        // `cg::reduce(tile, value, op)`: the value second, the opener up to
        // the comma after the tile
        let (from, to) = args[if tile.is_some() && reduce.is_none() {
            0
        } else {
            1
        }];
        let first = match &reduce {
            Some((f, _)) => *f,
            None if tile.is_some() => name - 2,
            None => name,
        };
        let opener_end = if reduce.is_some() { args[0].1 } else { open };
        // The value is evaluated again by the statement (the thread's own),
        // and the other arguments there only.
        for &(a, b) in &args {
            if let Some(i) = (a..b).find(|&i| {
                self.writes(i)
                    || (self.sig[i].kind == TokenKind::Ident
                        && self.text(i + 1) == "("
                        && !UNIFORM_CALLS.contains(&self.text(i))
                        && !CAST_WORDS.contains(&self.text(i)))
            }) {
                return Err(refuse(
                    self.sig[i].span(),
                    format!("an argument of `{}` assigns or calls a function; the split evaluates the value in a phase of its own and again in the statement", op.name()),
                    "compute the argument into a variable before the exchange",
                ));
            }
        }
        let call = Span::from(self.sig[first].start..self.sig[close].end);
        let index = match self.exchanges.iter().position(|x| x.call == call) {
            Some(i) => i,
            None => {
                self.exchanges.push(Exchange {
                    op,
                    opener: Span::from(self.sig[first].start..self.sig[opener_end].end),
                    call,
                    tile,
                });
                self.exchange_calls.push((first, close));
                self.warp_known.insert(self.sig[first].start);
                self.exchanges.len() - 1
            }
        };
        Ok(self.value_phase(from, to, chain, |p| p.exchange = Some(index)))
    }

    /// The block vote called at `sig[i]` (its name, with an argument).
    fn vote_call_at(&self, i: usize) -> Option<VoteOp> {
        let op = VoteOp::of(self.text(i))?;
        (self.text(i + 1) == "(" && self.partner(i + 1) != i + 2).then_some(op)
    }

    /// The index in `votes` of the block vote that `sig[from..to)` is,
    /// whole (an initializer `__syncthreads_or(x)`).
    fn vote_of(&self, from: usize, to: usize) -> Option<usize> {
        let at = self
            .vote_calls
            .iter()
            .position(|&(name, close)| name == from && close + 1 == to)?;
        let (name, close) = self.vote_calls[at];
        let call = Span::from(self.sig[name].start..self.sig[close].end);
        self.votes.iter().position(|v| v.call == call)
    }

    /// The block vote in the head `sig[from..to)`, if any: its name's index
    /// and operation (one per head).
    fn vote_in(&self, from: usize, to: usize) -> Result<Option<(usize, VoteOp)>, Refusal> {
        let mut found = None;
        for i in from..to {
            let Some(op) = self.vote_call_at(i) else {
                continue;
            };
            if found.is_some() {
                return Err(refuse(
                    self.sig[i].span(),
                    "two block votes in one head of a construct holding a barrier",
                    "compute one of them in a statement before the construct",
                ));
            }
            found = Some((i, op));
        }
        Ok(found)
    }

    /// A phase of the one expression `sig[from..to)` (a vote's argument, an
    /// exchange's value, a guard's condition), which `mark` says what to do
    /// with.
    fn value_phase(
        &mut self,
        from: usize,
        to: usize,
        chain: &[usize],
        mark: impl FnOnce(&mut Phase),
    ) -> usize {
        let mut phase = Phase {
            range: Span::from(self.sig[from].start..self.sig[to - 1].end),
            returns: Vec::new(),
            last: false,
            result: None,
            vote: None,
            exchange: None,
            guard: None,
        };
        mark(&mut phase);
        self.phases.push(phase);
        self.phase_regions.push(chain.to_vec());
        self.phase_tokens.push(vec![(from, to)]);
        self.phases.len() - 1
    }

    /// A phase that folds the vote's argument (the call's name at `name`)
    /// over the block's threads; the vote is one of `Phased::votes`, each
    /// call once, however many phases fold it.
    fn vote_phase(&mut self, name: usize, op: VoteOp, chain: &[usize]) -> Result<usize, Refusal> {
        let open = name + 1;
        let close = self.partner(open);
        let call = Span::from(self.sig[name].start..self.sig[close].end);
        if (open + 1..close).any(|i| self.writes(i) || self.text(i) == "__syncthreads") {
            return Err(refuse(
                self.sig[name].span(),
                format!("the argument of `{}` assigns or waits", op.name()),
                "compute the argument in a statement before the vote",
            ));
        }
        let index = match self.votes.iter().position(|v| v.call == call) {
            Some(i) => i,
            None => {
                self.votes.push(Vote { op, call });
                self.vote_calls.push((name, close));
                self.barriers.insert(self.sig[name].start);
                self.votes.len() - 1
            }
        };
        Ok(self.value_phase(open + 1, close, chain, |p| p.vote = Some(index)))
    }

    /// The variable a `for` head declares: `for (int s = ...; ...)`.
    fn for_variable(&self, from: usize, to: usize) -> Option<String> {
        let semi = (from..to).find(|&i| self.text(i) == ";")?;
        let names = declarators(self.sig, self.view, from, semi + 1)?;
        names.first().map(|d| d.name.clone())
    }

    /// A `__shared__` declaration at the top of a region: recorded.
    fn shared_declaration(&mut self, k: usize, end: usize) -> Result<(), Refusal> {
        let Some(at) = (k..end).find(|&i| self.text(i) == "__shared__") else {
            return Ok(());
        };
        if (k..end).any(|i| self.text(i) == "extern") {
            return self.dynamic_shared_declaration(k, end, at);
        }
        let Some(decls) = declarators(self.sig, self.view, k, end) else {
            return Ok(());
        };
        if decls.iter().any(|d| d.init) {
            return Err(refuse(
                self.sig[at].span(),
                "a `__shared__` declaration with an initializer",
                "declare shared variables without initializers",
            ));
        }
        let statement = Span::from(self.sig[k].start..self.sig[end - 1].end);
        let scope = self.scope();
        // A callee run in place twice declares its shared variables once:
        // a device function's `__shared__` variable is one per block however
        // often the block calls it, as in CUDA.
        if self.shared.iter().any(|s| s.statement == statement) {
            for d in decls {
                self.shared_scopes.insert((scope, d.name));
            }
            return Ok(());
        }
        let function = match scope {
            None => self.child,
            Some(k) => self.inlines[k].callee,
        };
        for d in decls {
            self.shared_scopes.insert((scope, d.name.clone()));
            let owner = *self.shared_owners.entry(d.name.clone()).or_insert(function);
            if !self.shared_names.insert(d.name.clone()) {
                // the same name in two functions (FasterTransformer's
                // `blockReduceSum` and `blockReduceMax`, each with its
                // `static __shared__ T shared[32]`): the later one's renamed
                // throughout its function's body
                let renames = self.renames.entry(function).or_default();
                if owner != function && !renames.iter().any(|(old, _)| *old == d.name) {
                    let new = format!("dpopt_shared{}_{}", self.shared.len(), d.name);
                    renames.push((d.name.clone(), new));
                    continue;
                }
                return Err(refuse(
                    self.sig[d.at].span(),
                    format!("a second `__shared__` variable `{}` (in the child and a callee it runs in place, or twice in the body); the split declares each block's shared variables together", d.name),
                    "rename one of them",
                ));
            }
        }
        self.shared.push(Shared {
            statement,
            keyword: self.sig[at].span(),
            statics: (k..end)
                .filter(|&i| self.text(i) == "static")
                .map(|i| self.sig[i].span())
                .collect(),
            dynamic: None,
        });
        Ok(())
    }

    /// `extern __shared__ T name[];`: a pointer of the element type into a
    /// local buffer as large as the largest constant dynamic shared memory
    /// of the launches that run serially (every such array of a block
    /// starts at the same address, as in CUDA).
    fn dynamic_shared_declaration(
        &mut self,
        k: usize,
        end: usize,
        at: usize,
    ) -> Result<(), Refusal> {
        let Some(bytes) = self.dynamic_shared else {
            return Err(refuse(
                self.sig[at].span(),
                "`extern __shared__` memory is sized at launch, and the dynamic shared memory of a launch that runs serially is not a constant",
                "launch the child with a constant dynamic shared memory size, or remove `threshold`/`floor`",
            ));
        };
        // The tokens without `extern`, `__shared__`, `static` and
        // alignment attributes: `T name [ ] ;`.
        let mut kept: Vec<usize> = Vec::new();
        let mut i = k;
        while i < end - 1 {
            match self.text(i) {
                "extern" | "__shared__" | "static" => i += 1,
                "__align__" | "alignas" | "__attribute__" if self.text(i + 1) == "(" => {
                    i = self.partner(i + 1) + 1;
                }
                _ => {
                    kept.push(i);
                    i += 1;
                }
            }
        }
        let n = kept.len();
        let shape_ok = n >= 4
            && self.text(kept[n - 1]) == "]"
            && self.text(kept[n - 2]) == "["
            && self.sig[kept[n - 3]].kind == TokenKind::Ident
            && kept[..n - 3].iter().all(|&j| {
                self.sig[j].kind == TokenKind::Ident
                    || matches!(self.text(j), "::" | "<" | ">" | "*")
            });
        if !shape_ok {
            return Err(refuse(
                self.sig[at].span(),
                "an `extern __shared__` declaration other than `extern __shared__ T name[];`",
                "declare the dynamic shared array as `extern __shared__ T name[];`",
            ));
        }
        let name = self.text(kept[n - 3]).to_string();
        let statement = Span::from(self.sig[k].start..self.sig[end - 1].end);
        self.shared_scopes.insert((self.scope(), name.clone()));
        if self.shared.iter().any(|s| s.statement == statement) {
            return Ok(()); // a callee run in place twice
        }
        if self.shared_names.contains(&name) {
            return Err(refuse(
                self.sig[kept[n - 3]].span(),
                format!("a second `__shared__` variable `{name}`; the split declares each block's shared variables together"),
                "rename one of them",
            ));
        }
        let element = kept[..n - 3]
            .iter()
            .map(|&j| self.text(j))
            .collect::<Vec<_>>()
            .join(" ");
        self.shared_names.insert(name.clone());
        self.dynamic_bytes = Some(bytes);
        self.shared.push(Shared {
            statement,
            keyword: self.sig[at].span(),
            statics: Vec::new(),
            dynamic: Some((element, name)),
        });
        Ok(())
    }

    /// The atomic calls of a body that shares memory (their names), which
    /// the serial version redirects; refused where a shared array goes to a
    /// function of the file as a pointer (its atomics would hit the local
    /// stand-in unseen).
    /// Is the name at sig `j` a pointer's value, not one element's
    /// (`a[i]` reads an element, `&a[i]` is a pointer)?
    fn pointer_value(&self, j: usize) -> bool {
        !(self.text(j + 1) == "[" && self.text(j - 1) != "&")
    }

    /// The names that may hold a pointer into a shared array: the arrays,
    /// the variables the bodies declare or assign from one (`unsigned *base
    /// = hist + 0;`, `p = &tile[k];`), and the parameters of callees run in
    /// place bound to one.
    fn shared_pointers(&self, bodies: &[(usize, usize)]) -> HashSet<&'p str> {
        let mut names: HashSet<&'p str> = HashSet::new();
        for &(open, close) in bodies {
            for j in open..close {
                if self.shared_names.contains(self.text(j)) {
                    names.insert(self.text(j));
                }
            }
        }
        let mut changed = !names.is_empty();
        while changed {
            changed = false;
            let mut derived = Vec::new();
            for &(open, close) in bodies {
                for j in open + 1..close {
                    if self.sig[j].kind != TokenKind::Ident
                        || self.text(j + 1) != "="
                        || matches!(self.text(j - 1), "." | "->")
                        || names.contains(self.text(j))
                    {
                        continue;
                    }
                    // the value assigned: up to the statement's or the
                    // declarator's end
                    let mut k = j + 2;
                    while k < close && !matches!(self.text(k), ";" | "," | ")" | "}") {
                        if matches!(self.text(k), "(" | "[" | "{") {
                            if (k + 1..self.partner(k))
                                .any(|m| names.contains(self.text(m)) && self.pointer_value(m))
                            {
                                derived.push(self.text(j));
                            }
                            k = self.partner(k);
                        } else if names.contains(self.text(k)) && self.pointer_value(k) {
                            derived.push(self.text(j));
                        }
                        k += 1;
                    }
                }
            }
            for i in &self.inlines {
                for (p, &(a, b)) in i.params.iter().zip(&i.bind_args) {
                    if (a..b).any(|m| names.contains(self.text(m)) && self.pointer_value(m)) {
                        derived.extend(
                            self.program.functions[i.callee]
                                .params
                                .iter()
                                .filter_map(|q| q.name.as_deref())
                                .filter(|q| q == p),
                        );
                    }
                }
            }
            for name in derived {
                changed |= names.insert(name);
            }
        }
        names
    }

    /// Does `f`, or a function of the file it calls, call an atomic?
    fn reaches_atomics(&self, f: FunctionId, seen: &mut HashSet<FunctionId>) -> bool {
        if !seen.insert(f) {
            return false;
        }
        let body = &self.program.functions[f].body_tokens;
        (body.start..body.end).any(|i| {
            let t = self.text(i);
            self.sig[i].kind == TokenKind::Ident
                && self.text(i + 1) == "("
                && (t.starts_with("atomic") // atomicAdd, atomicAdd_block, ...
                    || self
                        .program
                        .named
                        .get(t)
                        .is_some_and(|fs| fs.iter().any(|&g| self.reaches_atomics(g, seen))))
        })
    }

    fn shared_atomics(
        &self,
        open: usize,
        close: usize,
        shared_pointers: &HashSet<&'p str>,
    ) -> Result<Vec<Span>, Refusal> {
        if self.shared.is_empty() {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for i in open + 1..close {
            let t = self.text(i);
            if self.sig[i].kind != TokenKind::Ident || self.text(i + 1) != "(" {
                continue;
            }
            if i > 0 && matches!(self.text(i - 1), "." | "->") {
                continue;
            }
            if SERIAL_ATOMICS.contains(&t) {
                out.push(self.sig[i].span());
                continue;
            }
            if !self.program.named.contains_key(t)
                || self
                    .inlines
                    .iter()
                    .any(|c| c.name_span.start() == self.sig[i].start)
            {
                continue;
            }
            // A shared array passed whole (not one element's value) to a
            // function that may apply an atomic to it.
            let callees = &self.program.named[t];
            if !callees
                .iter()
                .any(|&f| self.reaches_atomics(f, &mut HashSet::new()))
            {
                continue;
            }
            let close_paren = self.partner(i + 1);
            for j in i + 2..close_paren {
                if shared_pointers.contains(self.text(j)) && self.pointer_value(j) {
                    let what = if self.shared_names.contains(self.text(j)) {
                        "the shared array"
                    } else {
                        "the pointer into a shared array"
                    };
                    return Err(refuse(
                        self.sig[j].span(),
                        format!(
                            "{what} `{}` goes to `{t}` as a pointer; in the serial version it is a local array, which the atomics a function may apply to it cannot take",
                            self.text(j)
                        ),
                        "pass the elements the function needs, or remove `threshold`/`floor`",
                    ));
                }
            }
        }
        Ok(out)
    }

    /// Is the statement `sig[k..end)` a `break` or `continue` of the
    /// barrier loop around the region (`break;`, `if (c) break;`, `if (c) {
    /// continue; }`), with no block vote? Its condition's range, if any.
    /// Only inside a barrier loop's body, where the statement stands at the
    /// block's level.
    fn leave_statement(
        &self,
        k: usize,
        end: usize,
        chain: &[usize],
    ) -> Option<Option<(usize, usize)>> {
        // the innermost barrier loop of the same function around the region,
        // and whether `continue` may leave it (not where the loop's vote is
        // folded again at the end of each round)
        let continues = chain
            .iter()
            .rev()
            .take_while(|r| !self.inline_regions.contains(r) && !self.guard_regions.contains(r))
            .find_map(|r| self.loop_regions.get(r).copied())?;
        let jump = |at: usize| {
            (self.text(at) == "break" || (continues && self.text(at) == "continue"))
                && self.text(at + 1) == ";"
        };
        if jump(k) && k + 2 == end {
            return Some(None);
        }
        if self.text(k) != "if" || self.text(k + 1) != "(" {
            return None;
        }
        let close_paren = self.partner(k + 1);
        let body = close_paren + 1;
        let plain = jump(body) && body + 2 == end;
        let braced = self.text(body) == "{"
            && jump(body + 1)
            && self.text(body + 3) == "}"
            && body + 4 == end;
        if !(plain || braced) || self.vote_of(k + 2, close_paren).is_some() {
            return None;
        }
        Some(Some((k + 2, close_paren)))
    }

    /// `goto`, lambdas, and `break`/`continue` that would leave a thread's
    /// loop of a phase.
    fn check_body(&self, open: usize, close: usize) -> Result<(), Refusal> {
        for i in open..close {
            let t = self.text(i);
            if t == "goto" {
                return Err(refuse(
                    self.sig[i].span(),
                    "`goto` in a child with barriers",
                    "rewrite without `goto`, or remove `threshold`/`floor`",
                ));
            }
            if t == "]" && matches!(self.text(i + 1), "(" | "{") {
                let before = self.text(
                    self.program
                        .brackets
                        .partner(i)
                        .unwrap_or(i)
                        .saturating_sub(1),
                );
                if matches!(before, "=" | "(" | "," | "return" | ";" | "{" | "}") {
                    return Err(refuse(
                        self.sig[i].span(),
                        "a lambda in a child with barriers (its `return` would end the thread's phase)",
                        "use a device function instead of the lambda",
                    ));
                }
            }
        }
        for statements in &self.phase_tokens {
            for &(s, e) in statements {
                for i in s..e {
                    if !matches!(self.text(i), "break" | "continue") {
                        continue;
                    }
                    let enclosed = (s..i).any(|j| {
                        matches!(self.text(j), "for" | "while" | "do" | "switch")
                            && self.statement_end(j, e) > i
                    });
                    if !enclosed {
                        return Err(refuse(
                            self.sig[i].span(),
                            format!("`{}` of a loop that holds a barrier", self.text(i)),
                            "end the loop through its condition",
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Identifiers a phase names (not members, not qualified).
    fn names_in(&self, from: usize, to: usize) -> BTreeSet<&'p str> {
        (from..to)
            .filter(|&i| {
                self.sig[i].kind == TokenKind::Ident
                    && !(i > 0 && matches!(self.text(i - 1), "." | "->" | "::"))
                    && self.text(i + 1) != "::"
            })
            .map(|i| self.text(i))
            .collect()
    }

    /// The commas of a declaration statement of several declarators,
    /// some kept per thread (`stored`): each becomes `;`, followed by the
    /// statement's type where the next declarator is not kept (it is then
    /// declared in a statement of its own).
    fn comma_rewrites(
        &self,
        s: usize,
        decls: &[Declarator],
        stored: &[bool],
    ) -> Result<Vec<(Span, String)>, Refusal> {
        let base = base_type(self.sig, self.view, s, &decls[0]);
        let words: Vec<&str> = base.map(|i| self.text(i)).collect();
        // a template type with `<` in an initializer: which commas separate
        // declarators is not certain
        let end = decls
            .last()
            .map_or(s, |d| d.init_to.max(d.array_end).max(d.at + 1));
        let certain =
            split_top_level(&self.sig[s..end], self.view, Angles::Operators).len() == decls.len();
        if !certain
            || words.is_empty()
            || words
                .iter()
                .any(|w| matches!(*w, "auto" | "static" | "extern"))
        {
            return Err(refuse(
                self.sig[decls[0].at].span(),
                format!(
                    "`{}` lives across a barrier and is declared with others in one statement whose type dpopt cannot repeat",
                    decls[0].name
                ),
                "declare the variables that live across the barrier in statements of their own",
            ));
        }
        Ok(decls
            .iter()
            .zip(stored)
            .skip(1)
            .map(|(d, &kept)| {
                let comma = self.sig[d.start - 1].span();
                let with = if kept {
                    ";".to_string()
                } else {
                    format!("; {}", words.join(" "))
                };
                (comma, with)
            })
            .collect())
    }

    fn variables(
        &self,
        function: &crate::program::Function,
        bodies: &[(usize, usize)],
        constants: &Constants,
    ) -> Result<Variables, Refusal> {
        let view = self.view;
        // Per scope (`slot`: the child's body first, then each call run in
        // place): its parameters, the child's or the callee's (bound again
        // in each of its phases, never assigned), and its body's tokens.
        let slot = |scope: Scope| scope.map_or(0, |k| k + 1);
        let scopes = self.inlines.len() + 1;
        let params: Vec<Vec<&str>> = std::iter::once(
            function
                .params
                .iter()
                .filter_map(|p| p.name.as_deref())
                .collect(),
        )
        .chain(
            self.inlines
                .iter()
                .map(|i| i.params.iter().map(String::as_str).collect()),
        )
        .collect();
        // Written in its scope's body somewhere other than in its declarations.
        let assigned_in = |scope: Scope, name: &str| {
            let (open, close) = bodies[slot(scope)];
            (open..close)
                .any(|i| self.text(i) == name && !self.declared_at.contains(&i) && self.writes(i))
        };
        let tokens = || bodies.iter().flat_map(|&(open, close)| open..close);
        // A reference bound to a variable could assign it unseen.
        let references = bodies.iter().any(|&(_, close)| {
            tokens().any(|i| {
                self.text(i) == "&"
                    && i + 2 < close
                    && self.sig[i + 1].kind == TokenKind::Ident
                    && self.text(i + 2) == "="
                    && i > 0
                    && self.sig[i - 1].kind == TokenKind::Ident
            })
        });
        let phase_scopes: Vec<Scope> = (0..self.phases.len())
            .map(|q| self.phase_scope(q))
            .collect();
        // The names each phase reads in its own scope.
        let uses: Vec<BTreeSet<&str>> = self
            .phase_tokens
            .iter()
            .map(|st| st.iter().flat_map(|&(s, e)| self.names_in(s, e)).collect())
            .collect();
        // The caller's names a callee's phase reads: the arguments of the
        // parameters it may bind (those its statements, the callee's
        // declarations or the arguments of the calls it makes name), and in
        // its final phase the call's target. Per phase, per scope around the
        // phase's own; the innermost calls first, whose arguments read
        // their callers' names.
        let mut caller_uses: Vec<HashMap<Scope, BTreeSet<&str>>> =
            vec![HashMap::new(); self.phases.len()];
        for (k, i) in self.inlines.iter().enumerate().rev() {
            let declared: BTreeSet<&str> = self
                .declarations
                .iter()
                .filter(|(phase, ..)| phase_scopes[*phase] == Some(k))
                .flat_map(|&(_, _, s, e)| self.names_in(s, e))
                .collect();
            for q in i.phases.clone() {
                let mut named: BTreeSet<&str> =
                    caller_uses[q].get(&Some(k)).cloned().unwrap_or_default();
                if phase_scopes[q] == Some(k) {
                    named.extend(uses[q].iter().copied());
                }
                for (((p, &(a, b)), &assigned), &group) in i
                    .params
                    .iter()
                    .zip(&i.bind_args)
                    .zip(&i.assigned)
                    .zip(&i.groups)
                {
                    // a group's argument is not evaluated; an assigned
                    // parameter's only in the callee's first phase
                    let binds = if assigned {
                        q == i.phases.start
                    } else {
                        named.contains(p.as_str()) || declared.contains(p.as_str())
                    };
                    if binds && !group {
                        caller_uses[q]
                            .entry(i.caller)
                            .or_default()
                            .extend(self.names_in(a, b));
                    }
                }
            }
            if let (Some(q), Some(t)) = (i.ret_phase, &i.target) {
                caller_uses[q]
                    .entry(i.caller)
                    .or_default()
                    .insert(t.as_str());
            }
        }
        // Names each phase declares at its top (they shadow outer ones there).
        let mut own: Vec<HashSet<String>> = vec![HashSet::new(); self.phases.len()];
        for (phase, _, s, e) in &self.declarations {
            for d in declarators(self.sig, view, *s, *e).unwrap_or_default() {
                own[*phase].insert(d.name);
            }
        }
        // Does phase `q` read the variable `name` of `scope`?
        let reads = |q: usize, scope: Scope, name: &str| {
            if phase_scopes[q] == scope {
                uses[q].contains(name) && !own[q].contains(name)
            } else {
                caller_uses[q].get(&scope).is_some_and(|n| n.contains(name))
            }
        };
        let shared_in =
            |scope: Scope, name: &str| self.shared_scopes.contains(&(scope, name.to_string()));
        // What a block computes once: the arguments of callees run in place
        // that read nothing of one thread, then the variables whose value
        // every thread computes alike and which only construct heads assign.
        let child_params: Vec<&str> = params[0]
            .iter()
            .copied()
            .filter(|p| !assigned_in(None, p))
            .collect();
        let mut block_names: Vec<HashSet<String>> = vec![HashSet::new(); scopes];
        let mut block_binds: Vec<Vec<bool>> = Vec::new();
        for (k, i) in self.inlines.iter().enumerate() {
            let flags: Vec<bool> = i
                .bind_args
                .iter()
                .zip(i.assigned.iter().zip(&i.groups))
                .map(|(&(a, b), (&assigned, &group))| {
                    // a callee's callee: what its caller binds once per block
                    let caller_block = |t: &str| match i.caller {
                        None => child_params.contains(&t),
                        Some(j) => block_names[j + 1].contains(t),
                    };
                    group
                        || (!assigned
                            && self.uniform_expr(a, b, constants, &|t| {
                                caller_block(t) || shared_in(i.caller, t)
                            }))
                })
                .collect();
            for (p, &f) in i.params.iter().zip(&flags) {
                if f {
                    block_names[k + 1].insert(p.clone());
                }
            }
            block_binds.push(flags);
        }
        let in_head = |i: usize| self.heads.iter().any(|h| h.from <= i && i < h.to);
        let decl_scopes: Vec<Scope> = self
            .declarations
            .iter()
            .map(|(phase, ..)| phase_scopes[*phase])
            .collect();
        let declared_once = |scope: Scope, name: &str| {
            self.declarations
                .iter()
                .zip(&decl_scopes)
                .filter(|(_, &s)| s == scope)
                .flat_map(|((_, _, ds, de), _)| {
                    declarators(self.sig, view, *ds, *de).unwrap_or_default()
                })
                .filter(|x| x.name == name)
                .count()
                == 1
        };
        // Declarators computed once per block: no initializer, or one that
        // reads only what the block computes once; written only in heads, or
        // never written and read by a head or by such a declarator's
        // initializer (`int bs = blockDim.x;` then `for (int s = bs / 2;
        // ...)`, `int aBegin = wA * BLOCK * by;` with `int by = blockIdx.y;`).
        let mut uniform_names: Vec<HashSet<String>> = vec![HashSet::new(); scopes];
        // (a template's parameters are constants of each instance)
        let template_params: Vec<&str> = function
            .template_params
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        // never written, their initializer computed alike by every thread
        let mut constant_names: Vec<HashSet<String>> = vec![HashSet::new(); scopes];
        let mut inits: HashMap<(Scope, String), (usize, usize)> = HashMap::new();
        for ((_, _, s, e), &scope) in self.declarations.iter().zip(&decl_scopes) {
            let sp = slot(scope);
            let decls = declarators(self.sig, view, *s, *e).unwrap_or_default();
            if references
                || (*s..*e).any(|i| matches!(self.text(i), "__shared__" | "static" | "&" | "&&"))
            {
                continue;
            }
            for d in &decls {
                if d.array
                    || d.paren_init
                    || params[sp].contains(&d.name.as_str())
                    || !declared_once(scope, &d.name)
                {
                    continue;
                }
                let (open, close) = bodies[sp];
                let writes: Vec<usize> = (open..close)
                    .filter(|&i| {
                        self.text(i) == d.name && !self.declared_at.contains(&i) && self.writes(i)
                    })
                    .collect();
                // `const bool any = __syncthreads_or(changed);`: the fold
                let vote_init = d.init && self.vote_of(d.init_from, d.init_to).is_some();
                let (names, constant) = (&block_names[sp], &constant_names[sp]);
                let uniform_init = d.init
                    && self.uniform_expr(d.init_from, d.init_to, constants, &|t| {
                        (scope.is_none()
                            && (child_params.contains(&t) || template_params.contains(&t)))
                            || names.contains(t)
                            || constant.contains(t)
                    });
                if writes.is_empty() && !vote_init {
                    if uniform_init {
                        constant_names[sp].insert(d.name.clone());
                        inits.insert((scope, d.name.clone()), (d.init_from, d.init_to));
                    }
                    continue;
                }
                if !writes.iter().all(|&i| in_head(i))
                    && !self.restarted_counter(&d.name, open, close)
                {
                    continue;
                }
                if !d.init || vote_init || uniform_init {
                    if uniform_init {
                        inits.insert((scope, d.name.clone()), (d.init_from, d.init_to));
                    }
                    block_names[sp].insert(d.name.clone());
                    uniform_names[sp].insert(d.name.clone());
                }
            }
        }
        // The never-written ones that heads (outside their votes) and the
        // initializers of the others computed once per block read.
        let mut wanted: Vec<(Scope, &str)> = Vec::new();
        for h in &self.heads {
            let scope = self.chain_scope(&h.chain);
            wanted.extend(
                (h.from..h.to)
                    .filter(|&i| !self.vote_calls.iter().any(|&(a, b)| a <= i && i <= b))
                    .map(|i| (scope, self.text(i))),
            );
        }
        for ((scope, name), &(a, b)) in &inits {
            if uniform_names[slot(*scope)].contains(name) {
                wanted.extend((a..b).map(|i| (*scope, self.text(i))));
            }
        }
        while let Some((scope, name)) = wanted.pop() {
            let sp = slot(scope);
            if constant_names[sp].contains(name) && uniform_names[sp].insert(name.to_string()) {
                block_names[sp].insert(name.to_string());
                if let Some(&(a, b)) = inits.get(&(scope, name.to_string())) {
                    wanted.extend((a..b).map(|i| (scope, self.text(i))));
                }
            }
        }
        let mut uniform: Vec<Uniform> = Vec::new();
        let mut vars: Vec<Var> = Vec::new();
        let mut per_thread: Vec<(Scope, String, Vec<usize>)> = Vec::new();
        let mut recomputable: Vec<HashSet<String>> = vec![HashSet::new(); scopes];
        // Each recomputable variable's phase and declaration statement.
        let mut recomputed_by: HashMap<(Scope, String), (usize, Span)> = HashMap::new();
        for ((phase, chain, s, e), &scope) in self.declarations.iter().zip(&decl_scopes) {
            let sp = slot(scope);
            let decls = declarators(self.sig, view, *s, *e).unwrap_or_default();
            let statement = Span::from(self.sig[*s].start..self.sig[*e - 1].end);
            let shared = (*s..*e).any(|i| self.text(i) == "__shared__");
            let block: Vec<bool> = decls
                .iter()
                .map(|d| uniform_names[sp].contains(&d.name))
                .collect();
            if shared {
                continue;
            }
            if block == [true] {
                uniform.push(Uniform {
                    phase: *phase,
                    declaration: BlockDeclaration::Statement(statement),
                    rewrites: vec![(
                        statement,
                        "/* dpopt: computed once per block, above */".to_string(),
                    )],
                });
                continue;
            }
            for (d, _) in decls.iter().zip(&block).filter(|(_, &b)| !b) {
                per_thread.push((scope, d.name.clone(), chain.clone()));
            }
            // Computed again (the whole statement) when every declarator's
            // initializer gives the same value in every phase.
            let mut trial = recomputable[sp].clone();
            let assigned = |t: &str| assigned_in(scope, t);
            let all_stable = !references
                && !block.contains(&true)
                && decls.iter().all(|d| {
                    let ok = d.init
                        && !d.array
                        && !assigned(&d.name)
                        && self.stable(
                            d.init_from,
                            d.init_to,
                            &params[sp],
                            &assigned,
                            &trial,
                            constants,
                        );
                    if ok {
                        trial.insert(d.name.clone());
                    }
                    ok
                });
            if all_stable {
                recomputable[sp] = trial;
                for d in &decls {
                    recomputed_by.insert((scope, d.name.clone()), (*phase, statement));
                }
            }
            let used_ins: Vec<Vec<usize>> = decls
                .iter()
                .zip(&block)
                .map(|(d, &b)| {
                    (phase + 1..self.phases.len())
                        .filter(|_| !b)
                        .filter(|&q| {
                            self.phase_regions[q].starts_with(chain) && reads(q, scope, &d.name)
                        })
                        .collect()
                })
                .collect();
            // In a statement of several declarators where some are kept per
            // thread: the others declared again after the commas, which
            // become `;` (`int a = f(), b = a + 1;` -> `a = f(); int b = a + 1;`).
            // Those computed once per block are taken out of the statement
            // the same way (`int tid = threadIdx.x, s;` -> `int tid =
            // threadIdx.x; /* ... */;` and `int s;` before the threads).
            let stored: Vec<bool> = used_ins
                .iter()
                .zip(&block)
                .map(|(u, &b)| b || (!all_stable && !u.is_empty()))
                .collect();
            let mut commas = if decls.len() > 1 && stored.contains(&true) {
                Some(self.comma_rewrites(*s, &decls, &stored)?)
            } else {
                None
            };
            for (d, _) in decls.iter().zip(&block).filter(|(_, &b)| b) {
                let last = if d.init { d.init_to - 1 } else { d.at };
                let own = match self.vote_of(d.init_from, d.init_to) {
                    Some(v) if d.init => {
                        format!("{} dpopt_vote{v}", self.text_of(d.start, d.init_from))
                    }
                    _ => self.text_of(d.start, last + 1),
                };
                let text = if d.start == *s {
                    format!("{own};")
                } else {
                    let words: Vec<&str> = base_type(self.sig, view, *s, &decls[0])
                        .map(|i| self.text(i))
                        .collect();
                    format!("{} {own};", words.join(" "))
                };
                let mut rewrites = vec![(
                    Span::from(self.sig[d.start].start..self.sig[last].end),
                    format!("/* dpopt: `{}` computed once per block, above */", d.name),
                )];
                rewrites.extend(commas.take().unwrap_or_default());
                uniform.push(Uniform {
                    phase: *phase,
                    declaration: BlockDeclaration::Declarator(text),
                    rewrites,
                });
            }
            for (d, used_in) in decls.iter().zip(used_ins) {
                let stable = all_stable;
                if used_in.is_empty() {
                    continue;
                }
                if params[sp].contains(&d.name.as_str()) {
                    return Err(refuse(
                        self.sig[d.at].span(),
                        format!(
                            "`{}` lives across a barrier and has a parameter's name",
                            d.name
                        ),
                        "rename the variable",
                    ));
                }
                if vars.iter().any(|v| v.name == d.name && v.scope == scope) {
                    return Err(refuse(
                        self.sig[d.at].span(),
                        format!(
                            "`{}` is declared twice in the body and lives across a barrier",
                            d.name
                        ),
                        "rename one of the variables",
                    ));
                }
                let keep = if stable {
                    Keep::Recompute {
                        declaration: statement,
                    }
                } else {
                    let storage = declarator_type(self.sig, view, *s, &decls[0], d)
                        .map(|t| self.instantiate_at(*s, &t));
                    let storage = storage.ok_or_else(|| {
                        refuse(
                            self.sig[d.at].span(),
                            format!("`{}` lives across a barrier, so it is kept per thread, which needs a named type that is not a reference (not `auto`, not `static`)", d.name),
                            format!("give `{}` its type", d.name),
                        )
                    })?;
                    // `float acc{};`, `int n(4);`, `float c[3] = {0};` alone
                    // in their statement: the initial value made in a
                    // variable of its own, then copied
                    let alone = decls.len() == 1;
                    let empty_parens =
                        d.paren_init && self.text(d.at + 1) == "(" && self.text(d.at + 2) == ")";
                    if d.paren_init && (!alone || empty_parens || d.array) {
                        return Err(refuse(
                            self.sig[d.at].span(),
                            format!("`{}` lives across a barrier and is initialized with `(...)` or `{{...}}` in a statement of several declarators", d.name),
                            format!("write `{} = ...;`, or declare it in a statement of its own", d.name),
                        ));
                    }
                    if d.array && d.init && !alone {
                        return Err(refuse(
                            self.sig[d.at].span(),
                            format!(
                                "the array `{}` lives across a barrier and has an initializer in a statement of several declarators",
                                d.name
                            ),
                            "declare it in a statement of its own",
                        ));
                    }
                    let array = if d.array {
                        self.text_of(d.at + 1, d.array_end)
                    } else {
                        String::new()
                    };
                    let own_end = if d.array { d.array_end - 1 } else { d.at };
                    let copied = d.paren_init || (d.array && d.init);
                    let mut rewrites = vec![if copied {
                        let (init, copy) = if d.array {
                            (
                                format!("= {}", self.text_of(d.init_from, d.init_to)),
                                format!("memcpy(&{0}, &dpopt_init, sizeof({0}));", d.name),
                            )
                        } else {
                            (
                                self.text_of(d.at + 1, *e - 1),
                                format!("{} = dpopt_init;", d.name),
                            )
                        };
                        (
                            statement,
                            format!("{{ {storage} dpopt_init{array} {init}; {copy} }}  /* dpopt: `{}` kept per thread */", d.name),
                        )
                    } else if d.init {
                        (
                            Span::from(self.sig[d.start].start..self.sig[d.at].end),
                            d.name.clone(),
                        )
                    } else if alone {
                        (
                            statement,
                            format!("/* dpopt: `{}` kept per thread */", d.name),
                        )
                    } else {
                        (
                            Span::from(self.sig[d.start].start..self.sig[own_end].end),
                            format!("/* dpopt: `{}` kept per thread */", d.name),
                        )
                    }];
                    // the statement's commas go with its first kept declarator
                    rewrites.extend(commas.take().unwrap_or_default());
                    Keep::Store {
                        storage,
                        array,
                        rewrites,
                    }
                };
                vars.push(Var {
                    name: d.name.clone(),
                    scope,
                    keep,
                    declared_in: Some(*phase),
                    used_in,
                });
            }
        }
        // What each callee declares or binds: the names its final `return`
        // (which assigns the call's target inside the callee's scope) and
        // the caller's variables read in its phases may not take.
        let callee_names: Vec<BTreeSet<&str>> = self
            .inlines
            .iter()
            .enumerate()
            .map(|(k, i)| {
                let mut names: BTreeSet<&str> = i.params.iter().map(String::as_str).collect();
                for ((_, _, s, e), &scope) in self.declarations.iter().zip(&decl_scopes) {
                    if scope == Some(k) {
                        for d in declarators(self.sig, view, *s, *e).unwrap_or_default() {
                            names.insert(self.text(d.at));
                        }
                    }
                }
                names.extend(
                    self.heads
                        .iter()
                        .filter(|h| self.chain_scope(&h.chain) == Some(k))
                        .filter_map(|h| h.loop_var.as_deref()),
                );
                names.extend(
                    self.shared_scopes
                        .iter()
                        .filter(|(s, _)| *s == Some(k))
                        .map(|(_, n)| n.as_str()),
                );
                names
            })
            .collect();
        // `val = warp_sum(val);` where the callee declares a `val` of its
        // own: its final `return` assigns the result through a reference
        // bound before the callee's scope opens (`Phased::result_refs`).
        let result_refs: Vec<usize> = self
            .inlines
            .iter()
            .enumerate()
            .filter(|(k, i)| {
                let result = i
                    .target
                    .as_deref()
                    .or(i.declared.as_ref().map(|(n, _, _)| n.as_str()));
                result.is_some_and(|n| callee_names[*k].contains(n))
            })
            .map(|(k, _)| k)
            .collect();
        // The result of a callee run in place, declared by its call: kept
        // per thread from the callee's final phase on.
        for i in &self.inlines {
            let (Some((name, storage, at)), Some(q0)) = (&i.declared, i.ret_phase) else {
                continue;
            };
            if params[slot(i.caller)].contains(&name.as_str())
                || vars.iter().any(|v| v.name == *name && v.scope == i.caller)
            {
                return Err(refuse(
                    *at,
                    format!("`{name}` is declared twice in the body, or has a parameter's name, and lives across a barrier"),
                    "rename the variable",
                ));
            }
            let mut used_in = vec![q0];
            used_in.extend((q0 + 1..self.phases.len()).filter(|&q| {
                self.phase_regions[q].starts_with(&i.caller_chain) && reads(q, i.caller, name)
            }));
            vars.push(Var {
                name: name.clone(),
                scope: i.caller,
                keep: Keep::Store {
                    storage: storage.clone(),
                    array: String::new(),
                    rewrites: vec![(*at, name.clone())],
                },
                declared_in: None,
                used_in,
            });
        }
        for (k, (i, flags)) in self.inlines.iter().zip(&block_binds).enumerate() {
            for (p, &block) in i.params.iter().zip(flags) {
                if !block {
                    per_thread.push((Some(k), p.clone(), i.chain.clone()));
                }
            }
        }
        // A recomputed variable's initializer names other recomputed ones
        // of its scope: each phase that recomputes it recomputes those first.
        let mut changed = true;
        while changed {
            changed = false;
            let snapshot = vars.clone();
            for v in &snapshot {
                let Keep::Recompute { declaration } = v.keep else {
                    continue;
                };
                let names = self.names_in(
                    self.program.sig_index_at(declaration.start()),
                    self.program.sig_index_at(declaration.end()),
                );
                // one no later phase names itself (`const int base = ...;
                // float *ptr = a + base;` with only `ptr` read after a
                // barrier): recomputed too
                for &name in &names {
                    if let Some(&(phase, statement)) =
                        recomputed_by.get(&(v.scope, name.to_string()))
                    {
                        if name != v.name
                            && !vars.iter().any(|w| w.name == name && w.scope == v.scope)
                        {
                            vars.push(Var {
                                name: name.to_string(),
                                scope: v.scope,
                                keep: Keep::Recompute {
                                    declaration: statement,
                                },
                                declared_in: Some(phase),
                                used_in: Vec::new(),
                            });
                            changed = true;
                        }
                    }
                }
                for w in vars.iter_mut() {
                    if w.scope == v.scope && w.name != v.name && names.contains(w.name.as_str()) {
                        for &q in &v.used_in {
                            if Some(q) != w.declared_in
                                && !w.used_in.contains(&q)
                                && !(phase_scopes[q] == w.scope && own[q].contains(&w.name))
                            {
                                w.used_in.push(q);
                                w.used_in.sort_unstable();
                                changed = true;
                            }
                        }
                    }
                }
            }
        }
        // Assigned parameters used in more than one phase.
        for p in &function.params {
            let Some(name) = p.name.as_deref() else {
                continue;
            };
            if !assigned_in(None, name) {
                continue;
            }
            let used_in: Vec<usize> = (0..self.phases.len())
                .filter(|&q| reads(q, None, name))
                .collect();
            if used_in.is_empty() {
                continue;
            }
            let storage = param_storage(&p.declaration, name).ok_or_else(|| {
                refuse(
                    function.name_span,
                    format!("parameter `{name}` is assigned in the body, so it is kept per thread, which needs a named type that is not a reference"),
                    format!("copy `{name}` into a local variable of a named type"),
                )
            })?;
            vars.push(Var {
                name: name.to_string(),
                scope: None,
                keep: Keep::Param {
                    storage,
                    bound_in: None,
                },
                declared_in: None,
                used_in,
            });
        }
        // The parameters callees assign: each call's own copy per thread,
        // bound in the callee's first phase.
        for (k, i) in self.inlines.iter().enumerate() {
            let function = &self.program.functions[i.callee];
            for (name, _) in i.params.iter().zip(&i.assigned).filter(|(_, &a)| a) {
                let declaration = function
                    .params
                    .iter()
                    .find(|p| p.name.as_deref() == Some(name.as_str()))
                    .map(|p| self.instantiate(i.callee, &p.declaration))
                    .unwrap_or_default();
                let Some(storage) = param_storage(&declaration, name) else {
                    continue; // (refused where the call was walked)
                };
                let bound_in = i.phases.start;
                let used_in: Vec<usize> = i
                    .phases
                    .clone()
                    .filter(|&q| q != bound_in && reads(q, Some(k), name))
                    .collect();
                vars.push(Var {
                    name: name.clone(),
                    scope: Some(k),
                    keep: Keep::Param {
                        storage,
                        bound_in: Some(bound_in),
                    },
                    declared_in: Some(bound_in),
                    used_in,
                });
            }
        }
        // A callee's phase declares the caller's variables that the call's
        // arguments read before the callee's own scope opens: they may not
        // hide what the callee declares around its phases (its parameters
        // bound once per block, its variables computed once per block, its
        // loop variables and shared arrays).
        let block_level = |k: usize, q: Option<usize>, name: &str| {
            block_names[k + 1].contains(name)
                || shared_in(Some(k), name)
                || self.heads.iter().any(|h| {
                    q.map_or(self.chain_scope(&h.chain) == Some(k), |q| {
                        self.phase_regions[q].starts_with(&h.body)
                    }) && h.loop_var.as_deref() == Some(name)
                })
        };
        let hides = |k: usize, name: &str| {
            let i = &self.inlines[k];
            let callee = &self.program.view[i.name_span.range()];
            Err(refuse(
                i.name_span,
                format!("the arguments of `{callee}` read `{name}`, and `{callee}`, whose body the split runs in place, declares a `{name}` of its own around its phases"),
                format!("rename `{name}` in the caller or in `{callee}`"),
            ))
        };
        let hidden_by_caller = |m: usize, j: usize, name: &str| {
            let (i, caller) = (&self.inlines[m], &self.inlines[j]);
            let callee = &self.program.view[i.name_span.range()];
            let outer = &self.program.view[caller.name_span.range()];
            let mut r = refuse(
                i.name_span,
                format!("`{outer}` binds or declares `{name}` in each of its phases, and `{callee}`, which it calls and whose body the split runs in place too, declares a `{name}` of its own around its phases"),
                format!("rename `{name}` in `{outer}` or in `{callee}`"),
            );
            r.notes.push((caller.name_span, format!("calls `{outer}`")));
            Err(r)
        };
        for v in &vars {
            for &q in &v.used_in {
                for scope in self.scope_chain(phase_scopes[q]) {
                    let Some(k) = scope.filter(|_| scope != v.scope) else {
                        break;
                    };
                    if block_level(k, Some(q), &v.name) {
                        return hides(k, &v.name);
                    }
                }
            }
        }
        // A callee's callee: the names its caller binds or declares in each
        // phase (the caller's parameters, variables) may not hide those it
        // declares around its phases either.
        for (m, i) in self.inlines.iter().enumerate() {
            for scope in self.scope_chain(i.caller) {
                let Some(j) = scope else {
                    break;
                };
                let declared = self
                    .declarations
                    .iter()
                    .zip(&decl_scopes)
                    .filter(|(_, &s)| s == Some(j))
                    .flat_map(|((_, _, s, e), _)| {
                        declarators(self.sig, view, *s, *e).unwrap_or_default()
                    })
                    .map(|d| d.name);
                // (its parameters bound once per block are not bound in
                // the phases)
                let names: Vec<String> = self.inlines[j]
                    .params
                    .iter()
                    .zip(&block_binds[j])
                    .filter(|(_, &block)| !block)
                    .map(|(p, _)| p.clone())
                    .chain(declared)
                    .collect();
                for name in &names {
                    if block_level(m, None, name) {
                        return hidden_by_caller(m, j, name);
                    }
                }
            }
        }
        // Heads run once per block: they may name nothing of one thread.
        for Head {
            from,
            to,
            chain,
            loop_var,
            ..
        } in &self.heads
        {
            let scope = self.chain_scope(chain);
            let sp = slot(scope);
            for i in *from..*to {
                if self.vote_calls.iter().any(|&(a, b)| a <= i && i <= b) {
                    continue; // the vote's result is the block's
                }
                let t = self.text(i);
                if self.sig[i].kind != TokenKind::Ident {
                    if crate::token::MODIFYING_OPERATORS.contains(&t) {
                        let target = self.text(i.saturating_sub(1));
                        let prefix = self.text(i + 1);
                        if loop_var.as_deref() != Some(target)
                            && loop_var.as_deref() != Some(prefix)
                            && !uniform_names[sp].contains(target)
                            && !uniform_names[sp].contains(prefix)
                        {
                            return Err(self.not_uniform(i, "assigns"));
                        }
                    }
                    continue;
                }
                if i > 0 && matches!(self.text(i - 1), "." | "->") {
                    continue;
                }
                if t == "threadIdx" {
                    return Err(self.not_uniform(i, "reads `threadIdx`"));
                }
                // a tile's size, its number in the block
                if self
                    .tile_query(i)
                    .is_some_and(|(_, uniform, after)| uniform && after <= *to)
                {
                    continue;
                }
                if self.block_groups.contains(t)
                    && self.text(i + 1) == "."
                    && !self.block_query(i, *to).is_some_and(|(p, _)| p.uniform())
                {
                    return Err(self.not_uniform(
                        i,
                        &format!(
                            "calls `{t}.{}()`, which differs from thread to thread",
                            self.text(i + 2)
                        ),
                    ));
                }
                if self.text(i + 1) == "(" && !UNIFORM_CALLS.contains(&t) {
                    return Err(self.not_uniform(i, &format!("calls `{t}`")));
                }
                if params[sp].contains(&t) && assigned_in(scope, t) {
                    return Err(self
                        .not_uniform(i, &format!("reads `{t}`, a parameter each thread assigns")));
                }
                let thread_var = per_thread.iter().any(|(s, n, c)| {
                    *s == scope && n == t && chain.starts_with(c) && !shared_in(scope, t)
                });
                if thread_var && loop_var.as_deref() != Some(t) {
                    return Err(
                        self.not_uniform(i, &format!("reads `{t}`, a variable of each thread"))
                    );
                }
            }
        }
        Ok(Variables {
            vars,
            uniform,
            block_binds,
            result_refs,
        })
    }

    /// Is the punctuation at `i`, in an expression that starts at `from`, one
    /// that only reads: not a subscript, a dereference, an address, a member
    /// through a pointer, a brace, an increment or an assignment?
    fn reads_only(&self, i: usize, from: usize) -> bool {
        let t = self.text(i);
        let prev = if i > from { self.text(i - 1) } else { "(" };
        let unary = BEFORE_UNARY.contains(&prev);
        !(matches!(t, "[" | "->" | "++" | "--" | "{" | "}")
            || (unary && matches!(t, "*" | "&"))
            || crate::token::MODIFYING_OPERATORS.contains(&t))
    }

    /// An expression from sig `from` to `to` (exclusive) that every thread of
    /// a block computes alike, at the block's level: literals, operators,
    /// members, block indices and dimensions, constants, the names `known`
    /// takes, and calls of `UNIFORM_CALLS` and casts; no thread
    /// index, no subscript, no dereference, nothing assigned.
    ///
    /// An element of a read-only parameter (`const uint2 *ranges`, never
    /// assigned) at an index the block computes alike is such a value too
    /// (`ranges[blockIdx.y * tiles + blockIdx.x]`): every thread of the
    /// block reads the same memory, which the kernel does not write through
    /// that pointer.
    fn uniform_expr(
        &self,
        from: usize,
        to: usize,
        constants: &Constants,
        known: &dyn Fn(&str) -> bool,
    ) -> bool {
        let ident = |i: usize, t: &str, prev: &str| {
            if prev == "." {
                return true;
            }
            // a block group's member other than a query every thread reads
            // alike (those are taken whole below)
            if self.block_groups.contains(t) && self.text(i + 1) == "." {
                return false;
            }
            let call = self.text(i + 1) == "(";
            matches!(t, "blockIdx" | "blockDim" | "gridDim" | "warpSize")
                || (call && (UNIFORM_CALLS.contains(&t) || CAST_WORDS.contains(&t)))
                || (!call && (known(t) || constants.value(t).is_some() || CAST_WORDS.contains(&t)))
        };
        // `ranges[...]` of a read-only parameter at a uniform index: one value
        let element = |i: usize| {
            // `cg::this_thread_block()`, and what every thread of the block
            // reads alike from such a group (`cta.size()`, `cta.group_index()`)
            if let Some(after) = self.block_group_creation(i, to) {
                return Some(after);
            }
            if let Some((position, after)) = self.block_query(i, to) {
                return (position.uniform() && known(self.text(i))).then_some(after);
            }
            if let Some((_, uniform, after)) = self.tile_query(i).filter(|q| q.2 <= to) {
                return uniform.then_some(after);
            }
            let prev = if i > from { self.text(i - 1) } else { "(" };
            if self.text(i + 1) != "["
                || matches!(prev, "." | "->")
                || !self.read_only_param(self.text(i))
            {
                return None;
            }
            let close = self.partner(i + 1);
            (close < to && self.uniform_expr(i + 2, close, constants, known)).then_some(close + 1)
        };
        self.reading_expr(from, to, &ident, &element)
    }

    /// Is `name` a counter that per-thread loops and barrier loops of the
    /// body `open..close` each start afresh (C89 style, Rodinia's `lud`:
    /// `int i; for (i = 0; ...) per-thread; for (i = 0; ...) { ...
    /// __syncthreads(); }`)? Every use of it stands in a `for` statement
    /// whose first clause assigns it (`for (i = ...`, the value not read
    /// there), either one without a barrier (a restart: it runs within one
    /// phase, each thread's loop before the next thread's) or a barrier loop
    /// (a construct head, run once per block), and no restart stands inside
    /// such a barrier loop. No value then crosses from one loop to another,
    /// so one variable of the block serves them all: the barrier loops see
    /// only what their heads assign.
    fn restarted_counter(&self, name: &str, open: usize, close: usize) -> bool {
        // `for ( name = ... ;` statements: (start, end, holds a barrier)
        let mut loops: Vec<(usize, usize, bool)> = Vec::new();
        for k in open..close {
            if self.text(k) != "for"
                || self.text(k + 1) != "("
                || self.text(k + 2) != name
                || self.text(k + 3) != "="
            {
                continue;
            }
            let first_clause_end = (k + 4..close).find(|&j| self.text(j) == ";");
            let Some(first_clause_end) = first_clause_end else {
                return false;
            };
            if (k + 4..first_clause_end).any(|j| self.text(j) == name) {
                return false; // `for (i = i + 1; ...)` reads the value before
            }
            let end = self.statement_end(k, close);
            let barrier = self.heads.iter().any(|h| h.from == k + 2);
            if !barrier && self.has_barrier(k, end) {
                return false;
            }
            loops.push((k, end, barrier));
        }
        // restarts, and a barrier loop whose head needs the block's value
        if !loops.iter().any(|&(_, _, barrier)| !barrier)
            || !loops.iter().any(|&(_, _, barrier)| barrier)
        {
            return false;
        }
        let nested = loops.iter().any(|&(a, b, barrier)| {
            !barrier && loops.iter().any(|&(c, d, outer)| outer && c < a && b <= d)
        });
        if nested {
            return false;
        }
        (open..close)
            .filter(|&i| self.text(i) == name && !self.declared_at.contains(&i))
            .filter(|&i| !matches!(self.text(i.saturating_sub(1)), "." | "->" | "::"))
            .all(|i| loops.iter().any(|&(a, b, _)| a < i && i < b))
    }

    /// At `i`, the creation of the block's group (`cg::this_thread_block()`,
    /// qualified or not) ending before `to`: the index after it.
    fn block_group_creation(&self, i: usize, to: usize) -> Option<usize> {
        self.hazards
            .block_group_creation(i)
            .filter(|&after| after <= to)
    }

    /// At `i`, a position query of a block group variable ending before
    /// `to` (`cta.thread_rank()`, `hazard::BlockQuery`): what it reads and
    /// the index after it. Copies of the body write it with the builtins.
    fn block_query(&self, i: usize, to: usize) -> Option<(crate::hazard::BlockPosition, usize)> {
        if !self.block_handles.contains(self.text(i))
            || self.text(i + 1) != "."
            || self.text(i + 3) != "("
            || self.text(i + 4) != ")"
            || i + 4 >= to
            || (i > 0 && matches!(self.text(i - 1), "." | "->" | "::"))
        {
            return None;
        }
        crate::hazard::BlockPosition::of_member(self.text(i + 2)).map(|p| (p, i + 5))
    }

    /// Is `name` a parameter of the child that points to `const` memory
    /// (`const T *p`, `T const *__restrict__ p`), which the body never
    /// assigns?
    fn read_only_param(&self, name: &str) -> bool {
        let function = &self.program.functions[self.child];
        function.params.iter().any(|p| {
            p.name.as_deref() == Some(name) && {
                let words: Vec<&str> = p.declaration.split_whitespace().collect();
                let pointers = p.declaration.matches('*').count();
                let before_star = p.declaration.split('*').next().unwrap_or("");
                pointers == 1
                    && before_star.split_whitespace().any(|w| w == "const")
                    && !words.contains(&"&")
            }
        }) && {
            let (open, close) = (function.body_tokens.start, function.body_tokens.end);
            !(open..close).any(|i| self.text(i) == name && self.writes(i))
        }
    }

    /// The expression from sig `from` to `to` (exclusive), not empty, of
    /// numbers, punctuation that only reads (`reads_only`) and identifiers
    /// `ident` takes (given the index, the text and the token before).
    /// `element` may take an identifier at `i` with what follows as one
    /// value (`a[k]`), giving the index after it.
    fn reading_expr(
        &self,
        from: usize,
        to: usize,
        ident: &dyn Fn(usize, &str, &str) -> bool,
        element: &dyn Fn(usize) -> Option<usize>,
    ) -> bool {
        if from >= to {
            return false;
        }
        let mut i = from;
        while i < to {
            if self.sig[i].kind == TokenKind::Ident {
                if let Some(after) = element(i) {
                    i = after;
                    continue;
                }
            }
            let prev = if i > from { self.text(i - 1) } else { "(" };
            let ok = match self.sig[i].kind {
                TokenKind::Number => true,
                TokenKind::Ident => ident(i, self.text(i), prev),
                TokenKind::Punct => self.reads_only(i, from),
                _ => false,
            };
            if !ok {
                return false;
            }
            i += 1;
        }
        true
    }

    /// Is the identifier at `i` written or its address taken there? Not for
    /// `*p = x` (what `p` points to), `a.p = x` (a member), `&a[k]` (an
    /// element's address) or `a & p` (a bitwise and).
    fn writes(&self, i: usize) -> bool {
        let prev = if i > 0 { self.text(i - 1) } else { "" };
        let next = self.text(i + 1);
        if matches!(prev, "." | "->") {
            return false;
        }
        if prev == "*" && !matches!(next, "++" | "--") {
            return false;
        }
        if prev == "&" {
            let before = if i > 1 { Some(self.sig[i - 2]) } else { None };
            let binary = before.is_some_and(|t| {
                matches!(t.kind, TokenKind::Ident | TokenKind::Number)
                    || matches!(t.text(self.view), ")" | "]")
            });
            if binary || matches!(next, "[" | "." | "->") {
                return crate::token::MODIFYING_OPERATORS.contains(&next);
            }
        }
        is_modified_at(self.sig, i, self.view)
    }

    fn not_uniform(&self, i: usize, what: &str) -> Refusal {
        refuse(
            self.sig[i].span(),
            format!("the head of a construct holding a barrier {what}, so the threads of a block may not agree on it"),
            "compute the condition from parameters, block indices, dimensions and shared variables only",
        )
    }

    /// For `& name [ index ]` spanning sig `from` to `to` (exclusive) and
    /// nothing more, the index's range.
    fn element_address(&self, from: usize, to: usize) -> Option<(usize, usize)> {
        if to < from + 5
            || self.text(from) != "&"
            || self.sig[from + 1].kind != TokenKind::Ident
            || self.text(from + 2) != "["
            || self.text(to - 1) != "]"
        {
            return None;
        }
        let mut depth = 0usize;
        for i in from + 2..to {
            match self.text(i) {
                "[" | "(" => depth += 1,
                "]" | ")" => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 && i != to - 1 {
                        return None;
                    }
                }
                _ => {}
            }
        }
        Some((from + 3, to - 1))
    }

    /// The template arguments of the call of template `callee` named at
    /// `at`, its `(` at `open`, its arguments `args`, standing in the
    /// regions `chain`: the explicit ones (written as the caller runs
    /// them), then those deduced from a variable's or a literal's type, then
    /// the defaults. One set per callee and child.
    fn instance(
        &self,
        at: usize,
        open: usize,
        callee: FunctionId,
        args: &[(usize, usize)],
        chain: &[usize],
    ) -> Result<Vec<(String, String)>, Refusal> {
        use crate::template_instance as ti;
        let function = &self.program.functions[callee];
        let name = self.text(at);
        let span = self.sig[at].span();
        let fail = |why: String| {
            Err(refuse(
                span,
                why,
                format!("write the template arguments at the call (`{name}<float>(...)`), or remove `threshold`/`floor`"),
            ))
        };
        if function.template_params.iter().any(|p| p.is_pack) {
            return fail(format!("`{name}` is a variadic template; the split runs in place a template callee with a fixed list of parameters"));
        }
        // `name<a, b>(`: the arguments between the brackets
        let mut explicit: Vec<Vec<String>> = Vec::new();
        if open > at + 2 {
            let mut words = Vec::new();
            let mut depth = 0i32;
            let mut i = at + 2;
            while i < open - 1 {
                let t = self.text(i);
                match t {
                    "<" => depth += 1,
                    ">" => depth -= 1,
                    ">>" => depth -= 2,
                    _ => {}
                }
                if t == "," && depth == 0 {
                    explicit.push(std::mem::take(&mut words));
                } else if matches!(t, "(" | "[") {
                    let close = self.partner(i);
                    words.extend((i..=close).map(|j| self.word(j)));
                    i = close;
                } else {
                    words.push(self.word(i));
                }
                i += 1;
            }
            explicit.push(words);
        }
        if explicit.len() > function.template_params.len() {
            return fail(format!(
                "the call of `{name}` gives more template arguments than it has parameters"
            ));
        }
        let mut instance: Vec<(String, String)> = Vec::new();
        for (k, p) in function.template_params.iter().enumerate() {
            let is_type = ti::declares_type(&p.declaration);
            let text = if let Some(words) = explicit.get(k) {
                ti::argument_text(words, is_type)
            } else if let Some(t) = is_type
                .then(|| self.deduced(callee, &p.name, args, chain))
                .flatten()
            {
                t
            } else if let Some(d) = &p.default {
                let d = ti::substitute(d, &instance);
                if is_type
                    || crate::lexer::lex_text(&d)
                        .iter()
                        .filter(|t| t.kind.is_significant())
                        .count()
                        == 1
                {
                    d
                } else {
                    format!("({d})")
                }
            } else {
                return fail(format!("the split cannot tell `{}` of `{name}`: deduced only from an argument that is a variable of a named type or a literal, passed to a parameter `{0}`, `const {0} &` or `{0} *`", p.name));
            };
            if is_type && text.contains(['*', '&', '[', '(']) {
                return fail(format!("`{name}` runs with `{}` = `{text}`, a pointer, reference, array or function type, which the split does not write in place of the parameter's name", p.name));
            }
            instance.push((p.name.clone(), text));
        }
        if let Some(other) = self.instances.get(&callee).filter(|o| **o != instance) {
            let list = |a: &[(String, String)]| {
                a.iter()
                    .map(|(_, v)| v.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return fail(format!(
                "`{name}` runs in place as `{name}<{}>` and as `{name}<{}>`; the split runs one instance of a template callee per child",
                list(other),
                list(&instance)
            ));
        }
        Ok(instance)
    }

    /// Template parameter `tparam` of `callee` deduced from the call's
    /// arguments: the first parameter that takes it by value, by `const &`
    /// or through a pointer, whose argument is a variable of a named type
    /// (declared in the regions `chain` or a parameter) or a literal.
    fn deduced(
        &self,
        callee: FunctionId,
        tparam: &str,
        args: &[(usize, usize)],
        chain: &[usize],
    ) -> Option<String> {
        use crate::template_instance as ti;
        let function = &self.program.functions[callee];
        function
            .params
            .iter()
            .zip(args)
            .find_map(|(p, &(from, to))| {
                let pname = p.name.as_deref()?;
                let tokens = crate::lexer::lex_text(&p.declaration);
                let mut words: Vec<&str> = tokens
                    .iter()
                    .filter(|t| t.kind.is_significant())
                    .map(|t| &p.declaration[t.range()])
                    .collect();
                if words.pop() != Some(pname) {
                    return None;
                }
                let how = ti::taken(&words, tparam)?;
                if to != from + 1 {
                    return None;
                }
                let arg = match ti::literal_type(self.text(from)) {
                    Some(t) => t.to_string(),
                    None if self.sig[from].kind == TokenKind::Ident => {
                        self.declared_type(from, chain)?
                    }
                    None => return None,
                };
                ti::deduced(&arg, how)
            })
    }

    /// The type of the variable named at `i` (in the regions `chain`) as
    /// declared where the call stands: in a declaration of an enclosing
    /// region before it, or a parameter of the function it is in.
    fn declared_type(&self, i: usize, chain: &[usize]) -> Option<String> {
        let name = self.text(i);
        let caller = match self.scope() {
            None => self.child,
            Some(k) => self.inlines[k].callee,
        };
        let function = &self.program.functions[caller];
        let body = function.body_tokens.clone();
        let local = self
            .declarations
            .iter()
            .rev()
            .filter(|(_, c, s, _)| *s < i && body.contains(s) && chain.starts_with(c))
            .find_map(|(_, _, s, e)| {
                let decls = declarators(self.sig, self.view, *s, *e)?;
                let d = decls.iter().find(|d| d.name == name)?;
                Some((
                    d.array,
                    declarator_type(self.sig, self.view, *s, &decls[0], d)
                        .map(|t| self.instantiate_at(*s, &t)),
                ))
            });
        match local {
            Some((false, t)) => t,
            Some((true, _)) => None,
            None => function
                .params
                .iter()
                .find(|p| p.name.as_deref() == Some(name))
                .and_then(|p| param_storage(&self.instantiate(caller, &p.declaration), name)),
        }
    }

    /// What the split writes for the name at `i` in the body of a function
    /// it runs: a template callee's argument for its parameter's name, a
    /// `__shared__` variable's new name (`Walk::renames`).
    fn instance_word(&self, i: usize) -> Option<&str> {
        if (self.instances.is_empty() && self.renames.is_empty())
            || self.sig[i].kind != TokenKind::Ident
            || (i > 0 && matches!(self.text(i - 1), "." | "->" | "::"))
        {
            return None;
        }
        let t = self.text(i);
        let within = |f: &FunctionId| self.program.functions[*f].body_tokens.contains(&i);
        self.instances
            .iter()
            .chain(&self.renames)
            .filter(|(f, _)| within(f))
            .find_map(|(_, words)| words.iter().find(|(n, _)| n == t))
            .map(|(_, v)| v.as_str())
    }

    /// The token at `i` as the instance it stands in writes it.
    fn word(&self, i: usize) -> String {
        self.instance_word(i).unwrap_or(self.text(i)).to_string()
    }

    /// `text`, from `f`'s declaration or body, as `f`'s instance writes it.
    fn instantiate(&self, f: FunctionId, text: &str) -> String {
        match self.instances.get(&f) {
            Some(args) => crate::template_instance::substitute(text, args),
            None => text.to_string(),
        }
    }

    /// `text`, read from the function body holding token `i`, as that
    /// body's instance writes it.
    fn instantiate_at(&self, i: usize, text: &str) -> String {
        match self
            .instances
            .iter()
            .find(|(f, _)| self.program.functions[**f].body_tokens.contains(&i))
        {
            Some((_, args)) => crate::template_instance::substitute(text, args),
            None => text.to_string(),
        }
    }

    /// Every name of a template parameter in the bodies of the template
    /// callees run in place, and what their instances write there.
    fn instance_tokens(&self) -> Vec<(Span, String)> {
        let functions: HashSet<FunctionId> = self
            .instances
            .keys()
            .chain(self.renames.keys())
            .copied()
            .collect();
        let mut out: Vec<(Span, String)> = functions
            .into_iter()
            .flat_map(|f| self.program.functions[f].body_tokens.clone())
            .filter_map(|i| Some((self.sig[i].span(), self.instance_word(i)?.to_string())))
            .collect();
        // the tiles' queries in every body the split runs
        let mut bodies = vec![self.program.functions[self.child].body_tokens.clone()];
        bodies.extend(
            self.inlines
                .iter()
                .map(|i| self.program.functions[i.callee].body_tokens.clone()),
        );
        for i in bodies.into_iter().flatten() {
            if let Some((text, _, after)) = self.tile_query(i) {
                out.push((Span::from(self.sig[i].start..self.sig[after - 1].end), text));
            }
        }
        out.sort_by_key(|(s, _)| s.start());
        out.dedup();
        out
    }

    /// The source of `sig[from..to)`, a template callee's parameters
    /// written as its arguments (`Walk::instantiate`).
    fn text_of(&self, from: usize, to: usize) -> String {
        if from >= to {
            return String::new();
        }
        let mut out = String::new();
        let mut at = self.sig[from].start;
        for i in from..to {
            if let Some(word) = self.instance_word(i) {
                out.push_str(&self.view[at..self.sig[i].start]);
                out.push_str(word);
                at = self.sig[i].end;
            }
        }
        out.push_str(&self.view[at..self.sig[to - 1].end]);
        out
    }

    /// An initializer from sig `from` to `to` (exclusive) that gives the same
    /// value in every phase: indices, dimensions, literals, operators, and
    /// parameters and variables nothing assigns; also an element's address
    /// `&p[i]` of such a pointer and index (an address, no memory read).
    fn stable(
        &self,
        from: usize,
        to: usize,
        params: &[&str],
        assigned: &dyn Fn(&str) -> bool,
        recomputable: &HashSet<String>,
        constants: &Constants,
    ) -> bool {
        if let Some(index) = self.element_address(from, to) {
            let base = self.text(from + 1);
            return ((params.contains(&base) && !assigned(base)) || recomputable.contains(base))
                && self.stable(index.0, index.1, params, assigned, recomputable, constants);
        }
        let ident = |i: usize, t: &str, prev: &str| {
            if prev == "." {
                return matches!(t, "x" | "y" | "z");
            }
            let builtin = matches!(t, "threadIdx" | "blockIdx" | "blockDim" | "gridDim");
            let param = params.contains(&t) && !assigned(t);
            let known = builtin
                || param
                || constants.value(t).is_some()
                || recomputable.contains(t)
                || CAST_WORDS.contains(&t);
            let call = self.text(i + 1) == "(";
            known
                && (!call
                    || matches!(
                        t,
                        "sizeof" | "int" | "unsigned" | "long" | "float" | "double"
                    ))
        };
        // the block's group, made again in each phase, and its queries
        let element = |i: usize| {
            self.block_group_creation(i, to)
                .or_else(|| {
                    self.block_query(i, to)
                        .filter(|_| recomputable.contains(self.text(i)))
                        .map(|(_, after)| after)
                })
                // a tile of it, and a tile's queries
                .or_else(|| self.tile_creation(i, to).map(|(_, after)| after))
                .or_else(|| {
                    self.tile_query(i)
                        .filter(|&(_, _, after)| after <= to)
                        .map(|(_, _, after)| after)
                })
        };
        self.reading_expr(from, to, &ident, &element)
    }
}

/// One declarator of a declaration statement.
#[derive(Debug, Clone, Default)]
struct Declarator {
    name: String,
    /// Significant index of the declarator's first token (the statement's
    /// first, for the first declarator).
    start: usize,
    /// Significant index of the name.
    at: usize,
    /// `= ...` follows.
    init: bool,
    /// Where the initializer starts (after `=`) and ends (exclusive).
    init_from: usize,
    init_to: usize,
    /// `(...)` or `{...}` follows the name.
    paren_init: bool,
    /// `[N]` follows the name; `array_end`: after the last `]`.
    array: bool,
    array_end: usize,
}

/// The declarators of the declaration statement `sig[s..e]` (its `;`
/// last), or `None` when it is not one (a heuristic on tokens: one or more
/// type words before a name, then `=`, `[`, `(`, `{`, `,` or `;`).
fn declarators(sig: &[Token], view: &str, s: usize, e: usize) -> Option<Vec<Declarator>> {
    if e <= s + 1 || sig[e - 1].text(view) != ";" {
        return None;
    }
    let first = sig[s].text(view);
    if sig[s].kind != TokenKind::Ident || NOT_A_TYPE.contains(&first) {
        return None;
    }
    // `<` is a template's bracket only where the type has one (before the
    // first declarator's `=`, `(`, `{`, `[` or `,`); in initializers it is
    // an operator (`int i = ..., v = i < n ? a[i] : 0, w;`)
    let templated = sig[s..e - 1]
        .iter()
        .take_while(|t| !matches!(t.text(view), "=" | "(" | "{" | "[" | ","))
        .any(|t| t.text(view) == "<");
    let angles = if templated {
        Angles::Brackets
    } else {
        Angles::Operators
    };
    let parts = split_top_level(&sig[s..e - 1], view, angles);
    let mut out = Vec::new();
    let mut offset = s;
    for (n, part) in parts.iter().enumerate() {
        // first token of the declarator (after the type, for the first)
        let q = part
            .iter()
            .position(|t| matches!(t.text(view), "=" | "[" | "(" | "{"))
            .unwrap_or(part.len());
        if q == 0 || part[q - 1].kind != TokenKind::Ident {
            return None;
        }
        let type_tokens = &part[..q - 1];
        if n == 0 {
            if type_tokens.is_empty() {
                return None;
            }
            let ok = type_tokens.iter().all(|t| {
                t.kind == TokenKind::Ident
                    || t.kind == TokenKind::Number
                    || matches!(t.text(view), "::" | "<" | ">" | "*" | "&" | "&&" | ",")
            });
            if !ok || type_tokens.last().is_some_and(|t| t.text(view) == "::") {
                return None;
            }
        } else if !type_tokens
            .iter()
            .all(|t| matches!(t.text(view), "*" | "&"))
        {
            return None;
        }
        let at = offset + q - 1;
        let mut d = Declarator {
            name: part[q - 1].text(view).to_string(),
            start: offset,
            at,
            ..Default::default()
        };
        let mut j = q;
        while j < part.len() && part[j].text(view) == "[" {
            d.array = true;
            let close = (j..part.len()).find(|&k| part[k].text(view) == "]")?;
            j = close + 1;
            d.array_end = offset + j;
        }
        match part.get(j).map(|t| t.text(view)) {
            Some("=") => {
                d.init = true;
                d.init_from = offset + j + 1;
                d.init_to = offset + part.len();
            }
            Some("(") | Some("{") => d.paren_init = true,
            None => {}
            _ => return None,
        }
        out.push(d);
        offset += part.len() + 1;
    }
    Some(out)
}

/// The declaration's own type (`const int` of `const int *p = a, n = 0;`):
/// its first tokens up to the first declarator's `*` or `&`.
fn base_type(sig: &[Token], view: &str, s: usize, first: &Declarator) -> std::ops::Range<usize> {
    let end = (s..first.at)
        .find(|&i| matches!(sig[i].text(view), "*" | "&" | "&&"))
        .unwrap_or(first.at);
    s..end
}

/// The type of a variable kept per thread, declared by `d` in the statement
/// at `s` whose first declarator is `first`: the statement's own type
/// (`base_type`), then the declarator's own `*`s (`int *p` of `int n, *p;`);
/// `const` of the variable itself left out; `None` for `auto`, references
/// and storage classes.
fn declarator_type(
    sig: &[Token],
    view: &str,
    s: usize,
    first: &Declarator,
    d: &Declarator,
) -> Option<String> {
    let base = base_type(sig, view, s, first);
    let own = if d.start == s {
        base.end..d.at
    } else {
        d.start..d.at
    };
    let words: Vec<&str> = base.chain(own).map(|i| sig[i].text(view)).collect();
    type_text(&words)
}

fn type_text(words: &[&str]) -> Option<String> {
    if words.is_empty()
        || words.iter().any(|w| {
            matches!(
                *w,
                "auto"
                    | "&"
                    | "&&"
                    | "static"
                    | "extern"
                    | "register"
                    | "thread_local"
                    | "__shared__"
                    | "decltype"
            )
        })
    {
        return None;
    }
    let last_star = words.iter().rposition(|w| *w == "*");
    let kept: Vec<&str> = words
        .iter()
        .enumerate()
        .filter(|(i, w)| {
            !(matches!(**w, "const" | "volatile" | "constexpr")
                && last_star.map_or(true, |s| *i > s))
        })
        .map(|(_, w)| *w)
        .collect();
    if kept.is_empty() {
        return None;
    }
    Some(
        kept.join(" ")
            .replace(" :: ", "::")
            .replace(" < ", "<")
            .replace(" >", ">"),
    )
}

/// The type of an assigned parameter, from its declaration.
fn param_storage(declaration: &str, name: &str) -> Option<String> {
    let tokens = crate::lexer::lex_text(declaration);
    let words: Vec<&str> = tokens
        .iter()
        .filter(|t| t.kind.is_significant())
        .map(|t| &declaration[t.range()])
        .collect();
    let at = words.iter().rposition(|w| *w == name)?;
    if at + 1 != words.len() {
        return None; // arrays and the like
    }
    type_text(&words[..at])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(src: &str) -> Result<Phased, Refusal> {
        let file = crate::source::SourceFile::new("t.cu", src.as_bytes().to_vec());
        let program = crate::parser::parse(&file, crate::lexer::lex(&file));
        let hazards = Hazards::new(&program);
        let constants = Constants::of(&program);
        let child = program.function_named("child").expect("child");
        let shape = SerialShape {
            block: Some(128),
            dynamic_shared: Some(1024),
        };
        phased(&program, &hazards, &constants, child, shape)
    }

    #[test]
    fn reduction_recomputes_the_index() {
        let p = split(
            "__global__ void child(const float *v, float *out, int n) {\n  __shared__ float s[128];\n  int tid = threadIdx.x;\n  float acc = 0.0f;\n  for (int j = tid; j < n; j += blockDim.x) acc += v[j];\n  s[tid] = acc;\n  __syncthreads();\n  for (int k = blockDim.x / 2; k > 0; k >>= 1) {\n    if (tid < k) s[tid] += s[tid + k];\n    __syncthreads();\n  }\n  if (tid == 0) *out = s[0];\n}\n",
        )
        .expect("splits");
        assert_eq!(p.shared.len(), 1);
        assert_eq!(p.vars.len(), 1, "{:?}", p.vars);
        assert_eq!(p.vars[0].name, "tid");
        assert!(matches!(p.vars[0].keep, Keep::Recompute { .. }));
        assert_eq!(p.vars[0].used_in.len(), 2);
        assert!(!p.done_flags);
        assert_eq!(p.bound, None);
        assert_eq!(p.steps.len(), 3, "{:?}", p.steps);
        assert!(
            matches!(&p.steps[1], Step::Construct { body, otherwise: None, .. } if body.len() == 1)
        );
    }

    #[test]
    fn declarators_of_one_statement_are_kept_apart() {
        let p = split(
            "__global__ void child(const int *a, int *b, int n) {\n  __shared__ int s[128];\n  int i = blockIdx.x * blockDim.x + threadIdx.x, v = i < n ? a[i] : 0, t = 2, *q = b + i, w;\n  w = v * t;\n  s[threadIdx.x] = v;\n  __syncthreads();\n  if (i < n) *q = v + w + s[0];\n}\n",
        )
        .expect("splits");
        let kept: Vec<(&str, &str)> = p
            .vars
            .iter()
            .filter_map(|v| match &v.keep {
                Keep::Store { storage, .. } => Some((v.name.as_str(), storage.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(
            kept,
            [("i", "int"), ("v", "int"), ("q", "int *"), ("w", "int")]
        );
        // `i`'s rewrites hold the commas: `;`, `; int` before `t` (not kept), `;`
        let Keep::Store { rewrites, .. } = &p.vars[0].keep else {
            panic!("{:?}", p.vars[0]);
        };
        let texts: Vec<&str> = rewrites.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(texts, ["i", ";", "; int", ";", ";"]);
        // a template type with `<` in an initializer: refused
        let e = split(
            "__global__ void child(const int *a, int *b, int n) {\n  __shared__ int s[128];\n  Pair<int, int> i = make(threadIdx.x < n, a[0]), j;\n  s[threadIdx.x] = 1;\n  __syncthreads();\n  b[0] = i.x + s[0];\n}\n",
        );
        let why = e.expect_err("refused").why;
        assert!(why.contains("declared with others"), "{why}");
    }

    #[test]
    fn loaded_value_is_kept_and_early_return_flags() {
        let p = split(
            "__global__ void child(const int *a, int *b, int n) {\n  __shared__ int s[64];\n  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= n) return;\n  const int v = a[i];\n  s[threadIdx.x] = v;\n  __syncthreads();\n  b[i] = v + s[0];\n}\n",
        )
        .expect("splits");
        let v = p.vars.iter().find(|v| v.name == "v").expect("v");
        match &v.keep {
            Keep::Store {
                storage, rewrites, ..
            } => {
                assert_eq!(storage, "int");
                assert_eq!(rewrites.len(), 1);
                assert_eq!(rewrites[0].1, "v");
            }
            k => panic!("{k:?}"),
        }
        let i = p.vars.iter().find(|v| v.name == "i").expect("i");
        assert!(matches!(i.keep, Keep::Recompute { .. }));
        assert!(p.done_flags);
        assert_eq!(p.bound, Some(128));
    }

    #[test]
    fn block_uniform_return_marks_the_block() {
        // the textbook's recursive reduction: the stop condition reads only a
        // parameter, so the whole block returns together; `odata` is an
        // element's address, computed again in each phase
        let p = split(
            "__global__ void child(int *g_idata, int *g_odata, unsigned int isize) {\n  unsigned int tid = threadIdx.x;\n  int *idata = g_idata + blockIdx.x * blockDim.x;\n  int *odata = &g_odata[blockIdx.x];\n  if (isize == 2) {\n    if (tid == 0) *odata = idata[0] + idata[1];\n    return;\n  }\n  int istride = isize >> 1;\n  if (tid < istride) idata[tid] += idata[tid + istride];\n  __syncthreads();\n  if (tid == 0) *odata = idata[0];\n}\n",
        )
        .expect("splits");
        assert!(p.block_done);
        assert!(!p.done_flags);
        assert_eq!(p.bound, None);
        assert!(!p.holds_arrays());
        let odata = p.vars.iter().find(|v| v.name == "odata").expect("odata");
        assert!(
            matches!(odata.keep, Keep::Recompute { .. }),
            "{:?}",
            odata.keep
        );
        // a return under a thread's condition still marks each thread
        let p = split(
            "__global__ void child(int *a, int n) {\n  if (threadIdx.x >= n) return;\n  a[threadIdx.x] = 1;\n  __syncthreads();\n  a[0] = 2;\n}\n",
        )
        .expect("splits");
        assert!(p.done_flags);
        assert!(!p.block_done);
    }

    #[test]
    fn refusals() {
        let cases = [
            ("  if (threadIdx.x < 4) { __syncthreads(); }\n", "threadIdx"),
            (
                "  int t = threadIdx.x;\n  while (t < 4) { __syncthreads(); }\n",
                "variable of each thread",
            ),
            // a `do` loop whose condition assigns a parameter
            ("  do { __syncthreads(); } while (n-- > 0);\n", "assigns"),
            ("  switch (n) { case 0: __syncthreads(); }\n", "`switch`"),
            (
                "  extern __shared__ __align__(8) int s[4];\n  s[0] = 1;\n  __syncthreads();\n",
                "extern",
            ),
            // a `break` whose condition the threads may not agree on
            (
                "  for (int k = 0; k < n; ++k) { if (a[threadIdx.x]) break; __syncthreads(); }\n",
                "reads `threadIdx`",
            ),
            // a `break` inside a statement of each thread
            (
                "  for (int k = 0; k < n; ++k) { a[k] = 1; if (a[0]) { a[1] = 2; break; } __syncthreads(); }\n",
                "`break`",
            ),
            // a `continue` that would skip the vote folded at the end of
            // each round
            (
                "  int k = 0;\n  while (__syncthreads_or(k < n)) { ++a[0]; if (n > 4) continue; __syncthreads(); }\n",
                "`continue`",
            ),
            (
                "  auto v = a[threadIdx.x];\n  __syncthreads();\n  a[0] = v;\n",
                "named type",
            ),
            // a `do` loop's body in braces
            ("  do __syncthreads(); while (n-- > 0);\n", "without braces"),
            (
                "  for (int k = 0; k < f(n); ++k) { __syncthreads(); }\n",
                "calls `f`",
            ),
            (
                "  for (int k = 0; __syncthreads_or(k < n); ++k) { a[k] = 1; }\n",
                "`for` loop",
            ),
            (
                "  while (__syncthreads_or(a[0]) && __syncthreads_and(a[1])) { a[0] = 0; }\n",
                "two block votes",
            ),
            (
                "  int k = 0;\n  while (__syncthreads_or(k++ < n)) { a[k] = 1; }\n",
                "assigns or waits",
            ),
            // two votes in one statement
            (
                "  int c = __syncthreads_count(a[threadIdx.x] > 0) + __syncthreads_or(a[0]);\n  a[0] = c;\n",
                "does not take",
            ),
        ];
        for (body, expect) in cases {
            let src = format!("__device__ int f(int x) {{ return x; }}\n__global__ void child(int *a, int n) {{\n{body}}}\n");
            let e = split(&src).expect_err(body);
            assert!(e.why.contains(expect), "{body}: {}", e.why);
        }
    }

    #[test]
    fn block_votes_in_heads_fold_every_thread() {
        // do { } while (__syncthreads_or(changed)): the fold at the body's end
        let p = split("__global__ void __launch_bounds__(64) child(int *a, int n) {\n  __shared__ int s[64];\n  bool changed;\n  do {\n    changed = false;\n    int v = s[threadIdx.x];\n    __syncthreads();\n    if (v > 0) { s[threadIdx.x] = v - 1; changed = true; }\n  } while (__syncthreads_or(changed));\n  a[threadIdx.x] = s[threadIdx.x];\n}\n")
            .expect("splits");
        assert_eq!(p.votes.len(), 1);
        assert_eq!(p.votes[0].op, VoteOp::Or);
        let Some(Step::Construct {
            body,
            tail: Some(_),
            ..
        }) = p.steps.iter().find(|s| matches!(s, Step::Construct { .. }))
        else {
            panic!("a do loop: {:?}", p.steps)
        };
        let Some(Step::Phase(last)) = body.last() else {
            panic!("the fold ends the body")
        };
        assert_eq!(p.phases[*last].vote, Some(0));
        let changed = p.vars.iter().find(|v| v.name == "changed").expect("kept");
        assert!(changed.used_in.contains(last), "{changed:?}");
        // while (__syncthreads_count(...) > 0): folded before the loop and
        // at the end of each round; if (__syncthreads_and(...)) before the if
        let p = split("__global__ void __launch_bounds__(64) child(int *a, int n) {\n  unsigned v = a[threadIdx.x];\n  while (__syncthreads_count(v != 1u) > 0) {\n    if (v != 1u) v = v / 2u;\n  }\n  if (__syncthreads_and(v == 1u)) {\n    a[threadIdx.x] = 0;\n  }\n}\n")
            .expect("splits");
        assert_eq!(p.votes.len(), 2);
        let folds = p.phases.iter().filter(|ph| ph.vote.is_some()).count();
        assert_eq!(folds, 3);
        assert!(matches!(p.steps.first(), Some(Step::Phase(q)) if p.phases[*q].vote.is_none()));
    }

    /// A block reduction helper in the style of real code: its own `tid`,
    /// a parameter `v`, a result kept across its last barrier.
    const BLOCK_SUM: &str = "__device__ int block_sum(int *red, int v) {\n  const int tid = threadIdx.x;\n  red[tid] = v;\n  __syncthreads();\n  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {\n    if (tid < stride) red[tid] += red[tid + stride];\n    __syncthreads();\n  }\n  int result = red[0];\n  __syncthreads();\n  return result;\n}\n";

    #[test]
    fn callee_and_child_keep_their_own_names() {
        // the child's `tid` and `v` and the callee's `tid` and parameter `v`
        let p = split(&format!("{BLOCK_SUM}__global__ void child(const int *x, int *out, int n) {{\n  __shared__ int red[128];\n  const int tid = threadIdx.x;\n  int v = tid < n ? x[tid] : 0;\n  int total = block_sum(red, v);\n  if (tid == 0) out[0] = total + v;\n}}\n"))
            .expect("splits");
        let scopes = |name: &str| -> Vec<Scope> {
            p.vars
                .iter()
                .filter(|v| v.name == name)
                .map(|v| v.scope)
                .collect()
        };
        // each `tid` recomputed in its own scope; the child's `v` kept, the
        // callee's `result` kept in the callee's scope
        assert_eq!(scopes("tid"), [None, Some(0)]);
        assert_eq!(scopes("v"), [None]);
        assert_eq!(scopes("result"), [Some(0)]);
        assert!(p
            .vars
            .iter()
            .filter(|v| v.name == "tid")
            .all(|v| matches!(v.keep, Keep::Recompute { .. })));
        // the child's `v` is read in the callee's phases only where its
        // argument is bound: the first, which reads the parameter `v`
        let v = p.vars.iter().find(|v| v.name == "v").expect("v");
        let callee_phases: Vec<usize> = v
            .used_in
            .iter()
            .copied()
            .filter(|&q| q != *v.used_in.last().expect("a use"))
            .collect();
        assert_eq!(callee_phases.len(), 1, "{:?}", v.used_in);
    }

    #[test]
    fn shared_arrays_may_not_reach_atomics_through_pointers() {
        let bump = "__device__ void bump(unsigned *h, unsigned v) { atomicAdd(&h[v & 63], 1u); }\n__device__ void put(unsigned *h, unsigned v) { h[v & 63] = v; }\n";
        let body = |call: &str| {
            format!("{bump}__global__ void child(const unsigned *in) {{\n  __shared__ unsigned hist[64];\n  unsigned *base = hist + 0;\n  hist[threadIdx.x % 64] = 0;\n  __syncthreads();\n  {call};\n}}\n")
        };
        // through a pointer derived from the array, to a function's atomic
        let e = split(&body("bump(base, in[threadIdx.x])")).expect_err("refused");
        assert!(
            e.why.contains("pointer into a shared array `base`"),
            "{}",
            e.why
        );
        let e = split(&body("bump(hist, in[threadIdx.x])")).expect_err("refused");
        assert!(e.why.contains("the shared array `hist`"), "{}", e.why);
        // a function without atomics takes the local array
        split(&body("put(base, in[threadIdx.x])")).expect("splits");
    }

    #[test]
    fn one_callee_run_in_place_twice() {
        let p = split(&format!("{BLOCK_SUM}__global__ void child(const int *x, int *out) {{\n  __shared__ int red[128];\n  int v = x[threadIdx.x];\n  int sum = block_sum(red, v);\n  int squares = block_sum(red, v * v);\n  if (threadIdx.x == 0) {{ out[0] = sum; out[1] = squares; }}\n}}\n"))
            .expect("splits");
        assert_eq!(p.inlined.len(), 2);
        // one shared array for both calls, as in CUDA
        assert_eq!(p.shared.len(), 1);
        let result: Vec<Scope> = p
            .vars
            .iter()
            .filter(|v| v.name == "result")
            .map(|v| v.scope)
            .collect();
        assert_eq!(result, [Some(0), Some(1)]);
    }

    #[test]
    fn callee_names_the_caller_may_not_take() {
        // the call's target has the name of the callee's own result
        // variable: the result goes through a reference to the caller's
        let p = split(&format!("{BLOCK_SUM}__global__ void child(const int *x, int *out) {{\n  __shared__ int red[128];\n  int result = 0;\n  result = block_sum(red, x[threadIdx.x]);\n  __syncthreads();\n  out[threadIdx.x] = result;\n}}\n"))
            .expect("splits");
        assert_eq!(p.result_refs.len(), 1);
        let r = &p.result_refs[0];
        assert_eq!((r.call, r.target.as_str()), (0, "result"));
        assert_eq!(
            p.phases[r.phase].result.as_ref().map(|(_, w)| w.as_str()),
            Some("dpopt_result0 =")
        );
        // an argument reads the child's `stride`, which the callee's loop
        // declares around the phase that binds the argument
        let callee = "__device__ void add_up(int *red, int w) {\n  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {\n    if (threadIdx.x < stride) red[threadIdx.x] += w * red[threadIdx.x + stride];\n    __syncthreads();\n  }\n}\n";
        let e = split(&format!("{callee}__global__ void child(int *x) {{\n  __shared__ int red[128];\n  int stride = x[threadIdx.x];\n  red[threadIdx.x] = stride;\n  __syncthreads();\n  add_up(red, stride);\n  x[threadIdx.x] = red[0] + stride;\n}}\n"))
            .expect_err("refused");
        assert!(
            e.why
                .contains("declares a `stride` of its own around its phases"),
            "{}",
            e.why
        );
        // outside the loop, the same names are apart
        split(&format!("{BLOCK_SUM}__global__ void child(const int *x, int *out) {{\n  __shared__ int red[128];\n  int stride = x[threadIdx.x];\n  int s = block_sum(red, stride);\n  out[threadIdx.x] = s + stride;\n}}\n"))
            .expect("splits");
    }

    #[test]
    fn template_callees_run_their_instance_in_place() {
        let warp = "template <typename T> __device__ T warp_sum(T val) {\n  for (int m = 16; m > 0; m >>= 1)\n    val += __shfl_xor_sync(0xffffffffu, val, m);\n  return val;\n}\n";
        let block = "template <typename T, int W = 32> __device__ T block_sum(T val) {\n  static __shared__ T part[W];\n  int lane = threadIdx.x % 32, wid = threadIdx.x / 32;\n  val = warp_sum<T>(val);\n  if (lane == 0) part[wid] = val;\n  __syncthreads();\n  val = threadIdx.x < blockDim.x / 32 ? part[lane] : (T)0;\n  val = warp_sum(val);\n  return val;\n}\n";
        let child = |call: &str| {
            format!("{warp}{block}__global__ void child(const float *x, float *out) {{\n  float sum = x[threadIdx.x];\n  {call}\n  if (threadIdx.x == 0) out[blockIdx.x] = sum;\n}}\n")
        };
        // explicit, deduced from a variable, deduced from a literal's type
        for call in [
            "sum = block_sum<float>(sum);",
            "sum = block_sum(sum);",
            "sum = block_sum<float, 32>(sum + 1.0f);",
        ] {
            let p = split(&child(call)).unwrap_or_else(|e| panic!("{call}: {}", e.why));
            assert_eq!(p.inlined.len(), 3, "{call}");
            let words: BTreeSet<&str> = p.instances.iter().map(|(_, w)| w.as_str()).collect();
            assert_eq!(words, BTreeSet::from(["float", "32"]), "{call}");
            // every `T` and `W` of the block sum's body (`part`'s type and
            // size, `warp_sum<T>`, `(T)0`), none of its signature's
            assert_eq!(p.instances.len(), 4, "{call}");
        }
        let e = split(&child("sum = block_sum(sum * 2.0f);")).expect_err("refused");
        assert!(
            e.why
                .starts_with("the split cannot tell `T` of `block_sum`"),
            "{}",
            e.why
        );
        let e = split(&child("sum = block_sum<float *>(sum);")).expect_err("refused");
        assert!(
            e.why
                .contains("a pointer, reference, array or function type"),
            "{}",
            e.why
        );
        let e = split(&child(
            "sum = block_sum<float>(sum);\n  sum = block_sum<double>(sum);",
        ))
        .expect_err("refused");
        assert!(
            e.why
                .contains("runs in place as `block_sum<float, 32>` and as `block_sum<double, 32>`"),
            "{}",
            e.why
        );
        let variadic =
            "template <typename... Ts> __device__ void wait(Ts... xs) {\n  __syncthreads();\n}\n";
        let e = split(&format!("{variadic}__global__ void child(int *out) {{\n  wait(1);\n  out[threadIdx.x] = 0;\n}}\n"))
            .expect_err("refused");
        assert!(e.why.contains("is a variadic template"), "{}", e.why);
    }

    #[test]
    fn tiles_of_the_block_exchange_and_query_through_the_builtins() {
        let child = "__global__ void child(const int *x, int *out) {\n  cg::thread_block cta = cg::this_thread_block();\n  cg::thread_block_tile<16> tile = cg::tiled_partition<16>(cta);\n  __shared__ int part[8];\n  int v = x[threadIdx.x];\n  for (int d = tile.size() / 2; d > 0; d /= 2) v += tile.shfl_down(v, d);\n  unsigned b = tile.ballot(v > 0);\n  int r = cg::reduce(tile, v, cg::plus<int>());\n  if (tile.thread_rank() == 0) part[tile.meta_group_rank()] = r + (int)b;\n  cg::sync(cta);\n  if (threadIdx.x == 0) out[blockIdx.x] = part[0];\n}\n";
        let p = split(child).expect("splits");
        let tiles: Vec<(WarpOp, Option<&str>)> = p
            .exchanges
            .iter()
            .map(|x| (x.op, x.tile.as_deref()))
            .collect();
        assert_eq!(
            tiles,
            [
                (WarpOp::ShflDown, Some("16u")),
                (WarpOp::Ballot, Some("16u")),
                (WarpOp::TileReduce, Some("16u"))
            ]
        );
        // the openers: a member's from the tile's name, `cg::reduce`'s up to
        // the comma after the tile
        let openers: Vec<&str> = p
            .exchanges
            .iter()
            .map(|x| &child[x.opener.range()])
            .collect();
        assert_eq!(
            openers,
            ["tile.shfl_down(", "tile.ballot(", "cg::reduce(tile,"]
        );
        // the queries, the size in the loop's head (run once per block)
        let queries: Vec<(&str, &str)> = p
            .instances
            .iter()
            .map(|(s, w)| (&child[s.range()], w.as_str()))
            .collect();
        assert_eq!(queries.len(), 3, "{queries:?}");
        assert_eq!(queries[0], ("tile.size()", "16u"));
        assert!(
            queries[1].1.ends_with("% 16u)") && queries[2].1.ends_with("/ 16u)"),
            "{queries:?}"
        );
        // a tile of a size that is not a literal, or of a group that may not be
        // the block, is not one the split writes with the builtins
        for (from, to) in [
            (
                "cg::thread_block_tile<16> tile = cg::tiled_partition<16>(cta);",
                "auto tile = cg::tiled_partition(cta, 16);",
            ),
            (
                "cg::tiled_partition<16>(cta)",
                "cg::tiled_partition<16>(cg::coalesced_threads())",
            ),
        ] {
            assert!(split(&child.replace(from, to)).is_err(), "{to}");
        }
        // an unknown member of a tile stays refused
        let e =
            split(&child.replace("tile.ballot(v > 0)", "tile.match_any(v)")).expect_err("refused");
        assert!(e.why.contains("match_any"), "{}", e.why);
    }

    #[test]
    fn shared_names_of_two_callees_are_told_apart() {
        let sum = "__device__ float sum(float v) {\n  static __shared__ float shared[32];\n  shared[threadIdx.x % 32] = v;\n  __syncthreads();\n  return shared[0];\n}\n";
        let max = sum.replace("sum(", "max(");
        let p = split(&format!("{sum}{max}__global__ void child(float *out) {{\n  float a = sum(1.0f);\n  float b = max(a);\n  out[threadIdx.x] = a + b;\n}}\n"))
            .expect("splits");
        assert_eq!(p.shared.len(), 2);
        // the second callee's three `shared`: its declaration's and two reads
        let renamed: Vec<&str> = p.instances.iter().map(|(_, w)| w.as_str()).collect();
        assert_eq!(renamed, ["dpopt_shared1_shared"; 3]);
        // one function declaring the name twice is still refused
        let twice = "__global__ void child(float *out) {\n  __shared__ float s[32];\n  s[threadIdx.x] = 1.0f;\n  __syncthreads();\n  {\n    __shared__ float s[32];\n    s[threadIdx.x] = out[0];\n  }\n  out[threadIdx.x] = s[0];\n}\n";
        assert!(split(twice).is_err());
    }

    #[test]
    fn callees_of_callees_run_in_place() {
        let warp = "__device__ int warp_sum(int val) {\n  for (int offset = 16; offset > 0; offset /= 2)\n    val += __shfl_down_sync(0xffffffffu, val, offset);\n  return val;\n}\n";
        let block = "__device__ int block_sum(int val) {\n  static __shared__ int part[32];\n  int lane = threadIdx.x % 32, wid = threadIdx.x / 32;\n  val = warp_sum(val);\n  if (lane == 0) part[wid] = val;\n  __syncthreads();\n  val = threadIdx.x < blockDim.x / 32 ? part[lane] : 0;\n  if (wid == 0) val = warp_sum(val);\n  return val;\n}\n";
        let child = "__global__ void child(const int *x, int *out) {\n  int sum = x[threadIdx.x];\n  sum = block_sum(sum);\n  if (threadIdx.x == 0) out[blockIdx.x] = sum;\n}\n";
        let p = split(&format!("{warp}{block}{child}")).expect("splits");
        assert_eq!(p.inlined.len(), 3);
        // the block sum's call holds the warp sums' calls, the second
        // under the first warp's guard
        fn calls(steps: &[Step], out: &mut Vec<usize>) {
            for s in steps {
                match s {
                    Step::Call { scope, body, .. } => {
                        out.push(*scope);
                        calls(body, out);
                    }
                    Step::Guard { body, .. } | Step::Construct { body, .. } => calls(body, out),
                    _ => {}
                }
            }
        }
        let Some(Step::Call { scope: 0, body, .. }) =
            p.steps.iter().find(|s| matches!(s, Step::Call { .. }))
        else {
            panic!("{:?}", p.steps)
        };
        let mut inner = Vec::new();
        calls(body, &mut inner);
        assert_eq!(inner, [1, 2]);
        assert_eq!(p.guards, 1);
        // both assign the block sum's `val`, which they hide with their own
        let refs: Vec<(usize, &str)> = p
            .result_refs
            .iter()
            .map(|r| (r.call, r.target.as_str()))
            .collect();
        assert_eq!(refs, [(1, "val"), (2, "val")]);
        // a parameter of the block sum named as the warp sum's loop
        // variable, which the warp sum declares around its phases
        let hidden = block
            .replace("val", "offset")
            .replace("warp_sum(offset)", "warp_sum(offset + 0)");
        let e = split(&format!("{warp}{hidden}{child}")).expect_err("refused");
        assert!(
            e.why.starts_with(
                "`block_sum` binds or declares `offset` in each of its phases, and `warp_sum`"
            ),
            "{}",
            e.why
        );
        // a parameter of the block sum bound once per block, passed on to
        // its callee's: bound once per block too, so the callee's barrier
        // loop may read it
        let tree = "__device__ void tree(int *red, int n) {\n  for (int s = n / 2; s > 0; s >>= 1) {\n    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];\n    __syncthreads();\n  }\n}\n";
        let sum = "__device__ int tree_sum(int *red, int v, int n) {\n  red[threadIdx.x] = v;\n  __syncthreads();\n  tree(red, n);\n  int r = red[0];\n  __syncthreads();\n  return r;\n}\n";
        let p = split(&format!("{tree}{sum}__global__ void child(const int *x, int *out) {{\n  __shared__ int red[128];\n  int t = tree_sum(red, x[threadIdx.x], blockDim.x);\n  out[threadIdx.x] = t;\n}}\n"))
            .expect("splits");
        let mut binds = Vec::new();
        fn block_binds(steps: &[Step], out: &mut Vec<(String, bool)>) {
            for s in steps {
                if let Step::Call { binds, body, .. } = s {
                    out.extend(binds.iter().map(|b| (b.name.clone(), b.block)));
                    block_binds(body, out);
                }
            }
        }
        block_binds(&p.steps, &mut binds);
        let flags: Vec<(&str, bool)> = binds.iter().map(|(n, b)| (n.as_str(), *b)).collect();
        assert_eq!(
            flags,
            [
                ("red", true),
                ("v", false),
                ("n", true),
                ("red", true),
                ("n", true)
            ]
        );
        // a callee that calls itself through another
        let cycle = "__device__ int ping(int v);\n__device__ int pong(int v) {\n  __syncthreads();\n  v = ping(v);\n  return v;\n}\n__device__ int ping(int v) {\n  __syncthreads();\n  v = pong(v);\n  return v;\n}\n";
        let e = split(&format!("{cycle}__global__ void child(int *x) {{\n  int s = x[threadIdx.x];\n  s = ping(s);\n  x[threadIdx.x] = s;\n}}\n"))
            .expect_err("refused");
        assert!(
            e.why
                .contains("calls itself (`ping` calls `pong` calls `ping`)"),
            "{}",
            e.why
        );
        assert_eq!(e.notes.len(), 2);
    }

    #[test]
    fn callee_in_a_uniform_loop_runs_in_place() {
        let p = split("__device__ void block_sync() { __syncthreads(); }\n__global__ void child(float *a, int n) {\n  for (int k = 0; k < 4; ++k) {\n    int i = k * 512 + blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) a[i] += 1.0f;\n    block_sync();\n  }\n}\n")
            .expect("splits");
        assert_eq!(p.inlined.len(), 1);
        assert!(matches!(p.steps.first(), Some(Step::Construct { .. })));
    }

    #[test]
    fn cooperative_groups_block_syncs_are_barriers() {
        let p = split("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n__global__ void child(int *a) {\n  cg::thread_block cta = cg::this_thread_block();\n  __shared__ int s[32];\n  s[threadIdx.x] = a[threadIdx.x];\n  cta.sync();\n  a[threadIdx.x] = s[31 - threadIdx.x];\n  cg::sync(cta);\n  cg::this_thread_block().sync();\n  a[0] = s[0];\n}\n")
            .expect("splits");
        assert_eq!(p.stretches(), 3);
        // A tile's sync is a warp's; where every thread of the block
        // reaches it, the split takes it as a barrier of the block.
        let tile = "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n__global__ void child(int *a) {\n  auto tile = cg::tiled_partition<32>(cg::this_thread_block());\n  a[threadIdx.x] = 1;\n  tile.sync();\n  a[0] = 2;\n}\n";
        assert_eq!(split(tile).expect("splits").stretches(), 2);
        // under one thread's condition, a guarded phase ends at it
        let p = split(&tile.replace("  tile.sync();", "  if (threadIdx.x < 16) tile.sync();"))
            .expect("guarded");
        assert_eq!(p.guards, 1);
    }

    #[test]
    fn block_group_and_its_queries() {
        // The group made once per block where a head reads its size; the
        // size in a loop head is computed alike by every thread.
        let p = split("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n__global__ void child(int *a) {\n  cg::thread_block cta = cg::this_thread_block();\n  __shared__ int s[128];\n  s[cta.thread_rank()] = a[cta.thread_rank()];\n  cta.sync();\n  for (unsigned d = cta.size() / 2; d > 0; d >>= 1) {\n    if (cta.thread_rank() < d) s[cta.thread_rank()] += s[cta.thread_rank() + d];\n    cta.sync();\n  }\n  a[cta.group_index().x] = s[0];\n}\n")
            .expect("splits");
        assert_eq!(p.uniform.len(), 1, "{:?}", p.uniform);
        assert!(p.vars.is_empty(), "{:?}", p.vars);
        // Where no head reads it: made again in each phase, and so are the
        // variables computed from its queries.
        let p = split("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n__global__ void child(int *a) {\n  cg::thread_block cta = cg::this_thread_block();\n  __shared__ int s[128];\n  const unsigned tid = cta.thread_rank();\n  const dim3 tile = cta.group_index();\n  s[tid] = a[tid];\n  cta.sync();\n  a[tile.x * 128 + tid] = s[127 - tid];\n}\n")
            .expect("splits");
        assert!(p.uniform.is_empty(), "{:?}", p.uniform);
        assert_eq!(p.vars.len(), 3);
        assert!(p
            .vars
            .iter()
            .all(|v| matches!(v.keep, Keep::Recompute { .. })));
        // A thread's rank is not the block's: a barrier loop's head may not
        // read it.
        let e = split("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n__global__ void child(int *a) {\n  cg::thread_block cta = cg::this_thread_block();\n  for (unsigned k = cta.thread_rank(); k < 4; ++k) {\n    a[k] = 1;\n    cta.sync();\n  }\n}\n");
        assert!(e.is_err());
    }

    #[test]
    fn counters_each_loop_starts_afresh() {
        // Rodinia's lud_diagonal: `i` counts per-thread copy loops and the
        // barrier loop, `j` per-thread loops inside it.
        let body = |middle: &str, tail: &str| {
            format!("__global__ void child(float *m, int n) {{\n  int i, j;\n  __shared__ float s[16][16];\n  for (i = 0; i < n; i++) s[i][threadIdx.x] = m[i * 16 + threadIdx.x];\n  __syncthreads();\n  for (i = 0; i < n - 1; i++) {{\n    if (threadIdx.x > i) {{\n      for (j = 0; j < i; j++) s[threadIdx.x][i] -= s[threadIdx.x][j] * s[j][i];\n{middle}    }}\n    __syncthreads();\n  }}\n  for (i = 1; i < n; i++) m[i * 16 + threadIdx.x] = s[i][threadIdx.x];\n{tail}}}\n")
        };
        let p = split(&body("", "")).expect("splits");
        let names: Vec<&str> = p
            .uniform
            .iter()
            .map(|u| match &u.declaration {
                BlockDeclaration::Declarator(d) => d.as_str(),
                BlockDeclaration::Statement(_) => "statement",
            })
            .collect();
        assert_eq!(names, ["int i;"]);
        // `j`, used in two phases but read by no head, is kept per thread
        assert_eq!(p.vars.len(), 1, "{:?}", p.vars);
        assert_eq!(p.vars[0].name, "j");
        // The value a per-thread loop leaves, read after it: refused.
        assert!(split(&body("", "  m[0] = i;\n")).is_err());
        // A per-thread loop of `i` inside the barrier loop of `i`: refused.
        assert!(split(&body("      for (i = 0; i < 2; i++) m[i] = 0;\n", "")).is_err());
        // A loop whose first clause reads the value before: refused.
        let e = split("__global__ void child(float *m, int n) {\n  int i = 0;\n  __shared__ float s[16];\n  for (i = i; i < n; i++) s[threadIdx.x] = m[i];\n  __syncthreads();\n  for (i = 0; i < n; i++) {\n    m[threadIdx.x] = s[i];\n    __syncthreads();\n  }\n}\n");
        assert!(e.is_err());
    }

    #[test]
    fn callee_called_as_a_statement_runs_in_place() {
        // a void helper ending in a barrier
        let p = split("__device__ void sync_all() { __syncthreads(); }\n__global__ void child(int *a) {\n  a[threadIdx.x] = 1;\n  sync_all();\n  a[0] = 2;\n}\n")
            .expect("splits");
        assert_eq!(p.inlined.len(), 1);
        assert_eq!(p.stretches(), 2);
        // a reduction whose result the child keeps across its own barrier
        let p = split("__device__ int total(int *s, int x) {\n  s[threadIdx.x] = x;\n  __syncthreads();\n  return s[0] + s[1];\n}\n__global__ void __launch_bounds__(64) child(int *a) {\n  __shared__ int s[64];\n  int v = total(s, a[threadIdx.x]);\n  __syncthreads();\n  a[threadIdx.x] = v;\n}\n")
            .expect("splits");
        let v = p.vars.iter().find(|v| v.name == "v").expect("v kept");
        assert!(matches!(v.keep, Keep::Store { .. }), "{v:?}");
        assert!(p
            .phases
            .iter()
            .any(|ph| ph.result.as_ref().is_some_and(|(_, w)| w == "v =")));
    }

    #[test]
    fn callee_the_split_cannot_run_in_place_is_refused() {
        let cases = [
            // in an expression
            ("__device__ int sync_all() { __syncthreads(); return 1; }\n__global__ void child(int *a) {\n  a[threadIdx.x] = 1 + sync_all();\n}\n", "sync_all"),
            // a return before the end
            ("__device__ void f(int *a) { if (a[0]) return; __syncthreads(); }\n__global__ void child(int *a) {\n  f(a);\n}\n", "before its end"),
            // an argument with a side effect
            ("__device__ void f(int x) { __syncthreads(); }\n__global__ void child(int *a, int n) {\n  f(n++);\n}\n", "evaluates it again"),
            // a callee assigning its parameter
            ("__device__ void f(int &x) { x += 1; __syncthreads(); }\n__global__ void child(int *a, int n) {\n  f(n);\n}\n", "assigns its parameter"),
        ];
        for (src, expect) in cases {
            let e = split(src).expect_err(src);
            assert!(e.why.contains(expect), "{src}: {}", e.why);
        }
    }

    #[test]
    fn variables_only_heads_assign_are_computed_once_per_block() {
        // temporal-hpc's border_dwell: `nt` from a parameter every thread
        // passes alike, halved by the barrier loop's head
        let src = "__device__ int border(int *v, int d) {\n  __shared__ int l[64];\n  int tid = threadIdx.x;\n  l[tid] = v[tid];\n  int nt = min(d, 64);\n  __syncthreads();\n  for (; nt > 1; nt /= 2) {\n    if (tid < nt / 2) l[tid] = max(l[tid], l[tid + nt / 2]);\n    __syncthreads();\n  }\n  return l[0];\n}\n__global__ void child(int *v, int d, int *out) {\n  int m = border(v + blockIdx.x * 64, d);\n  if (threadIdx.x == 0) out[blockIdx.x] = m;\n}\n";
        let p = split(src).expect("splits");
        assert_eq!(p.uniform.len(), 1);
        let Some(Step::Call { binds, .. }) =
            p.steps.iter().find(|s| matches!(s, Step::Call { .. }))
        else {
            panic!("no call: {:?}", p.steps);
        };
        let block: Vec<(&str, bool)> = binds.iter().map(|b| (b.name.as_str(), b.block)).collect();
        assert_eq!(block, [("v", true), ("d", true)]);
        // assigned in a phase too: a variable of each thread, which the head
        // may not read
        let e = split(&src.replace("l[tid] = v[tid];", "l[tid] = v[tid]; nt += 0;"))
            .expect_err("nt assigned per thread");
        assert!(e.why.contains("head"), "{}", e.why);
    }

    #[test]
    fn locals_never_assigned_that_heads_read_are_computed_once_per_block() {
        // cuda-samples' matrixMul: the loop's bounds from block indices and
        // the template's block size, through other such locals
        let src = "template <int BS> __global__ void child(float *c, const float *a, int w) {\n  int by = blockIdx.y;\n  int tx = threadIdx.x;\n  int aBegin = w * BS * by;\n  int aEnd = aBegin + w - 1;\n  int unused = w * 2;\n  float sum = 0;\n  for (int k = aBegin; k <= aEnd; k += BS) {\n    __shared__ float t[BS];\n    t[tx] = a[k + tx];\n    __syncthreads();\n    sum += t[(tx + 1) % BS] + unused;\n    __syncthreads();\n  }\n  c[by * BS + tx] = sum;\n}\n";
        let p = split(src).expect("splits");
        let once: Vec<String> = p
            .uniform
            .iter()
            .map(|u| match &u.declaration {
                BlockDeclaration::Statement(span) => src[span.range()].to_string(),
                BlockDeclaration::Declarator(text) => text.clone(),
            })
            .collect();
        // what the head reads, and what that reads; not `unused`, which the
        // phases compute again
        assert_eq!(
            once,
            [
                "int by = blockIdx.y;",
                "int aBegin = w * BS * by;",
                "int aEnd = aBegin + w - 1;"
            ]
        );
        assert!(p.vars.iter().any(|v| v.name == "unused"));
        // llm.c's softmax: `int block_size = blockDim.x;` read by a head
        let p = split("__global__ void child(float *x) {\n  __shared__ float s[128];\n  int tid = threadIdx.x;\n  int block_size = blockDim.x;\n  s[tid] = x[tid];\n  __syncthreads();\n  for (int stride = block_size / 2; stride >= 1; stride /= 2) {\n    if (tid < stride) s[tid] += s[tid + stride];\n    __syncthreads();\n  }\n  x[tid] = s[0];\n}\n")
            .expect("splits");
        assert!(one_uniform_statement(&p));
        // one that reads a thread's value stays refused
        let e = split("__global__ void child(float *x, int n) {\n  __shared__ float s[128];\n  int m = n - threadIdx.x;\n  for (int k = 0; k < m; ++k) { s[k] = 0; __syncthreads(); }\n}\n")
            .expect_err("refused");
        assert!(
            e.why.contains("`m`, a variable of each thread"),
            "{}",
            e.why
        );
    }

    #[test]
    fn uniform_break_and_continue_of_barrier_loops_run_once_per_block() {
        // Rodinia's pathfinder: the last round leaves between two barriers
        let p = split("__global__ void child(int *prev, int *res, int iteration) {\n  bool computed;\n  for (int i = 0; i < iteration; i++) {\n    computed = prev[threadIdx.x] > i;\n    __syncthreads();\n    if (i == iteration - 1)\n      break;\n    if (computed) prev[threadIdx.x] = res[threadIdx.x];\n    __syncthreads();\n  }\n  if (computed) res[threadIdx.x] = 0;\n}\n")
            .expect("splits");
        let Some(Step::Construct { body, .. }) =
            p.steps.iter().find(|s| matches!(s, Step::Construct { .. }))
        else {
            panic!("no loop: {:?}", p.steps);
        };
        assert!(
            matches!(
                body.as_slice(),
                [Step::Phase(_), Step::Leave(_), Step::Phase(_)]
            ),
            "{body:?}"
        );
        // `continue` of a `for`, braced, under a block vote's local
        split("__global__ void child(int *a, int n) {\n  for (int k = 0; k < n; ++k) {\n    int any = __syncthreads_or(a[threadIdx.x] > k);\n    if (!any) { continue; }\n    a[threadIdx.x] += k;\n    __syncthreads();\n  }\n}\n")
            .expect("splits");
    }

    #[test]
    fn heads_may_call_pure_math_functions() {
        // Rodinia's backprop: `for (int i = 1; i <= __log2f(HEIGHT); i++)`
        split("__global__ void child(float *w, int h) {\n  __shared__ float m[128];\n  m[threadIdx.x] = w[threadIdx.x];\n  for (int i = 1; i <= __log2f(h); i++) {\n    int p = (int)powf(2, i);\n    if (threadIdx.x % p == 0) m[threadIdx.x] += m[threadIdx.x + p / 2];\n    __syncthreads();\n  }\n  w[threadIdx.x] = m[0];\n}\n")
            .expect("splits");
    }

    #[test]
    fn elements_of_read_only_parameters_at_block_indices_are_uniform() {
        // the 3D Gaussian splatting rasterizer: a tile's range of points
        let src = "__global__ void child(const uint2 *__restrict__ ranges, int *out, int tiles) {\n  __shared__ int ids[128];\n  uint2 range = ranges[blockIdx.y * tiles + blockIdx.x];\n  const int rounds = (range.y - range.x + 127) / 128;\n  for (int i = 0; i < rounds; i++) {\n    ids[threadIdx.x] = range.x + i * 128 + threadIdx.x;\n    __syncthreads();\n    out[threadIdx.x] += ids[(threadIdx.x + 1) % 128];\n    __syncthreads();\n  }\n}\n";
        let p = split(src).expect("splits");
        assert_eq!(p.uniform.len(), 2);
        // not through a pointer the kernel may write, nor at a thread's index
        for (from, to) in [
            ("const uint2 *__restrict__ ranges", "uint2 *ranges"),
            ("[blockIdx.y * tiles + blockIdx.x]", "[threadIdx.x]"),
        ] {
            let e = split(&src.replace(from, to)).expect_err("refused");
            assert!(
                e.why.contains("`rounds`, a variable of each thread"),
                "{}",
                e.why
            );
        }
    }

    #[test]
    fn kept_variables_initialized_in_braces_or_as_arrays() {
        let p = split("__global__ void child(float *a) {\n  __shared__ float t[128];\n  float acc{};\n  float c[3] = {0};\n  t[threadIdx.x] = a[threadIdx.x];\n  __syncthreads();\n  acc += t[0];\n  c[1] = t[1];\n  a[threadIdx.x] = acc + c[1];\n}\n")
            .expect("splits");
        let rewrite = |name: &str| -> String {
            let v = p.vars.iter().find(|v| v.name == name).expect("kept");
            let Keep::Store { rewrites, .. } = &v.keep else {
                panic!("{name} not stored: {:?}", v.keep)
            };
            rewrites[0].1.clone()
        };
        assert!(
            rewrite("acc").starts_with("{ float dpopt_init {}; acc = dpopt_init; }"),
            "{}",
            rewrite("acc")
        );
        assert!(
            rewrite("c")
                .starts_with("{ float dpopt_init[3] = {0}; memcpy(&c, &dpopt_init, sizeof(c)); }"),
            "{}",
            rewrite("c")
        );
        // among other declarators of a statement: refused
        let e = split("__global__ void child(float *a) {\n  float acc{}, b = 1;\n  __syncthreads();\n  a[0] = acc + b;\n}\n")
            .expect_err("refused");
        assert!(
            e.why.contains("statement of several declarators"),
            "{}",
            e.why
        );
    }

    /// One variable computed once per block, its whole statement.
    fn one_uniform_statement(p: &Phased) -> bool {
        matches!(
            p.uniform.as_slice(),
            [Uniform {
                declaration: BlockDeclaration::Statement(_),
                ..
            }]
        )
    }

    #[test]
    fn loop_variables_declared_before_their_loop_are_computed_once_per_block() {
        // `unsigned int s;` apart, and `s` among a statement's declarators
        // (`int idx = ..., s;`), assigned only in the barrier loop's head
        let alone = "__global__ void child(int *a) {\n  __shared__ int t[128];\n  unsigned int tid = threadIdx.x;\n  unsigned int s;\n  t[tid] = a[tid];\n  __syncthreads();\n  for (s = blockDim.x / 2; s > 0; s >>= 1) {\n    if (tid < s) t[tid] += t[tid + s];\n    __syncthreads();\n  }\n  if (tid == 0) a[blockIdx.x] = t[0];\n}\n";
        let p = split(alone).expect("splits");
        assert!(one_uniform_statement(&p), "{:?}", p.uniform);
        assert!(p.vars.iter().all(|v| v.name != "s"), "{:?}", p.vars);
        let among = "__global__ void child(double *a, int n) {\n  __shared__ double t[128];\n  int idx = blockIdx.x * blockDim.x + threadIdx.x, s, *unused = 0;\n  t[threadIdx.x] = idx < n ? a[idx] : 0.;\n  __syncthreads();\n  for (s = blockDim.x / 2; s > 0; s >>= 1) {\n    if (threadIdx.x < s) t[threadIdx.x] += t[threadIdx.x + s];\n    __syncthreads();\n  }\n  if (threadIdx.x == 0) a[idx] = t[0];\n}\n";
        let p = split(among).expect("splits");
        let [Uniform {
            declaration: BlockDeclaration::Declarator(text),
            rewrites,
            ..
        }] = p.uniform.as_slice()
        else {
            panic!("{:?}", p.uniform);
        };
        assert_eq!(text, "int s;");
        // `s` out of the statement; `idx` kept per thread; `unused` declared
        // again with the statement's type
        let texts: Vec<&str> = rewrites.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(
            texts,
            [
                "/* dpopt: `s` computed once per block, above */",
                ";",
                "; int"
            ]
        );
        assert!(p.vars.iter().any(|v| v.name == "idx"));
        // a head that gives it a value of one thread: refused as before
        let e = split(&among.replace("for (s = blockDim.x / 2;", "for (s = idx;"))
            .expect_err("per thread");
        assert!(e.why.contains("head"), "{}", e.why);
        // assigned in a phase too: a variable of each thread
        let e = split(&alone.replace("t[tid] = a[tid];", "t[tid] = a[tid]; s = tid;"))
            .expect_err("per thread");
        assert!(e.why.contains("head"), "{}", e.why);
    }

    #[test]
    fn a_recomputed_variable_recomputes_what_its_initializer_reads() {
        // `base` is read after the barrier only through `ptr`
        let p = split("__global__ void child(float *logits) {\n  __shared__ float s[128];\n  const int base = blockIdx.x * 512;\n  float *ptr = logits + base;\n  s[threadIdx.x] = ptr[threadIdx.x];\n  __syncthreads();\n  ptr[threadIdx.x] = s[0];\n}\n")
            .expect("splits");
        let recomputed: Vec<(&str, &[usize])> = p
            .vars
            .iter()
            .filter(|v| matches!(v.keep, Keep::Recompute { .. }))
            .map(|v| (v.name.as_str(), v.used_in.as_slice()))
            .collect();
        assert_eq!(recomputed, [("ptr", &[1][..]), ("base", &[1][..])]);
    }

    #[test]
    fn block_votes_in_statements_are_phases() {
        let src = "__global__ void child(float *v, int n, int *status) {\n  __shared__ float m[128];\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  int bad = i < n && isnan(v[i]);\n  int error = __syncthreads_or(bad);\n  unsigned flags = 0;\n  flags |= (unsigned)__syncthreads_count(bad) << 1;\n  if (!error) return;\n  m[threadIdx.x] = i < n ? v[i] : 0.f;\n  __syncthreads();\n  if (error && threadIdx.x == 0) status[blockIdx.x] = flags;\n  if (!__syncthreads_and(m[0] > 0.f)) return;\n  if (i < n) v[i] = m[0];\n}\n";
        let p = split(src).expect("splits");
        let ops: Vec<&str> = p.votes.iter().map(|v| v.op.name()).collect();
        assert_eq!(
            ops,
            [
                "__syncthreads_or",
                "__syncthreads_count",
                "__syncthreads_and"
            ]
        );
        // `error`, the fold of a vote nothing assigns after: once per block
        assert!(one_uniform_statement(&p), "{:?}", p.uniform);
        // a vote inside a loop of the statement, or two in one statement:
        // not a statement's vote (refused as before)
        let src_two = src.replace(
            "  int error = __syncthreads_or(bad);\n",
            "  int error = __syncthreads_or(bad) + __syncthreads_and(bad);\n",
        );
        assert!(split(&src_two).is_err());
        // in an unbraced loop body, the statement's vote is one per round
        let src_loop = src.replace(
            "  int error = __syncthreads_or(bad);\n",
            "  int error = 0; for (int k = 0; k < 2; ++k) error += __syncthreads_or(bad);\n",
        );
        let p = split(&src_loop).expect("splits");
        assert!(p
            .steps
            .iter()
            .any(|s| matches!(s, Step::Construct { body, .. } if body.len() == 2)));
    }

    #[test]
    fn do_loop_on_a_shared_flag_runs_once_per_block() {
        let src = "__global__ void child(int *a, int n) {\n  __shared__ int more;\n  do {\n    __syncthreads();\n    if (threadIdx.x == 0) more = 0;\n    __syncthreads();\n    if (a[threadIdx.x] > 0) { a[threadIdx.x] -= 1; more = 1; }\n    __syncthreads();\n  } while (more);\n}\n";
        let p = split(src).expect("splits");
        let Some(Step::Construct { tail: Some(_), .. }) =
            p.steps.iter().find(|s| matches!(s, Step::Construct { .. }))
        else {
            panic!("no do loop: {:?}", p.steps);
        };
        // a condition of one thread
        let e = split(&src.replace("while (more)", "while (a[threadIdx.x] > 0)"))
            .expect_err("per thread");
        assert!(e.why.contains("threadIdx"), "{}", e.why);
    }

    #[test]
    fn recursive_child_splits() {
        let p = split("__global__ void child(int *a, int d) {\n  __shared__ int s;\n  if (threadIdx.x == 0) s = a[d];\n  __syncthreads();\n  if (threadIdx.x == 0 && d > 0) child<<<1, blockDim.x>>>(a, d - 1);\n}\n")
            .expect("splits");
        assert_eq!(p.stretches(), 2);
    }

    #[test]
    fn assigned_parameter_is_kept() {
        let p = split("__global__ void child(int *a, int x0) {\n  x0 += blockIdx.x;\n  __syncthreads();\n  a[x0] = 1;\n}\n").expect("splits");
        let v = p.vars.iter().find(|v| v.name == "x0").expect("x0");
        assert_eq!(
            v.keep,
            Keep::Param {
                storage: "int".into(),
                bound_in: None,
            }
        );
    }

    #[test]
    fn callee_parameters_assigned_and_groups() {
        // The CUDA programming guide's reduce_sum: `val` assigned, the
        // block's group passed for a `thread_group` parameter.
        let src = "#include <cooperative_groups.h>\nusing namespace cooperative_groups;\n__device__ int reduce_sum(thread_group g, int *temp, int val) {\n  int lane = g.thread_rank();\n  for (int i = g.size() / 2; i > 0; i /= 2) {\n    temp[lane] = val;\n    g.sync();\n    if (lane < i) val += temp[lane + i];\n    g.sync();\n  }\n  return val;\n}\n__global__ void child(int *sum, int *input) {\n  extern __shared__ int temp[];\n  auto g = this_thread_block();\n  int block_sum = reduce_sum(g, temp, input[threadIdx.x]);\n  if (g.thread_rank() == 0) atomicAdd(sum, block_sum);\n}\n";
        let p = split(src).expect("splits");
        let val = p.vars.iter().find(|v| v.name == "val").expect("val");
        assert!(
            matches!(&val.keep, Keep::Param { storage, bound_in: Some(_) } if storage == "int"),
            "{val:?}"
        );
        let binds = p
            .steps
            .iter()
            .find_map(|s| match s {
                Step::Call { binds, .. } => Some(binds),
                _ => None,
            })
            .expect("the call runs in place");
        let flags: Vec<(&str, bool, bool, bool)> = binds
            .iter()
            .map(|b| (b.name.as_str(), b.block, b.group, b.assigned))
            .collect();
        assert_eq!(
            flags,
            [
                ("g", true, true, false),
                ("temp", true, false, false),
                ("val", false, false, true)
            ]
        );
        // The same helper also given a tile elsewhere: its `g` may be a
        // tile, whose rank the split cannot replace.
        let tile = src.replace(
            "__global__ void child",
            "__global__ void other(int *t) {\n  extern __shared__ int temp[];\n  t[0] = reduce_sum(tiled_partition(this_thread_block(), 32), temp, 1);\n}\n__global__ void child",
        );
        let e = split(&tile).expect_err("refused");
        assert!(e.why.contains("g.thread_rank()"), "{}", e.why);
        // A reference parameter the callee assigns writes the caller's
        // variable: refused.
        let e = split("__device__ void f(int &x) { x += 1; __syncthreads(); }\n__global__ void child(int *a) {\n  int v = a[0];\n  f(v);\n  a[1] = v;\n}\n");
        assert!(e.is_err());
        // A callee that assigns a parameter and starts with a barrier loop:
        // the parameter is bound in a phase of its own, kept without a
        // statement, before the loop.
        let p = split("__device__ void f(int x, int *s) { for (int k = 0; k < 2; ++k) { s[threadIdx.x] = x; __syncthreads(); x += s[0]; } }\n__global__ void child(int *a) {\n  __shared__ int s[128];\n  f(a[threadIdx.x], s);\n}\n").expect("splits");
        let Some(Step::Call { body, .. }) = p.steps.iter().find(|s| matches!(s, Step::Call { .. }))
        else {
            panic!("no call: {:?}", p.steps);
        };
        let Some(Step::Phase(first)) = body.first() else {
            panic!("the callee starts with {:?}", body.first());
        };
        let x = p.vars.iter().find(|v| v.name == "x").expect("x kept");
        assert!(
            matches!(x.keep, Keep::Param { bound_in: Some(q), .. } if q == *first),
            "{x:?}"
        );
    }

    /// The phases that store an exchange's value, by exchange.
    fn exchange_phases(p: &Phased) -> Vec<usize> {
        p.phases.iter().filter_map(|ph| ph.exchange).collect()
    }

    #[test]
    fn warp_reductions_exchange_through_slots() {
        // llm.c's warpReduceMax, and the unbraced `#pragma unroll`ed sum
        let src = "__device__ float warp_max(float val) {\n  for (int offset = 16; offset > 0; offset /= 2) {\n    val = fmaxf(val, __shfl_down_sync(0xFFFFFFFF, val, offset));\n  }\n  return val;\n}\n__device__ float warp_sum(float val) {\n#pragma unroll\n  for (int offset = warpSize / 2; offset > 0; offset /= 2)\n    val += __shfl_down_sync(0xFFFFFFFF, val, offset);\n  return val;\n}\n__global__ void child(const float *x, float *out, int n) {\n  __shared__ float part[4];\n  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;\n  float m = threadIdx.x < n ? x[threadIdx.x] : -1e30f;\n  m = warp_max(m);\n  float s = threadIdx.x < n ? x[threadIdx.x] : 0.0f;\n  s = warp_sum(s);\n  if (lane == 0) part[warp] = s + m;\n  __syncthreads();\n  if (threadIdx.x == 0) out[blockIdx.x] = part[0] + part[1];\n}\n";
        let p = split(src).expect("splits");
        let ops: Vec<WarpOp> = p.exchanges.iter().map(|x| x.op).collect();
        assert_eq!(ops, [WarpOp::ShflDown, WarpOp::ShflDown]);
        assert_eq!(exchange_phases(&p), [0, 1]);
        assert_eq!(p.bound, Some(128));
        // the unbraced loop runs once per block, its pragma with its head
        fn heads(steps: &[Step], out: &mut Vec<Span>) {
            for s in steps {
                match s {
                    Step::Construct { head, body, .. } => {
                        out.push(*head);
                        heads(body, out);
                    }
                    Step::Call { body, .. } => heads(body, out),
                    _ => {}
                }
            }
        }
        let mut found = Vec::new();
        heads(&p.steps, &mut found);
        let texts: Vec<&str> = found.iter().map(|h| &src[h.range()]).collect();
        assert_eq!(
            texts,
            [
                "for (int offset = 16; offset > 0; offset /= 2) {",
                "#pragma unroll\n  for (int offset = warpSize / 2; offset > 0; offset /= 2)"
            ]
        );
        // every exchange's opener is its name and parenthesis
        for x in &p.exchanges {
            assert_eq!(&src[x.opener.range()], "__shfl_down_sync(");
        }
    }

    #[test]
    fn votes_and_reductions_of_a_warp_in_statements() {
        let src = "__global__ void child(const int *v, int *out, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  bool keep = i < n && v[i] > 0;\n  if (!__any_sync(0xffffffffu, keep)) return;\n  unsigned b = __ballot_sync(0xffffffffu, keep);\n  int base = 0;\n  if ((threadIdx.x & 31) == 0) base = atomicAdd(out, __popc(b));\n  base = __shfl_sync(0xffffffffu, base, 0);\n  unsigned total = __reduce_add_sync(0xffffffffu, keep ? 1u : 0u);\n  __syncwarp();\n  if (keep) out[1 + base + __popc(b & ((1u << (threadIdx.x & 31)) - 1u))] = v[i] + (int)total;\n}\n";
        let p = split(src).expect("splits");
        let ops: Vec<WarpOp> = p.exchanges.iter().map(|x| x.op).collect();
        assert_eq!(
            ops,
            [WarpOp::Any, WarpOp::Ballot, WarpOp::Shfl, WarpOp::ReduceAdd]
        );
        // a thread may return before the exchanges: flags per thread
        assert!(p.done_flags);
        // `__syncwarp();` splits as a barrier would
        assert_eq!(p.barriers, 1);
    }

    #[test]
    fn warp_exchanges_the_split_cannot_order_are_refused() {
        let body = |stmt: &str| {
            format!("__global__ void child(int *a, int n) {{\n  int lane = threadIdx.x & 31;\n  int v = a[threadIdx.x];\n{stmt}\n  a[threadIdx.x] = v;\n}}\n")
        };
        for (stmt, why) in [
            // a condition of one thread that exchanges itself
            (
                "  if (__any_sync(0xffffffffu, v > 0)) v = __shfl_down_sync(0xffffffffu, v, 1);",
                "condition",
            ),
            // in a loop of one thread's bound
            (
                "  for (int k = lane; k < n; k += 32) v += __shfl_xor_sync(0xffffffffu, v, 1);",
                "each thread",
            ),
            // two in one statement
            (
                "  v = __shfl_down_sync(0xffffffffu, v, 1) + __shfl_up_sync(0xffffffffu, v, 1);",
                "__shfl",
            ),
            // an argument that calls
            (
                "  v = __shfl_down_sync(0xffffffffu, g(v), 1);",
                "assigns or calls",
            ),
            // an argument that assigns
            (
                "  v = __shfl_down_sync(0xffffffffu, v++, 1);",
                "assigns or calls",
            ),
            // not one the split reproduces
            (
                "  v = __match_any_sync(0xffffffffu, v);",
                "does not reproduce",
            ),
        ] {
            let src = format!(
                "__device__ int g(int x) {{ return x + 1; }}\n{}",
                body(stmt)
            );
            let e = split(&src).expect_err(stmt);
            assert!(e.why.contains(why), "{stmt}: {}", e.why);
        }
        // warp-synchronous code through `volatile` memory
        let e = split("__global__ void child(int *a) {\n  volatile __shared__ int s[128];\n  s[threadIdx.x] = a[threadIdx.x];\n  __syncthreads();\n  if (threadIdx.x < 32) { s[threadIdx.x] += s[threadIdx.x + 16]; s[threadIdx.x] += s[threadIdx.x + 8]; }\n  a[threadIdx.x] = s[0];\n}\n").expect_err("volatile");
        assert!(e.why.contains("volatile"), "{}", e.why);
    }

    #[test]
    fn exchanges_under_a_threads_condition_are_guarded() {
        // the blog's block reduction: the first warp reduces the partials
        let src = "__device__ int warp_sum(int val) {\n  for (int offset = 16; offset > 0; offset /= 2)\n    val += __shfl_down_sync(0xffffffffu, val, offset);\n  return val;\n}\n__global__ void child(const int *in, int *out) {\n  static __shared__ int part[32];\n  int lane = threadIdx.x % 32, wid = threadIdx.x / 32;\n  int s = in[blockIdx.x * blockDim.x + threadIdx.x];\n  s = warp_sum(s);\n  if (lane == 0) part[wid] = s;\n  __syncthreads();\n  s = threadIdx.x < blockDim.x / 32 ? part[lane] : 0;\n  if (wid == 0) s = warp_sum(s);\n  else s = 0;\n  if (threadIdx.x == 0) *out += s;\n}\n";
        let p = split(src).expect("splits");
        assert_eq!(p.guards, 1);
        let guard = p
            .steps
            .iter()
            .find_map(|s| match s {
                Step::Guard {
                    body, otherwise, ..
                } => Some((body.len(), otherwise.as_ref().map(Vec::len))),
                _ => None,
            })
            .expect("a guard");
        // the call run in place, and the `else` statement's phase
        assert_eq!(guard, (1, Some(1)));
        // its condition is stored in a phase of its own, before the guard
        let stored: Vec<&str> = p
            .phases
            .iter()
            .filter(|ph| ph.guard.is_some())
            .map(|ph| &src[ph.range.range()])
            .collect();
        assert_eq!(stored, ["wid == 0"]);
        // a barrier of the block under such a condition is still refused
        let e = split(&src.replace(
            "if (wid == 0) s = warp_sum(s);",
            "if (wid == 0) { s = warp_sum(s); __syncthreads(); }",
        ))
        .expect_err("divergent barrier");
        assert!(e.why.contains("wid"), "{}", e.why);
        // and so is a `break` of a barrier loop under it
        let e = split("__global__ void child(int *a, int n) {\n  for (int k = 0; k < n; ++k) {\n    __syncthreads();\n    if (a[threadIdx.x] > k) { a[threadIdx.x] = __shfl_xor_sync(0xffffffffu, a[threadIdx.x], 1); break; }\n  }\n}\n")
            .expect_err("per-thread break");
        assert!(e.why.contains("break"), "{}", e.why);
    }

    #[test]
    fn warp_exchange_slots_need_a_constant_block() {
        let file = crate::source::SourceFile::new(
            "t.cu",
            b"__global__ void child(int *a) {\n  a[threadIdx.x] = __shfl_xor_sync(0xffffffffu, a[threadIdx.x], 1);\n}\n".to_vec(),
        );
        let program = crate::parser::parse(&file, crate::lexer::lex(&file));
        let hazards = Hazards::new(&program);
        let constants = Constants::of(&program);
        let child = program.function_named("child").expect("child");
        let e = phased(
            &program,
            &hazards,
            &constants,
            child,
            SerialShape::default(),
        )
        .expect_err("no bound");
        assert!(e.why.contains("warp exchange"), "{}", e.why);
    }
}
