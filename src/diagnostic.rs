//! Diagnostics: every problem dpopt reports is a `DiagnosticKind`, rendered by
//! miette with the offending source span, `FILE:LINE:COL`, and a fix.

// The types the kinds hold, for code that matches on them.
pub use crate::hazard::Unseen;
pub use crate::pragma::ClauseName;
use crate::source::{SourceFile, Span};
use miette::{LabeledSpan, NamedSource, Severity, SourceSpan};

/// What went wrong. Each variant knows its code, message and help text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiagnosticKind {
    UnknownClause {
        name: String,
        suggestion: Option<String>,
    },
    MissingArguments {
        clause: String,
        expected: &'static str,
    },
    UnclosedArguments {
        clause: String,
    },
    WrongArgumentCount {
        clause: String,
        expected: &'static str,
        found: usize,
    },
    NotPositive {
        clause: String,
        value: String,
    },
    NotAnInteger {
        clause: String,
        value: String,
    },
    /// An integer literal too large for any kernel configuration.
    TooLarge {
        clause: String,
        value: String,
    },
    /// A value above what the clause allows (`parent_threads` above the
    /// threads a block can have).
    AboveLimit {
        clause: String,
        value: String,
        limit: u64,
    },
    DuplicateClause {
        clause: String,
    },
    BadGranularity {
        value: String,
        suggestion: Option<String>,
    },
    BadBufferKind {
        value: String,
    },
    /// `alloc(...)` with something else than `warp`, `block` or `none`.
    BadAllocChoice {
        value: String,
        suggestion: Option<String>,
    },
    /// `promote(x)` with `x` neither `basic` nor `aggregate`.
    BadPromotion {
        value: String,
        suggestion: Option<String>,
    },
    /// A clause that stands alone (`promote`, `acquire`) next to another.
    ClauseConflict {
        clause: String,
        other: String,
    },
    BadWorkVariable {
        value: String,
    },
    NeedsAggregation {
        clause: String,
    },
    NeedsThreshold {
        clause: String,
    },
    NotImplementedYet {
        clause: String,
    },
    MalformedPragma,
    DuplicatePragma,
    NoLaunchAfterPragma {
        found: String,
    },
    HostSideLaunch {
        function: String,
    },
    LaunchOutsideFunction,
    KernelNotDefined {
        kernel: String,
        /// Where dpopt looked: the input, each header and child source read,
        /// each include it could not find and the directories searched.
        searched: Vec<String>,
    },
    NotAKernel {
        kernel: String,
    },
    /// A `#pragma dp` in a file the input includes or names with
    /// `--child-source`: dpopt rewrites only its input, so it is not applied.
    PragmaNotApplied {
        file: String,
    },
    /// The generated code includes CUB and cooperative groups, which declare
    /// `std::<name>`; the file declares its own `<name>` and has `using
    /// namespace std;`, so its uses become ambiguous.
    StdNameClash {
        name: String,
    },
    /// `coarsen` without `threshold`, `consldt` or `floor` on a child that
    /// launches kernels itself: its coarsened launch has no fallback, and the
    /// coarsened blocks keep more launches pending than the original's did.
    CoarsenPending {
        kernel: String,
    },
    /// A recursion rewritten at its own launch whose kernel also launches
    /// another kernel without `#pragma dp` (no fallback), in a file that
    /// leaves the pending-launch limit at its default.
    RecursionPending {
        kernel: String,
        launched: String,
    },
    /// A recursion aggregated at its own launch without `threshold`: a
    /// launch that finds no room under the pending-launch limit has no
    /// fallback, in a file that leaves the limit at its default.
    AggregationPending {
        kernel: String,
    },
    /// A launch passes a pointer to the parent's `__shared__` memory, which
    /// a child grid cannot access.
    SharedArgument {
        kernel: String,
        argument: String,
    },
    /// A child of a `--child-source` file (another translation unit), whose
    /// body dpopt copies into the output, calls a function of that file that
    /// the output cannot call.
    ChildHelperHidden {
        kernel: String,
        helper: String,
        /// The file that defines both.
        file: String,
        /// What keeps the output from calling it (`it is \`static\` there`).
        why: String,
        /// The input may declare it (a function with external linkage).
        declarable: bool,
    },
    MalformedLaunch {
        reason: String,
    },
    NotSerializable {
        kernel: String,
        construct: String,
    },
    /// A child with block barriers or shared memory whose body the serial
    /// version cannot split at its barriers (`barrier_split.rs`).
    BarrierSplit {
        clause: String,
        kernel: String,
        why: String,
        fix: String,
    },
    BuiltinInCallee {
        kernel: String,
        callee: String,
        builtin: String,
        clause: String,
        /// The function that reads it: `callee` itself, or one it calls
        /// (the notes show the calls on the way).
        reader: String,
        /// The function on the way that dpopt cannot copy with the
        /// positions as parameters (`position_clone.rs`), and why; `None`
        /// when the read is not a builtin (a group query, `asm`).
        uncopied: Option<(String, String)>,
    },
    ReturnWithBarrier {
        kernel: String,
    },
    VariadicTemplate {
        kernel: String,
    },
    UnbalancedBrackets,
    ThreadCountFallback {
        kernel: String,
    },
    BlockAggregationHazard {
        granularity: String,
        function: String,
        construct: String,
    },
    FixedConfigurationHazard {
        clause: String,
        kernel: String,
        construct: String,
    },
    /// A thresholded launch whose thread count is a constant: the threshold
    /// decides the same way every time.
    /// A clause value names something this file does not declare.
    UnseenName {
        name: String,
        clause: String,
    },
    /// A clause value names something declared only inside functions (a
    /// parameter or a local): the generated code uses it at file scope.
    ValueNotConstant {
        name: String,
        clause: String,
    },
    /// `child_threads(EXPR)` names something the parent cannot see at the
    /// launch (a local of another function, or one declared after it).
    NameNotVisible {
        name: String,
        parent: String,
    },
    ThresholdDecided {
        kernel: String,
        threads: i128,
        threshold: i128,
        site: String,
    },
    /// Two sites run by one kernel state different values of a clause that
    /// belongs to the kernel (`Lands::Kernel`: `parent_threads`); its code
    /// names the clause (`dpopt::parent_threads_differ`).
    KernelClauseDiffers {
        clause: ClauseName,
        kernel: String,
        first: String,
        second: String,
    },
    /// Several definitions fit a launched kernel's name and argument count.
    AmbiguousKernel {
        kernel: String,
        count: usize,
        arity: usize,
    },
    /// A pragma nested deeper than dpopt reads (brackets in a clause
    /// argument; deeper launch configurations are read as text).
    TooDeep {
        limit: usize,
    },
    /// A comment, string, character or raw-string literal that is never
    /// closed.
    Unterminated {
        what: &'static str,
    },
    /// A token spelled in a way that dpopt does not read: split by a line
    /// splice, or an alternative token (digraph) such as `<%`.
    UnreadableToken {
        token: String,
        why: &'static str,
        fix: String,
    },
    /// A macro expanding to `_Pragma` may hide a `#pragma dp` that dpopt
    /// cannot see.
    PragmaInMacro {
        name: String,
        /// The `_Pragma` is written in the macro's arguments (not its body).
        in_arguments: bool,
    },
    /// Coarsening would change what the child waits for or reads (grid
    /// synchronization, the block index read outside `blockIdx`).
    NotCoarsenable {
        kernel: String,
        construct: String,
    },
    /// A check needs to know what some code does, and dpopt cannot see it:
    /// a function declared here but defined elsewhere, a call through a
    /// pointer, assembly that is not a string literal.
    CannotSee {
        /// The clause that needs to know, e.g. `threshold`, `consldt(block)`.
        clause: String,
        /// The function holding the call or the assembly.
        function: String,
        /// The called name, the pointer expression or the assembly.
        what: String,
        why: Unseen,
    },
    /// A device-side `cudaDeviceSynchronize()` after launches (CDP1) that
    /// `--migrate-sync` would turn into a tail-launched continuation.
    SyncMigratable {
        kernel: String,
        call: String,
    },
    /// A device-side sync inside a loop, an `if`, a block or an expression:
    /// the continuation would have to resume inside it.
    SyncNested {
        kernel: String,
        call: String,
        construct: String,
    },
    /// A device-side sync after launches in a `__device__` function.
    SyncNotInKernel {
        function: String,
        call: String,
    },
    /// A second device-side sync in one kernel.
    SyncTwice {
        kernel: String,
        call: String,
    },
    /// The code after a sync uses shared memory.
    PostworkShared {
        kernel: String,
        name: String,
    },
    /// The code after a sync waits for or exchanges values with other
    /// threads (a block barrier, a warp operation).
    PostworkBarrier {
        kernel: String,
        construct: String,
    },
    /// Something a continuation cannot carry: a template kernel, a kernel
    /// whose body dpopt copies for `#pragma dp`, a reference or array local.
    PostworkUnsupported {
        kernel: String,
        what: String,
    },
    /// `floor` cannot be applied: the parent, the child, the launch or a
    /// host launch needs what a launch-free copy and a drain grid cannot do.
    FloorRefused {
        kernel: String,
        why: String,
        fix: String,
    },
    /// `floor` and `consldt(...)` on one pragma.
    FloorWithAggregation,
    /// `floor` on a kernel this file never launches from host code: the
    /// launch-free copy is generated but nothing runs it.
    FloorUnused {
        kernel: String,
    },
    /// `alloc(warp|block)` on a launch none of whose pointers the parent
    /// allocates in a form dpopt recognizes.
    AllocNotFound {
        parent: String,
    },
    /// A pointer whose allocation would be aggregated reaches code that
    /// dpopt cannot follow (which could free a slice on its own).
    AllocEscape {
        pointer: String,
        function: String,
        what: String,
    },
    /// The child frees the slice, but is launched elsewhere too, with
    /// pointers that are no slices: its free cannot be rewritten.
    AllocFreeShared {
        pointer: String,
        child: String,
    },
    /// An allocation in a place whose code dpopt cannot rewrite.
    AllocUnsupported {
        pointer: String,
        what: String,
    },
    /// `alloc(block)` waits at a block barrier: code running in the same
    /// blocks must not wait for the waiting threads.
    AllocBlockHazard {
        function: String,
        construct: String,
    },
    /// The automatic aggregation of allocations under `consldt` leaves one
    /// per thread, for the reason of the error `alloc(...)` would give.
    AllocNotAggregated {
        refused: Box<DiagnosticKind>,
    },
    /// `promote` on a launch of another kernel than the one holding it.
    PromoteNotRecursive {
        kernel: String,
        parent: String,
    },
    /// `promote` on a launch of more than one block.
    PromoteGrid {
        kernel: String,
    },
    /// The promoted launch's block size or shared memory uses a value the
    /// kernel computes (the step is launched before its code runs).
    PromoteConfig {
        kernel: String,
        what: &'static str,
        name: String,
    },
    /// The promoted launch can run more than once per step (a loop, a second
    /// launch of the kernel).
    PromotePlacement {
        kernel: String,
        construct: String,
    },
    /// Something a promoted chain cannot run (a template kernel, a stream,
    /// grid synchronization, ...).
    PromoteUnsupported {
        kernel: String,
        what: String,
    },
    /// `#pragma dp acquire` where no promoted step can wait.
    AcquirePlacement {
        reason: String,
    },
    /// The code before `#pragma dp acquire` uses a value the predecessor
    /// computes (a postponed argument).
    AcquirePostponed {
        kernel: String,
        name: String,
    },
}

