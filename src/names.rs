//! Every name dpopt gives to what it generates: the functions and kernels of
//! a child, the per-site functions, and the tuning macros (knobs) of a site.
//! The transform, `dpopt check` and `dpopt explain` all take names from
//! here, so the knobs the commands list are the knobs the output defines.

use serde::Serialize;

/// The child's body as a device function (builtins as parameters).
pub fn body(child: &str) -> String {
    format!("dpopt_body_{child}")
}

/// The copy of a callee that reads positions, taking them as parameters
/// (`position_clone.rs`).
pub fn position_clone(callee: &str) -> String {
    format!("dpopt_pos_{callee}")
}

/// The child's serial version (threshold).
pub fn serial(child: &str) -> String {
    format!("dpopt_serial_{child}")
}

/// The serial version's copy of the child's body, its last atomics folded
/// (`atomic_fold.rs`).
pub fn serial_body(child: &str) -> String {
    format!("dpopt_serial_body_{child}")
}

/// The child's serial version in a launch-free copy (`floor`), its last
/// atomics folded.
pub fn serial_folded(child: &str) -> String {
    format!("dpopt_serial_folded_{child}")
}

/// The fold of the child's `k`th folded atomic.
pub fn fold(child: &str, k: usize) -> String {
    format!("dpopt_fold_{child}_{k}")
}

/// The function of the child's `k`-th folded atomic in the copy of its
/// body that the launch-free copy's drains run (combined per warp).
pub fn warp_fold(child: &str, k: usize) -> String {
    format!("dpopt_wfold_{child}_{k}")
}

/// The copy of the child's body that the launch-free copy's drains run,
/// its folded atomics combined per warp.
pub fn warp_body(child: &str) -> String {
    format!("dpopt_wbody_{child}")
}

/// The child's coarsened kernel (coarsen).
pub fn coarse(child: &str) -> String {
    format!("dpopt_coarse_{child}")
}

/// The launch-free copy of a parent kernel (`floor`).
pub fn floor_copy(parent: &str) -> String {
    format!("dpopt_floor_{parent}")
}

/// The launch-free copy's body, a device function the copy calls before its
/// blocks drain the recorded children (`floor`).
pub fn floor_body(parent: &str) -> String {
    format!("dpopt_floor_body_{parent}")
}

/// The launch-free copy's body of a recursive `floor` kernel as a device
/// function with the thread and block builtins as parameters: what the
/// queue's drain and the copy's serial version run.
pub fn floor_rbody(kernel: &str) -> String {
    format!("dpopt_floor_rbody_{kernel}")
}

/// The serial version of a recursive `floor` kernel in its launch-free
/// copy: runs every thread of a child in turn through `floor_rbody`.
pub fn floor_serial(kernel: &str) -> String {
    format!("dpopt_floor_serial_{kernel}")
}

/// The host function that host launches of a `floor` parent call.
pub fn floor_launcher(parent: &str) -> String {
    format!("dpopt_floor_launch_{parent}")
}

/// The child's counted kernel: the child as dpopt launches it, counted
/// against the pending-launch limit (templates/launch_budget.cuh).
pub fn counted(child: &str) -> String {
    format!("dpopt_counted_{child}")
}

/// The function that queues a deferred launch of the child.
pub fn defer(child: &str) -> String {
    format!("dpopt_defer_{child}")
}

/// The serial version called out of line (`Plan::serial_call`).
pub fn serial_call(child: &str) -> String {
    format!("dpopt_serial_call_{child}")
}

/// What replaces `malloc` (or `cudaMalloc`) at an aggregated allocation
/// call (`templates/alloc.cuh`): the helper of its granularity, with the
/// call's tag (block granularity keeps its round state per call) and
/// whether the slices carry headers (something frees them).
pub fn alloc_call(
    cuda: bool,
    granularity: crate::plan::AllocGranularity,
    tag: usize,
    headers: bool,
) -> String {
    format!(
        "dpopt_{}malloc_{}<{tag}u, {headers}>",
        if cuda { "cuda_" } else { "" },
        granularity.spelling()
    )
}

/// What replaces `free` (or `cudaFree`) of a slice.
pub fn free_call(cuda: bool) -> &'static str {
    if cuda {
        "dpopt_cuda_free_slice"
    } else {
        "dpopt_free_slice"
    }
}

