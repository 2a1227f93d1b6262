//! The translation unit dpopt reads: the input, the headers it includes with
//! quoted `#include "..."` (recursively), and the other sources named by
//! `--child-source` (with their headers), assembled into one `SourceFile`
//! whose parts keep their own names and lines. Each file is lexed on its
//! own; only the input is ever rewritten.

use crate::lexer;
use crate::source::{Origin, Part, SourceFile};
use crate::token::{Token, TokenKind};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Where to look for files beyond the input.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `-I DIR`: searched for quoted includes after the including file's
    /// own directory, in order.
    pub include_dirs: Vec<PathBuf>,
    /// `--child-source FILE`: other sources whose kernels may be launched.
    pub child_sources: Vec<PathBuf>,
    /// Search the input's own directory for its includes (false for
    /// standard input, which has none).
    pub input_dir: Option<PathBuf>,
    /// `-D NAME[=VALUE]` (value `1` when omitted, as nvcc defines it):
    /// macros the command line defines before the input.
    pub defines: Vec<(String, String)>,
}

/// The unit as one file, and its tokens (each file lexed on its own).
pub(crate) struct Unit {
    pub file: SourceFile,
    pub tokens: Vec<Token>,
}

/// Where the headers a file includes get their anchor.
#[derive(Clone, Copy)]
enum Anchor {
    /// The input: each header at the end of its own `#include`.
    Own,
    /// Another file: the anchor of the file itself.
    Inherited(Option<usize>),
}

struct Loaded {
    file: SourceFile,
    tokens: Vec<Token>,
    origin: Origin,
    anchor: Option<usize>,
}

struct Loader<'a> {
    options: &'a Options,
    seen: HashSet<PathBuf>,
    parts: Vec<Loaded>,
    searched: Vec<String>,
}

/// Read the files the input's kernels may come from. Files that cannot be
/// found or read are skipped (nvcc reports them); each one looked for is
/// listed in `searched`.
pub(crate) fn load(input: &SourceFile, options: &Options) -> Unit {
    let tokens = lexer::lex(input);
    let mut loader = Loader {
        options,
        seen: HashSet::new(),
        parts: Vec::new(),
        searched: Vec::new(),
    };
    if let Ok(p) = Path::new(&input.name).canonicalize() {
        loader.seen.insert(p);
    }
    loader.searched.push(format!("{} (the input)", input.name));
    loader.includes_from(
        input,
        &tokens,
        options.input_dir.as_deref(),
        Origin::Header,
        Anchor::Own,
    );
    for path in &options.child_sources {
        let shown = path.display().to_string();
        match loader.read(path, Origin::ChildSource, None) {
            Ok(Some(k)) => {
                loader.searched.push(format!("{shown} (--child-source)"));
                loader.follow(k, path);
            }
            Ok(None) => {}
            Err(e) => loader
                .searched
                .push(format!("{shown} (--child-source): {e}")),
        }
    }
    if loader.parts.is_empty() {
        let mut file = input.clone();
        file.searched = loader.searched;
        return Unit { file, tokens };
    }
    let mut bytes = input.bytes.clone();
    let mut all = tokens;
    let separate = |bytes: &mut Vec<u8>, all: &mut Vec<Token>| {
        if !bytes.is_empty() && !bytes.ends_with(b"\n") {
            all.push(Token {
                kind: TokenKind::Newline,
                start: bytes.len(),
                end: bytes.len() + 1,
            });
            bytes.push(b'\n');
        }
    };
    let mut parts = Vec::with_capacity(loader.parts.len());
    for loaded in loader.parts {
        separate(&mut bytes, &mut all);
        let start = bytes.len();
        bytes.extend_from_slice(&loaded.file.bytes);
        all.extend(loaded.tokens.iter().map(|t| Token {
            kind: t.kind,
            start: t.start + start,
            end: t.end + start,
        }));
        parts.push(Part {
            start,
            file: loaded.file,
            origin: loaded.origin,
            anchor: loaded.anchor,
        });
    }
    separate(&mut bytes, &mut all);
    let file = input.clone().into_unit(bytes, parts, loader.searched);
    Unit { file, tokens: all }
}

