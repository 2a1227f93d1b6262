//! The search on simulated cost functions: surfaces shaped like the
//! committed sweep (bench/results/2026-11-24-h100-suite.csv: 28 inputs,
//! threshold {1, 32, 128, 512} x factor {1, 8} x five granularities), with
//! multiplicative noise. No GPU.

use dpopt::tune::search::{search, Limits, Prior, SiteFacts};
use dpopt::tune::space::{Granularity, Point, SiteConfig};
use std::collections::BTreeMap;

const SWEEP: &str = include_str!("../bench/results/2026-11-24-h100-suite.csv");

/// (benchmark, input) -> (granularity, threshold, factor) -> ms.
type Surface = BTreeMap<(String, u32, u32), f64>;

fn surfaces() -> BTreeMap<(String, String), Surface> {
    let mut out: BTreeMap<(String, String), Surface> = BTreeMap::new();
    for line in SWEEP.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (bench, input, variant, config, imp, ms, ok) =
            (f[0], f[1], f[2], f[3], f[4], f[5], f[7]);
        if imp != "cdp" || ok != "yes" || variant == "orig" || variant == "CDPff" {
            continue;
        }
        let g = match variant.trim_start_matches(['T', 'C']) {
            "" => "none",
            "A" => "warp",
            "Ab" => "block",
            "Am" => "mb",
            "Ag" => "grid",
            other => panic!("variant {other}"),
        };
        let cfg = config.trim_start_matches('t');
        let (t, rest) = cfg.split_once('c').unwrap();
        let c = rest.trim_end_matches("g8");
        out.entry((bench.into(), input.into())).or_default().insert(
            (g.into(), t.parse().unwrap(), c.parse().unwrap()),
            ms.parse().unwrap(),
        );
    }
    out
}

fn gname(g: Granularity) -> &'static str {
    match g {
        Granularity::None => "none",
        Granularity::Warp => "warp",
        Granularity::Block => "block",
        Granularity::Multiblock(_) => "mb",
        Granularity::Grid => "grid",
        Granularity::Floor => "floor",
    }
}

/// The surface at any point of the tuner's space: log-linear between the
/// sweep's thresholds and factors, flat (with a small penalty) beyond them;
/// a multiblock group other than 8 costs 3%. No thresholding without
/// aggregation is not in the sweep (the original program's launches): five
/// times no aggregation at threshold 32.
fn cost(s: &Surface, c: &SiteConfig) -> f64 {
    let g = gname(c.granularity);
    let at = |t: u32, f: u32| -> f64 {
        match s.get(&(g.to_string(), t, f)) {
            Some(v) => *v,
            None => 5.0 * s[&(g.to_string(), 32, f)],
        }
    };
    let ts = [1u32, 32, 128, 512];
    let along_t = |f: u32| -> f64 {
        let t = c.threshold;
        if t >= 512 {
            return at(512, f) * (1.0 + 0.02 * (f64::from(t) / 512.0).log2());
        }
        let k = ts.iter().rposition(|&x| x <= t).unwrap();
        let (lo, hi) = (ts[k], ts[k + 1]);
        let w =
            (f64::from(t).ln() - f64::from(lo).ln()) / (f64::from(hi).ln() - f64::from(lo).ln());
        (at(lo, f).ln() * (1.0 - w) + at(hi, f).ln() * w).exp()
    };
    let v = match c.coarsen {
        1 => along_t(1),
        8 => along_t(8),
        16 => along_t(8) * 1.02,
        f => {
            let w = f64::from(f).log2() / 3.0;
            (along_t(1).ln() * (1.0 - w) + along_t(8).ln() * w).exp()
        }
    };
    match c.granularity {
        Granularity::Multiblock(8) => v,
        Granularity::Multiblock(_) => v * 1.03,
        _ => v,
    }
}