/// The symbols of a child's queue of deferred launches.
#[derive(Debug, Clone, Serialize)]
pub struct DeferSymbols {
    /// The record of one deferred launch.
    pub record: String,
    /// The queue (a `__device__` variable).
    pub queue: String,
    /// The launch and serial run of one record.
    pub ops: String,
    /// Makes a record from a launch's grids, block and arguments.
    pub make: String,
    /// A recursive child's lists of listed serial runs (`serial_list.cuh`).
    pub lists: String,
    /// The serial run of a launch that found no room, listed.
    pub runner: String,
    /// Appends a launch made in a listed run to its list.
    pub push: String,
}

impl DeferSymbols {
    pub fn of(child: &str) -> DeferSymbols {
        DeferSymbols {
            record: format!("dpopt_deferred_{child}"),
            queue: format!("dpopt_deferred_{child}_queue"),
            ops: format!("dpopt_deferred_ops_{child}"),
            make: format!("dpopt_deferred_make_{child}"),
            lists: format!("dpopt_deferred_{child}_lists"),
            runner: format!("dpopt_listed_run_{child}"),
            push: format!("dpopt_listed_push_{child}"),
        }
    }
}

/// The symbols of one migrated sync (`--migrate-sync`).
#[derive(Debug, Clone, Serialize)]
pub struct PostworkSymbols {
    /// The continuation kernel.
    pub continuation: String,
    /// The postwork as a device function.
    pub body: String,
    /// The record of one thread's locals and its constructor.
    pub record: String,
    pub make_record: String,
    /// The counters (`-DDPOPT_STATS`) and the macro that counts.
    pub stats: String,
    pub count: String,
    /// The flag of a thread that reached a sync inside an `if` block.
    pub waited: String,
}

impl PostworkSymbols {
    pub fn of(id: &str) -> PostworkSymbols {
        PostworkSymbols {
            continuation: format!("dpopt_postwork_{id}"),
            body: format!("dpopt_postwork_body_{id}"),
            record: format!("dpopt_record_{id}"),
            make_record: format!("dpopt_make_record_{id}"),
            stats: format!("dpopt_postwork_stats_{id}"),
            count: format!("DPOPT_POSTWORK_COUNT_{id}"),
            waited: format!("dpopt_waited_{id}"),
        }
    }
}

/// The symbols of one promoted chain's generated code (`promote(...)`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct PromoteSymbols {
    /// The site's id (`<kernel>_<k>`).
    pub id: String,
    /// The arguments a step's successor gets from the step's start, and
    /// those the step computes (postponed to its release).
    pub early: String,
    pub late: String,
    /// The successor's early arguments and configuration, and the function
    /// that computes them.
    pub next: String,
    pub successor: String,
    /// One step's arguments in the chain's state.
    pub slot: String,
    /// The chain's state (one per head block, on the device heap).
    pub chain: String,
    /// A running step's state (shared memory of its block).
    pub step: String,
    /// The head's start, the release at the launch, the wait, the end of a
    /// step and the destructor that runs it in the head.
    pub head: String,
    pub release: String,
    pub acquire: String,
    pub finish: String,
    pub guard: String,
    /// The kernel's body as a device function (a promoted step).
    pub body: String,
    /// `basic`: the kernel of one promoted step and its start.
    pub step_kernel: String,
    pub start: String,
    /// `aggregate`: the pool's kernel and a pool block taking a step.
    pub pool: String,
    pub take: String,
    /// The counters (`-DDPOPT_STATS`) and the macro that counts.
    pub stats: String,
    pub count: String,
}

impl PromoteSymbols {
    pub fn of(id: &str) -> PromoteSymbols {
        let name = |what: &str| format!("dpopt_promote_{what}_{id}");
        PromoteSymbols {
            id: id.to_string(),
            early: name("early"),
            late: name("late"),
            next: name("next"),
            successor: name("successor"),
            slot: name("slot"),
            chain: name("chain"),
            step: name("state"),
            head: name("head"),
            release: name("release"),
            acquire: name("acquire"),
            finish: name("finish"),
            guard: name("guard"),
            body: name("body"),
            step_kernel: name("step"),
            start: name("start"),
            pool: name("pool"),
            take: name("take"),
            stats: name("stats"),
            count: format!("DPOPT_PROMOTE_COUNT_{id}"),
        }
    }
}

/// The namespaces a generated variable is declared in, as an absolute
/// qualifier (`::a::b`; empty at global scope). An anonymous namespace has
/// no name to write and needs none: its members are found in the namespace
/// around it.
pub fn scope(namespaces: &[String]) -> String {
    namespaces
        .iter()
        .filter(|n| !n.is_empty())
        .map(|n| format!("::{n}"))
        .collect()
}

