//! The inputs of the templates: one struct per template (the aggregation
//! templates of the three granularities share one), so that a value a
//! template needs and the code does not provide is a compile error rather
//! than a failed render. Text fields hold CUDA fragments as the templates
//! paste them (a leading `, ` where a list continues one).

use crate::names::SiteSymbols;
use serde::Serialize;

/// A context and the template it fills.
pub trait TemplateContext: Serialize {
    /// The template's name (`templates.rs`).
    fn template(&self) -> &'static str;
}

/// Where generated code hands the line numbering back to the input.
#[derive(Debug, Serialize)]
pub struct Resume {
    /// The marker `emit` turns into `#line N "output"`.
    pub line_out: &'static str,
    /// The input's line that follows the fragment.
    pub resume_line: usize,
    /// The input's name, quoted for `#line`.
    pub file: String,
}

/// `site.cu.tera`: one rewritten launch.
#[derive(Debug, Serialize)]
pub struct SiteContext {
    /// The directive as written, normalized (`threshold(64) coarsen(4)`).
    pub summary: String,
    pub site: String,
    /// The site's symbols.
    pub n: SiteSymbols,
    pub location: String,
    pub counts: Vec<Count>,
    pub grid: String,
    pub block: String,
    pub threshold: bool,
    pub coarsen: bool,
    /// The child's thread count compared with the threshold, a product;
    /// empty: every thread of the grid.
    pub factors: Vec<Factor>,
    pub threshold_macro: String,
    pub coarsen_macro: String,
    /// The child's counted kernel, qualified like the launch's kernel.
    pub kernel: String,
    pub targs: String,
    /// The launch's arguments.
    pub args: Vec<String>,
    pub serial: String,
    /// The child has a serial version (some site thresholds it or floors
    /// it).
    pub child_serial: bool,
    pub launcher: String,
    pub aggregate: bool,
    /// The launch's dynamic shared memory, as written.
    pub shared_memory: Option<String>,
    /// The macro that picks the site's stream, and the stream written in the
    /// launch (`None`: none or the NULL stream, which launches go to
    /// `DPOPT_DIRECT_STREAM`).
    pub site_stream: String,
    pub user_stream: Option<String>,
    /// In a `__host__ __device__` parent: the launch as written, for the
    /// host compilation.
    pub original: Option<String>,
    /// The serial version's depth argument (recursive children).
    pub depth_arg: String,
    /// The depth from which a nested small launch is launched anyway.
    pub depth_limit: Option<String>,
    pub coarse: String,
    /// The queue of deferred launches (`""` when the child has none).
    pub defer: String,
    /// A recursive child's listed serial run for a launch that finds no
    /// room (`ChildPlan::lists`), in place of the serial version.
    pub runner: Option<String>,
    /// In a copy of the recursive child's body: the function that lists a
    /// launch made in a listed run (`dpopt_depth` at `DPOPT_LISTED_DEPTH`
    /// and up), made after that run.
    pub listed: Option<String>,
    /// In the launch-free copy of a `floor` parent: the function that
    /// records a large child for the drain.
    pub floor: Option<String>,
    /// `, dpopt_ticket` where `serial` is a recursive floor kernel's serial
    /// version (which records in the queue of the launch), else empty.
    pub floor_ticket: String,
}

/// A factor of a site's child-thread count: a variable the site computes,
/// or blocks times block size in one dimension.
#[derive(Debug, Serialize)]
pub struct Factor {
    pub var: Option<String>,
    pub dim: Option<&'static str>,
}

impl Factor {
    pub fn var(var: String) -> Self {
        Factor {
            var: Some(var),
            dim: None,
        }
    }

    pub fn dim(dim: &'static str) -> Self {
        Factor {
            var: None,
            dim: Some(dim),
        }
    }
}

/// One thread-count variable of a site.
#[derive(Debug, Serialize)]
pub struct Count {
    pub var: String,
    pub expr: String,
    pub note: String,
}

impl Count {
    pub fn new(var: &str, expr: String, note: &str) -> Self {
        Count {
            var: var.to_string(),
            expr,
            note: note.to_string(),
        }
    }
}

