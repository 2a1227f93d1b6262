//! Per benchmark and input: the baselines, the best configuration of each
//! variant family, and the ratios paper 000 reports, with geometric means.

use super::results::{Granularity, Run, Variant};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The fastest verified run of a family, with what produced it.
#[derive(Debug, Clone, PartialEq)]
pub struct Best {
    pub time_ms: f64,
    pub label: String,
    pub device_launches: Option<u64>,
}

/// Everything the report says about one (benchmark, input).
#[derive(Debug, Default)]
pub struct Case {
    pub benchmark: String,
    pub input: String,
    pub cdp: Option<Best>,
    pub cdp_ff: Option<Best>,
    pub flat: Option<f64>,
    /// The load-balanced flat version (impl `flat-lb`): the lowest of the
    /// medians measured beside each variant, like `flat`.
    pub flat_lb: Option<f64>,
    /// Best per family ("T", "C", "T+C", "A", "T+A", "C+A", "T+C+A").
    pub families: BTreeMap<String, Best>,
    /// Best aggregation alone per granularity.
    pub aggregation: BTreeMap<Granularity, Best>,
    /// T+C+A with the paper's untuned configuration (threshold 128, factor 8,
    /// multiblock 8): variant TCAm, configuration t128c8g8.
    pub fixed: Option<Best>,
    pub unverified: Vec<String>,
}

/// The ratios of paper 000 (V100, CUDA 9.1) to compare with.
pub const PAPER: [(&str, f64); 4] = [
    ("T+C+A over CDP", 43.0),
    ("T+C+A over No-CDP (flat)", 8.7),
    ("T+C+A over CDP+A (aggregation alone)", 3.6),
    ("fixed T+C+A (t128 c8 multiblock 8) over best C+A", 1.9),
];

fn better(slot: &mut Option<Best>, candidate: Best) {
    if slot
        .as_ref()
        .map_or(true, |b| candidate.time_ms < b.time_ms)
    {
        *slot = Some(candidate);
    }
}

/// Group runs into cases, keeping only verified runs for the comparisons.
pub fn cases(runs: &[Run]) -> Vec<Case> {
    let mut by_case: BTreeMap<(String, String), Case> = BTreeMap::new();
    for run in runs {
        let case = by_case
            .entry((run.benchmark.clone(), run.input.clone()))
            .or_insert_with(|| Case {
                benchmark: run.benchmark.clone(),
                input: run.input.clone(),
                ..Case::default()
            });
        let label = format!("{} {}", run.variant, run.config);
        if !run.verified {
            case.unverified
                .push(format!("{label} ({})", run.implementation));
            continue;
        }
        let Some(time_ms) = run.time_ms else { continue };
        if run.implementation == "flat" {
            // Every binary also times the flat version: keep the lowest.
            case.flat = Some(case.flat.map_or(time_ms, |f: f64| f.min(time_ms)));
            continue;
        }
        if run.implementation == "flat-lb" {
            case.flat_lb = Some(case.flat_lb.map_or(time_ms, |f: f64| f.min(time_ms)));
            continue;
        }
        let best = Best {
            time_ms,
            label,
            device_launches: run.device_launches,
        };
        match run.variant.as_str() {
            "orig" => better(&mut case.cdp, best),
            "CDPff" => better(&mut case.cdp_ff, best),
            name => {
                let variant = Variant::parse(name);
                if name == "TCAm" && run.config == "t128c8g8" {
                    better(&mut case.fixed, best.clone());
                }
                if let (Some(g), false, false) =
                    (variant.aggregate, variant.threshold, variant.coarsen)
                {
                    let mut slot = case.aggregation.remove(&g);
                    better(&mut slot, best.clone());
                    case.aggregation.insert(g, slot.expect("just set"));
                }
                if let Some(family) = variant.family() {
                    let mut slot = case.families.remove(&family);
                    better(&mut slot, best);
                    case.families.insert(family, slot.expect("just set"));
                }
            }
        }
    }
    // Hazard fixtures and the like have no optimized variant to compare.
    by_case
        .into_values()
        .filter(|c| !c.families.is_empty())
        .collect()
}

impl Case {
    fn family(&self, name: &str) -> Option<&Best> {
        self.families.get(name)
    }

    /// The four ratios of `PAPER`, where both sides were measured.
    pub fn ratios(&self) -> [Option<f64>; 4] {
        let tca = self.family("T+C+A").map(|b| b.time_ms);
        let ratio = |num: Option<f64>, den: Option<f64>| Some(num? / den?);
        [
            ratio(self.cdp.as_ref().map(|b| b.time_ms), tca),
            ratio(self.flat, tca),
            ratio(self.family("A").map(|b| b.time_ms), tca),
            ratio(
                self.family("C+A").map(|b| b.time_ms),
                self.fixed.as_ref().map(|b| b.time_ms),
            ),
        ]
    }

