//! The command-line contract: subcommands, exit codes, stdin/stdout,
//! atomic output, refusing to overwrite the input.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

fn dpopt() -> Command {
    Command::new(env!("CARGO_BIN_EXE_dpopt"))
}

const GOOD: &str = "__global__ void child(int *a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] = i;\n}\n__global__ void parent(int *a, int n) {\n#pragma dp threshold(64)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}\n";

#[test]
fn transform_to_file_and_stdout_agree() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.cu");
    std::fs::write(&input, GOOD).unwrap();
    let out = dir.path().join("out.cu");
    let status = dpopt()
        .args([
            "transform",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(written.contains("dpopt_serial_child"));
    let printed = dpopt()
        .args(["transform", input.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(printed.status.code(), Some(0));
    let printed = String::from_utf8(printed.stdout).unwrap();
    // Same code; only the name of the output in `#line` differs.
    assert_eq!(
        printed.replace("\"<stdout>\"", "X"),
        written.replace(&format!("\"{}\"", out.display()), "X")
    );
}

#[test]
fn stdin_input() {
    let mut child = dpopt()
        .args(["transform", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(GOOD.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("#line 7 \"<stdin>\""));
}

#[test]
fn errors_exit_1_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bad.cu");
    std::fs::write(&input, GOOD.replace("threshold(64)", "treshold(64)")).unwrap();
    let out = dir.path().join("out.cu");
    let run = dpopt()
        .args([
            "transform",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert!(!out.exists(), "an output was written despite an error");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("bad.cu:6:12"), "{stderr}");
    assert!(stderr.contains("did you mean"), "{stderr}");
    // Nothing else was left in the directory either.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn an_existing_output_survives_a_failed_run() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bad.cu");
    std::fs::write(&input, GOOD.replace("threshold(64)", "threshold(0)")).unwrap();
    let out = dir.path().join("out.cu");
    std::fs::write(&out, "previous").unwrap();
    let run = dpopt()
        .args([
            "transform",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert_eq!(run.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous");
}

#[test]
fn output_naming_the_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.cu");
    std::fs::write(&input, GOOD).unwrap();
    let same = dir.path().join(".").join("in.cu");
    let run = dpopt()
        .args([
            "transform",
            input.to_str().unwrap(),
            "-o",
            same.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&input).unwrap(), GOOD);
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(
        dpopt().args(["transform"]).status().unwrap().code(),
        Some(2)
    );
    assert_eq!(
        dpopt()
            .args(["frobnicate", "x.cu"])
            .status()
            .unwrap()
            .code(),
        Some(2)
    );
}

#[test]
fn missing_input_exits_1() {
    let run = dpopt()
        .args(["transform", "/nonexistent/x.cu"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("cannot read"));
}

#[test]
fn check_lists_sites_and_macros() {
    let path = common::root().join("examples/bfs.cu");
    let run = dpopt()
        .args(["check", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0));
    let stdout = String::from_utf8(run.stdout).unwrap();
    assert!(stdout.contains("site bfs_parent_1"), "{stdout}");
    assert!(
        stdout.contains("DPOPT_THRESHOLD_bfs_parent_1=128"),
        "{stdout}"
    );
    assert!(stdout.contains("DPOPT_COARSEN_bfs_parent_1=8"), "{stdout}");
}

#[test]
fn check_lists_promoted_launches_with_their_arguments() {
    let path = common::root().join("examples/partition.cu");
    let run = dpopt()
        .args(["check", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0));
    let stdout = String::from_utf8(run.stdout).unwrap();
    assert!(
        stdout.contains(
            "site partition_step_1 (child `partition_step`): DPOPT_PROMOTE_POOL_partition_step_1=8"
        ),
        "{stdout}"
    );
    // The step's independent prologue, and what its predecessor passes when.
    assert!(stdout.contains("waits at `#pragma dp acquire`"), "{stdout}");
    assert!(stdout.contains("at the release: nsel, nrej"), "{stdout}");
    let json = dpopt()
        .args(["check", path.to_str().unwrap(), "--message-format", "json"])
        .output()
        .unwrap();
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let site = &value["sites"][0];
    assert_eq!(site["site"], "partition_step_1");
    assert!(site["promotion"]
        .as_str()
        .is_some_and(|p| p.starts_with("promote(aggregate)")));
}

#[test]
fn warnings_go_to_stderr_with_exit_0() {
    let text = GOOD.replace("(n + 31) / 32", "(n + 31) >> 5");
    let mut child = dpopt()
        .args(["transform", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning"));
    assert!(!out.stdout.is_empty());
}

#[test]
fn check_shows_what_aggregation_stores_per_parent() {
    let text = std::fs::read_to_string(common::root().join("examples/bfs.cu"))
        .unwrap()
        .replace("threshold(128) coarsen(8)", "threshold(128) consldt(warp)");
    let mut child = dpopt()
        .args(["check", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("consldt(warp): stored per parent: start, deg; passed once: row, col, level, cur, changed"),
        "{stdout}"
    );
}

/// `dpopt check` lists each allocation of a site: aggregated (granularity,
/// calls, frees), or left per thread and why; `--message-format json` too.
#[test]
fn check_shows_what_becomes_of_the_parents_allocations() {
    let path = common::root().join("examples/bezier_alloc.cu");
    let run = dpopt()
        .args(["check", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0));
    let stdout = String::from_utf8(run.stdout).unwrap();
    assert!(
        stdout.contains("    alloc(warp): `buf` (cudaMalloc at "),
        "{stdout}"
    );
    assert!(
        stdout.contains("freed by cudaFree in `bezier_child` at "),
        "{stdout}"
    );
    // Under consldt, a pointer stored in memory stays per thread.
    let corpus = common::root().join("tests/corpus/per_thread_malloc.cu");
    let text = std::fs::read_to_string(corpus)
        .unwrap()
        .replace("threshold(128) coarsen(2)", "consldt(block)");
    let out = run_in(&["check", "--message-format", "json", "-"], Some(&text));
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("dpopt::alloc_not_aggregated"), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let json: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    let allocations = &json["sites"][0]["allocations"];
    assert_eq!(allocations.as_array().map(Vec::len), Some(1), "{json}");
    let line = allocations[0].as_str().unwrap();
    assert!(
        line.starts_with("left per thread: `buf` (<stdin>:43:18): "),
        "{line}"
    );
}

// ------------------------------------------- children in other files ----

const HEADER: &str = "#pragma once\n__device__ inline int twice(int x) { return 2 * x; }\n__global__ void child(int *a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] = twice(i);\n}\n";
const USES_HEADER: &str = "#include <cuda_runtime.h>\n#include \"kernels.cuh\"\n__global__ void parent(int *a, int n) {\n#pragma dp threshold(64) coarsen(2)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}\n";

/// A child defined in a header found with `-I DIR` (not next to the input):
/// without `-I` the error lists every place dpopt looked; with it, the
/// generated code is in the output after the `#include`, its body copied
/// under a `#line` that names the header, and the header is unchanged.
#[test]
fn include_dir_finds_a_child_in_a_header() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::create_dir_all(dir.path().join("inc")).unwrap();
    let input = dir.path().join("src/main.cu");
    let header = dir.path().join("inc/kernels.cuh");
    std::fs::write(&input, USES_HEADER).unwrap();
    std::fs::write(&header, HEADER).unwrap();
    let other = dir.path().join("elsewhere");
    let run = dpopt()
        .args(["transform", input.to_str().unwrap(), "-I"])
        .arg(&other)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert!(run.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&run.stderr).replace('\n', " ");
    let stderr: String = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(stderr.contains("dpopt::unknown_kernel"), "{stderr}");
    assert!(stderr.contains("looked in:"), "{stderr}");
    assert!(stderr.contains("\"kernels.cuh\""), "{stderr}");
    assert!(stderr.contains("elsewhere"), "{stderr}");
    assert!(stderr.contains("--child-source"), "{stderr}");
    for flag in ["-I", "--include-dir"] {
        let run = dpopt()
            .args(["transform", input.to_str().unwrap(), flag])
            .arg(&other)
            .arg(flag)
            .arg(dir.path().join("inc"))
            .output()
            .unwrap();
        assert_eq!(
            run.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let out = String::from_utf8(run.stdout).unwrap();
        let include = out.find("#include \"kernels.cuh\"").unwrap();
        let serial = out
            .find("static __device__ void dpopt_serial_child")
            .unwrap();
        assert!(include < serial, "{out}");
        assert!(out.contains("static __global__ void dpopt_coarse_child"));
        let quoted = format!("#line 3 \"{}\"", header.display());
        assert!(out.contains(&quoted), "{quoted} missing in\n{out}");
        assert!(out.contains("twice(i)"));
    }
    let check = dpopt()
        .args(["check", input.to_str().unwrap(), "-I"])
        .arg(dir.path().join("inc"))
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&check.stdout).contains("site parent_1 (child `child`)"));
    assert_eq!(std::fs::read_to_string(&header).unwrap(), HEADER);
}

/// A child defined in another translation unit, named with
/// `--child-source`: its code is generated after the input's declaration of
/// it; a file that does not exist is an error.
#[test]
fn child_source_finds_a_kernel_of_another_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("parent.cu");
    let child = dir.path().join("child.cu");
    std::fs::write(&input, "__global__ void child(int *a, int n);\n__global__ void parent(int *a, int n) {\n#pragma dp threshold(64)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}\n").unwrap();
    std::fs::write(&child, "__global__ void child(int *a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] = i;\n}\n").unwrap();
    let run = dpopt()
        .args(["transform", input.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let run = dpopt()
        .args(["transform", input.to_str().unwrap(), "--child-source"])
        .arg(&child)
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let out = String::from_utf8(run.stdout).unwrap();
    let declaration = out.find("__global__ void child(int *a, int n);").unwrap();
    let serial = out
        .find("static __device__ void dpopt_serial_child")
        .unwrap();
    let parent = out.find("__global__ void parent").unwrap();
    assert!(declaration < serial && serial < parent, "{out}");
    assert!(
        out.contains(&format!("#line 1 \"{}\"", child.display())),
        "{out}"
    );
    // The child's definition itself is not copied into the output.
    assert_eq!(out.matches("__global__ void child(").count(), 1, "{out}");
    let run = dpopt()
        .args(["transform", input.to_str().unwrap(), "--child-source"])
        .arg(dir.path().join("missing.cu"))
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("missing.cu"));
}

/// A child of a `--child-source` file whose body calls a helper of that
/// file: the body is copied into the output, so the helper must be one the
/// output can call. A helper with external linkage that the input declares
/// is; one it does not declare, a `static` one (NVIDIA's cdpAdvancedQuicksort
/// sample) and an `inline` one are refused, naming the helper, rather than
/// left for nvcc to reject.
#[test]
fn child_source_helpers_the_output_cannot_call_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("parent.cu");
    let child = dir.path().join("child.cu");
    let parent = |declaration: &str| {
        format!("{declaration}__global__ void child(int *a, int n);\n__global__ void parent(int *a, int n) {{\n#pragma dp coarsen(8)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\n")
    };
    let helper_and_child = |specifiers: &str| {
        format!("{specifiers}__device__ void put(int *a, int i) {{ a[i] = i; }}\n__global__ void child(int *a, int n) {{\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) put(a, i);\n}}\n")
    };
    let run = |declaration: &str, specifiers: &str| {
        std::fs::write(&input, parent(declaration)).unwrap();
        std::fs::write(&child, helper_and_child(specifiers)).unwrap();
        let out = dpopt()
            .args(["transform", input.to_str().unwrap(), "--child-source"])
            .arg(&child)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let declared = "__device__ void put(int *a, int i);\n";
    let (code, stderr) = run(declared, "");
    assert_eq!(code, Some(0), "{stderr}");
    let (code, stderr) = run("", "");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("dpopt::child_helper"), "{stderr}");
    assert!(stderr.contains("this file does not declare it"), "{stderr}");
    assert!(stderr.contains("declare `put` in this file"), "{stderr}");
    for specifiers in ["static ", "__forceinline__ ", "inline "] {
        let (code, stderr) = run(declared, specifiers);
        assert_eq!(code, Some(1), "{specifiers}: {stderr}");
        assert!(stderr.contains("dpopt::child_helper"), "{stderr}");
        assert!(stderr.contains("header that both files"), "{stderr}");
        assert!(stderr.contains("child.cu"), "{stderr}");
    }
}

/// A `#pragma dp` in a file the input includes (Show-Me-DP's wrappers
/// `#include` the kernel files) is not applied, and says so: the output is
/// the input byte for byte, with a warning naming the included file.
#[test]
fn pragmas_in_included_files_are_reported_as_not_applied() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("main.cu");
    let kernels = dir.path().join("kernels.cu");
    std::fs::write(
        &input,
        "#include \"kernels.cu\"\nint main() { return 0; }\n",
    )
    .unwrap();
    std::fs::write(&kernels, "__global__ void child(int *a) { a[threadIdx.x] = 1; }\n__global__ void parent(int *a) {\n#pragma dp threshold(64)\n  child<<<1, 32>>>(a);\n}\n").unwrap();
    let run = dpopt()
        .args(["transform", input.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert_eq!(run.stdout, std::fs::read(&input).unwrap());
    assert!(stderr.contains("dpopt::pragma_not_applied"), "{stderr}");
    assert!(stderr.contains("kernels.cu:3:1"), "{stderr}");
}

/// An error about code in a header names the header's path, line and
/// column, with a note at the pragma in the input.
#[test]
fn diagnostics_in_a_header_name_the_header() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("main.cu");
    std::fs::write(&input, USES_HEADER).unwrap();
    let header = dir.path().join("kernels.cuh");
    std::fs::write(
        &header,
        "__global__ void child(int *a, int n) {\n  __shared__ int s[32];\n  s[threadIdx.x] = __match_any_sync(0xffffffffu, n);\n  __syncthreads();\n  a[0] = s[0];\n}\n",
    )
    .unwrap();
    let run = dpopt()
        .args(["check", input.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    let location = format!("{}:3:20", header.display());
    assert!(
        stderr.contains(&location),
        "{location} missing in\n{stderr}"
    );
    assert!(
        stderr.contains("__match_any_sync(0xffffffffu, n)"),
        "{stderr}"
    );
    // The pragma's note is shown in the input.
    assert!(
        stderr.contains("#pragma dp threshold(64) coarsen(2)"),
        "{stderr}"
    );
}

// ------------------------------------------------- compiler conventions ----

fn run_in(args: &[&str], stdin: Option<&str>) -> std::process::Output {
    let mut child = dpopt()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        // A usage error exits before reading: a broken pipe is fine.
        let _ = input.write_all(text.as_bytes());
    }
    drop(input);
    child.wait_with_output().unwrap()
}

#[cfg(unix)]
fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// A new output gets `0666 & ~umask` (what `File::create` gives here); an
/// existing output keeps its mode; the write stays atomic.
#[cfg(unix)]
#[test]
fn outputs_get_the_usual_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.cu");
    std::fs::write(&input, GOOD).unwrap();
    let probe = dir.path().join("probe");
    std::fs::File::create(&probe).unwrap();
    let usual = mode(&probe);
    let out = dir.path().join("out.cu");
    let run = run_in(
        &[
            "transform",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(run.status.code(), Some(0));
    assert_eq!(mode(&out), usual, "new output: {:o}", mode(&out));
    for kept in [0o664, 0o640, 0o600] {
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(kept)).unwrap();
        let run = run_in(
            &[
                "transform",
                input.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ],
            None,
        );
        assert_eq!(run.status.code(), Some(0));
        assert_eq!(mode(&out), kept, "existing output's mode changed");
        assert!(std::fs::read_to_string(&out)
            .unwrap()
            .contains("dpopt_serial_child"));
    }
    // No temporary file left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
}

#[test]
fn dash_o_dash_writes_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.cu");
    std::fs::write(&input, GOOD).unwrap();
    let run = run_in(&["transform", input.to_str().unwrap(), "-o", "-"], None);
    assert_eq!(run.status.code(), Some(0));
    let out = String::from_utf8(run.stdout).unwrap();
    assert!(out.contains("dpopt_serial_child"), "{out}");
    assert!(out.contains("\"<stdout>\""), "{out}");
    assert!(!dir.path().join("-").exists());
}

#[test]
fn several_inputs_with_out_dir_or_one_output_each() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.cu");
    let b = dir.path().join("b.cu");
    std::fs::write(&a, GOOD).unwrap();
    std::fs::write(&b, "int main() { return 0; }\n").unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let run = run_in(
        &[
            "transform",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--out-dir",
            out.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(std::fs::read_to_string(out.join("a.cu"))
        .unwrap()
        .contains("dpopt_serial_child"));
    assert_eq!(
        std::fs::read_to_string(out.join("b.cu")).unwrap(),
        "int main() { return 0; }\n"
    );
    let (oa, ob) = (dir.path().join("oa.cu"), dir.path().join("ob.cu"));
    let run = run_in(
        &[
            "transform",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "-o",
            oa.to_str().unwrap(),
            "-o",
            ob.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(run.status.code(), Some(0));
    assert!(std::fs::read_to_string(&oa)
        .unwrap()
        .contains("dpopt_serial_child"));
    assert!(std::fs::read_to_string(&ob)
        .unwrap()
        .starts_with("int main"));
    // Usage errors: two inputs without a destination each, one -o for two,
    // --out-dir over the inputs' own directory.
    for args in [
        vec!["transform", a.to_str().unwrap(), b.to_str().unwrap()],
        vec![
            "transform",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "-o",
            oa.to_str().unwrap(),
        ],
        vec![
            "transform",
            a.to_str().unwrap(),
            "--out-dir",
            dir.path().to_str().unwrap(),
        ],
    ] {
        let run = run_in(&args, None);
        assert_eq!(run.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&run.stderr).contains("dpopt: error:"));
    }
    assert_eq!(std::fs::read_to_string(&a).unwrap(), GOOD);
    // One input with an error: exit 1, the other is still written.
    let bad = dir.path().join("bad.cu");
    std::fs::write(&bad, GOOD.replace("threshold(64)", "treshold(64)")).unwrap();
    let out2 = dir.path().join("out2");
    std::fs::create_dir(&out2).unwrap();
    let run = run_in(
        &[
            "transform",
            bad.to_str().unwrap(),
            a.to_str().unwrap(),
            "--out-dir",
            out2.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(run.status.code(), Some(1));
    assert!(!out2.join("bad.cu").exists());
    assert!(out2.join("a.cu").exists());
}

const WITH_MACRO: &str = "#ifndef TH\n#define TH 64\n#endif\n__global__ void child(int *a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] = i;\n}\n__global__ void parent(int *a, int n) {\n#pragma dp threshold(TH)\n  child<<<1, 32>>>(a, n);\n}\n";

/// `-D NAME=VALUE` is a constant where dpopt evaluates one (the threshold
/// of a launch of a known size), and a name the clauses may use.
#[test]
fn define_sets_constants_and_names() {
    let run = run_in(
        &["check", "-", "--message-format", "short"],
        Some(WITH_MACRO),
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0));
    assert!(
        stderr.contains("dpopt::threshold_decided") && stderr.contains("fewer than threshold(64)"),
        "{stderr}"
    );
    let run = run_in(
        &["check", "-", "--message-format", "short", "-DTH=16"],
        Some(WITH_MACRO),
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("at least threshold(16)"), "{stderr}");
    let unseen = WITH_MACRO.replace("#ifndef TH\n#define TH 64\n#endif\n", "");
    let run = run_in(&["check", "-", "--message-format", "short"], Some(&unseen));
    assert!(String::from_utf8_lossy(&run.stderr).contains("dpopt::unseen_name"));
    let run = run_in(
        &["check", "-", "--message-format", "short", "-D", "TH=128"],
        Some(&unseen),
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!stderr.contains("dpopt::unseen_name"), "{stderr}");
    assert!(stderr.contains("fewer than threshold(128)"), "{stderr}");
    let run = run_in(&["check", "-", "-D", "1X=2"], Some(&unseen));
    assert_eq!(run.status.code(), Some(2));
}

#[test]
fn short_format_is_one_line_per_diagnostic() {
    let bad = GOOD.replace("threshold(64)", "treshold(64) coarsen(0)");
    let run = run_in(
        &[
            "check",
            "-",
            "--stdin-name",
            "src/k.cu",
            "--message-format",
            "short",
        ],
        Some(&bad),
    );
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8(run.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].starts_with("src/k.cu:6:12: error: unknown clause `treshold`"),
        "{stderr}"
    );
    assert!(lines[0].contains("[dpopt::unknown_clause]"));
    assert!(lines[1].starts_with("src/k.cu:6:"), "{stderr}");
    assert!(lines[1].contains(": error: "), "{stderr}");
}

#[test]
fn json_format_is_one_object_per_line() {
    let bad = GOOD.replace("threshold(64)", "treshold(64)");
    let run = run_in(
        &[
            "transform",
            "-",
            "--stdin-name",
            "k.cu",
            "--message-format",
            "json",
        ],
        Some(&bad),
    );
    assert_eq!(run.status.code(), Some(1));
    assert!(run.stdout.is_empty());
    let stderr = String::from_utf8(run.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(v["code"], "dpopt::unknown_clause");
    assert_eq!(v["severity"], "error");
    assert_eq!(v["file"], "k.cu");
    assert_eq!(v["line"], 6);
    assert_eq!(v["column"], 12);
    assert_eq!(v["message"], "unknown clause `treshold` in `#pragma dp`");
    assert_eq!(v["help"], "did you mean `threshold`?");
    assert_eq!(v["spans"][0]["line"], 6);
    assert_eq!(v["spans"][0]["column"], 12);
    assert_eq!(v["spans"][0]["end_column"], 20);
    assert_eq!(v["spans"][0]["primary"], true);
    // miette's own fields are kept.
    assert_eq!(v["labels"][0]["span"]["length"], 8);
}

#[test]
fn check_says_when_there_is_no_pragma() {
    let run = run_in(
        &["check", "-", "--stdin-name", "plain.cu"],
        Some("int main() { return 0; }\n"),
    );
    assert_eq!(run.status.code(), Some(0));
    let stdout = String::from_utf8(run.stdout).unwrap();
    assert!(
        stdout.contains("plain.cu: no `#pragma dp` launch site"),
        "{stdout}"
    );
}

#[test]
fn stdin_name_names_standard_input() {
    let run = run_in(&["transform", "-", "--stdin-name", "src/k.cu"], Some(GOOD));
    assert_eq!(run.status.code(), Some(0));
    let out = String::from_utf8(run.stdout).unwrap();
    assert!(out.contains("#line 7 \"src/k.cu\""), "{out}");
    assert!(!out.contains("<stdin>"), "{out}");
}

/// An output that cannot be written is reported under its own name, never
/// the temporary file's.
#[test]
fn write_errors_name_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.cu");
    std::fs::write(&input, GOOD).unwrap();
    let out = dir.path().join("missing/out.cu");
    let run = run_in(
        &[
            "transform",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8(run.stderr).unwrap();
    assert!(
        stderr.contains(&format!("cannot write `{}`", out.display())),
        "{stderr}"
    );
    assert!(!stderr.contains(".dpopt-"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn completions_and_man_page() {
    let run = run_in(&["completions", "bash"], None);
    assert_eq!(run.status.code(), Some(0));
    let script = String::from_utf8(run.stdout).unwrap();
    assert!(script.contains("_dpopt()"), "{script}");
    assert!(script.contains("--message-format"));
    let run = run_in(&["man"], None);
    assert_eq!(run.status.code(), Some(0));
    let page = String::from_utf8(run.stdout).unwrap();
    assert!(page.contains(".TH dpopt"), "{page}");
    assert!(page.contains("transform"));
    let dir = tempfile::tempdir().unwrap();
    let run = run_in(&["man", "--out-dir", dir.path().to_str().unwrap()], None);
    assert_eq!(run.status.code(), Some(0));
    let page = std::fs::read_to_string(dir.path().join("dpopt-transform.1")).unwrap();
    assert!(page.contains("\\-\\-out\\-dir"), "{page}");
    assert!(dir.path().join("dpopt-nvcc.1").exists());
}

/// `--depfile`: each output depends on its input and the headers dpopt
/// read (a child kernel's body is copied from them); it needs output files.
#[test]
fn depfile_lists_the_files_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::create_dir_all(dir.path().join("inc dir")).unwrap();
    let input = dir.path().join("src/main.cu");
    std::fs::write(&input, USES_HEADER).unwrap();
    std::fs::write(dir.path().join("inc dir/kernels.cuh"), HEADER).unwrap();
    let out = dir.path().join("out.cu");
    let dep = dir.path().join("out.d");
    let run = dpopt()
        .args([
            "transform",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .arg("--depfile")
        .arg(&dep)
        .arg("-I")
        .arg(dir.path().join("inc dir"))
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(&dep).unwrap();
    let expected = format!(
        "{}: \\\n  {} \\\n  {}\n",
        out.display(),
        input.display(),
        dir.path()
            .join("inc dir/kernels.cuh")
            .display()
            .to_string()
            .replace(' ', "\\ ")
    );
    assert_eq!(text, expected);
    let run = dpopt()
        .args(["transform", input.to_str().unwrap(), "--depfile"])
        .arg(&dep)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
}

/// With `--message-format json`, `check` lists each input's sites as one
/// JSON line on standard output, and an unreadable input is a JSON
/// diagnostic too.
#[test]
fn check_in_json() {
    let bfs = common::root().join("examples/bfs.cu");
    let run = run_in(
        &[
            "check",
            bfs.to_str().unwrap(),
            "/nonexistent/x.cu",
            "--message-format",
            "json",
        ],
        None,
    );
    assert_eq!(run.status.code(), Some(1));
    let stdout = String::from_utf8(run.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(v["sites"][0]["site"], "bfs_parent_1");
    assert_eq!(
        v["sites"][0]["macros"][0]["name"],
        "DPOPT_THRESHOLD_bfs_parent_1"
    );
    assert_eq!(v["sites"][0]["macros"][0]["value"], "128");
    assert_eq!(v["errors"], false);
    let stderr = String::from_utf8(run.stderr).unwrap();
    let e: serde_json::Value = serde_json::from_str(stderr.trim()).unwrap();
    assert_eq!(e["severity"], "error");
    assert!(e["message"].as_str().unwrap().contains("/nonexistent/x.cu"));
}

#[test]
fn out_dir_names_standard_input_with_stdin_name() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_in(
        &[
            "transform",
            "-",
            "--stdin-name",
            "src/k.cu",
            "--out-dir",
            dir.path().to_str().unwrap(),
        ],
        Some(GOOD),
    );
    assert_eq!(run.status.code(), Some(0));
    let out = std::fs::read_to_string(dir.path().join("k.cu")).unwrap();
    assert!(out.contains("#line 7 \"src/k.cu\""), "{out}");
    let run = run_in(
        &["transform", "-", "--out-dir", dir.path().to_str().unwrap()],
        Some(GOOD),
    );
    assert_eq!(run.status.code(), Some(2));
}

/// No output may overwrite another input (which would then be read
/// transformed) or another output.
#[test]
fn outputs_never_overwrite_other_inputs_or_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.cu");
    let b = dir.path().join("b.cu");
    std::fs::write(&a, GOOD).unwrap();
    std::fs::write(&b, GOOD).unwrap();
    let c = dir.path().join("c.cu");
    for outs in [[&b, &c], [&c, &c]] {
        let run = run_in(
            &[
                "transform",
                a.to_str().unwrap(),
                b.to_str().unwrap(),
                "-o",
                outs[0].to_str().unwrap(),
                "-o",
                outs[1].to_str().unwrap(),
            ],
            None,
        );
        assert_eq!(run.status.code(), Some(2), "{outs:?}");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), GOOD);
        assert!(!c.exists());
    }
}

/// `-D` selects `#if` branches where that is certain: a threshold defined in
/// two branches is a constant once the command line picks one.
#[test]
fn define_selects_if_branches() {
    let text = WITH_MACRO.replace(
        "#ifndef TH\n#define TH 64\n#endif\n",
        "#ifdef SMALL_TH\n#define TH 16\n#else\n#define TH 64\n#endif\n",
    );
    let run = run_in(&["check", "-", "--message-format", "short"], Some(&text));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0));
    assert!(!stderr.contains("threshold_decided"), "{stderr}");
    let run = run_in(
        &["check", "-", "--message-format", "short", "-DSMALL_TH"],
        Some(&text),
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("at least threshold(16)"), "{stderr}");
}

const CDP1: &str = "__global__ void child(int *a) { a[threadIdx.x] = 1; }\n__global__ void parent(int *a, int *sum) {\n  child<<<1, 32>>>(a);\n  cudaDeviceSynchronize();\n  atomicAdd(sum, a[threadIdx.x]);\n}\n";

#[test]
fn cdp1_sync_warns_without_migrate_sync_and_migrates_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("cdp1.cu");
    std::fs::write(&input, CDP1).unwrap();
    let plain = dpopt()
        .args(["transform", input.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(plain.status.code(), Some(0));
    assert_eq!(plain.stdout, CDP1.as_bytes(), "unchanged without the flag");
    let stderr = String::from_utf8_lossy(&plain.stderr);
    assert!(stderr.contains("cdp1.cu:4:3"), "{stderr}");
    assert!(stderr.contains("--migrate-sync"), "{stderr}");
    let migrated = dpopt()
        .args(["transform", "--migrate-sync", input.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(migrated.status.code(), Some(0));
    assert!(migrated.stderr.is_empty());
    let out = String::from_utf8(migrated.stdout).unwrap();
    assert!(out.contains("cudaStreamTailLaunch"));
    assert!(!out.contains("\n  cudaDeviceSynchronize();"));
    // A sync it cannot migrate is an error with the flag: exit 1, no output.
    let nested = dir.path().join("nested.cu");
    std::fs::write(
        &nested,
        CDP1.replace(
            "  cudaDeviceSynchronize();\n",
            "  for (int r = 0; r < 2; ++r) { cudaDeviceSynchronize(); }\n",
        ),
    )
    .unwrap();
    let refused = dpopt()
        .args(["transform", "--migrate-sync", nested.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(refused.stdout.is_empty());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("dpopt::postwork_nested"));
    // `check --migrate-sync` lists the sync sites.
    let checked = dpopt()
        .args(["check", "--migrate-sync", input.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(checked.status.code(), Some(0));
    let listing = String::from_utf8(checked.stdout).unwrap();
    assert!(
        listing.contains("cdp1.cu:4:3: sync site parent_sync1 (kernel `parent`)"),
        "{listing}"
    );
}

#[test]
fn code_that_the_definitions_rule_out_does_not_refuse_floor_or_migration() {
    // Show-Me-DP's shape: a CDP1 wait and free under `#if BUFFER_ALLOCATOR
    // == 0`, built with -DBUFFER_ALLOCATOR=2.
    let src = "__global__ void child(int *a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] = i;\n}\n__global__ void parent(int *a, int **buf, int n) {\n#pragma dp threshold(32) floor\n  child<<<(n + 31) / 32, 32>>>(a, n);\n#if BUFFER_ALLOCATOR == 0\n  if (threadIdx.x == 0) {\n    cudaDeviceSynchronize();\n    free(*buf);\n  }\n#endif\n}\nvoid run(int *a, int **buf, int n) { parent<<<1, 32>>>(a, buf, n); }\n";
    let run = run_in(&["check", "-", "--message-format", "short"], Some(src));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("dpopt::floor") && stderr.contains("cudaDeviceSynchronize"),
        "{stderr}"
    );
    let run = run_in(
        &[
            "check",
            "-",
            "--message-format",
            "short",
            "-DBUFFER_ALLOCATOR=2",
            "--migrate-sync",
        ],
        Some(src),
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
}

#[test]
fn floor_takes_a_final_wait_that_migration_drops() {
    // cms-patatrack's shape: the CDP1 wait ends the kernel.
    let src = "__global__ void child(int *a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] = i;\n}\n__global__ void parent(int *a, int n) {\n#pragma dp threshold(32) floor\n  child<<<(n + 31) / 32, 32>>>(a, n);\n  cudaDeviceSynchronize();\n}\nvoid run(int *a, int n) { parent<<<1, 32>>>(a, n); }\n";
    let run = run_in(&["check", "-", "--message-format", "short"], Some(src));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("dpopt::floor") && stderr.contains("--migrate-sync"),
        "{stderr}"
    );
    let run = run_in(&["transform", "-", "--migrate-sync"], Some(src));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        out.contains("dpopt_floor_dropped_wait();"),
        "the copy's wait is a stand-in"
    );
    assert!(
        out.contains("cudaDeviceSynchronize() (CDP1) dropped"),
        "the parent's wait is dropped"
    );
    assert_eq!(out.matches("cudaDeviceSynchronize();").count(), 0, "{out}");
}
