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
        "__global__ void child(int *a, int n) {\n  __shared__ int s[32];\n  s[threadIdx.x] = n;\n  __syncthreads();\n  a[0] = s[0];\n}\n",
    )
    .unwrap();
    let run = dpopt()
        .args(["check", input.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    let location = format!("{}:2:3", header.display());
    assert!(
        stderr.contains(&location),
        "{location} missing in\n{stderr}"
    );
    assert!(stderr.contains("__shared__ int s[32];"), "{stderr}");
    // The pragma's note is shown in the input.
    assert!(
        stderr.contains("#pragma dp threshold(64) coarsen(2)"),
        "{stderr}"
    );
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
