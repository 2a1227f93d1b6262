//! The analyzer's output: what to generate, per launch site and per child.

use crate::names::Knob;
use crate::pragma::{AllocChoice, ClauseName, Granularity, Value};
use crate::program::{FunctionId, Program};
use crate::source::Span;
use crate::thread_count::ThreadCount;

/// One `#pragma dp` site that will be rewritten.
#[derive(Debug, Clone)]
pub struct Site {
    /// Names the site in macros: `<parent>_<k>` for the k-th pragma in
    /// function `<parent>` (`<parent>` is the parent's symbol, qualified
    /// with its namespaces when its bare name is not unique in the file).
    pub id: String,
    /// The directive's clauses, normalized (`threshold(64) coarsen(4)`).
    pub summary: String,
    /// Index into `Program::pragmas`.
    pub pragma: crate::program::PragmaId,
    /// Index into `Program::launches`.
    pub launch: crate::program::LaunchId,
    pub parent: FunctionId,
    pub child: FunctionId,
    /// Other definitions of the child in other branches of an `#if` group
    /// (at most one of them is compiled); each gets its own generated code.
    pub alternatives: Vec<FunctionId>,
    pub threshold: Option<Value>,
    pub coarsen: Option<Value>,
    /// The child's thread count (only with `threshold`).
    pub count: Option<ThreadCount>,
    /// Aggregation (`consldt(...)`).
    pub aggregation: Option<Aggregation>,
    /// The clauses whose value belongs to the kernels that run the site
    /// (`Lands::Kernel`: `parent_threads`), as the site states them; the
    /// analyzer gathers them per kernel into `Plan::kernels`.
    pub kernel_clauses: Vec<(ClauseName, Value)>,
    /// `floor`: the launch-free copy of the parent and the site's drain.
    pub floor: Option<Floor>,
    /// `alloc(...)` as written (the choice and the clause's span).
    pub alloc_clause: Option<(AllocChoice, Span)>,
    /// The parent's allocations of the launch's pointers that are
    /// aggregated (`analyzer/alloc.rs`).
    pub allocations: Vec<Allocation>,
    /// Allocations of the launch's pointers left per thread, with why (the
    /// automatic aggregation under `consldt` could not follow the pointer),
    /// for `dpopt check` and `dpopt explain`.
    pub allocations_left: Vec<String>,
    /// Every tuning macro the output defines for the site, with its default
    /// (`Plan::settle`): what `dpopt check` and `dpopt explain` list and
    /// what the templates define.
    pub knobs: Vec<SiteKnob>,
}

/// Where the parent's allocations of one pointer are aggregated: the lanes
/// of a warp, or the threads of a block, that reach the call together
/// share one allocation and each gets a slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum AllocGranularity {
    Warp,
    Block,
}

impl AllocGranularity {
    pub const fn spelling(self) -> &'static str {
        match self {
            AllocGranularity::Warp => "warp",
            AllocGranularity::Block => "block",
        }
    }
}

/// The aggregated allocations of one pointer that the parent passes to the
/// site's launch: every allocation call that assigns it, and every free of
/// it (in the parent) or of the child's parameter that receives it.
#[derive(Debug, Clone)]
pub struct Allocation {
    /// The parent's local pointer variable.
    pub pointer: String,
    /// The child's parameter it is passed to (its index).
    pub param: usize,
    pub granularity: AllocGranularity,
    /// `alloc(...)` was written (not the default of `consldt`).
    pub explicit: bool,
    pub calls: Vec<AllocCall>,
    pub frees: Vec<FreeCall>,
}

impl Allocation {
    /// Slices carry headers (a reference count per allocation) exactly when
    /// something frees them.
    pub fn headers(&self) -> bool {
        !self.frees.is_empty()
    }
}

