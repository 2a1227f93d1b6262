//! `dpopt-report CSV... [--out DIR]`: turn the GPU suite's CSV files
//! (`bench/gpu_check.sh run` writes `suite.csv`) into `DIR/report.md`, a
//! speedup plot and one time-versus-threshold plot per benchmark and input.

use clap::Parser;
use dpopt_report::{plots, results, summary};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(about = "Tables and plots from dpopt's GPU benchmark CSV files")]
struct Args {
    /// Suite CSV files (benchmark,input,variant,config,impl,time_ms,device_launches,verified,gpu).
    #[arg(required = true)]
    csv: Vec<PathBuf>,
    /// Where report.md and the SVG plots go.
    #[arg(long, default_value = "report")]
    out: PathBuf,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dpopt-report: {e}");
            ExitCode::from(1)
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let mut runs = Vec::new();
    for path in &args.csv {
        runs.extend(results::read_csv(path)?);
    }
    let mut gpus: Vec<String> = runs.iter().map(|r| r.gpu.clone()).collect();
    gpus.sort();
    gpus.dedup();
    let cases = summary::cases(&runs);
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let mut md = summary::markdown(&cases, &gpus);
    plots::speedup_over_cdp(&cases, &args.out.join("speedup.svg"))?;
    md.push_str("\n## Plots\n\n![speedup over CDP](speedup.svg)\n");
    for case in &cases {
        let name = format!("threshold-{}-{}.svg", case.benchmark, case.input);
        if plots::time_vs_threshold(&runs, &case.benchmark, &case.input, &args.out.join(&name))? {
            md.push_str(&format!("\n![{} {}]({name})\n", case.benchmark, case.input));
        }
    }
    let report = args.out.join("report.md");
    std::fs::write(&report, md).map_err(|e| format!("{}: {e}", report.display()))?;
    println!(
        "wrote {} ({} cases, {} runs)",
        report.display(),
        cases.len(),
        runs.len()
    );
    Ok(())
}
