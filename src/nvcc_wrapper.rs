//! `dpopt nvcc ARGS...`: a drop-in for nvcc. Every `.cu` input that holds a
//! `#pragma dp` launch site is transformed into a temporary file (same file
//! name, in a temporary directory; the `#line` markers keep nvcc's messages
//! on the user's file), nvcc is run with those files in place of the
//! inputs, the original's directory added as `-I` (so that its quoted
//! includes are still found), and what CUDA dynamic parallelism needs added
//! when missing: `-rdc=true` on a compile, `-lcudadevrt` on a link. nvcc's
//! exit status is returned.
//!
//! The nvcc run: the first argument when it names an nvcc executable (as a
//! CMake compiler launcher passes it), else `$DPOPT_NVCC`, else `nvcc` on
//! PATH.

use crate::diagnostic::Diagnostic;
use crate::message_format::{render, MessageFormat};
use crate::source::SourceFile;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// nvcc options whose value is the next argument (when not written as
/// `-opt=value`).
const TAKES_VALUE: &[&str] = &[
    "-o",
    "-I",
    "-D",
    "-U",
    "-L",
    "-l",
    "-x",
    "-t",
    "-arch",
    "-code",
    "-gencode",
    "-ccbin",
    "-Xcompiler",
    "-Xlinker",
    "-Xptxas",
    "-Xnvlink",
    "-Xarchive",
    "-include",
    "-isystem",
    "-odir",
    "-MF",
    "-MT",
    "-maxrregcount",
    "-std",
    "-rdc",
    "-optf",
    "-ldir",
    "-cudart",
    "-cudadevrt",
    "-Werror",
    "-diag-suppress",
    "-diag-error",
    "-diag-warn",
    "-split-compile",
    "-time",
    "-keep-dir",
    "-run-args",
    "--output-file",
    "--include-path",
    "--define-macro",
    "--undefine-macro",
    "--library",
    "--library-path",
    "--compiler-bindir",
    "--gpu-architecture",
    "--gpu-code",
    "--generate-code",
    "--compiler-options",
    "--linker-options",
    "--ptxas-options",
    "--nvlink-options",
    "--archive-options",
    "--x",
    "--threads",
    "--options-file",
    "--relocatable-device-code",
    "--pre-include",
    "--system-include",
    "--output-directory",
    "--dependency-output",
    "--dependency-target-name",
    "--maxrregcount",
    "--std",
    "--cudart",
    "--cudadevrt",
    "--Werror",
    "--diag-suppress",
    "--diag-error",
    "--diag-warn",
    "--split-compile",
    "--time",
    "--keep-dir",
    "--run-args",
];

/// Options after which nvcc does not link.
const NO_LINK: &[&str] = &[
    "-c",
    "--compile",
    "-dc",
    "--device-c",
    "-dw",
    "--device-w",
    "-E",
    "--preprocess",
    "-M",
    "--generate-dependencies",
    "-MM",
    "--generate-nonsystem-dependencies",
    "-ptx",
    "--ptx",
    "-cubin",
    "--cubin",
    "-fatbin",
    "--fatbin",
    "-lib",
    "--lib",
    "-optix-ir",
    "--optix-ir",
    "-V",
    "--version",
    "-h",
    "--help",
];

/// The nvcc command line read: inputs, search directories, macros.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Parsed {
    /// Indices (into the arguments) of the input files.
    pub inputs: Vec<usize>,
    pub include_dirs: Vec<PathBuf>,
    pub defines: Vec<(String, String)>,
    /// `-rdc`/`--relocatable-device-code`/`-dc`/`-dw` given.
    pub relocatable: bool,
    /// Some option makes nvcc stop before linking.
    pub no_link: bool,
    /// `-dlink`: a device-link step (links the device runtime too).
    pub device_link: bool,
    /// `-lcudadevrt` (or `--library cudadevrt`) given.
    pub devrt: bool,
    /// `-MF FILE`: the dependency file nvcc writes.
    pub dependency_file: Option<PathBuf>,
    /// `--options-file FILE` / `-optf FILE`: more arguments in files.
    pub options_files: Vec<PathBuf>,
    /// Inputs named in options files (nvcc reads them; dpopt does not
    /// transform them).
    pub indirect_inputs: usize,
}