/// `declarations.cu.tera`: a child's tuning macros and declarations.
#[derive(Debug, Serialize)]
pub struct DeclarationsContext {
    pub child: String,
    pub macros: Vec<MacroEntry>,
    pub serial: Option<String>,
    /// The serial version with folded atomics (the launch-free copy's).
    pub serial_folded: Option<String>,
    pub coarse: Option<String>,
    /// The counted kernel, when some launch of the child is not coarsened.
    pub counted: Option<String>,
    pub defer: Option<String>,
    /// The serial version called out of line (`Plan::serial_call`).
    pub serial_call: Option<String>,
    /// A recursive child's listed serial runs: the fallback's runner and the
    /// sites' list push (`ChildPlan::lists`).
    pub lists: Option<crate::names::DeferSymbols>,
    /// Ids of the child's aggregated sites.
    pub aggregated: Vec<String>,
    /// Every site of the child.
    pub stat_sites: Vec<SiteSymbols>,
    /// The child's namespaces (`names::scope`): its sites' launches read
    /// the run-time knobs declared here from outside them.
    pub scope: String,
    pub recursive: bool,
    pub depth_macro: String,
    pub serial_depth: u64,
    pub template_header: String,
    pub params_with_defaults: String,
    pub launch_bounds: String,
    #[serde(flatten)]
    pub resume: Resume,
}

/// A tuning macro of a site, as `declarations.cu.tera` defines it.
#[derive(Debug, Serialize)]
pub struct MacroEntry {
    pub name: String,
    /// The macro that sets it for every site.
    pub global: &'static str,
    pub value: String,
    pub what: &'static str,
    pub site: String,
    pub location: String,
}

/// `position_clone.cu.tera`: one part of the copy of a callee that reads
/// positions (`position_clone.rs`).
#[derive(Debug, Clone, Serialize)]
pub struct PositionCloneContext {
    /// Which part: open, params, args, close.
    pub part: &'static str,
    pub callee: String,
    /// For `#line`: the callee's first line (open), the input's line that
    /// follows the copy (close).
    pub line: usize,
    pub file: String,
    pub line_out: &'static str,
}

/// `serial_split.cu.tera`: one part of the serial version of a child split
/// at its barriers (`transform/serial_split.rs`).
#[derive(Debug, Clone, Serialize)]
pub struct SerialSplitContext {
    /// Which part: head, line, dynamic_shared, block_start, phase_open,
    /// arg_open, arg_close, binds, binds_close, phase_close, close, return,
    /// tail, open_brace, exchange_open, exchange_close, exchange_call, ...
    pub part: &'static str,
    pub child: String,
    /// The serial version's name.
    pub name: String,
    pub template_header: String,
    pub recursive: bool,
    pub params: String,
    pub barriers: usize,
    /// The child declares `__shared__` variables.
    pub shared: bool,
    /// Threads per block the per-thread arrays hold.
    pub bound: Option<u64>,
    /// Bytes of the buffer that stands for dynamic shared memory.
    pub dynamic_shared: Option<u64>,
    /// The body's atomics go to the local stand-ins (`dpopt_serial_atomic*`).
    pub atomics: bool,
    /// An `extern __shared__` array's element type and name (part
    /// `dynamic_shared`).
    pub element: String,
    pub shared_name: String,
    /// Variables and parameters kept per thread.
    pub kept: Vec<SplitVar>,
    /// Those of the child's body the current phase names (references to
    /// their arrays).
    pub refs: Vec<SplitVar>,
    /// Those of the callee run in place that the current phase names,
    /// declared after its parameters (part `binds`).
    pub callee_refs: Vec<SplitVar>,
    /// The block votes of construct heads.
    pub votes: Vec<SplitVote>,
    /// The vote the current phase folds (parts vote_reset, vote_open).
    pub vote: Option<SplitVote>,
    /// The body holds warp exchanges: the stand-ins and the slots.
    pub exchanges: bool,
    /// Some are a tile's member functions: their stand-ins too.
    pub tiles: bool,
    /// The exchange the current phase stores, or whose call the part
    /// `exchange_call` opens.
    pub exchange: Option<SplitExchange>,
    /// Each thread marks whether it stored its value of an exchange
    /// (threads may return, or skip a guarded phase).
    pub stored: bool,
    /// How many guards the body has (a flag per thread each).
    pub guard_count: usize,
    /// The guards around the current phase: it runs the threads whose
    /// conditions hold (`negate`: whose condition does not).
    pub guards: Vec<SplitGuard>,
    /// The guard whose condition the current phase stores.
    pub guard: Option<usize>,
    /// Each thread has a flag set when it returns.
    pub done: bool,
    /// The block has a flag set when it returns (every return is taken by a
    /// whole block together).
    pub block_done: bool,
    pub phase: usize,
    /// The phase has a `return`: its label.
    pub label: bool,
    /// The `#line` of the user's bytes that follow.
    pub line: usize,
    pub file: String,
    pub line_out: &'static str,
    /// A callee run in place (parts arg_open, binds): its name, the index
    /// of the argument, its parameters.
    pub callee: String,
    pub index: usize,
    pub binds: Vec<SplitBind>,
    /// Part result_ref: the call (`ResultRef::call`) and the caller's
    /// variable that takes its result.
    pub result_call: usize,
    pub result_target: String,
}

