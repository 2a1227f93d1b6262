//! SVG plots of the report (plotters, SVG backend: no fonts needed):
//! speedup over CDP per benchmark and input on a log scale (paper 000 Fig. 9),
//! and kernel time versus threshold per granularity (paper 000 Fig. 11).

use super::results::{threshold_of, Run, Variant};
use super::summary::Case;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

const COLORS: [RGBColor; 5] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
];

/// A bar series of the speedup plot: its name and the time it compares.
type Series = (&'static str, fn(&Case) -> Option<f64>);

fn error(e: impl std::fmt::Display) -> String {
    format!("plot: {e}")
}

/// Grouped bars, one group per case: speedup over CDP of the best T+C+A, the
/// fixed T+C+A, the best aggregation alone, the flat version and the
/// load-balanced flat version.
pub fn speedup_over_cdp(cases: &[Case], path: &Path) -> Result<(), String> {
    let series: [Series; 5] = [
        ("best T+C+A", |c| c.families.get("T+C+A").map(|b| b.time_ms)),
        ("fixed T+C+A (t128 c8 mb8)", |c| {
            c.fixed.as_ref().map(|b| b.time_ms)
        }),
        ("best A alone (CDP+A)", |c| {
            c.families.get("A").map(|b| b.time_ms)
        }),
        ("flat (No-CDP)", |c| c.flat),
        ("flat-lb (load-balanced flat)", |c| c.flat_lb),
    ];
    let values: Vec<Vec<Option<f64>>> = cases
        .iter()
        .map(|c| {
            let cdp = c.cdp.as_ref().map(|b| b.time_ms);
            series.iter().map(|(_, f)| Some(cdp? / f(c)?)).collect()
        })
        .collect();
    let all: Vec<f64> = values.iter().flatten().flatten().copied().collect();
    if all.is_empty() {
        return Err("no case has both CDP and an optimized time".to_string());
    }
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min).min(1.0) / 2.0;
    let hi = all.iter().copied().fold(0.0, f64::max) * 2.0;
    let width = (160 + 140 * cases.len() as u32).max(640);
    let root = SVGBackend::new(path, (width, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(error)?;
    let labels: Vec<String> = cases
        .iter()
        .map(|c| format!("{} {}", c.benchmark, c.input))
        .collect();
    let mut chart = ChartBuilder::on(&root)
        .caption("Speedup over CDP (log scale)", ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..cases.len() as f64, (lo..hi).log_scale())
        .map_err(error)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(cases.len() * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - i as f64 - 0.5).abs() < 1e-6 {
                labels.get(i).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_label_style(("sans-serif", 11))
        .y_desc("speedup over CDP (x)")
        .draw()
        .map_err(error)?;
    let bar = 0.8 / series.len() as f64;
    for (s, (name, _)) in series.iter().enumerate() {
        let color = COLORS[s % COLORS.len()];
        chart
            .draw_series(values.iter().enumerate().filter_map(|(i, v)| {
                let v = v[s]?;
                let x0 = i as f64 + 0.1 + s as f64 * bar;
                Some(Rectangle::new([(x0, lo), (x0 + bar, v)], color.filled()))
            }))
            .map_err(error)?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart
        .draw_series(LineSeries::new(
            [(0.0, 1.0), (cases.len() as f64, 1.0)],
            BLACK.stroke_width(1),
        ))
        .map_err(error)?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(error)?;
    root.present().map_err(error)
}

/// One line per granularity (and one without aggregation): the best kernel
/// time of the thresholded variants at each threshold, for one case; the
/// flat and load-balanced flat versions' times as dashed horizontal lines.
pub fn time_vs_threshold(
    runs: &[Run],
    benchmark: &str,
    input: &str,
    path: &Path,
) -> Result<bool, String> {
    let mut lines: BTreeMap<String, BTreeMap<u64, f64>> = BTreeMap::new();
    for run in runs.iter().filter(|r| {
        r.benchmark == benchmark && r.input == input && r.implementation == "cdp" && r.verified
    }) {
        let variant = Variant::parse(&run.variant);
        let (Some(t), Some(time)) = (threshold_of(&run.config), run.time_ms) else {
            continue;
        };
        if !variant.threshold {
            continue;
        }
        let name = variant
            .aggregate
            .map_or("no aggregation".to_string(), |g| g.name().to_string());
        let slot = lines.entry(name).or_default().entry(t).or_insert(time);
        *slot = slot.min(time);
    }
    lines.retain(|_, points| points.len() >= 2);
    if lines.is_empty() {
        return Ok(false);
    }
    // The baselines without CDP: the lowest verified median of each.
    let baselines: Vec<(&str, f64)> = [("flat (No-CDP)", "flat"), ("flat-lb", "flat-lb")]
        .into_iter()
        .filter_map(|(label, implementation)| {
            runs.iter()
                .filter(|r| {
                    r.benchmark == benchmark
                        && r.input == input
                        && r.implementation == implementation
                        && r.verified
                })
                .filter_map(|r| r.time_ms)
                .min_by(f64::total_cmp)
                .map(|t| (label, t))
        })
        .collect();
    let ts: Vec<u64> = lines.values().flat_map(|p| p.keys().copied()).collect();
    let times: Vec<f64> = lines
        .values()
        .flat_map(|p| p.values().copied())
        .chain(baselines.iter().map(|b| b.1))
        .collect();
    let (tmin, tmax) = (
        *ts.iter().min().unwrap() as f64,
        *ts.iter().max().unwrap() as f64,
    );
    let lo = times.iter().copied().fold(f64::INFINITY, f64::min) / 1.5;
    let hi = times.iter().copied().fold(0.0, f64::max) * 1.5;
    let root = SVGBackend::new(path, (720, 460)).into_drawing_area();
    root.fill(&WHITE).map_err(error)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{benchmark} {input}: time vs threshold (best over factors)"),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d((tmin / 1.5..tmax * 1.5).log_scale(), (lo..hi).log_scale())
        .map_err(error)?;
    chart
        .configure_mesh()
        .x_labels(8)
        .x_label_formatter(&|t| format!("{t:.0}"))
        .y_label_formatter(&|v| format!("{v:.2}"))
        .x_desc("threshold (child threads)")
        .y_desc("kernel time (ms)")
        .draw()
        .map_err(error)?;
    for (i, (name, points)) in lines.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let data: Vec<(f64, f64)> = points.iter().map(|(&t, &v)| (t as f64, v)).collect();
        chart
            .draw_series(LineSeries::new(data.clone(), color.stroke_width(2)))
            .map_err(error)?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 14, y)], color.stroke_width(2)));
        chart
            .draw_series(data.into_iter().map(|p| Circle::new(p, 3, color.filled())))
            .map_err(error)?;
    }
    for (i, (label, time)) in baselines.into_iter().enumerate() {
        let color = if i == 0 { BLACK } else { RGBColor(140, 86, 75) };
        chart
            .draw_series(DashedLineSeries::new(
                [(tmin / 1.5, time), (tmax * 1.5, time)],
                6,
                4,
                color.stroke_width(1),
            ))
            .map_err(error)?
            .label(format!("{label}: {time:.3} ms"))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 14, y)], color.stroke_width(1)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(error)?;
    root.present().map_err(error)?;
    Ok(true)
}