/// One `malloc` or `cudaMalloc` call of the parent.
#[derive(Debug, Clone)]
pub struct AllocCall {
    /// The callee's name token (what the generated code replaces).
    pub callee: Span,
    /// `cudaMalloc` (else `malloc`).
    pub cuda: bool,
    /// Numbers the file's aggregated allocation calls: block granularity
    /// keeps its round state per call.
    pub tag: usize,
}

/// One `free` or `cudaFree` of an aggregated pointer.
#[derive(Debug, Clone)]
pub struct FreeCall {
    pub callee: Span,
    /// `cudaFree` (else `free`).
    pub cuda: bool,
    /// The function that holds it (the parent or the child).
    pub function: FunctionId,
}

crate::arena::arena!(
    /// The sites of a file, in the order of their pragmas.
    Sites,
    /// A site of the plan: its index in `Plan::sites`.
    SiteId,
    Site
);

/// How one site's launches are aggregated.
#[derive(Debug, Clone)]
pub struct Aggregation {
    pub granularity: crate::pragma::Granularity,
    /// The child launches itself (directly or through the parent): its
    /// aggregated grids are parents of the site too.
    pub recursive: bool,
    /// `consldt(multiblock, G)`: parent blocks per group (`DEFAULT_GROUP`
    /// when not given).
    pub group: Value,
    /// `buffer(default, ..., N)` with `consldt(grid)` or `consldt(multiblock)`:
    /// records in the pool (`DEFAULT_POOL_RECORDS` when not given).
    pub pool_records: Value,
    /// Pools of a grid-granularity site: one per parent grid running at the
    /// same time (a recursive child's aggregated grids run while the grid
    /// before them owns a pool).
    pub pools: usize,
    /// Parent blocks of a multiblock site with a place in the pool.
    pub pool_blocks: u64,
    /// `blocks(N)`: at most N aggregated blocks, each looping over original
    /// blocks.
    pub blocks: Option<Value>,
    /// `threads(N)`: N threads per aggregated block, each looping over the
    /// original block's threads.
    pub threads: Option<Value>,
    /// `agg_threshold(N)`: fewer launching lanes launch directly.
    pub agg_threshold: Option<Value>,
    /// Per launch argument: does it vary between parents (stored per
    /// parent) or not (passed once)?
    pub varying: Vec<bool>,
    /// `work(...)` was given: the invariant arguments are only asserted
    /// invariant, and `DPOPT_CHECK_INVARIANT` checks them at run time.
    pub asserted: bool,
}

/// The launch-free floor of one site (`floor`).
#[derive(Debug, Clone)]
pub struct Floor {
    /// Records in the site's work list (`floor(N)`, else
    /// `DEFAULT_POOL_RECORDS`).
    pub records: Value,
    /// Threads per block of the drain grid.
    pub threads: FloorThreads,
    /// The launch's dynamic shared memory, a constant, as C source (`None`:
    /// none).
    pub smem: Option<String>,
    /// The copy's blocks can run the recorded children themselves (the
    /// child has no barrier, warp operation, shared memory or grid
    /// synchronization, so it runs in any block shape): the `FloorJoin`
    /// knob chooses between that and a drain grid.
    pub join: bool,
    /// The child is the kernel itself (a recursion): the drain is one
    /// persistent grid over a work queue that its own blocks add to, and it
    /// runs until no recorded block is left and none is running.
    pub recursive: bool,
    /// A recursion whose child runs in any block shape (as for `join`) with
    /// a constant block size: each block of the drain runs several recorded
    /// blocks side by side (`DPOPT_FLOOR_QUEUE_WIDTH`).
    pub wide: bool,
}

/// How the drain's blocks run a recorded child block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloorThreads {
    /// The child's block size is this constant: one drain thread per child
    /// thread (records of another size run serially).
    Exact(u64),
    /// Not a constant: `DPOPT_FLOOR_THREADS_<site>` threads, each running
    /// several of the block's threads.
    Loop,
}

/// Threads per drain block when the child's block size is not a constant.
pub const DEFAULT_FLOOR_THREADS: u64 = 256;

