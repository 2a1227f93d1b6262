//! Snapshot tests: the generated code of every example and hazard fixture
//! (and of some corpus programs), reviewable in tests/snapshots/. Run `cargo insta review` after a change.
//!
//! One `#[test]` per program and per example variant, so a mismatch names
//! its case and does not hide the others; `every_program_has_a_test` keeps
//! the list complete.

mod common;

use std::path::Path;

/// The generated code of one program, transformed as the command line does.
fn generated(relative: &str) -> String {
    let path = common::root().join(relative);
    let file = common::load(&path);
    // The headers a program includes are read as the command line does
    // (tests/fixtures/header_child.cu has its children in one).
    let options = dpopt::unit::Options {
        input_dir: Path::new(&file.name).parent().map(Path::to_path_buf),
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
        .unwrap_or_else(|| panic!("{relative} failed:\n{}", errors.join("\n")));
    String::from_utf8_lossy(&output).into_owned()
}

/// One test per program: `name: "path"` (the snapshot is named for the
/// file's stem), and the list of paths for the completeness check.
macro_rules! program_snapshots {
    ($($name:ident: $path:literal,)*) => {
        $(
            #[test]
            fn $name() {
                let stem = common::stem(Path::new($path));
                insta::assert_snapshot!(stem, generated($path));
            }
        )*
        const PROGRAMS: &[&str] = &[$($path,)*];
    };
}

program_snapshots! {
    bezier: "examples/bezier.cu",
    bezier_alloc: "examples/bezier_alloc.cu",
    bfs: "examples/bfs.cu",
    mstf: "examples/mstf.cu",
    mstv: "examples/mstv.cu",
    partition: "examples/partition.cu",
    sp: "examples/sp.cu",
    spmv: "examples/spmv.cu",
    sssp: "examples/sssp.cu",
    stream_compaction: "examples/stream_compaction.cu",
    tc: "examples/tc.cu",
    tree_descendants: "examples/tree_descendants.cu",
    tree_heights: "examples/tree_heights.cu",
    alloc_slices: "tests/fixtures/alloc_slices.cu",
    array_params: "tests/fixtures/array_params.cu",
    block_rounds: "tests/fixtures/block_rounds.cu",
    class_arguments: "tests/fixtures/class_arguments.cu",
    comments_strings: "tests/fixtures/comments_strings.cu",
    crlf: "tests/fixtures/crlf.cu",
    dim3_grid: "tests/fixtures/dim3_grid.cu",
    early_return: "tests/fixtures/early_return.cu",
    barrier_children: "tests/fixtures/barrier_children.cu",
    barrier_callees: "tests/fixtures/barrier_callees.cu",
    tail_levels: "tests/fixtures/tail_levels.cu",
    barrier_then_return: "tests/fixtures/barrier_then_return.cu",
    device_streams: "tests/fixtures/device_streams.cu",
    spaced_chevrons: "tests/fixtures/spaced_chevrons.cu",
    floor_sites: "tests/fixtures/floor_sites.cu",
    floor_join: "tests/fixtures/floor_join.cu",
    floor_tiles: "tests/fixtures/floor_tiles.cu",
    fold_atomics: "tests/fixtures/fold_atomics.cu",
    floor_recursive: "tests/fixtures/floor_recursive.cu",
    floor_recursive_shapes: "tests/fixtures/floor_recursive_shapes.cu",
    forward_decl: "tests/fixtures/forward_decl.cu",
    grid_variable: "tests/fixtures/grid_variable.cu",
    header_child: "tests/fixtures/header_child.cu",
    host_device: "tests/fixtures/host_device.cu",
    ifdef_kernels: "tests/fixtures/ifdef_kernels.cu",
    latin1: "tests/fixtures/latin1.cu",
    loop_launch: "tests/fixtures/loop_launch.cu",
    macros: "tests/fixtures/macros.cu",
    many_launches: "tests/fixtures/many_launches.cu",
    multi_site: "tests/fixtures/multi_site.cu",
    namespaced_children: "tests/fixtures/namespaced_children.cu",
    namespaces: "tests/fixtures/namespaces.cu",
    overflow_large_children: "tests/fixtures/overflow_large_children.cu",
    pending_overflow: "tests/fixtures/pending_overflow.cu",
    promote_chain: "tests/fixtures/promote_chain.cu",
    smem_stream: "tests/fixtures/smem_stream.cu",
    template_aggregation: "tests/fixtures/template_aggregation.cu",
    template_kernel: "tests/fixtures/template_kernel.cu",
    two_block_sites: "tests/fixtures/two_block_sites.cu",
    position_callees: "tests/fixtures/position_callees.cu",
    block_votes: "tests/fixtures/block_votes.cu",
    warp_exchanges: "tests/fixtures/warp_exchanges.cu",
    nested_callees: "tests/fixtures/nested_callees.cu",
    // corpus programs whose split serial versions show a form of their own
    ragged_quantize: "tests/corpus/ragged_quantize.cu",
    grouped_gemm_s8: "tests/corpus/grouped_gemm_s8.cu",
    pyramid_paths: "tests/corpus/pyramid_paths.cu",
    tile_splats: "tests/corpus/tile_splats.cu",
    region_histograms: "tests/corpus/region_histograms.cu",
    row_layernorm: "tests/corpus/row_layernorm.cu",
    block_jacobi_lu: "tests/corpus/block_jacobi_lu.cu",
    guide_block_sums: "tests/corpus/guide_block_sums.cu",
    ragged_softmax: "tests/corpus/ragged_softmax.cu",
    warp_filters: "tests/corpus/warp_filters.cu",
    segment_moments: "tests/corpus/segment_moments.cu",
    ft_norm_templates: "tests/corpus/ft_norm_templates.cu",
    tile_reductions: "tests/corpus/tile_reductions.cu",
}

#[test]
fn every_program_has_a_test() {
    let listed: Vec<String> = PROGRAMS.iter().map(|p| p.to_string()).collect();
    let shipped: Vec<String> = common::corpus()
        .iter()
        .map(|p| common::relative(p))
        .collect();
    assert!(shipped.len() >= 3, "examples are missing");
    let missing: Vec<&String> = shipped.iter().filter(|p| !listed.contains(p)).collect();
    assert!(
        missing.is_empty(),
        "add these programs to program_snapshots! in tests/snapshots.rs: {missing:?}"
    );
    // (and some corpus programs, which tests/corpus.rs lists)
    let stale: Vec<&String> = listed
        .iter()
        .filter(|p| !shipped.contains(p) && !p.starts_with("tests/corpus/"))
        .collect();
    assert!(stale.is_empty(), "listed but not shipped: {stale:?}");
}

/// One clause set on an example: the program's pragmas replaced by `pragma`.
fn with_clauses(name: &str, variant: &str, pragma: &str) {
    let relative = format!("examples/{name}.cu");
    let text = std::fs::read_to_string(common::root().join(&relative)).unwrap();
    let outcome =
        common::transform_bytes(&relative, common::with_pragmas(&text, pragma).as_bytes());
    let output = outcome.output.expect("transforms");
    insta::assert_snapshot!(
        format!("{name}_{variant}"),
        String::from_utf8_lossy(&output)
    );
}

/// A promoted example with `promote` on its launch, with or without its
/// `#pragma dp acquire` (`overlap`).
fn with_promotion(name: &str, variant: &str, promote: &str, overlap: bool) {
    let relative = format!("examples/{name}.cu");
    let text = std::fs::read_to_string(common::root().join(&relative)).unwrap();
    let file = dpopt::source::SourceFile::new(
        &relative,
        common::with_promotion(&text, promote, overlap).into_bytes(),
    );
    let options = dpopt::unit::Options {
        input_dir: Some(common::root().join("examples")),
        ..Default::default()
    };
    let output = dpopt::run_with(&file, Some(&options), "out.cu", true)
        .output
        .expect("transforms");
    insta::assert_snapshot!(
        format!("{name}_{variant}"),
        String::from_utf8_lossy(&output)
    );
}

#[test]
fn stream_compaction_basic() {
    with_promotion(
        "stream_compaction",
        "basic",
        "#pragma dp promote(basic)",
        false,
    );
}

#[test]
fn stream_compaction_basic_overlap() {
    with_promotion(
        "stream_compaction",
        "basic_overlap",
        "#pragma dp promote(basic)",
        true,
    );
}

#[test]
fn partition_aggregate_without_overlap() {
    with_promotion(
        "partition",
        "aggregate",
        "#pragma dp promote(aggregate, 128)",
        false,
    );
}

/// One test per example and clause set: `test_name: example, variant, pragma`.
macro_rules! clause_snapshots {
    ($($test:ident: $name:literal, $variant:literal, $pragma:literal;)*) => {
        $(
            #[test]
            fn $test() {
                with_clauses($name, $variant, $pragma);
            }
        )*
    };
}

clause_snapshots! {
    bfs_threshold: "bfs", "threshold", "#pragma dp threshold(64)";
    bfs_coarsen: "bfs", "coarsen", "#pragma dp coarsen(4)";
    bfs_aggregate: "bfs", "aggregate", "#pragma dp threshold(64) coarsen(4) consldt(warp) agg_threshold(2)";
    bfs_aggregate_grid: "bfs", "aggregate_grid", "#pragma dp threshold(64) consldt(grid) buffer(default, 4096)";
    bfs_aggregate_block: "bfs", "aggregate_block", "#pragma dp threshold(64) consldt(block)";
    bfs_aggregate_multiblock: "bfs", "aggregate_multiblock", "#pragma dp coarsen(4) consldt(multiblock, 8) buffer(default, 4096)";
    bfs_parent_threads: "bfs", "parent_threads", "#pragma dp threshold(64) parent_threads(256)";
    bfs_floor: "bfs", "floor", "#pragma dp threshold(128) coarsen(8) floor";
    bfs_default: "bfs", "default", "#pragma dp";
    tree_heights_default: "tree_heights", "default", "#pragma dp";
    spmv_floor: "spmv", "floor", "#pragma dp threshold(128) floor(4096)";
    bezier_floor: "bezier", "floor", "#pragma dp floor";
    tree_heights_threshold: "tree_heights", "threshold", "#pragma dp threshold(64)";
    tree_heights_coarsen: "tree_heights", "coarsen", "#pragma dp coarsen(4)";
    tree_heights_aggregate: "tree_heights", "aggregate", "#pragma dp threshold(64) coarsen(4) consldt(warp) agg_threshold(2)";
    tree_heights_aggregate_grid: "tree_heights", "aggregate_grid", "#pragma dp threshold(64) consldt(grid) buffer(default, 4096)";
    tree_heights_aggregate_block: "tree_heights", "aggregate_block", "#pragma dp threshold(64) consldt(block)";
    tree_heights_aggregate_multiblock: "tree_heights", "aggregate_multiblock", "#pragma dp coarsen(4) consldt(multiblock, 8) buffer(default, 4096)";
    bezier_threshold: "bezier", "threshold", "#pragma dp threshold(64)";
    bezier_coarsen: "bezier", "coarsen", "#pragma dp coarsen(4)";
    bezier_aggregate: "bezier", "aggregate", "#pragma dp threshold(64) coarsen(4) consldt(warp) agg_threshold(2)";
    bezier_aggregate_grid: "bezier", "aggregate_grid", "#pragma dp threshold(64) consldt(grid) buffer(default, 4096)";
    bezier_aggregate_block: "bezier", "aggregate_block", "#pragma dp threshold(64) consldt(block)";
    bezier_aggregate_multiblock: "bezier", "aggregate_multiblock", "#pragma dp coarsen(4) consldt(multiblock, 8) buffer(default, 4096)";
    bezier_alloc_warp: "bezier_alloc", "alloc_warp", "#pragma dp alloc(warp)";
    bezier_alloc_block: "bezier_alloc", "alloc_block", "#pragma dp alloc(block)";
    bezier_alloc_aggregate: "bezier_alloc", "aggregate", "#pragma dp threshold(64) coarsen(4) consldt(warp)";
    bezier_alloc_aggregate_grid: "bezier_alloc", "aggregate_grid", "#pragma dp consldt(grid)";
    bezier_alloc_aggregate_block_none: "bezier_alloc", "aggregate_block_none", "#pragma dp consldt(block) alloc(none)";
}