/// What a kernel's clause states and how to choose it (`Lands::Kernel`).
fn kernel_clause(clause: ClauseName) -> (&'static str, &'static str) {
    match clause.takes() {
        crate::pragma::Takes::Positive {
            lands: crate::pragma::Lands::Kernel { what, advice, .. },
            ..
        } => (what, advice),
        _ => ("value", "state one value"),
    }
}

impl DiagnosticKind {
    pub fn code(&self) -> &'static str {
        use DiagnosticKind::*;
        match self {
            UnknownClause { .. } => "dpopt::unknown_clause",
            MissingArguments { .. } | UnclosedArguments { .. } | WrongArgumentCount { .. } => {
                "dpopt::clause_arguments"
            }
            NotPositive { .. } | NotAnInteger { .. } | TooLarge { .. } | AboveLimit { .. } => {
                "dpopt::clause_value"
            }
            DuplicateClause { .. } => "dpopt::duplicate_clause",
            BadGranularity { .. }
            | BadBufferKind { .. }
            | BadWorkVariable { .. }
            | BadAllocChoice { .. }
            | BadPromotion { .. } => "dpopt::clause_value",
            ClauseConflict { .. } => "dpopt::clause_conflict",
            NeedsAggregation { .. } => "dpopt::needs_consldt",
            NeedsThreshold { .. } => "dpopt::needs_threshold",
            NotImplementedYet { .. } => "dpopt::not_implemented",
            MalformedPragma => "dpopt::malformed_pragma",
            DuplicatePragma => "dpopt::duplicate_pragma",
            NoLaunchAfterPragma { .. } => "dpopt::no_launch",
            HostSideLaunch { .. } => "dpopt::host_launch",
            LaunchOutsideFunction => "dpopt::launch_context",
            KernelNotDefined { .. } | NotAKernel { .. } => "dpopt::unknown_kernel",
            ChildHelperHidden { .. } => "dpopt::child_helper",
            PragmaNotApplied { .. } => "dpopt::pragma_not_applied",
            StdNameClash { .. } => "dpopt::std_name_clash",
            CoarsenPending { .. } => "dpopt::coarsen_pending",
            RecursionPending { .. } => "dpopt::recursion_pending",
            AggregationPending { .. } => "dpopt::aggregation_pending",
            SharedArgument { .. } => "dpopt::shared_argument",
            MalformedLaunch { .. } => "dpopt::malformed_launch",
            NotSerializable { .. } => "dpopt::not_serializable",
            BarrierSplit { .. } => "dpopt::barrier_split",
            BuiltinInCallee { .. } => "dpopt::builtin_in_callee",
            ReturnWithBarrier { .. } => "dpopt::return_with_barrier",
            VariadicTemplate { .. } => "dpopt::variadic_template",
            UnbalancedBrackets => "dpopt::unbalanced",
            ThreadCountFallback { .. } => "dpopt::thread_count",
            BlockAggregationHazard { .. } => "dpopt::block_aggregation",
            FixedConfigurationHazard { .. } => "dpopt::fixed_configuration",
            TooDeep { .. } => "dpopt::too_deep",
            AmbiguousKernel { .. } => "dpopt::ambiguous_kernel",
            KernelClauseDiffers { clause, .. } => clause.differ_code(),
            ThresholdDecided { .. } => "dpopt::threshold_decided",
            UnseenName { .. } => "dpopt::unseen_name",
            ValueNotConstant { .. } => "dpopt::value_not_constant",
            NameNotVisible { .. } => "dpopt::name_not_visible",
            Unterminated { .. } => "dpopt::unterminated",
            UnreadableToken { .. } => "dpopt::unreadable_token",
            PragmaInMacro { .. } => "dpopt::pragma_in_macro",
            NotCoarsenable { .. } => "dpopt::not_coarsenable",
            CannotSee { .. } => "dpopt::cannot_see",
            SyncMigratable { .. } => "dpopt::cdp1_sync",
            SyncNested { .. } => "dpopt::postwork_nested",
            SyncNotInKernel { .. } => "dpopt::postwork_context",
            SyncTwice { .. } => "dpopt::postwork_twice",
            PostworkShared { .. } => "dpopt::postwork_shared",
            PostworkBarrier { .. } => "dpopt::postwork_barrier",
            PostworkUnsupported { .. } => "dpopt::postwork_unsupported",
            FloorRefused { .. } => "dpopt::floor",
            FloorWithAggregation => "dpopt::floor_with_consldt",
            FloorUnused { .. } => "dpopt::floor_unused",
            AllocNotFound { .. } => "dpopt::alloc_not_found",
            AllocEscape { .. } => "dpopt::alloc_escape",
            AllocFreeShared { .. } => "dpopt::alloc_free",
            AllocUnsupported { .. } => "dpopt::alloc_unsupported",
            AllocBlockHazard { .. } => "dpopt::alloc_block",
            AllocNotAggregated { .. } => "dpopt::alloc_not_aggregated",
            PromoteNotRecursive { .. } => "dpopt::promote_not_recursive",
            PromoteGrid { .. } => "dpopt::promote_grid",
            PromoteConfig { .. } => "dpopt::promote_config",
            PromotePlacement { .. } => "dpopt::promote_placement",
            PromoteUnsupported { .. } => "dpopt::promote_unsupported",
            AcquirePlacement { .. } => "dpopt::acquire_placement",
            AcquirePostponed { .. } => "dpopt::acquire_postponed",
        }
    }

    pub fn severity(&self) -> Severity {
        match self {
            DiagnosticKind::ThreadCountFallback { .. }
            | DiagnosticKind::PragmaInMacro { .. }
            | DiagnosticKind::ThresholdDecided { .. }
            | DiagnosticKind::UnseenName { .. }
            | DiagnosticKind::SyncMigratable { .. }
            | DiagnosticKind::FloorUnused { .. }
            | DiagnosticKind::AllocNotAggregated { .. }
            | DiagnosticKind::PragmaNotApplied { .. }
            | DiagnosticKind::StdNameClash { .. }
            | DiagnosticKind::CoarsenPending { .. }
            | DiagnosticKind::RecursionPending { .. }
            | DiagnosticKind::AggregationPending { .. }
            | DiagnosticKind::SharedArgument { .. } => Severity::Warning,
            _ => Severity::Error,
        }
    }

    pub fn message(&self) -> String {
        use DiagnosticKind::*;
        match self {
            UnknownClause { name, .. } => format!("unknown clause `{name}` in `#pragma dp`"),
            MissingArguments { clause, .. } => format!("clause `{clause}` needs arguments"),
            UnclosedArguments { clause } => format!("the arguments of `{clause}` are not closed with `)`"),
            WrongArgumentCount { clause, expected, found } => {
                format!("clause `{clause}` takes {expected}, found {found} argument(s)")
            }
            NotPositive { clause, value } => {
                format!("`{clause}({value})`: the value must be a positive integer")
            }
            NotAnInteger { clause, value } => {
                format!("`{clause}({value})`: expected an integer literal or a macro name")
            }
            TooLarge { clause, value } => {
                format!("`{clause}({value})`: the value does not fit in 64 bits")
            }
            AboveLimit { clause, value, limit } => {
                format!("`{clause}({value})`: the value must be at most {limit}")
            }
            KernelClauseDiffers {
                clause,
                kernel,
                first,
                second,
            } => {
                let name = clause.spelling();
                format!(
                    "kernel `{kernel}` runs sites stating different {}s: `{name}({first})` and `{name}({second})`",
                    kernel_clause(*clause).0
                )
            }
            DuplicateClause { clause } => format!("clause `{clause}` is given twice"),
            BadGranularity { value, .. } => format!("`{value}` is not an aggregation granularity"),
            BadBufferKind { value } => format!("`{value}` is not an aggregation buffer kind"),
            BadAllocChoice { value, .. } => format!("`{value}` is not an allocation granularity"),
            BadWorkVariable { value } => format!("`{value}` is not a variable name"),
            BadPromotion { value, .. } => format!("`{value}` is not a kind of promotion"),
            ClauseConflict { clause, other } => {
                format!("`{clause}` cannot be combined with `{other}` in one `#pragma dp`")
            }
            NeedsAggregation { clause } => {
                format!("clause `{clause}` only has a meaning together with `consldt(...)`")
            }
            NeedsThreshold { clause } => {
                format!("clause `{clause}` only has a meaning together with `threshold(...)`")
            }
            NotImplementedYet { clause } => {
                format!("clause `{clause}` is valid but dpopt cannot apply it yet")
            }
            MalformedPragma => "this `#pragma dp` cannot be parsed".to_string(),
            DuplicatePragma => "two `#pragma dp` directives for one launch".to_string(),
            NoLaunchAfterPragma { found } => {
                format!("`#pragma dp` must be followed by a kernel launch, found `{found}`")
            }
            HostSideLaunch { function } => {
                format!("`#pragma dp` on a host-side launch (in host function `{function}`)")
            }
            LaunchOutsideFunction => {
                "`#pragma dp` on a launch that is not in a function at namespace level (a class member function, or no function at all)".to_string()
            }
            KernelNotDefined { kernel, searched } => {
                if searched.len() > 1 {
                    format!("kernel `{kernel}` is launched here but not defined in this file or any file dpopt read")
                } else {
                    format!("kernel `{kernel}` is launched here but not defined in this file")
                }
            }
            NotAKernel { kernel } => format!("`{kernel}` is defined in this file but is not a `__global__` kernel"),
            PragmaNotApplied { file } => format!(
                "`#pragma dp` in {file}, which this run reads but does not rewrite: it is not applied"
            ),
            StdNameClash { name } => format!(
                "the code generated for `consldt(...)` and `floor` includes CUB and cooperative groups, which declare `std::{name}`: with `using namespace std;` this file's own `{name}` becomes ambiguous, and nvcc rejects the output"
            ),
            SharedArgument { kernel, argument } => format!(
                "the launch of `{kernel}` passes `{argument}`, a pointer to the parent's shared memory, which a child grid cannot access (CUDA leaves it undefined); dpopt carries it on as written: into a record of another grid with `consldt` or `floor`, into a serial run with `threshold`"
            ),
            CoarsenPending { kernel } => format!(
                "`coarsen` runs several blocks of `{kernel}` one after the other in one block, and `{kernel}` launches kernels itself: their launches are made later and more of them are pending at once; past the device runtime's pending-launch limit (cudaLimitDevRuntimePendingLaunchCount, 2,048 by default) launches fail, and a launch of a kernel that cannot run serially has no fallback"
            ),
            RecursionPending { kernel, launched } => format!(
                "dpopt rewrites the launch of `{kernel}` by itself (into a fire-and-forget stream, or run serially by one thread for a whole grid), and `{kernel}` also launches `{launched}` without `#pragma dp`: more of those launches are pending at once; past the device runtime's pending-launch limit (cudaLimitDevRuntimePendingLaunchCount, 2,048 by default) they fail, and a launch without `#pragma dp` has no fallback"
            ),
            AggregationPending { kernel } => format!(
                "`consldt` aggregates the recursion of `{kernel}`, which cannot run serially, so a launch that finds no room has no fallback: every grid of the recursion stays pending until its children end, and the aggregated launches change when they are made; past the device runtime's pending-launch limit (cudaLimitDevRuntimePendingLaunchCount, 2,048 by default) they fail"
            ),
            ChildHelperHidden { kernel, helper, file, why, .. } => format!(
                "the body of `{kernel}` is copied into the output, and it calls `{helper}` of {file}, which the output cannot call: {why}"
            ),
            MalformedLaunch { reason } => format!("cannot read this launch: {reason}"),
            NotSerializable { kernel, construct } => format!(
                "`threshold` cannot be applied: child kernel `{kernel}` uses `{construct}`, which a serial version in the parent thread cannot reproduce"
            ),
            BarrierSplit { clause, kernel, why, .. } => format!(
                "`{clause}` cannot be applied: child kernel `{kernel}` waits at barriers or exchanges values within warps, and its serial version (the parent thread runs each stretch between barriers and exchanges for every thread in turn) cannot split it: {why}"
            ),
            BuiltinInCallee { kernel, callee, builtin, clause, reader, uncopied } => {
                let path = if reader == callee {
                    format!("`{kernel}` calls `{callee}`, which reads `{builtin}` itself")
                } else {
                    format!("`{kernel}` calls `{callee}`, which leads to `{reader}`, which reads `{builtin}` itself")
                };
                let copy = uncopied.as_ref().map_or(String::new(), |(name, why)| {
                    format!(", and dpopt cannot give the copies of the child's body a copy of `{name}` that takes the positions as parameters: {why}")
                });
                format!("`{clause}` cannot be applied: {path}{copy}")
            }
            ReturnWithBarrier { kernel } => format!(
                "`coarsen` cannot be applied: child kernel `{kernel}` returns early and also synchronizes the block"
            ),
            VariadicTemplate { kernel } => {
                format!("kernel `{kernel}` is a variadic template, which dpopt does not transform")
            }
            UnbalancedBrackets => "unbalanced brackets: dpopt cannot find the structure of this code".to_string(),
            ThreadCountFallback { kernel } => format!(
                "cannot tell how many threads the launch of `{kernel}` needs; comparing grid x block threads with the threshold"
            ),
            FixedConfigurationHazard { clause, kernel, construct } => format!(
                "`{clause}` cannot be applied: child kernel `{kernel}` uses `{construct}`, which needs the threads of one original block running together"
            ),
            BlockAggregationHazard { granularity, function, construct } => format!(
                "`consldt({granularity})` cannot be applied: `{function}`, which runs in the same blocks as the launch, uses `{construct}`"
            ),
            ThresholdDecided { kernel, threads, threshold, .. } => if threads < threshold {
                format!("every launch of `{kernel}` here has {threads} threads, fewer than threshold({threshold}): it always runs serially in the parent thread")
            } else {
                format!("every launch of `{kernel}` here has {threads} threads, at least threshold({threshold}): it is never run serially, the threshold has no effect")
            },
            UnseenName { name, clause } => format!(
                "`{name}` in `{clause}` is not declared or defined in this file"
            ),
            ValueNotConstant { name, clause } => format!(
                "`{name}` in `{clause}` is declared only inside a function: a clause value must be a constant the whole file sees"
            ),
            NameNotVisible { name, parent } => format!(
                "`{name}` in `child_threads` is not visible at the launch in `{parent}`"
            ),
            AmbiguousKernel { kernel, count, arity } => format!(
                "`{kernel}` with {arity} argument(s) may be any of {count} definitions in this file"
            ),
            TooDeep { limit } => format!("brackets nested more than {limit} deep: dpopt does not read this"),
            Unterminated { what } => format!("this {what} is never closed"),
            UnreadableToken { token, why, .. } => format!("`{token}`: {why}"),
            PragmaInMacro { name, in_arguments: false } => format!(
                "macro `{name}` expands to `_Pragma`: a `#pragma dp` written through it is not seen by dpopt and is not applied"
            ),
            PragmaInMacro { name, in_arguments: true } => format!(
                "`_Pragma` in the arguments of macro `{name}`: dpopt does not expand macros, so a `#pragma dp` it may produce is not applied"
            ),
            NotCoarsenable { kernel, construct } => format!(
                "`coarsen` cannot be applied: child kernel `{kernel}` uses `{construct}`, which depends on the original grid's blocks running as they were launched"
            ),
            CannotSee { clause, function, what, why: Unseen::Declared } => format!(
                "`{clause}` cannot be applied: `{function}` calls `{what}`, which is declared in this file but defined elsewhere, so dpopt cannot see whether it synchronizes threads"
            ),
            CannotSee { clause, function, what, why: Unseen::Pointer } => format!(
                "`{clause}` cannot be applied: `{function}` calls a function through `{what}`, so dpopt cannot see whether it synchronizes threads"
            ),
            CannotSee { clause, function, what, why: Unseen::Asm } => format!(
                "`{clause}` cannot be applied: `{function}` contains `{what}`, inline assembly whose text is not a string literal, so dpopt cannot see whether it synchronizes threads"
            ),
            SyncMigratable { kernel, call } => format!(
                "device-side `{call}()` in kernel `{kernel}` waits for its children (CDP1): CUDA 12+ removed it, and sm_90 has only CDP2, so nvcc rejects it"
            ),
            SyncNested { kernel, call, construct } => format!(
                "`--migrate-sync` cannot migrate this `{call}()` in `{kernel}`: it is inside {construct}, and the continuation that replaces the code after it can only resume at the top level of the kernel"
            ),
            SyncNotInKernel { function, call } => format!(
                "`--migrate-sync` cannot migrate this `{call}()`: it is in device function `{function}`, and the code after it continues in its caller"
            ),
            SyncTwice { kernel, call } => format!(
                "`--migrate-sync` cannot migrate this second `{call}()` in `{kernel}`: it would be inside the continuation of the first"
            ),
            PostworkShared { kernel, name } => format!(
                "`--migrate-sync`: the code after the sync in `{kernel}` uses shared memory `{name}`, which the continuation (another grid) cannot see"
            ),
            PostworkBarrier { kernel, construct } => format!(
                "`--migrate-sync`: the code after the sync in `{kernel}` uses `{construct}`, which waits for or exchanges values with other threads of the block or warp; the continuation runs each thread's postwork on its own"
            ),
            PostworkUnsupported { kernel, what } => format!(
                "`--migrate-sync` cannot migrate the sync in `{kernel}`: the continuation cannot carry {what}"
            ),
            FloorRefused { kernel, why, .. } => format!(
                "`floor` cannot be applied to `{kernel}`: {why}"
            ),
            FloorWithAggregation => {
                "`floor` and `consldt(...)` cannot be combined: the floor runs the large children of the whole parent grid as one grid launched by the host".to_string()
            }
            FloorUnused { kernel } => format!(
                "`floor`: this file never launches `{kernel}` from host code with `<<<...>>>`, so its launch-free copy is never run"
            ),
            AllocNotFound { parent } => format!(
                "`alloc(...)`: `{parent}` allocates none of the pointers this launch passes, in a form dpopt recognizes"
            ),
            AllocEscape { pointer, function, what } => format!(
                "the allocation of `{pointer}` cannot be aggregated: in `{function}`, {what}, where dpopt cannot follow the pointer"
            ),
            AllocFreeShared { pointer, child } => format!(
                "the allocation of `{pointer}` cannot be aggregated: `{child}` frees it, and `{child}` is also launched elsewhere with pointers that are not slices of an aggregated allocation"
            ),
            AllocUnsupported { pointer, what } => format!(
                "the allocation of `{pointer}` cannot be aggregated: {what}"
            ),
            AllocBlockHazard { function, construct } => format!(
                "`alloc(block)` cannot be applied: `{function}`, which runs in the same blocks as the allocation, uses `{construct}`"
            ),
            AllocNotAggregated { refused } => format!(
                "left as a per-thread allocation (consldt aggregates allocations only where it can follow them): {}",
                refused.message()
            ),
            PromoteNotRecursive { kernel, parent } => format!(
                "`promote` applies to a kernel that launches itself: this launch of `{kernel}` is in `{parent}`"
            ),
            PromoteGrid { kernel } => format!(
                "`promote` applies to a chain of single-block steps: this launch of `{kernel}` may have more than one block"
            ),
            PromoteConfig { kernel, what, name } => format!(
                "`promote` cannot launch the next step of `{kernel}` early: its {what} uses `{name}`, which the step computes"
            ),
            PromotePlacement { kernel, construct } => format!(
                "`promote` needs one launch of the next step per step of `{kernel}`: this launch is {construct}"
            ),
            PromoteUnsupported { kernel, what } => format!(
                "`promote` cannot be applied to `{kernel}`: {what}"
            ),
            AcquirePlacement { reason } => format!(
                "`#pragma dp acquire` {reason}"
            ),
            AcquirePostponed { kernel, name } => format!(
                "the code of `{kernel}` before `#pragma dp acquire` uses `{name}`, which the previous step computes: a promoted step runs that code before the previous step has released it"
            ),
        }
    }

    pub fn help(&self) -> Option<String> {
        use DiagnosticKind::*;
        Some(match self {
            UnknownClause { suggestion: Some(s), .. } => format!("did you mean `{s}`?"),
            UnknownClause { suggestion: None, .. } => format!(
                "known clauses: {}",
                crate::pragma::ClauseName::spellings().join(", ")
            ),
            MissingArguments { clause, expected } => format!("write `{clause}({expected})`"),
            UnclosedArguments { clause } => format!("close the argument list: `{clause}(...)`"),
            WrongArgumentCount { clause, expected, .. } => format!("`{clause}` takes {expected}"),
            NotPositive { .. } => "use a value of at least 1".to_string(),
            TooLarge { .. } => "use a value that a launch configuration can hold".to_string(),
            AboveLimit { clause, limit, .. } => format!("write `{clause}(N)` with N at most {limit}"),
            KernelClauseDiffers { clause, kernel, .. } => {
                let (what, advice) = kernel_clause(*clause);
                format!(
                    "`{kernel}` has one {what}: {advice}, the same on every site it runs (or on one of them)"
                )
            }
            NotAnInteger { .. } => {
                "write a decimal or hexadecimal literal such as `128`, or the name of a macro defined elsewhere".to_string()
            }
            DuplicateClause { clause } => format!("keep one `{clause}` clause"),
            BadGranularity { suggestion: Some(s), .. } => format!("did you mean `{s}`?"),
            BadGranularity { suggestion: None, .. } => {
                "use one of `warp`, `block`, `multiblock[, G]` or `grid`".to_string()
            }
            BadBufferKind { .. } => "use one of `default`, `halloc` or `custom`".to_string(),
            BadAllocChoice { suggestion: Some(s), .. } => format!("did you mean `{s}`?"),
            BadAllocChoice { suggestion: None, .. } => {
                "use one of `warp`, `block` or `none`".to_string()
            }
            BadWorkVariable { .. } => "list the names of the launch arguments that vary between parents".to_string(),
            NeedsAggregation { .. } => "add `consldt(warp|block|multiblock, G|grid)` or remove this clause".to_string(),
            NeedsThreshold { .. } => "add `threshold(N)` or remove this clause".to_string(),
            NotImplementedYet { .. } => {
                "this version applies every `consldt` granularity with `agg_threshold`, `work`, `threads`, `blocks` and `buffer(default, ...)`; not yet: other buffer kinds; remove or change the clause".to_string()
            }
            MalformedPragma => "write clauses as `name(args)`, e.g. `#pragma dp threshold(128) coarsen(8)`".to_string(),
            DuplicatePragma => "merge the clauses into one `#pragma dp` line".to_string(),
            NoLaunchAfterPragma { .. } => {
                "put the pragma on the line directly before a statement `kernel<<<grid, block>>>(args);`; for a launch that shares its line with other code (`if (n > 0) child<<<...>>>(...);`), write `_Pragma(\"dp ...\")` right before the launch on that line, or give the launch a line of its own".to_string()
            }
            HostSideLaunch { .. } => {
                "dpopt optimizes device-side (dynamic parallelism) launches; remove the pragma from host code".to_string()
            }
            LaunchOutsideFunction => {
                "move the launch into a `__global__` or `__device__` function at namespace level".to_string()
            }
            KernelNotDefined { searched, .. } => {
                let mut help = "dpopt needs the child kernel's body: define it in this file or in a header it includes with `#include \"...\"` (found next to the including file or in a directory given with `-I DIR`), or name the source that defines it with `--child-source FILE.cu`".to_string();
                if !searched.is_empty() {
                    help.push_str("; looked in: ");
                    help.push_str(&searched.join("; "));
                }
                help
            }
            NotAKernel { .. } => "only launches of `__global__` functions can be transformed".to_string(),
            StdNameClash { name } => format!(
                "write `::{name}` where the file means its own, or replace `using namespace std;` by using-declarations of what it takes from `std`"
            ),
            SharedArgument { .. } => "pass a pointer to global memory (copy the data there first), or let the child declare and fill its own `__shared__` copy".to_string(),
            AggregationPending { .. } => "raise the limit in host code before the first launch, as `cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 32768);` (temporal-hpc's Mandelbrot at 2,048 x 2,048 pixels, within the default limit as written, failed with `consldt(grid)` or `consldt(warp)` alone at its three launches when they had no fallback), or make the child one that can run serially (a launch that finds no room then runs serially)".to_string(),
            RecursionPending { launched, .. } => format!("put `#pragma dp` (with `threshold`) before the launch of `{launched}` too, whose launches then run serially where the runtime has no room, or raise the limit in host code before the first launch, as `cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 32768);` (temporal-hpc's Mandelbrot, 2,048 x 2,048 pixels, with `threshold` at its recursive launch alone, failed at the default limit and gave the original's image with either)"),
            CoarsenPending { .. } => "raise the limit in host code before the first launch, as `cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 32768);` (temporal-hpc's Mandelbrot, 2,048 x 2,048 pixels, needed more than 8,192 with `coarsen(8)` at its recursive launch), or put `#pragma dp` before the kernel's launches of children that can run serially, or remove `coarsen`".to_string(),
            PragmaNotApplied { file } => format!(
                "dpopt rewrites only the file it is given: transform {file} itself (`dpopt transform {file} -o ...`) and build or `#include` its output instead, or move the launch into this file"
            ),
            ChildHelperHidden { kernel, helper, declarable: true, .. } => format!(
                "declare `{helper}` in this file before its declaration of `{kernel}` (as `__device__` with its parameters), or move it into a header that both files `#include`; or remove the `#pragma dp`"
            ),
            ChildHelperHidden { helper, .. } => format!(
                "move `{helper}` into a header that both files `#include` (each file then has its own copy), or remove the `#pragma dp`"
            ),
            MalformedLaunch { .. } => "write the launch as `kernel<<<grid, block[, smem[, stream]]>>>(args);`".to_string(),
            BarrierSplit { fix, .. } => fix.clone(),
            NotSerializable { .. } => {
                "remove `threshold` from this pragma (its other clauses still apply), or apply thresholding by hand with a serial algorithm".to_string()
            }
            BuiltinInCallee { uncopied: Some(_), .. } => {
                "define the function in this file as a free device function (dpopt then copies it), or pass the index or dimension to it as an argument instead of reading it there".to_string()
            }
            BuiltinInCallee { .. } => {
                "pass the index or dimension to the called function as an argument instead of reading it there".to_string()
            }
            ReturnWithBarrier { .. } => {
                "in a coarsened block a thread that returned would miss the barriers of the original block; replace the early `return` by an `if` around the rest of the body".to_string()
            }
            VariadicTemplate { .. } => "remove the pragma or give the kernel fixed template parameters".to_string(),
            UnbalancedBrackets => "check that (), [] and {} match (inside #if branches too)".to_string(),
            ThreadCountFallback { .. } => {
                "compute the grid as `(n + b - 1) / b`, or state the count: `#pragma dp threshold(N) child_threads(n)`".to_string()
            }
            FixedConfigurationHazard { .. } => {
                "with `blocks(N)` an aggregated block runs several original blocks one after the other, and with `threads(N)` a thread runs several original threads; remove the clause to keep one aggregated block per original block".to_string()
            }
            ThresholdDecided { site, .. } => format!(
                "if that is what you want, nothing to do; otherwise change the threshold (or build with -DDPOPT_THRESHOLD_{site}=N)"
            ),
            UnseenName { name, .. } => format!(
                "nvcc rejects the output unless a header or the command line defines it (`-D{name}=64`); otherwise define it in this file (`#define {name} 64`) or write the number"
            ),
            ValueNotConstant { name, .. } => format!(
                "the generated code uses the value outside the parent (in its own kernels and `static_assert`s): write the number, a macro (`#define {name} 64`) or a `constexpr` at file scope"
            ),
            NameNotVisible { .. } => {
                "the expression is evaluated in the parent just before the launch: write it with the parent's parameters, its locals declared before the launch, or names declared at file scope".to_string()
            }
            AmbiguousKernel { .. } => {
                "dpopt tells overloads apart by namespace and argument count only: qualify the launch (`ns::kernel<<<...>>>`) or give the overloads different names".to_string()
            }
            TooDeep { .. } => "simplify the expression (name parts of it in variables)".to_string(),
            Unterminated { what } => format!("close the {what}; everything after it is part of it"),
            UnreadableToken { fix, .. } => fix.clone(),
            PragmaInMacro { .. } => {
                "write `#pragma dp ...` (or `_Pragma(\"dp ...\")`) directly on the line before the launch".to_string()
            }
            BlockAggregationHazard { .. } => {
                "block and multiblock aggregation make the launching threads wait at a block barrier for the other threads of the block, which would deadlock with a barrier or warp-synchronous operation of the parent; use `consldt(warp)` or `consldt(grid)`, which need no block barrier".to_string()
            }
            NotCoarsenable { .. } => {
                "a coarsened block runs several original blocks one after the other: grid-wide (or cluster) synchronization would wait for blocks that no longer run side by side, and a block index read through cooperative groups or `asm` is not replaced; remove `coarsen` from this pragma".to_string()
            }
            CannotSee { clause, what, why: Unseen::Declared, .. } => format!(
                "dpopt must see the body of every function the child (or, for block-level aggregation, the parent's block) calls, to know whether it waits at a barrier: define `{what}` in this file (or `#include` the file that defines it), or remove `{clause}` from the pragma"
            ),
            CannotSee { clause, why: Unseen::Pointer, .. } => format!(
                "call the function directly, so that dpopt can follow the call and see whether it waits at a barrier, or remove `{clause}` from the pragma"
            ),
            CannotSee { clause, why: Unseen::Asm, .. } => format!(
                "write the assembly as a string literal (dpopt reads PTX such as `bar.sync`, `shfl.sync`, `%tid`), or remove `{clause}` from the pragma"
            ),
            SyncMigratable { .. } => {
                "run `dpopt transform --migrate-sync FILE`: the code after the sync becomes a continuation kernel tail-launched (`cudaStreamTailLaunch`) after the parent grid and all its children (docs/PRAGMA.md, \"Postwork and CDP1 migration\")".to_string()
            }
            SyncNested { call, .. } => format!(
                "move the wait out: keep the launch inside the loop or `if`, and call `{call}()` once, as a statement of its own at the top level of the kernel after it; code that must run per iteration after the children becomes a loop in the code after that sync, or a kernel of its own; for an `#if` branch, keep the sync outside it (or the whole rest of the kernel inside it)"
            ),
            SyncNotInKernel { call, .. } => format!(
                "call `{call}()` in the kernel, after the call of this function, as a statement at the top level of the kernel body"
            ),
            SyncTwice { .. } => {
                "split the kernel: the code after the first sync (up to the second) becomes a kernel of its own that launches, and the second wait moves to its top level".to_string()
            }
            PostworkShared { .. } => {
                "copy what the code after the sync needs from shared memory into a local variable before the sync (each thread's locals are carried), or into global memory".to_string()
            }
            PostworkBarrier { .. } => {
                "do the block-wide step before the sync, or write its result to global memory and let one thread of the block combine it after the sync".to_string()
            }
            PostworkUnsupported { .. } => {
                "copy the value into a plain local variable before the sync (a value is carried, a reference or array is not); for a template kernel or a `#pragma dp` child, wait by hand: launch the postwork as a kernel into `cudaStreamTailLaunch`".to_string()
            }
            FloorRefused { fix, .. } => fix.clone(),
            FloorWithAggregation => {
                "keep `floor` (host launches of the parent, no device launch at all) or `consldt(...)` (device-side aggregation), not both; `dpopt tune` compares them".to_string()
            }
            FloorUnused { kernel } => format!(
                "launch `{kernel}<<<grid, block[, smem[, stream]]>>>(...)` from a host function of this file (after its definition), or remove `floor`"
            ),
            BadPromotion { suggestion: Some(s), .. } => format!("did you mean `promote({s})`?"),
            BadPromotion { suggestion: None, .. } => {
                "write `promote(basic)` or `promote(aggregate)` (`promote(aggregate, G)`: a pool of G blocks)".to_string()
            }
            ClauseConflict { clause, .. } if clause == "acquire" => {
                "`#pragma dp acquire` marks a place in a promoted kernel: write it alone, on a line of its own".to_string()
            }
            ClauseConflict { clause, other } => format!(
                "`{clause}` rewrites the launch into the release of a step that is already running; remove `{other}`, or remove `{clause}` to keep `{other}`"
            ),
            PromoteNotRecursive { .. } => {
                "promotion launches a kernel's next step at the start of the step; put `promote` on the kernel's launch of itself (a producer-consumer chain), or use `threshold`, `coarsen` or `consldt` here".to_string()
            }
            PromoteGrid { .. } => {
                "launch the next step with one block (`kernel<<<1, threads>>>(...)`); the block size may be any value known at the kernel's start".to_string()
            }
            PromoteConfig { .. } => {
                "the next step is launched when the step starts: compute its block size and shared memory from the kernel's parameters that it does not assign, constants, `blockDim` or `gridDim`".to_string()
            }
            PromotePlacement { .. } => {
                "launch the next step once, outside loops (after the loop, with what it computed); a kernel that launches itself several times per step is a tree, not a chain: use `consldt(...)`".to_string()
            }
            PromoteUnsupported { .. } => {
                "remove `promote` (the launch stays a plain CDP launch), or restructure as the note says (docs/PRAGMA.md, \"Launch promotion\")".to_string()
            }
            AcquirePlacement { .. } => {
                "write `#pragma dp acquire` once, at the top level of the body of a kernel whose launch of itself has `#pragma dp promote(...)`, before that launch".to_string()
            }
            AcquirePostponed { name, .. } => format!(
                "move the use of `{name}` after `#pragma dp acquire`, or move the marker up; before it, a step may use the kernel's parameters its predecessor passes unchanged or computes from its own parameters"
            ),
            AllocNotFound { .. } => {
                "`alloc(...)` aggregates `p = (T *)malloc(size);` and `cudaMalloc(&p, size)` of a local pointer `p` of the parent that the launch passes as a whole argument; allocate that way, or remove the clause".to_string()
            }
            AllocEscape { .. } | AllocFreeShared { .. } | AllocUnsupported { .. } | AllocBlockHazard { .. } => format!(
                "{}; or write `alloc(none)` to keep one allocation per thread",
                self.alloc_fix().unwrap_or_default()
            ),
            AllocNotAggregated { refused } => format!(
                "to aggregate it, {}; to keep the per-thread allocation without this warning, add `alloc(none)`",
                refused.alloc_fix().unwrap_or_default()
            ),
        })
    }
}

