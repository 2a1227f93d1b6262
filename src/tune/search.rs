//! The search: a few program runs per site instead of a sweep.
//!
//! Per site, with the other sites held at their current best: the
//! threshold on a coarse ladder under grid aggregation (the granularity
//! that is best or close to it on most of the suite), then every
//! granularity at the best threshold, then a serial probe (no aggregation,
//! a high threshold: the code that launches least), then refinement around
//! the best points (neighbouring thresholds of the two best granularities,
//! the coarsening factor, the multiblock group, the aggregation threshold)
//! until the budget is spent or a plateau is reached. At the end the best
//! points are measured again and the choice is made on the median of all
//! their samples, so one lucky run does not decide. The search is
//! deterministic given the measurements, which is what makes resuming work:
//! replaying it against the recorded measurements costs no runs.

use super::space::{neighbours, Granularity, Point, SiteConfig, FACTORS, GROUPS, THRESHOLDS};
use std::collections::BTreeMap;

/// Measures one point: the `sample`-th measurement of it (0 for the first).
/// `Err` excludes the point (a build or run failed, timed out or gave a
/// wrong result), with the reason.
pub trait Evaluate {
    fn evaluate(&mut self, point: &Point, sample: u32) -> Result<f64, String>;
}

impl<F: FnMut(&Point, u32) -> Result<f64, String>> Evaluate for F {
    fn evaluate(&mut self, point: &Point, sample: u32) -> Result<f64, String> {
        self(point, sample)
    }
}

/// What is known about a site before the search (from a stats build).
#[derive(Clone, Debug)]
pub struct SiteFacts {
    /// Tune it at all (false: the site made no launch request).
    pub tune: bool,
    /// Granularities worth trying (aggregation is dropped when the site
    /// makes too few launches to merge).
    pub granularities: Vec<Granularity>,
    /// The site has an aggregation-threshold knob.
    pub agg_knob: bool,
}