/// A kernel with `floor` sites: its launch-free copy, the sites' drains and
/// the host launcher, and the host launches that call the launcher.
#[derive(Debug, Clone)]
pub struct FloorKernel {
    pub kernel: FunctionId,
    /// In source order.
    pub sites: Vec<SiteId>,
    /// Host-side launches of the kernel in the input (indices into
    /// `Program::launches`), rewritten to call the launcher.
    pub host_launches: Vec<crate::program::LaunchId>,
}

/// Serial recursion levels of a recursive child before small launches are
/// launched instead (`DPOPT_SERIAL_DEPTH_<child>`).
pub const DEFAULT_SERIAL_DEPTH: u64 = 3;
/// Records in a grid or multiblock site's pool without `buffer(default, N)`.
pub const DEFAULT_POOL_RECORDS: u64 = 65536;
/// Parent blocks per group of `consldt(multiblock)` without a group size.
pub const DEFAULT_GROUP: u64 = 8;
/// Parent blocks of a multiblock site with a place in the pool.
pub const DEFAULT_POOL_BLOCKS: u64 = 65536;

impl Aggregation {
    /// The aggregation of `granularity` with the clauses given and every
    /// other value defaulted.
    pub fn defaulted(
        granularity: Granularity,
        recursive: bool,
        group: Option<Value>,
        pool_records: Option<Value>,
    ) -> Aggregation {
        Aggregation {
            granularity,
            recursive,
            group: group.unwrap_or(Value::Literal(DEFAULT_GROUP)),
            pool_records: pool_records.unwrap_or(Value::Literal(DEFAULT_POOL_RECORDS)),
            pools: if recursive { 4 } else { 1 },
            pool_blocks: DEFAULT_POOL_BLOCKS,
            blocks: None,
            threads: None,
            agg_threshold: None,
            varying: Vec::new(),
            asserted: false,
        }
    }

    /// Grid and multiblock sites keep their records in a static pool.
    pub fn pooled(&self) -> bool {
        matches!(
            self.granularity,
            Granularity::Grid | Granularity::MultiBlock
        )
    }
}

impl Site {
    /// Does the launch run serially only when it finds no room? An
    /// aggregated or coarsened launch without `threshold` or `floor`: its
    /// child gets a serial version for that where it can run serially
    /// (`ChildPlan::serial`). The fallback is out of line, so that the
    /// parent's registers stay as they are: an aggregated launch's is in its
    /// launcher (a function of its own), a recursion's coarsened launch goes
    /// through its listed runner, and another coarsened launch calls the
    /// child's `__noinline__` serial call (`Plan::serial_call`; inline, the
    /// serial version raised sssp's parent from 32 registers to 38).
    pub fn serial_fallback(&self) -> bool {
        self.threshold.is_none()
            && self.floor.is_none()
            && (self.aggregation.is_some()
                || !matches!(self.coarsen, None | Some(Value::Literal(1))))
    }

    /// A coarsened launch, not aggregated, that runs serially only when it
    /// finds no room (`serial_fallback`).
    pub fn coarsened_fallback(&self) -> bool {
        self.serial_fallback() && self.aggregation.is_none()
    }

