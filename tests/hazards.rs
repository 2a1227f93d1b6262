//! Regression fixtures of the hazard model (src/hazard.rs): one small CUDA
//! program per barrier, warp operation, grid synchronization, shared-memory
//! use or unseen call in tests/hazards/. A refused program must be refused
//! with the exact diagnostic code, at the exact line:column of the
//! construct, with the construct as the primary span; an accepted one must
//! be transformed without a diagnostic.

mod common;

use dpopt::diagnostic::Diagnostic;
use dpopt::source::SourceFile;
use std::process::Command;

/// The fixture `name`, its `#pragma dp` lines replaced by `pragma` if given,
/// and the outcome of dpopt on it.
fn run(name: &str, pragma: Option<&str>) -> (SourceFile, dpopt::Outcome) {
    let path = common::root().join("tests/hazards").join(name);
    let text = std::fs::read_to_string(&path).expect("fixture");
    let text = match pragma {
        Some(p) => common::with_pragmas(&text, p),
        None => text,
    };
    run_text(name, &text)
}

fn run_text(name: &str, text: &str) -> (SourceFile, dpopt::Outcome) {
    let file = SourceFile::new(format!("tests/hazards/{name}"), text.as_bytes().to_vec());
    let outcome = dpopt::run(&file, "out.cu", true);
    (file, outcome)
}

/// `line:col` of a diagnostic's primary span, and its text.
fn place(file: &SourceFile, d: &Diagnostic) -> (String, String) {
    let (line, col) = file.line_col(d.span.start());
    (
        format!("{line}:{col}"),
        file.view[d.span.range()].to_string(),
    )
}

/// The texts of a diagnostic's notes.
fn notes(file: &SourceFile, d: &Diagnostic) -> Vec<(String, String)> {
    d.notes
        .iter()
        .map(|(span, label)| (file.view[span.range()].to_string(), label.clone()))
        .collect()
}

/// The errors must be exactly `expected`: (code, line:col, span text), in
/// source order. Returns them for further checks.
fn refused(
    file: &SourceFile,
    outcome: &dpopt::Outcome,
    expected: &[(&str, &str, &str)],
) -> Vec<Diagnostic> {
    let errors: Vec<Diagnostic> = outcome
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .cloned()
        .collect();
    let found: Vec<(String, String, String)> = errors
        .iter()
        .map(|d| {
            let (at, text) = place(file, d);
            (d.kind.code().to_string(), at, text)
        })
        .collect();
    let expected: Vec<(String, String, String)> = expected
        .iter()
        .map(|(c, a, t)| (c.to_string(), a.to_string(), t.to_string()))
        .collect();
    assert_eq!(found, expected, "{}", file.name);
    assert!(
        outcome.output.is_none(),
        "{}: output despite errors",
        file.name
    );
    errors
}

fn accepted(file: &SourceFile, outcome: &dpopt::Outcome) -> String {
    let rendered: Vec<String> = outcome
        .diagnostics
        .iter()
        .map(|d| format!("{:?}", d.to_report(file)))
        .collect();
    assert!(
        outcome.diagnostics.is_empty(),
        "{}: {}",
        file.name,
        rendered.join("\n")
    );
    String::from_utf8(outcome.output.clone().expect("output")).unwrap()
}