/// Deterministic noise: exp(N(0, sigma)) from a hash of the point and sample.
fn noise(key: &str, sample: u32, sigma: f64, seed: u64) -> f64 {
    let mut h: u64 = 0xcbf29ce484222325 ^ seed;
    for b in key.bytes().chain(sample.to_le_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    // Two uniforms -> one normal (Box-Muller).
    let u1 = ((h >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let h2 = h.wrapping_mul(0x9E3779B97F4A7C15);
    let u2 = ((h2 >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
    (sigma * z).exp()
}

/// What the search knows of a site of the suite: every granularity the
/// committed sweep measured (it has no `floor` points).
fn sweep_facts() -> SiteFacts {
    SiteFacts {
        granularities: Granularity::SCREEN
            .into_iter()
            .filter(|&g| g != Granularity::Floor)
            .collect(),
        ..SiteFacts::default()
    }
}

/// The suite's starting clauses: threshold(128) coarsen(8), no aggregation.
fn start() -> Point {
    Point(vec![SiteConfig::new(Granularity::None, 128, 8)])
}

struct Summary {
    runs: Vec<usize>,
    ratios: Vec<(String, f64)>,
}

/// The search's runs per site (with the stats run on a GPU: 12).
const RUNS: usize = 11;

/// The suite's prior without the input being tuned: the replay does not
/// know the answer it is checked against.
fn prior_without(bench: &str, input: &str) -> Prior {
    Prior::suite().without(&format!("{bench}/{input}"))
}

fn run_suite(sigma: f64, seed: u64) -> Summary {
    let mut runs = Vec::new();
    let mut ratios = Vec::new();
    for ((bench, input), s) in surfaces() {
        let best = s.values().cloned().fold(f64::INFINITY, f64::min);
        let mut eval = |p: &Point, sample: u32| -> Result<f64, String> {
            Ok(cost(&s, &p.0[0]) * noise(&p.key(), sample, sigma, seed))
        };
        let out = search(
            &start(),
            &[sweep_facts()],
            Limits {
                runs: RUNS,
                plateau: 4,
            },
            &prior_without(&bench, &input),
            &mut eval,
        );
        let (chosen, _) = out.best.clone().expect("a point");
        runs.push(out.runs());
        if std::env::var("TUNE_TRACE").is_ok_and(|v| input.contains(&v)) {
            for t in &out.trials {
                eprintln!("  {} {} {:?}", t.phase, t.point.key(), t.value);
            }
        }
        ratios.push((
            format!("{bench} {input} -> {}", chosen.key()),
            cost(&s, &chosen.0[0]) / best,
        ));
    }
    Summary { runs, ratios }
}

fn geomean(v: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = v.collect();
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

#[test]
fn within_five_percent_of_the_sweep_in_eleven_runs() {
    let s = run_suite(0.0, 1);
    let mean_runs = s.runs.iter().sum::<usize>() as f64 / s.runs.len() as f64;
    eprintln!("input -> chosen: runs, tuned / sweep's best");
    for ((what, r), n) in s.ratios.iter().zip(&s.runs) {
        eprintln!("{what}: {n}, {r:.3}");
    }
    assert_eq!(s.ratios.len(), 28);
    assert!(mean_runs <= RUNS as f64, "mean runs {mean_runs}");
    let misses: Vec<_> = s.ratios.iter().filter(|(_, r)| *r > 1.05).collect();
    let g = geomean(s.ratios.iter().map(|x| x.1));
    eprintln!("mean runs {mean_runs:.1}, geometric mean ratio {g:.3}, misses {misses:?}");
    // The one input outside 5% is bfs road-w512 (1.057), where every
    // configuration that launches nothing (every threshold of 32 and more:
    // the same work) measured 23.7-27.0 ms in the sweep: the three within 5%
    // of its best are that spread's low end.
    assert!(g <= 1.01, "geometric mean {g}");
    assert!(misses.len() <= 1, "{misses:?}");
    assert!(s.ratios.iter().all(|(_, r)| *r <= 1.06), "{:?}", s.ratios);
}

#[test]
fn noise_of_three_percent_costs_little() {
    for seed in [1, 2, 3] {
        let s = run_suite(0.03, seed);
        let mean_runs = s.runs.iter().sum::<usize>() as f64 / s.runs.len() as f64;
        let g = geomean(s.ratios.iter().map(|x| x.1));
        let worst = s.ratios.iter().map(|x| x.1).fold(0.0, f64::max);
        let within = s.ratios.iter().filter(|(_, r)| *r <= 1.05).count();
        eprintln!(
            "seed {seed}: mean runs {mean_runs:.1}, geometric mean {g:.3}, worst {worst:.3}, {within} of 28 within 5%"
        );
        assert!(mean_runs <= RUNS as f64);
        assert!(g <= 1.02, "seed {seed}: geometric mean {g}");
        assert!(worst <= 1.10, "seed {seed}: {:?}", s.ratios);
    }
}

/// The committed prior (src/tune/prior.csv) is what bench/tune_prior.py
/// writes for the committed sweep.
#[test]
fn the_prior_is_the_committed_sweep() {
    let prior = Prior::suite();
    let all = surfaces();
    assert_eq!(prior.rows.len(), all.len());
    for ((bench, input), s) in &all {
        let best = s.values().cloned().fold(f64::INFINITY, f64::min);
        let (_, row) = prior
            .rows
            .iter()
            .find(|(n, _)| *n == format!("{bench}/{input}"))
            .unwrap_or_else(|| panic!("{bench}/{input} not in the prior"));
        for (c, value) in prior.configs.iter().zip(row) {
            let g = gname(c.granularity);
            let measured = s.get(&(g.to_string(), c.threshold, c.coarsen));
            match (measured, value) {
                (Some(ms), Some(v)) => assert!(
                    ((ms / best).ln() - v).abs() < 0.001,
                    "{bench}/{input} {c}: {v} vs {}",
                    (ms / best).ln()
                ),
                (None, None) => {}
                _ => panic!("{bench}/{input} {c}: {measured:?} vs {value:?}"),
            }
        }
    }
}

#[test]
fn failures_are_never_chosen_and_a_small_budget_is_kept() {
    let s = &surfaces()[&("bfs".to_string(), "rmat-s14-e16".to_string())];
    // Grid aggregation fails to build; warp runs hang at threshold 32.
    let mut eval = |p: &Point, _: u32| -> Result<f64, String> {
        let c = &p.0[0];
        match c.granularity {
            Granularity::Grid => Err("build failed".into()),
            Granularity::Warp if c.threshold == 32 => Err("timed out".into()),
            _ => Ok(cost(s, c)),
        }
    };
    let out = search(
        &start(),
        &[sweep_facts()],
        Limits {
            runs: 7,
            plateau: 4,
        },
        &prior_without("bfs", "rmat-s14-e16"),
        &mut eval,
    );
    assert!(out.runs() <= 7);
    let (best, _) = out.best.clone().unwrap();
    assert_ne!(best.0[0].granularity, Granularity::Grid);
    assert!(out.trials.iter().any(|t| t.value.is_err()));
    assert!(out.estimates()[&best].is_ok());
}

#[test]
fn two_sites_share_the_budget_and_both_improve() {
    let a = &surfaces()[&("bfs".to_string(), "rmat-s16-e8".to_string())];
    let b = &surfaces()[&("mstv".to_string(), "rmat12.sym.gr".to_string())];
    // The program's time: both sites' costs added.
    let mut eval =
        |p: &Point, _: u32| -> Result<f64, String> { Ok(cost(a, &p.0[0]) + cost(b, &p.0[1])) };
    let start = Point(vec![SiteConfig::new(Granularity::None, 128, 8); 2]);
    let out = search(
        &start,
        &[sweep_facts(), sweep_facts()],
        Limits {
            runs: 24,
            plateau: 4,
        },
        &Prior::suite()
            .without("bfs/rmat-s16-e8")
            .without("mstv/rmat12.sym.gr"),
        &mut eval,
    );
    assert!(out.runs() <= 24);
    let (best, v) = out.best.clone().unwrap();
    let optimum = a.values().cloned().fold(f64::INFINITY, f64::min)
        + b.values().cloned().fold(f64::INFINITY, f64::min);
    assert!(v <= optimum * 1.10, "{} {v} vs {optimum}", best.key());
    assert!(
        out.trials.iter().any(|t| t.site == Some(0))
            && out.trials.iter().any(|t| t.site == Some(1))
    );
}

#[test]
fn an_inert_site_is_not_tuned() {
    let s = &surfaces()[&("bfs".to_string(), "rmat-s16-e8".to_string())];
    let mut eval = |p: &Point, _: u32| -> Result<f64, String> { Ok(cost(s, &p.0[0])) };
    let start = Point(vec![SiteConfig::new(Granularity::None, 128, 8); 2]);
    let inert = SiteFacts {
        tune: false,
        ..sweep_facts()
    };
    let out = search(
        &start,
        &[sweep_facts(), inert],
        Limits {
            runs: 12,
            plateau: 4,
        },
        &prior_without("bfs", "rmat-s16-e8"),
        &mut eval,
    );
    assert!(out.trials.iter().all(|t| t.point.0[1] == start.0[1]));
    assert!(out.runs() <= 12);
    assert!(out.best.is_some());
}