impl DiagnosticKind {
    /// What makes a refused aggregated allocation aggregable.
    fn alloc_fix(&self) -> Option<String> {
        use DiagnosticKind::*;
        Some(match self {
            AllocEscape { pointer, .. } => format!(
                "a slice of an aggregated allocation must never be freed on its own: keep `{pointer}` in a local variable that is only indexed (`p[i]`, `*p`, `p->m`), compared, passed as a whole to this launch, given to `memcpy`/`memset`, and freed with `free`/`cudaFree` (in the parent or in the child)"
            ),
            AllocFreeShared { child, .. } => format!(
                "dpopt rewrites the child's `free`/`cudaFree` so that the last slice freed frees the allocation: launch `{child}` only from this site (give the other launches a kernel of their own)"
            ),
            AllocUnsupported { .. } => {
                "allocate into a local pointer declared once, in a `__global__` or `__device__` function (not `__host__ __device__`), and define a child that frees it in the file being transformed".to_string()
            }
            AllocBlockHazard { .. } => {
                "`alloc(block)` makes the allocating threads wait at a block barrier for the other threads of the block, which would deadlock with a barrier or warp-synchronous operation of the parent; use `alloc(warp)`, which needs no block barrier".to_string()
            }
            CannotSee { .. } => {
                "dpopt must see the body of every function that runs in the parent's blocks, to know whether it waits at a barrier; or use `alloc(warp)`".to_string()
            }
            _ => return None,
        })
    }
}