impl Loader<'_> {
    /// Follow the quoted includes of the part just read from `path`.
    fn follow(&mut self, k: usize, path: &Path) {
        let file = self.parts[k].file.clone();
        let tokens = self.parts[k].tokens.clone();
        let origin = self.parts[k].origin;
        let anchor = self.parts[k].anchor;
        let dir = path.parent().map(Path::to_path_buf);
        self.includes_from(
            &file,
            &tokens,
            dir.as_deref(),
            origin,
            Anchor::Inherited(anchor),
        );
    }

    /// Follow the quoted includes of `file`: for the input, each header's
    /// anchor is the end of its own `#include`; headers read from another
    /// file inherit that file's anchor.
    fn includes_from(
        &mut self,
        file: &SourceFile,
        tokens: &[Token],
        dir: Option<&Path>,
        origin: Origin,
        anchor: Anchor,
    ) {
        for (name, end) in quoted_includes(file, tokens) {
            let anchor = match anchor {
                Anchor::Own => Some(end),
                Anchor::Inherited(a) => a,
            };
            if let Some((path, k)) = self.find(&name, dir, &file.name, origin, anchor) {
                self.follow(k, &path);
            }
        }
    }

    /// Look for `name` in `dir`, then in each `-I` directory; read the
    /// first one found (unless already read).
    fn find(
        &mut self,
        name: &str,
        dir: Option<&Path>,
        includer: &str,
        origin: Origin,
        anchor: Option<usize>,
    ) -> Option<(PathBuf, usize)> {
        let mut dirs: Vec<PathBuf> = dir.map(Path::to_path_buf).into_iter().collect();
        dirs.extend(self.options.include_dirs.iter().cloned());
        for d in &dirs {
            let path = d.join(name);
            if !path.is_file() {
                continue;
            }
            let shown = path.display().to_string();
            return match self.read(&path, origin, anchor) {
                Ok(Some(k)) => {
                    self.searched
                        .push(format!("{shown} (included by {includer})"));
                    Some((path, k))
                }
                Ok(None) => None,
                Err(e) => {
                    self.searched
                        .push(format!("{shown} (included by {includer}): {e}"));
                    None
                }
            };
        }
        let places: Vec<String> = dirs
            .iter()
            .map(|d| match d.as_os_str().is_empty() {
                true => ".".to_string(),
                false => d.display().to_string(),
            })
            .collect();
        self.searched.push(format!(
            "\"{name}\" (included by {includer}): not found in {}",
            if places.is_empty() {
                "any directory (give -I DIR)".to_string()
            } else {
                places.join(", ")
            }
        ));
        None
    }

    /// Read and lex a file; `Ok(None)` when it was read before.
    fn read(
        &mut self,
        path: &Path,
        origin: Origin,
        anchor: Option<usize>,
    ) -> Result<Option<usize>, String> {
        let canonical = path.canonicalize().map_err(|e| e.to_string())?;
        if !self.seen.insert(canonical) {
            return Ok(None);
        }
        let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
        let file = SourceFile::new(path.display().to_string(), bytes);
        let tokens = lexer::lex(&file);
        // A file whose brackets do not match would confuse the structure of
        // everything after it: dpopt does not read it.
        let program = crate::parser::parse(&file, tokens.clone());
        if program.unbalanced.is_some() {
            return Err("not read: its brackets do not match".to_string());
        }
        self.parts.push(Loaded {
            file,
            tokens,
            origin,
            anchor,
        });
        Ok(Some(self.parts.len() - 1))
    }
}