/// The symbols of one site's generated code (the templates write
/// `{{ n.record }}` where the site's record type goes, ...).
#[derive(Debug, Clone, Serialize)]
pub struct SiteSymbols {
    /// The site's id (`<parent>_<k>`).
    pub id: String,
    /// Where the site's counters and run-time knobs are declared: the
    /// child's namespaces (`scope`), which the site's launch, in the
    /// parent, and the host functions at the end of the file are outside of.
    pub scope: String,
    pub count: String,
    pub record: String,
    pub shared: String,
    pub pool_storage: String,
    pub pool: String,
    pub capacity: String,
    pub small: String,
    pub block_barrier: String,
    pub batch_record: String,
    pub batch_buffer: String,
    pub batches: String,
    pub batch: String,
    pub group_aggregated: String,
    pub aggregated: String,
    pub agg_grid: String,
    pub agg_block: String,
    pub release: String,
    pub header: String,
    pub fit: String,
    pub dispatch: String,
    pub launch_group: String,
    pub launcher: String,
    pub group: String,
    pub site_stream: String,
    pub stats_of: String,
    pub stream: String,
    pub stats: String,
    /// The counters as code anywhere in the file names them (`stats`,
    /// qualified with `scope`).
    pub stats_ref: String,
    /// `floor`: the work list's record, type and storage, the function that
    /// records a child, and the drain kernel.
    pub floor_record: String,
    pub floor_list: String,
    pub floor_storage: String,
    pub floor_push: String,
    pub floor_join: String,
    /// A block's own list of the copy's recorded children (`_cap`, `_count`
    /// beside it).
    pub floor_local: String,
    pub drain: String,
}

impl SiteSymbols {
    /// The symbols of site `site`, whose child is declared in
    /// `child_namespace`.
    pub fn of(site: &str, child_namespace: &[String]) -> SiteSymbols {
        let scope = scope(child_namespace);
        let stats = format!("dpopt_stats_{site}");
        let stats_ref = if scope.is_empty() {
            stats.clone()
        } else {
            format!("{scope}::{stats}")
        };
        SiteSymbols {
            id: site.to_string(),
            scope,
            count: format!("DPOPT_COUNT_{site}"),
            record: format!("dpopt_record_{site}"),
            shared: format!("dpopt_shared_{site}"),
            pool_storage: format!("dpopt_pool_storage_{site}"),
            pool: format!("dpopt_pool_{site}"),
            capacity: format!("dpopt_capacity_{site}"),
            small: format!("dpopt_small_{site}"),
            block_barrier: format!("dpopt_block_barrier_{site}"),
            batch_record: format!("dpopt_batch_record_{site}"),
            batch_buffer: format!("dpopt_batch_buffer_{site}"),
            batches: format!("dpopt_batches_{site}"),
            batch: format!("dpopt_batch_{site}"),
            group_aggregated: format!("dpopt_group_aggregated_{site}"),
            aggregated: format!("dpopt_aggregated_{site}"),
            agg_grid: format!("DPOPT_AGG_GRID_{site}"),
            agg_block: format!("DPOPT_AGG_BLOCK_{site}"),
            release: format!("dpopt_release_{site}"),
            header: format!("dpopt_header_{site}"),
            fit: format!("dpopt_fit_{site}"),
            dispatch: format!("dpopt_dispatch_{site}"),
            launch_group: format!("dpopt_launch_group_{site}"),
            launcher: format!("dpopt_launch_{site}"),
            group: format!("dpopt_group_{site}"),
            site_stream: format!("DPOPT_SITE_STREAM_{site}"),
            stats_of: format!("DPOPT_STATS_OF_{site}"),
            stream: format!("DPOPT_STREAM_{site}"),
            stats,
            stats_ref,
            floor_record: format!("dpopt_floor_record_{site}"),
            floor_list: format!("dpopt_floor_list_{site}"),
            floor_storage: format!("dpopt_floor_storage_{site}"),
            floor_push: format!("dpopt_floor_push_{site}"),
            floor_join: format!("dpopt_floor_join_{site}"),
            floor_local: format!("dpopt_floor_local_{site}"),
            drain: format!("dpopt_drain_{site}"),
        }
    }
}