/// A diagnostic tied to a place in a source file.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub kind: DiagnosticKind,
    pub span: Span,
    pub label: String,
    /// Secondary places, e.g. the pragma when the error is in the child.
    pub notes: Vec<(Span, String)>,
}

impl Diagnostic {
    pub(crate) fn new(
        kind: DiagnosticKind,
        span: impl Into<Span>,
        label: impl Into<String>,
    ) -> Self {
        Diagnostic {
            kind,
            span: span.into(),
            label: label.into(),
            notes: Vec::new(),
        }
    }

    pub(crate) fn with_note(mut self, span: impl Into<Span>, label: impl Into<String>) -> Self {
        self.notes.push((span.into(), label.into()));
        self
    }

    pub fn is_error(&self) -> bool {
        self.kind.severity() == Severity::Error
    }

    /// A miette report with the file's source attached (`file` may be a
    /// unit of several files: each span is shown in its own file).
    pub fn to_report(&self, file: &SourceFile) -> miette::Report {
        miette::Report::new(Rendered::new(self, file))
    }
}

/// The miette-facing form of a `Diagnostic`.
#[derive(Debug, thiserror::Error)]
#[error("{location}: {kind}: {message}")]
struct Rendered {
    location: String,
    /// `error` or `warning`.
    kind: &'static str,
    message: String,
    code: &'static str,
    help: Option<String>,
    severity: Severity,
    labels: Vec<LabeledSpan>,
    code_source: NamedSource<String>,
    /// Notes in another file than the primary span.
    related: Vec<Rendered>,
}

