//! Postwork and CDP1 migration (`--migrate-sync`, src/postwork.rs): the
//! generated code of every program of tests/postwork/ (insta snapshots), the
//! contract without the flag (byte-identical output, one warning per sync),
//! and a fixed point with it.

mod common;

use dpopt::source::SourceFile;

#[test]
fn migrated_code_of_every_cdp1_program() {
    let programs = common::postwork_programs();
    assert!(programs.len() >= 4, "tests/postwork/ programs are missing");
    for path in programs {
        let file = common::load(&path);
        let outcome = common::migrate(&file, "out.cu", true);
        let errors: Vec<String> = outcome
            .diagnostics
            .iter()
            .map(|d| format!("{:?}", d.to_report(outcome.source(&file))))
            .collect();
        assert!(
            outcome.diagnostics.is_empty(),
            "{}: {}",
            path.display(),
            errors.join("\n")
        );
        let output = outcome
            .output
            .unwrap_or_else(|| panic!("{} failed:\n{}", path.display(), errors.join("\n")));
        let text = String::from_utf8_lossy(&output).into_owned();
        // No device-side wait is left: every one became a tail launch or
        // was dropped (nothing ran after it).
        assert!(
            text.contains("cudaStreamTailLaunch") || text.contains("(CDP1) dropped"),
            "{}",
            path.display()
        );
        insta::assert_snapshot!(format!("postwork_{}", common::stem(&path)), text);
    }
}

#[test]
fn without_the_flag_the_file_is_unchanged_and_each_sync_is_reported() {
    for path in common::postwork_programs() {
        let file = common::load(&path);
        let outcome = common::migrate(&file, "out.cu", false);
        let text = std::fs::read_to_string(&path).unwrap();
        // Device-side waits: the kernels of these programs have one each.
        let syncs = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .filter(|l| l.contains("cudaDeviceSynchronize();"))
            .count();
        let warnings: Vec<_> = outcome
            .diagnostics
            .iter()
            .filter(|d| d.kind.code() == "dpopt::cdp1_sync")
            .collect();
        assert_eq!(warnings.len(), syncs, "{}", path.display());
        assert!(warnings.iter().all(|d| !d.is_error()));
        assert!(warnings
            .iter()
            .all(|d| d.kind.help().unwrap().contains("--migrate-sync")));
        if text.contains("#pragma dp") {
            // The pragma sites are applied; the syncs stay as written.
            let out = String::from_utf8(outcome.output.unwrap()).unwrap();
            assert!(out.contains("cudaDeviceSynchronize();"));
            assert!(!out.contains("dpopt_postwork_body_") && !out.contains("(CDP1) dropped"));
        } else {
            assert_eq!(
                outcome.output.as_deref(),
                Some(text.as_bytes()),
                "{}: a file without pragma must pass through byte for byte",
                path.display()
            );
        }
    }
}

#[test]
fn migrating_twice_changes_nothing_more() {
    for path in common::postwork_programs() {
        let file = common::load(&path);
        let once = common::migrate(&file, "out.cu", true).output.unwrap();
        let again = SourceFile::new("out.cu", once.clone());
        let outcome = common::migrate(&again, "out2.cu", true);
        assert!(
            outcome.diagnostics.is_empty(),
            "{}: {:?}",
            path.display(),
            outcome.diagnostics
        );
        // The pragma sites are rewritten again (as any transformed file
        // would be); files without pragma are a fixed point.
        if !std::fs::read_to_string(&path)
            .unwrap()
            .contains("#pragma dp")
        {
            assert_eq!(outcome.output.unwrap(), once, "{}", path.display());
        }
    }
}

#[test]
fn the_rest_of_a_migrated_file_is_byte_identical() {
    // Everything before the first kernel with a sync is copied as is, and
    // the host code after the last generated definition too.
    let path = common::root().join("tests/postwork/recursive_sum.cu");
    let text = std::fs::read_to_string(&path).unwrap();
    let file = common::load(&path);
    let out = String::from_utf8(common::migrate(&file, "out.cu", true).output.unwrap()).unwrap();
    let head = &text[..text.find("// The range [lo, hi)").unwrap()];
    assert!(out.starts_with(head));
    let host = &text[text
        .find("// ---------------------------------------------------------------- host side")
        .unwrap()..];
    assert!(out.contains(host));
}

