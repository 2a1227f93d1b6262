//! `dpopt nvcc`: the wrapper's command lines (with a stand-in nvcc that
//! records what it was given), the flags it adds, the exit status it passes
//! on, dpopt's errors stopping the build; and with the real nvcc, that the
//! wrapper compiles an example as transform + nvcc by hand does.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn dpopt() -> Command {
    Command::new(env!("CARGO_BIN_EXE_dpopt"))
}

/// A stand-in nvcc: writes each argument on its own line to `log`, then
/// the text of every `.cu` argument, and exits with `status`.
#[cfg(unix)]
fn fake_nvcc(dir: &Path, status: u8) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = bin.join("nvcc");
    let log = dir.join("log");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do echo \"ARG $a\" >> '{log}'; done\nfor a in \"$@\"; do case \"$a\" in *.cu) echo \"FILE $a\" >> '{log}'; cat \"$a\" >> '{log}';; esac; done\nexit {status}\n",
            log = log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn args_of(log: &str) -> Vec<&str> {
    log.lines().filter_map(|l| l.strip_prefix("ARG ")).collect()
}

const GOOD: &str = "#include \"util.cuh\"\n__global__ void child(int *a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] = twice(i);\n}\n__global__ void parent(int *a, int n) {\n#pragma dp threshold(64)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}\n";

#[cfg(unix)]
#[test]
fn transforms_inputs_adds_flags_and_passes_the_status() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("k.cu"), GOOD).unwrap();
    std::fs::write(
        src.join("util.cuh"),
        "__device__ int twice(int i) { return 2 * i; }\n",
    )
    .unwrap();
    std::fs::write(src.join("plain.cu"), "int main() { return 0; }\n").unwrap();
    let nvcc = fake_nvcc(dir.path(), 3);
    let run = dpopt()
        .current_dir(dir.path())
        .env("DPOPT_NVCC", &nvcc)
        .args([
            "nvcc",
            "-arch=sm_90",
            "-c",
            "src/k.cu",
            "src/plain.cu",
            "-DX=1",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(
        run.status.code(),
        Some(3),
        "nvcc's status is passed on: {stderr}"
    );
    assert_eq!(
        stderr.matches("dpopt: added -rdc=true").count(),
        1,
        "{stderr}"
    );
    let log = std::fs::read_to_string(dir.path().join("log")).unwrap();
    let args = args_of(&log);
    // The original's directory first, then the user's arguments with the
    // transformed file in place of the input, then -rdc=true; a compile
    // does not link, so no -lcudadevrt.
    assert_eq!(args[0], "-Isrc", "{log}");
    assert_eq!(&args[1..3], ["-arch=sm_90", "-c"], "{log}");
    assert!(args[3].ends_with("/k.cu") && args[3] != "src/k.cu", "{log}");
    assert!(!args[3].starts_with(dir.path().to_str().unwrap()), "{log}");
    assert_eq!(&args[4..], ["src/plain.cu", "-DX=1", "-rdc=true"], "{log}");
    let transformed = log.split(&format!("FILE {}\n", args[3])).nth(1).unwrap();
    assert!(transformed.contains("dpopt_serial_child"), "{log}");
    // nvcc's messages point at the user's file.
    assert!(transformed.contains("#line 8 \"src/k.cu\""), "{log}");
    // The temporary file is gone.
    assert!(!Path::new(args[3]).exists());
    // The file without `#pragma dp` is given to nvcc as it is.
    assert!(log.contains("FILE src/plain.cu\nint main()"), "{log}");
}

#[cfg(unix)]
#[test]
fn a_link_gets_the_device_runtime_and_a_launcher_nvcc_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let nvcc = fake_nvcc(dir.path(), 0);
    // As a CMake compiler launcher: the nvcc to run comes first.
    let run = dpopt()
        .current_dir(dir.path())
        .env("DPOPT_NVCC", "/nonexistent/nvcc-not-this-one")
        .arg("nvcc")
        .arg(&nvcc)
        .args(["a.o", "b.o", "-o", "app"])
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let log = std::fs::read_to_string(dir.path().join("log")).unwrap();
    assert_eq!(args_of(&log), ["a.o", "b.o", "-o", "app", "-lcudadevrt"]);
    assert!(String::from_utf8_lossy(&run.stderr).contains("dpopt: added -lcudadevrt"));
    // Everything given: nothing added, nothing said.
    std::fs::remove_file(dir.path().join("log")).unwrap();
    let run = dpopt()
        .current_dir(dir.path())
        .env("DPOPT_NVCC", &nvcc)
        .args(["nvcc", "-rdc=true", "x.o", "-lcudadevrt", "-o", "app"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0));
    assert!(
        run.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let log = std::fs::read_to_string(dir.path().join("log")).unwrap();
    assert_eq!(
        args_of(&log),
        ["-rdc=true", "x.o", "-lcudadevrt", "-o", "app"]
    );
}

#[cfg(unix)]
#[test]
fn dpopt_errors_stop_the_build() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.cu"),
        GOOD.replace("threshold(64)", "treshold(64)")
            .replace("#include \"util.cuh\"\n", "")
            .replace("twice(i)", "i"),
    )
    .unwrap();
    let nvcc = fake_nvcc(dir.path(), 0);
    let run = dpopt()
        .current_dir(dir.path())
        .env("DPOPT_NVCC", &nvcc)
        .env("DPOPT_MESSAGE_FORMAT", "short")
        .args(["nvcc", "-c", "bad.cu"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.starts_with("bad.cu:6:12: error: unknown clause `treshold`"),
        "{stderr}"
    );
    assert!(
        !dir.path().join("log").exists(),
        "nvcc ran despite the error"
    );
}