    /// The child and its alternatives.
    pub fn children(&self) -> impl Iterator<Item = FunctionId> + '_ {
        std::iter::once(self.child).chain(self.alternatives.iter().copied())
    }

    pub fn threshold_macro(&self) -> String {
        Knob::Threshold.name(&self.id)
    }

    pub fn coarsen_macro(&self) -> String {
        Knob::Coarsen.name(&self.id)
    }

    pub fn agg_threshold_macro(&self) -> String {
        Knob::AggThreshold.name(&self.id)
    }

    /// The knobs of this site (`Site::knobs`), from the plan's children.
    fn knobs_of(&self, children: &[ChildPlan], program: &Program) -> Vec<SiteKnob> {
        let knob = |knob: Knob, owner: &str, value: String| SiteKnob {
            knob,
            name: knob.name(owner),
            value,
        };
        let mut knobs = Vec::new();
        if let Some(v) = &self.threshold {
            knobs.push(knob(Knob::Threshold, &self.id, v.to_source()));
        }
        // A recursive child run serially (below the threshold, or the
        // floor's fallback) nests at most this many levels.
        let recursive = children
            .iter()
            .any(|c| c.child == self.child && c.recursive);
        if recursive && (self.threshold.is_some() || self.floor.is_some()) {
            knobs.push(knob(
                Knob::SerialDepth,
                &program.functions[self.child].symbol,
                DEFAULT_SERIAL_DEPTH.to_string(),
            ));
        }
        if let Some(v) = &self.coarsen {
            knobs.push(knob(Knob::Coarsen, &self.id, v.to_source()));
        }
        if let Some(f) = &self.floor {
            knobs.push(knob(
                Knob::Floor,
                &program.functions[self.parent].symbol,
                "1".to_string(),
            ));
            knobs.push(knob(Knob::FloorRecords, &self.id, f.records.to_source()));
            knobs.push(knob(Knob::FloorBlocks, &self.id, "0".to_string()));
            if f.threads == FloorThreads::Loop {
                knobs.push(knob(
                    Knob::FloorThreads,
                    &self.id,
                    DEFAULT_FLOOR_THREADS.to_string(),
                ));
            }
            if f.join {
                knobs.push(knob(Knob::FloorJoin, &self.id, "1".to_string()));
            }
        }
        if let Some(a) = &self.aggregation {
            if let Some(v) = &a.agg_threshold {
                knobs.push(knob(Knob::AggThreshold, &self.id, v.to_source()));
            }
            if a.pooled() {
                knobs.push(knob(
                    Knob::PoolRecords,
                    &self.id,
                    a.pool_records.to_source(),
                ));
            }
            if a.granularity == Granularity::Grid {
                knobs.push(knob(Knob::Pools, &self.id, a.pools.to_string()));
            }
            if a.granularity == Granularity::MultiBlock {
                knobs.push(knob(Knob::Group, &self.id, a.group.to_source()));
                knobs.push(knob(Knob::PoolBlocks, &self.id, a.pool_blocks.to_string()));
            }
        }
        knobs
    }
}

/// A tuning macro of one site and its default.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SiteKnob {
    pub knob: Knob,
    /// The macro (`DPOPT_THRESHOLD_<site>`).
    pub name: String,
    /// Its value unless set when compiling, as C source.
    pub value: String,
}

impl Site {
    /// The value of one of the site's knobs.
    pub fn knob(&self, knob: Knob) -> Option<&SiteKnob> {
        self.knobs.iter().find(|k| k.knob == knob)
    }
}

impl SiteKnob {
    /// The macro that sets it for every site.
    pub fn global(&self) -> &'static str {
        self.knob.global()
    }
}

/// The values that belong to a kernel rather than to one site: clauses
/// whose row says `Lands::Kernel`, one value per kernel however many of
/// the sites it runs state it. The templates read them as they are
/// (`BoundsContext::stated`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Kernel {
    /// `parent_threads(N)`: the largest block size it is launched with; a
    /// bounded kernel gets `__launch_bounds__(N)` instead of
    /// `DPOPT_PARENT_BOUNDS`.
    pub parent_threads: Option<Value>,
}

