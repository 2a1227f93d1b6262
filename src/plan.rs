//! The analyzer's output: what to generate, per launch site and per child.

use crate::names::Knob;
use crate::pragma::{Directive, Granularity, Value};
use crate::program::Program;
use crate::thread_count::ThreadCount;

/// One `#pragma dp` site that will be rewritten.
#[derive(Debug, Clone)]
pub struct Site {
    /// Names the site in macros: `<parent>_<k>` for the k-th pragma in
    /// function `<parent>` (`<parent>` is the parent's symbol, qualified
    /// with its namespaces when its bare name is not unique in the file).
    pub id: String,
    pub directive: Directive,
    /// Index into `Program::pragmas`.
    pub pragma: usize,
    /// Index into `Program::launches`.
    pub launch: usize,
    /// Indices into `Program::functions`.
    pub parent: usize,
    pub child: usize,
    /// Other definitions of the child in other branches of an `#if` group
    /// (at most one of them is compiled); each gets its own generated code.
    pub alternatives: Vec<usize>,
    pub threshold: Option<Value>,
    pub coarsen: Option<Value>,
    /// The child's thread count (only with `threshold`).
    pub count: Option<ThreadCount>,
    /// Aggregation (`consldt(...)`).
    pub aggregation: Option<Aggregation>,
}

/// How one site's launches are aggregated.
#[derive(Debug, Clone)]
pub struct Aggregation {
    pub granularity: crate::pragma::Granularity,
    /// The child launches itself (directly or through the parent): its
    /// aggregated grids are parents of the site too.
    pub recursive: bool,
    /// `consldt(multiblock, G)`: parent blocks per group.
    pub group: Option<Value>,
    /// `buffer(default, ..., N)` with `consldt(grid)` or `consldt(multiblock)`:
    /// records in the pool.
    pub pool_records: Option<Value>,
    /// `agg_threshold(N)`: fewer launching lanes launch directly.
    pub agg_threshold: Option<Value>,
    /// Per launch argument: does it vary between parents (stored per
    /// parent) or not (passed once)?
    pub varying: Vec<bool>,
    /// `work(...)` was given: the invariant arguments are only asserted
    /// invariant, and `DPOPT_CHECK_INVARIANT` checks them at run time.
    pub asserted: bool,
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
    /// The pool's records (grid, multiblock): `buffer(default, N)` or the
    /// default, as C source.
    pub fn pool_records_source(&self) -> String {
        self.pool_records
            .as_ref()
            .map_or(DEFAULT_POOL_RECORDS.to_string(), Value::to_source)
    }

    /// Pools of a grid-granularity site: one per parent grid running at the
    /// same time (a recursive child's aggregated grids run while the grid
    /// before them owns a pool).
    pub fn pools(&self) -> usize {
        if self.recursive {
            4
        } else {
            1
        }
    }

    /// Parent blocks per group (multiblock), as C source.
    pub fn group_source(&self) -> String {
        self.group
            .as_ref()
            .map_or(DEFAULT_GROUP.to_string(), Value::to_source)
    }
}

impl Site {
    /// The child and its alternatives.
    pub fn children(&self) -> impl Iterator<Item = usize> + '_ {
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

    /// Every tuning macro the output defines for this site, with its
    /// default value as C source: what `dpopt check` and `dpopt explain`
    /// list and what the templates define.
    pub fn knobs(&self, plan: &Plan, program: &Program) -> Vec<SiteKnob> {
        let knob = |knob: Knob, owner: &str, value: String| SiteKnob {
            knob,
            name: knob.name(owner),
            value,
        };
        let mut knobs = Vec::new();
        if let Some(v) = &self.threshold {
            knobs.push(knob(Knob::Threshold, &self.id, v.to_source()));
            let recursive = plan
                .children
                .iter()
                .any(|c| c.child == self.child && c.recursive);
            if recursive {
                knobs.push(knob(
                    Knob::SerialDepth,
                    &program.functions[self.child].symbol,
                    DEFAULT_SERIAL_DEPTH.to_string(),
                ));
            }
        }
        if let Some(v) = &self.coarsen {
            knobs.push(knob(Knob::Coarsen, &self.id, v.to_source()));
        }
        if let Some(a) = &self.aggregation {
            if let Some(v) = &a.agg_threshold {
                knobs.push(knob(Knob::AggThreshold, &self.id, v.to_source()));
            }
            if matches!(a.granularity, Granularity::Grid | Granularity::MultiBlock) {
                knobs.push(knob(Knob::PoolRecords, &self.id, a.pool_records_source()));
            }
            if a.granularity == Granularity::Grid {
                knobs.push(knob(Knob::Pools, &self.id, a.pools().to_string()));
            }
            if a.granularity == Granularity::MultiBlock {
                knobs.push(knob(Knob::Group, &self.id, a.group_source()));
                knobs.push(knob(
                    Knob::PoolBlocks,
                    &self.id,
                    DEFAULT_POOL_BLOCKS.to_string(),
                ));
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

impl SiteKnob {
    /// The macro that sets it for every site.
    pub fn global(&self) -> &'static str {
        self.knob.global()
    }
}

/// What is generated for one child kernel, shared by all its sites.
#[derive(Debug, Clone)]
pub struct ChildPlan {
    /// Index into `Program::functions`.
    pub child: usize,
    /// Some site thresholds this child: a serial version is needed.
    pub serial: bool,
    /// Some site coarsens this child: a coarsened kernel is needed.
    pub coarse: bool,
    /// The child uses `__shared__` memory (a coarsened block must wait
    /// between original blocks).
    pub uses_shared: bool,
    /// The body function is part of a recursion (not force-inlined).
    pub recursive: bool,
    /// Indices into `Plan::sites`.
    pub sites: Vec<usize>,
    /// Byte offset before which declarations and macros are inserted.
    pub declare_at: usize,
    /// For a child defined in another file (a header, a child source): the
    /// line start of the input where its declarations and definitions go
    /// (in its namespace); `None` for a child of the input, whose
    /// definitions go after it.
    pub elsewhere: Option<usize>,
}

#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub sites: Vec<Site>,
    pub children: Vec<ChildPlan>,
    /// Kernels (indices into `Program::functions`) that hold a rewritten
    /// launch, directly or through the device functions they call, and
    /// declare no launch bounds of their own: they get
    /// `DPOPT_PARENT_BOUNDS` (`__launch_bounds__(1024)`), so that the
    /// generated code cannot make them unlaunchable with 1,024 threads.
    pub bounded: Vec<usize>,
    /// Device-side syncs migrated to continuations (`--migrate-sync`,
    /// `postwork.rs`).
    pub postwork: Vec<crate::postwork::SyncSite>,
}
