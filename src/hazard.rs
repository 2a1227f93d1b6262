//! Hazards: what a function does that makes threads wait for each other or
//! share state, and where dpopt cannot see what it does.
//!
//! One model, used by every check of the analyzer (thresholding, coarsening,
//! `threads(N)`/`blocks(N)`, block-level aggregation). For each function it
//! records the first occurrence of every kind of [`Hazard`]: in the
//! function's own body, or in a function it calls (transitively), with the
//! chain of calls that leads there.
//!
//! What is recognized (the lists below are the reference; docs/PRAGMA.md
//! summarizes them):
//!
//! - block barriers: `__syncthreads`, `__syncthreads_count/_and/_or`,
//!   `__barrier_sync`; cooperative groups `cg::sync(g)`, `g.sync()`,
//!   `g.barrier_wait()`, `g.arrive()`, ... on a group of a block, written
//!   through a variable (declared with a group type, or `auto` initialised
//!   from a group) or inline (`cg::this_thread_block().sync()`);
//!   `cuda::barrier` (`arrive_and_wait`); CUB block collectives
//!   (`cub::BlockReduce`, `BlockScan`, `BlockLoad`, ... and their aliases);
//!   `asm` with `bar.sync`, `barrier.sync`, `bar.arrive`, `bar.red`,
//!   `mbarrier`;
//! - warp operations: `__syncwarp`, `__shfl*`, `__ballot*`, `__any*`,
//!   `__all*`, `__uni_sync`, `__match*`, `__reduce_*`, `__activemask`, WMMA;
//!   the same operations of a tile of at most 32 threads or a coalesced group
//!   (`tile.shfl_down`, `tile.ballot`, `cg::reduce(tile, ...)`,
//!   `cg::inclusive_scan`, `cg::coalesced_threads()`); CUB warp collectives;
//!   `asm` with `shfl.`, `vote.`, `match.`, `redux.`, `bar.warp.sync`, `mma`;
//! - grid synchronization: `cg::this_grid()`, `grid_group`, multi-grid and
//!   cluster groups, `barrier.cluster`;
//! - shared memory: `__shared__` (also `extern __shared__` arrays declared at
//!   file scope and used by name, so pointers derived from them too), CUB
//!   `TempStorage`, `.shared` in `asm`;
//! - reads of the thread's or block's position that a rewritten copy of the
//!   body would not replace: `threadIdx`/`blockDim`/`blockIdx`/`gridDim` in a
//!   called function, group queries (`cta.thread_rank()`,
//!   `cta.group_index()`), special registers in `asm` (`%tid`, `%laneid`,
//!   `%ctaid`, ...);
//! - `asm("exit;")`, which ends the thread like a `return`;
//! - code dpopt cannot see: a call to a function declared in this file but
//!   defined elsewhere (another translation unit), a call through a function
//!   pointer (or `nvstd::function`), `asm` whose text is not a string
//!   literal. Well-known library functions (math, atomics, `printf`,
//!   `malloc`, `memcpy`, `min`/`max`, intrinsics starting with `__`, the CUDA
//!   runtime `cuda*`, ...) are never "unseen", even when the file declares
//!   them: see [`is_library_function`].
//!
//! A macro whose definition (`#define`) contains one of the intrinsics above
//! counts where it is used.

use crate::program::{Function, FunctionId, Program};
use crate::source::Span;
use crate::token::{Token, TokenKind};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};

/// What a construct does that a transformation must know about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Hazard {
    /// Waits for, or exchanges values with, the other lanes of its warp.
    Warp,
    /// Waits for the other threads of its block.
    Block,
    /// Waits for other blocks (grid, multi-grid or cluster synchronization).
    Grid,
    /// Uses memory shared by the threads of a block.
    Shared,
    /// Reads the thread's position in its block in a way a copy of the child's
    /// body does not replace (a builtin in a called function, a group query,
    /// a special register in `asm`).
    ThreadPosition,
    /// Reads the block's position in its grid the same way.
    BlockPosition,
    /// Reads `threadIdx` or `blockDim` directly (replaced in the child's own
    /// body; a `ThreadPosition` once seen through a call).
    ThreadBuiltin,
    /// Reads `blockIdx` or `gridDim` directly (see `ThreadBuiltin`).
    BlockBuiltin,
    /// Reads `threadIdx` or `blockDim` in a called function that dpopt
    /// copies with the positions as parameters (`position_clone.rs`): a
    /// copy of the caller's body calls the copy, so the callee's builtins
    /// are replaced where the caller's own are.
    ThreadCloned,
    /// Reads `blockIdx` or `gridDim` the same way (see `ThreadCloned`).
    BlockCloned,
    /// Ends the thread without `return` (`asm("exit;")`).
    Exit,
    /// Code dpopt cannot see (see [`Unseen`]).
    Unseen,
}

/// What keeps a child's threads from running one after the other on any
/// thread (serially in a parent thread, or spread over the threads of the
/// floor's copy): waiting for, or sharing with, other threads, a position
/// that a rewritten body does not replace, ending the thread, or code dpopt
/// cannot see.
pub const NOT_SERIALIZABLE: [Hazard; 8] = [
    Hazard::Warp,
    Hazard::Block,
    Hazard::Grid,
    Hazard::Shared,
    Hazard::ThreadPosition,
    Hazard::BlockPosition,
    Hazard::Exit,
    Hazard::Unseen,
];

impl Hazard {
    /// What a hazard of a called function is for its caller: a builtin the
    /// callee reads is not replaced by the rewriting of the caller's body,
    /// unless every function the call may reach is copied with the
    /// positions as parameters (`cloned`).
    fn through_call(self, cloned: bool) -> Hazard {
        match (self, cloned) {
            (Hazard::ThreadBuiltin | Hazard::ThreadCloned, true) => Hazard::ThreadCloned,
            (Hazard::BlockBuiltin | Hazard::BlockCloned, true) => Hazard::BlockCloned,
            (Hazard::ThreadBuiltin | Hazard::ThreadCloned, false) => Hazard::ThreadPosition,
            (Hazard::BlockBuiltin | Hazard::BlockCloned, false) => Hazard::BlockPosition,
            (h, _) => h,
        }
    }
}

/// Why dpopt cannot see what some code does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unseen {
    /// A call to a function declared in this file but defined elsewhere.
    Declared,
    /// A call through a function pointer (or a function object such as
    /// `nvstd::function`).
    Pointer,
    /// Inline assembly whose text is not a string literal.
    Asm,
}

/// A call that a copy of a body makes to a copy of the callee taking the
/// positions as parameters (`Hazards::position_calls`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PositionCall {
    /// The called name, where it is called (`f` of `util::f<T>(...)`).
    pub name: Span,
    /// The call's `(`.
    pub open: Span,
    /// The call has no arguments.
    pub empty: bool,
}

/// A call in a function's own body (`Hazards::own`), one per possible
/// target.
#[derive(Debug, Clone)]
pub struct OwnCall {
    /// The called name, where it is called.
    pub span: Span,
    pub callee: String,
    /// What the target does, its callees included.
    pub summary: Summary,
    /// The copies of bodies call copies of the targets taking the
    /// positions (`position_clone.rs`).
    pub copied: bool,
}

/// One call on the way from the examined function to a construct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The called name, where it is called.
    pub span: Span,
    pub callee: String,
}

/// One construct, and how the examined function reaches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub hazard: Hazard,
    /// The construct as written (whitespace collapsed), e.g. `__syncthreads`,
    /// `cta.sync()`, `cg::sync(cta)`, `cub::BlockReduce`,
    /// `asm volatile("bar.sync 0;")`.
    pub construct: String,
    /// Where the construct is.
    pub span: Span,
    /// The function whose body holds the construct.
    pub function: String,
    /// The calls leading from the examined function to `function`, outermost
    /// first; empty when the construct is in the examined function itself.
    pub calls: Vec<Call>,
    /// For `Hazard::Unseen`: why.
    pub unseen: Option<Unseen>,
    /// For `Unseen::Declared`: the declaration of the called function.
    pub declared: Option<Span>,
}

impl Finding {
    /// Where the examined function reaches the construct: the construct
    /// itself, or the first call leading to it.
    pub fn anchor(&self) -> usize {
        self.calls
            .first()
            .map_or(self.span.start(), |c| c.span.start())
    }

    /// Is the construct in a called function?
    pub fn in_callee(&self) -> bool {
        !self.calls.is_empty()
    }

    /// One note per call leading to the construct, for a diagnostic.
    pub fn call_notes(&self) -> Vec<(Span, String)> {
        self.calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let label = if i == 0 {
                    format!("calls `{}`", c.callee)
                } else {
                    format!("which calls `{}`", c.callee)
                };
                (c.span, label)
            })
            .collect()
    }
}

/// What one function does, its callees included: the first construct of
/// each kind of hazard, in the order the function reaches them.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    first: BTreeMap<Hazard, Finding>,
    /// The last construct of each kind, in the same order.
    last: BTreeMap<Hazard, Finding>,
}

impl Summary {
    pub fn get(&self, hazard: Hazard) -> Option<&Finding> {
        self.first.get(&hazard)
    }

    pub fn has(&self, hazard: Hazard) -> bool {
        self.first.contains_key(&hazard)
    }

    /// The first construct (by where the function reaches it) of any of
    /// `hazards` that `keep` accepts.
    pub fn first_of(
        &self,
        hazards: &[Hazard],
        keep: impl Fn(&Finding) -> bool,
    ) -> Option<&Finding> {
        hazards
            .iter()
            .filter_map(|h| self.first.get(h))
            .filter(|f| keep(f))
            .min_by_key(|f| (f.anchor(), f.span.start()))
    }

    /// The last construct (by where the function reaches it) of any of
    /// `hazards`.
    pub fn last_of(&self, hazards: &[Hazard]) -> Option<&Finding> {
        hazards
            .iter()
            .filter_map(|h| self.last.get(h))
            .max_by_key(|f| (f.anchor(), f.span.start()))
    }

    /// Record `finding` as the first of its kind unless one came earlier,
    /// and as the last so far.
    fn add(&mut self, finding: Finding) {
        self.last.insert(finding.hazard, finding.clone());
        self.first.entry(finding.hazard).or_insert(finding);
    }
}

/// A function defined in the file: a free function (`Program::functions`)
/// or a member function (`Program::methods`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum FnRef {
    Free(FunctionId),
    Method(usize),
}

/// One thing a body does, in source order.
/// A position query of a group of the whole block, which copies of bodies
/// write as the builtins it reads (`transform/renderer.rs`):
/// `cta.thread_rank()`, `cg::this_thread_block().group_index()`,
/// `cg::thread_rank(cta)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockQuery {
    /// The whole query, object (or free function) to `)`.
    pub span: Span,
    pub position: BlockPosition,
}

/// What a block group's query reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockPosition {
    /// `thread_rank()`: the thread's rank in its block.
    Rank,
    /// `size()`, `num_threads()`: the block's thread count.
    Size,
    /// `thread_index()`: `threadIdx`.
    ThreadIndex,
    /// `group_dim()`, `dim_threads()`: `blockDim`.
    Dim,
    /// `group_index()`: `blockIdx`.
    GroupIndex,
}

impl BlockPosition {
    /// The query a block group's member function `op` makes.
    pub fn of_member(op: &str) -> Option<Self> {
        Some(match op {
            "thread_rank" => Self::Rank,
            "size" | "num_threads" => Self::Size,
            "thread_index" => Self::ThreadIndex,
            "group_dim" | "dim_threads" => Self::Dim,
            "group_index" => Self::GroupIndex,
            _ => return None,
        })
    }

    /// Does every thread of a block compute it alike?
    pub fn uniform(self) -> bool {
        !matches!(self, Self::Rank | Self::ThreadIndex)
    }

    /// The hazard it counts as: the builtin it reads.
    fn hazard(self) -> Hazard {
        match self {
            Self::GroupIndex => Hazard::BlockBuiltin,
            _ => Hazard::ThreadBuiltin,
        }
    }
}

enum Item {
    Found(Finding),
    /// A position query of a block group (`cta.thread_rank()`), also found
    /// as the builtin it reads: copies of bodies write it with the builtins.
    Query(BlockQuery),
    Calls {
        span: Span,
        /// The call's `(`.
        open: Span,
        name: String,
        targets: Vec<FnRef>,
    },
}

/// What a function declares that changes what its calls mean.
struct Locals<'p> {
    groups: HashMap<&'p str, Hazard>,
    /// The group variables that hold the whole block for certain: declared
    /// `thread_block`, made by `this_thread_block()` or copied from such a
    /// variable, or a `thread_group` parameter that every call of the
    /// function passes such a group (`Hazards::block_params`). A
    /// `thread_group` may hold a tile: its queries are positions.
    definite: HashSet<&'p str>,
    generic: HashSet<&'p str>,
    pointers: HashSet<&'p str>,
}

