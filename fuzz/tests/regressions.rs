//! Every minimized finding in `fuzz/regressions/` meets the contract now.
use dpopt_fuzz::oracle;
use std::path::Path;

#[test]
fn fixed_findings_stay_fixed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    let mut checked = 0;
    let mut failures = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.extension().is_some_and(|e| e == "cu") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let report = oracle::check(&bytes, None, false);
        checked += 1;
        for v in &report.violations {
            failures.push(format!("{}: {:?}", path.display(), v));
        }
    }
    assert!(
        checked >= 5,
        "only {checked} regression files in {}",
        dir.display()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
