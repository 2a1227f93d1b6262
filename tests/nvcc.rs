//! Every example and fixture, transformed, compiles with a real nvcc for
//! sm_90 (`-rdc=true`), and the generated code itself draws no warning.
//! The examples are also compiled with each clause alone, and the corpus
//! programs (tests/corpus/) as written and in every variant dpopt applies.
//! Programs as written, and variants whose host code differs, are compiled
//! whole; the other variants' device code alone (`Scope`), which keeps the
//! run within CI's time on two cores.
//!
//! nvcc comes from `scripts/setup-nvcc.sh` (pip, no GPU needed), DPOPT_NVCC
//! or PATH. Without it each test reports itself skipped and passes, unless
//! DPOPT_REQUIRE_NVCC=1 (set by .ci/run) says nvcc must be there.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

/// dpopt as the command line runs it, reading the headers of tests/fixtures
/// and tests/corpus (the header_child programs' children are in them).
fn transform(
    file: &dpopt::source::SourceFile,
    output_name: &str,
    generate: bool,
) -> dpopt::Outcome {
    let options = dpopt::unit::Options {
        include_dirs: vec![
            common::root().join("tests/fixtures"),
            common::root().join("tests/corpus"),
        ],
        ..Default::default()
    };
    dpopt::run_with(file, Some(&options), output_name, generate)
}

/// What nvcc compiles of a program: the whole translation unit (host code
/// by the host compiler too, as a build does), or its device code alone
/// (`-cubin`: the same front end, cicc and ptxas at -O3, so the same
/// errors, warnings and register counts, without the host compile).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Scope {
    Whole,
    Device,
}

