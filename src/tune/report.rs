//! What a search reports: a table of the configurations measured and an
//! SVG of the search (each run's value in order, the best so far).

use super::search::{Outcome, Trial};
use super::space::Granularity;
use std::fmt::Write;

/// The table: every configuration measured, best first, with its samples.
pub fn table(out: &Outcome, site_ids: &[String], stats_runs: usize, new_runs: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "sites: {}", site_ids.join(", "));
    let mut rows: Vec<_> = out.estimates().into_iter().collect();
    rows.sort_by(|a, b| match (&a.1, &b.1) {
        (Ok(x), Ok(y)) => x.total_cmp(y),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        (Err(_), Err(_)) => a.0.cmp(&b.0),
    });
    let _ = writeln!(s, "| rank | configuration (per site: granularity, threshold, factor) | value | samples | phase |");
    let _ = writeln!(s, "|---|---|---|---|---|");
    for (k, (p, v)) in rows.iter().enumerate() {
        let trials: Vec<&Trial> = out.trials.iter().filter(|t| &t.point == p).collect();
        let phase = trials.first().map_or("", |t| t.phase);
        let value = match v {
            Ok(v) => format!("{v:.4}"),
            Err(e) => format!("excluded: {e}"),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            k + 1,
            p.key(),
            value,
            trials.len(),
            phase
        );
    }
    let excluded = rows.iter().filter(|r| r.1.is_err()).count();
    let _ = writeln!(
        s,
        "runs: {} for the search + {stats_runs} stats run ({new_runs} made now, the rest from the saved state); {} configurations, {excluded} excluded; stopped: {}",
        out.runs(),
        rows.len(),
        out.stopped
    );
    s
}

fn colour(g: Granularity) -> &'static str {
    match g {
        Granularity::None => "#555555",
        Granularity::Warp => "#1f77b4",
        Granularity::Block => "#2ca02c",
        Granularity::Multiblock(_) => "#9467bd",
        Granularity::Grid => "#d62728",
        Granularity::Floor => "#ff7f0e",
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The search as an SVG: run number against value (log scale), a point per
/// run coloured by the first tuned site's granularity (a cross: excluded),
/// and the best so far as a line.
pub fn svg(out: &Outcome, title: &str) -> String {
    let (w, h, l, r, t, b) = (720.0, 420.0, 70.0, 20.0, 40.0, 50.0);
    let values: Vec<f64> = out
        .trials
        .iter()
        .filter_map(|t| t.value.as_ref().ok().copied())
        .filter(|v| *v > 0.0)
        .collect();
    let lo = values.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = values.iter().cloned().fold(0.0, f64::max);
    let (lo, hi) = if values.is_empty() {
        (1.0, 10.0)
    } else if hi / lo < 1.1 {
        (lo / 1.05, hi * 1.05)
    } else {
        (lo, hi)
    };
    let n = out.trials.len().max(1) as f64;
    let x = |k: usize| l + (w - l - r) * (k as f64 + 0.5) / n;
    let y = |v: f64| t + (h - t - b) * (1.0 - (v.ln() - lo.ln()) / (hi.ln() - lo.ln()));
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{l}" y="20" font-size="14">dpopt tune: {}</text>"#,
        escape(title)
    );
    let _ = writeln!(
        s,
        r#"<line x1="{l}" y1="{}" x2="{}" y2="{}" stroke="black"/>"#,
        h - b,
        w - r,
        h - b
    );
    let _ = writeln!(
        s,
        r#"<line x1="{l}" y1="{t}" x2="{l}" y2="{}" stroke="black"/>"#,
        h - b
    );
    for k in 0..=4 {
        let v = (lo.ln() + (hi.ln() - lo.ln()) * f64::from(k) / 4.0).exp();
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{:.1}" text-anchor="end">{v:.3}</text>"#,
            l - 6.0,
            y(v) + 4.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">run</text>"#,
        (l + w - r) / 2.0,
        h - 12.0
    );
    let _ = writeln!(
        s,
        r#"<text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle">value (log)</text>"#,
        (t + h - b) / 2.0,
        (t + h - b) / 2.0
    );
    let mut best = f64::INFINITY;
    let mut line = Vec::new();
    for (k, trial) in out.trials.iter().enumerate() {
        let g = trial
            .point
            .0
            .get(trial.site.unwrap_or(0))
            .map_or(Granularity::None, |c| c.granularity);
        let label = escape(&format!(
            "{} {} #{}",
            trial.phase,
            trial.point.key(),
            trial.sample
        ));
        match &trial.value {
            Ok(v) if *v > 0.0 => {
                best = best.min(*v);
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{}"><title>{label}: {v:.4}</title></circle>"#,
                    x(k),
                    y(*v),
                    colour(g)
                );
            }
            _ => {
                let (cx, cy) = (x(k), t + 8.0);
                let _ = writeln!(
                    s,
                    r#"<path d="M{:.1} {:.1} l8 8 m0 -8 l-8 8" stroke="{}"><title>{label}: excluded</title></path>"#,
                    cx - 4.0,
                    cy - 4.0,
                    colour(g)
                );
            }
        }
        if best.is_finite() {
            line.push(format!("{:.1},{:.1}", x(k), y(best)));
        }
    }
    if !line.is_empty() {
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="black" stroke-dasharray="4 3"/>"#,
            line.join(" ")
        );
    }
    for (k, g) in Granularity::SCREEN.iter().enumerate() {
        let lx = l + 10.0 + 80.0 * k as f64;
        let _ = writeln!(
            s,
            r#"<circle cx="{lx}" cy="{}" r="4" fill="{}"/><text x="{}" y="{}">{}</text>"#,
            h - b + 20.0,
            colour(*g),
            lx + 8.0,
            h - b + 24.0,
            g.short()
        );
    }
    s.push_str("</svg>\n");
    s
}