impl Default for SiteFacts {
    fn default() -> Self {
        SiteFacts {
            tune: true,
            granularities: Granularity::SCREEN.to_vec(),
            agg_knob: false,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Program runs in all (the search's budget).
    pub runs: usize,
    /// Stop refining a site after this many runs in a row that improved its
    /// best by less than 1%.
    pub plateau: usize,
}

/// One measurement made (or replayed) by the search.
#[derive(Clone, Debug)]
pub struct Trial {
    pub point: Point,
    pub sample: u32,
    pub value: Result<f64, String>,
    /// The phase that asked for it: threshold, granularity, serial,
    /// refine, coarsen, group, agg, confirm.
    pub phase: &'static str,
    /// The site being tuned (`None` while confirming).
    pub site: Option<usize>,
}

#[derive(Clone, Debug)]
pub struct Outcome {
    /// The chosen point and its estimate (median of its samples); `None`
    /// when every measured point failed.
    pub best: Option<(Point, f64)>,
    pub trials: Vec<Trial>,
    /// Why the search stopped: "done", "budget", or "plateau".
    pub stopped: &'static str,
}

impl Outcome {
    pub fn runs(&self) -> usize {
        self.trials.len()
    }

    /// Every measured point with its estimate (failed ones with the reason).
    pub fn estimates(&self) -> BTreeMap<Point, Result<f64, String>> {
        let mut samples: BTreeMap<Point, Result<Vec<f64>, String>> = BTreeMap::new();
        for t in &self.trials {
            let e = samples.entry(t.point.clone()).or_insert(Ok(Vec::new()));
            match (&t.value, e.as_mut()) {
                (Ok(v), Ok(list)) => list.push(*v),
                (Err(why), _) => *e = Err(why.clone()),
                (Ok(_), Err(_)) => {}
            }
        }
        samples
            .into_iter()
            .map(|(p, s)| (p, s.map(|v| median(&v))))
            .collect()
    }
}

/// The median (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The coarse threshold ladder the first phases use.
const COARSE: [u32; 5] = [1, 32, 128, 512, 2048];
/// Factor of the screening phases: coarsening rarely hurts and often helps.
const SCREEN_FACTOR: u32 = 8;
/// Runs kept back for the final re-measurements.
const CONFIRM: usize = 2;

struct Searcher<'a, E: Evaluate> {
    eval: &'a mut E,
    limits: Limits,
    trials: Vec<Trial>,
    samples: BTreeMap<Point, Vec<f64>>,
    failed: BTreeMap<Point, String>,
    /// The last run this site may use (exclusive).
    site_end: usize,
    site: Option<usize>,
    phase: &'static str,
    /// Runs since the site's best last improved by 1% or more.
    stale: usize,
    site_best: f64,
}

enum Tried {
    Value,
    Failed,
    /// No run left (for the site, or in all).
    Exhausted,
}

impl<'a, E: Evaluate> Searcher<'a, E> {
    fn runs(&self) -> usize {
        self.trials.len()
    }

    fn estimate(&self, p: &Point) -> Option<f64> {
        self.samples.get(p).map(|s| median(s))
    }

    fn measure(&mut self, p: &Point) -> Result<f64, String> {
        let sample = self.samples.get(p).map_or(0, Vec::len) as u32;
        let value = self.eval.evaluate(p, sample);
        // A measurement that is not a finite, non-negative number is a failure.
        let value = value.and_then(|v| {
            if v.is_finite() && v >= 0.0 {
                Ok(v)
            } else {
                Err(format!("measured {v}"))
            }
        });
        self.trials.push(Trial {
            point: p.clone(),
            sample,
            value: value.clone(),
            phase: self.phase,
            site: self.site,
        });
        match &value {
            Ok(v) => self.samples.entry(p.clone()).or_default().push(*v),
            Err(why) => {
                self.samples.remove(p);
                self.failed.insert(p.clone(), why.clone());
            }
        }
        value
    }

    /// The point's estimate, measuring it once if it has none yet.
    fn try_point(&mut self, p: &Point) -> Tried {
        if self.failed.contains_key(p) {
            return Tried::Failed;
        }
        if self.estimate(p).is_some() {
            return Tried::Value;
        }
        if self.runs() >= self.site_end.min(self.limits.runs) {
            return Tried::Exhausted;
        }
        match self.measure(p) {
            Ok(v) => {
                if v < self.site_best * 0.99 {
                    self.stale = 0;
                } else {
                    self.stale += 1;
                }
                self.site_best = self.site_best.min(v);
                Tried::Value
            }
            Err(_) => {
                self.stale += 1;
                Tried::Failed
            }
        }
    }

    /// The best measured point that differs from `base` at most in `site`.
    fn best_for_site(&self, base: &Point, site: usize) -> Option<(Point, f64)> {
        self.samples
            .iter()
            .filter(|(p, _)| {
                p.0.iter()
                    .zip(&base.0)
                    .enumerate()
                    .all(|(k, (a, b))| k == site || a == b)
            })
            .map(|(p, s)| (p.clone(), median(s)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    fn best_overall(&self) -> Option<(Point, f64)> {
        self.samples
            .iter()
            .map(|(p, s)| (p.clone(), median(s)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The best threshold measured for `site` under `granularity`.
    fn best_threshold(
        &self,
        base: &Point,
        site: usize,
        g: Granularity,
    ) -> Option<(SiteConfig, f64)> {
        self.best_for_site_where(base, site, |c| c.granularity == g)
    }

    fn best_for_site_where(
        &self,
        base: &Point,
        site: usize,
        keep: impl Fn(&SiteConfig) -> bool,
    ) -> Option<(SiteConfig, f64)> {
        self.samples
            .iter()
            .filter(|(p, _)| {
                keep(&p.0[site])
                    && p.0
                        .iter()
                        .zip(&base.0)
                        .enumerate()
                        .all(|(k, (a, b))| k == site || a == b)
            })
            .map(|(p, s)| (p.0[site], median(s)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    fn plateau(&self) -> bool {
        self.stale >= self.limits.plateau
    }

    /// Tune one site; false when the whole budget is spent.
    fn tune_site(&mut self, base: &Point, site: usize, facts: &SiteFacts) -> Point {
        let at = |c: SiteConfig| base.with(site, c);
        let grans = &facts.granularities;
        let anchor = if grans.contains(&Granularity::Grid) {
            Granularity::Grid
        } else {
            grans[0]
        };
        self.site_best = f64::INFINITY;
        self.stale = 0;
        // 1. Threshold under the anchor granularity.
        self.phase = "threshold";
        // 32 and 128, then a step further in the direction that is better:
        // 512 when 128 wins, no threshold at all when 32 does.
        let mut scan = vec![32, 128];
        let mut k = 0;
        while k < scan.len() {
            let t = scan[k];
            k += 1;
            match self.try_point(&at(SiteConfig::new(anchor, t, SCREEN_FACTOR))) {
                Tried::Exhausted => {
                    return self.best_for_site(base, site).map_or(base.clone(), |b| b.0)
                }
                _ if scan.len() == 2 && k == 2 => {
                    let v = |t| {
                        self.estimate(&at(SiteConfig::new(anchor, t, SCREEN_FACTOR)))
                            .unwrap_or(f64::INFINITY)
                    };
                    scan.push(if v(128) < v(32) { 512 } else { 1 });
                }
                _ => {}
            }
        }
        let t0 = self
            .best_threshold(base, site, anchor)
            .map_or(32, |(c, _)| c.threshold);
        // 2. Every granularity at that threshold.
        self.phase = "granularity";
        for &g in grans.iter().filter(|&&g| g != anchor) {
            if let Tried::Exhausted = self.try_point(&at(SiteConfig::new(g, t0, SCREEN_FACTOR))) {
                return self.best_for_site(base, site).map_or(base.clone(), |b| b.0);
            }
        }
        // 3. The serial probe: launching least, no aggregation code at all.
        self.phase = "serial";
        // (Above 512 the granularity screen has measured it already.)
        if grans.contains(&Granularity::None) && t0 < 512 {
            let _ = self.try_point(&at(SiteConfig::new(Granularity::None, 512, SCREEN_FACTOR)));
        }
        // 4. Refinement, most promising first, until the budget or a plateau.
        self.stale = 0;
        let mut queue_round = 0;
        loop {
            let candidates = self.refinements(base, site, facts, queue_round);
            if candidates.is_empty() {
                break;
            }
            let mut any = false;
            for (phase, c) in candidates {
                if self.plateau() {
                    self.phase = "plateau";
                    return self.best_for_site(base, site).map_or(base.clone(), |b| b.0);
                }
                let p = at(c);
                if self.samples.contains_key(&p) || self.failed.contains_key(&p) {
                    continue;
                }
                self.phase = phase;
                match self.try_point(&p) {
                    Tried::Exhausted => {
                        return self.best_for_site(base, site).map_or(base.clone(), |b| b.0)
                    }
                    _ => any = true,
                }
                // Re-plan after every run: the best may have moved.
                break;
            }
            if !any {
                queue_round += 1;
                if queue_round > 2 {
                    break;
                }
            }
        }
        self.best_for_site(base, site).map_or(base.clone(), |b| b.0)
    }

    /// The next points worth a run for `site`, best first.
    fn refinements(
        &self,
        base: &Point,
        site: usize,
        facts: &SiteFacts,
        round: usize,
    ) -> Vec<(&'static str, SiteConfig)> {
        let mut out = Vec::new();
        let Some((best, _)) = self.best_for_site_where(base, site, |_| true) else {
            return out;
        };
        // The two best granularities, each with its best configuration.
        let mut per_gran: Vec<(SiteConfig, f64)> = facts
            .granularities
            .iter()
            .chain([best.granularity].iter())
            .filter_map(|&g| self.best_threshold(base, site, g))
            .collect();
        per_gran.sort_by(|a, b| a.1.total_cmp(&b.1));
        per_gran.dedup_by_key(|x| x.0.granularity);
        let top: Vec<SiteConfig> = per_gran.iter().take(2).map(|x| x.0).collect();
        // The coarsening factor at the best point: none first (it changes
        // the most), then neighbouring thresholds, then neighbouring factors.
        out.push(("coarsen", SiteConfig { coarsen: 1, ..best }));
        let ladder: &[u32] = if round == 0 { &COARSE } else { &THRESHOLDS };
        // Per granularity: past a measured neighbour (the scan's direction
        // goes on), else downwards first (aggregation pays for merging small
        // children, so it tends to prefer lower thresholds).
        for c in &top {
            let measured = |t: u32| {
                let p = base.with(site, SiteConfig { threshold: t, ..*c });
                self.samples.contains_key(&p) || self.failed.contains_key(&p)
            };
            let mut ts = neighbours(ladder, nearest(ladder, c.threshold));
            ts.reverse();
            if ts.len() == 2 && measured(ts[0]) {
                ts.swap(0, 1);
            }
            for t in ts {
                out.push(("refine", SiteConfig { threshold: t, ..*c }));
            }
        }
        for f in neighbours(&FACTORS, best.coarsen) {
            out.push(("coarsen", SiteConfig { coarsen: f, ..best }));
        }
        if let Granularity::Multiblock(g) = best.granularity {
            for n in neighbours(&GROUPS, g).into_iter().chain([2, 32]) {
                out.push((
                    "group",
                    SiteConfig {
                        granularity: Granularity::Multiblock(n),
                        ..best
                    },
                ));
            }
        }
        if facts.agg_knob && best.granularity.aggregates() {
            for a in [4, 16] {
                out.push((
                    "agg",
                    SiteConfig {
                        agg_threshold: Some(a),
                        ..best
                    },
                ));
            }
        }
        if round >= 1 {
            for t in neighbours(&THRESHOLDS, best.threshold) {
                out.push((
                    "refine",
                    SiteConfig {
                        threshold: t,
                        ..best
                    },
                ));
            }
        }
        out
    }
}

/// The ladder's value closest to `v` (in ratio).
fn nearest(ladder: &[u32], v: u32) -> u32 {
    *ladder
        .iter()
        .min_by(|a, b| {
            let d = |x: u32| (f64::from(x).ln() - f64::from(v.max(1)).ln()).abs();
            d(**a).total_cmp(&d(**b))
        })
        .unwrap_or(&v)
}

/// Search from `start` (one configuration per site). `facts` has one entry
/// per site. Sites are tuned one after another, each with an equal share of
/// what is left of the budget, then the best points are measured again.
pub fn search(
    start: &Point,
    facts: &[SiteFacts],
    limits: Limits,
    eval: &mut impl Evaluate,
) -> Outcome {
    let mut s = Searcher {
        eval,
        limits,
        trials: Vec::new(),
        samples: BTreeMap::new(),
        failed: BTreeMap::new(),
        site_end: 0,
        site: None,
        phase: "start",
        stale: 0,
        site_best: f64::INFINITY,
    };
    let tuned: Vec<usize> = (0..start.0.len()).filter(|&k| facts[k].tune).collect();
    let mut current = start.clone();
    let reserve = CONFIRM.min(limits.runs / 6);
    let mut stopped = "done";
    for (n, &site) in tuned.iter().enumerate() {
        let left = limits.runs.saturating_sub(reserve + s.runs());
        let share = left / (tuned.len() - n);
        s.site_end = s.runs() + share;
        s.site = Some(site);
        current = s.tune_site(&current, site, &facts[site]);
        if s.phase == "plateau" {
            stopped = "plateau";
        }
        if s.runs() >= limits.runs {
            stopped = "budget";
        }
    }
    // Confirm: measure the best two points again; choose on all samples.
    s.site = None;
    s.phase = "confirm";
    s.site_end = limits.runs;
    let mut ranked: Vec<(Point, f64)> = s
        .samples
        .iter()
        .map(|(p, v)| (p.clone(), median(v)))
        .collect();
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
    for (p, _) in ranked.iter().take(2) {
        if s.runs() >= limits.runs {
            stopped = "budget";
            break;
        }
        let _ = s.measure(p);
    }
    let best = s.best_overall();
    Outcome {
        best,
        trials: s.trials,
        stopped,
    }
}