/// A parameter of a callee run in place, bound to its argument.
#[derive(Debug, Clone, Serialize)]
pub struct SplitBind {
    pub declaration: String,
    pub name: String,
    /// A parameter the callee assigns: the kept copy it binds to
    /// (`SplitVar::index`), and that copy's type.
    pub kept: Option<usize>,
    pub storage: String,
    /// The block's group bound to a new handle (`Bind::group`): only
    /// `decltype` may read it, so its use is its address.
    pub group: bool,
}

/// A block vote of the serial split (`barrier_split::Vote`): its result,
/// one per block.
#[derive(Debug, Clone, Serialize)]
pub struct SplitVote {
    pub index: usize,
    /// `__syncthreads_or`, ...
    pub name: &'static str,
    /// The fold's start and its operator (`|=`, `&=`, `+=`).
    pub init: &'static str,
    pub op: &'static str,
}

/// A guard around a phase of the serial split (`barrier_split::Step::Guard`).
#[derive(Debug, Clone, Serialize)]
pub struct SplitGuard {
    pub index: usize,
    pub negate: bool,
}

/// A warp exchange of the serial split (`warp_exchange::Exchange`).
#[derive(Debug, Clone, Serialize)]
pub struct SplitExchange {
    /// The intrinsic, `__shfl_down_sync`, ..., or the tile's member
    /// function, `thread_block_tile<32>::shfl_down`.
    pub name: String,
    /// The stand-in's name after `dpopt_serial_`.
    pub stand_in: &'static str,
    /// The value stored is a predicate (`bool`).
    pub predicate: bool,
    /// The value stored is promoted (`+value`), as the reductions read it.
    pub promote: bool,
    /// A tile's member function: the tile's size (empty: an intrinsic).
    pub tile: String,
}

/// A variable of the serial split kept per thread.
#[derive(Debug, Clone, Serialize)]
pub struct SplitVar {
    pub index: usize,
    pub name: String,
    pub storage: String,
    /// `[N]` of an array variable.
    pub array: String,
    /// An assigned parameter of the child, copied for each thread at each
    /// block's start.
    pub param: bool,
}

/// `definitions.cu.tera`: a child's body function, serial version and
/// coarsened kernel, then its deferral queue and aggregated sites.
#[derive(Debug, Serialize)]
pub struct DefinitionsContext {
    pub child: String,
    pub template_header: String,
    pub template_names: String,
    pub body_fn: String,
    pub recursive: bool,
    pub params: String,
    pub arg_names: String,
    pub serial: Option<String>,
    /// The serial version called out of line (`Plan::serial_call`).
    pub serial_call: Option<String>,
    /// The bound of the child's leading `if (i >= n) return;` guard.
    pub serial_bound: Option<String>,
    /// With `serial_bound`, the body names the thread indices only in the
    /// guard's index (`guard::Guard::index_only`).
    pub serial_index_only: bool,
    /// The serial versions: the plain one, and with folded atomics the one
    /// the launch-free copy calls.
    pub serial_versions: Vec<SerialVersion>,
    pub folds: Vec<Fold>,
    pub fold_atomic: &'static str,
    pub coarse: Option<String>,
    /// The counted kernel, when some launch of the child is not coarsened.
    pub counted: Option<String>,
    pub launch_bounds: String,
    pub uses_shared: bool,
    /// `defer.cu.tera`'s output, or `""`.
    pub deferral: String,
    /// The aggregation templates' output for each aggregated site.
    pub aggregation: String,
    #[serde(flatten)]
    pub resume: Resume,
}

