//! The tuning space of one launch site and of a whole file: granularity
//! (a build), threshold, coarsening factor and aggregation threshold (run-time
//! knobs), and how a point reaches the program (pragma clauses, macro
//! definitions, environment variables).

use serde::{Deserialize, Serialize};
use std::fmt;

/// How a site's launches are aggregated (`consldt(...)`), or the
/// launch-free floor (`floor`); `None` is neither. Each distinct value needs
/// its own build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Granularity {
    None,
    Warp,
    Block,
    /// Blocks per group (2 ... 64).
    Multiblock(u32),
    Grid,
    /// `floor`: host launches of the parent run its launch-free copy and a
    /// drain grid.
    Floor,
}

impl Granularity {
    /// The `consldt(...)` clause, `None` for no aggregation.
    pub fn clause(self) -> Option<String> {
        match self {
            Granularity::None => None,
            Granularity::Warp => Some("consldt(warp)".into()),
            Granularity::Block => Some("consldt(block)".into()),
            Granularity::Multiblock(g) => Some(format!("consldt(multiblock, {g})")),
            Granularity::Grid => Some("consldt(grid)".into()),
            Granularity::Floor => Some("floor".into()),
        }
    }

    /// A short name for tables and keys: none, warp, block, mb8, grid.
    pub fn short(self) -> String {
        match self {
            Granularity::None => "none".into(),
            Granularity::Warp => "warp".into(),
            Granularity::Block => "block".into(),
            Granularity::Multiblock(g) => format!("mb{g}"),
            Granularity::Grid => "grid".into(),
            Granularity::Floor => "floor".into(),
        }
    }

    /// The granularities a search screens (multiblock with its default
    /// group); the floor where the site accepts it.
    pub const SCREEN: [Granularity; 6] = [
        Granularity::None,
        Granularity::Warp,
        Granularity::Block,
        Granularity::Multiblock(8),
        Granularity::Grid,
        Granularity::Floor,
    ];

    /// Does it aggregate on the device (an aggregation threshold applies)?
    pub fn aggregates(self) -> bool {
        !matches!(self, Granularity::None | Granularity::Floor)
    }
}

/// Thresholds a search may try; 1 means no thresholding (every child is
/// launched).
pub const THRESHOLDS: [u32; 11] = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];
/// Coarsening factors a search may try; 1 means no coarsening.
pub const FACTORS: [u32; 5] = [1, 2, 4, 8, 16];
/// Multiblock group sizes a search may try.
pub const GROUPS: [u32; 6] = [2, 4, 8, 16, 32, 64];

/// One site's configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SiteConfig {
    pub granularity: Granularity,
    /// 1: no thresholding.
    pub threshold: u32,
    /// 1: no coarsening.
    pub coarsen: u32,
    /// Fewest lanes that aggregate; `None` leaves the generated default.
    pub agg_threshold: Option<u32>,
}

impl SiteConfig {
    pub fn new(granularity: Granularity, threshold: u32, coarsen: u32) -> Self {
        SiteConfig {
            granularity,
            threshold,
            coarsen,
            agg_threshold: None,
        }
    }

    /// The tuned clauses as written in a pragma (empty when the site is
    /// left as written: no threshold, factor 1, no aggregation).
    pub fn clauses(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.threshold > 1 {
            out.push(format!("threshold({})", self.threshold));
        }
        if self.coarsen > 1 {
            out.push(format!("coarsen({})", self.coarsen));
        }
        if let Some(c) = self.granularity.clause() {
            out.push(c);
        }
        if let (Some(a), true) = (self.agg_threshold, self.granularity.aggregates()) {
            out.push(format!("agg_threshold({a})"));
        }
        out
    }
}

impl SiteConfig {
    /// The point of a site key (`grid-t32-c8`, `mb16-t1-c1`, `floor-t128-c8`),
    /// as `Display` writes it with dashes.
    pub fn from_key(key: &str) -> Option<SiteConfig> {
        let mut parts = key.split('-');
        let granularity = match parts.next()? {
            "none" => Granularity::None,
            "warp" => Granularity::Warp,
            "block" => Granularity::Block,
            "grid" => Granularity::Grid,
            "floor" => Granularity::Floor,
            g => Granularity::Multiblock(g.strip_prefix("mb")?.parse().ok()?),
        };
        let threshold = parts.next()?.strip_prefix('t')?.parse().ok()?;
        let coarsen = parts.next()?.strip_prefix('c')?.parse().ok()?;
        let agg_threshold = match parts.next() {
            None => None,
            Some(a) => Some(a.strip_prefix('a')?.parse().ok()?),
        };
        parts.next().is_none().then_some(SiteConfig {
            granularity,
            threshold,
            coarsen,
            agg_threshold,
        })
    }
}

impl fmt::Display for SiteConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} t{} c{}",
            self.granularity.short(),
            self.threshold,
            self.coarsen
        )?;
        if let Some(a) = self.agg_threshold {
            write!(f, " a{a}")?;
        }
        Ok(())
    }
}

/// A configuration of every tuned site of the file, in site order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Point(pub Vec<SiteConfig>);