/// The hazard model of one file.
pub struct Hazards<'p> {
    program: &'p Program,
    /// Free functions by name (every overload).
    free: HashMap<&'p str, Vec<FunctionId>>,
    /// Member functions by name: defined in a class body, or defined outside
    /// it as `S::name` (those are free functions to the parser).
    methods: HashMap<&'p str, Vec<FnRef>>,
    /// The member operators of each class of the file (`operator()`,
    /// conversions, `operator+=`, ...), which code calls without their
    /// name: a function that names the class (a variable of it, a
    /// temporary, a cast) may call any of them.
    operators: HashMap<&'p str, Vec<FnRef>>,
    /// Functions declared but not defined in this file (not library ones),
    /// with the span of the first declaration's name.
    declared: HashMap<&'p str, Span>,
    /// Names of function pointers and function objects declared outside
    /// functions (globals, struct members).
    pointers: HashSet<&'p str>,
    /// Typedefs of function-pointer types.
    pointer_types: HashSet<&'p str>,
    /// Names that stand for namespace `cooperative_groups`.
    cg_namespaces: HashSet<&'p str>,
    /// Type aliases of CUB collectives: name -> (hazard, what it names).
    aliases: HashMap<&'p str, (Hazard, String)>,
    /// Variables declared `__shared__` outside every function.
    shared_globals: HashSet<&'p str>,
    /// Macros whose definition holds a hazard: name -> (hazard, primitive).
    macros: HashMap<&'p str, Vec<(Hazard, String)>>,
    /// Functions that a copy of a body may call as copies taking the
    /// positions as parameters, and why the others may not
    /// (`position_clone::copyable`).
    copyable: crate::position_clone::Copyable,
    /// Summaries of functions queried from outside.
    cache: RefCell<HashMap<FnRef, Summary>>,
    /// `thread_group` parameters (function, name) that every call in the
    /// file passes the block's group (`Locals::definite`).
    block_params: HashSet<(FunctionId, String)>,
}

const BLOCK_BARRIERS: &[&str] = &[
    "__syncthreads",
    "__syncthreads_count",
    "__syncthreads_and",
    "__syncthreads_or",
    "__barrier_sync",
];

/// Each class of the file (`struct`, `class` or `union` with a body) that
/// defines member operators, with them.
fn class_operators(program: &Program) -> HashMap<&str, Vec<FnRef>> {
    let view = program.view.as_str();
    let sig = &program.sig;
    let mut classes = HashMap::new();
    for (k, t) in sig.iter().enumerate() {
        if !matches!(t.text(view), "struct" | "class" | "union")
            || !sig.get(k + 1).is_some_and(|n| n.kind == TokenKind::Ident)
        {
            continue;
        }
        // `struct Name {`, `struct Name : Base<T> {`; not `template <class
        // T>`, a declaration or an elaborated type (`struct Name *p`).
        let mut based = false;
        let Some(open) = (k + 2..sig.len())
            .find_map(|j| match sig[j].text(view) {
                "{" => Some(Some(j)),
                ":" => {
                    based = true;
                    None
                }
                "," if based => None,
                ";" | "(" | ")" | "=" | ">" | "," | "*" | "&" => Some(None),
                _ => None,
            })
            .flatten()
        else {
            continue;
        };
        let Some(close) = program.brackets.partner(open) else {
            continue;
        };
        let body = Span::new(sig[open].start, sig[close].end);
        let ops: Vec<FnRef> = program
            .methods
            .iter()
            .enumerate()
            .filter(|(_, f)| f.name == "operator" && body.contains(f.body.start()))
            .map(|(i, _)| FnRef::Method(i))
            .collect();
        if !ops.is_empty() {
            classes
                .entry(sig[k + 1].text(view))
                .or_insert_with(Vec::new)
                .extend(ops);
        }
    }
    classes
}

/// Warp-level intrinsics (waiting for or exchanging values with lanes).
pub fn is_warp_intrinsic(name: &str) -> bool {
    name.starts_with("__shfl")
        || name.starts_with("__ballot")
        || name.starts_with("__match_")
        || name.starts_with("__reduce_")
        || matches!(
            name,
            "__any"
                | "__any_sync"
                | "__all"
                | "__all_sync"
                | "__uni_sync"
                | "__syncwarp"
                | "__activemask"
                // WMMA: every lane of the warp takes part.
                | "load_matrix_sync"
                | "store_matrix_sync"
                | "mma_sync"
                | "bmma_sync"
        )
}

/// CUB collectives that synchronize a block through shared memory.
const CUB_BLOCK: &[&str] = &[
    "BlockReduce",
    "BlockScan",
    "BlockLoad",
    "BlockStore",
    "BlockRadixSort",
    "BlockRadixRank",
    "BlockRadixRankMatch",
    "BlockExchange",
    "BlockHistogram",
    "BlockDiscontinuity",
    "BlockAdjacentDifference",
    "BlockMergeSort",
    "BlockRunLengthDecode",
    "BlockShuffle",
];

/// CUB's block and warp synchronization utilities (no shared memory).
const CUB_SYNC: &[(&str, Hazard)] = &[
    ("CTA_SYNC", Hazard::Block),
    ("CTA_SYNC_AND", Hazard::Block),
    ("CTA_SYNC_OR", Hazard::Block),
    ("WARP_SYNC", Hazard::Warp),
    ("WARP_ANY", Hazard::Warp),
    ("WARP_ALL", Hazard::Warp),
    ("WARP_BALLOT", Hazard::Warp),
    ("ShuffleIndex", Hazard::Warp),
    ("ShuffleUp", Hazard::Warp),
    ("ShuffleDown", Hazard::Warp),
];

/// CUB collectives of one warp.
const CUB_WARP: &[&str] = &[
    "WarpReduce",
    "WarpScan",
    "WarpLoad",
    "WarpStore",
    "WarpExchange",
    "WarpMergeSort",
];

/// Cooperative-groups types whose variables are groups.
const GROUP_TYPES: &[&str] = &[
    "thread_block",
    "thread_block_tile",
    "grid_group",
    "multi_grid_group",
    "cluster_group",
    "coalesced_group",
    "thread_group",
];

/// Operations on a group that wait for (or exchange values with) its
/// threads.
const GROUP_SYNC_OPS: &[&str] = &[
    "sync",
    "barrier_wait",
    "barrier_arrive",
    "arrive",
    "wait",
    "arrive_and_wait",
    "arrive_and_drop",
    "shfl",
    "shfl_up",
    "shfl_down",
    "shfl_xor",
    "any",
    "all",
    "ballot",
    "match_any",
    "match_all",
];

/// Group queries of the thread's position.
const GROUP_THREAD_QUERIES: &[&str] = &[
    "thread_rank",
    "thread_index",
    "meta_group_rank",
    "meta_group_size",
    "size",
    "num_threads",
    "dim_threads",
    "group_dim",
];

/// Group queries of the block's position.
const GROUP_BLOCK_QUERIES: &[&str] = &[
    "group_index",
    "block_index",
    "block_rank",
    "num_blocks",
    "dim_blocks",
];

/// Free functions of `cooperative_groups` that operate on a group given as
/// their first argument, and the scope assumed when that group is unknown.
fn cg_free_op(name: &str) -> Option<Hazard> {
    match name {
        "sync"
        | "wait"
        | "wait_prior"
        | "memcpy_async"
        | "invoke_one"
        | "invoke_one_broadcast"
        | "barrier_arrive"
        | "barrier_wait" => Some(Hazard::Block),
        "reduce"
        | "inclusive_scan"
        | "exclusive_scan"
        | "reduce_update_async"
        | "reduce_store_async" => Some(Hazard::Warp),
        "thread_rank" | "group_size" => Some(Hazard::ThreadPosition),
        _ => None,
    }
}

/// Well-known library functions: never "unseen" even when this file declares
/// them (a re-declaration of `vprintf`, a math function, ...). Intrinsics
/// starting with `__` count, once the barriers and warp operations above have
/// been recognized.
pub fn is_library_function(name: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "__",
        "atomic",
        "cuda",
        "make_",
        "curand",
        "tex1D",
        "tex2D",
        "tex3D",
        "texCubemap",
        "surf1D",
        "surf2D",
        "surf3D",
        "nv_",
        "cub",
        "thrust",
    ];
    const NAMES: &[&str] = &[
        "printf",
        "vprintf",
        "malloc",
        "free",
        "memcpy",
        "memset",
        "memcmp",
        "memmove",
        "assert",
        "min",
        "max",
        "umin",
        "umax",
        "llmin",
        "llmax",
        "ullmin",
        "ullmax",
        "clock",
        "clock64",
        "abs",
        "labs",
        "llabs",
        "isnan",
        "isinf",
        "isfinite",
        "signbit",
        "saturate",
        "strlen",
        "tex1Dfetch",
        "exit",
        "abort",
    ];
    /// Math functions; also with suffix `f` (float) and `l`.
    const MATH: &[&str] = &[
        "sqrt",
        "rsqrt",
        "cbrt",
        "rcbrt",
        "exp",
        "exp2",
        "exp10",
        "expm1",
        "log",
        "log2",
        "log10",
        "log1p",
        "logb",
        "ilogb",
        "pow",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "atan2",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
        "sincos",
        "sincospi",
        "sinpi",
        "cospi",
        "floor",
        "ceil",
        "round",
        "lround",
        "llround",
        "trunc",
        "rint",
        "lrint",
        "llrint",
        "nearbyint",
        "fmin",
        "fmax",
        "fma",
        "fmod",
        "remainder",
        "remquo",
        "hypot",
        "rhypot",
        "norm",
        "rnorm",
        "norm3d",
        "rnorm3d",
        "norm4d",
        "rnorm4d",
        "erf",
        "erfc",
        "erfinv",
        "erfcinv",
        "erfcx",
        "lgamma",
        "tgamma",
        "ldexp",
        "frexp",
        "modf",
        "scalbn",
        "scalbln",
        "nextafter",
        "copysign",
        "fdim",
        "nan",
        "fabs",
        "j0",
        "j1",
        "jn",
        "y0",
        "y1",
        "yn",
        "normcdf",
        "normcdfinv",
        "cyl_bessel_i0",
        "cyl_bessel_i1",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
        || NAMES.contains(&name)
        || MATH.iter().any(|m| {
            name == *m
                || name
                    .strip_prefix(m)
                    .is_some_and(|rest| rest == "f" || rest == "l")
        })
}

/// Namespaces whose functions are library functions.
const LIBRARY_NAMESPACES: &[&str] = &["std", "cuda", "cub", "thrust", "nvcuda", "wmma", "cuda_std"];

/// Keywords after which `( * name ) (` is a call, not a declaration.
const EXPRESSION_KEYWORDS: &[&str] = &[
    "return",
    "case",
    "else",
    "do",
    "throw",
    "co_return",
    "sizeof",
];

impl<'p> Hazards<'p> {
    pub fn new(program: &'p Program) -> Self {
        let view = program.view.as_str();
        let mut free: HashMap<&str, Vec<FunctionId>> = HashMap::new();
        let mut methods: HashMap<&str, Vec<FnRef>> = HashMap::new();
        for (i, f) in program.functions.with_ids() {
            free.entry(f.name.as_str()).or_default().push(i);
            // `void S::f() {...}`: a member defined outside its class.
            if view[..f.name_span.start()].trim_end().ends_with("::") {
                methods
                    .entry(f.name.as_str())
                    .or_default()
                    .push(FnRef::Free(i));
            }
        }
        for (i, f) in program.methods.iter().enumerate() {
            methods
                .entry(f.name.as_str())
                .or_default()
                .push(FnRef::Method(i));
        }
        let operators = class_operators(program);
        let mut declared = HashMap::new();
        for d in &program.declarations {
            let name = d.name.as_str();
            if !free.contains_key(name) && !is_library_function(name) {
                declared.entry(name).or_insert(d.name_span);
            }
        }
        let mut model = Hazards {
            program,
            free,
            methods,
            operators,
            declared,
            pointers: HashSet::new(),
            pointer_types: HashSet::new(),
            cg_namespaces: ["cooperative_groups", "cg"].into_iter().collect(),
            aliases: HashMap::new(),
            shared_globals: HashSet::new(),
            macros: HashMap::new(),
            copyable: Default::default(),
            cache: RefCell::new(HashMap::new()),
            block_params: HashSet::new(),
        };
        model.scan_file();
        model.block_params = model.find_block_params();
        model
    }