/// `fold.cu.tera`: the folds of a child's last atomics and the head of the
/// serial version's copy of its body, which the body (its own bytes, the
/// atomics replaced by calls of the folds) follows.
#[derive(Debug, Serialize)]
pub struct FoldContext {
    /// `fold.cu.tera` (the serial version's copy of the body) or
    /// `wfold.cu.tera` (the drains' copy).
    #[serde(skip)]
    pub template: &'static str,
    pub child: String,
    pub template_header: String,
    /// The copy's function.
    pub copy_fn: String,
    pub params: String,
    /// The atomic (`atomicAdd`) and its operation (`add`).
    pub atomic: &'static str,
    pub op: crate::atomic_fold::FoldOp,
    pub folds: Vec<Fold>,
    pub body_line: usize,
    pub body_file: String,
    pub line_out: &'static str,
}

/// A serial version of a child: its name, the body function it calls per
/// child thread, and whether that body folds atomics.
#[derive(Debug, Clone, Serialize)]
pub struct SerialVersion {
    pub name: String,
    pub run_fn: String,
    /// It calls `run_fn` with a register per fold (`folds`) and applies the
    /// registers at its end.
    pub folded: bool,
    /// `run_fn` is a copy of the body without its leading guard (the
    /// 1-D loop runs only the threads below the bound): a launch of
    /// another shape runs the body itself, its atomics as written.
    pub guard_free: bool,
}

/// One folded atomic (`atomic_fold::FoldedAtomic`).
#[derive(Debug, Clone, Serialize)]
pub struct Fold {
    /// The fold's device function.
    pub name: String,
    /// Its function in the drains' copy of the body (`wfold.cu.tera`).
    pub warp_name: String,
    pub value_type: &'static str,
    pub register_type: &'static str,
    /// The register's first value (`FoldedAtomic::identity`).
    pub identity: &'static str,
    /// The atomic's file, line and column.
    pub location: String,
}

/// `body.cu.tera`: the head of the child's body function, which the
/// child's body (its own bytes) follows.
#[derive(Debug, Serialize)]
pub struct BodyContext {
    pub child: String,
    pub template_header: String,
    pub inline: &'static str,
    pub body_fn: String,
    pub recursive: bool,
    pub params: String,
    /// Where the body is written (a header's line, for a child defined
    /// there).
    pub body_line: usize,
    pub body_file: String,
    pub line_out: &'static str,
}

/// `defer.cu.tera`: a child's queue of deferred launches.
#[derive(Debug, Serialize)]
pub struct DeferContext {
    pub child: String,
    /// The child's counted kernel.
    pub counted: String,
    /// The queue's symbols.
    pub q: crate::names::DeferSymbols,
    pub defer: String,
    pub serial: String,
    pub coarse: Option<String>,
    pub recursive: bool,
    pub depth_macro: String,
    pub params: String,
    /// Record members, their names, and the reads of them as arguments.
    pub defer_members: Vec<String>,
    pub defer_names: Vec<String>,
    pub defer_args: String,
    pub defer_reads: String,
    /// The parameters' names, each after a comma.
    pub args: String,
}