#[test]
fn postwork_with_return_and_builtins_compiles_to_a_body_function() {
    let src = "__global__ void child(int *a) { a[threadIdx.x] = 1; }\n\
               __global__ void parent(int *a, int n) {\n\
               \x20 int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
               \x20 if (i >= n) return;\n\
               \x20 child<<<1, 32>>>(a);\n\
               \x20 cudaDeviceSynchronize();\n\
               \x20 if (a[i] == 0) return;\n\
               \x20 a[i] += threadIdx.x + blockIdx.x * blockDim.x + gridDim.x;\n\
               }\n";
    let file = SourceFile::new("k.cu", src.as_bytes().to_vec());
    let outcome = dpopt::run_migrating(&file, None, true, "out.cu", true);
    assert!(outcome.diagnostics.is_empty(), "{:?}", outcome.diagnostics);
    let out = String::from_utf8(outcome.output.unwrap()).unwrap();
    // The postwork reads the builtins through parameters, carries `i`, and
    // its `return` ends the continuation thread.
    assert!(out.contains(
        "a[i] += dpopt_threadIdx.x + dpopt_blockIdx.x * dpopt_blockDim.x + dpopt_gridDim.x;"
    ));
    assert!(out.contains("dpopt_make_record_parent_sync1(threadIdx, i)"));
    assert!(out.contains("if (a[i] == 0) return;"));
    assert!(out.contains("<<<1, dpopt_count, 0, cudaStreamTailLaunch>>>"));
}

mod mutated {
    //! `--migrate-sync` on mutated CDP1 programs never panics: every run ends
    //! in an output or in at least one error, and every diagnostic renders.

    use super::common;
    use dpopt::source::SourceFile;
    use miette::{GraphicalReportHandler, GraphicalTheme};
    use proptest::prelude::*;

    const PIECES: &[&str] = &[
        "cudaDeviceSynchronize();",
        "(void)cudaThreadSynchronize();",
        "if (threadIdx.x == 0) {",
        "} else {",
        "for (;;) {",
        "__shared__ int s;",
        "__syncthreads();",
        "int &r = x;",
        "int a[4];",
        "return;",
        "k<<<1, 1>>>();",
        "{",
        "}",
        "(",
        ")",
        ";",
        ",",
        "=",
        "template <typename T>",
        "__device__",
        "/*",
        "\"",
        "#if 0\n",
        "#endif\n",
        "\n",
    ];

    fn apply(mut bytes: Vec<u8>, edits: &[(usize, usize, bool)]) -> Vec<u8> {
        for &(at, what, delete) in edits {
            let at = at % (bytes.len() + 1);
            if delete {
                let end = (at + what % 48 + 1).min(bytes.len());
                bytes.drain(at..end);
            } else {
                bytes.splice(at..at, PIECES[what % PIECES.len()].bytes());
            }
        }
        bytes
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        #[test]
        fn mutated_cdp1_programs_never_panic(
            which in any::<usize>(),
            edits in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<bool>()), 1..6),
        ) {
            let programs = common::postwork_programs();
            let original = std::fs::read(&programs[which % programs.len()]).unwrap();
            let file = SourceFile::new("mutated.cu", apply(original, &edits));
            for migrate in [false, true] {
                let outcome = dpopt::run_migrating(&file, None, migrate, "out.cu", true);
                prop_assert!(outcome.output.is_some() || outcome.has_errors());
                let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor());
                for d in &outcome.diagnostics {
                    let mut rendered = String::new();
                    handler.render_report(&mut rendered, d.to_report(&file).as_ref()).unwrap();
                    prop_assert!(rendered.contains("mutated.cu:"));
                }
            }
        }
    }
}

/// The rendered reports of what `--migrate-sync` refuses: FILE:LINE:COL,
/// what is wrong, the enclosing construct, and how to restructure.
#[test]
fn refusals_render_with_their_place_and_fix() {
    let text = "__global__ void child(int *a, int r) { a[threadIdx.x] += r; }\n\
__global__ void rounds(int *a) {\n\
  for (int r = 0; r < 4; ++r) {\n\
    child<<<1, 32>>>(a, r);\n\
    cudaDeviceSynchronize();\n\
  }\n\
}\n\
__global__ void tiled(int *a) {\n\
  __shared__ int tile[32];\n\
  tile[threadIdx.x] = a[threadIdx.x];\n\
  child<<<1, 32>>>(a, 1);\n\
  cudaDeviceSynchronize();\n\
  a[threadIdx.x] += tile[threadIdx.x];\n\
}\n";
    let file = SourceFile::new("bad.cu", text.as_bytes().to_vec());
    let outcome = dpopt::run_migrating(&file, None, true, "out.cu", true);
    assert!(outcome.output.is_none());
    let handler =
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .with_width(100);
    let mut out = String::new();
    for d in &outcome.diagnostics {
        handler
            .render_report(&mut out, d.to_report(&file).as_ref())
            .unwrap();
    }
    for expect in [
        "bad.cu:5:1",
        "inside a `for` block",
        "move the wait out",
        "bad.cu:13:19",
        "declared `__shared__`",
    ] {
        assert!(out.contains(expect), "`{expect}` not in\n{out}");
    }
    insta::assert_snapshot!("postwork_refusals", out);
}