    /// The fastest verified CDP-derived run of any family.
    pub fn best_overall(&self) -> Option<&Best> {
        self.families
            .values()
            .min_by(|a, b| a.time_ms.total_cmp(&b.time_ms))
    }

    /// Speedup of dpopt's best configuration (any family) over the
    /// load-balanced flat version: flat-lb time / best time (above 1: dpopt
    /// is faster).
    pub fn best_over_flat_lb(&self) -> Option<f64> {
        Some(self.flat_lb? / self.best_overall()?.time_ms)
    }
}

pub fn geomean(values: &[f64]) -> Option<f64> {
    (!values.is_empty())
        .then(|| (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
}

fn cell(best: Option<&Best>) -> String {
    best.map_or("-".to_string(), |b| format!("{:.3}", b.time_ms))
}

fn cell_with(best: Option<&Best>) -> String {
    best.map_or("-".to_string(), |b| {
        let launches = b
            .device_launches
            .map_or(String::new(), |l| format!(", launches: {l}"));
        format!("{:.3} ({}{launches})", b.time_ms, b.label)
    })
}

/// The markdown report: one table row per case, then geometric means.
pub fn markdown(cases: &[Case], gpus: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# dpopt benchmark report\n");
    let _ = writeln!(
        out,
        "GPU: {}. Kernel times in ms (median of the runs of one process; flat: the lowest of the medians measured beside each variant); only verified runs count. \
         \"best\" is the fastest configuration measured; A is aggregation alone (CDP+A), at the granularity named; \
         flat-lb is the load-balanced flat version (no CDP; docs/PERFORMANCE.md), best dpopt the fastest configuration of any family. \
         Ratios x / y are speedups of x over y (time of y / time of x).\n",
        if gpus.is_empty() { "unknown".to_string() } else { gpus.join(", ") }
    );
    let _ = writeln!(
        out,
        "| benchmark | input | CDP | CDP fire-and-forget | flat (No-CDP) | flat-lb | T | C | T+C | A warp | A block | A multiblock | A grid | T+A | C+A | best T+C+A | fixed T+C+A | best dpopt | T+C+A / CDP | T+C+A / flat | T+C+A / A | fixed / C+A | best dpopt / flat-lb |"
    );
    let _ = writeln!(out, "|{}", "---|".repeat(23));
    for case in cases {
        let r = case.ratios();
        let ratio = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}x"));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            case.benchmark,
            case.input,
            cell_with(case.cdp.as_ref()),
            cell(case.cdp_ff.as_ref()),
            case.flat.map_or("-".to_string(), |f| format!("{f:.3}")),
            case.flat_lb.map_or("-".to_string(), |f| format!("{f:.3}")),
            cell(case.family("T")),
            cell(case.family("C")),
            cell(case.family("T+C")),
            cell(case.aggregation.get(&Granularity::Warp)),
            cell(case.aggregation.get(&Granularity::Block)),
            cell(case.aggregation.get(&Granularity::MultiBlock)),
            cell(case.aggregation.get(&Granularity::Grid)),
            cell(case.family("T+A")),
            cell(case.family("C+A")),
            cell_with(case.family("T+C+A")),
            cell_with(case.fixed.as_ref()),
            cell_with(case.best_overall()),
            ratio(r[0]),
            ratio(r[1]),
            ratio(r[2]),
            ratio(r[3]),
            ratio(case.best_over_flat_lb()),
        );
    }
    let _ = writeln!(out, "\n## Geometric means\n");
    let _ = writeln!(out, "| ratio | measured | cases | paper 000 (V100) |");
    let _ = writeln!(out, "|---|---|---|---|");
    for (i, (name, paper)) in PAPER.iter().enumerate() {
        let values: Vec<f64> = cases.iter().filter_map(|c| c.ratios()[i]).collect();
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {paper:.1}x |",
            geomean(&values).map_or("-".to_string(), |g| format!("{g:.2}x")),
            values.len()
        );
    }
    let overall: Vec<f64> = cases
        .iter()
        .filter_map(|c| Some(c.cdp.as_ref()?.time_ms / c.best_overall()?.time_ms))
        .collect();
    let vs_flat: Vec<f64> = cases
        .iter()
        .filter_map(|c| Some(c.flat? / c.best_overall()?.time_ms))
        .collect();
    let _ = writeln!(
        out,
        "| best variant of any family over CDP | {} | {} | |",
        geomean(&overall).map_or("-".to_string(), |g| format!("{g:.2}x")),
        overall.len()
    );
    let _ = writeln!(
        out,
        "| best variant of any family over flat | {} | {} | |",
        geomean(&vs_flat).map_or("-".to_string(), |g| format!("{g:.2}x")),
        vs_flat.len()
    );
    let vs_flat_lb: Vec<f64> = cases.iter().filter_map(Case::best_over_flat_lb).collect();
    let _ = writeln!(
        out,
        "| best variant of any family over flat-lb (load-balanced flat) | {} | {} | |",
        geomean(&vs_flat_lb).map_or("-".to_string(), |g| format!("{g:.2}x")),
        vs_flat_lb.len()
    );
    let unverified: Vec<String> = cases
        .iter()
        .flat_map(|c| {
            c.unverified
                .iter()
                .map(move |u| format!("{} {}: {u}", c.benchmark, c.input))
        })
        .collect();
    if !unverified.is_empty() {
        let _ = writeln!(out, "\n## Runs that failed verification (left out above)\n");
        for u in unverified {
            let _ = writeln!(out, "- {u}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::parse_csv;

    const CSV: &str = "benchmark,input,variant,config,impl,time_ms,device_launches,verified,gpu\n\
        bfs,s14,orig,-,cdp,10.0,1000,yes,G\n\
        bfs,s14,orig,-,flat,2.0,,yes,G\n\
        bfs,s14,orig,-,flat-lb,0.3,,yes,G\n\
        bfs,s14,A,warp,flat-lb,0.2,,yes,G\n\
        bfs,s14,A,warp,flat-lb,0.05,,no,G\n\
        bfs,s14,A,warp,cdp,1.0,100,yes,G\n\
        bfs,s14,Ag,grid,cdp,0.8,5,yes,G\n\
        bfs,s14,CAm,c8g8,cdp,0.9,20,yes,G\n\
        bfs,s14,TCAm,t128c8g8,cdp,0.5,10,yes,G\n\
        bfs,s14,TCA,t512c8,cdp,0.4,9,yes,G\n\
        bfs,s14,TCAg,t512c8,cdp,0.1,1,no,G\n";

    #[test]
    fn best_per_family_and_ratios() {
        let runs = parse_csv(CSV).unwrap();
        let cases = cases(&runs);
        assert_eq!(cases.len(), 1);
        let c = &cases[0];
        assert_eq!(c.family("T+C+A").unwrap().label, "TCA t512c8");
        assert_eq!(c.fixed.as_ref().unwrap().time_ms, 0.5);
        assert_eq!(c.aggregation[&Granularity::Grid].time_ms, 0.8);
        assert_eq!(c.unverified, ["A warp (flat-lb)", "TCAg t512c8 (cdp)"]);
        // flat-lb: the lowest verified median, apart from flat.
        assert_eq!(c.flat_lb, Some(0.2));
        assert_eq!(c.flat, Some(2.0));
        assert!((c.best_over_flat_lb().unwrap() - 0.5).abs() < 1e-9); // 0.2 / 0.4
        let r = c.ratios();
        assert!((r[0].unwrap() - 25.0).abs() < 1e-9); // 10 / 0.4
        assert!((r[1].unwrap() - 5.0).abs() < 1e-9); // 2 / 0.4
        assert!((r[2].unwrap() - 2.0).abs() < 1e-9); // best A 0.8 / 0.4
        assert!((r[3].unwrap() - 1.8).abs() < 1e-9); // C+A 0.9 / fixed 0.5
        let md = markdown(&cases, &["G".to_string()]);
        assert!(
            md.contains("| bfs | s14 | 10.000 (orig -, launches: 1000)"),
            "{md}"
        );
        assert!(md.contains("failed verification"));
        assert!(md.contains("| flat (No-CDP) | flat-lb | T |"), "{md}");
        assert!(md.contains("| 2.000 | 0.200 |"), "{md}");
        assert!(
            md.trim_end()
                .lines()
                .any(|l| l.starts_with("| bfs | s14 |") && l.ends_with("| 0.50x |")),
            "{md}"
        );
        assert!(
            md.contains(
                "| best variant of any family over flat-lb (load-balanced flat) | 0.50x | 1 | |"
            ),
            "{md}"
        );
        assert!((geomean(&[2.0, 8.0]).unwrap() - 4.0).abs() < 1e-9);
    }
}