/// `aggregation.cu.tera`, `aggregation_block.cu.tera`,
/// `aggregation_grid.cu.tera` (with `aggregation_config.cu.tera` and
/// `disaggregate.cu.tera`): one aggregated site.
#[derive(Debug, Serialize)]
pub struct AggregationContext {
    #[serde(skip)]
    pub template: &'static str,
    pub site: String,
    /// The site's symbols.
    pub n: SiteSymbols,
    pub location: String,
    pub child: String,
    pub body_fn: String,
    pub params: String,
    pub recursive: bool,
    pub agg_bounds: &'static str,
    /// A template child's parts (`TemplateParts`).
    pub tpl: String,
    pub tpl_args: String,
    pub tpl_lead: String,
    pub tpl_args_lead: String,
    /// The site coarsens.
    pub coarse: bool,
    /// The stream of the aggregated launch: `cudaStreamTailLaunch` where the
    /// launch is written into it (its grid must start after the parent grid
    /// completes, as each launch it aggregates would), else
    /// `DPOPT_AGG_STREAM`.
    pub agg_stream: String,
    pub varying: Vec<String>,
    pub invariant: Vec<String>,
    pub varying_names: Vec<String>,
    pub invariant_names: Vec<String>,
    /// The body's arguments read from a record (`dpopt_r`) and the shared
    /// part (`dpopt_s`).
    pub record_args: String,
    pub uses_shared: bool,
    pub agg_threshold: bool,
    pub agg_threshold_macro: String,
    pub asserted: bool,
    pub direct: DirectLaunch,
    pub block_loop: bool,
    pub thread_loop: bool,
    pub agg_blocks: String,
    pub agg_threads: String,
    /// Grid and multiblock: the arguments of the launch of one pooled
    /// record.
    pub pool_args: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pools: Option<KnobMacro>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_records: Option<KnobMacro>,
    /// Block and multiblock.
    #[serde(flatten)]
    pub blocks: Option<BlockAggregation>,
}

/// What `recover.cu.tera`'s `direct_launch` and `pooled_launch` write a
/// launch of an aggregated site's child from.
#[derive(Debug, Serialize)]
pub struct DirectLaunch {
    pub child: String,
    /// The child's counted kernel, which every uncoarsened launch launches.
    pub counted_fn: String,
    pub coarse_fn: String,
    /// The launch is coarsened.
    pub coarse: bool,
    /// The serial version, when the child has one.
    pub serial_fn: Option<String>,
    /// The queue of deferred launches, when the site's launches can defer.
    pub defer_fn: Option<String>,
    /// `, DPOPT_SERIAL_DEPTH_<child>` for a recursive child, else `""`.
    pub depth: String,
    pub targs: String,
    /// `, a, n`.
    pub arg_names: String,
    /// The site's counters.
    pub stats_of: String,
}

/// The block template's own values.
#[derive(Debug, Serialize)]
pub struct BlockAggregation {
    pub multiblock: bool,
    pub group: KnobMacro,
    pub pool_blocks: KnobMacro,
}

/// A knob an aggregation template defines (`#ifndef NAME`, from `global`
/// or `value`).
#[derive(Debug, Serialize)]
pub struct KnobMacro {
    pub name: String,
    pub global: &'static str,
    pub value: String,
}

/// The launch-free floor of one kernel, after its definition:
/// `floor.cu.tera` (the sites' work lists and drains, and the copy's head;
/// the copied body follows) and `floor_launcher.cu.tera` (after the body:
/// the host launcher).
#[derive(Debug, Serialize)]
pub struct FloorContext {
    /// Which of the two templates.
    #[serde(skip)]
    pub template: &'static str,
    pub kernel: String,
    pub location: String,
    /// `DPOPT_FLOOR_<kernel>`.
    pub floor_knob: KnobMacro,
    /// Each site's work list, recording function and drain
    /// (`floor_site.cu.tera`'s output).
    pub sites: Vec<String>,
    pub drains: Vec<FloorDrain>,
    /// The copy and the launcher.
    pub clone: String,
    pub launcher: String,
    /// The kernel's head before its name, as written.
    pub specifiers: String,
    /// ` DPOPT_PARENT_BOUNDS` when the kernel gets it, else empty.
    pub bounds: String,
    /// The copy's body function, and its parameters as the kernel declares
    /// them (`const int *a, int n, `).
    pub body_fn: String,
    pub body_params: String,
    /// The copy's parameters, each named (`const int *a, int n, `).
    pub clone_params: String,
    /// The sites whose children the copy's blocks run.
    pub joins: Vec<FloorJoin>,
    /// `, const int *a, int n` (each parameter named).
    pub launcher_params: String,
    /// `a, n`, and `a, n, ` before a further argument.
    pub args: String,
    pub args_lead: String,
    pub body_line: usize,
    pub body_file: String,
    /// A recursive kernel (its one site launches itself): the copy's body
    /// as a function of the builtins, and its serial version.
    pub recursion: Option<FloorRecursion>,
    #[serde(flatten)]
    pub resume: Resume,
}