/// Every program the tests compile: each example and fixture as written
/// (whole), and its variants. A variant's host code is the program's own
/// plus what the generated definitions add, the same in every variant of
/// one kind, so the variants that differ there (the floor's host-side
/// launches, promotion) are compiled whole and the others' device code
/// alone: the device code is what the variants change.
fn jobs() -> Vec<(String, Vec<u8>, Scope)> {
    let mut jobs = Vec::new();
    for path in common::corpus() {
        let bytes = std::fs::read(&path).unwrap();
        jobs.push((common::stem(&path), bytes.clone(), Scope::Whole));
        if path.parent().is_some_and(|p| p.ends_with("fixtures")) {
            // Each fixture with aggregation added to every pragma, at each
            // granularity, where dpopt accepts it.
            let text = String::from_utf8_lossy(&bytes).into_owned();
            for granularity in ["warp", "grid", "block", "multiblock, 8"] {
                let t = common::append_to_pragmas(&text, &format!(" consldt({granularity})"));
                let file = dpopt::source::SourceFile::new("x.cu", t.clone().into_bytes());
                if transform(&file, "x.cu", false).has_errors() {
                    continue; // template kernels, recursive grid, barriers next to block: refused with a clear error
                }
                jobs.push((
                    format!("{}_A{}", common::stem(&path), granularity.replace(", ", "")),
                    t.into_bytes(),
                    Scope::Device,
                ));
            }
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if path.parent().is_some_and(|p| p.ends_with("corpus")) {
            // Each corpus program with every launch coarsened alone: its
            // launches that find no room call the child's serial version out
            // of line (a child defined twice under `#if` has it in both).
            let t = common::with_pragmas(&text, "#pragma dp coarsen(4)");
            let file = dpopt::source::SourceFile::new("x.cu", t.clone().into_bytes());
            if !transform(&file, "x.cu", false).has_errors() {
                jobs.push((
                    format!("{}_C", common::stem(&path)),
                    t.into_bytes(),
                    Scope::Device,
                ));
            }
        }
        if path.parent().is_some_and(|p| p.ends_with("examples")) && common::is_promoted(&text) {
            // The promotion variants of the benchmark suite: basic and
            // aggregated, each with and without `#pragma dp acquire`.
            for (variant, pragma, overlap) in [
                ("P", "#pragma dp promote(basic)", false),
                ("PO", "#pragma dp promote(basic)", true),
                ("PA2", "#pragma dp promote(aggregate, 2)", false),
                ("PAO", "#pragma dp promote(aggregate, 128)", true),
            ] {
                let t = common::with_promotion(&text, pragma, overlap);
                jobs.push((
                    format!("{}_{variant}", common::stem(&path)),
                    t.into_bytes(),
                    Scope::Whole,
                ));
            }
            continue;
        }
        if path.parent().is_some_and(|p| p.ends_with("examples")) {
            let text = String::from_utf8(bytes).unwrap();
            for (variant, pragma) in [
                ("T", "#pragma dp threshold(64)"),
                ("C", "#pragma dp coarsen(4)"),
                ("TC", "#pragma dp threshold(TH_SWEEP) coarsen(4)"),
                ("A", "#pragma dp consldt(warp)"),
                ("Ab", "#pragma dp consldt(block)"),
                ("Ak", "#pragma dp consldt(warp) threads(32) blocks(8)"),
                ("TCAmk", "#pragma dp threshold(64) coarsen(4) consldt(multiblock, 8) threads(64) blocks(512)"),
                ("TCAm", "#pragma dp threshold(64) coarsen(4) consldt(multiblock, 8) buffer(default, 4096)"),
                ("TCA", "#pragma dp threshold(64) coarsen(4) consldt(warp) agg_threshold(2)"),
                ("CAw", "#pragma dp coarsen(2) consldt(warp) work(deg, nTess, nchildren, c, depth, start, lidx, line, out, node, count)"),
                ("TCF", "#pragma dp threshold(64) coarsen(4) floor"),
                ("F", "#pragma dp floor"),
                ("Dflt", "#pragma dp"),
                ("L", "#pragma dp alloc(warp)"),
                ("TCLb", "#pragma dp threshold(64) coarsen(4) alloc(block)"),
            ] {
                let mut t = common::with_pragmas(&text, pragma);
                if variant == "TC" {
                    t = format!("#define TH_SWEEP 256\n{t}");
                }
                if pragma.contains("block") || pragma.contains("floor") || pragma.contains("alloc(") {
                    // Block-level aggregation is refused next to barriers
                    // and warp primitives, the floor for recursive children
                    // (clear errors, tested in diagnostics.rs); `alloc(...)`
                    // where the parent allocates nothing.
                    let file = dpopt::source::SourceFile::new("x.cu", t.clone().into_bytes());
                    if dpopt::run(&file, "x.cu", false).has_errors() {
                        continue;
                    }
                }
                let scope = if pragma.contains("floor") {
                    Scope::Whole
                } else {
                    Scope::Device
                };
                jobs.push((format!("{}_{variant}", common::stem(&path)), t.into_bytes(), scope));
            }
            // Grid aggregation (several pools for the recursive tree).
            let t = common::with_pragmas(
                &String::from_utf8(std::fs::read(&path).unwrap()).unwrap(),
                "#pragma dp threshold(64) coarsen(4) consldt(grid) buffer(default, 4096)",
            );
            jobs.push((
                format!("{}_TCAg", common::stem(&path)),
                t.into_bytes(),
                Scope::Device,
            ));
        }
    }
    jobs
}

/// The other configuration a program selects with the preprocessor, from
/// its `// dpopt-defines: -DX ...` line: compiled too.
fn extra_defines(source: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(source)
        .lines()
        .find_map(|l| l.strip_prefix("// dpopt-defines:"))
        .map(|d| d.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

fn compile(nvcc: &Path, dir: &Path, name: &str, source: &[u8], scope: Scope) -> Result<(), String> {
    compile_with(nvcc, dir, name, source, &[], scope)?;
    let defines = extra_defines(source);
    if defines.is_empty() {
        return Ok(());
    }
    compile_with(nvcc, dir, &format!("{name}_D"), source, &defines, scope)
}

fn compile_with(
    nvcc: &Path,
    dir: &Path,
    name: &str,
    source: &[u8],
    defines: &[String],
    scope: Scope,
) -> Result<(), String> {
    let out = dir.join(format!("{name}.dp.cu"));
    let file = dpopt::source::SourceFile::new(format!("{name}.cu"), source.to_vec());
    let outcome = transform(&file, &out.display().to_string(), true);
    let bytes = outcome
        .output
        .ok_or_else(|| format!("{name}: dpopt reported errors"))?;
    std::fs::write(&out, bytes).unwrap();
    // Compiled and device-linked (`-Xnvlink --verbose` prints every kernel's
    // registers after the link, when calls into the generated code are
    // resolved); the host link is left out (`-dlink` output only).
    let (object, output_kind) = match scope {
        Scope::Whole => (dir.join(format!("{name}.o")), "-c"),
        Scope::Device => (dir.join(format!("{name}.cubin")), "-cubin"),
    };
    let result = Command::new(nvcc)
        .args(["-rdc=true", "-arch=sm_90", "-O3", output_kind])
        .args(defines)
        // Examples share host code in examples/common/ (included as "common/...").
        .arg(format!("-I{}", common::root().join("examples").display()))
        // Corpus programs include their headers from tests/corpus/,
        // fixtures theirs from tests/fixtures/ (header_child.cuh).
        .arg(format!(
            "-I{}",
            common::root().join("tests/corpus").display()
        ))
        .arg(format!(
            "-I{}",
            common::root().join("tests/fixtures").display()
        ))
        .arg("-o")
        .arg(&object)
        .arg(&out)
        .output()
        .map_err(|e| format!("cannot run nvcc: {e}"))?;
    let stderr = String::from_utf8_lossy(&result.stderr);
    if !result.status.success() {
        return Err(format!("{name}: nvcc failed:\n{stderr}"));
    }
    // Warnings located in generated code (named by the output file).
    let generated = stderr
        .lines()
        .filter(|l| l.contains(".dp.cu("))
        .collect::<Vec<_>>();
    if !generated.is_empty() {
        return Err(format!(
            "{name}: warnings in generated code:\n{}",
            generated.join("\n")
        ));
    }
    if outcome.bounded_kernels.is_empty() {
        return Ok(());
    }
    let link = Command::new(nvcc)
        .args(["-arch=sm_90", "-dlink", "-Xnvlink", "--verbose", "-o"])
        .arg(dir.join(format!("{name}.dlink.o")))
        .arg(&object)
        .arg("-lcudadevrt")
        .output()
        .map_err(|e| format!("cannot run nvcc: {e}"))?;
    let log =
        String::from_utf8_lossy(&link.stderr).into_owned() + &String::from_utf8_lossy(&link.stdout);
    if !link.status.success() {
        return Err(format!("{name}: device link failed:\n{log}"));
    }
    for kernel in &outcome.bounded_kernels {
        let simple = kernel.rsplit("::").next().unwrap();
        let mangled = format!("{}{simple}", simple.len());
        let counts = registers_of(&log, &mangled);
        // With `floor` the host launches the kernel's launch-free copy: the
        // kernel itself, never referenced, may be left out by the link.
        let text = String::from_utf8_lossy(&std::fs::read(&out).unwrap()).into_owned();
        let floored = text.contains(&format!("dpopt_floor_launch_{simple}("));
        // Nor is a kernel whose every launch dpopt rewrote (a recursion
        // launched only by a parent of the file: its counted copy runs).
        if counts.is_empty() && (floored || !launched_as_written(&text, simple)) {
            continue;
        }
        if counts.is_empty() {
            return Err(format!(
                "{name}: no register count for `{kernel}` in\n{log}"
            ));
        }
        if let Some(n) = counts.iter().find(|&&n| n > MAX_REGISTERS_1024) {
            return Err(format!(
                "{name}: parent `{kernel}` needs {n} registers after the link: not launchable with 1,024 threads"
            ));
        }
    }
    Ok(())
}

/// Does `text` launch kernel `simple` by its own name (`simple<<<`,
/// `simple<T><<<`, `simple <<<`), not a generated kernel whose name ends
/// with it?
fn launched_as_written(text: &str, simple: &str) -> bool {
    text.match_indices(simple).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let named = !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        let mut rest = text[at + simple.len()..].trim_start();
        if rest.starts_with('<') && !rest.starts_with("<<<") {
            // template arguments
            rest = rest.find('>').map_or("", |e| rest[e + 1..].trim_start());
        }
        named && rest.starts_with("<<<")
    })
}

/// Registers a thread may use in a 1,024-thread block (64 Ki per SM).
const MAX_REGISTERS_1024: u32 = 64;

/// The post-link register counts of the kernels whose mangled name holds
/// `mangled` (`10bfs_parent`), from `nvlink --verbose`.
fn registers_of(log: &str, mangled: &str) -> Vec<u32> {
    let lines: Vec<&str> = log.lines().collect();
    lines
        .windows(2)
        .filter(|w| {
            w[0].contains("Function properties for")
                && w[0].contains(mangled)
                && !w[0].contains("dpopt_")
        })
        .filter_map(|w| {
            let used = w[1].split("used ").nth(1)?;
            used.split_whitespace().next()?.parse().ok()
        })
        .collect()
}

/// Run `work` on every job, `workers` at a time; the errors it returned.
fn in_parallel<T: Send>(
    jobs: Vec<T>,
    workers: usize,
    work: impl Fn(T) -> Result<(), String> + Sync,
) -> Vec<String> {
    let queue = Mutex::new(jobs);
    let failures = Mutex::new(Vec::<String>::new());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let Some(job) = queue.lock().unwrap().pop() else {
                    break;
                };
                if let Err(e) = work(job) {
                    failures.lock().unwrap().push(e);
                }
            });
        }
    });
    failures.into_inner().unwrap()
}