#[test]
fn a_missing_nvcc_is_reported() {
    let run = dpopt()
        .env("DPOPT_NVCC", "/nonexistent/nvcc")
        .args(["nvcc", "--version"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&run.stderr).contains("cannot run `/nonexistent/nvcc`"));
}

/// The wrapper against transform + nvcc by hand, with the real nvcc, on
/// the BFS example: both compile and device-link; the wrapper's program is
/// built from the same transformed source (the same kernels in both
/// objects' symbol tables).
#[test]
fn the_wrapper_builds_what_transform_and_nvcc_build() {
    let Some(nvcc) = common::nvcc_or_skip("the_wrapper_builds_what_transform_and_nvcc_build")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let example = common::root().join("examples/bfs.cu");
    let by_hand = dir.path().join("by_hand.cu");
    let run = dpopt()
        .args([
            "transform",
            example.to_str().unwrap(),
            "-o",
            by_hand.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0));
    let hand_obj = dir.path().join("by_hand.o");
    let hand = Command::new(&nvcc)
        .args(["-rdc=true", "-arch=sm_90", "-c", by_hand.to_str().unwrap()])
        .arg("-I")
        .arg(example.parent().unwrap())
        .arg("-o")
        .arg(&hand_obj)
        .output()
        .unwrap();
    assert!(
        hand.status.success(),
        "{}",
        String::from_utf8_lossy(&hand.stderr)
    );
    let wrapped_obj = dir.path().join("wrapped.o");
    let wrapped = dpopt()
        .env("DPOPT_NVCC", &nvcc)
        .args(["nvcc", "-arch=sm_90", "-c", example.to_str().unwrap(), "-o"])
        .arg(&wrapped_obj)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&wrapped.stderr);
    assert_eq!(wrapped.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("dpopt: added -rdc=true"), "{stderr}");
    // The same kernels in both objects: the generated ones included.
    let kernels = |obj: &Path| {
        let bytes = std::fs::read(obj).unwrap();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let mut names: Vec<String> = ["bfs_parent", "bfs_child", "dpopt_coarse_bfs_child"]
            .iter()
            .filter(|k| text.contains(&format!("{}{k}", k.len())))
            .map(|k| k.to_string())
            .collect();
        names.sort();
        names
    };
    let (a, b) = (kernels(&hand_obj), kernels(&wrapped_obj));
    assert_eq!(a, b);
    assert!(a.contains(&"dpopt_coarse_bfs_child".to_string()), "{a:?}");
    // And it links into a program (device link with the device runtime).
    let app = dir.path().join("app");
    let link = dpopt()
        .env("DPOPT_NVCC", &nvcc)
        .args(["nvcc", "-arch=sm_90"])
        .arg(&wrapped_obj)
        .arg("-o")
        .arg(&app)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&link.stderr);
    assert_eq!(link.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("dpopt: added -lcudadevrt"), "{stderr}");
    assert!(app.exists());
}