/// The functions of a recursive floor kernel's launch-free copy.
#[derive(Debug, Serialize)]
pub struct FloorRecursion {
    /// `floor_rbody.cu.tera`'s function: the body, builtins as parameters.
    pub rbody: String,
    pub serial: String,
    /// `, T *a, int n` and `, a, n`: the kernel's parameters.
    pub params: String,
    pub arg_names: String,
}

/// A site whose children the copy's blocks run, when its knob is 1.
#[derive(Debug, Serialize)]
pub struct FloorJoin {
    pub knob: String,
    pub function: String,
    /// The count of the block's list, zeroed when the copy starts.
    pub count: String,
}

/// How the launcher launches one site's drain.
#[derive(Debug, Serialize)]
pub struct FloorDrain {
    /// The site's `FloorJoin` knob: the drain grid runs when it is 0.
    pub join: Option<String>,
    pub kernel: String,
    pub threads: String,
    pub smem: String,
    pub blocks: String,
    /// A recursive site's queue: its drain fills the device with at most
    /// `DPOPT_FLOOR_QUEUE_PER_SM` blocks per SM.
    pub queue: bool,
    /// A queue whose child's block size is this constant: a host launch
    /// of that block size can be the drain alone (`DPOPT_FLOOR_QUEUE_SOLO`).
    pub exact: Option<u64>,
    /// `, a, b`: a queue's drain takes the launch's arguments (its first
    /// tickets are the launch's blocks when it runs alone).
    pub host_args: String,
}

/// `floor_site.cu.tera` (with `disaggregate.cu.tera`): one site's work
/// list, recording function and drain kernel.
#[derive(Debug, Serialize)]
pub struct FloorSiteContext {
    pub site: String,
    pub n: SiteSymbols,
    pub location: String,
    pub records: KnobMacro,
    pub blocks: KnobMacro,
    pub threads_knob: Option<KnobMacro>,
    /// The `FloorJoin` knob, where the copy's blocks can run the children.
    pub join: Option<KnobMacro>,
    /// The drain's threads per block: the child's constant block size, or
    /// the threads knob.
    pub threads: String,
    /// The child's block size is that constant.
    pub exact: bool,
    /// The child starts with `if (i >= n) return;` (`ChildPlan::guard`)
    /// and `n` is a record member: the member as a record `dpopt_r` reads
    /// it, and the parameter's name. The drain in the copy runs only the
    /// threads below it of a one-dimensional child.
    pub bound: Option<(String, String)>,
    /// Record members and their names.
    pub members: Vec<String>,
    pub member_names: Vec<String>,
    /// `, T *a, int n`: the child's parameters.
    pub params: String,
    // What `disaggregate.cu.tera` reads.
    pub body_fn: String,
    pub tpl_args: String,
    pub record_args: String,
    pub coarse: bool,
    pub uses_shared: bool,
    pub recursive: bool,
    pub block_loop: bool,
    pub thread_loop: bool,
    /// A recursive site: `floor_queue.cu.tera` (the queue and its persistent
    /// drain) instead of `floor_site.cu.tera`.
    pub queue: bool,
    /// The queue's drain runs several recorded blocks per block
    /// (`Floor::wide`).
    pub wide: bool,
    /// The drain's threads per block (a C expression).
    pub drain_threads: String,
    /// The thread of the recorded block a drain thread runs (a C
    /// expression).
    pub sub_thread: String,
}