impl Parsed {
    /// Add what the arguments of an options file say (their inputs are
    /// counted, not transformed).
    pub(crate) fn merge(&mut self, other: Parsed) {
        self.include_dirs.extend(other.include_dirs);
        self.defines.extend(other.defines);
        self.relocatable |= other.relocatable;
        self.no_link |= other.no_link;
        self.device_link |= other.device_link;
        self.devrt |= other.devrt;
        if self.dependency_file.is_none() {
            self.dependency_file = other.dependency_file;
        }
        self.indirect_inputs += other.inputs.len() + other.indirect_inputs;
    }
}

/// The arguments of an options file: words separated by blanks, with
/// `"..."` and `'...'` quoting and backslash escapes, as nvcc reads them.
pub(crate) fn options_file_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                }
            }
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                    in_word = true;
                }
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The option name and its attached value: `-opt=value`, `-Ivalue`.
fn split_option(arg: &str) -> (&str, Option<&str>) {
    for short in ["-I", "-D", "-U", "-L", "-l", "-o", "-x"] {
        if arg.len() > 2 && arg.starts_with(short) && !arg.starts_with("--") {
            // `-lib`, `-lineinfo`, `-odir`, `-opt-info`... are options of their own.
            let head = arg.split('=').next().unwrap_or(arg);
            if TAKES_VALUE.contains(&head) || NO_LINK.contains(&head) || is_flag(head) {
                break;
            }
            return (short, Some(&arg[2..]));
        }
    }
    if let Some((name, value)) = arg.split_once('=') {
        return (name, Some(value));
    }
    (arg, None)
}

/// Single-dash options of nvcc that start like an attached short option.
fn is_flag(arg: &str) -> bool {
    matches!(
        arg,
        "-lineinfo"
            | "-lib"
            | "-ldir"
            | "-odir"
            | "-optf"
            | "-opt-info"
            | "-lto"
            | "-link"
            | "-Xcompiler"
            | "-Xlinker"
            | "-Xptxas"
            | "-Xnvlink"
            | "-Xarchive"
            | "-use_fast_math"
    )
}

/// Read nvcc's arguments (without the program name).
pub(crate) fn parse(args: &[String]) -> Parsed {
    let mut p = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if !arg.starts_with('-') || arg == "-" {
            p.inputs.push(i);
            i += 1;
            continue;
        }
        let (name, attached) = split_option(arg);
        let value = match attached {
            Some(v) => Some(v.to_string()),
            None if TAKES_VALUE.contains(&name) => {
                i += 1;
                args.get(i).cloned()
            }
            None => None,
        };
        match name {
            "-I" | "--include-path" => {
                if let Some(v) = &value {
                    p.include_dirs
                        .extend(v.split(',').filter(|s| !s.is_empty()).map(PathBuf::from));
                }
            }
            "-D" | "--define-macro" => {
                for d in value.iter().flat_map(|v| v.split(',')) {
                    let (n, v) = d.split_once('=').unwrap_or((d, "1"));
                    if !n.is_empty() {
                        p.defines.push((n.to_string(), v.to_string()));
                    }
                }
            }
            "-rdc" | "--relocatable-device-code" | "-dc" | "--device-c" | "-dw" | "--device-w" => {
                p.relocatable = true
            }
            "-dlink" | "--device-link" => p.device_link = true,
            "-l" | "--library"
                if value
                    .as_deref()
                    .is_some_and(|v| v.split(',').any(|l| l == "cudadevrt")) =>
            {
                p.devrt = true;
            }
            "-MF" | "--dependency-output" => p.dependency_file = value.map(PathBuf::from),
            "-optf" | "--options-file" => {
                p.options_files.extend(
                    value
                        .iter()
                        .flat_map(|v| v.split(','))
                        .filter(|f| !f.is_empty())
                        .map(PathBuf::from),
                );
            }
            _ => {}
        }
        if NO_LINK.contains(&name) {
            p.no_link = true;
        }
        if matches!(name, "-dc" | "--device-c" | "-dw" | "--device-w") {
            p.no_link = true;
        }
        i += 1;
    }
    p
}