#[test]
fn transformed_programs_compile_for_sm_90() {
    let Some(nvcc) = common::nvcc_or_skip("transformed_programs_compile_for_sm_90") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // DPOPT_NVCC_FILTER=text compiles only the programs whose name holds it.
    let filter = std::env::var("DPOPT_NVCC_FILTER").ok();
    let mut all = jobs();
    all.retain(|(name, _, _)| filter.as_deref().map_or(true, |f| name.contains(f)));
    let total = all.len();
    assert!(
        total >= 12 || filter.is_some(),
        "too few programs to compile: {total}"
    );
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(4);
    let started = std::time::Instant::now();
    let failures = in_parallel(all, workers, |(name, source, scope)| {
        compile(&nvcc, dir.path(), &name, &source, scope)
    });
    eprintln!(
        "examples and fixtures: {total} programs and variants compiled in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} of {total} failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// A corpus program as written (nvcc alone, the pragmas ignored), in its
/// default configuration and the one its `// dpopt-defines:` line names.
fn compile_original(nvcc: &Path, dir: &Path, name: &str, source: &Path) -> Result<(), String> {
    let bytes = std::fs::read(source).unwrap();
    let mut configurations = vec![Vec::new()];
    let defines = extra_defines(&bytes);
    if !defines.is_empty() {
        configurations.push(defines);
    }
    for (k, defines) in configurations.iter().enumerate() {
        let result = Command::new(nvcc)
            .args(["-rdc=true", "-arch=sm_90", "-O3", "-c"])
            .args(defines)
            .arg("-o")
            .arg(dir.join(format!("{name}_{k}.o")))
            .arg(source)
            .output()
            .map_err(|e| format!("cannot run nvcc: {e}"))?;
        if !result.status.success() {
            return Err(format!(
                "{name} {defines:?}: nvcc failed:\n{}",
                String::from_utf8_lossy(&result.stderr)
            ));
        }
    }
    Ok(())
}

/// The corpus (tests/corpus/): every program as written, and every variant
/// tests/corpus/expected.txt marks `ok`, transformed (as the other programs
/// here: no warning in generated code, parents fit 64 registers), each in
/// the configurations its `// dpopt-defines:` line names; a variant marked
/// `ok-nvcc-fails` must still fail (when dpopt is fixed, this says so).
/// Two compiles at a time; the time taken is printed.
#[test]
fn corpus_compiles_for_sm_90() {
    let Some(nvcc) = common::nvcc_or_skip("corpus_compiles_for_sm_90") else {
        return;
    };
    enum Job {
        Original(std::path::PathBuf),
        Variant {
            source: Vec<u8>,
            must_fail: bool,
            scope: Scope,
        },
    }
    let mut jobs: Vec<(String, Job)> = common::corpus_programs()
        .into_iter()
        .map(|p| (format!("{}_orig", common::stem(&p)), Job::Original(p)))
        .collect();
    for e in common::corpus_expectations() {
        let must_fail = match e.outcome {
            common::CorpusOutcome::Ok => false,
            common::CorpusOutcome::OkNvccFails => true,
            common::CorpusOutcome::Refused(_) => continue,
        };
        let source = common::corpus_variant(&e.program, &e.variant);
        // The program as annotated is compiled whole; the other variants
        // change its device code (see `jobs`).
        let scope = if e.variant == "as-annotated" {
            Scope::Whole
        } else {
            Scope::Device
        };
        jobs.push((
            format!("{}_{}", e.program, e.variant),
            Job::Variant {
                source,
                must_fail,
                scope,
            },
        ));
    }
    let total = jobs.len();
    assert!(total >= 24, "too few corpus programs to compile: {total}");
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let failures = in_parallel(jobs, 2, |(name, job)| {
        match job {
        Job::Original(path) => compile_original(&nvcc, dir.path(), &name, &path),
        Job::Variant {
            source,
            must_fail,
            scope,
        } => {
            match (compile(&nvcc, dir.path(), &name, &source, scope), must_fail) {
                (Ok(()), true) => Err(format!(
                    "{name}: compiles now: mark it `ok` in tests/corpus/expected.txt and update PROBLEMS.md"
                )),
                (Err(_), true) => Ok(()),
                (result, false) => result,
            }
        }
    }
    });
    eprintln!(
        "corpus: {total} programs and variants compiled in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} of {total} failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Does the program, with the headers it includes, define a namespace
/// (`namespace NAME {`, `namespace a::b {` or `namespace {`)?
fn defines_namespace(source: &[u8]) -> bool {
    let file = dpopt::source::SourceFile::new("x.cu", source.to_vec());
    let outcome = transform(&file, "x.cu", false);
    let text = &outcome.source(&file).view;
    text.match_indices("namespace").any(|(i, _)| {
        let rest = text[i + "namespace".len()..].trim_start();
        rest.trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':')
            .trim_start()
            .starts_with('{')
    })
}

/// A child in a namespace (in the file or in a header) has its launch
/// counters and run-time knobs declared in that namespace, and the parent's
/// launch, `dpopt_stats_report` and `dpopt_knobs_from_env` read them from
/// outside it: every fixture and corpus program that defines a namespace,
/// in every variant the other tests compile, compiles with `-DDPOPT_STATS
/// -DDPOPT_RUNTIME_KNOBS`.
#[test]
fn namespaced_children_compile_with_stats_and_runtime_knobs() {
    let Some(nvcc) =
        common::nvcc_or_skip("namespaced_children_compile_with_stats_and_runtime_knobs")
    else {
        return;
    };
    let mut programs: Vec<(String, Vec<u8>)> = jobs()
        .into_iter()
        .map(|(name, source, _)| (name, source))
        .collect();
    for e in common::corpus_expectations() {
        if e.outcome == common::CorpusOutcome::Ok {
            let source = common::corpus_variant(&e.program, &e.variant);
            programs.push((format!("{}_{}", e.program, e.variant), source));
        }
    }
    programs.retain(|(_, source)| defines_namespace(source));
    for expected in [
        "header_child",
        "header_child_Agrid",
        "namespaced_children",
        "namespaces",
        "forward_decl",
        "child_in_header_as-annotated",
        "child_in_header_TCAm",
    ] {
        assert!(
            programs.iter().any(|(name, _)| name == expected),
            "{expected} is not among the programs with namespaces"
        );
    }
    let total = programs.len();
    let defines = [
        "-DDPOPT_STATS".to_string(),
        "-DDPOPT_RUNTIME_KNOBS".to_string(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let failures = in_parallel(programs, 2, |(name, source)| {
        compile_with(&nvcc, dir.path(), &name, &source, &defines, Scope::Whole)
    });
    eprintln!("namespaces: {total} programs and variants compiled with -DDPOPT_STATS -DDPOPT_RUNTIME_KNOBS");
    assert!(
        failures.is_empty(),
        "{} of {total} failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// The parent's host launch may live in another translation unit that knows
/// nothing of dpopt: the transformed kernels file links with it unchanged.
#[test]
fn two_file_program_links() {
    let Some(nvcc) = common::nvcc_or_skip("two_file_program_links") else {
        return;
    };
    let root = common::root().join("tests/multi_tu");
    let kernels = std::fs::read_to_string(root.join("kernels.cu")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for granularity in ["warp", "block", "multiblock, 8", "grid"] {
        let text = common::append_to_pragmas(&kernels, &format!(" consldt({granularity})"));
        let file = dpopt::source::SourceFile::new("kernels.cu", text.into_bytes());
        let output = dpopt::run(&file, "kernels.dp.cu", true)
            .output
            .expect("dpopt transforms kernels.cu");
        let source = dir.path().join("kernels.dp.cu");
        std::fs::write(&source, output).unwrap();
        let result = link(
            &nvcc,
            &dir.path().join("two_files"),
            &[source, root.join("host.cu")],
        );
        assert!(
            result.status.success(),
            "consldt({granularity}): nvcc failed:\n{}",
            String::from_utf8_lossy(&result.stderr)
        );
    }
}

/// Compile and link `sources` into one program with nvcc (`-rdc=true`).
fn link(
    nvcc: &std::path::Path,
    program: &std::path::Path,
    sources: &[std::path::PathBuf],
) -> std::process::Output {
    Command::new(nvcc)
        .args(["-rdc=true", "-arch=sm_90", "-O3", "-o"])
        .arg(program)
        .args(sources)
        .arg("-lcudadevrt")
        .output()
        .expect("runs nvcc")
}

/// The child in a third translation unit (split_child.cu), read with
/// `--child-source`: the generated code is internal to the parent's file,
/// so the three files link without duplicate symbols, at every granularity.
#[test]
fn child_in_another_translation_unit_links() {
    let Some(nvcc) = common::nvcc_or_skip("child_in_another_translation_unit_links") else {
        return;
    };
    let root = common::root().join("tests/multi_tu");
    let parent = std::fs::read_to_string(root.join("split_parent.cu")).unwrap();
    let options = dpopt::unit::Options {
        child_sources: vec![root.join("split_child.cu")],
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap();
    for add in [
        "",
        " consldt(warp)",
        " consldt(multiblock, 8)",
        " consldt(grid)",
    ] {
        let text = common::append_to_pragmas(&parent, add);
        let file = dpopt::source::SourceFile::new("split_parent.cu", text.into_bytes());
        let output = dpopt::run_with(&file, Some(&options), "split_parent.dp.cu", true)
            .output
            .expect("dpopt transforms split_parent.cu with --child-source");
        let source = dir.path().join("split_parent.dp.cu");
        std::fs::write(&source, output).unwrap();
        let result = link(
            &nvcc,
            &dir.path().join("two_files_split"),
            &[source, root.join("split_child.cu"), root.join("host.cu")],
        );
        assert!(
            result.status.success(),
            "`{add}`: nvcc failed:\n{}",
            String::from_utf8_lossy(&result.stderr)
        );
    }
}

/// With -DDPOPT_RUNTIME_KNOBS the tuning values become __device__ variables
/// and the host hook that sets them links into the example.
#[test]
fn runtime_knobs_build() {
    let Some(nvcc) = common::nvcc_or_skip("runtime_knobs_build") else {
        return;
    };
    let text = std::fs::read_to_string(common::root().join("examples/bfs.cu")).unwrap();
    let text = common::with_pragmas(
        &text,
        "#pragma dp threshold(64) coarsen(4) consldt(warp) agg_threshold(2)",
    );
    let file = dpopt::source::SourceFile::new("bfs.cu", text.into_bytes());
    let output = dpopt::run(&file, "bfs.dp.cu", true)
        .output
        .expect("transforms");
    let generated = String::from_utf8_lossy(&output);
    for knob in [
        "dpopt_knob_DPOPT_THRESHOLD_bfs_parent_1",
        "dpopt_knob_DPOPT_COARSEN_bfs_parent_1",
        "dpopt_knob_DPOPT_AGG_THRESHOLD_bfs_parent_1",
    ] {
        assert!(generated.contains(knob), "{knob} missing");
    }
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("bfs.dp.cu");
    std::fs::write(&source, &output).unwrap();
    let result = Command::new(&nvcc)
        .args(["-rdc=true", "-arch=sm_90", "-O3", "-DDPOPT_RUNTIME_KNOBS"])
        // Examples share host code in examples/common/ (included as "common/...").
        .arg(format!("-I{}", common::root().join("examples").display()))
        .arg("-o")
        .arg(dir.path().join("bfs"))
        .arg(&source)
        .arg("-lcudadevrt")
        .output()
        .expect("runs nvcc");
    assert!(
        result.status.success(),
        "nvcc failed:\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
}

/// nvcc's messages about the user's own code in a rewritten launch name the
/// line of the input where that code is written, not generated lines.
#[test]
fn errors_in_rewritten_launches_point_at_the_input() {
    let Some(nvcc) = common::nvcc_or_skip("errors_in_rewritten_launches_point_at_the_input") else {
        return;
    };
    // The launch spans lines 9-10; its second line holds either one
    // argument too many or an undefined name in the block size.
    let program = |pragma: &str, bad_args: bool| {
        format!(
            "#include <cstdio>\n\
             __global__ void child(int *a, int n) {{\n\
             \x20 int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
             \x20 if (i < n) a[i] = i;\n\
             }}\n\
             __global__ void parent(int *a, const int *sizes) {{\n\
             \x20 int n = sizes[threadIdx.x];\n\
             #pragma dp {pragma}\n\
             \x20 child<<<(n + 31) / 32,\n\
             \x20         {}>>>(a, n{});\n\
             }}\n",
            if bad_args {
                "32"
            } else {
                "BLOCK_SIZE_UNDEFINED"
            },
            if bad_args { ", 3" } else { "" },
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for pragma in [
        "threshold(64)",
        "coarsen(4)",
        "threshold(64) coarsen(4)",
        "consldt(warp)",
        "threshold(64) consldt(block)",
        "coarsen(2) consldt(multiblock, 8)",
        "threshold(64) coarsen(2) consldt(grid)",
    ] {
        for (bad_args, line, what) in [
            (true, 10, "too many arguments"),
            (
                false,
                10,
                "identifier \"BLOCK_SIZE_UNDEFINED\" is undefined",
            ),
        ] {
            let text = program(pragma, bad_args);
            let file = dpopt::source::SourceFile::new("user.cu", text.into_bytes());
            let output = dpopt::run(&file, "user.dp.cu", true)
                .output
                .unwrap_or_else(|| panic!("{pragma}: dpopt refused"));
            let source = dir.path().join("user.dp.cu");
            std::fs::write(&source, output).unwrap();
            let result = Command::new(&nvcc)
                .args(["-rdc=true", "-arch=sm_90", "-c", "-o"])
                .arg(dir.path().join("user.o"))
                .arg(&source)
                .output()
                .expect("runs nvcc");
            let stderr = String::from_utf8_lossy(&result.stderr);
            let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).collect();
            let expected = format!("user.cu({line}): error: {what}");
            let located = errors.iter().any(|l| l.starts_with(&expected));
            let elsewhere: Vec<&&str> = errors
                .iter()
                .filter(|l| l.contains(": error:") && !l.starts_with(&format!("user.cu({line})")))
                .collect();
            if result.status.success() || !located || !elsewhere.is_empty() {
                failures.push(format!(
                    "#pragma dp {pragma}: expected `{expected}` and no error elsewhere, got:\n{stderr}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// nvcc's messages about the user's own code in a promoted launch (in the
/// kernel, and in the copy of its body a promoted step runs) name the line
/// of the input where that code is written.
#[test]
fn errors_in_promoted_launches_point_at_the_input() {
    let Some(nvcc) = common::nvcc_or_skip("errors_in_promoted_launches_point_at_the_input") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (pragma, marker) in [
        ("promote(basic)", ""),
        ("promote(aggregate)", "#pragma dp acquire"),
    ] {
        // The launch spans lines 6-7; an undefined name in its late argument.
        let text = format!(
            "__global__ void chain(int *a, int n, int acc) {{\n\
             \x20 int v = a[n];\n\
             {marker}\n\
             \x20 if (n > 0) {{\n\
             #pragma dp {pragma}\n\
             \x20   chain<<<1, 32>>>(a, n - 1,\n\
             \x20                    acc + v + UNDEFINED_NAME);\n\
             \x20 }}\n\
             }}\n"
        );
        let file = dpopt::source::SourceFile::new("user.cu", text.into_bytes());
        let output = dpopt::run(&file, "user.dp.cu", true)
            .output
            .unwrap_or_else(|| panic!("{pragma}: dpopt refused"));
        let source = dir.path().join("user.dp.cu");
        std::fs::write(&source, output).unwrap();
        let result = Command::new(&nvcc)
            .args(["-rdc=true", "-arch=sm_90", "-c", "-o"])
            .arg(dir.path().join("user.o"))
            .arg(&source)
            .output()
            .expect("runs nvcc");
        let stderr = String::from_utf8_lossy(&result.stderr);
        let errors: Vec<&str> = stderr.lines().filter(|l| l.contains(": error:")).collect();
        let expected = "user.cu(7): error: identifier \"UNDEFINED_NAME\" is undefined";
        // Both copies of the launch: the kernel's and the step's.
        let located = errors.iter().filter(|l| l.starts_with(expected)).count();
        if result.status.success() || located < 2 || located != errors.len() {
            failures.push(format!(
                "#pragma dp {pragma}: expected `{expected}` twice and no error elsewhere, got:\n{stderr}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The CDP1 programs of tests/postwork/, migrated with `--migrate-sync`
/// (their device-side waits do not compile for sm_90 as written): each
/// compiles and links for sm_90, as is, with `-DDPOPT_STATS` and with
/// `-DDPOPT_POSTWORK_PER_THREAD`, with no warning in the generated code.
/// `DPOPT_NVCC_FILTER` selects as above.
#[test]
fn migrated_cdp1_programs_compile_for_sm_90() {
    let Some(nvcc) = common::nvcc_or_skip("migrated_cdp1_programs_compile_for_sm_90") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let filter = std::env::var("DPOPT_NVCC_FILTER").ok();
    let programs = common::postwork_programs();
    assert!(programs.len() >= 4, "tests/postwork/ programs are missing");
    let mut failures = Vec::new();
    for path in programs {
        let name = format!("{}_migrated", common::stem(&path));
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let out = dir.path().join(format!("{name}.dp.cu"));
        let file = common::load(&path);
        let Some(bytes) = common::migrate(&file, &out.display().to_string(), true).output else {
            failures.push(format!("{name}: dpopt reported errors"));
            continue;
        };
        std::fs::write(&out, bytes).unwrap();
        for defines in [
            &[][..],
            &["-DDPOPT_STATS"][..],
            &["-DDPOPT_POSTWORK_PER_THREAD"][..],
        ] {
            let result = Command::new(&nvcc)
                .args(["-rdc=true", "-arch=sm_90", "-O3"])
                .args(defines)
                .arg(format!("-I{}", common::root().join("examples").display()))
                .arg("-o")
                .arg(dir.path().join(&name))
                .arg(&out)
                .arg("-lcudadevrt")
                .output()
                .expect("run nvcc");
            let stderr = String::from_utf8_lossy(&result.stderr);
            if !result.status.success() {
                failures.push(format!("{name} {defines:?}: nvcc failed:\n{stderr}"));
            } else if stderr.contains(".dp.cu(") {
                failures.push(format!(
                    "{name} {defines:?}: warnings in generated code:\n{stderr}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// An error in the code after a migrated sync is reported by nvcc at its
/// line in the input (the postwork body is copied under `#line`).
#[test]
fn errors_in_migrated_postwork_point_at_the_input() {
    let Some(nvcc) = common::nvcc_or_skip("errors_in_migrated_postwork_point_at_the_input") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let src = "__global__ void child(int *a) { a[threadIdx.x] = 1; }\n\
__global__ void parent(int *a) {\n\
  int v = a[threadIdx.x];\n\
  child<<<1, 32>>>(a);\n\
  cudaDeviceSynchronize();\n\
  a[threadIdx.x] = v + undeclared_name;\n\
}\n";
    let file = dpopt::source::SourceFile::new("cdp1.cu", src.as_bytes().to_vec());
    let out = dir.path().join("cdp1.dp.cu");
    let bytes = dpopt::run_migrating(&file, None, true, &out.display().to_string(), true)
        .output
        .expect("migrated");
    std::fs::write(&out, bytes).unwrap();
    let result = Command::new(&nvcc)
        .args(["-rdc=true", "-arch=sm_90", "-c", "-o"])
        .arg(dir.path().join("cdp1.o"))
        .arg(&out)
        .output()
        .expect("run nvcc");
    assert!(!result.status.success());
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        stderr.contains("cdp1.cu(6)") && stderr.contains("undeclared_name"),
        "{stderr}"
    );
}