/// `prelude.cu.tera`: the top of a transformed file.
#[derive(Debug, Serialize)]
pub struct PreludeContext {
    /// What the file's generated code uses.
    #[serde(flatten)]
    pub uses: crate::plan::Uses,
    /// `defer_queue.cuh`, or `""`.
    pub defer_queue: &'static str,
    /// `serial_list.cuh`, or `""`.
    pub serial_list: &'static str,
    /// `floor.cuh`, or `""`.
    pub floor_support: &'static str,
    /// `launch_budget.cuh` (a file with sites or promoted chains), or `""`.
    pub launch_budget: &'static str,
    /// `alloc.cuh`, or `""`.
    pub alloc_support: &'static str,
    /// The launch counters' names (a file with sites).
    pub counters: Vec<crate::names::CounterName>,
    pub file_name: String,
    pub resume_line: usize,
    pub file: String,
}

/// `stats.cu.tera`: the host report of the counters and the run-time knobs.
#[derive(Debug, Serialize)]
pub struct StatsContext {
    pub file_name: String,
    /// Some site aggregates allocations: their counters are reported too.
    pub alloc: bool,
    pub sites: Vec<SiteSymbols>,
    pub counters: Vec<crate::names::CounterName>,
    pub knobs: Vec<RuntimeKnob>,
}

/// A knob `dpopt_knobs_from_env` sets.
#[derive(Debug, Serialize)]
pub struct RuntimeKnob {
    pub name: String,
    pub global: &'static str,
    /// The namespaces its variable is declared in (`names::scope`).
    pub scope: String,
}

/// `bounds.cu.tera`: the launch-bounds declaration of a parent kernel.
#[derive(Debug, Serialize)]
pub struct BoundsContext {
    pub kernel: String,
    /// The kernel is a template, with these parameters (no defaults).
    pub template: bool,
    pub template_params: Vec<String>,
    /// The head's tokens before the name, as written.
    pub specifiers: Vec<String>,
    pub name: String,
    /// The parameters without default arguments.
    pub params: Vec<String>,
    /// What its sites state about it (`plan::Kernel`):
    /// `stated.parent_threads`, the bounds' block size (else
    /// `DPOPT_PARENT_BOUNDS`).
    pub stated: crate::plan::Kernel,
    #[serde(flatten)]
    pub resume: Resume,
}

/// `namespaces.cu.tera`: the namespaces around the code generated for a
/// child defined in another file.
#[derive(Debug, Serialize)]
pub struct NamespacesContext {
    /// Open them (else close them).
    pub open: bool,
    /// Their names, outermost first (`""`: an anonymous one).
    pub namespaces: Vec<String>,
    pub line_out: &'static str,
}

/// `continuation.cu.tera`: one part of a migrated sync.
#[derive(Debug, Serialize)]
pub struct ContinuationContext {
    /// `declarations`, `site`, `moved`, `dropped` or `definitions`.
    pub part: &'static str,
    pub id: String,
    /// The `#if` condition the generated declarations and definitions keep
    /// (a sync inside `#if` branches); empty when none.
    pub condition: String,
    /// The sync is followed by more statements of a top-level `if` block
    /// (`SyncSite::waited_in_if`).
    pub in_if: bool,
    /// The sync site's symbols.
    pub n: crate::names::PostworkSymbols,
    pub kernel: String,
    pub call: String,
    pub location: String,
    pub locals: Vec<String>,
    pub params: String,
    pub args: String,
    pub file_name: String,
    #[serde(flatten)]
    pub resume: Resume,
    /// `definitions`: the postwork, builtins replaced.
    #[serde(flatten)]
    pub body: Option<PostworkBody>,
}

#[derive(Debug, Serialize)]
pub struct PostworkBody {
    pub body: String,
    pub body_line: usize,
    pub body_file: String,
}

/// `continuation.cu.tera`, part `stats`: `dpopt_postwork_report`.
#[derive(Debug, Serialize)]
pub struct ContinuationStatsContext {
    pub part: &'static str,
    pub id: &'static str,
    pub n: crate::names::PostworkSymbols,
    pub locals: Vec<String>,
    pub sites: Vec<PostworkCounter>,
    pub file_name: String,
}

#[derive(Debug, Serialize)]
pub struct PostworkCounter {
    pub id: String,
    pub counters: String,
    /// As `ContinuationContext::condition`.
    pub condition: String,
}