    /// The `thread_group` parameters of the file's functions that every
    /// call in the file passes the block's group (a variable that holds it
    /// for certain in the caller, or `this_thread_block()`): the CUDA
    /// programming guide's `reduce_sum(thread_group g, ...)` called as
    /// `reduce_sum(this_thread_block(), ...)`. Not where one call passes
    /// something else (a tile), the function is overloaded or named other
    /// than in a call, or it has no call.
    fn find_block_params(&self) -> HashSet<(FunctionId, String)> {
        let view = self.program.view.as_str();
        let sig = self.sig();
        let bodies: Vec<(usize, usize, &Function)> = self
            .program
            .functions
            .iter()
            .chain(&self.program.methods)
            .map(|f| (f.body_tokens.start, f.body_tokens.end, f))
            .collect();
        let mut out = HashSet::new();
        for (f, function) in self.program.functions.with_ids() {
            if self.free.get(function.name.as_str()).map_or(0, Vec::len) != 1
                || self.methods.contains_key(function.name.as_str())
            {
                continue;
            }
            for (index, p) in function.params.iter().enumerate() {
                let Some(name) = p.name.as_deref() else {
                    continue;
                };
                let words: Vec<&str> = p
                    .declaration
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .filter(|w| !w.is_empty())
                    .collect();
                if !words.contains(&"thread_group") || p.declaration.contains('*') {
                    continue;
                }
                let mut calls = 0;
                let mut every = true;
                let mut locals: HashMap<usize, Locals> = HashMap::new();
                for (k, t) in sig.iter().enumerate() {
                    // a macro that names it may call it with anything
                    if t.kind == TokenKind::Directive {
                        let text = t.text(view);
                        if text
                            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .any(|w| w == function.name)
                        {
                            every = false;
                            break;
                        }
                        continue;
                    }
                    if self.text(k) != function.name
                        || !self.is_ident(k)
                        || t.start == function.name_span.start()
                        || self
                            .program
                            .declarations
                            .iter()
                            .any(|d| d.name_span.start() == t.start)
                    {
                        continue;
                    }
                    // a call in a function's body (free or member), passing
                    // the block for certain
                    let caller = bodies
                        .iter()
                        .position(|&(open, close, _)| open < k && k < close);
                    let call = self.text(k + 1) == "("
                        && !matches!(self.text(k.saturating_sub(1)), "." | "->");
                    let (Some(c), true) = (caller, call) else {
                        every = false;
                        break;
                    };
                    let Some(close_paren) = self.program.brackets.partner(k + 1) else {
                        every = false;
                        break;
                    };
                    calls += 1;
                    let Some((a, b)) = self.argument_range(k + 1, close_paren, index) else {
                        every = false;
                        break;
                    };
                    let (_, close, cf) = bodies[c];
                    let l = locals.entry(c).or_insert_with(|| {
                        let head = self.program.sig_index_at(cf.name_span.end());
                        self.locals(cf, head, close)
                    });
                    if !((b == a + 1 && l.definite.contains(self.text(a)))
                        || self.creation_of_block(a, b))
                    {
                        every = false;
                        break;
                    }
                }
                if every && calls > 0 {
                    out.insert((f, name.to_string()));
                }
            }
        }
        out
    }

    /// The significant-token range of argument `index` of the call whose
    /// parentheses are `open..=close`.
    fn argument_range(&self, open: usize, close: usize, index: usize) -> Option<(usize, usize)> {
        let mut from = open + 1;
        let mut k = open + 1;
        let mut n = 0;
        while k <= close {
            if k == close || self.text(k) == "," {
                if n == index {
                    return (from < k).then_some((from, k));
                }
                n += 1;
                from = k + 1;
            } else if matches!(self.text(k), "(" | "[" | "{") {
                k = self.program.brackets.partner(k)?;
            }
            k += 1;
        }
        None
    }

    /// Is `from..to` exactly `this_thread_block()`, qualified or not?
    fn creation_of_block(&self, from: usize, to: usize) -> bool {
        self.block_group_creation(from) == Some(to)
    }

    /// At significant token `i`, `this_thread_block()` (qualified or not):
    /// the index after it.
    pub fn block_group_creation(&self, i: usize) -> Option<usize> {
        let mut k = i;
        while self.is_ident(k) && self.text(k + 1) == "::" {
            k += 2;
        }
        (self.text(k) == "this_thread_block" && self.text(k + 1) == "(" && self.text(k + 2) == ")")
            .then_some(k + 3)
    }

    /// The same model where a call all of whose possible targets are
    /// copyable passes their builtin reads on as `ThreadCloned` and
    /// `BlockCloned` (the copies of the caller's body call copies of them).
    pub fn with_copyable(mut self, copyable: crate::position_clone::Copyable) -> Self {
        self.copyable = copyable;
        self.cache.borrow_mut().clear();
        self
    }

    /// Does a call to `targets` go to copies taking the positions?
    fn cloned(&self, targets: &[FnRef]) -> bool {
        !targets.is_empty()
            && targets
                .iter()
                .all(|t| matches!(t, FnRef::Free(i) if self.copyable.functions.contains(i)))
    }

