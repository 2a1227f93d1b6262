//! Warp exchanges in a child's split serial version (`barrier_split.rs`):
//! a warp intrinsic that reads the values of other lanes (`__shfl_down_sync`,
//! `__ballot_sync`, `__reduce_add_sync`, ...) in a statement that every
//! thread of the block reaches together. A phase of its own stores each
//! thread's argument in the block's exchange slots, and the statement, in
//! the next phase, calls a stand-in of the intrinsic that reads the slots of
//! the thread's warp (`templates/serial_split.cu.tera`, `dpopt_serial_*`):
//! the lanes are the block's threads in linear order, 32 to a warp, as the
//! hardware forms them.

use crate::source::Span;

/// A warp intrinsic that the split serial version reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarpOp {
    Shfl,
    ShflUp,
    ShflDown,
    ShflXor,
    Ballot,
    Any,
    All,
    ReduceAdd,
    ReduceMin,
    ReduceMax,
    ReduceAnd,
    ReduceOr,
    ReduceXor,
    /// `cg::reduce(tile, value, op)` over a tile's lanes.
    TileReduce,
}

const OPS: &[(WarpOp, &str, &str)] = &[
    (WarpOp::Shfl, "__shfl_sync", "shfl"),
    (WarpOp::ShflUp, "__shfl_up_sync", "shfl_up"),
    (WarpOp::ShflDown, "__shfl_down_sync", "shfl_down"),
    (WarpOp::ShflXor, "__shfl_xor_sync", "shfl_xor"),
    (WarpOp::Ballot, "__ballot_sync", "ballot"),
    (WarpOp::Any, "__any_sync", "any"),
    (WarpOp::All, "__all_sync", "all"),
    (WarpOp::ReduceAdd, "__reduce_add_sync", "reduce_add"),
    (WarpOp::ReduceMin, "__reduce_min_sync", "reduce_min"),
    (WarpOp::ReduceMax, "__reduce_max_sync", "reduce_max"),
    (WarpOp::ReduceAnd, "__reduce_and_sync", "reduce_and"),
    (WarpOp::ReduceOr, "__reduce_or_sync", "reduce_or"),
    (WarpOp::ReduceXor, "__reduce_xor_sync", "reduce_xor"),
    (WarpOp::TileReduce, "cg::reduce", "reduce"),
];

impl WarpOp {
    /// The operation of the intrinsic named `name`.
    pub fn of(name: &str) -> Option<WarpOp> {
        OPS.iter()
            .find(|(_, n, _)| *n == name)
            .map(|(op, _, _)| *op)
    }

    fn entry(self) -> &'static (WarpOp, &'static str, &'static str) {
        OPS.iter()
            .find(|(op, _, _)| *op == self)
            .expect("every operation is in OPS")
    }

    /// The operation of a cooperative-groups tile's member function named
    /// `member` (`tile.shfl_down(v, d)`, `tile.ballot(p)`): the shuffles
    /// and the votes.
    pub fn of_member(member: &str) -> Option<WarpOp> {
        OPS.iter()
            .take(7)
            .find(|(_, _, m)| *m == member)
            .map(|(op, _, _)| *op)
    }

    /// How many arguments a tile's member function takes: the value (or
    /// predicate) and, for the shuffles, the lane (or offset).
    pub fn member_arguments(self) -> usize {
        match self {
            WarpOp::Shfl | WarpOp::ShflUp | WarpOp::ShflDown | WarpOp::ShflXor => 2,
            _ => 1,
        }
    }

    /// The intrinsic's name.
    pub fn name(self) -> &'static str {
        self.entry().1
    }

    /// The stand-in's name after `dpopt_serial_`.
    pub fn stand_in(self) -> &'static str {
        self.entry().2
    }

    /// How many arguments a call takes: the mask, the value (or predicate)
    /// and, for the shuffles, the lane (or offset) and an optional width.
    pub fn arguments(self) -> std::ops::RangeInclusive<usize> {
        match self {
            WarpOp::Shfl | WarpOp::ShflUp | WarpOp::ShflDown | WarpOp::ShflXor => 3..=4,
            WarpOp::TileReduce => 3..=3,
            _ => 2..=2,
        }
    }

    /// Does the intrinsic read its second argument as a predicate (stored
    /// as `bool`), not as a value of its own type?
    pub fn predicate(self) -> bool {
        matches!(self, WarpOp::Ballot | WarpOp::Any | WarpOp::All)
    }

    /// Does the intrinsic fold its value as an integer (the reductions),
    /// stored promoted (`+value`) as the stand-in reads it?
    pub fn promote(self) -> bool {
        matches!(
            self,
            WarpOp::ReduceAdd
                | WarpOp::ReduceMin
                | WarpOp::ReduceMax
                | WarpOp::ReduceAnd
                | WarpOp::ReduceOr
                | WarpOp::ReduceXor
        )
    }
}