/// `#include "name"` directives: the name and the directive's end offset.
fn quoted_includes(file: &SourceFile, tokens: &[Token]) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for t in tokens.iter().filter(|t| t.kind == TokenKind::Directive) {
        let text = t.text(&file.view);
        if !text.contains("include") {
            continue;
        }
        let logical = crate::phases::directive_text(text, t.start);
        let rest = logical.text.trim_start();
        let Some(rest) = rest.strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("include") else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix('"') else {
            continue;
        };
        if let Some(close) = rest.find('"') {
            let name = &rest[..close];
            if !name.is_empty() {
                out.push((name.to_string(), t.end));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn names(unit: &Unit) -> Vec<String> {
        unit.file
            .parts
            .iter()
            .map(|p| {
                Path::new(&p.file.name)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect()
    }

    #[test]
    fn quoted_includes_are_followed_once_through_cycles_and_directories() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let input = write(
            d,
            "src/main.cu",
            "#include <vector>\n#include \"a.cuh\"\n  #  include \"b.cuh\"\nint main() {}",
        );
        write(d, "src/a.cuh", "#include \"b.cuh\"\nint a;\n");
        write(
            d,
            "inc/b.cuh",
            "#include \"a.cuh\"\n#include \"b.cuh\"\nint b;\n",
        );
        write(d, "inc/a.cuh", "int not_this_one;\n");
        let file = SourceFile::new(input.display().to_string(), std::fs::read(&input).unwrap());
        let options = Options {
            include_dirs: vec![d.join("inc")],
            input_dir: Some(d.join("src")),
            ..Default::default()
        };
        let unit = load(&file, &options);
        // a.cuh next to the input, b.cuh from -I, and the a.cuh that b.cuh
        // includes is inc/a.cuh (its own directory comes first), another
        // file; b.cuh including itself is read once.
        assert_eq!(names(&unit), ["a.cuh", "b.cuh", "a.cuh"]);
        assert!(unit.file.parts[2].file.name.contains("inc"));
        // The input ends without a newline: one is added between files.
        assert_eq!(unit.file.input_len(), file.bytes.len());
        assert_eq!(unit.file.parts[0].start, file.bytes.len() + 1);
        // Headers of the input are anchored at their own #include; nested
        // ones at the includer's.
        let include_a = file.view.find("#include \"a.cuh\"").unwrap();
        let anchor = unit.file.parts[0].anchor.unwrap();
        assert_eq!(anchor, include_a + "#include \"a.cuh\"".len());
        assert_eq!(unit.file.parts[1].anchor, Some(anchor));
        // Tokens tile the whole unit.
        let mut at = 0;
        for t in &unit.tokens {
            assert_eq!(t.start, at);
            at = t.end;
        }
        assert_eq!(at, unit.file.bytes.len());
        // Locations name each file.
        let b = &unit.file.parts[1];
        assert!(unit
            .file
            .location(b.start + "#include \"a.cuh\"\n".len())
            .ends_with("b.cuh:2:1"));
    }

    #[test]
    fn headers_not_found_and_child_sources_are_listed() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let input = write(d, "main.cu", "#include \"missing.cuh\"\n");
        let child = write(
            d,
            "other/child.cu",
            "#include \"util.cuh\"\n__global__ void k() {}\n",
        );
        write(d, "other/util.cuh", "int u;\n");
        let file = SourceFile::new(input.display().to_string(), std::fs::read(&input).unwrap());
        let options = Options {
            include_dirs: vec![d.join("nowhere")],
            input_dir: Some(d.to_path_buf()),
            child_sources: vec![child.clone()],
            ..Default::default()
        };
        let unit = load(&file, &options);
        assert_eq!(names(&unit), ["child.cu", "util.cuh"]);
        assert!(unit.file.parts.iter().all(|p| p.anchor.is_none()));
        assert!(unit
            .file
            .parts
            .iter()
            .all(|p| p.origin == Origin::ChildSource));
        let searched = unit.file.searched.join("\n");
        assert!(searched.contains("\"missing.cuh\""), "{searched}");
        assert!(searched.contains("nowhere"), "{searched}");
        assert!(searched.contains("child.cu (--child-source)"), "{searched}");
        assert!(searched.contains("util.cuh (included by"), "{searched}");
    }
}
