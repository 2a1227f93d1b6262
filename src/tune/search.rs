//! The search: a few program runs per site instead of a sweep.
//!
//! Per site, with the other sites held at their current best, a guided
//! screen of the configurations a prior knows (`Prior`: how the suite's
//! inputs ran under each point of the sweep's grid, `prior.csv`): the first
//! run is the point best on the suite as a whole; each next one is the
//! point the suite predicts best for this program, from the inputs whose
//! times match what has been measured so far (weighted by how well they
//! match; optimistic by their spread, so that promising uncertain points get
//! a run), the floor predicted from no aggregation at the same threshold.
//! Without a prior for the site: the threshold on a coarse ladder under grid
//! aggregation, every granularity at the best threshold, a serial probe.
//! While the best floor point comes within 30% of the site's best, the
//! next runs are the floor at threshold 1 (every child run by the block
//! that recorded it), then 32, with that point's factor: the floor's time
//! along the threshold does not follow no aggregation's, which is what the
//! prior predicts it from (on SSSP's road grid the floor at threshold 1 is
//! 17% faster than at 128). Then refinement around the best points
//! (neighbouring thresholds of the two best granularities, the coarsening
//! factor, the multiblock group, the aggregation threshold, the floor) while
//! the site's budget lasts or until a plateau. A granularity two of whose
//! points failed for the site (its build, or the program under it) is not
//! proposed again. At the end (two runs kept back, at most a quarter of the
//! budget) the contenders are measured again when there are two or more:
//! each run goes to the point, among the three best estimates within 5% of
//! the best, with the fewest samples (the better estimate first), and
//! the choice is made on the median of all their samples, so one lucky run
//! does not decide. Runs left when a lone leader has nothing close to it
//! go to the leader once more (a single lucky run is how the search misses)
//! and then to one more round of refinement per site: on SpMV with 262,144
//! rows the guided screen had used the site's share, and the floor at the
//! best threshold, 2.8x faster, was found only that way. src/tune/search_sim.rs replays the search on the suite's
//! measured surfaces with noise. The search is deterministic given the
//! measurements, which is what makes resuming work: replaying it against the
//! recorded measurements costs no runs.

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
    /// The child is the kernel itself: the floor runs every level of the
    /// recursion without a launch, which no point of the prior (measured
    /// with launches) predicts.
    pub recursive: bool,
}