    /// Why a call of `name` cannot go to a copy taking the positions: the
    /// first of its possible targets that cannot be copied.
    pub fn why_not_copied(&self, name: &str) -> Option<&'static str> {
        if let Some(why) = self
            .free
            .get(name)
            .into_iter()
            .flatten()
            .find_map(|i| self.copyable.why_not.get(i))
        {
            return Some(why);
        }
        self.methods
            .contains_key(name)
            .then_some("it is a member function")
    }

    /// The calls that copies of `roots`' bodies make to copies taking the
    /// positions (transitively, through those copies' bodies), and the
    /// functions copied: every target of a call one of whose targets reads
    /// a builtin, where all of them are clonable.
    pub fn position_calls(&self, roots: &[FunctionId]) -> (Vec<FunctionId>, Vec<PositionCall>) {
        let mut clones: Vec<FunctionId> = Vec::new();
        let mut calls: Vec<PositionCall> = Vec::new();
        let mut seen: HashSet<FnRef> = HashSet::new();
        let mut work: Vec<FnRef> = roots.iter().map(|&r| FnRef::Free(r)).collect();
        while let Some(f) = work.pop() {
            if !seen.insert(f) {
                continue;
            }
            for item in self.scan(f) {
                let Item::Calls {
                    span,
                    open,
                    targets,
                    ..
                } = item
                else {
                    continue;
                };
                if !self.cloned(&targets) {
                    continue;
                }
                // (every target is a free function: `cloned`; `of` caches)
                let reads = targets.iter().any(|&t| {
                    let FnRef::Free(i) = t else {
                        return false;
                    };
                    let s = self.of(i);
                    [
                        Hazard::ThreadBuiltin,
                        Hazard::BlockBuiltin,
                        Hazard::ThreadCloned,
                        Hazard::BlockCloned,
                    ]
                    .iter()
                    .any(|&h| s.has(h))
                });
                if !reads {
                    continue;
                }
                let k = self.program.sig_index_at(open.start());
                let empty = self.program.brackets.partner(k) == Some(k + 1);
                if !calls.iter().any(|c| c.name == span) {
                    calls.push(PositionCall {
                        name: span,
                        open,
                        empty,
                    });
                }
                for t in targets {
                    if let FnRef::Free(i) = t {
                        if !clones.contains(&i) {
                            clones.push(i);
                        }
                        work.push(t);
                    }
                }
            }
        }
        clones.sort_by_key(|&i| self.program.functions[i].start);
        calls.sort_by_key(|c| c.name.start());
        (clones, calls)
    }

    /// What function `f` does, its callees included.
    pub fn of(&self, f: FunctionId) -> Summary {
        let key = FnRef::Free(f);
        if let Some(s) = self.cache.borrow().get(&key) {
            return s.clone();
        }
        let mut memo = HashMap::new();
        let mut active = HashSet::new();
        let s = self.summary(key, &mut memo, &mut active);
        self.cache.borrow_mut().insert(key, s.clone());
        s
    }

    /// What `f`'s own body does, every construct of it in source order
    /// (callees' not included), and for each call to a function of the
    /// file: the call, the callee's name, what the callee does, and whether
    /// the copies of bodies call copies of it taking the positions.
    pub fn own(&self, f: FunctionId) -> (Vec<Finding>, Vec<OwnCall>) {
        let mut findings = Vec::new();
        let mut calls = Vec::new();
        for item in self.scan(FnRef::Free(f)) {
            match item {
                Item::Found(finding) => findings.push(finding),
                Item::Query(_) => {}
                Item::Calls {
                    span,
                    name,
                    targets,
                    ..
                } => {
                    let copied = self.cloned(&targets);
                    for target in targets {
                        let mut memo = HashMap::new();
                        let mut active: HashSet<FnRef> = [FnRef::Free(f)].into_iter().collect();
                        calls.push(OwnCall {
                            span,
                            callee: name.clone(),
                            summary: self.summary(target, &mut memo, &mut active),
                            copied,
                        });
                    }
                }
            }
        }
        (findings, calls)
    }

    /// The variables of `f` (parameters and locals) that hold a group of
    /// the whole block (`cg::thread_block cta = cg::this_thread_block();`).
    pub fn block_groups(&self, f: FunctionId) -> HashSet<String> {
        let function = &self.program.functions[f];
        let head = self.program.sig_index_at(function.name_span.end());
        self.locals(function, head, function.body_tokens.end)
            .groups
            .into_iter()
            .filter(|&(_, h)| h == Hazard::Block)
            .map(|(name, _)| name.to_string())
            .collect()
    }

    /// The variables of `f` that hold the whole block's group for certain
    /// (`Locals::definite`): their position queries read the builtins.
    pub fn definite_block_groups(&self, f: FunctionId) -> HashSet<String> {
        let function = &self.program.functions[f];
        let head = self.program.sig_index_at(function.name_span.end());
        self.locals(function, head, function.body_tokens.end)
            .definite
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    /// Every position query of a block group in the file's functions
    /// (`BlockQuery`), in source order.
    pub fn block_queries(&self) -> Vec<BlockQuery> {
        let functions = self.program.functions.ids().map(FnRef::Free);
        let methods = (0..self.program.methods.len()).map(FnRef::Method);
        let mut out: Vec<BlockQuery> = functions
            .chain(methods)
            .flat_map(|f| self.scan(f))
            .filter_map(|item| match item {
                Item::Query(q) => Some(q),
                _ => None,
            })
            .collect();
        out.sort_by_key(|q| q.span.start());
        out.dedup();
        out
    }

    fn function(&self, f: FnRef) -> &'p Function {
        match f {
            FnRef::Free(i) => &self.program.functions[i],
            FnRef::Method(i) => &self.program.methods[i],
        }
    }

    /// The summary of `f` within one query: `memo` holds the functions done,
    /// `active` the calls in progress (a recursive call adds nothing).
    fn summary(
        &self,
        f: FnRef,
        memo: &mut HashMap<FnRef, Summary>,
        active: &mut HashSet<FnRef>,
    ) -> Summary {
        if let Some(s) = memo.get(&f) {
            return s.clone();
        }
        if !active.insert(f) {
            return Summary::default();
        }
        let mut summary = Summary::default();
        for item in self.scan(f) {
            match item {
                Item::Found(finding) => summary.add(finding),
                Item::Query(_) => {}
                Item::Calls {
                    span,
                    name,
                    targets,
                    ..
                } => {
                    let cloned = self.cloned(&targets);
                    for target in targets {
                        let inner = self.summary(target, memo, active);
                        for finding in inner.first.into_values() {
                            let mut calls = vec![Call {
                                span,
                                callee: name.clone(),
                            }];
                            calls.extend(finding.calls);
                            summary.add(Finding {
                                hazard: finding.hazard.through_call(cloned),
                                calls,
                                ..finding
                            });
                        }
                    }
                }
            }
        }
        active.remove(&f);
        memo.insert(f, summary.clone());
        summary
    }

    fn sig(&self) -> &'p [Token] {
        &self.program.sig
    }

    fn text(&self, i: usize) -> &'p str {
        self.program
            .sig
            .get(i)
            .map_or("", |t| t.text(&self.program.view))
    }

    fn is_ident(&self, i: usize) -> bool {
        self.program
            .sig
            .get(i)
            .is_some_and(|t| t.kind == TokenKind::Ident)
    }

    /// The construct text of `span`, whitespace collapsed and shortened.
    fn construct(&self, span: Span) -> String {
        let text = self.program.view[span.range()]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if text.len() > 60 {
            format!("{}...", &text[..57])
        } else {
            text
        }
    }

    /// Index just past the angle brackets opening at `at` (a `<`), within
    /// `limit`.
    fn skip_angles(&self, at: usize, limit: usize) -> Option<usize> {
        if self.text(at) != "<" {
            return None;
        }
        let mut depth = 0i32;
        let mut i = at;
        while i < limit {
            match self.text(i) {
                "(" | "[" | "{" => {
                    i = self.program.brackets.partner(i)?;
                }
                ";" | "}" | ")" | "]" => return None,
                "<" => depth += 1,
                ">" => depth -= 1,
                ">>" => depth -= 2,
                _ => {}
            }
            i += 1;
            if depth <= 0 {
                return Some(i);
            }
        }
        None
    }

    /// The first significant token of a name `a::b::c` ending at `i`.
    fn qualified_start(&self, mut i: usize) -> usize {
        while i >= 2 && self.text(i - 1) == "::" && self.is_ident(i - 2) {
            i -= 2;
        }
        if i >= 1 && self.text(i - 1) == "::" {
            i -= 1;
        }
        i
    }

    /// File-wide facts: namespace aliases of cooperative groups, CUB aliases,
    /// function pointers, `__shared__` variables at file scope, macros.
    fn scan_file(&mut self) {
        let sig = self.sig();
        let view = self.program.view.as_str();
        let n = sig.len();
        let mut pointer_types: HashSet<&str> = HashSet::new();
        // First pass: aliases and types.
        for (i, &t) in sig.iter().enumerate() {
            match t.kind {
                TokenKind::Directive => {
                    self.scan_macro(t.text(view));
                    continue;
                }
                TokenKind::Ident => {}
                _ => continue,
            }
            let s = t.text(view);
            match s {
                // namespace cg = cooperative_groups;
                "namespace" if self.text(i + 2) == "=" && self.is_ident(i + 1) => {
                    let end = self.statement_end(i, n);
                    if (i + 3..end).any(|k| self.text(k) == "cooperative_groups") {
                        self.cg_namespaces.insert(self.text(i + 1));
                    }
                }
                "typedef" | "using" => {
                    let end = self.statement_end(i, n);
                    let name = if s == "using" {
                        (self.text(i + 2) == "=" && self.is_ident(i + 1)).then(|| self.text(i + 1))
                    } else {
                        // typedef X<...> NAME;  or  typedef R (*NAME)(...);
                        self.typedef_name(i, end)
                    };
                    let Some(name) = name else { continue };
                    if let Some((hazard, what)) = (i + 1..end).find_map(|k| {
                        let w = self.text(k);
                        if CUB_BLOCK.contains(&w) {
                            Some((Hazard::Block, format!("cub::{w}")))
                        } else if CUB_WARP.contains(&w) {
                            Some((Hazard::Warp, format!("cub::{w}")))
                        } else {
                            None
                        }
                    }) {
                        self.aliases.insert(name, (hazard, what));
                    }
                    // typedef R (*NAME)(...);  using NAME = R (*)(...);
                    let pointer = (i + 1..end.saturating_sub(2)).any(|k| {
                        self.text(k) == "("
                            && self.text(k + 1) == "*"
                            && (self.text(k + 2) == ")"
                                || (self.text(k + 2) == name && self.text(k + 3) == ")"))
                    });
                    if pointer {
                        pointer_types.insert(name);
                    }
                }
                "__shared__" if !self.in_some_function(t.start) => {
                    if let Some(name) = self.declared_name(i + 1, n) {
                        self.shared_globals.insert(name);
                    }
                }
                _ => {}
            }
        }
        self.pointer_types = pointer_types;
        // Function pointers declared outside functions (globals, members).
        let outside: Vec<&str> = self
            .pointer_declarations(0, n)
            .into_iter()
            .filter(|&(_, at)| !self.in_some_function(sig[at].start))
            .map(|(name, _)| name)
            .collect();
        self.pointers.extend(outside);
    }

    /// Names declared as function pointers (`R (*name)(...)`, a variable of
    /// a function-pointer typedef) or function objects (`nvstd::function`)
    /// among significant tokens `from..to`, with the index of the name.
    fn pointer_declarations(&self, from: usize, to: usize) -> Vec<(&'p str, usize)> {
        let mut out = Vec::new();
        for i in from..to {
            let s = self.text(i);
            // R (*name)(...): a declaration when a type stands before it.
            if s == "("
                && self.text(i + 1) == "*"
                && self.is_ident(i + 2)
                && self.text(i + 3) == ")"
                && self.text(i + 4) == "("
                && i > 0
                && self.declares_before(i)
            {
                out.push((self.text(i + 2), i + 2));
            }
            if !self.is_ident(i) {
                continue;
            }
            let is_function_object = s == "function"
                && i >= 2
                && self.text(i - 1) == "::"
                && matches!(self.text(i - 2), "nvstd" | "std");
            if self.pointer_types.contains(s) || is_function_object {
                let mut j = if self.text(i + 1) == "<" {
                    self.skip_angles(i + 1, to).unwrap_or(i + 1)
                } else {
                    i + 1
                };
                while matches!(self.text(j), "const" | "&" | "&&" | "*" | "__restrict__") {
                    j += 1;
                }
                if self.is_ident(j)
                    && matches!(self.text(j + 1), "=" | ";" | "," | ")" | "[" | "(" | "{")
                {
                    out.push((self.text(j), j));
                }
            }
        }
        out
    }

    /// Is the offset inside a function (head or body) or member function?
    fn in_some_function(&self, offset: usize) -> bool {
        let inside = |fs: &[Function]| {
            let k = fs.partition_point(|f| f.start <= offset);
            k > 0 && offset < fs[k - 1].body.end()
        };
        inside(self.program.functions.as_slice()) || inside(&self.program.methods)
    }

    /// Is `( * name ) (` at `open` a declaration (a type before it)?
    fn declares_before(&self, open: usize) -> bool {
        let prev = open - 1;
        let p = self.text(prev);
        (self.is_ident(prev) && !EXPRESSION_KEYWORDS.contains(&p))
            || matches!(p, "*" | "&" | ">" | "::")
    }

    /// Index of the `;` ending the statement starting at `i` (or `limit`).
    fn statement_end(&self, i: usize, limit: usize) -> usize {
        let mut k = i;
        while k < limit {
            match self.text(k) {
                ";" => return k,
                "(" | "[" | "{" => {
                    k = self.program.brackets.partner(k).unwrap_or(k);
                }
                "}" => return k,
                _ => {}
            }
            k += 1;
        }
        limit
    }

    /// The name a typedef statement `i..end` declares.
    fn typedef_name(&self, i: usize, end: usize) -> Option<&'p str> {
        // A function-pointer typedef names its type inside `(*NAME)`.
        for k in i + 1..end.saturating_sub(3) {
            if self.text(k) == "(" && self.text(k + 1) == "*" && self.is_ident(k + 2) {
                return Some(self.text(k + 2));
            }
        }
        (end > i + 1 && self.is_ident(end - 1)).then(|| self.text(end - 1))
    }

    /// The variable declared by the tokens from `from` (after
    /// `__shared__`): the last name before `;`, `=`, `[`, `,` or `{`.
    fn declared_name(&self, from: usize, limit: usize) -> Option<&'p str> {
        let mut name = None;
        let mut k = from;
        while k < limit {
            let s = self.text(k);
            match s {
                ";" | "=" | "[" | "," | "{" => break,
                "<" => {
                    k = self.skip_angles(k, limit)?;
                    continue;
                }
                "(" => {
                    // __align__(16), alignas(8), __attribute__((...)).
                    k = self.program.brackets.partner(k)? + 1;
                    continue;
                }
                _ if self.is_ident(k) => name = Some(s),
                _ => {}
            }
            k += 1;
        }
        name
    }

    /// Record a `#define NAME ...` whose definition holds a hazard.
    fn scan_macro(&mut self, directive: &'p str) {
        let rest = directive[1..].trim_start();
        let Some(rest) = rest.strip_prefix("define") else {
            return;
        };
        if !rest.starts_with([' ', '\t']) {
            return;
        }
        let rest = rest.trim_start();
        let name_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let name = &rest[..name_len];
        let mut body = &rest[name_len..];
        if body.starts_with('(') {
            body = body.find(')').map_or("", |p| &body[p + 1..]);
        }
        let mut found: Vec<(Hazard, String)> = Vec::new();
        let mut add = |h: Hazard, what: &str| {
            if !found.iter().any(|(g, _)| *g == h) {
                found.push((h, what.to_string()));
            }
        };
        for word in body.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if BLOCK_BARRIERS.contains(&word) || CUB_BLOCK.contains(&word) || word == "CTA_SYNC" {
                add(Hazard::Block, word);
            } else if is_warp_intrinsic(word) || CUB_WARP.contains(&word) {
                add(Hazard::Warp, word);
            } else if word == "__shared__" {
                add(Hazard::Shared, word);
            } else if matches!(word, "this_grid" | "this_multi_grid" | "this_cluster") {
                add(Hazard::Grid, word);
            } else if matches!(word, "asm" | "__asm__" | "__asm") {
                for h in classify_ptx(body) {
                    add(h, word);
                }
            }
        }
        if !found.is_empty() && !name.is_empty() {
            self.macros.insert(name, found);
        }
    }

    /// The scope of a tile of `thread_block_tile<N>` / `tiled_partition<N>(g)`
    /// / `tiled_partition(g, N)` named at `i`: a warp when N <= 32 or N is
    /// not a literal, a block beyond.
    fn tile_scope(&self, i: usize, limit: usize) -> Hazard {
        let size = if self.text(i + 1) == "<" {
            self.skip_angles(i + 1, limit)
                .and_then(|end| (end == i + 4).then(|| self.text(i + 2)))
        } else if self.text(i + 1) == "(" {
            let close = self.program.brackets.partner(i + 1).unwrap_or(i + 1);
            (i + 2..close)
                .find(|&k| self.text(k) == ",")
                .and_then(|comma| (comma + 2 == close).then(|| self.text(comma + 1)))
        } else {
            None
        };
        let value = size.and_then(|s| {
            let digits = s.trim_end_matches(['u', 'U', 'l', 'L']);
            digits.strip_prefix("0x").map_or_else(
                || digits.parse::<u64>().ok(),
                |h| u64::from_str_radix(h, 16).ok(),
            )
        });
        match value {
            Some(v) if v > 32 => Hazard::Block,
            _ => Hazard::Warp,
        }
    }

    /// The scope of a group made by the creator function or type named at
    /// `i`, or of the group variable named there.
    fn creator_scope(
        &self,
        i: usize,
        limit: usize,
        groups: &HashMap<&str, Hazard>,
    ) -> Option<Hazard> {
        let s = self.text(i);
        Some(match s {
            "this_thread_block" | "thread_block" | "thread_group" => Hazard::Block,
            "this_grid" | "this_multi_grid" | "this_cluster" | "grid_group"
            | "multi_grid_group" | "cluster_group" => Hazard::Grid,
            "coalesced_threads" | "coalesced_group" | "binary_partition" | "labeled_partition" => {
                Hazard::Warp
            }
            "tiled_partition" | "thread_block_tile" => self.tile_scope(i, limit),
            "barrier" if i >= 1 && self.text(i - 1) == "::" => Hazard::Block,
            _ => return groups.get(s).copied(),
        })
    }

    /// Group variables (name -> scope), generic parameters (whose type is a
    /// template parameter) and function pointers declared in the head and
    /// body of `f` (significant tokens `from..to`).
    fn locals(&self, f: &Function, from: usize, to: usize) -> Locals<'p> {
        let mut groups: HashMap<&str, Hazard> = HashMap::new();
        let mut definite: HashSet<&str> = HashSet::new();
        let mut generic = HashSet::new();
        let type_params: Vec<&str> = f
            .template_params
            .iter()
            .filter(|p| {
                let d = p.declaration.trim_start();
                d.starts_with("typename") || d.starts_with("class")
            })
            .map(|p| p.name.as_str())
            .collect();
        let params_end = self.program.sig_index_at(f.body.start());
        let name_after = |mut j: usize| -> Option<usize> {
            while matches!(
                self.text(j),
                "const" | "&" | "&&" | "*" | "volatile" | "__restrict__"
            ) {
                j += 1;
            }
            (self.is_ident(j)
                && matches!(self.text(j + 1), "=" | "(" | "{" | ";" | "," | ")" | "["))
            .then_some(j)
        };
        for i in from..to {
            if !self.is_ident(i) || matches!(self.text(i.saturating_sub(1)), "." | "->") {
                continue;
            }
            let s = self.text(i);
            let group_type =
                GROUP_TYPES.contains(&s) || (s == "barrier" && i >= 1 && self.text(i - 1) == "::");
            if group_type {
                let after = if self.text(i + 1) == "<" {
                    self.skip_angles(i + 1, to).unwrap_or(i + 1)
                } else {
                    i + 1
                };
                if let (Some(j), Some(scope)) =
                    (name_after(after), self.creator_scope(i, to, &groups))
                {
                    groups.insert(self.text(j), scope);
                    if s == "thread_block" {
                        definite.insert(self.text(j));
                    }
                }
            }
            // `auto g = ...` and `thread_group g = ...`: the initializer
            // tells the scope (a tile of a `thread_group` is a warp).
            if s == "auto" || s == "thread_group" {
                let Some(j) = name_after(i + 1) else { continue };
                if self.text(j + 1) != "=" {
                    continue;
                }
                let mut k = j + 2;
                while k < to && !matches!(self.text(k), ";" | ",") {
                    if self.is_ident(k) {
                        // A creator, or a copy of a group (`auto g = cta;`).
                        let copy = groups.contains_key(self.text(k));
                        let usable = !copy || matches!(self.text(k + 1), ";" | "," | ")");
                        if let Some(scope) = self.creator_scope(k, to, &groups).filter(|_| usable) {
                            groups.insert(self.text(j), scope);
                            let t = self.text(k);
                            if t == "this_thread_block" || (copy && definite.contains(t)) {
                                definite.insert(self.text(j));
                            }
                            break;
                        }
                    }
                    if matches!(self.text(k), "(" | "[" | "{") {
                        k = self.program.brackets.partner(k).unwrap_or(k);
                    }
                    k += 1;
                }
            } else if i < params_end && type_params.contains(&s) {
                if let Some(j) = name_after(i + 1) {
                    if matches!(self.text(j + 1), "," | ")" | "=") {
                        generic.insert(self.text(j));
                    }
                }
            }
        }
        let pointers = self
            .pointer_declarations(from, to)
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        if let Some(id) = self
            .program
            .functions
            .ids()
            .find(|&k| std::ptr::eq(&self.program.functions[k], f))
        {
            let program: &'p Program = self.program;
            for p in &program.functions[id].params {
                if let Some(name) = p.name.as_deref() {
                    if self.block_params.contains(&(id, name.to_string())) {
                        definite.insert(name);
                    }
                }
            }
        }
        Locals {
            groups,
            definite,
            generic,
            pointers,
        }
    }

    /// What the body of `f` does, in source order.
    fn scan(&self, f: FnRef) -> Vec<Item> {
        let function = self.function(f);
        let sig = self.sig();
        let view = self.program.view.as_str();
        let head = self.program.sig_index_at(function.name_span.end());
        let (open, close) = (function.body_tokens.start, function.body_tokens.end);
        let locals = self.locals(function, head, close);
        let (groups, generic) = (&locals.groups, &locals.generic);
        let name = function.name.as_str();
        let mut items = Vec::new();
        let found = |hazard: Hazard, span: Span, construct: String| {
            Item::Found(Finding {
                hazard,
                construct,
                span,
                function: name.to_string(),
                calls: Vec::new(),
                unseen: None,
                declared: None,
            })
        };
        let unseen = |why: Unseen, span: Span, construct: String, declared: Option<Span>| {
            Item::Found(Finding {
                hazard: Hazard::Unseen,
                construct,
                span,
                function: name.to_string(),
                calls: Vec::new(),
                unseen: Some(why),
                declared,
            })
        };
        // `volatile` memory (a parameter's or the body's): warp-synchronous
        // code (`volatile int *v = sdata; v[tid] += v[tid + 16]; ...` with
        // no barrier between the steps) needs the threads of a warp in
        // lockstep, as a warp operation does; or another thread's write
        // polled, which one thread running the others in turn never sees.
        // Not a `volatile` scalar of the thread (`volatile float r = a * b;`).
        let shared_or_pointer = |k: usize| {
            let stop = |j: usize| matches!(self.text(j), ";" | "{" | "}" | "," | "=" | ")" | "(");
            let after = (k + 1..close)
                .take_while(|&j| !stop(j))
                .any(|j| matches!(self.text(j), "*" | "__shared__"));
            let before = (head..k)
                .rev()
                .take_while(|&j| !stop(j))
                .any(|j| matches!(self.text(j), "*" | "__shared__"));
            after || before
        };
        if let Some(k) = (head..close).find(|&k| {
            matches!(self.text(k), "volatile" | "__volatile__")
                && !matches!(self.text(k.wrapping_sub(1)), "asm" | "__asm__" | "__asm")
                && shared_or_pointer(k)
        }) {
            items.push(found(Hazard::Warp, sig[k].span(), "volatile".to_string()));
        }
        let mut i = open + 1;
        while i < close {
            let t = sig[i];
            let s = t.text(view);
            if t.kind == TokenKind::Punct {
                // (*name)(...): a call through a pointer.
                if s == "("
                    && self.text(i + 1) == "*"
                    && self.text(i + 3) == ")"
                    && self.text(i + 4) == "("
                    && !self.declares_before(i)
                {
                    let span = Span::new(t.start, sig[i + 3].end);
                    items.push(unseen(Unseen::Pointer, span, self.construct(span), None));
                }
                // table[k](...): a call through an element of an array.
                if s == "]" && self.text(i + 1) == "(" {
                    if let Some(o) = self.program.brackets.partner(i) {
                        let before = o.checked_sub(1).map_or("", |b| self.text(b));
                        // Not a lambda (`return [=](int x) {...}`).
                        let indexed = (o > 0
                            && self.is_ident(o - 1)
                            && !matches!(before, "delete" | "new" | "operator")
                            && !EXPRESSION_KEYWORDS.contains(&before))
                            || matches!(before, "]" | ")");
                        if indexed && o > open + 1 {
                            let span = Span::new(sig[o - 1].start, t.end);
                            items.push(unseen(Unseen::Pointer, span, self.construct(span), None));
                        }
                    }
                }
                i += 1;
                continue;
            }
            if t.kind != TokenKind::Ident {
                i += 1;
                continue;
            }
            let prev = self.text(i - 1);
            let member = matches!(prev, "." | "->");
            let qualifier =
                (prev == "::" && i >= 2 && self.is_ident(i - 2)).then(|| self.text(i - 2));
            let plain = !member && prev != "::";
            let token = t.span();
            // Builtins (replaced in a copy of the child's own body).
            if plain && matches!(s, "threadIdx" | "blockDim") {
                items.push(found(Hazard::ThreadBuiltin, token, s.to_string()));
                i += 1;
                continue;
            }
            if plain && matches!(s, "blockIdx" | "gridDim") {
                items.push(found(Hazard::BlockBuiltin, token, s.to_string()));
                i += 1;
                continue;
            }
            if s == "__shared__" {
                items.push(found(Hazard::Shared, token, s.to_string()));
                i += 1;
                continue;
            }
            if matches!(s, "asm" | "__asm__" | "__asm") {
                i = self.scan_asm(i, close, &mut items, name);
                continue;
            }
            if !member && BLOCK_BARRIERS.contains(&s) {
                items.push(found(Hazard::Block, token, s.to_string()));
                i += 1;
                continue;
            }
            if !member && is_warp_intrinsic(s) {
                items.push(found(Hazard::Warp, token, s.to_string()));
                i += 1;
                continue;
            }
            if !member {
                let collective = if CUB_BLOCK.contains(&s) {
                    Some((Hazard::Block, true))
                } else if CUB_WARP.contains(&s) {
                    Some((Hazard::Warp, true))
                } else {
                    CUB_SYNC
                        .iter()
                        .find(|(n, _)| *n == s)
                        .map(|(_, h)| (*h, false))
                };
                if let Some((h, storage)) = collective {
                    let start = self.qualified_start(i);
                    let span = Span::new(sig[start].start, t.end);
                    let construct = self.construct(span);
                    if storage {
                        // Its TempStorage lives in shared memory.
                        items.push(found(
                            Hazard::Shared,
                            span,
                            format!("{construct} (TempStorage in shared memory)"),
                        ));
                    }
                    items.push(found(h, span, construct));
                    i += 1;
                    continue;
                }
            }
            if s == "TempStorage" {
                items.push(found(Hazard::Shared, token, s.to_string()));
                i += 1;
                continue;
            }
            // A class whose operators wait or share memory (a functor's
            // `operator()`, cuda-samples' `SharedMemory<T>` conversion):
            // naming it may call them.
            if plain && self.text(i + 1) != "::" {
                if let Some(targets) = self.operators.get(s) {
                    items.push(Item::Calls {
                        span: token,
                        open: token,
                        name: format!("{s}::operator"),
                        targets: targets.clone(),
                    });
                }
            }
            if plain {
                if let Some((h, what)) = self.aliases.get(s) {
                    items.push(found(*h, token, format!("{s} ({what})")));
                    items.push(found(Hazard::Shared, token, format!("{s} ({what})")));
                    i += 1;
                    continue;
                }
                if let Some(list) = self.macros.get(s) {
                    for (h, what) in list {
                        items.push(found(*h, token, format!("{s} (expands to `{what}`)")));
                    }
                    i += 1;
                    continue;
                }
            }
            if !member && self.shared_globals.contains(s) && !groups.contains_key(s) {
                items.push(found(Hazard::Shared, token, format!("{s} (__shared__)")));
                i += 1;
                continue;
            }
            if !member {
                match s {
                    "this_grid" | "this_multi_grid" | "this_cluster" => {
                        let start = self.qualified_start(i);
                        let end = if self.text(i + 1) == "(" {
                            self.program
                                .brackets
                                .partner(i + 1)
                                .map_or(t.end, |c| sig[c].end)
                        } else {
                            t.end
                        };
                        items.push(found(
                            Hazard::Grid,
                            Span::new(sig[start].start, end),
                            self.construct(Span::new(sig[start].start, end)),
                        ));
                        i += 1;
                        continue;
                    }
                    "coalesced_threads" => {
                        let start = self.qualified_start(i);
                        let end = if self.text(i + 1) == "(" {
                            self.program
                                .brackets
                                .partner(i + 1)
                                .map_or(t.end, |c| sig[c].end)
                        } else {
                            t.end
                        };
                        items.push(found(
                            Hazard::Warp,
                            Span::new(sig[start].start, end),
                            self.construct(Span::new(sig[start].start, end)),
                        ));
                        i += 1;
                        continue;
                    }
                    _ => {}
                }
            }
            // Calls.
            let paren = match self.text(i + 1) {
                "(" => Some(i + 1),
                "<" => self
                    .skip_angles(i + 1, close)
                    .filter(|&k| self.text(k) == "("),
                _ => None,
            };
            let Some(paren) = paren else {
                i += 1;
                continue;
            };
            let Some(end) = self.program.brackets.partner(paren) else {
                i += 1;
                continue;
            };
            if member {
                if let Some(item) =
                    self.member_call(i, end, (groups, &locals.definite), generic, name, close)
                {
                    if let Item::Query(q) = &item {
                        items.push(found(q.position.hazard(), q.span, self.construct(q.span)));
                    }
                    items.push(item);
                }
                i += 1;
                continue;
            }
            let cg = qualifier.is_some_and(|q| self.cg_namespaces.contains(q));
            let user = self.free.contains_key(s) && !cg;
            if let Some(default) = cg_free_op(s).filter(|_| !user) {
                let first = self.first_argument(paren, end);
                let scope = first
                    .and_then(|a| groups.get(a).copied())
                    .or_else(|| first.filter(|a| generic.contains(a)).map(|_| default));
                let start = self.qualified_start(i);
                let span = Span::new(sig[start].start, sig[end].end);
                let query = match s {
                    "thread_rank" => Some(BlockPosition::Rank),
                    "group_size" => Some(BlockPosition::Size),
                    _ => None,
                };
                if let Some(position) = query.filter(|_| {
                    scope == Some(Hazard::Block)
                        && first.is_some_and(|g| locals.definite.contains(g))
                        && self.text(end - 1) == first.unwrap_or("")
                }) {
                    items.push(found(position.hazard(), span, self.construct(span)));
                    items.push(Item::Query(BlockQuery { span, position }));
                    i += 1;
                    continue;
                }
                if cg || scope.is_some() {
                    let hazard = match (default, scope) {
                        (Hazard::ThreadPosition, Some(Hazard::Grid)) => Hazard::Grid,
                        (Hazard::ThreadPosition, _) => Hazard::ThreadPosition,
                        (_, Some(scope)) => scope,
                        (d, None) => d,
                    };
                    items.push(found(hazard, span, self.construct(span)));
                    i += 1;
                    continue;
                }
            }
            if cg {
                i += 1;
                continue;
            }
            let library = qualifier.is_some_and(|q| LIBRARY_NAMESPACES.contains(&q));
            let targets: Option<Vec<FnRef>> = self
                .free
                .get(s)
                .map(|fs| fs.iter().map(|&k| FnRef::Free(k)).collect())
                .or_else(|| self.methods.get(s).cloned())
                .filter(|_| !library);
            let pointer = locals.pointers.contains(s) || self.pointers.contains(s);
            if let Some(targets) = targets {
                items.push(Item::Calls {
                    span: token,
                    open: sig[paren].span(),
                    name: s.to_string(),
                    targets,
                });
            } else if pointer && !library {
                items.push(unseen(Unseen::Pointer, token, s.to_string(), None));
            } else if let Some(declared) = self.declared.get(s).filter(|_| !library) {
                items.push(unseen(
                    Unseen::Declared,
                    token,
                    s.to_string(),
                    Some(*declared),
                ));
            }
            i += 1;
        }
        items
    }

    /// The first argument of the call `open..=close` when it is a plain
    /// name (`g`, `*g`, `&g`).
    fn first_argument(&self, open: usize, close: usize) -> Option<&'p str> {
        let mut k = open + 1;
        while matches!(self.text(k), "*" | "&") {
            k += 1;
        }
        (self.is_ident(k) && matches!(self.text(k + 1), "," | ")") && k < close)
            .then(|| self.text(k))
    }

    /// A call `object.op(...)` whose `op` is at `i` and whose `)` is at
    /// `end`.
    fn member_call(
        &self,
        i: usize,
        end: usize,
        (groups, definite): (&HashMap<&str, Hazard>, &HashSet<&str>),
        generic: &HashSet<&str>,
        function: &str,
        limit: usize,
    ) -> Option<Item> {
        let sig = self.sig();
        let op = self.text(i);
        let object = i.checked_sub(2)?;
        // The object: a name, or a call such as `cg::this_thread_block()`.
        // (and whether it holds the whole block for certain)
        let (object_start, scope, known, block) = if self.is_ident(object) {
            let name = self.text(object);
            let scope = groups.get(name).copied();
            let generic = generic.contains(name);
            (
                self.qualified_start(object),
                scope,
                scope.is_some() || generic,
                definite.contains(name),
            )
        } else if self.text(object) == ")" {
            let open = self.program.brackets.partner(object)?;
            let mut creator = open.checked_sub(1)?;
            if matches!(self.text(creator), ">" | ">>") {
                // tiled_partition<32>(cta): back over the template arguments.
                let mut k = creator;
                while k > 0 && self.text(k) != "<" {
                    k -= 1;
                }
                creator = k.checked_sub(1)?;
            }
            if !self.is_ident(creator) {
                return None;
            }
            let scope = self.creator_scope(creator, limit, groups);
            let block = self.text(creator) == "this_thread_block";
            (self.qualified_start(creator), scope, scope.is_some(), block)
        } else {
            (object, None, false, false)
        };
        let span = Span::new(sig[object_start].start, sig[end].end);
        let finding = |hazard: Hazard| {
            Item::Found(Finding {
                hazard,
                construct: self.construct(span),
                span,
                function: function.to_string(),
                calls: Vec::new(),
                unseen: None,
                declared: None,
            })
        };
        if block && scope == Some(Hazard::Block) && end == i + 2 {
            if let Some(position) = BlockPosition::of_member(op) {
                return Some(Item::Query(BlockQuery { span, position }));
            }
        }
        let warp_only = matches!(
            op,
            "shfl"
                | "shfl_up"
                | "shfl_down"
                | "shfl_xor"
                | "ballot"
                | "match_any"
                | "match_all"
                | "any"
                | "all"
        );
        if known {
            // A group, or a parameter of a template type used as one.
            let hazard = if GROUP_SYNC_OPS.contains(&op) {
                Some(match scope {
                    Some(s) => s,
                    None if warp_only => Hazard::Warp,
                    None => Hazard::Block,
                })
            } else if scope == Some(Hazard::Warp)
                && matches!(op, "size" | "num_threads" | "meta_group_size")
            {
                // A tile's size is a constant (a coalesced group's was
                // already found where the group was made).
                None
            } else if GROUP_THREAD_QUERIES.contains(&op) {
                Some(if scope == Some(Hazard::Grid) {
                    Hazard::Grid
                } else {
                    Hazard::ThreadPosition
                })
            } else if GROUP_BLOCK_QUERIES.contains(&op) {
                Some(if scope == Some(Hazard::Grid) {
                    Hazard::Grid
                } else {
                    Hazard::BlockPosition
                })
            } else {
                None
            };
            if let Some(hazard) = hazard {
                return Some(finding(hazard));
            }
        }
        if let Some(targets) = self.methods.get(op) {
            return Some(Item::Calls {
                span: sig[i].span(),
                open: self
                    .program
                    .brackets
                    .partner(end)
                    .map_or(sig[end].span(), |o| sig[o].span()),
                name: op.to_string(),
                targets: targets.clone(),
            });
        }
        if self.pointers.contains(op) {
            return Some(Item::Found(Finding {
                hazard: Hazard::Unseen,
                construct: self.construct(span),
                span,
                function: function.to_string(),
                calls: Vec::new(),
                unseen: Some(Unseen::Pointer),
                declared: None,
            }));
        }
        // Operations that only groups and barriers have, on any object.
        let hazard = match op {
            "sync" | "barrier_wait" | "barrier_arrive" | "arrive_and_wait" | "arrive_and_drop" => {
                Hazard::Block
            }
            "shfl" | "shfl_up" | "shfl_down" | "shfl_xor" | "ballot" | "match_any"
            | "match_all" => Hazard::Warp,
            "thread_rank" | "thread_index" | "meta_group_rank" => Hazard::ThreadPosition,
            "group_index" | "block_index" | "block_rank" => Hazard::BlockPosition,
            _ => return None,
        };
        Some(finding(hazard))
    }

    /// An `asm` statement at `i`: classify its text when it is a string
    /// literal, otherwise it is unseen. Returns the index after it.
    fn scan_asm(&self, i: usize, limit: usize, items: &mut Vec<Item>, function: &str) -> usize {
        let sig = self.sig();
        let mut j = i + 1;
        while matches!(
            self.text(j),
            "volatile" | "__volatile__" | "goto" | "inline"
        ) {
            j += 1;
        }
        if self.text(j) != "(" || j >= limit {
            return i + 1;
        }
        let Some(close) = self.program.brackets.partner(j) else {
            return i + 1;
        };
        let span = Span::new(sig[i].start, sig[close].end);
        let mut literal = String::new();
        let mut k = j + 1;
        while k < close && sig[k].kind == TokenKind::Str {
            literal.push_str(sig[k].text(&self.program.view));
            literal.push(' ');
            k += 1;
        }
        let construct = {
            let first = if k > j + 1 {
                self.construct(sig[j + 1].span())
            } else {
                "...".to_string()
            };
            let keyword = self.construct(Span::new(sig[i].start, sig[j].start));
            format!("{keyword}({first})")
        };
        let mut push = |hazard: Hazard, unseen: Option<Unseen>| {
            items.push(Item::Found(Finding {
                hazard,
                construct: construct.clone(),
                span,
                function: function.to_string(),
                calls: Vec::new(),
                unseen,
                declared: None,
            }))
        };
        if k == j + 1 {
            push(Hazard::Unseen, Some(Unseen::Asm));
        } else {
            for h in classify_ptx(&literal) {
                push(h, None);
            }
        }
        close + 1
    }
}