/// Is this input a CUDA source dpopt may transform?
fn is_cuda_source(path: &str) -> bool {
    path.ends_with(".cu")
}

/// Does the path name an nvcc executable (a CMake launcher's next word)?
fn is_nvcc(path: &str) -> bool {
    let name = Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    name == "nvcc" || name == "nvcc.exe"
}

/// The nvcc command line to run, built from the user's: transformed
/// inputs replaced, flags added.
#[derive(Debug)]
pub(crate) struct Rewritten {
    pub args: Vec<String>,
    /// The flags added (for the one note on standard error).
    pub added: Vec<String>,
}

/// Build the command line: `replacements` maps an argument index to the
/// transformed file that replaces it; `original_dirs` are the directories
/// of the transformed inputs, searched first for their quoted includes.
pub(crate) fn rewrite(
    args: &[String],
    parsed: &Parsed,
    replacements: &[(usize, PathBuf)],
    original_dirs: &[PathBuf],
) -> Rewritten {
    let mut out: Vec<String> = Vec::with_capacity(args.len() + 4);
    let mut added = Vec::new();
    for dir in original_dirs {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        out.push(format!("-I{}", dir.display()));
    }
    for (i, arg) in args.iter().enumerate() {
        match replacements.iter().find(|(k, _)| *k == i) {
            Some((_, path)) => out.push(path.display().to_string()),
            None => out.push(arg.clone()),
        }
    }
    let has_cuda_input = parsed.inputs.iter().any(|&i| is_cuda_source(&args[i]));
    let transformed = !replacements.is_empty();
    if (transformed || has_cuda_input) && !parsed.relocatable && !parsed.device_link {
        out.push("-rdc=true".into());
        added.push("-rdc=true".to_string());
    }
    let links = !parsed.no_link || parsed.device_link;
    let inputs = parsed.inputs.len() + parsed.indirect_inputs;
    if links && inputs > 0 && !parsed.devrt {
        out.push("-lcudadevrt".into());
        added.push("-lcudadevrt".to_string());
    }
    Rewritten { args: out, added }
}

fn fail(message: &str, code: u8) -> ExitCode {
    eprintln!("dpopt: error: {message}");
    ExitCode::from(code)
}

/// The message format of the wrapper's diagnostics: `$DPOPT_MESSAGE_FORMAT`
/// (`human`, `short`, `json`), human by default.
fn message_format() -> MessageFormat {
    match std::env::var("DPOPT_MESSAGE_FORMAT").as_deref() {
        Ok("short") => MessageFormat::Short,
        Ok("json") => MessageFormat::Json,
        _ => MessageFormat::Human,
    }
}

fn report(unit: &SourceFile, diagnostics: &[Diagnostic]) {
    let format = message_format();
    for d in diagnostics {
        eprintln!("{}", render(d, unit, format));
    }
}