/// A promoted launch (`promote(...)`, paper 003 Sec. III): a single-block
/// kernel's launch of itself, a chain of steps. The head (a launch from
/// elsewhere) starts its successor at once; each step releases the next at
/// the launch instead of launching it.
#[derive(Debug, Clone)]
pub struct PromoteSite {
    /// `<kernel>_<k>`, counted with the kernel's other sites.
    pub id: String,
    /// The directive's clauses, normalized.
    pub summary: String,
    /// Index into `Program::pragmas`.
    pub pragma: crate::program::PragmaId,
    /// Index into `Program::launches`.
    pub launch: crate::program::LaunchId,
    /// The kernel, which launches itself.
    pub kernel: FunctionId,
    pub kind: crate::pragma::Promotion,
    /// `aggregate`: the pool's blocks (`DEFAULT_PROMOTE_POOL` when not
    /// given).
    pub pool: Value,
    /// `#pragma dp acquire` (an index into `Program::pragmas`): a promoted
    /// step waits there, after the code before it; without it, at its start.
    pub acquire: Option<crate::program::PragmaId>,
    /// Per parameter of the kernel: is the launch's argument known when the
    /// step starts (built from parameters the kernel never assigns,
    /// constants and `blockIdx`/`blockDim`/`gridDim`), so that the successor
    /// gets it early, or does the step compute it (postponed to the
    /// release)?
    pub early: Vec<bool>,
    /// The kernel's parameters as record members (`record.rs`).
    pub members: Vec<crate::record::Member>,
    /// Where the head's start goes: the line start after the body's `{`
    /// (`inline` false), or right after the `{` when code follows it on its
    /// line.
    pub head_at: usize,
    pub head_inline: bool,
    /// The site's knobs (`Plan::settle`).
    pub knobs: Vec<SiteKnob>,
}

/// Blocks of a promoted chain's pool without `promote(aggregate, G)`.
pub const DEFAULT_PROMOTE_POOL: u64 = 8;
/// Steps of a basically promoted chain launched at most ahead of the
/// released one.
pub const DEFAULT_PROMOTE_AHEAD: u64 = 2;

impl PromoteSite {
    fn knobs(&self) -> Vec<SiteKnob> {
        let knob = |knob: Knob, value: String| SiteKnob {
            knob,
            name: knob.name(&self.id),
            value,
        };
        match self.kind {
            crate::pragma::Promotion::Basic => {
                vec![knob(Knob::PromoteAhead, DEFAULT_PROMOTE_AHEAD.to_string())]
            }
            crate::pragma::Promotion::Aggregate => {
                vec![knob(Knob::PromotePool, self.pool.to_source())]
            }
        }
    }
}

/// What is generated for one child kernel, shared by all its sites.
#[derive(Debug, Clone)]
pub struct ChildPlan {
    pub child: FunctionId,
    /// Some site thresholds this child: a serial version is needed.
    pub serial: bool,
    /// Some site coarsens this child: a coarsened kernel is needed.
    pub coarse: bool,
    /// The child uses `__shared__` memory (a coarsened block must wait
    /// between original blocks).
    pub uses_shared: bool,
    /// The body function is part of a recursion (not force-inlined).
    pub recursive: bool,
    /// The child starts with `int i = blockIdx.x * blockDim.x + threadIdx.x;
    /// if (i >= n) return;` (`guard.rs`): the serial version of a 1-D launch
    /// stops at `n`, runs thread `t` as thread `t` of block 0 where the
    /// body names the indices nowhere else, and in the launch-free copy runs
    /// a copy of the body without the test (`transform/child.rs`).
    pub guard: Option<crate::guard::Guard>,
    /// The atomics the launch-free copy's serial version folds into
    /// registers (`atomic_fold.rs`). Only for a child with a serial version
    /// and a `floor` site, not recursive, whose threads may run one after
    /// the other: `Some` implies `serial`. `Some` with no atomics where
    /// there is none to fold but the child starts with the bounds guard:
    /// the copy's serial version then runs a copy of the body without it.
    pub folds: Option<crate::atomic_fold::AtomicFolds>,
    /// The child waits at block barriers or shares memory: its serial
    /// version runs the body split at the barriers (`barrier_split.rs`).
    pub phased: Option<crate::barrier_split::Phased>,
    /// The child has a queue of deferred launches (templates/defer.cu.tera):
    /// it has a serial version and is no template (its queue would be one
    /// per instantiation), and a site's launch can defer: a thresholded
    /// site that is not aggregated, or the direct-launch fallback of warp,
    /// block and multiblock aggregation (grid aggregation's never defer).
    pub defers: bool,
    /// The child's parameters as record members (`record.rs`).
    pub members: Vec<crate::record::Member>,
    pub sites: Vec<SiteId>,
    /// Byte offset before which declarations and macros are inserted.
    pub declare_at: usize,
    /// For a child defined in another file (a header, a child source): the
    /// line start of the input where its declarations and definitions go
    /// (in its namespace); `None` for a child of the input, whose
    /// definitions go after it.
    pub elsewhere: Option<usize>,
}

