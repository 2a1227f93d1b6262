//! Snapshot tests: the generated code of every example and hazard fixture,
//! reviewable in tests/snapshots/. Run `cargo insta review` after a change.

mod common;

#[test]
fn generated_code_of_every_program() {
    let corpus = common::corpus();
    assert!(corpus.len() >= 3, "examples are missing");
    for path in corpus {
        let file = common::load(&path);
        // The headers a program includes are read as the command line does
        // (tests/fixtures/header_child.cu has its children in one).
        let options = dpopt::unit::Options {
            input_dir: std::path::Path::new(&file.name)
                .parent()
                .map(std::path::Path::to_path_buf),
            ..Default::default()
        };
        let outcome = dpopt::run_with(&file, Some(&options), "out.cu", true);
        let errors: Vec<String> = outcome
            .diagnostics
            .iter()
            .map(|d| format!("{:?}", d.to_report(outcome.source(&file))))
            .collect();
        let output = outcome
            .output
            .unwrap_or_else(|| panic!("{} failed:\n{}", path.display(), errors.join("\n")));
        insta::assert_snapshot!(common::stem(&path), String::from_utf8_lossy(&output));
    }
}

#[test]
fn each_clause_alone_on_the_examples() {
    for name in ["bfs", "tree_heights", "bezier"] {
        let path = common::root().join(format!("examples/{name}.cu"));
        let text = std::fs::read_to_string(&path).unwrap();
        for (variant, pragma) in [
            ("threshold", "#pragma dp threshold(64)"),
            ("coarsen", "#pragma dp coarsen(4)"),
            (
                "aggregate",
                "#pragma dp threshold(64) coarsen(4) consldt(warp) agg_threshold(2)",
            ),
            (
                "aggregate_grid",
                "#pragma dp threshold(64) consldt(grid) buffer(default, 4096)",
            ),
            ("aggregate_block", "#pragma dp threshold(64) consldt(block)"),
            (
                "aggregate_multiblock",
                "#pragma dp coarsen(4) consldt(multiblock, 8) buffer(default, 4096)",
            ),
        ] {
            let outcome = common::transform_bytes(
                &format!("examples/{name}.cu"),
                common::with_pragmas(&text, pragma).as_bytes(),
            );
            let output = outcome.output.expect("transforms");
            insta::assert_snapshot!(
                format!("{name}_{variant}"),
                String::from_utf8_lossy(&output)
            );
        }
    }
}