/// `make NVCC="dpopt nvcc"`: a Makefile that compiles and links with
/// $(NVCC) gets the transformed source and the flags CDP needs.
#[cfg(unix)]
#[test]
fn works_as_nvcc_in_a_makefile() {
    if Command::new("make").arg("--version").output().is_err() {
        common::skip("works_as_nvcc_in_a_makefile", "make not found");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.cu"), GOOD).unwrap();
    std::fs::write(
        dir.path().join("util.cuh"),
        "__device__ int twice(int i) { return 2 * i; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("Makefile"),
        "NVCC ?= nvcc\napp: k.o\n\t$(NVCC) -arch=sm_90 k.o -o app\nk.o: k.cu\n\t$(NVCC) -arch=sm_90 -c k.cu -o k.o\n",
    )
    .unwrap();
    let nvcc = fake_nvcc(dir.path(), 0);
    let run = Command::new("make")
        .current_dir(dir.path())
        .env("DPOPT_NVCC", &nvcc)
        .arg(format!("NVCC={} nvcc", env!("CARGO_BIN_EXE_dpopt")))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    // Both commands (compile and link) ran through the wrapper.
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("dpopt: added -rdc=true"), "{stderr}");
    assert!(stderr.contains("dpopt: added -lcudadevrt"), "{stderr}");
    let log = std::fs::read_to_string(dir.path().join("log")).unwrap();
    assert!(log.contains("dpopt_serial_child"), "{log}");
    let args = args_of(&log);
    assert!(
        args.contains(&"-rdc=true") && args.contains(&"-lcudadevrt"),
        "{log}"
    );
}

/// On every example, nvcc gets through the wrapper exactly what `dpopt
/// transform` writes by hand (only the name generated code's `#line`
/// markers give the output differs), with the example's directory first on
/// the include path and `-rdc=true` added.
#[cfg(unix)]
#[test]
fn nvcc_gets_what_transform_writes_on_every_example() {
    let examples: Vec<PathBuf> = common::corpus()
        .into_iter()
        .filter(|p| p.parent().is_some_and(|d| d.ends_with("examples")))
        .collect();
    assert!(examples.len() >= 10, "{examples:?}");
    let root = common::root();
    for example in examples {
        let dir = tempfile::tempdir().unwrap();
        let nvcc = fake_nvcc(dir.path(), 0);
        let relative = example
            .strip_prefix(&root)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let run = dpopt()
            .current_dir(&root)
            .env("DPOPT_NVCC", &nvcc)
            .args(["nvcc", "-O3", "-arch=sm_90", "-c", &relative, "-o"])
            .arg(dir.path().join("x.o"))
            .output()
            .unwrap();
        assert_eq!(
            run.status.code(),
            Some(0),
            "{relative}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let log = std::fs::read_to_string(dir.path().join("log")).unwrap();
        let args = args_of(&log);
        assert_eq!(args[0], "-Iexamples", "{relative}: {log}");
        assert_eq!(args.last(), Some(&"-rdc=true"), "{relative}");
        let given = log.split_once(&format!("FILE {}\n", args[4])).unwrap().1;
        let by_hand = dir.path().join("by_hand.cu");
        let run = dpopt()
            .current_dir(&root)
            .args(["transform", &relative, "-o"])
            .arg(&by_hand)
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(0));
        let expected = std::fs::read_to_string(&by_hand)
            .unwrap()
            .replace(&format!("\"{}\"", by_hand.display()), "\"OUT\"");
        let given = given.replace(&format!("\"{relative} (generated by dpopt)\""), "\"OUT\"");
        assert!(expected.contains("\"OUT\""), "{relative}");
        assert_eq!(given, expected, "{relative}");
    }
}
