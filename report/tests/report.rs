//! `dpopt-report` turns a suite CSV into report.md and SVG plots.

use std::path::PathBuf;
use std::process::Command;

/// Writes `csv` as the suite CSV in `dir`, runs `dpopt-report` on it (which
/// must succeed) and returns the report folder and its report.md.
fn report(dir: &tempfile::TempDir, csv: &str) -> (PathBuf, String) {
    let path = dir.path().join("suite.csv");
    std::fs::write(&path, csv).unwrap();
    let out = dir.path().join("report");
    let status = Command::new(env!("CARGO_BIN_EXE_dpopt-report"))
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    (out, md)
}

#[test]
fn report_from_a_suite_csv() {
    let dir = tempfile::tempdir().unwrap();
    let (out, md) = report(
        &dir,
        "benchmark,input,variant,config,impl,time_ms,device_launches,verified,gpu\n\
         bfs,s14,orig,-,cdp,10.0,1000,yes,GPU X\n\
         bfs,s14,orig,-,flat,2.0,,yes,GPU X\n\
         bfs,s14,T,t32,cdp,3.0,300,yes,GPU X\n\
         bfs,s14,T,t128,cdp,2.5,100,yes,GPU X\n\
         bfs,s14,A,warp,cdp,1.0,100,yes,GPU X\n\
         bfs,s14,TA,t32,cdp,0.9,20,yes,GPU X\n\
         bfs,s14,TA,t128,cdp,0.7,10,yes,GPU X\n\
         bfs,s14,CAm,c8g8,cdp,0.9,20,yes,GPU X\n\
         bfs,s14,TCAm,t128c8g8,cdp,0.5,10,yes,GPU X\n",
    );
    assert!(md.contains("GPU: GPU X"), "{md}");
    assert!(
        md.contains("| T+C+A over CDP | 20.00x | 1 | 43.0x |"),
        "{md}"
    );
    assert!(md.contains("threshold-bfs-s14.svg"), "{md}");
    for svg in ["speedup.svg", "threshold-bfs-s14.svg"] {
        let text = std::fs::read_to_string(out.join(svg)).unwrap();
        assert!(text.starts_with("<svg") && text.contains("</svg>"), "{svg}");
    }
    // A missing file is an error with exit status 1, not a panic.
    let status = Command::new(env!("CARGO_BIN_EXE_dpopt-report"))
        .arg(dir.path().join("missing.csv"))
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
}

/// The load-balanced flat version (impl flat-lb) is its own column, with the
/// speedup of dpopt's best configuration over it per case, its geometric
/// mean, a bar in the speedup plot and a line in the threshold plots.
#[test]
fn flat_lb_column_and_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let (out, md) = report(
        &dir,
        "benchmark,input,variant,config,impl,time_ms,device_launches,verified,gpu\n\
         bfs,s14,orig,-,cdp,10.0,1000,yes,GPU X\n\
         bfs,s14,orig,-,flat,2.0,,yes,GPU X\n\
         bfs,s14,orig,-,flat-lb,0.25,,yes,GPU X\n\
         bfs,s14,T,t32,flat-lb,0.2,,yes,GPU X\n\
         bfs,s14,T,t128,flat-lb,0.01,,no,GPU X\n\
         bfs,s14,T,t32,cdp,3.0,300,yes,GPU X\n\
         bfs,s14,T,t128,cdp,2.5,100,yes,GPU X\n\
         bfs,s14,TCAm,t128c8g8,cdp,0.5,10,yes,GPU X\n\
         bfs,s14,TCAg,t32c8,cdp,0.4,3,yes,GPU X\n\
         bfs,s14,TCAg,t128c8,cdp,0.8,3,yes,GPU X\n\
         spmv,z,orig,-,cdp,5.0,100,yes,GPU X\n\
         spmv,z,orig,-,flat,0.2,,yes,GPU X\n\
         spmv,z,TCAg,t32c8,cdp,0.5,4,yes,GPU X\n",
    );
    let header = md.lines().find(|l| l.starts_with("| benchmark |")).unwrap();
    let columns: Vec<&str> = header.split('|').map(str::trim).collect();
    let at = |name: &str| columns.iter().position(|c| *c == name).unwrap();
    assert_eq!(at("flat-lb"), at("flat (No-CDP)") + 1, "{header}");
    let row = |prefix: &str| -> Vec<String> {
        md.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap()
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let bfs = row("| bfs | s14 |");
    // The lowest verified flat-lb median (0.2; the unverified 0.01 does not count).
    assert_eq!(bfs[at("flat-lb")], "0.200", "{md}");
    assert_eq!(
        bfs[at("best dpopt")],
        "0.400 (TCAg t32c8, launches: 3)",
        "{md}"
    );
    // 0.2 / 0.4: dpopt's best takes twice the time of flat-lb.
    assert_eq!(bfs[at("best dpopt / flat-lb")], "0.50x", "{md}");
    // No flat-lb row: no ratio.
    let spmv = row("| spmv | z |");
    assert_eq!(spmv[at("flat-lb")], "-");
    assert_eq!(spmv[at("best dpopt / flat-lb")], "-");
    assert!(
        md.contains(
            "| best variant of any family over flat-lb (load-balanced flat) | 0.50x | 1 | |"
        ),
        "{md}"
    );
    assert!(md.contains("bfs s14: T t128 (flat-lb)"), "{md}");
    let speedup = std::fs::read_to_string(out.join("speedup.svg")).unwrap();
    assert!(
        speedup.contains("flat-lb (load-balanced flat)"),
        "speedup plot"
    );
    let threshold = std::fs::read_to_string(out.join("threshold-bfs-s14.svg")).unwrap();
    assert!(threshold.contains("flat-lb: 0.200 ms"), "threshold plot");
}