/// `dpopt nvcc ARGS...`.
pub fn main(raw: &[OsString]) -> ExitCode {
    let mut args: Vec<String> = Vec::with_capacity(raw.len());
    for a in raw {
        match a.to_str() {
            Some(s) => args.push(s.to_string()),
            None => {
                return fail(
                    &format!("argument `{}` is not valid UTF-8", a.to_string_lossy()),
                    2,
                )
            }
        }
    }
    let (nvcc, args) = match args.first() {
        Some(first) if is_nvcc(first) => (first.clone(), args[1..].to_vec()),
        _ => (
            std::env::var("DPOPT_NVCC")
                .ok()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "nvcc".to_string()),
            args,
        ),
    };
    let mut parsed = parse(&args);
    // `-I`, `-D` and the mode may come in options files (CMake writes the
    // include directories into one): read them too, one level deep.
    for file in parsed.options_files.clone() {
        if let Ok(text) = std::fs::read_to_string(&file) {
            parsed.merge(parse(&options_file_words(&text)));
        }
    }
    let options = crate::unit::Options {
        include_dirs: parsed.include_dirs.clone(),
        child_sources: Vec::new(),
        input_dir: None,
        defines: parsed.defines.clone(),
    };
    // Kept until nvcc has run.
    let mut temporaries = Vec::new();
    let mut replacements = Vec::new();
    let mut original_dirs: Vec<PathBuf> = Vec::new();
    let mut failed = false;
    for &i in &parsed.inputs {
        let input = &args[i];
        if !is_cuda_source(input) {
            continue;
        }
        let Ok(bytes) = std::fs::read(input) else {
            continue; // nvcc reports it
        };
        let file = SourceFile::new(input.clone(), bytes);
        let options = crate::unit::Options {
            input_dir: Path::new(input).parent().map(Path::to_path_buf),
            ..options.clone()
        };
        let generated_name = format!("{input} (generated by dpopt)");
        let outcome = crate::run_with(&file, Some(&options), &generated_name, true);
        report(outcome.source(&file), &outcome.diagnostics);
        if outcome.has_errors() {
            failed = true;
            continue;
        }
        if outcome.sites.is_empty() {
            continue; // nothing to transform: nvcc compiles the file itself
        }
        let Some(bytes) = outcome.output else {
            continue;
        };
        let dir = match tempfile::Builder::new().prefix("dpopt-nvcc-").tempdir() {
            Ok(d) => d,
            Err(e) => return fail(&format!("cannot create a temporary directory: {e}"), 1),
        };
        let name = Path::new(input)
            .file_name()
            .map_or_else(|| OsString::from("input.cu"), |n| n.to_os_string());
        let path = dir.path().join(name);
        if let Err(e) = std::fs::write(&path, &bytes) {
            return fail(
                &format!("cannot write the transformed `{input}`: {}", e.kind()),
                1,
            );
        }
        replacements.push((i, path));
        let original_dir = Path::new(input)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        if !original_dirs.contains(&original_dir) {
            original_dirs.push(original_dir);
        }
        temporaries.push(dir);
    }
    if failed {
        return ExitCode::from(1);
    }
    let rewritten = rewrite(&args, &parsed, &replacements, &original_dirs);
    if !rewritten.added.is_empty() {
        eprintln!(
            "dpopt: added {} (CUDA dynamic parallelism needs {})",
            rewritten.added.join(" "),
            if rewritten.added.len() == 1 {
                "it"
            } else {
                "them"
            }
        );
    }
    let status = match std::process::Command::new(&nvcc)
        .args(&rewritten.args)
        .status()
    {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return fail(
                &format!("cannot run `{nvcc}`: not found (put nvcc on PATH or set DPOPT_NVCC)"),
                127,
            )
        }
        Err(e) => return fail(&format!("cannot run `{nvcc}`: {e}"), 127),
    };
    // A dependency file names the transformed file: name the original.
    if let Some(dep) = &parsed.dependency_file {
        if let Ok(text) = std::fs::read_to_string(dep) {
            let mut fixed = text.clone();
            for (i, path) in &replacements {
                fixed = fixed.replace(&path.display().to_string(), &args[*i]);
            }
            if fixed != text {
                let _ = std::fs::write(dep, fixed);
            }
        }
    }
    drop(temporaries);
    match status.code() {
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::from(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reads_inputs_options_and_values() {
        let args = strings(&[
            "-arch", "sm_90", "-Iinc", "-I", "other", "-DN=4", "-D", "M", "-c", "a.cu", "-o", "a.o",
        ]);
        let p = parse(&args);
        assert_eq!(p.inputs, vec![9]);
        assert_eq!(
            p.include_dirs,
            vec![PathBuf::from("inc"), PathBuf::from("other")]
        );
        assert_eq!(
            p.defines,
            vec![("N".into(), "4".into()), ("M".into(), "1".into())]
        );
        assert!(p.no_link && !p.relocatable && !p.devrt);
    }

    #[test]
    fn adds_rdc_on_compile_and_devrt_on_link() {
        let args = strings(&["-arch=sm_90", "a.cu", "-o", "a"]);
        let p = parse(&args);
        let r = rewrite(
            &args,
            &p,
            &[(1, PathBuf::from("/tmp/x/a.cu"))],
            &[PathBuf::new()],
        );
        assert_eq!(
            r.args,
            strings(&[
                "-I.",
                "-arch=sm_90",
                "/tmp/x/a.cu",
                "-o",
                "a",
                "-rdc=true",
                "-lcudadevrt"
            ])
        );
        assert_eq!(r.added, strings(&["-rdc=true", "-lcudadevrt"]));
    }

    #[test]
    fn adds_nothing_that_is_there() {
        let args = strings(&["-dc", "a.cu", "-o", "a.o"]);
        let r = rewrite(&args, &parse(&args), &[], &[]);
        assert!(r.added.is_empty(), "{:?}", r.added);
        let args = strings(&["-rdc=true", "a.o", "b.o", "-lcudadevrt", "-o", "app"]);
        let r = rewrite(&args, &parse(&args), &[], &[]);
        assert!(r.added.is_empty(), "{:?}", r.added);
        let args = strings(&["--relocatable-device-code", "true", "-c", "a.cu"]);
        assert!(rewrite(&args, &parse(&args), &[], &[]).added.is_empty());
        let args = strings(&["--version"]);
        assert!(rewrite(&args, &parse(&args), &[], &[]).added.is_empty());
    }

    #[test]
    fn a_link_of_objects_gets_the_device_runtime() {
        let args = strings(&["a.o", "b.o", "-o", "app"]);
        let r = rewrite(&args, &parse(&args), &[], &[]);
        assert_eq!(r.added, strings(&["-lcudadevrt"]));
        let args = strings(&["-dlink", "a.o", "-o", "dlink.o"]);
        let r = rewrite(&args, &parse(&args), &[], &[]);
        assert_eq!(r.added, strings(&["-lcudadevrt"]));
    }

    #[test]
    fn reads_options_files() {
        assert_eq!(
            options_file_words("-I/a \"-I/b c\" -DX='1 2'\n  x.o\\ y.o\n"),
            strings(&["-I/a", "-I/b c", "-DX=1 2", "x.o y.o"])
        );
        let args = strings(&["--options-file", "inc.rsp,more.rsp", "-c", "a.cu"]);
        let mut p = parse(&args);
        assert_eq!(
            p.options_files,
            vec![PathBuf::from("inc.rsp"), PathBuf::from("more.rsp")]
        );
        p.merge(parse(&options_file_words("-I/inc -DN=4 b.o")));
        assert_eq!(p.include_dirs, vec![PathBuf::from("/inc")]);
        assert_eq!(p.defines, vec![("N".into(), "4".into())]);
        assert_eq!(p.indirect_inputs, 1);
        // A link whose objects are all in an options file still gets the
        // device runtime.
        let args = strings(&["--options-file", "objects.rsp", "-o", "app"]);
        let mut p = parse(&args);
        p.merge(parse(&options_file_words("a.o b.o")));
        assert_eq!(
            rewrite(&args, &p, &[], &[]).added,
            strings(&["-lcudadevrt"])
        );
    }

    #[test]
    fn recognizes_a_launcher_nvcc() {
        assert!(is_nvcc("/usr/local/cuda/bin/nvcc"));
        assert!(is_nvcc("nvcc"));
        assert!(!is_nvcc("a.cu"));
        assert!(!is_nvcc("-nvcc"));
    }

    #[test]
    fn attached_short_options_are_not_confused_with_flags() {
        let args = strings(&["-lineinfo", "-lcudadevrt", "-odir", "d", "-odir=e", "x.cu"]);
        let p = parse(&args);
        assert!(p.devrt);
        assert_eq!(p.inputs, vec![5]);
    }
}