/// A tuning macro: set per site (`DPOPT_THRESHOLD_<site>`) or, where the
/// site's is not given, for every site at once (`DPOPT_THRESHOLD`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Knob {
    Threshold,
    Coarsen,
    AggThreshold,
    /// Records in a grid or multiblock site's pool.
    PoolRecords,
    /// Pools of a grid site.
    Pools,
    /// Parent blocks per group (multiblock).
    Group,
    /// Parent blocks with a place in a multiblock site's pool.
    PoolBlocks,
    /// Serial recursion levels of a recursive child (named after the child).
    SerialDepth,
    /// `floor`: host launches run the launch-free copy (1) or the kernel
    /// itself (0); named after the parent kernel.
    Floor,
    /// Records in a `floor` site's work list.
    FloorRecords,
    /// Blocks of a `floor` site's drain grid (0: as many as fill the device).
    FloorBlocks,
    /// Threads per block of a drain grid whose child's block size is not a
    /// constant.
    FloorThreads,
    /// `floor`: the copy's own blocks run the recorded children (1) or a
    /// drain grid does (0); sites whose child runs in any block shape.
    FloorJoin,
    /// Blocks of a promoted chain's pool (`promote(aggregate)`).
    PromotePool,
    /// Steps of a basically promoted chain launched ahead of the released
    /// one (`promote(basic)`).
    PromoteAhead,
}

impl Knob {
    /// The macro that sets this knob for every site (or child).
    pub const fn global(self) -> &'static str {
        match self {
            Knob::Threshold => "DPOPT_THRESHOLD",
            Knob::Coarsen => "DPOPT_COARSEN",
            Knob::AggThreshold => "DPOPT_AGG_THRESHOLD",
            Knob::PoolRecords => "DPOPT_POOL_RECORDS",
            Knob::Pools => "DPOPT_POOLS",
            Knob::Group => "DPOPT_GROUP",
            Knob::PoolBlocks => "DPOPT_POOL_BLOCKS",
            Knob::SerialDepth => "DPOPT_SERIAL_DEPTH",
            Knob::Floor => "DPOPT_FLOOR",
            Knob::FloorRecords => "DPOPT_FLOOR_RECORDS",
            Knob::FloorBlocks => "DPOPT_FLOOR_BLOCKS",
            Knob::FloorThreads => "DPOPT_FLOOR_THREADS",
            Knob::FloorJoin => "DPOPT_FLOOR_JOIN",
            Knob::PromotePool => "DPOPT_PROMOTE_POOL",
            Knob::PromoteAhead => "DPOPT_PROMOTE_AHEAD",
        }
    }

    /// The macro of one site (or, for `SerialDepth`, of one child symbol).
    pub fn name(self, owner: &str) -> String {
        format!("{}_{owner}", self.global())
    }

    /// What the value means, for `dpopt explain`.
    pub const fn meaning(self) -> &'static str {
        match self {
            Knob::Threshold => "launch only when the child has at least this many threads (DPOPT_THRESHOLD sets every site)",
            Knob::Coarsen => "original child blocks run by each launched block (DPOPT_COARSEN sets every site)",
            Knob::AggThreshold => "fewer launching lanes than this launch directly instead of aggregating",
            Knob::PoolRecords => "records in the site's static pool; launches beyond it launch directly",
            Knob::Pools => "pools: parent grids aggregating at the same time",
            Knob::Group => "parent blocks per group (1..256)",
            Knob::PoolBlocks => "parent blocks with a place in the pool; later ones aggregate per block",
            Knob::SerialDepth => "serial recursion levels (DPOPT_SERIAL_DEPTH sets every child)",
            Knob::Floor => "1: host launches of the parent run its launch-free copy and the drains; 0: the parent itself",
            Knob::FloorRecords => "records in the site's work list; children beyond it run serially",
            Knob::FloorBlocks => "blocks of the site's drain grid; 0: as many as fill the device",
            Knob::FloorThreads => "threads per block of the site's drain grid (the child's block size is not a constant)",
            Knob::FloorJoin => "1: the copy's blocks run the recorded children as they finish (no drain grid); 0: a drain grid after the copy",
            Knob::PromotePool => "blocks of the pool that runs the chain's steps (each waits for its predecessor's release)",
            Knob::PromoteAhead => "steps launched at most ahead of the released one (each waits for its release)",
        }
    }

    /// The knob in the comment above its definition.
    pub const fn what(self) -> &'static str {
        match self {
            Knob::Threshold => "threshold",
            Knob::Coarsen => "coarsening factor",
            Knob::AggThreshold => "aggregation threshold",
            Knob::PoolRecords => "pool records",
            Knob::Pools => "pools",
            Knob::Group => "group size",
            Knob::PoolBlocks => "pool blocks",
            Knob::SerialDepth => "serial recursion depth",
            Knob::Floor => "floor",
            Knob::FloorRecords => "work-list records",
            Knob::FloorBlocks => "drain blocks",
            Knob::FloorThreads => "drain threads",
            Knob::FloorJoin => "drain in the copy",
            Knob::PromotePool => "pool blocks of the promoted chain",
            Knob::PromoteAhead => "steps launched ahead",
        }
    }

    /// Whether `dpopt_knobs_from_env` can set it at run time
    /// (`-DDPOPT_RUNTIME_KNOBS`): the knobs read through `DPOPT_KNOB`, not
    /// those that size arrays or bound recursion at compile time.
    pub const fn at_run_time(self) -> bool {
        matches!(self, Knob::Threshold | Knob::Coarsen | Knob::AggThreshold)
    }
}

