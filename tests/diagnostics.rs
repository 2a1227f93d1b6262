//! Bad input gets a clear error: every diagnostic names FILE:LINE:COL, says
//! what is wrong and how to fix it. The rendered reports are snapshots.

mod common;

use dpopt::source::SourceFile;
use miette::{GraphicalReportHandler, GraphicalTheme};

const CHILD: &str = "__global__ void child(int *a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] = i;\n}\n";

fn parent(body: &str) -> String {
    format!("{CHILD}__global__ void parent(int *a, int n) {{\n{body}\n}}\n")
}

/// Render all diagnostics of `text` without colors.
fn render(text: &str) -> (String, bool) {
    let file = SourceFile::new("bad.cu", text.as_bytes().to_vec());
    let outcome = dpopt::run(&file, "out.cu", true);
    let handler =
        GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor()).with_width(100);
    let mut out = String::new();
    for d in &outcome.diagnostics {
        let report = d.to_report(&file);
        handler.render_report(&mut out, report.as_ref()).unwrap();
    }
    (out, outcome.output.is_some())
}

fn error(name: &str, text: &str, expect: &[&str]) {
    let (rendered, wrote) = render(text);
    assert!(!wrote, "{name}: an output was produced despite errors");
    assert!(
        rendered.contains("bad.cu:"),
        "{name}: no FILE:LINE:COL in\n{rendered}"
    );
    for e in expect {
        assert!(rendered.contains(e), "{name}: `{e}` not in\n{rendered}");
    }
    insta::assert_snapshot!(name, rendered);
}

