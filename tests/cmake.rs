//! `cmake/dpopt.cmake` and `dpopt nvcc` as a CMake compiler launcher, with a
//! real CMake and nvcc (no GPU needed): the example project of
//! `examples/cmake/` configures, its CUDA source goes through dpopt, and it
//! compiles, device-links and links for sm_90 with the device runtime.
//!
//! CMake: `$DPOPT_CMAKE`, else `.venv-nvcc/bin/cmake` (scripts/setup-nvcc.sh
//! installs it), else `cmake` on PATH. Without CMake or nvcc these tests
//! report themselves skipped and pass, unless DPOPT_REQUIRE_NVCC=1 (set by
//! .ci/run) says the tools must be there.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn cmake() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("DPOPT_CMAKE") {
        return Some(PathBuf::from(p));
    }
    let venv = common::root().join(".venv-nvcc/bin/cmake");
    if venv.exists() {
        return Some(venv);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("cmake"))
            .find(|p| p.exists())
    })
}

/// CMake and nvcc (absolute), or `None` when the test is skipped.
fn tools(test: &str) -> Option<(PathBuf, PathBuf)> {
    match (cmake(), common::nvcc()) {
        (Some(c), Some(n)) => Some((c, std::path::absolute(n).unwrap())),
        (c, n) => {
            common::skip(
                test,
                &format!("needs CMake ({c:?}; DPOPT_CMAKE names one) and nvcc ({n:?})"),
            );
            None
        }
    }
}

fn run(command: &mut Command) -> String {
    let out = command.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{command:?} failed:\n{text}");
    text
}

fn configure(cmake: &Path, nvcc: &Path, source: &Path, build: &Path, extra: &[String]) -> String {
    run(Command::new(cmake)
        .arg("-S")
        .arg(source)
        .arg("-B")
        .arg(build)
        .arg(format!("-DCMAKE_CUDA_COMPILER={}", nvcc.display()))
        .args(extra))
}

fn build(cmake: &Path, build: &Path) -> String {
    run(Command::new(cmake).arg("--build").arg(build).arg("-v"))
}

#[test]
fn dpopt_target_builds_the_example_project() {
    let Some((cmake, nvcc)) = tools("dpopt_target_builds_the_example_project") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // A copy of the project, whose header the test edits.
    let project = dir.path().join("project");
    let cmake_dir = dir.path().join("cmake");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&cmake_dir).unwrap();
    for f in ["CMakeLists.txt", "main.cu", "row_sums.cuh"] {
        std::fs::copy(
            common::root().join("examples/cmake").join(f),
            project.join(f),
        )
        .unwrap();
    }
    std::fs::copy(
        common::root().join("cmake/dpopt.cmake"),
        cmake_dir.join("dpopt.cmake"),
    )
    .unwrap();
    let cmakelists = std::fs::read_to_string(project.join("CMakeLists.txt")).unwrap();
    std::fs::write(
        project.join("CMakeLists.txt"),
        cmakelists.replace("/../../cmake/dpopt.cmake", "/../cmake/dpopt.cmake"),
    )
    .unwrap();
    let out = dir.path().join("build");
    let dpopt = env!("CARGO_BIN_EXE_dpopt");
    configure(
        &cmake,
        &nvcc,
        &project,
        &out,
        &[format!("-DDPOPT_EXECUTABLE={dpopt}")],
    );
    let log = build(&cmake, &out);
    // dpopt ran on the source, with the target's definitions and includes.
    assert!(log.contains("dpopt transform main.cu"), "{log}");
    let command = log
        .lines()
        .find(|l| l.contains(" transform ") && l.contains(dpopt))
        .unwrap_or_else(|| panic!("no dpopt command in\n{log}"));
    assert!(command.contains("-DROW_SUMS_BLOCK=32"), "{command}");
    assert!(
        command.contains("-I") && command.contains("project"),
        "{command}"
    );
    let generated = out.join("dpopt/row_sums/main.cu");
    let text = std::fs::read_to_string(&generated).unwrap();
    assert!(text.contains("dpopt_serial_row_sum_child"), "{text}");
    // The generated file is what nvcc compiled, relocatable, for sm_90.
    let compile = log
        .lines()
        .find(|l| l.contains(" -c ") && l.contains("dpopt/row_sums/main.cu"))
        .unwrap_or_else(|| panic!("no compile of the generated file in\n{log}"));
    assert!(compile.contains("-rdc=true"), "{compile}");
    assert!(compile.contains("arch=compute_90"), "{compile}");
    assert!(log.contains("-dlink"), "device link missing:\n{log}");
    let libs = std::fs::read_to_string(out.join("CMakeFiles/row_sums.dir/linkLibs.rsp")).unwrap();
    assert!(libs.contains("-lcudadevrt"), "{libs}");
    assert!(out.join("row_sums").exists());
    // Nothing changed: dpopt does not run again.
    let again = build(&cmake, &out);
    assert!(!again.contains("dpopt transform main.cu"), "{again}");
    // The child kernel is in the header: editing it transforms again (the
    // generated file holds a copy of its body).
    let header = project.join("row_sums.cuh");
    let text = std::fs::read_to_string(&header).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::write(
        &header,
        text.replace("if (i >= n) return;", "if (i >= n) return;  // edited"),
    )
    .unwrap();
    let edited = build(&cmake, &out);
    assert!(edited.contains("dpopt transform main.cu"), "{edited}");
    let text = std::fs::read_to_string(&generated).unwrap();
    assert!(text.contains("// edited"), "{text}");
}