#[test]
fn cooperative_groups_sync_after_an_early_return_is_not_coarsened() {
    // The barrier is reached through `cta.sync()` after the return: once
    // missed, this was accepted with no word.
    let (file, outcome) = run("cg_sync_return_coarsen.cu", None);
    let errors = refused(
        &file,
        &outcome,
        &[("dpopt::return_with_barrier", "8:15", "return")],
    );
    assert_eq!(
        notes(&file, &errors[0]),
        [
            ("cg::sync(cta)".to_string(), "barrier".to_string()),
            (
                "#pragma dp coarsen(2)".to_string(),
                "coarsen requested here".to_string()
            ),
        ]
    );
    // The command line fails too.
    let out = Command::new(env!("CARGO_BIN_EXE_dpopt"))
        .arg("check")
        .arg(common::root().join("tests/hazards/cg_sync_return_coarsen.cu"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("dpopt::return_with_barrier"), "{stderr}");
    // Serially in one thread: the barrier itself is the problem.
    let (file, outcome) = run(
        "cg_sync_return_coarsen.cu",
        Some("#pragma dp threshold(64)"),
    );
    // Thresholded, the serial version splits the body at `cg::sync(cta)`,
    // a barrier of the whole block (docs/PRAGMA.md, "Children with
    // barriers"); the thread that returned skips the stretch after it.
    accepted(&file, &outcome);
}

#[test]
fn cta_sync_through_a_group_variable() {
    // `cta.sync()` on a group of `this_thread_block()`: the serial version
    // splits the body there.
    let (file, outcome) = run("cta_sync_threshold.cu", None);
    let out = accepted(&file, &outcome);
    assert!(out.contains("runs split at its 1 barrier"), "{out}");
    let (file, outcome) = run(
        "cta_sync_threshold.cu",
        Some("#pragma dp consldt(warp) threads(32)"),
    );
    refused(
        &file,
        &outcome,
        &[("dpopt::fixed_configuration", "10:3", "cta.sync()")],
    );
    // No early return: coarsening keeps the barrier of each original block.
    let (file, outcome) = run("cta_sync_threshold.cu", Some("#pragma dp coarsen(2)"));
    accepted(&file, &outcome);
}

#[test]
fn this_thread_block_sync_written_inline() {
    let (file, outcome) = run("this_thread_block_sync_blocks.cu", None);
    refused(
        &file,
        &outcome,
        &[(
            "dpopt::fixed_configuration",
            "9:3",
            "cg::this_thread_block().sync()",
        )],
    );
    let (file, outcome) = run(
        "this_thread_block_sync_blocks.cu",
        Some("#pragma dp consldt(warp)"),
    );
    accepted(&file, &outcome);
}

#[test]
fn grid_sync_is_neither_serialized_nor_coarsened() {
    let (file, outcome) = run("grid_sync.cu", None);
    refused(
        &file,
        &outcome,
        &[
            ("dpopt::not_serializable", "6:25", "cg::this_grid()"),
            ("dpopt::not_coarsenable", "6:25", "cg::this_grid()"),
        ],
    );
    // Coarsening alone, without an early return.
    let (file, outcome) = run("grid_sync.cu", Some("#pragma dp coarsen(2)"));
    refused(
        &file,
        &outcome,
        &[("dpopt::not_coarsenable", "6:25", "cg::this_grid()")],
    );
}

#[test]
fn syncthreads_or_next_to_block_aggregation() {
    let (file, outcome) = run("syncthreads_or_block.cu", None);
    refused(
        &file,
        &outcome,
        &[("dpopt::block_aggregation", "15:7", "__syncthreads_or")],
    );
    let (file, outcome) = run("syncthreads_or_block.cu", Some("#pragma dp consldt(warp)"));
    accepted(&file, &outcome);
}

#[test]
fn syncwarp_is_a_warp_operation() {
    // Where every thread of the block reaches it, the serial version splits
    // at it as at a barrier.
    let (file, outcome) = run("syncwarp_threshold.cu", None);
    accepted(&file, &outcome);
    // With coarsening too (the serial version and the coarsened block).
    let (file, outcome) = run(
        "syncwarp_threshold.cu",
        Some("#pragma dp threshold(128) coarsen(2)"),
    );
    accepted(&file, &outcome);
    let (file, outcome) = run(
        "syncwarp_threshold.cu",
        Some("#pragma dp consldt(warp) threads(16)"),
    );
    refused(
        &file,
        &outcome,
        &[("dpopt::fixed_configuration", "5:3", "__syncwarp")],
    );
    // blocks(N) keeps each original block's warps.
    let (file, outcome) = run(
        "syncwarp_threshold.cu",
        Some("#pragma dp consldt(warp) blocks(16)"),
    );
    accepted(&file, &outcome);
}

#[test]
fn tiled_partition_shuffle_splits_and_coarsens() {
    // The split's serial version reproduces a tile's shuffle (threads that
    // returned are inactive lanes) and writes its rank with the builtins.
    let (file, outcome) = run("tile_shfl_threshold.cu", None);
    accepted(&file, &outcome);
    // A warp operation after an early return is no coarsening hazard.
    let (file, outcome) = run("tile_shfl_threshold.cu", Some("#pragma dp coarsen(2)"));
    accepted(&file, &outcome);
    // A tile's operation the split does not reproduce keeps the child from
    // running serially.
    let (file, outcome) = run("tile_match_threshold.cu", None);
    refused(
        &file,
        &outcome,
        &[(
            "dpopt::not_serializable",
            "13:24",
            "tile.match_any(__float_as_int(v))",
        )],
    );
}

#[test]
fn barrier_in_inline_assembly() {
    let (file, outcome) = run("asm_bar_sync.cu", None);
    refused(
        &file,
        &outcome,
        &[(
            "dpopt::barrier_split",
            "6:3",
            "asm volatile(\"bar.sync 0;\" ::: \"memory\")",
        )],
    );
    let (file, outcome) = run("asm_bar_sync.cu", Some("#pragma dp coarsen(2)"));
    let errors = refused(
        &file,
        &outcome,
        &[("dpopt::return_with_barrier", "4:15", "return")],
    );
    assert_eq!(
        notes(&file, &errors[0])[0].0,
        "asm volatile(\"bar.sync 0;\" ::: \"memory\")"
    );
}

#[test]
fn barrier_two_calls_away() {
    let (file, outcome) = run("helper_two_levels.cu", None);
    let errors = refused(
        &file,
        &outcome,
        &[("dpopt::return_with_barrier", "15:15", "return")],
    );
    let note_texts: Vec<(String, String)> = notes(&file, &errors[0]);
    assert_eq!(
        note_texts,
        [
            ("__syncthreads".to_string(), "barrier".to_string()),
            ("relax".to_string(), "calls `relax`".to_string()),
            ("exchange".to_string(), "which calls `exchange`".to_string()),
            (
                "#pragma dp coarsen(2)".to_string(),
                "coarsen requested here".to_string()
            ),
        ]
    );
    // The barrier's own place: line 4 of `exchange`.
    let (line, col) = file.line_col(errors[0].notes[0].0.start());
    assert_eq!((line, col), (4, 3));
    // Thresholded: the split runs `relax` in place, and in it `exchange`,
    // which `relax` calls.
    let (file, outcome) = run("helper_two_levels.cu", Some("#pragma dp threshold(64)"));
    let out = accepted(&file, &outcome);
    assert!(out.contains("/* `relax` run in place"), "{out}");
    assert!(out.contains("/* `exchange` run in place"), "{out}");
}

#[test]
fn extern_shared_memory_through_a_pointer() {
    let (file, outcome) = run("extern_shared_pointer.cu", None);
    let errors = refused(&file, &outcome, &[("dpopt::barrier_split", "5:48", "smem")]);
    assert_eq!(notes(&file, &errors[0])[0].0, "scratch");
    // Coarsened: the block waits before the next original block reuses the
    // shared memory, found through the helper.
    let (file, outcome) = run("extern_shared_pointer.cu", Some("#pragma dp coarsen(2)"));
    let output = accepted(&file, &outcome);
    assert!(
        output.contains("__syncthreads();  /* the next original block reuses"),
        "no barrier between coarsened blocks"
    );
}

#[test]
fn function_defined_in_another_translation_unit() {
    let (file, outcome) = run("other_tu_helper.cu", None);
    let errors = refused(
        &file,
        &outcome,
        &[("dpopt::cannot_see", "8:3", "accumulate")],
    );
    let notes = notes(&file, &errors[0]);
    assert_eq!(notes[0].0, "accumulate");
    assert_eq!(
        file.line_col(errors[0].notes[0].0.start()),
        (3, 17),
        "declaration"
    );
    assert_eq!(notes[1].0, "return");
    let (file, outcome) = run("other_tu_helper.cu", Some("#pragma dp threshold(64)"));
    refused(
        &file,
        &outcome,
        &[("dpopt::cannot_see", "8:3", "accumulate")],
    );
    // Without the early return coarsening needs nothing from the helper.
    let path = common::root().join("tests/hazards/other_tu_helper.cu");
    let text = std::fs::read_to_string(path).unwrap().replace(
        "if (i >= n) return;\n  accumulate",
        "if (i < n)\n  accumulate",
    );
    let (file, outcome) = run_text("other_tu_helper.cu", &text);
    accepted(&file, &outcome);
}

#[test]
fn call_through_a_function_pointer() {
    let (file, outcome) = run("function_pointer.cu", None);
    refused(&file, &outcome, &[("dpopt::cannot_see", "9:21", "op")]);
    let (file, outcome) = run("function_pointer.cu", Some("#pragma dp coarsen(2)"));
    accepted(&file, &outcome);
}

#[test]
fn cub_block_collective() {
    let (file, outcome) = run("cub_block_reduce.cu", None);
    refused(
        &file,
        &outcome,
        &[("dpopt::fixed_configuration", "5:11", "cub::BlockReduce")],
    );
    let (file, outcome) = run("cub_block_reduce.cu", Some("#pragma dp threshold(64)"));
    refused(
        &file,
        &outcome,
        &[("dpopt::barrier_split", "5:11", "cub::BlockReduce")],
    );
}

#[test]
fn library_calls_and_helpers_without_barriers_are_accepted() {
    let (file, outcome) = run("library_calls_ok.cu", None);
    let output = accepted(&file, &outcome);
    assert!(output.contains("dpopt_serial_weigh"));
    assert!(output.contains("dpopt_coarse_weigh"));
    // Under every clause that needs to see the child.
    for pragma in [
        "#pragma dp threshold(64) consldt(warp) threads(32) blocks(8)",
        "#pragma dp consldt(block)",
    ] {
        let (file, outcome) = run("library_calls_ok.cu", Some(pragma));
        accepted(&file, &outcome);
    }
}

#[test]
fn coarsening_a_barrier_without_return_is_accepted() {
    let (file, outcome) = run("barrier_no_return_ok.cu", None);
    let output = accepted(&file, &outcome);
    assert!(output.contains("dpopt_coarse_reverse_block"));
}

#[test]
fn every_fixture_is_covered() {
    let source = include_str!("hazards.rs");
    let dir = common::root().join("tests/hazards");
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(
            source.contains(&format!("\"{name}\"")),
            "{name} has no test"
        );
    }
}
