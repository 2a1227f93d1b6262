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