/// Is the warp operation `construct` (as the hazard model names it) one the
/// split may reproduce where it stands right: an exchange, `__syncwarp` or
/// a tile's `tile.sync()`?
pub fn may_split(construct: &str) -> bool {
    WarpOp::of(construct).is_some()
        || construct == "__syncwarp"
        || construct.ends_with(".sync()")
        || member(construct).is_some_and(|m| WarpOp::of_member(m).is_some())
        || ["cg::reduce(", "cooperative_groups::reduce(", "reduce("]
            .iter()
            .any(|p| construct.starts_with(p))
}

/// Is the position query `construct` (as the hazard model names it) one
/// the split may write with the builtins: a tile's `tile.thread_rank()` or
/// `tile.meta_group_rank()` (`barrier_split.rs` checks that the tile is one
/// of the block's of a constant size)?
pub fn may_split_position(construct: &str) -> bool {
    construct.ends_with("()") && member(construct).is_some_and(|m| TILE_QUERIES.contains(&m))
}

/// A tile's member functions that read positions or sizes, which the split
/// writes with the builtins.
pub const TILE_QUERIES: &[&str] = &[
    "thread_rank",
    "meta_group_rank",
    "meta_group_size",
    "size",
    "num_threads",
];

/// `m` of `object.m(...)`.
fn member(construct: &str) -> Option<&str> {
    let head = &construct[..construct.find('(')?];
    let (object, m) = head.rsplit_once('.')?;
    (!object.is_empty()
        && object.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !m.is_empty()
        && m.chars().all(|c| c.is_alphanumeric() || c == '_'))
    .then_some(m)
}

/// One warp intrinsic's call in a body the split runs (`Phased::exchanges`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    pub op: WarpOp,
    /// The intrinsic's name and its `(`, which the statement's phase writes
    /// as the stand-in's name, its slots and the thread's position.
    pub opener: Span,
    /// From the name to the call's `)`.
    pub call: Span,
    /// A tile's member function (`tile.shfl_down(v, d)`): the tile's size
    /// as the split writes it (`16u`, `(unsigned)(tile_sz)`: 1 to 32 lanes),
    /// the value the first argument.
    pub tile: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_intrinsic_has_its_stand_in_and_arity() {
        assert_eq!(WarpOp::of("__shfl_down_sync"), Some(WarpOp::ShflDown));
        assert_eq!(WarpOp::ShflDown.stand_in(), "shfl_down");
        assert_eq!(WarpOp::ShflXor.arguments(), 3..=4);
        assert_eq!(
            WarpOp::of("__ballot_sync").map(WarpOp::predicate),
            Some(true)
        );
        assert_eq!(WarpOp::ReduceAdd.arguments(), 2..=2);
        assert!(!WarpOp::ReduceMax.predicate());
        // the legacy forms without a mask, and the ones the split does not
        // reproduce, are not exchanges
        for name in [
            "__shfl_down",
            "__match_any_sync",
            "__activemask",
            "__syncwarp",
        ] {
            assert_eq!(WarpOp::of(name), None, "{name}");
        }
        for (op, name, _) in OPS {
            assert_eq!(WarpOp::of(name), Some(*op));
            assert_eq!(op.name(), *name);
        }
    }
}