impl ChildPlan {
    /// A recursive child with a deferral queue runs a launch that found no
    /// room as a listed serial run (`serial_list.cuh`): its own launches made
    /// in that run are listed and made after it, so the stack does not grow
    /// with the recursion's depth.
    pub fn lists(&self) -> bool {
        self.recursive && self.defers
    }
}

#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub sites: Sites,
    pub children: Vec<ChildPlan>,
    /// Kernels that hold a rewritten
    /// launch, directly or through the device functions they call, and
    /// declare no launch bounds of their own: they get
    /// `DPOPT_PARENT_BOUNDS` (`__launch_bounds__(1024)`), so that the
    /// generated code cannot make them unlaunchable with 1,024 threads.
    pub bounded: Vec<FunctionId>,
    /// What the sites a kernel runs state about it (`Kernel`), for the
    /// kernels whose sites state any.
    pub kernels: std::collections::BTreeMap<FunctionId, Kernel>,
    /// Kernels with `floor` sites.
    pub floors: Vec<FloorKernel>,
    /// Device-side syncs migrated to continuations (`--migrate-sync`,
    /// `postwork.rs`).
    pub postwork: Vec<crate::postwork::SyncSite>,
    /// Promoted launches (`promote(...)`).
    pub promotions: Vec<PromoteSite>,
    /// Callees that read positions, copied with the positions as
    /// parameters for the copies of bodies (`position_clone.rs`).
    pub positions: crate::position_clone::PositionClones,
    /// What the file's generated code uses (`Plan::settle`): the prelude
    /// holds only that.
    pub uses: Uses,
}

/// What the generated code of a file uses, from the prelude (which
/// `prelude.cu.tera` reads as they are).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Uses {
    /// Some site aggregates.
    pub aggregate: bool,
    /// Cooperative groups (warp, block, multiblock).
    pub cooperative_groups: bool,
    /// CUB's block scan (grid).
    pub cub: bool,
    /// Launch-parameter sizes (warp, block, multiblock).
    pub param_bytes: bool,
    /// `dpopt_uniform` (warp aggregation under `work(...)`).
    pub uniform: bool,
    /// `dpopt_grid_id` (a pool: grid, multiblock).
    pub grid_id: bool,
    /// `dpopt_bytes`: a record keeps a parameter as its bytes.
    pub bytes: bool,
    /// The queue of deferred launches.
    pub defer: bool,
    /// Listed serial runs of recursive children (`ChildPlan::lists`).
    pub serial_list: bool,
    /// `DPOPT_PARENT_BOUNDS`.
    pub bounded: bool,
    /// The statistics counters (any site).
    pub stats: bool,
    /// Aggregated allocations (`templates/alloc.cuh`).
    pub alloc: bool,
    /// A promoted chain.
    pub promote: bool,
    /// The launch-free floor's support (`templates/floor.cuh`).
    pub floor: bool,
    /// `printf` in generated code before the file's end (a split serial
    /// version's bound check): `<cstdio>` at the file's start, where the
    /// aggregation support does not include it already.
    pub stdio: bool,
}

impl Uses {
    /// Whether the file needs a prelude at all.
    pub fn prelude(&self) -> bool {
        self.aggregate
            || self.bytes
            || self.defer
            || self.bounded
            || self.stats
            || self.alloc
            || self.promote
            || self.floor
            || self.stdio
    }
}