/// A site's launch counters (`-DDPOPT_STATS`): each is a macro of the
/// prelude (`DPOPT_STAT_<NAME>`) that indexes the site's counter array, and
/// a field of `dpopt_stats_report`'s line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    Requested,
    Serialized,
    Direct,
    Aggregated,
    ParentsAggregated,
    Fallbacks,
    Deferred,
}

/// A counter as the templates write it.
#[derive(Debug, Serialize)]
pub struct CounterName {
    /// `DPOPT_STAT_SERIALIZED`.
    pub name: &'static str,
    pub index: usize,
    /// The field of `dpopt_stats_report`'s line (`serialized`).
    pub field: &'static str,
    pub meaning: &'static str,
}

impl Counter {
    pub const ALL: [Counter; 7] = [
        Counter::Requested,
        Counter::Serialized,
        Counter::Direct,
        Counter::Aggregated,
        Counter::ParentsAggregated,
        Counter::Fallbacks,
        Counter::Deferred,
    ];

    pub fn describe(self) -> CounterName {
        let (name, field, meaning) = match self {
            Counter::Requested => ("DPOPT_STAT_REQUESTED", "requested", "launches requested"),
            Counter::Serialized => ("DPOPT_STAT_SERIALIZED", "serialized", "launches run serially"),
            Counter::Direct => ("DPOPT_STAT_DIRECT", "direct", "launches made directly"),
            Counter::Aggregated => ("DPOPT_STAT_AGGREGATED", "aggregated", "aggregated launches"),
            Counter::ParentsAggregated => (
                "DPOPT_STAT_PARENTS",
                "parents_aggregated",
                "parent launches in them",
            ),
            Counter::Fallbacks => (
                "DPOPT_STAT_FALLBACKS",
                "fallbacks",
                "launches that found no room (direct launches; with multiblock, parents aggregated per block because the pool was full)",
            ),
            Counter::Deferred => (
                "DPOPT_STAT_DEFERRED",
                "deferred",
                "of those, launches deferred (queued, then launched when room freed up, counted as direct, or run serially after waiting, counted as serialized)",
            ),
        };
        CounterName {
            name,
            index: self as usize,
            field,
            meaning,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knob_names_append_the_owner() {
        assert_eq!(Knob::Threshold.name("k_1"), "DPOPT_THRESHOLD_k_1");
        assert_eq!(Knob::PoolBlocks.name("p_2"), "DPOPT_POOL_BLOCKS_p_2");
        assert_eq!(Knob::SerialDepth.name("tree"), "DPOPT_SERIAL_DEPTH_tree");
    }

    #[test]
    fn counters_of_a_namespaced_child_are_named_from_anywhere() {
        let global = SiteSymbols::of("p_1", &[]);
        assert_eq!(
            (global.scope.as_str(), global.stats_ref.as_str()),
            ("", "dpopt_stats_p_1")
        );
        let nested = SiteSymbols::of("p_1", &["a".into(), String::new(), "b".into()]);
        assert_eq!(nested.scope, "::a::b");
        assert_eq!(nested.stats_ref, "::a::b::dpopt_stats_p_1");
        let anonymous = SiteSymbols::of("p_1", &[String::new()]);
        assert_eq!(anonymous.stats_ref, "dpopt_stats_p_1");
    }

    #[test]
    fn counters_are_numbered_in_order() {
        for (i, c) in Counter::ALL.iter().enumerate() {
            assert_eq!(c.describe().index, i);
        }
        assert_eq!(Counter::Deferred.describe().name, "DPOPT_STAT_DEFERRED");
    }
}
