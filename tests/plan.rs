//! Snapshots of the analyzer's `Plan`: everything the transform renders is
//! decided there (defaults, pools, knobs, the serial bound, deferral), so a
//! change of a decision shows here before it shows in the generated code.

mod common;

fn plan_of(path: &str, pragma: Option<&str>) -> String {
    let file = common::load(&common::root().join(path));
    let file = match pragma {
        Some(p) => dpopt::source::SourceFile::new(
            file.name.clone(),
            common::with_pragmas(&String::from_utf8_lossy(&file.bytes), p).into_bytes(),
        ),
        None => file,
    };
    let (plan, diagnostics) = dpopt::plan_text(&file);
    assert!(
        !diagnostics.iter().any(|d| d.is_error()),
        "{path}: {diagnostics:?}"
    );
    plan
}

#[test]
fn plan_of_bfs() {
    insta::assert_snapshot!(plan_of("examples/bfs.cu", None));
}

#[test]
fn plan_of_a_recursive_child() {
    insta::assert_snapshot!(plan_of("examples/tree_heights.cu", None));
}

#[test]
fn plan_of_multiblock_with_defaults() {
    insta::assert_snapshot!(plan_of(
        "examples/bfs.cu",
        Some("#pragma dp threshold(64) consldt(multiblock) threads(64)")
    ));
}

#[test]
fn plan_of_grid_with_a_pool_size() {
    insta::assert_snapshot!(plan_of(
        "examples/tree_heights.cu",
        Some("#pragma dp threshold(64) consldt(grid) buffer(default, 4096)")
    ));
}

#[test]
fn plan_of_a_template_child() {
    insta::assert_snapshot!(plan_of("tests/fixtures/template_aggregation.cu", None));
}

/// `parent_threads(N)` belongs to the kernel: the site states it
/// (`kernel_clauses`), the plan holds it per kernel (`kernels`).
#[test]
fn plan_of_parent_threads() {
    insta::assert_snapshot!(plan_of(
        "examples/bfs.cu",
        Some("#pragma dp threshold(64) parent_threads(256)")
    ));
}
