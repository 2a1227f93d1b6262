//! Bad input gets a clear error: every diagnostic names FILE:LINE:COL, says
//! what is wrong and how to fix it. One test per case (`diagnostic_tests!`):
//! the first diagnostic's code, the line and column where its primary span
//! starts and the exact text under it; the rendered report is a snapshot.

mod common;

use dpopt::source::SourceFile;
use miette::{GraphicalReportHandler, GraphicalTheme};

const CHILD: &str = "__global__ void child(int *a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] = i;\n}\n";
/// A child that shares memory between its threads behind a barrier.
const SYNC_CHILD: &str = "__global__ void child(int *a, int n) {\n  __shared__ int s[32];\n  s[threadIdx.x] = n;\n  __syncthreads();\n  a[threadIdx.x] = s[0];\n}\n";
const CG: &str = "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n";
/// A child that frees the buffer its parent allocated.
const FREEING_CHILD: &str = "__global__ void fill(float *buf, int n) {\n  if (threadIdx.x < n) buf[threadIdx.x] = n;\n  if (threadIdx.x == 0) free(buf);\n}\n";

/// A parent that allocates `buf` per thread and launches `fill` over it.
fn allocating(before_launch: &str, pragma: &str, after: &str) -> String {
    format!("{FREEING_CHILD}__global__ void parent(float **keep, int n) {{\n  float *buf = (float *)malloc(n * sizeof(float));\n{before_launch}\n#pragma dp {pragma}\n  fill<<<1, 32>>>(buf, n);\n}}\n{after}")
}

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

/// `text` is refused: its first diagnostic is `code` with its primary span
/// at `at` (LINE:COL) covering exactly `span`; the rendering says each of
/// `expect` and is the snapshot `name`.
fn error(name: &str, text: &str, code: &str, at: &str, span: &str, expect: &[&str]) {
    let file = SourceFile::new("bad.cu", text.as_bytes().to_vec());
    let outcome = dpopt::run(&file, "out.cu", true);
    let first = outcome
        .diagnostics
        .first()
        .unwrap_or_else(|| panic!("{name}: no diagnostic"));
    let found = (
        first.kind.code(),
        file.location(first.span.start()),
        &text[first.span.range()],
    );
    assert_eq!(found, (code, format!("bad.cu:{at}"), span), "{name}");
    let (rendered, wrote) = render(text);
    assert!(!wrote, "{name}: an output was produced despite errors");
    assert!(
        rendered.contains(&format!("bad.cu:{at}")),
        "{name}: no FILE:LINE:COL in\n{rendered}"
    );
    for e in expect {
        assert!(rendered.contains(e), "{name}: `{e}` not in\n{rendered}");
    }
    insta::assert_snapshot!(name, rendered);
}

/// One test per refused input: `name { input, code, at, span, says }`; the
/// snapshot is named for the test.
macro_rules! diagnostic_tests {
    ($($name:ident {
        input: $input:expr,
        code: $code:literal,
        at: $at:literal,
        span: $span:literal,
        says: [$($says:literal),* $(,)?] $(,)?
    })*) => {
        $(
            #[test]
            fn $name() {
                error(stringify!($name), &$input, $code, $at, $span, &[$($says),*]);
            }
        )*
    };
}

/// A chain kernel: `body` before the launch, `pragma` on it.
fn chain(body: &str, pragma: &str, launch: &str) -> String {
    format!(
        "__global__ void chain(int *a, int n, int acc) {{\n{body}\n  if (n > 1) {{\n{pragma}\n    {launch}\n  }}\n}}\n"
    )
}