/// `promote.cu.tera`: one part of a promoted launch.
#[derive(Debug, Serialize, Default)]
pub struct PromoteContext {
    /// `declarations`, `head`, `release`, `acquire`, `marker`,
    /// `definitions` or `stats`.
    pub part: &'static str,
    pub n: crate::names::PromoteSymbols,
    pub kernel: String,
    /// The directive, normalized.
    pub summary: String,
    pub location: String,
    /// `promote(aggregate)` (else basic).
    pub aggregate: bool,
    /// The kernel has `#pragma dp acquire`.
    pub marker: bool,
    pub knobs: Vec<PromoteKnob>,
    /// The knob of the pool's blocks, of the steps launched ahead.
    pub pool_macro: String,
    pub ahead_macro: String,
    /// The kernel's parameters, in order.
    pub params: Vec<PromoteParam>,
    /// The launch bounds of the generated kernels: the kernel's own, or
    /// `DPOPT_PARENT_BOUNDS`.
    pub bounds: String,
    /// `release`: the launch's arguments, and the launch as written up to
    /// its arguments (`k<<<1, b>>>`), on line `launch_line`.
    pub args: Vec<PromoteArg>,
    pub launch: String,
    pub launch_line: usize,
    /// `definitions`: the successor's block size and shared memory, builtins
    /// replaced.
    pub block: String,
    pub smem: String,
    /// `definitions`: the wait at the body's start (without the marker).
    pub start_acquire: String,
    /// `definitions`: the kernel's body, builtins replaced.
    pub body: String,
    pub body_line: usize,
    pub body_file: String,
    /// `stats`: every promoted site's counters.
    pub sites: Vec<PostworkCounter>,
    pub file_name: String,
    pub line_out: &'static str,
    pub resume_line: usize,
    pub file: String,
}

/// A knob of a promoted launch.
#[derive(Debug, Serialize)]
pub struct PromoteKnob {
    pub what: &'static str,
    pub site: String,
    pub name: String,
    pub global: &'static str,
    pub value: String,
}

/// A parameter of a promoted kernel.
#[derive(Debug, Serialize)]
pub struct PromoteParam {
    /// As declared, named (`dpopt_argN` when unnamed).
    pub decl: String,
    pub name: String,
    /// As a member of the early or late record, and what reads it back.
    pub member: String,
    pub read: &'static str,
    /// Known when a step starts (else computed by the step: late).
    pub early: bool,
    /// The kernel names it (its body can use it).
    pub named: bool,
    /// An early one's argument in the launch, builtins replaced.
    pub expr: String,
}

/// An argument of the promoted launch, as written (builtins replaced in a
/// step's body), and its line.
#[derive(Debug, Serialize)]
pub struct PromoteArg {
    pub text: String,
    pub line: usize,
    pub early: bool,
}

macro_rules! template_of {
    ($($ty:ty => $name:ident),* $(,)?) => {
        $(impl TemplateContext for $ty {
            fn template(&self) -> &'static str {
                super::templates::$name
            }
        })*
    };
}

template_of! {
    SiteContext => SITE,
    DeclarationsContext => DECLARATIONS,
    BodyContext => BODY,
    SerialSplitContext => SERIAL_SPLIT,
    PositionCloneContext => POSITION_CLONE,
    DefinitionsContext => DEFINITIONS,
    DeferContext => DEFER,
    PreludeContext => PRELUDE,
    StatsContext => STATS,
    BoundsContext => BOUNDS,
    NamespacesContext => NAMESPACES,
    ContinuationContext => CONTINUATION,
    ContinuationStatsContext => CONTINUATION,
    PromoteContext => PROMOTE,
}

impl TemplateContext for FloorSiteContext {
    fn template(&self) -> &'static str {
        if self.queue {
            super::templates::FLOOR_QUEUE
        } else {
            super::templates::FLOOR_SITE
        }
    }
}

impl TemplateContext for FoldContext {
    fn template(&self) -> &'static str {
        self.template
    }
}

impl TemplateContext for FloorContext {
    fn template(&self) -> &'static str {
        self.template
    }
}

impl TemplateContext for AggregationContext {
    fn template(&self) -> &'static str {
        self.template
    }
}
