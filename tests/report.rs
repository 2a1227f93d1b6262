//! `dpopt-report` turns a suite CSV into report.md and SVG plots.

use std::process::Command;

#[test]
fn report_from_a_suite_csv() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("suite.csv");
    std::fs::write(
        &csv,
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
    )
    .unwrap();
    let out = dir.path().join("report");
    let status = Command::new(env!("CARGO_BIN_EXE_dpopt-report"))
        .arg(&csv)
        .arg("--out")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
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