diagnostic_tests! {
    promote_other_kernel {
        input: parent("#pragma dp promote(basic)\n  child<<<1, 32>>>(a, n);"),
        code: "dpopt::promote_not_recursive",
        at: "7:3",
        span: "child",
        says: ["launches itself", "the launch is in this function"],
    }
    promote_two_blocks {
        input: chain("", "#pragma dp promote(aggregate)", "chain<<<n, 32>>>(a, n - 1, acc);"),
        code: "dpopt::promote_grid",
        at: "5:13",
        span: "n",
        says: ["single-block", "one block"],
    }
    promote_block_computed {
        input: chain("  int b = a[0];", "#pragma dp promote(basic)", "chain<<<1, b>>>(a, n - 1, acc);"),
        code: "dpopt::promote_config",
        at: "5:16",
        span: "b",
        says: ["block size", "known when the step starts"],
    }
    promote_pool_block_varies {
        input: chain("", "#pragma dp promote(aggregate)", "chain<<<1, n * 32>>>(a, n - 1, acc);"),
        code: "dpopt::promote_config",
        at: "5:16",
        span: "n",
        says: ["the same in every step"],
    }
    acquire_uses_postponed {
        input: chain("  int v = a[n] + acc;\n#pragma dp acquire", "#pragma dp promote(aggregate)", "chain<<<1, 32>>>(a, n - 1, acc + v);"),
        code: "dpopt::acquire_postponed",
        at: "2:18",
        span: "acc",
        says: ["the previous step computes it here", "move the use of `acc`"],
    }
    promote_with_threshold {
        input: chain("", "#pragma dp promote(basic) threshold(64)", "chain<<<1, 32>>>(a, n - 1, acc);"),
        code: "dpopt::clause_conflict",
        at: "4:27",
        span: "threshold(64)",
        says: ["cannot be combined"],
    }
    misspelt {
        input: parent("#pragma dp treshold(128)\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        code: "dpopt::unknown_clause",
        at: "6:12",
        span: "treshold",
        says: ["did you mean `threshold`"],
    }
    zero {
        input: parent("#pragma dp threshold(0)\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        code: "dpopt::clause_value",
        at: "6:22",
        span: "0",
        says: ["positive"],
    }
    negative {
        input: parent("#pragma dp coarsen(-2)\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        code: "dpopt::clause_value",
        at: "6:20",
        span: "-2",
        says: ["positive"],
    }
    not_integer {
        input: parent("#pragma dp coarsen(2.5)\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        code: "dpopt::clause_value",
        at: "6:20",
        span: "2.5",
        says: ["integer literal"],
    }
    duplicate {
        input: parent("#pragma dp coarsen(2) coarsen(4)\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        code: "dpopt::duplicate_clause",
        at: "6:23",
        span: "coarsen(4)",
        says: ["given twice"],
    }
    unclosed {
        input: parent("#pragma dp threshold(64\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        code: "dpopt::clause_arguments",
        at: "6:12",
        span: "threshold(64",
        says: ["not closed"],
    }
    consldt {
        input: parent("#pragma dp threshold(64) consldt(multiblock, 8) buffer(halloc, 4096)\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        code: "dpopt::not_implemented",
        at: "6:49",
        span: "buffer(halloc, 4096)",
        says: ["cannot apply it yet"],
    }
    granularity {
        input: parent("#pragma dp consldt(blok)\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        code: "dpopt::clause_value",
        at: "6:20",
        span: "blok",
        says: ["did you mean `block`"],
    }
    agg_without_consldt {
        input: parent("#pragma dp threshold(64) agg_threshold(8)\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        code: "dpopt::needs_consldt",
        at: "6:26",
        span: "agg_threshold(8)",
        says: ["consldt"],
    }
    block_barrier {
        input: parent("  if (threadIdx.x < n) {\n#pragma dp consldt(block)\n    child<<<(n + 31) / 32, 32>>>(a, n);\n  }\n  __syncthreads();"),
        code: "dpopt::block_aggregation",
        at: "10:3",
        span: "__syncthreads",
        says: ["consldt(block)", "consldt(warp)"],
    }
    multiblock_shfl {
        input: format!("{CHILD}__device__ int sum(int v) {{ return __shfl_down_sync(0xffffffff, v, 1); }}\n__device__ void launch(int *a, int n) {{\n#pragma dp consldt(multiblock, 8)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n__global__ void parent(int *a, int n) {{\n  launch(a, sum(n));\n}}\n"),
        code: "dpopt::block_aggregation",
        at: "5:36",
        span: "__shfl_down_sync",
        says: ["consldt(multiblock)", "`sum`"],
    }
    blocks_barrier {
        input: "__global__ void child(int *a, int n) {\n  __shared__ int s[32];\n  s[threadIdx.x] = n;\n  __syncthreads();\n  a[threadIdx.x] = s[31 - threadIdx.x];\n}\n__global__ void parent(int *a, int n) {\n#pragma dp consldt(warp) blocks(64)\n  child<<<1, 32>>>(a, n);\n}\n",
        code: "dpopt::fixed_configuration",
        at: "4:3",
        span: "__syncthreads",
        says: ["`blocks` cannot be applied"],
    }
    parent_threads_over_a_block {
        input: parent("#pragma dp threshold(64) parent_threads(1025)\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        code: "dpopt::clause_value",
        at: "6:41",
        span: "1025",
        says: ["at most 1024"],
    }
    parent_threads_macro_over_a_block {
        input: format!("#define PT 2048\n{}", parent("#pragma dp threshold(64) parent_threads(PT)\n  child<<<(n + 31) / 32, 32>>>(a, n);")),
        code: "dpopt::clause_value",
        at: "7:26",
        span: "parent_threads(PT)",
        says: ["at most 1024", "`PT` is 2048"],
    }
    parent_threads_differ_through_a_call {
        input: format!("{CHILD}__device__ void launch(int *a, int n) {{\n#pragma dp threshold(64) parent_threads(256)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n__global__ void parent(int *a, int n) {{\n  launch(a, n);\n#pragma dp coarsen(2) parent_threads(512)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n"),
        code: "dpopt::parent_threads_differ",
        at: "11:1",
        span: "#pragma dp coarsen(2) parent_threads(512)",
        says: ["`parent_threads(256)`", "`parent_threads(512)`", "the kernel that runs both"],
    }
    not_a_launch {
        input: parent("#pragma dp threshold(64)\n  a[0] = 1;\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        code: "dpopt::no_launch",
        at: "7:3",
        span: "a",
        says: ["must be followed by a kernel launch"],
    }
    two_pragmas {
        input: parent("#pragma dp threshold(64)\n#pragma dp coarsen(2)\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        code: "dpopt::duplicate_pragma",
        at: "7:1",
        span: "#pragma dp coarsen(2)",
        says: ["two `#pragma dp`"],
    }
    host_launch {
        input: format!("{CHILD}int main() {{\n  int *a = 0;\n#pragma dp threshold(64)\n  child<<<4, 32>>>(a, 100);\n}}\n"),
        code: "dpopt::host_launch",
        at: "8:3",
        span: "child<<<4, 32>>>(a, 100);",
        says: ["host-side launch"],
    }
    undefined_kernel {
        input: parent("#pragma dp threshold(64)\n  other<<<(n + 31) / 32, 32>>>(a, n);"),
        code: "dpopt::unknown_kernel",
        at: "7:3",
        span: "other",
        says: ["not defined in this file"],
    }
    at_end_of_file {
        input: format!("{CHILD}\n#pragma dp threshold(64)\n"),
        code: "dpopt::no_launch",
        at: "6:1",
        span: "#pragma dp threshold(64)",
        says: ["end of file"],
    }
    barrier_under_thread_condition {
        input: format!("{}__global__ void parent(int *a, int n) {{\n#pragma dp threshold(64)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n", SYNC_CHILD.replace("  __syncthreads();", "  if (threadIdx.x < n) {\n    __syncthreads();\n  }")),
        code: "dpopt::barrier_split",
        at: "4:7",
        span: "threadIdx",
        says: ["threshold requested here", "`threadIdx`", "compute the condition from parameters"],
    }
    barrier_in_callee {
        input: format!("__device__ void wait_all() {{ __syncthreads(); }}\n{}__global__ void parent(int *a, int n) {{\n#pragma dp threshold(64)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n", SYNC_CHILD.replace("  __syncthreads();", "  (void)wait_all();")),
        code: "dpopt::barrier_split",
        at: "1:30",
        span: "__syncthreads",
        says: ["calls `wait_all`", "called as a statement"],
    }
    warp_primitive {
        input: format!("__global__ void child(int *a, int n) {{\n  a[threadIdx.x] = __match_any_sync(0xffffffff, n);\n}}\n__global__ void parent(int *a, int n) {{\n#pragma dp threshold(64)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n"),
        code: "dpopt::not_serializable",
        at: "2:20",
        span: "__match_any_sync",
        says: [],
    }
    builtin_in_helper {
        input: format!("struct Pos {{ __device__ int lane() const {{ return threadIdx.x % 32; }} }};\n__global__ void child(int *a, int n) {{\n  a[Pos().lane()] = n;\n}}\n__global__ void parent(int *a, int n) {{\n#pragma dp threshold(64)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n"),
        code: "dpopt::builtin_in_callee",
        at: "3:11",
        span: "lane",
        says: ["`lane`", "threadIdx", "it is a member function"],
    }
    builtin_in_helper_aggregated {
        input: format!("__global__ void leaf(int *a) {{ a[0] = 1; }}\n__device__ int gid(int *a) {{\n  if (a == nullptr) leaf<<<1, 1>>>(a);\n  return blockIdx.x * blockDim.x + threadIdx.x;\n}}\n__global__ void child(int *a, int n) {{\n  if (gid(a) < n) a[gid(a)] = n;\n}}\n__global__ void parent(int *a, int n) {{\n#pragma dp consldt(grid)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n"),
        code: "dpopt::builtin_in_callee",
        at: "7:7",
        span: "gid",
        says: ["`consldt` cannot be applied", "`gid`", "it launches kernels"],
    }
    builtin_two_calls_away {
        input: format!("struct Pos {{ __device__ int lane() const {{ return threadIdx.x % 32; }} }};\n__device__ int slot(int n) {{ return Pos().lane() + n; }}\n__global__ void child(int *a, int n) {{\n  a[slot(n)] = n;\n}}\n__global__ void parent(int *a, int n) {{\n#pragma dp threshold(64)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n"),
        code: "dpopt::builtin_in_callee",
        at: "4:5",
        span: "slot",
        says: ["which leads to `lane`", "which calls `lane`", "it is a member function"],
    }
    return_and_barrier {
        input: format!("__global__ void child(int *a, int n) {{\n  if (threadIdx.x >= n) return;\n  __syncthreads();\n  a[threadIdx.x] = n;\n}}\n__global__ void parent(int *a, int n) {{\n#pragma dp coarsen(2)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n"),
        code: "dpopt::return_with_barrier",
        at: "2:25",
        span: "return",
        says: ["returns early"],
    }
    return_and_cg_sync {
        input: format!("{CG}__global__ void child(int *a, int n) {{\n  cg::thread_block cta = cg::this_thread_block();\n  if (threadIdx.x >= n) return;\n  a[threadIdx.x] = n;\n  cg::sync(cta);\n}}\n__global__ void parent(int *a, int n) {{\n#pragma dp coarsen(2)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n"),
        code: "dpopt::return_with_barrier",
        at: "5:25",
        span: "return",
        says: ["returns early", "cg::sync(cta)"],
    }
    grid_sync_coarsen {
        input: format!("{CG}__global__ void child(int *a, int n) {{\n  cg::grid_group grid = cg::this_grid();\n  a[grid.thread_rank()] = n;\n  grid.sync();\n}}\n__global__ void parent(int *a, int n) {{\n#pragma dp coarsen(2)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n"),
        code: "dpopt::not_coarsenable",
        at: "4:25",
        span: "cg::this_grid()",
        says: [],
    }
    floor_recursive_with_another_launch {
        input: "__global__ void leaf(int *a) { a[threadIdx.x] = 1; }\n__global__ void tree(int *a, int n) {\n  if (n > 1) {\n#pragma dp threshold(8) floor\n    tree<<<1, 32>>>(a, n / 2);\n#pragma dp floor\n    leaf<<<1, 32>>>(a);\n  }\n}\nvoid run(int *a) { tree<<<1, 32>>>(a, 64); }\n",
        code: "dpopt::floor",
        at: "5:5",
        span: "tree",
        says: ["launches itself", "its only one", "remove `floor`"],
    }
    floor_device_runtime {
        input: format!("{CHILD}__global__ void parent(int *a, int n) {{\n  cudaEvent_t e;\n  cudaEventCreateWithFlags(&e, cudaEventDisableTiming);\n#pragma dp threshold(64) floor\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\nvoid run(int *a, int n) {{ parent<<<1, 32>>>(a, n); }}\n"),
        code: "dpopt::floor",
        at: "7:3",
        span: "cudaEventCreateWithFlags",
        says: ["device runtime", "`floor` requested here"],
    }
    floor_in_device_function {
        input: format!("{CHILD}__device__ void launch(int *a, int n) {{\n#pragma dp threshold(64) floor\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n"),
        code: "dpopt::floor",
        at: "5:17",
        span: "launch",
        says: ["`__global__` kernel"],
    }
    floor_host_launch_first {
        input: format!("{CHILD}__global__ void parent(int *a, int n);\nvoid run(int *a, int n) {{ parent<<<1, 32>>>(a, n); }}\n__global__ void parent(int *a, int n) {{\n#pragma dp threshold(64) floor\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n"),
        code: "dpopt::floor",
        at: "6:27",
        span: "parent<<<1, 32>>>(a, n);",
        says: ["comes before the definition"],
    }
    floor_dynamic_shared_memory {
        input: format!("{CHILD}__global__ void parent(int *a, int n) {{\n#pragma dp threshold(64) floor\n  child<<<(n + 31) / 32, 32, n * 4>>>(a, n);\n}}\n"),
        code: "dpopt::floor",
        at: "7:30",
        span: "n * 4",
        says: ["not a constant"],
    }
    floor_child_launches {
        input: format!("{CHILD}__global__ void mid(int *a, int n) {{\n  child<<<1, 32>>>(a, n);\n}}\n__global__ void parent(int *a, int n) {{\n#pragma dp threshold(64) floor\n  mid<<<(n + 31) / 32, 32>>>(a, n);\n}}\nvoid run(int *a, int n) {{ parent<<<1, 32>>>(a, n); }}\n"),
        code: "dpopt::floor",
        at: "10:3",
        span: "mid",
        says: ["drain grid", "launches `child`"],
    }
    alloc_pointer_stored {
        input: allocating("  keep[threadIdx.x] = buf;", "alloc(warp)", ""),
        code: "dpopt::alloc_escape",
        at: "7:23",
        span: "buf",
        says: ["allocated here", "`buf` is stored", "never be freed", "alloc(none)"],
    }
    alloc_pointer_passed_on_in_the_child {
        input: format!("__device__ void keep(float *p);\n__global__ void fill(float *buf, int n) {{\n  buf[threadIdx.x] = n;\n  keep(buf);\n}}\n__global__ void parent(int n) {{\n  float *buf;\n  if (cudaMalloc((void **)&buf, n * sizeof(float)) != cudaSuccess) return;\n#pragma dp alloc(block)\n  fill<<<1, 32>>>(buf, n);\n}}\n"),
        code: "dpopt::alloc_escape",
        at: "4:8",
        span: "buf",
        says: ["in `fill`", "`buf` is passed to", "allocated here"],
    }
    alloc_freed_by_a_child_launched_elsewhere {
        input: allocating("", "alloc(warp)", "__global__ void refill(float *p) {\n  fill<<<1, 32>>>(p, 4);\n}\n"),
        code: "dpopt::alloc_free",
        at: "3:25",
        span: "free",
        says: ["frees a slice", "also launched here", "launch `fill` only from this site"],
    }
    alloc_nothing_allocated {
        input: parent("#pragma dp alloc(warp)\n  child<<<(n + 31) / 32, 32>>>(a, n);"),
        code: "dpopt::alloc_not_found",
        at: "6:12",
        span: "alloc(warp)",
        says: ["none of these arguments", "cudaMalloc(&p, size)"],
    }
    alloc_block_next_to_a_barrier {
        input: allocating("  __syncthreads();", "alloc(block)", ""),
        code: "dpopt::alloc_block",
        at: "7:3",
        span: "__syncthreads",
        says: ["block-level allocation here", "alloc(warp)"],
    }
    cannot_see_helper {
        input: format!("__device__ void helper(int *a, int i);\n__global__ void child(int *a, int n) {{\n  if (threadIdx.x >= n) return;\n  helper(a, threadIdx.x);\n}}\n__global__ void parent(int *a, int n) {{\n#pragma dp coarsen(2)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n"),
        code: "dpopt::cannot_see",
        at: "4:3",
        span: "helper",
        says: ["declared here", "define `helper` in this file"],
    }
}

#[test]
fn several_block_level_sites_share_the_barrier() {
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
fn allocations_consldt_cannot_follow_stay_per_thread_with_a_warning() {
    let (rendered, wrote) = render(&allocating(
        "  keep[threadIdx.x] = buf;",
        "consldt(warp)",
        "",
    ));
    assert!(wrote, "a warning must not stop the output");
    assert!(rendered.contains("left as a per-thread"), "{rendered}");
    assert!(rendered.contains("`alloc(none)`"), "{rendered}");
    insta::assert_snapshot!("alloc_left_per_thread", rendered);
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

/// A note far from the primary span (a child's barrier, the pragma many lines
/// below) gets a snippet of its own: one snippet would show every line
/// between them (NVIDIA's cdpAdvancedQuicksort: 248 lines for one error).
#[test]
fn far_notes_get_their_own_snippet() {
    let filler = "  a[0] += n;\n".repeat(30);
    let text = format!(
        "__global__ void child(int *a, int n) {{\n  __shared__ int s[32];\n  s[threadIdx.x] = __match_any_sync(0xffffffffu, n);\n  __syncthreads();\n{filler}  a[threadIdx.x] = s[0];\n}}\n__global__ void parent(int *a, int n) {{\n#pragma dp threshold(64)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n"
    );
    let (rendered, wrote) = render(&text);
    assert!(!wrote);
    assert!(rendered.contains("dpopt::not_serializable"), "{rendered}");
    // The filler lines between the shuffle (line 3) and the pragma (line 38)
    // are not shown; the pragma is, in a note of its own.
    assert!(!rendered.contains(" 20 │"), "{rendered}");
    assert!(
        rendered.contains("note: threshold requested here"),
        "{rendered}"
    );
    assert!(
        rendered.contains(" 38 │ #pragma dp threshold(64)"),
        "{rendered}"
    );
    assert!(rendered.lines().count() < 40, "{rendered}");
}

/// A recursion coarsened without a fallback warns about the pending-launch
/// limit (dpopt::coarsen_pending), unless coarsening changes nothing, the
/// launch has a serial fallback (`threshold`'s, or the serial version a
/// child that can run serially gets for that), or the file sets the limit.
#[test]
fn coarsened_recursion_warns_about_the_pending_limit() {
    // a warp match: the child cannot run serially
    let recursion = |pragma: &str, host: &str| {
        format!("__global__ void refine(int *a, int d) {{\n  a[threadIdx.x] = __match_any_sync(0xffffffffu, d);\n  if (threadIdx.x == 0 && d < 3) {{\n#pragma dp {pragma}\n    refine<<<4, 32>>>(a, d + 1);\n  }}\n}}\n{host}")
    };
    let serializable = |pragma: &str| {
        format!("__global__ void refine(int *a, int d) {{\n  if (threadIdx.x == 0 && d < 3) {{\n#pragma dp {pragma}\n    refine<<<4, 32>>>(a, d + 1);\n  }}\n}}\n")
    };
    for pragma in ["coarsen(4)", "consldt(warp)", "consldt(grid)"] {
        let (rendered, wrote) = render(&serializable(pragma));
        assert!(wrote, "{pragma}: {rendered}");
        assert!(!rendered.contains("_pending"), "{pragma}: {rendered}");
    }
    let (rendered, wrote) = render(&recursion("coarsen(4)", ""));
    assert!(wrote, "a warning must not stop the output");
    assert!(rendered.contains("dpopt::coarsen_pending"), "{rendered}");
    assert!(
        rendered.contains("cudaLimitDevRuntimePendingLaunchCount"),
        "{rendered}"
    );
    for (pragma, host) in [
        ("coarsen(1)", ""),
        (
            "coarsen(4)",
            "int main() { cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 32768); }\n",
        ),
    ] {
        let (rendered, wrote) = render(&recursion(pragma, host));
        assert!(wrote);
        assert!(
            !rendered.contains("coarsen_pending"),
            "{pragma}: {rendered}"
        );
    }
}

/// `floor` on one of a recursion's two launches (a quicksort's left and right
/// halves): the help does not say to annotate the other launch too, which the
/// recursive floor refuses.
#[test]
fn floor_on_one_of_two_recursive_launches_says_why_it_cannot_work() {
    let text = "__global__ void qsort(int *a, int lo, int hi, int depth) {\n  if (hi - lo < 2 || depth > 8) return;\n  int mid = (lo + hi) / 2;\n#pragma dp floor\n  qsort<<<1, 1>>>(a, lo, mid, depth + 1);\n  qsort<<<1, 1>>>(a, mid, hi, depth + 1);\n}\nint main() { qsort<<<1, 1>>>(nullptr, 0, 10, 0); }\n";
    let (rendered, wrote) = render(text);
    assert!(!wrote, "{rendered}");
    // the report wraps its lines
    let words = rendered.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("dpopt::floor"), "{rendered}");
    assert!(words.contains("may launch only once"), "{rendered}");
    assert!(!words.contains("on every launch"), "{rendered}");
}

/// Values read from shared memory are not pointers to it: no
/// dpopt::shared_argument for an element, a member or a `sizeof`.
#[test]
fn shared_values_passed_to_a_child_are_no_shared_pointers() {
    let text = "struct P { int n; };\n__global__ void child(int a, int b, unsigned long c) {}\n__global__ void parent() {\n  __shared__ int buf[32];\n  __shared__ P s;\n  buf[threadIdx.x] = threadIdx.x;\n  __syncthreads();\n#pragma dp threshold(16)\n  child<<<1, 32>>>(buf[threadIdx.x], s.n, sizeof(buf));\n}\n";
    let (rendered, wrote) = render(text);
    assert!(wrote, "{rendered}");
    assert!(!rendered.contains("shared_argument"), "{rendered}");
    // A shared scalar named whole is its value (a block's count, summed
    // with shared atomics); its address is a pointer.
    let scalar = "__global__ void child(int *out, int n) {}\n__global__ void parent(int *out) {\n  __shared__ int total;\n  if (threadIdx.x == 0) total = 0;\n  __syncthreads();\n  atomicAdd(&total, 1);\n  __syncthreads();\n#pragma dp threshold(16)\n  child<<<1, 32>>>(out, total);\n}\n";
    let (rendered, wrote) = render(scalar);
    assert!(wrote, "{rendered}");
    assert!(!rendered.contains("shared_argument"), "{rendered}");
    let (rendered, _) = render(&scalar.replace("(out, total)", "(&total, 1)"));
    assert!(rendered.contains("dpopt::shared_argument"), "{rendered}");
}

/// A child that shares memory and waits at a barrier at the top of its body
/// runs serially split at the barrier: no diagnostic.
#[test]
fn a_child_with_a_barrier_at_its_top_is_split() {
    let (rendered, wrote) = render(&format!(
        "{SYNC_CHILD}__global__ void parent(int *a, int n) {{\n#pragma dp threshold(64)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n"
    ));
    assert!(wrote, "{rendered}");
    assert!(rendered.is_empty(), "{rendered}");
}
