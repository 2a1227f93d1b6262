//! `dpopt explain`: for every example, the plain-words explanation and the
//! JSON of each site (insta snapshots), and BFS at each aggregation
//! granularity; the command line's `explain` and `check --explain`.

mod common;

use std::process::Command;

fn examples() -> Vec<std::path::PathBuf> {
    common::corpus()
        .into_iter()
        .filter(|p| p.parent().is_some_and(|d| d.ends_with("examples")))
        .collect()
}

fn options() -> dpopt::unit::Options {
    dpopt::unit::Options {
        input_dir: Some(common::root().join("examples")),
        ..Default::default()
    }
}

#[test]
fn explain_every_example() {
    let examples = examples();
    assert!(examples.len() >= 10, "examples are missing: {examples:?}");
    for path in examples {
        let file = common::load(&path);
        let explanation = dpopt::explain::explain(&file, Some(&options()));
        assert!(!explanation.sites.is_empty(), "{}: no site", file.name);
        for site in &explanation.sites {
            assert!(!site.knobs.is_empty(), "{}: no knob", site.site);
            assert!(site.checks.len() >= 2, "{}: no check", site.site);
        }
        let stem = common::stem(&path);
        insta::assert_snapshot!(format!("explain_{stem}"), explanation.to_text());
        let json: Vec<serde_json::Value> = explanation.sites.iter().map(|s| s.to_json()).collect();
        insta::assert_snapshot!(
            format!("explain_{stem}_json"),
            serde_json::to_string_pretty(&json).unwrap()
        );
    }
}

#[test]
fn explain_each_aggregation_granularity() {
    let path = common::root().join("examples/bfs.cu");
    let text = std::fs::read_to_string(&path).unwrap();
    for (name, clauses) in [
        ("warp", " consldt(warp) agg_threshold(4)"),
        ("block", " consldt(block)"),
        (
            "multiblock",
            " consldt(multiblock, 4) buffer(default, 4096)",
        ),
        ("grid", " consldt(grid) threads(128) blocks(1024)"),
    ] {
        let t = common::append_to_pragmas(&text, clauses);
        let file = dpopt::source::SourceFile::new("examples/bfs.cu", t.into_bytes());
        let explanation = dpopt::explain::explain(&file, Some(&options()));
        assert_eq!(explanation.sites.len(), 1, "{name}");
        let a = explanation.sites[0].aggregation.as_ref().unwrap();
        assert_eq!(a.granularity, name);
        assert!(a.per_parent.contains(&"deg".to_string()), "{name}: {a:?}");
        insta::assert_snapshot!(format!("explain_bfs_{name}"), explanation.to_text());
    }
}

#[test]
fn explain_on_the_command_line() {
    let bfs = common::root().join("examples/bfs.cu");
    let out = Command::new(env!("CARGO_BIN_EXE_dpopt"))
        .args(["explain", bfs.to_str().unwrap(), "--message-format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(v["site"], "bfs_parent_1");
    assert_eq!(v["threshold"]["child_threads"], "(deg)");
    assert_eq!(v["knobs"][0]["name"], "DPOPT_THRESHOLD_bfs_parent_1");
    assert_eq!(v["knobs"][0]["value"], "128");
    let out = Command::new(env!("CARGO_BIN_EXE_dpopt"))
        .args(["check", "--explain", bfs.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("site bfs_parent_1 (child `bfs_child`)"),
        "{stdout}"
    );
    assert!(stdout.contains("checks passed:"), "{stdout}");
    // A file with an error explains nothing and exits 1.
    let bad = std::fs::read_to_string(&bfs)
        .unwrap()
        .replace("threshold(128)", "treshold(128)");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.cu");
    std::fs::write(&path, bad).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dpopt"))
        .args(["explain", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
}