impl Point {
    /// A stable text key (state file, tables).
    pub fn key(&self) -> String {
        self.0
            .iter()
            .map(|s| s.to_string().replace(' ', "-"))
            .collect::<Vec<_>>()
            .join("/")
    }

    /// The part of the point that needs a build of its own: every site's
    /// granularity (the multiblock group is a compile-time macro too).
    pub fn build_key(&self) -> String {
        self.0
            .iter()
            .map(|s| s.granularity.short())
            .collect::<Vec<_>>()
            .join("-")
    }

    /// The run-time knobs: environment variables read by the generated
    /// `dpopt_knobs_from_env()` (values must be positive).
    pub fn env(&self, site_ids: &[String]) -> Vec<(String, String)> {
        let mut env = Vec::new();
        for (s, id) in self.0.iter().zip(site_ids) {
            env.push((format!("DPOPT_THRESHOLD_{id}"), s.threshold.to_string()));
            env.push((format!("DPOPT_COARSEN_{id}"), s.coarsen.to_string()));
            if let Some(a) = s.agg_threshold {
                env.push((format!("DPOPT_AGG_THRESHOLD_{id}"), a.to_string()));
            }
        }
        env
    }

    /// The same values as compile-time macro definitions (`-D` flags of a
    /// build without run-time knobs; the granularity needs the clause).
    pub fn defines(&self, site_ids: &[String]) -> Vec<String> {
        let mut out: Vec<String> = self
            .env(site_ids)
            .into_iter()
            .map(|(k, v)| format!("-D{k}={v}"))
            .collect();
        out.extend(self.group_defines(site_ids));
        out
    }

    /// `-DDPOPT_GROUP_<site>=G` of multiblock sites (a compile-time macro).
    pub fn group_defines(&self, site_ids: &[String]) -> Vec<String> {
        self.0
            .iter()
            .zip(site_ids)
            .filter_map(|(s, id)| match s.granularity {
                Granularity::Multiblock(g) => Some(format!("-DDPOPT_GROUP_{id}={g}")),
                _ => None,
            })
            .collect()
    }

    /// This point with site `site` replaced by `config`.
    pub fn with(&self, site: usize, config: SiteConfig) -> Point {
        let mut p = self.clone();
        p.0[site] = config;
        p
    }
}

/// The neighbours of `value` on `ladder` (one step down and up), those that exist.
pub fn neighbours(ladder: &[u32], value: u32) -> Vec<u32> {
    match ladder.iter().position(|&v| v == value) {
        Some(i) => {
            let mut out = Vec::new();
            if i + 1 < ladder.len() {
                out.push(ladder[i + 1]);
            }
            if i > 0 {
                out.push(ladder[i - 1]);
            }
            out
        }
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clauses_leave_out_neutral_values() {
        let c = SiteConfig::new(Granularity::Multiblock(16), 1, 8);
        assert_eq!(c.clauses(), ["coarsen(8)", "consldt(multiblock, 16)"]);
        let c = SiteConfig::new(Granularity::None, 256, 1);
        assert_eq!(c.clauses(), ["threshold(256)"]);
        let c = SiteConfig {
            agg_threshold: Some(4),
            ..SiteConfig::new(Granularity::Floor, 32, 8)
        };
        assert_eq!(c.clauses(), ["threshold(32)", "coarsen(8)", "floor"]);
    }

    #[test]
    fn env_and_defines_name_every_site() {
        let ids = vec!["a_1".to_string(), "b_1".to_string()];
        let p = Point(vec![
            SiteConfig::new(Granularity::Grid, 32, 4),
            SiteConfig::new(Granularity::Multiblock(4), 1, 1),
        ]);
        assert_eq!(p.build_key(), "grid-mb4");
        assert_eq!(p.key(), "grid-t32-c4/mb4-t1-c1");
        let d = p.defines(&ids);
        assert!(d.contains(&"-DDPOPT_THRESHOLD_a_1=32".to_string()));
        assert!(d.contains(&"-DDPOPT_COARSEN_b_1=1".to_string()));
        assert!(d.contains(&"-DDPOPT_GROUP_b_1=4".to_string()));
    }

    #[test]
    fn keys_read_back() {
        for c in [
            SiteConfig::new(Granularity::Grid, 32, 8),
            SiteConfig::new(Granularity::Multiblock(16), 1, 1),
            SiteConfig::new(Granularity::Floor, 128, 4),
            SiteConfig {
                agg_threshold: Some(4),
                ..SiteConfig::new(Granularity::Warp, 64, 2)
            },
        ] {
            let key = c.to_string().replace(' ', "-");
            assert_eq!(SiteConfig::from_key(&key), Some(c), "{key}");
        }
        assert_eq!(SiteConfig::from_key("grid-32-c8"), None);
        assert_eq!(SiteConfig::from_key("mesh-t1-c1"), None);
    }

    #[test]
    fn neighbours_on_the_ladder() {
        assert_eq!(neighbours(&THRESHOLDS, 128), [256, 64]);
        assert_eq!(neighbours(&THRESHOLDS, 1), [8]);
        assert_eq!(neighbours(&THRESHOLDS, 4096), [2048]);
        assert!(neighbours(&THRESHOLDS, 100).is_empty());
    }
}