impl Rendered {
    /// The diagnostic shown in the file that holds its primary span (the
    /// input, or a header or other source of its unit); notes in another
    /// file, or more than `MAX_NOTE_GAP` lines away from the primary span,
    /// become related notes, each shown on its own (one snippet would show
    /// every line between them).
    fn new(diagnostic: &Diagnostic, unit: &SourceFile) -> Self {
        let (file, local) = unit.local(diagnostic.span.start());
        let base = diagnostic.span.start() - local;
        let line = file.line_of(local);
        let same_file = |r: &Span| {
            let (f, at) = unit.local(r.start());
            r.start() - at == base && f.line_of(at).abs_diff(line) <= MAX_NOTE_GAP
        };
        let here: Vec<&(Span, String)> = diagnostic
            .notes
            .iter()
            .filter(|(r, _)| same_file(r))
            .collect();
        let shift = |r: &Span| r.start() - base..r.end().max(r.start()) - base;
        let points: Vec<usize> = std::iter::once(&diagnostic.span)
            .chain(here.iter().map(|(s, _)| s))
            .map(|s| s.start() - base)
            .collect();
        let shown = ShownSource::new(file, &points);
        let len = shown.text.len();
        let clamp = |r: &Span| -> SourceSpan {
            let r = shift(r);
            let start = shown.offset(r.start).min(len);
            let end = shown.offset(r.end).clamp(start, len);
            (start, end - start).into()
        };
        let mut labels = vec![LabeledSpan::new_primary_with_span(
            Some(diagnostic.label.clone()),
            clamp(&diagnostic.span),
        )];
        for (span, label) in &here {
            labels.push(LabeledSpan::new_with_span(Some(label.clone()), clamp(span)));
        }
        let related = diagnostic
            .notes
            .iter()
            .filter(|(r, _)| !same_file(r))
            .map(|(span, label)| {
                let note = Diagnostic {
                    kind: diagnostic.kind.clone(),
                    span: *span,
                    label: label.clone(),
                    notes: Vec::new(),
                };
                let mut r = Rendered::new(&note, unit);
                r.kind = "note";
                r.message = label.clone();
                r.help = None;
                r.severity = Severity::Advice;
                r
            })
            .collect();
        Rendered {
            location: unit.location(diagnostic.span.start()),
            kind: if diagnostic.is_error() {
                "error"
            } else {
                "warning"
            },
            message: diagnostic.kind.message(),
            code: diagnostic.kind.code(),
            help: diagnostic.kind.help(),
            severity: diagnostic.kind.severity(),
            labels,
            code_source: NamedSource::new(file.name.clone(), shown.text),
            related,
        }
    }
}