impl Default for SiteFacts {
    fn default() -> Self {
        SiteFacts {
            tune: true,
            granularities: Granularity::SCREEN.to_vec(),
            agg_knob: false,
            recursive: false,
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

/// How the suite's inputs ran under the points of the sweep's grid: per
/// input, ln(time / its best time) at each configuration (`None`: not
/// measured). `prior.csv`, written by bench/tune_prior.py from the
/// committed sweep.
#[derive(Clone, Debug, Default)]
pub struct Prior {
    pub configs: Vec<SiteConfig>,
    pub rows: Vec<(String, Vec<Option<f64>>)>,
}

impl Prior {
    /// The suite's prior, compiled in.
    pub fn suite() -> Prior {
        Prior::parse(include_str!("prior.csv")).expect("the built-in prior parses")
    }

    /// A prior from its CSV text (`input,<point key>...` then one row per
    /// input).
    pub fn parse(text: &str) -> Result<Prior, String> {
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let header = lines.next().ok_or("an empty prior")?;
        let configs = header
            .split(',')
            .skip(1)
            .map(|k| SiteConfig::from_key(k).ok_or(format!("`{k}` is not a point")))
            .collect::<Result<Vec<_>, _>>()?;
        let mut rows = Vec::new();
        for line in lines {
            let mut cells = line.split(',');
            let name = cells.next().unwrap_or_default().to_string();
            let values = cells
                .map(|c| match c.trim() {
                    "" => Ok(None),
                    v => v
                        .parse::<f64>()
                        .map(Some)
                        .map_err(|e| format!("{name}: {e}")),
                })
                .collect::<Result<Vec<_>, _>>()?;
            if values.len() != configs.len() {
                return Err(format!(
                    "{name}: {} values for {} points",
                    values.len(),
                    configs.len()
                ));
            }
            rows.push((name, values));
        }
        Ok(Prior { configs, rows })
    }

    /// The prior without the rows of `input` (a replay of the suite must not
    /// know the input it tunes).
    pub fn without(&self, input: &str) -> Prior {
        Prior {
            configs: self.configs.clone(),
            rows: self
                .rows
                .iter()
                .filter(|(n, _)| n != input)
                .cloned()
                .collect(),
        }
    }
}

/// Runs of the guided screen at most, per site; a larger budget goes to
/// refinement (points off the prior's grid).
const GUIDED_RUNS: usize = 10;
/// How much a better match counts, in ln(time) (the width of the weights).
const MATCH_WIDTH: f64 = 0.05;
/// How optimistic a prediction is: minus this many standard deviations of
/// the matched inputs' times.
const OPTIMISM: f64 = 0.5;
/// The floor at a threshold and factor is predicted from no aggregation at
/// the same ones, this much faster (ln): it runs the same serial work
/// without the fixed cost of a kernel that can launch.
const FLOOR_GAIN: f64 = 0.1;

/// The coarse threshold ladder the first phases use.
const COARSE: [u32; 5] = [1, 32, 128, 512, 2048];
/// Factor of the screening phases: coarsening rarely hurts and often helps.
const SCREEN_FACTOR: u32 = 8;
/// The serial probe is made when no aggregation at the screened threshold
/// came within this factor of the best.
const SERIAL_PROBE_LIMIT: f64 = 1.3;
/// Runs kept back for the final re-measurements (at most a quarter of the
/// budget).
const CONFIRM: usize = 2;
/// The confirm phase measures again the points within this factor of the
/// best estimate (the contenders), the least measured first.
const CONTEND: f64 = 1.05;
/// The floor's low thresholds, probed in turn once a floor point is within
/// `FLOOR_CLOSE` of the best (with the best floor point's factor): 1, every
/// child run by the block that recorded it, and 32.
const FLOOR_PROBES: [u32; 1] = [1];
/// The guided screen stops proposing a granularity after this many of its
/// points failed for the site (a build that fails, or a program that gives
/// wrong results or hangs under it, fails at most thresholds).
const GIVE_UP: usize = 2;
/// A floor point this close to the site's best (a factor) gets the floor's
/// probes: three standard deviations of the road grids' run-to-run spread
/// (10%), so that one slow sample does not hide the floor there (on the
/// H100 a search of SSSP's road grid measured the floor at threshold 512 at
/// 37.4 ms once, 29.1 in another pass, and ended 1.29x slower than the
/// floor at threshold 1; the replay at 10% noise: 76 of 80 on the floor at
/// 1.3, 68 at 1.1).
const FLOOR_CLOSE: f64 = 1.3;

struct Searcher<'a, E: Evaluate> {
    eval: &'a mut E,
    prior: &'a Prior,
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

    /// The points of the prior's grid the site may take, each with the
    /// prior's column that predicts it and the gain credited to it (the
    /// floor, predicted from no aggregation at the same threshold and
    /// factor).
    fn guided_candidates(&self, facts: &SiteFacts) -> Vec<(SiteConfig, usize, f64)> {
        let mut out = Vec::new();
        for (k, c) in self.prior.configs.iter().enumerate() {
            if facts.granularities.contains(&c.granularity) {
                out.push((*c, k, 0.0));
            }
            if c.granularity == Granularity::None
                && c.threshold > 1
                && facts.granularities.contains(&Granularity::Floor)
            {
                let floor = SiteConfig {
                    granularity: Granularity::Floor,
                    ..*c
                };
                out.push((floor, k, FLOOR_GAIN));
            }
        }
        out
    }

    /// The guided screen: each run at the candidate the prior predicts best
    /// for this program from what was measured so far. `None` when the
    /// whole budget of the site is spent.
    fn guided(&mut self, base: &Point, site: usize, facts: &SiteFacts) -> Option<()> {
        let candidates = self.guided_candidates(facts);
        let rows = &self.prior.rows;
        let end = self.runs() + GUIDED_RUNS;
        // Before any measurement: the best point of the suite as a whole.
        let overall = |k: usize| {
            let v: Vec<f64> = rows.iter().filter_map(|(_, r)| r[k]).collect();
            if v.is_empty() {
                f64::INFINITY
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        loop {
            let log_estimate = |c: SiteConfig| {
                self.estimate(&base.with(site, c))
                    .map(|v| v.max(f64::MIN_POSITIVE).ln())
            };
            // The prior's points measured (the floor is not one of them).
            let measured: Vec<(usize, f64)> = candidates
                .iter()
                .filter(|&&(_, _, gain)| gain == 0.0)
                .filter_map(|&(c, k, _)| log_estimate(c).map(|v| (k, v)))
                .collect();
            // Each input's offset (its times are ours up to a factor) and how
            // well its times match ours; weights relative to the best match.
            let fits: Vec<(f64, f64, &Vec<Option<f64>>)> = rows
                .iter()
                .filter_map(|(_, r)| {
                    let pairs: Vec<(f64, f64)> = measured
                        .iter()
                        .filter_map(|&(k, e)| r[k].map(|l| (e, l)))
                        .collect();
                    if pairs.is_empty() {
                        return None;
                    }
                    let n = pairs.len() as f64;
                    let offset = pairs.iter().map(|(e, l)| e - l).sum::<f64>() / n;
                    let misfit = pairs
                        .iter()
                        .map(|(e, l)| (e - l - offset).powi(2))
                        .sum::<f64>()
                        / n;
                    Some((offset, misfit, r))
                })
                .collect();
            let least = fits.iter().map(|f| f.1).fold(f64::INFINITY, f64::min);
            let weighted: Vec<(f64, f64, &Vec<Option<f64>>)> = fits
                .iter()
                .map(|&(offset, misfit, r)| {
                    let w = (-(misfit - least) / (2.0 * MATCH_WIDTH * MATCH_WIDTH)).exp();
                    (offset, w, r)
                })
                .collect();
            let score = |k: usize, gain: f64| -> f64 {
                if weighted.is_empty() {
                    return overall(k) - gain;
                }
                let (mut sw, mut sum) = (0.0, 0.0);
                for &(offset, w, r) in &weighted {
                    if let Some(l) = r[k] {
                        sw += w;
                        sum += w * (offset + l);
                    }
                }
                if sw == 0.0 {
                    return f64::INFINITY;
                }
                let mean = sum / sw;
                let var = weighted
                    .iter()
                    .filter_map(|&(offset, w, r)| r[k].map(|l| w * (offset + l - mean).powi(2)))
                    .sum::<f64>()
                    / sw;
                mean - gain - OPTIMISM * var.sqrt()
            };
            // The floor's gain over no aggregation: assumed until a floor
            // point is measured, then what the measured ones gained over no
            // aggregation at the same threshold and factor (measured, or
            // predicted).
            let gains: Vec<f64> = candidates
                .iter()
                .filter(|&&(_, _, gain)| gain > 0.0)
                .filter_map(|&(c, k, _)| {
                    let floor = log_estimate(c)?;
                    let none = SiteConfig {
                        granularity: Granularity::None,
                        ..c
                    };
                    let none = log_estimate(none).unwrap_or_else(|| score(k, 0.0));
                    none.is_finite().then_some(none - floor)
                })
                .collect();
            let floor_gain = if gains.is_empty() {
                FLOOR_GAIN
            } else {
                gains.iter().sum::<f64>() / gains.len() as f64
            };
            let next = candidates
                .iter()
                .filter(|&&(c, _, _)| {
                    let p = base.with(site, c);
                    !self.samples.contains_key(&p)
                        && !self.failed.contains_key(&p)
                        && self.failures_of(base, site, c.granularity) < GIVE_UP
                })
                .map(|&(c, k, gain)| (c, score(k, if gain > 0.0 { floor_gain } else { 0.0 })))
                .filter(|(_, v)| v.is_finite())
                .min_by(|a, b| a.1.total_cmp(&b.1));
            // The floor's time along the threshold does not follow no
            // aggregation's (the copy runs small children inline, one
            // launch-free pass): once one floor threshold is measured and
            // comes close to the best, the floor at a low threshold next.
            // A recursion: the floor with every child recorded, right after
            // the first point (on the trees it ran 1.6-6x faster than the
            // best aggregation).
            let recursive_floor = SiteConfig {
                granularity: Granularity::Floor,
                threshold: 1,
                coarsen: 1,
                agg_threshold: None,
            };
            let recursive_floor = (facts.recursive
                && facts.granularities.contains(&Granularity::Floor)
                && self.best_for_site_where(base, site, |_| true).is_some()
                && !self
                    .samples
                    .keys()
                    .chain(self.failed.keys())
                    .any(|p| p.0[site].granularity == Granularity::Floor))
            .then_some(recursive_floor);
            let next = recursive_floor
                .or_else(|| self.floor_probe(base, site, &candidates))
                .or(next.map(|x| x.0));
            let Some(c) = next else {
                return Some(());
            };
            if self.runs() >= end {
                return Some(());
            }
            self.phase = "guided";
            if let Tried::Exhausted = self.try_point(&base.with(site, c)) {
                return None;
            }
        }
    }

    /// The site's points of granularity `g` that failed (build, run, time
    /// limit or check), the other sites as in `base`.
    fn failures_of(&self, base: &Point, site: usize, g: Granularity) -> usize {
        self.failed
            .keys()
            .filter(|p| {
                p.0[site].granularity == g
                    && p.0
                        .iter()
                        .zip(&base.0)
                        .enumerate()
                        .all(|(k, (a, b))| k == site || a == b)
            })
            .count()
    }

    /// The floor at the first of `FLOOR_PROBES` not yet measured, with the
    /// best floor point's factor, while the best floor point is within
    /// `FLOOR_CLOSE` of the site's best.
    fn floor_probe(
        &self,
        base: &Point,
        site: usize,
        candidates: &[(SiteConfig, usize, f64)],
    ) -> Option<SiteConfig> {
        let floors: Vec<(SiteConfig, f64)> = candidates
            .iter()
            .filter(|c| c.0.granularity == Granularity::Floor)
            .filter_map(|&(c, _, _)| Some((c, self.estimate(&base.with(site, c))?)))
            .collect();
        let (floor_config, floor) = floors.iter().copied().min_by(|a, b| a.1.total_cmp(&b.1))?;
        let (_, best) = self.best_for_site_where(base, site, |_| true)?;
        if floor > FLOOR_CLOSE * best {
            return None;
        }
        FLOOR_PROBES
            .iter()
            .map(|&threshold| SiteConfig {
                threshold,
                ..floor_config
            })
            .find(|&c| {
                let p = base.with(site, c);
                !self.samples.contains_key(&p) && !self.failed.contains_key(&p)
            })
    }

    /// Tune one site; false when the whole budget is spent.
    fn tune_site(&mut self, base: &Point, site: usize, facts: &SiteFacts) -> Point {
        let at = |c: SiteConfig| base.with(site, c);
        let grans = &facts.granularities;
        self.site_best = f64::INFINITY;
        self.stale = 0;
        if !self.guided_candidates(facts).is_empty() && !self.prior.rows.is_empty() {
            if self.guided(base, site, facts).is_none() {
                return self.best_for_site(base, site).map_or(base.clone(), |b| b.0);
            }
            return self.refine(base, site, facts);
        }
        let anchor = if grans.contains(&Granularity::Grid) {
            Granularity::Grid
        } else {
            grans[0]
        };
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
        // 3. The serial probe: launching least, with neither aggregation nor
        // coarsening code. Only where no aggregation came close in the
        // screen: where it is far behind (the trees, whose subtrees run
        // serially; many large children) launching least cannot win.
        self.phase = "serial";
        let unaggregated = self
            .estimate(&at(SiteConfig::new(Granularity::None, t0, SCREEN_FACTOR)))
            .unwrap_or(f64::INFINITY);
        let promising = unaggregated <= SERIAL_PROBE_LIMIT * self.site_best;
        if grans.contains(&Granularity::None) && promising {
            let _ = self.try_point(&at(SiteConfig::new(Granularity::None, 512, 1)));
        }
        self.refine(base, site, facts)
    }

    /// Refinement, most promising first, until the site's budget or a
    /// plateau.
    fn refine(&mut self, base: &Point, site: usize, facts: &SiteFacts) -> Point {
        let at = |c: SiteConfig| base.with(site, c);
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
        // The floor at the best point where the site takes it (no prior
        // data predicts it), then the coarsening factor at the best point:
        // none first (it changes the most), then neighbouring thresholds,
        // then neighbouring factors.
        if facts.granularities.contains(&Granularity::Floor)
            && best.granularity != Granularity::Floor
        {
            out.push((
                "floor",
                SiteConfig {
                    granularity: Granularity::Floor,
                    agg_threshold: None,
                    ..best
                },
            ));
        }
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
    prior: &Prior,
    eval: &mut impl Evaluate,
) -> Outcome {
    let mut s = Searcher {
        eval,
        prior,
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
    let reserve = CONFIRM.min(limits.runs / 4);
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
    // Confirm: each run on the contender (within CONTEND of the best
    // estimate, at most three) with the fewest samples, the better estimate
    // first; the choice is made on the medians of all samples. Runs left
    // over when no point is close to a lone leader: the leader measured a
    // second time (one lucky run must not decide), then one more round of
    // refinement per site (the floor at the best point, neighbouring
    // thresholds and factors, which the guided screen may have used the
    // site's share before reaching), then confirm again.
    let mut explored = false;
    while s.runs() < limits.runs {
        s.site = None;
        s.phase = "confirm";
        s.site_end = limits.runs;
        let mut ranked: Vec<(Point, f64, usize)> = s
            .samples
            .iter()
            .map(|(p, v)| (p.clone(), median(v), v.len()))
            .collect();
        ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
        let Some((leader, lead, leader_samples)) = ranked.first().cloned() else {
            break;
        };
        let close: Vec<&(Point, f64, usize)> = ranked
            .iter()
            .take(3)
            .filter(|r| r.1 <= lead * CONTEND)
            .collect();
        if close.len() > 1 {
            let next = close.iter().min_by_key(|r| r.2).map(|r| r.0.clone());
            if let Some(p) = next {
                let _ = s.measure(&p);
            }
        } else if leader_samples < 2 {
            let _ = s.measure(&leader);
        } else if !explored {
            explored = true;
            for &site in &tuned {
                if s.runs() >= limits.runs {
                    break;
                }
                let base = s.best_overall().map_or(current.clone(), |b| b.0);
                s.site = Some(site);
                s.site_end = limits.runs;
                current = s.refine(&base, site, &facts[site]);
            }
        } else {
            break;
        }
        if s.runs() >= limits.runs {
            stopped = "budget";
        }
    }
    let best = s.best_overall();
    Outcome {
        best,
        trials: s.trials,
        stopped,
    }
}