impl Plan {
    /// Decide what follows from the sites and children together: each
    /// site's knobs and what the file's generated code uses. The analyzer
    /// calls it once they (and the bounded kernels) are all known.
    pub fn settle(&mut self, program: &Program) {
        let aggregations = || self.sites.iter().filter_map(|s| s.aggregation.as_ref());
        let in_parameters = |a: &Aggregation| a.granularity != Granularity::Grid;
        // Records keep classes as their bytes: aggregation's (of the
        // aggregated sites' children), and the queues of deferred launches.
        let bytes = self.children.iter().any(|c| {
            let records = c.defers
                || c.sites
                    .iter()
                    .any(|&s| self.sites[s].aggregation.is_some() || self.sites[s].floor.is_some());
            records && c.members.iter().any(|m| !m.read.is_empty())
        }) || self
            .promotions
            .iter()
            .any(|p| p.members.iter().any(|m| !m.read.is_empty()));
        let floor = self.sites.iter().any(|s| s.floor.is_some());
        self.uses = Uses {
            aggregate: aggregations().next().is_some(),
            cooperative_groups: aggregations().any(in_parameters),
            cub: aggregations().any(|a| a.granularity == Granularity::Grid),
            param_bytes: aggregations().any(in_parameters),
            uniform: aggregations().any(|a| a.granularity == Granularity::Warp && a.asserted),
            grid_id: aggregations().any(Aggregation::pooled),
            bytes,
            defer: self.children.iter().any(|c| c.defers),
            serial_list: self.children.iter().any(ChildPlan::lists),
            bounded: !self.bounded.is_empty(),
            stats: !self.sites.is_empty(),
            alloc: self.sites.iter().any(|s| !s.allocations.is_empty()),
            promote: !self.promotions.is_empty(),
            floor,
            stdio: self.children.iter().any(|c| c.phased.is_some()),
        };
        for p in &mut self.promotions {
            p.knobs = p.knobs();
        }
        let knobs: Vec<Vec<SiteKnob>> = self
            .sites
            .iter()
            .map(|s| s.knobs_of(&self.children, program))
            .collect();
        for (site, knobs) in self.sites.iter_mut().zip(knobs) {
            site.knobs = knobs;
        }
    }

    /// The callees the transform renames, in source order: each aggregated
    /// allocation's `malloc`/`cudaMalloc` and each `free`/`cudaFree` of its
    /// slices, with the name that replaces it (`names::alloc_call`,
    /// `names::free_call`), in the file and in every copy of a body.
    pub fn renamed_calls(&self) -> Vec<(Span, String)> {
        let mut renamed = Vec::new();
        for a in self.sites.iter().flat_map(|s| &s.allocations) {
            for call in &a.calls {
                let name =
                    crate::names::alloc_call(call.cuda, a.granularity, call.tag, a.headers());
                renamed.push((call.callee, name));
            }
            for free in &a.frees {
                renamed.push((free.callee, crate::names::free_call(free.cuda).to_string()));
            }
        }
        renamed.sort_by_key(|(callee, _)| callee.start());
        renamed
    }

    /// Does the child have a `__noinline__` call of its serial version
    /// (`dpopt_serial_call_<child>`, templates/definitions.cu.tera)? For the
    /// coarsened launches of a child that is no recursion, which run serially
    /// only when they find no room (a recursive child's go through its listed
    /// runner, where it has one).
    pub fn serial_call(&self, c: &ChildPlan) -> bool {
        c.serial && !c.recursive && c.sites.iter().any(|&s| self.sites[s].coarsened_fallback())
    }

    /// Whether a child with these sites has a queue of deferred launches
    /// (`ChildPlan::defers`).
    pub fn child_defers(
        &self,
        child: &crate::program::Function,
        serial: bool,
        sites: &[SiteId],
    ) -> bool {
        serial
            && child.template_header.is_none()
            && sites.iter().any(|&s| {
                let site = &self.sites[s];
                match &site.aggregation {
                    None => site.threshold.is_some() || site.serial_fallback(),
                    Some(a) => a.granularity != Granularity::Grid,
                }
            })
    }
}
