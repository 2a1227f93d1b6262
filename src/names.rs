//! Every name dpopt gives to what it generates: the functions and kernels of
//! a child, the per-site functions, and the tuning macros (knobs) of a site.
//! The transform, `dpopt check` and `dpopt explain` all take names from
//! here, so the knobs the commands list are the knobs the output defines.

use serde::Serialize;

/// The child's body as a device function (builtins as parameters).
pub fn body(child: &str) -> String {
    format!("dpopt_body_{child}")
}

/// The child's serial version (threshold).
pub fn serial(child: &str) -> String {
    format!("dpopt_serial_{child}")
}

/// The child's coarsened kernel (coarsen).
pub fn coarse(child: &str) -> String {
    format!("dpopt_coarse_{child}")
}

/// The function that queues a deferred launch of the child.
pub fn defer(child: &str) -> String {
    format!("dpopt_defer_{child}")
}

/// The aggregated launch of a site.
pub fn launcher(site: &str) -> String {
    format!("dpopt_launch_{site}")
}

/// The macro that selects a site's stream.
pub fn site_stream(site: &str) -> String {
    format!("DPOPT_SITE_STREAM_{site}")
}

/// The site's statistics counters (`-DDPOPT_STATS`), as a pointer.
pub fn stats_of(site: &str) -> String {
    format!("DPOPT_STATS_OF_{site}")
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
    fn counters_are_numbered_in_order() {
        for (i, c) in Counter::ALL.iter().enumerate() {
            assert_eq!(c.describe().index, i);
        }
        assert_eq!(Counter::Deferred.describe().name, "DPOPT_STAT_DEFERRED");
    }
}