/// `CMAKE_CUDA_COMPILER_LAUNCHER="dpopt;nvcc"`: CMake passes the nvcc
/// command to the launcher, which transforms the source first (finding the
/// child in a header of the target's include directories). The dependency
/// file names the user's source, not the temporary one.
#[test]
fn dpopt_nvcc_works_as_a_compiler_launcher() {
    let Some((cmake, nvcc)) = tools("dpopt_nvcc_works_as_a_compiler_launcher") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // The header holding the child is in a directory of its own, named by
    // `target_include_directories`: CMake passes it to nvcc in an options
    // file, which the wrapper reads for dpopt.
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("include")).unwrap();
    std::fs::copy(
        common::root().join("examples/cmake/main.cu"),
        src.join("main.cu"),
    )
    .unwrap();
    std::fs::copy(
        common::root().join("examples/cmake/row_sums.cuh"),
        src.join("include/row_sums.cuh"),
    )
    .unwrap();
    std::fs::write(
        src.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.24)\nproject(launcher LANGUAGES CXX CUDA)\nadd_executable(row_sums main.cu)\ntarget_include_directories(row_sums PRIVATE include)\nset_target_properties(row_sums PROPERTIES CUDA_ARCHITECTURES 90 CUDA_SEPARABLE_COMPILATION ON)\n",
    )
    .unwrap();
    let out = dir.path().join("build");
    configure(
        &cmake,
        &nvcc,
        &src,
        &out,
        &[format!(
            "-DCMAKE_CUDA_COMPILER_LAUNCHER={};nvcc",
            env!("CARGO_BIN_EXE_dpopt")
        )],
    );
    let log = build(&cmake, &out);
    let compile = log
        .lines()
        .find(|l| l.contains(" nvcc ") && l.contains(" -c "))
        .unwrap_or_else(|| panic!("no launcher compile in\n{log}"));
    assert!(compile.contains(env!("CARGO_BIN_EXE_dpopt")), "{compile}");
    assert!(out.join("row_sums").exists());
    // The object holds the generated kernel: the source was transformed.
    let object = std::fs::read(out.join("CMakeFiles/row_sums.dir/main.cu.o")).unwrap();
    assert!(
        String::from_utf8_lossy(&object).contains("dpopt_coarse_row_sum_child"),
        "the launcher compiled the source untransformed"
    );
    let deps = std::fs::read_to_string(out.join("CMakeFiles/row_sums.dir/main.cu.o.d")).unwrap();
    assert!(
        deps.contains(&src.join("main.cu").display().to_string()),
        "{deps}"
    );
    assert!(!deps.contains("dpopt-nvcc-"), "{deps}");
}

/// `CUDA_ARCHITECTURES 90` is only a default: architectures given on the
/// command line are kept.
#[test]
fn architectures_chosen_by_the_user_are_kept() {
    let Some((cmake, nvcc)) = tools("architectures_chosen_by_the_user_are_kept") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("build");
    configure(
        &cmake,
        &nvcc,
        &common::root().join("examples/cmake"),
        &out,
        &[
            format!("-DDPOPT_EXECUTABLE={}", env!("CARGO_BIN_EXE_dpopt")),
            "-DCMAKE_CUDA_ARCHITECTURES=100".to_string(),
        ],
    );
    let flags = std::fs::read_to_string(out.join("CMakeFiles/row_sums.dir/flags.make")).unwrap();
    assert!(flags.contains("arch=compute_100"), "{flags}");
    assert!(!flags.contains("arch=compute_90"), "{flags}");
}