/// Most lines between a note and the primary span for the note to share its
/// snippet.
const MAX_NOTE_GAP: usize = 12;

/// Longest line shown whole in a report; longer lines (generated tables,
/// minified code) are shown as a window around the place reported.
const MAX_SHOWN_LINE: usize = 240;

/// The file's text as shown in a report: every line longer than
/// `MAX_SHOWN_LINE` is cut to a window around the reported places in it, so
/// that any input renders (line numbers are kept; `FILE:LINE:COL` in the
/// message is computed on the file itself).
struct ShownSource {
    text: String,
    /// Per clipped line: (line start, window start, window end, start of
    /// the window in `text`), sorted by line start.
    windows: Vec<(usize, usize, usize, usize)>,
    /// Per clipped line: (line start, line end, shift of the text after it).
    shifts: Vec<(usize, isize)>,
}

impl ShownSource {
    fn new(file: &SourceFile, points: &[usize]) -> Self {
        let text = &file.display;
        let starts = file.line_starts();
        let long = starts.iter().enumerate().any(|(i, &start)| {
            let end = starts.get(i + 1).copied().unwrap_or(text.len());
            end - start > MAX_SHOWN_LINE
        });
        if !long {
            return ShownSource {
                text: text.clone(),
                windows: Vec::new(),
                shifts: Vec::new(),
            };
        }
        let mut out = String::with_capacity(text.len().min(1 << 20));
        let mut windows = Vec::new();
        let mut shifts = Vec::new();
        for (i, &start) in starts.iter().enumerate() {
            let end = starts.get(i + 1).copied().unwrap_or(text.len());
            let content_end = start + text[start..end].trim_end_matches(['\n', '\r']).len();
            if content_end - start <= MAX_SHOWN_LINE {
                out.push_str(&text[start..end]);
                continue;
            }
            let focus = points
                .iter()
                .copied()
                .find(|&p| (start..=content_end).contains(&p))
                .unwrap_or(start);
            let mut from = focus.saturating_sub(MAX_SHOWN_LINE / 3).max(start);
            let mut to = (from + MAX_SHOWN_LINE).min(content_end);
            while !text.is_char_boundary(from) {
                from -= 1;
            }
            while !text.is_char_boundary(to) {
                to += 1;
            }
            if from > start {
                out.push_str("...");
            }
            windows.push((start, from, to, out.len()));
            out.push_str(&text[from..to]);
            if to < content_end {
                out.push_str("...");
            }
            out.push_str(&text[content_end..end]);
            shifts.push((end, out.len() as isize - end as isize));
        }
        ShownSource {
            text: out,
            windows,
            shifts,
        }
    }