#[test]
fn misspelt_clause_gets_did_you_mean() {
    error(
        "misspelt",
        &parent("#pragma dp treshold(128)\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        &["bad.cu:6:12", "did you mean `threshold`"],
    );
}

#[test]
fn bad_values() {
    error(
        "zero",
        &parent("#pragma dp threshold(0)\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        &["positive"],
    );
    error(
        "negative",
        &parent("#pragma dp coarsen(-2)\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        &["positive"],
    );
    error(
        "not_integer",
        &parent("#pragma dp coarsen(2.5)\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        &["integer literal"],
    );
    error(
        "duplicate",
        &parent("#pragma dp coarsen(2) coarsen(4)\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        &["given twice"],
    );
    error(
        "no_clause",
        &parent("#pragma dp\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        &["without any clause"],
    );
    error(
        "unclosed",
        &parent("#pragma dp threshold(64\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        &["not closed"],
    );
}

#[test]
fn aggregation_clauses_not_applied_yet() {
    error("consldt", &parent("#pragma dp threshold(64) consldt(multiblock, 8) buffer(halloc, 4096)\n  child<<<(n + 31) / 32, 32>>>(a, n);"), &["cannot apply it yet"]);
    error(
        "granularity",
        &parent("#pragma dp consldt(blok)\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        &["did you mean `block`"],
    );
    error(
        "agg_without_consldt",
        &parent("#pragma dp threshold(64) agg_threshold(8)\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        &["consldt"],
    );
}

#[test]
fn block_aggregation_next_to_a_barrier() {
    // A barrier in the parent would wait for the threads waiting in the
    // aggregated launch's block barrier.
    error(
        "block_barrier",
        &parent("  if (threadIdx.x < n) {\n#pragma dp consldt(block)\n    child<<<(n + 31) / 32, 32>>>(a, n);\n  }\n  __syncthreads();"),
        &["consldt(block)", "__syncthreads", "consldt(warp)"],
    );
    // ... also in a device function the parent calls, or a kernel calling
    // the device function that launches.
    let text = format!(
        "{CHILD}__device__ int sum(int v) {{ return __shfl_down_sync(0xffffffff, v, 1); }}\n\
         __device__ void launch(int *a, int n) {{\n#pragma dp consldt(multiblock, 8)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n\
         __global__ void parent(int *a, int n) {{\n  launch(a, sum(n));\n}}\n"
    );
    error(
        "multiblock_shfl",
        &text,
        &["consldt(multiblock)", "__shfl_down_sync", "`sum`"],
    );
    // Several block-level sites in one kernel share the named barrier: no
    // error (tests/fixtures/two_block_sites.cu runs them on the GPU).
    let text = parent("#pragma dp consldt(block)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n#pragma dp consldt(multiblock, 4)\n  child<<<1, 32>>>(a, n);");
    let file = dpopt::source::SourceFile::new("two.cu", text.into_bytes());
    let outcome = dpopt::run(&file, "out.cu", true);
    assert!(
        !outcome.has_errors() && outcome.output.is_some(),
        "two block-level sites refused"
    );
    assert_eq!(outcome.sites.len(), 2);
}

#[test]
fn fixed_configuration_of_a_child_with_a_barrier() {
    let text = "__global__ void child(int *a, int n) {\n  __shared__ int s[32];\n  s[threadIdx.x] = n;\n  __syncthreads();\n  a[threadIdx.x] = s[31 - threadIdx.x];\n}\n\
                __global__ void parent(int *a, int n) {\n#pragma dp consldt(warp) blocks(64)\n  child<<<1, 32>>>(a, n);\n}\n";
    error(
        "blocks_barrier",
        text,
        &["`blocks` cannot be applied", "__syncthreads", "bad.cu:4:3"],
    );
}

#[test]
fn pragma_placement() {
    error(
        "not_a_launch",
        &parent("#pragma dp threshold(64)\n  a[0] = 1;\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        &["must be followed by a kernel launch"],
    );
    error("two_pragmas", &parent("#pragma dp threshold(64)\n#pragma dp coarsen(2)\n  child<<<(n + 31) / 32, 32>>>(a, n);"), &["two `#pragma dp`"]);
    error(
        "host_launch",
        &format!("{CHILD}int main() {{\n  int *a = 0;\n#pragma dp threshold(64)\n  child<<<4, 32>>>(a, 100);\n}}\n"),
        &["host-side launch"],
    );
    error(
        "undefined_kernel",
        &parent("#pragma dp threshold(64)\n  other<<<(n + 31) / 32, 32>>>(a, n);"),
        &["not defined in this file"],
    );
    error(
        "at_end_of_file",
        &format!("{CHILD}\n#pragma dp threshold(64)\n"),
        &["end of file"],
    );
}

#[test]
fn children_that_cannot_be_serialized() {
    let sync_child = "__global__ void child(int *a, int n) {\n  __shared__ int s[32];\n  s[threadIdx.x] = n;\n  __syncthreads();\n  a[threadIdx.x] = s[0];\n}\n";
    let text = format!("{sync_child}__global__ void parent(int *a, int n) {{\n#pragma dp threshold(64)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n");
    error(
        "shared_memory",
        &text,
        &["bad.cu:2:3", "__shared__", "threshold requested here"],
    );
    let warp_child = "__global__ void child(int *a, int n) {\n  a[threadIdx.x] = __shfl_down_sync(0xffffffff, n, 1);\n}\n";
    let text = format!("{warp_child}__global__ void parent(int *a, int n) {{\n#pragma dp threshold(64)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n");
    error("warp_primitive", &text, &["__shfl_down_sync"]);
    let helper = "__device__ int lane() { return threadIdx.x % 32; }\n__global__ void child(int *a, int n) {\n  a[lane()] = n;\n}\n";
    let text = format!("{helper}__global__ void parent(int *a, int n) {{\n#pragma dp threshold(64)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n");
    error("builtin_in_helper", &text, &["`lane`", "threadIdx"]);
    let ret_sync = "__global__ void child(int *a, int n) {\n  if (threadIdx.x >= n) return;\n  __syncthreads();\n  a[threadIdx.x] = n;\n}\n";
    let text = format!("{ret_sync}__global__ void parent(int *a, int n) {{\n#pragma dp coarsen(2)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n");
    error("return_and_barrier", &text, &["returns early"]);
}

#[test]
fn thread_count_fallback_is_a_warning() {
    let (rendered, wrote) = render(&parent(
        "#pragma dp threshold(64)\n  child<<<(n + 31) >> 5, 32>>>(a, n);",
    ));
    assert!(wrote, "a warning must not stop the output");
    assert!(rendered.contains("child_threads"), "{rendered}");
    insta::assert_snapshot!("fallback_warning", rendered);
}

#[test]
fn explicit_child_threads_silences_the_fallback() {
    let (rendered, wrote) = render(&parent(
        "#pragma dp threshold(64) child_threads(n)\n  child<<<n, 32>>>(a, n);",
    ));
    assert!(wrote);
    assert!(rendered.is_empty(), "{rendered}");
}

#[test]
fn hazards_the_model_finds() {
    // A cooperative-groups barrier after an early return: threads that
    // returned never reach it, so coarsening would deadlock the block.
    let cg_child = "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n__global__ void child(int *a, int n) {\n  cg::thread_block cta = cg::this_thread_block();\n  if (threadIdx.x >= n) return;\n  a[threadIdx.x] = n;\n  cg::sync(cta);\n}\n";
    let text = format!("{cg_child}__global__ void parent(int *a, int n) {{\n#pragma dp coarsen(2)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n");
    error(
        "return_and_cg_sync",
        &text,
        &["returns early", "bad.cu:5:25", "cg::sync(cta)"],
    );
    // Grid synchronization cannot be coarsened.
    let grid_child = "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n__global__ void child(int *a, int n) {\n  cg::grid_group grid = cg::this_grid();\n  a[grid.thread_rank()] = n;\n  grid.sync();\n}\n";
    let text = format!("{grid_child}__global__ void parent(int *a, int n) {{\n#pragma dp coarsen(2)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n");
    error(
        "grid_sync_coarsen",
        &text,
        &["dpopt::not_coarsenable", "bad.cu:4:25", "cg::this_grid()"],
    );
    // A helper defined in another translation unit, after an early return.
    let other = "__device__ void helper(int *a, int i);\n__global__ void child(int *a, int n) {\n  if (threadIdx.x >= n) return;\n  helper(a, threadIdx.x);\n}\n";
    let text = format!("{other}__global__ void parent(int *a, int n) {{\n#pragma dp coarsen(2)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n");
    error(
        "cannot_see_helper",
        &text,
        &[
            "dpopt::cannot_see",
            "bad.cu:4:3",
            "declared here",
            "define `helper` in this file",
        ],
    );
}