/// What PTX text does (the text of an `asm` string literal, quotes and
/// escapes included). Memory fences (`membar`, `fence`) and ordinary
/// instructions are no hazard.
pub fn classify_ptx(text: &str) -> Vec<Hazard> {
    // `\n`, `\t` and the like separate instructions.
    let mut clean = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            chars.next();
            clean.push(' ');
        } else {
            clean.push(c.to_ascii_lowercase());
        }
    }
    let mut out = Vec::new();
    let mut add = |h: Hazard| {
        if !out.contains(&h) {
            out.push(h);
        }
    };
    let words =
        clean.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%' | ':')));
    for word in words.filter(|w| !w.is_empty()) {
        if let Some(register) = word.strip_prefix('%') {
            let register = register.trim_start_matches('%');
            let base = register.split('.').next().unwrap_or("");
            match base {
                "tid" | "ntid" | "laneid" | "warpid" | "nwarpid" | "lanemask_eq"
                | "lanemask_le" | "lanemask_lt" | "lanemask_ge" | "lanemask_gt" => {
                    add(Hazard::ThreadPosition)
                }
                "ctaid" | "nctaid" | "clusterid" | "nclusterid" | "cluster_ctaid"
                | "cluster_nctaid" | "cluster_ctarank" | "cluster_nctarank" => {
                    add(Hazard::BlockPosition)
                }
                "dynamic_smem_size" | "total_smem_size" => add(Hazard::Shared),
                _ => {}
            }
            continue;
        }
        if word.starts_with("bar.warp") {
            add(Hazard::Warp);
        } else if word.starts_with("barrier.cluster") {
            add(Hazard::Grid);
        } else if word == "bar"
            || word == "barrier"
            || word.starts_with("bar.")
            || word.starts_with("barrier.")
            || word.starts_with("mbarrier")
        {
            add(Hazard::Block);
            if word.starts_with("mbarrier") {
                add(Hazard::Shared);
            }
        } else if [
            "shfl.", "vote.", "match.", "redux.", "wmma.", "mma.", "elect.",
        ]
        .iter()
        .any(|p| word.starts_with(p))
            || ["activemask", "ldmatrix", "stmatrix", "movmatrix"]
                .iter()
                .any(|p| word.starts_with(p))
        {
            add(Hazard::Warp);
        } else if word.starts_with("wgmma.") {
            add(Hazard::Block);
        } else if word == "exit" {
            add(Hazard::Exit);
        }
        if word.contains(".shared") && !word.starts_with("mbarrier") {
            add(Hazard::Shared);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;
    use crate::parser::parse;
    use crate::source::SourceFile;

    /// The summary of function `name` in `text`, and the text of each span.
    fn summary_of(text: &str, name: &str) -> (Summary, SourceFile) {
        let file = SourceFile::new("t.cu", text.as_bytes().to_vec());
        let program = parse(&file, lex(&file));
        let f = program.function_named(name).expect("function");
        let s = Hazards::new(&program).of(f);
        (s, file)
    }

    /// (hazard, construct text at the span, callees) of each finding.
    fn findings(text: &str, name: &str) -> Vec<(Hazard, String, Vec<String>)> {
        let (s, file) = summary_of(text, name);
        let mut v: Vec<_> = s
            .first
            .values()
            .map(|f| {
                (
                    f.hazard,
                    file.view[f.span.range()].to_string(),
                    f.calls.iter().map(|c| c.callee.clone()).collect(),
                )
            })
            .collect();
        v.sort();
        v
    }

    fn hazard_at(text: &str, name: &str, hazard: Hazard) -> Option<String> {
        let (s, file) = summary_of(text, name);
        s.get(hazard).map(|f| file.view[f.span.range()].to_string())
    }

    const CG: &str = "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n";

    #[test]
    fn syncthreads_family_and_barrier_sync() {
        for b in [
            "__syncthreads()",
            "__syncthreads_count(p)",
            "__syncthreads_and(p)",
            "__syncthreads_or(p)",
            "__barrier_sync(1)",
        ] {
            let text = format!("__global__ void k(int p) {{ int x = {b}; }}\n");
            let name = b.split('(').next().unwrap();
            assert_eq!(
                hazard_at(&text, "k", Hazard::Block).as_deref(),
                Some(name),
                "{b}"
            );
        }
    }

    #[test]
    fn warp_intrinsics() {
        for w in [
            "__syncwarp()",
            "__shfl_down_sync(~0u, v, 1)",
            "__ballot_sync(~0u, v)",
            "__any_sync(~0u, v)",
            "__all_sync(~0u, v)",
            "__match_any_sync(~0u, v)",
            "__reduce_add_sync(~0u, v)",
            "__activemask()",
            "__shfl_xor_sync(~0u, v, 1)",
        ] {
            let text = format!("__global__ void k(int v) {{ int x = {w}; }}\n");
            let name = w.split('(').next().unwrap();
            assert_eq!(
                hazard_at(&text, "k", Hazard::Warp).as_deref(),
                Some(name),
                "{w}"
            );
            assert_eq!(hazard_at(&text, "k", Hazard::Block), None, "{w}");
        }
    }

    #[test]
    fn cooperative_group_block_sync_through_a_variable() {
        let text = format!("{CG}__global__ void k(int *a) {{\n  cg::thread_block cta = cg::this_thread_block();\n  a[0] = 1;\n  cg::sync(cta);\n  cta.sync();\n}}\n");
        let (s, file) = summary_of(&text, "k");
        let f = s.get(Hazard::Block).unwrap();
        assert_eq!(&file.view[f.span.range()], "cg::sync(cta)");
        assert_eq!(f.construct, "cg::sync(cta)");
        // Creating the group alone is no hazard.
        let creation = format!("{CG}__global__ void k(int *a) {{ cg::thread_block cta = cg::this_thread_block(); a[0] = 1; }}\n");
        assert!(findings(&creation, "k").is_empty());
        let member = format!("{CG}__global__ void k(int *a) {{ auto cta = cg::this_thread_block(); cta.sync(); cta.barrier_wait(cta.barrier_arrive()); }}\n");
        assert_eq!(
            hazard_at(&member, "k", Hazard::Block).as_deref(),
            Some("cta.sync()")
        );
        let full = "#include <cooperative_groups.h>\n__global__ void k(int *a) { cooperative_groups::thread_block b = cooperative_groups::this_thread_block(); cooperative_groups::sync(b); }\n";
        assert_eq!(
            hazard_at(full, "k", Hazard::Block).as_deref(),
            Some("cooperative_groups::sync(b)")
        );
        let using = "#include <cooperative_groups.h>\nusing namespace cooperative_groups;\n__global__ void k(int *a) { thread_block b = this_thread_block(); sync(b); }\n";
        assert_eq!(
            hazard_at(using, "k", Hazard::Block).as_deref(),
            Some("sync(b)")
        );
        let alias = "#include <cooperative_groups.h>\nnamespace coop = cooperative_groups;\n__global__ void k(int *a) { coop::sync(coop::this_thread_block()); }\n";
        assert_eq!(
            hazard_at(alias, "k", Hazard::Block).as_deref(),
            Some("coop::sync(coop::this_thread_block())")
        );
    }

    #[test]
    fn cooperative_group_inline_calls() {
        let text = format!(
            "{CG}__global__ void k(int *a) {{ a[0] = 1; cg::this_thread_block().sync(); }}\n"
        );
        assert_eq!(
            hazard_at(&text, "k", Hazard::Block).as_deref(),
            Some("cg::this_thread_block().sync()")
        );
        let text = format!("{CG}__global__ void k(int *a) {{ a[0] = cg::tiled_partition<16>(cg::this_thread_block()).shfl_down(a[1], 1); }}\n");
        assert_eq!(
            hazard_at(&text, "k", Hazard::Warp).as_deref(),
            Some("cg::tiled_partition<16>(cg::this_thread_block()).shfl_down(a[1], 1)")
        );
        assert_eq!(hazard_at(&text, "k", Hazard::Block), None);
        let text = format!(
            "{CG}__global__ void k(int *a) {{ a[0] = cg::coalesced_threads().ballot(a[1]); }}\n"
        );
        assert_eq!(
            hazard_at(&text, "k", Hazard::Warp).as_deref(),
            Some("cg::coalesced_threads()")
        );
    }

    #[test]
    fn grid_groups() {
        let text = format!("{CG}__global__ void k(int *a) {{\n  cg::grid_group grid = cg::this_grid();\n  a[0] = 1;\n  grid.sync();\n}}\n");
        let (s, file) = summary_of(&text, "k");
        let f = s.get(Hazard::Grid).unwrap();
        assert_eq!(&file.view[f.span.range()], "cg::this_grid()");
        // A grid group received as a parameter: its operations.
        let text = format!("{CG}__device__ void wait(cg::grid_group &g) {{ g.sync(); }}\n");
        assert_eq!(
            hazard_at(&text, "wait", Hazard::Grid).as_deref(),
            Some("g.sync()")
        );
        let text =
            format!("{CG}__global__ void k(int *a) {{ a[0] = 1; cg::this_grid().sync(); }}\n");
        assert_eq!(
            hazard_at(&text, "k", Hazard::Grid).as_deref(),
            Some("cg::this_grid()")
        );
        assert_eq!(hazard_at(&text, "k", Hazard::Block), None);
        let text =
            format!("{CG}__global__ void k(int *a) {{ auto g = cg::this_cluster(); g.sync(); }}\n");
        assert_eq!(
            hazard_at(&text, "k", Hazard::Grid).as_deref(),
            Some("cg::this_cluster()")
        );
    }

    #[test]
    fn tiles_are_warps_up_to_32_threads() {
        for (decl, scope) in [
            (
                "cg::thread_block_tile<32> t = cg::tiled_partition<32>(cta);",
                Hazard::Warp,
            ),
            ("auto t = cg::tiled_partition<8>(cta);", Hazard::Warp),
            ("auto t = cg::tiled_partition(cta, 16);", Hazard::Warp),
            ("auto t = cg::tiled_partition(cta, TILE);", Hazard::Warp),
            (
                "cg::thread_group t = cg::tiled_partition(cta, 16);",
                Hazard::Warp,
            ),
            ("cg::thread_group t = cta;", Hazard::Block),
            (
                "cg::thread_block_tile<64> t = cg::tiled_partition<64>(cta);",
                Hazard::Block,
            ),
        ] {
            let text = format!("{CG}__global__ void k(int *a) {{\n  cg::thread_block cta = cg::this_thread_block();\n  {decl}\n  a[0] = t.shfl(a[1], 0);\n  t.sync();\n}}\n");
            assert_eq!(
                hazard_at(&text, "k", scope).as_deref(),
                Some("t.shfl(a[1], 0)"),
                "{decl}"
            );
            if scope == Hazard::Warp {
                assert_eq!(hazard_at(&text, "k", Hazard::Block), None, "{decl}");
            }
        }
        // A coalesced group: `coalesced_threads()` already reads the active mask.
        let text = format!("{CG}__global__ void k(int *a) {{\n  cg::coalesced_group t = cg::coalesced_threads();\n  a[0] = t.shfl(a[1], 0);\n}}\n");
        assert_eq!(
            hazard_at(&text, "k", Hazard::Warp).as_deref(),
            Some("cg::coalesced_threads()")
        );
        assert_eq!(hazard_at(&text, "k", Hazard::Block), None);
        // Tile collectives of cooperative groups.
        let text = format!("{CG}#include <cooperative_groups/reduce.h>\n__global__ void k(int *a) {{ auto t = cg::tiled_partition<32>(cg::this_thread_block()); a[0] = cg::reduce(t, a[1], cg::plus<int>()); a[2] = cg::inclusive_scan(t, a[3]); bool b = t.any(a[0]); unsigned m = t.match_any(a[1]); }}\n");
        assert_eq!(
            hazard_at(&text, "k", Hazard::Warp).as_deref(),
            Some("cg::reduce(t, a[1], cg::plus<int>())")
        );
        assert_eq!(hazard_at(&text, "k", Hazard::Block), None);
    }

    #[test]
    fn groups_passed_as_parameters() {
        let text = format!("{CG}__device__ int sum(cg::thread_block_tile<32> &tile, int v) {{ return tile.shfl_down(v, 1); }}\n__device__ void wait(const cg::thread_block &b) {{ b.sync(); }}\ntemplate <typename Group> __device__ void generic(Group g) {{ g.sync(); }}\n");
        assert_eq!(
            hazard_at(&text, "sum", Hazard::Warp).as_deref(),
            Some("tile.shfl_down(v, 1)")
        );
        assert_eq!(
            hazard_at(&text, "wait", Hazard::Block).as_deref(),
            Some("b.sync()")
        );
        assert_eq!(
            hazard_at(&text, "generic", Hazard::Block).as_deref(),
            Some("g.sync()")
        );
    }

    #[test]
    fn block_group_queries_read_builtins() {
        let text = format!("{CG}__global__ void k(int *a) {{ cg::thread_block cta = cg::this_thread_block(); a[cta.thread_rank()] = cta.group_index().x + cg::group_size(cta); }}\n");
        assert_eq!(
            hazard_at(&text, "k", Hazard::ThreadBuiltin).as_deref(),
            Some("cta.thread_rank()")
        );
        assert_eq!(
            hazard_at(&text, "k", Hazard::BlockBuiltin).as_deref(),
            Some("cta.group_index()")
        );
        assert_eq!(hazard_at(&text, "k", Hazard::ThreadPosition), None);
        assert_eq!(hazard_at(&text, "k", Hazard::Block), None);
        let file = SourceFile::new("t.cu", text.clone().into_bytes());
        let program = parse(&file, lex(&file));
        let queries: Vec<(&str, BlockPosition)> = Hazards::new(&program)
            .block_queries()
            .into_iter()
            .map(|q| (&text[q.span.range()], q.position))
            .collect();
        assert_eq!(
            queries,
            [
                ("cta.thread_rank()", BlockPosition::Rank),
                ("cta.group_index()", BlockPosition::GroupIndex),
                ("cg::group_size(cta)", BlockPosition::Size),
            ]
        );
    }

    #[test]
    fn thread_group_parameters_hold_the_block_where_every_call_passes_it() {
        let helper = "__device__ int rank_of(cg::thread_group g) { return g.thread_rank(); }\n";
        let block = format!("{CG}{helper}__global__ void k(int *a) {{ auto b = cg::this_thread_block(); a[rank_of(b)] = rank_of(cg::this_thread_block()); }}\n");
        assert_eq!(
            hazard_at(&block, "rank_of", Hazard::ThreadBuiltin).as_deref(),
            Some("g.thread_rank()")
        );
        // one call passes a tile: `g.thread_rank()` is the tile's rank there
        let tile = format!("{CG}{helper}__global__ void k(int *a) {{ auto b = cg::this_thread_block(); a[rank_of(b)] = rank_of(cg::tiled_partition(b, 32)); }}\n");
        assert_eq!(
            hazard_at(&tile, "rank_of", Hazard::ThreadPosition).as_deref(),
            Some("g.thread_rank()")
        );
        // a member function passing a tile, a macro naming it, a forward
        // declaration (which is no use)
        let member = format!("{CG}{helper}struct W {{ __device__ int f() {{ return rank_of(cg::tiled_partition(cg::this_thread_block(), 32)); }} }};\n__global__ void k(int *a) {{ a[rank_of(cg::this_thread_block())] = 1; }}\n");
        assert_eq!(
            hazard_at(&member, "rank_of", Hazard::ThreadPosition).as_deref(),
            Some("g.thread_rank()")
        );
        let macro_use = format!("{CG}{helper}#define RANK(g) rank_of(g)\n__global__ void k(int *a) {{ a[rank_of(cg::this_thread_block())] = 1; }}\n");
        assert_eq!(
            hazard_at(&macro_use, "rank_of", Hazard::ThreadPosition).as_deref(),
            Some("g.thread_rank()")
        );
        let declared = format!("{CG}__device__ int rank_of(cg::thread_group g);\n__global__ void k(int *a) {{ a[rank_of(cg::this_thread_block())] = 1; }}\n{helper}");
        assert_eq!(
            hazard_at(&declared, "rank_of", Hazard::ThreadBuiltin).as_deref(),
            Some("g.thread_rank()")
        );
        // a tile of 64 threads waits like a block, but is not the block
        let wide = format!("{CG}__global__ void k(int *a) {{ cg::thread_group t = cg::tiled_partition(cg::this_thread_block(), 64); a[t.thread_rank()] = 1; }}\n");
        assert_eq!(
            hazard_at(&wide, "k", Hazard::ThreadPosition).as_deref(),
            Some("t.thread_rank()")
        );
    }

    #[test]
    fn other_group_queries_read_positions() {
        // a warp tile's rank, and a group of a template type
        let text = format!("{CG}__global__ void k(int *a) {{ auto t = cg::tiled_partition<32>(cg::this_thread_block()); a[t.thread_rank()] = 1; }}\ntemplate <typename G> __device__ void f(G g, int *a) {{ a[g.thread_rank()] = 0; }}\n");
        assert_eq!(
            hazard_at(&text, "k", Hazard::ThreadPosition).as_deref(),
            Some("t.thread_rank()")
        );
        assert_eq!(
            hazard_at(&text, "f", Hazard::ThreadPosition).as_deref(),
            Some("g.thread_rank()")
        );
        let file = SourceFile::new("t.cu", text.into_bytes());
        let program = parse(&file, lex(&file));
        assert!(Hazards::new(&program).block_queries().is_empty());
    }

    #[test]
    fn cuda_barrier() {
        let text = "#include <cuda/barrier>\n__global__ void k(int *a) {\n  __shared__ cuda::barrier<cuda::thread_scope_block> bar;\n  a[0] = 1;\n  bar.arrive_and_wait();\n}\n";
        assert_eq!(
            hazard_at(text, "k", Hazard::Block).as_deref(),
            Some("bar.arrive_and_wait()")
        );
        assert_eq!(
            hazard_at(text, "k", Hazard::Shared).as_deref(),
            Some("__shared__")
        );
        let text = "#include <cuda/barrier>\n__device__ void f(cuda::barrier<cuda::thread_scope_block> &bar) { auto t = bar.arrive(); bar.wait(std::move(t)); }\n";
        assert_eq!(
            hazard_at(text, "f", Hazard::Block).as_deref(),
            Some("bar.arrive()")
        );
    }

    #[test]
    fn cub_collectives_and_their_storage() {
        let text = "#include <cub/cub.cuh>\n__global__ void k(int *a) {\n  typedef cub::BlockReduce<int, 128> BlockReduceT;\n  __shared__ typename BlockReduceT::TempStorage temp;\n  int s = BlockReduceT(temp).Sum(a[threadIdx.x]);\n}\n";
        assert_eq!(
            hazard_at(text, "k", Hazard::Block).as_deref(),
            Some("cub::BlockReduce")
        );
        // An alias declared at file scope counts where it is used.
        let text = "#include <cub/cub.cuh>\nusing WarpSum = cub::WarpReduce<int>;\n__global__ void k(int *a, WarpSum::TempStorage *t) {\n  a[0] = WarpSum(t[0]).Sum(a[1]);\n}\n";
        assert_eq!(
            hazard_at(text, "k", Hazard::Warp).as_deref(),
            Some("WarpSum")
        );
        assert_eq!(hazard_at(text, "k", Hazard::Block), None);
        let text = "__global__ void k(int *a) { cub::CTA_SYNC(); }\n";
        assert_eq!(
            hazard_at(text, "k", Hazard::Block).as_deref(),
            Some("cub::CTA_SYNC")
        );
    }

    #[test]
    fn volatile_memory_is_warp_synchronous() {
        // NVIDIA's unrolled reduction: a volatile pointer to shared memory,
        // in the body or a callee's parameter; a volatile shared array; a
        // cast to a volatile pointer
        for text in [
            "__global__ void k(int *a) {\n  __shared__ int s[64];\n  s[threadIdx.x] = a[threadIdx.x];\n  __syncthreads();\n  if (threadIdx.x < 32) { volatile int *v = s; v[threadIdx.x] += v[threadIdx.x + 32]; }\n}\n",
            "__device__ void w(volatile int *v, int t) { v[t] += v[t + 16]; }\n__global__ void k(int *a) {\n  __shared__ int s[64];\n  w(s, threadIdx.x);\n}\n",
            "__global__ void k(int *a) {\n  __shared__ volatile int s[64];\n  s[threadIdx.x] = a[0];\n}\n",
            "__global__ void k(int *a) {\n  while (((volatile int *)a)[0] == 0) {}\n}\n",
        ] {
            assert_eq!(
                hazard_at(text, "k", Hazard::Warp).as_deref(),
                Some("volatile"),
                "{text}"
            );
        }
        // a thread's own volatile scalar, and `asm volatile`: not
        let text = "__global__ void k(float *a) {\n  volatile float r = a[0] * a[1];\n  asm volatile(\"membar.cta;\");\n  a[2] = r;\n}\n";
        assert_eq!(hazard_at(text, "k", Hazard::Warp), None);
    }

    #[test]
    fn shared_memory_at_file_scope_and_through_pointers() {
        let text = "extern __shared__ float smem[];\n__device__ float *scratch() { return smem; }\n__global__ void k(float *a) {\n  float *p = scratch();\n  p[0] = a[0];\n}\n";
        let (s, file) = summary_of(text, "k");
        let f = s.get(Hazard::Shared).unwrap();
        assert_eq!(&file.view[f.span.range()], "smem");
        assert_eq!(f.function, "scratch");
        assert_eq!(f.calls.len(), 1);
        assert_eq!(&file.view[f.calls[0].span.range()], "scratch");
        let text = "__global__ void k(float *a) { extern __shared__ float s[]; a[0] = s[0]; }\n";
        assert_eq!(
            hazard_at(text, "k", Hazard::Shared).as_deref(),
            Some("__shared__")
        );
    }

    #[test]
    fn inline_assembly_is_classified_or_unseen() {
        for (asm, hazard) in [
            ("asm volatile(\"bar.sync 0;\")", Hazard::Block),
            ("asm(\"barrier.sync 1, 64;\")", Hazard::Block),
            (
                "asm volatile(\"bar.arrive 1, 64;\" ::: \"memory\")",
                Hazard::Block,
            ),
            (
                "asm(\"bar.red.popc.u32 %0, 0, %1;\" : \"=r\"(x) : \"r\"(x))",
                Hazard::Block,
            ),
            ("asm(\"bar.warp.sync -1;\")", Hazard::Warp),
            (
                "asm volatile(\"shfl.sync.down.b32 %0, %1, 1, 31, -1;\" : \"=r\"(x) : \"r\"(x))",
                Hazard::Warp,
            ),
            (
                "asm(\"vote.sync.any.pred %0, %1, -1;\" : \"=r\"(x) : \"r\"(x))",
                Hazard::Warp,
            ),
            (
                "asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(x))",
                Hazard::ThreadPosition,
            ),
            (
                "asm(\"mov.u32 %0, %%ctaid.x;\" : \"=r\"(x))",
                Hazard::BlockPosition,
            ),
            (
                "asm(\"ld.shared.u32 %0, [%1];\" : \"=r\"(x) : \"r\"(x))",
                Hazard::Shared,
            ),
            ("asm(\"exit;\")", Hazard::Exit),
            (
                "asm(\"barrier.cluster.arrive;\\n\\tbarrier.cluster.wait;\")",
                Hazard::Grid,
            ),
            ("asm volatile(PTX_SYNC)", Hazard::Unseen),
        ] {
            let text =
                format!("__global__ void k(int *a) {{ unsigned x = 1; {asm}; a[0] = x; }}\n");
            let (s, file) = summary_of(&text, "k");
            let f = s.get(hazard).unwrap_or_else(|| panic!("{asm}: {s:?}"));
            assert_eq!(&file.view[f.span.range()], asm);
        }
        // Fences and ordinary instructions are no hazard.
        for asm in [
            "asm volatile(\"membar.gl;\" ::: \"memory\")",
            "asm(\"fence.acq_rel.gpu;\")",
            "asm(\"mov.u32 %0, %%clock;\" : \"=r\"(x))",
            "asm(\"add.cc.u32 %0, %0, 1;\" : \"+r\"(x))",
        ] {
            let text =
                format!("__global__ void k(int *a) {{ unsigned x = 1; {asm}; a[0] = x; }}\n");
            assert!(
                findings(&text, "k")
                    .iter()
                    .all(|f| f.0 == Hazard::BlockBuiltin || f.0 == Hazard::ThreadBuiltin),
                "{asm}: {:?}",
                findings(&text, "k")
            );
        }
    }

    #[test]
    fn hazards_in_callees_carry_the_chain_of_calls() {
        let text = "__device__ void inner(int *s) { s[0] = 1; __syncthreads(); }\n__device__ void outer(int *s) { inner(s); }\n__global__ void k(int *a) { a[0] = 0; outer(a); }\n";
        let (s, file) = summary_of(text, "k");
        let f = s.get(Hazard::Block).unwrap();
        assert_eq!(&file.view[f.span.range()], "__syncthreads");
        assert_eq!(f.function, "inner");
        let calls: Vec<_> = f
            .calls
            .iter()
            .map(|c| (c.callee.as_str(), &file.view[c.span.range()]))
            .collect();
        assert_eq!(calls, [("outer", "outer"), ("inner", "inner")]);
        assert_eq!(f.anchor(), text.find("outer(a)").unwrap());
        // Recursion ends.
        let text = "__device__ int r(int n) { return n ? r(n - 1) : __shfl_sync(~0u, n, 0); }\n__global__ void k(int *a) { a[0] = r(3); }\n";
        assert_eq!(
            hazard_at(text, "k", Hazard::Warp).as_deref(),
            Some("__shfl_sync")
        );
    }

    #[test]
    fn builtins_become_positions_through_calls() {
        let text = "__device__ int lane() { return threadIdx.x % 32; }\n__global__ void k(int *a) { a[blockIdx.x] = lane(); }\n";
        let (s, _) = summary_of(text, "k");
        assert_eq!(s.get(Hazard::BlockBuiltin).unwrap().construct, "blockIdx");
        assert_eq!(
            s.get(Hazard::ThreadPosition).unwrap().construct,
            "threadIdx"
        );
        assert!(s.get(Hazard::ThreadBuiltin).is_none());
    }

    #[test]
    fn member_functions_of_the_file_are_followed() {
        let text = "struct Acc {\n  int *s;\n  __device__ void add(int v) { s[threadIdx.x] = v; __syncthreads(); }\n};\n__global__ void k(int *a) { Acc acc{a}; acc.add(1); }\n";
        let (s, _) = summary_of(text, "k");
        let f = s.get(Hazard::Block).unwrap();
        assert_eq!(f.function, "add");
        assert_eq!(f.calls[0].callee, "add");
    }

    #[test]
    fn member_operators_are_followed_through_their_class() {
        // a functor's `operator()` that waits at a barrier
        let text = "struct BlockSum {\n  __device__ int operator()(int *s, int v) const { s[threadIdx.x] = v; __syncthreads(); return s[0]; }\n};\n__global__ void k(int *a) { __shared__ int s[32]; BlockSum f; a[0] = f(s, 1); }\n";
        let (s, _) = summary_of(text, "k");
        let f = s.get(Hazard::Block).unwrap();
        assert_eq!(f.function, "operator");
        assert_eq!(f.calls[0].callee, "BlockSum::operator");
        assert!(s.has(Hazard::ThreadPosition));
        // cuda-samples' SharedMemory<T>: dynamic shared memory through a
        // conversion operator
        let text = "template <class T> struct SharedMemory {\n  __device__ inline operator T *() { extern __shared__ int __smem[]; return (T *)__smem; }\n};\n__global__ void k(int *a) { int *sdata = SharedMemory<int>(); sdata[0] = a[0]; }\n";
        let (s, _) = summary_of(text, "k");
        assert_eq!(
            s.get(Hazard::Shared).unwrap().calls[0].callee,
            "SharedMemory::operator"
        );
        // a class whose operators do neither: nothing
        let text = "struct V { float x; __device__ V operator+(const V &o) const { return V{x + o.x}; } };\n__global__ void k(float *a) { V p{a[0]}, q{a[1]}; a[2] = (p + q).x; }\n";
        let (s, _) = summary_of(text, "k");
        assert!(!s.has(Hazard::Block) && !s.has(Hazard::Shared) && !s.has(Hazard::ThreadPosition));
    }

    #[test]
    fn unseen_code() {
        // Declared here, defined in another translation unit.
        let text = "__device__ void helper(int *a);\nextern __device__ int other(int);\n__global__ void k(int *a) { helper(a); a[1] = other(a[0]); }\n";
        let (s, file) = summary_of(text, "k");
        let f = s.get(Hazard::Unseen).unwrap();
        assert_eq!(&file.view[f.span.range()], "helper");
        assert_eq!(f.unseen, Some(Unseen::Declared));
        assert_eq!(&file.view[f.declared.unwrap().range()], "helper");
        // Declared and defined later: seen.
        let text = "__device__ void helper(int *a);\n__global__ void k(int *a) { helper(a); }\n__device__ void helper(int *a) { a[0] = 1; }\n";
        assert!(findings(text, "k").is_empty());
        // Lambdas are part of the body, not pointers.
        let text = "__device__ int apply(int *a) { auto f = [=](int v) { return v + a[0]; }; a[1] = f(2); return [=](int v) { return v; }(a[2]); }\n";
        assert!(
            findings(text, "apply").is_empty(),
            "{:?}",
            findings(text, "apply")
        );
        // Function pointers.
        for (text, span) in [
            ("__device__ void apply(int (*op)(int), int *a) { a[0] = op(a[0]); }\n", "op"),
            ("__device__ void apply(int (*op)(int), int *a) { a[0] = (*op)(a[0]); }\n", "(*op)"),
            ("typedef int (*op_t)(int);\n__device__ void apply(op_t f, int *a) { a[0] = f(a[0]); }\n", "f"),
            ("__device__ int (*table[2])(int);\n__device__ void apply(int *a) { a[0] = table[a[1]](a[0]); }\n", "table[a[1]]"),
            ("#include <nvfunctional>\n__device__ void apply(nvstd::function<int(int)> f, int *a) { a[0] = f(a[0]); }\n", "f"),
        ] {
            assert_eq!(hazard_at(text, "apply", Hazard::Unseen).as_deref(), Some(span), "{text}");
        }
    }

    #[test]
    fn library_functions_are_seen() {
        let text = "extern \"C\" __device__ int vprintf(const char *, void *);\n__device__ float sqrtf(float);\n__device__ int atomicAdd(int *, int);\n\
                    __device__ int local(int v) { return v + 1; }\n\
                    __global__ void k(int *a, float *f) { atomicAdd(a, 1); printf(\"%d\", a[0]); a[1] = min(a[2], max(a[3], 4)); f[0] = sqrtf(f[1]) + __expf(f[2]) + __ldg(f + 3);\n\
                    a[4] = local(a[5]); int *p = (int *)malloc(4); memcpy(p, a, 4); free(p); cudaGetLastError(); __threadfence(); std::min(1, 2); }\n";
        assert!(findings(text, "k").is_empty(), "{:?}", findings(text, "k"));
        for name in [
            "sqrtf",
            "atomicAdd",
            "printf",
            "min",
            "__ldg",
            "cudaMalloc",
            "cudaDeviceSynchronize",
            "expf",
            "floorf",
            "fmaxf",
            "memcpy",
        ] {
            assert!(is_library_function(name), "{name}");
        }
        assert!(!is_library_function("helper"));
    }

    #[test]
    fn macros_that_expand_to_barriers() {
        let text = "#define SYNC() __syncthreads()\n#define LANE_SUM(v) __shfl_down_sync(0xffffffff, v, 1)\n__global__ void k(int *a) { a[0] = LANE_SUM(a[1]); SYNC(); }\n";
        let (s, _) = summary_of(text, "k");
        assert_eq!(
            s.get(Hazard::Block).unwrap().construct,
            "SYNC (expands to `__syncthreads`)"
        );
        assert_eq!(
            s.get(Hazard::Warp).unwrap().construct,
            "LANE_SUM (expands to `__shfl_down_sync`)"
        );
    }

    #[test]
    fn first_of_orders_by_where_the_function_reaches_it() {
        let text = "__device__ void f() { __syncthreads(); }\n__global__ void k(int *a) { f(); __shared__ int s[4]; s[0] = __shfl_sync(~0u, 1, 0); }\n";
        let (s, file) = summary_of(text, "k");
        let first = s
            .first_of(&[Hazard::Shared, Hazard::Warp, Hazard::Block], |_| true)
            .unwrap();
        assert_eq!(first.hazard, Hazard::Block);
        let first = s
            .first_of(&[Hazard::Shared, Hazard::Warp], |_| true)
            .unwrap();
        assert_eq!(&file.view[first.span.range()], "__shared__");
    }
}