    /// Where a file offset is in the shown text.
    fn offset(&self, at: usize) -> usize {
        if self.windows.is_empty() {
            return at;
        }
        // In a clipped line: clamp into its window.
        let w = self.windows.partition_point(|w| w.0 <= at);
        if let Some(&(_, from, to, shown)) = w.checked_sub(1).map(|i| &self.windows[i]) {
            let line_end = self.shifts.get(w - 1).map_or(usize::MAX, |s| s.0);
            if at < line_end {
                return shown + at.clamp(from, to) - from;
            }
        }
        // After the last clipped line before it: shift.
        let k = self.shifts.partition_point(|s| s.0 <= at);
        let shift = k.checked_sub(1).map_or(0, |i| self.shifts[i].1);
        (at as isize + shift).max(0) as usize
    }
}

impl miette::Diagnostic for Rendered {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }
    fn severity(&self) -> Option<Severity> {
        Some(self.severity)
    }
    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn std::fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.code_source)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(self.labels.iter().cloned()))
    }
    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn miette::Diagnostic> + 'a>> {
        if self.related.is_empty() {
            return None;
        }
        Some(Box::new(
            self.related.iter().map(|r| r as &dyn miette::Diagnostic),
        ))
    }
}

/// Closest known word, for "did you mean".
pub(crate) fn suggest(word: &str, known: &[&str]) -> Option<String> {
    known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(word, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 3))
        .min()
        .map(|(_, k)| k.to_string())
}
