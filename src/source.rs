//! The input file: its original bytes, an ASCII view with the same offsets,
//! and line/column arithmetic.

/// A byte range `start..end` of a source file (of its `bytes` and `view`,
/// which share offsets). Copy, unlike `Range<usize>`, and shown as
/// `start..end`.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    start: usize,
    end: usize,
}

impl Span {
    pub const fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    /// The empty span at `offset`.
    pub const fn at(offset: usize) -> Span {
        Span::new(offset, offset)
    }

    pub const fn start(self) -> usize {
        self.start
    }

    pub const fn end(self) -> usize {
        self.end
    }

    pub const fn len(self) -> usize {
        self.end.saturating_sub(self.start)
    }

    pub const fn is_empty(self) -> bool {
        self.end <= self.start
    }

    /// As a range, to slice the source: `&view[span.range()]`.
    pub const fn range(self) -> std::ops::Range<usize> {
        self.start..self.end
    }

    /// Does the byte at `offset` lie in the span?
    pub const fn contains(self, offset: usize) -> bool {
        self.start <= offset && offset < self.end
    }
}

impl std::fmt::Debug for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

impl From<std::ops::Range<usize>> for Span {
    fn from(r: std::ops::Range<usize>) -> Span {
        Span::new(r.start, r.end)
    }
}

impl From<Span> for std::ops::Range<usize> {
    fn from(s: Span) -> std::ops::Range<usize> {
        s.range()
    }
}

impl From<Span> for miette::SourceSpan {
    fn from(s: Span) -> miette::SourceSpan {
        (s.start, s.len()).into()
    }
}

/// One CUDA source file as read from disk or stdin.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Name used in diagnostics and `#line` directives (`<stdin>` for stdin).
    pub name: String,
    /// The bytes exactly as read; untouched code is copied from here.
    pub bytes: Vec<u8>,
    /// The same bytes as ASCII, so that they can be lexed and parsed with
    /// every offset equal to the offset in `bytes`: each byte of a UTF-8
    /// encoded character becomes `_` (such characters may be part of an
    /// identifier, as for GCC), and each byte that is not valid UTF-8 becomes
    /// DEL (0x7F: a stray character, part of no token). A Latin-1 comment in
    /// old code therefore never stops dpopt.
    pub view: String,
    /// Text shown in diagnostics: the file itself when it is valid UTF-8,
    /// otherwise the ASCII view (same offsets either way).
    pub(crate) display: String,
    line_starts: Vec<usize>,
    /// The line ending most of the file uses: `"\n"`, `"\r\n"` or `"\r"`
    /// (a lone carriage return ends a line for nvcc's preprocessor too).
    pub newline: &'static str,
    /// When this is a translation unit read from several files (the input
    /// followed by the headers it includes and other sources: `unit.rs`),
    /// the files after the input, in offset order; empty for one file.
    pub(crate) parts: Vec<Part>,
    /// Where dpopt looked for other files (headers, child sources), for
    /// the error that says a kernel's definition was not found.
    pub(crate) searched: Vec<String>,
    /// Bytes of the input itself (all of them for one file).
    input_len: usize,
}

/// A file read after the input, as part of its translation unit: its bytes
/// lie at `start..start + file.bytes.len()` (a line break may follow).
#[derive(Debug, Clone)]
pub(crate) struct Part {
    pub start: usize,
    /// The file on its own (local offsets), for locations and reports.
    pub file: SourceFile,
    /// How dpopt came to read it.
    pub origin: Origin,
    /// For a header the input includes (directly or through other
    /// headers): the line start in the input after the `#include` that
    /// brings it in, where code generated for its kernels goes.
    pub anchor: Option<usize>,
}

/// Why a file is part of a translation unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Named by a quoted `#include`.
    Header,
    /// Named by `--child-source` (a separate translation unit, or a header
    /// it includes).
    ChildSource,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, bytes: Vec<u8>) -> Self {
        let mut view = String::with_capacity(bytes.len());
        for chunk in bytes.utf8_chunks() {
            for c in chunk.valid().chars() {
                if c.is_ascii() {
                    view.push(c);
                } else {
                    (0..c.len_utf8()).for_each(|_| view.push('_'));
                }
            }
            (0..chunk.invalid().len()).for_each(|_| view.push('\x7f'));
        }
        let bytes_len = bytes.len();
        let display = match std::str::from_utf8(&bytes) {
            Ok(text) => text.to_string(),
            Err(_) => view.clone(),
        };
        let mut line_starts = vec![0];
        let (mut crlf, mut lf, mut cr) = (0usize, 0usize, 0usize);
        for (i, &b) in bytes.iter().enumerate() {
            match b {
                b'\n' => {
                    line_starts.push(i + 1);
                    if i > 0 && bytes[i - 1] == b'\r' {
                        crlf += 1;
                    } else {
                        lf += 1;
                    }
                }
                b'\r' if bytes.get(i + 1) != Some(&b'\n') => {
                    line_starts.push(i + 1);
                    cr += 1;
                }
                _ => {}
            }
        }
        let newline = if cr > crlf && cr > lf {
            "\r"
        } else if crlf > lf {
            "\r\n"
        } else {
            "\n"
        };
        SourceFile {
            name: name.into(),
            bytes,
            view,
            display,
            line_starts,
            newline,
            parts: Vec::new(),
            searched: Vec::new(),
            input_len: bytes_len,
        }
    }

    /// The names of the files read after the input, as part of its
    /// translation unit (headers, child sources): what a depfile lists.
    pub fn other_files(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().map(|p| p.file.name.as_str())
    }

    /// Length of the input file itself (the unit's first part).
    pub(crate) fn input_len(&self) -> usize {
        self.input_len
    }

    /// The input's own bytes.
    pub(crate) fn input_bytes(&self) -> &[u8] {
        &self.bytes[..self.input_len]
    }

    /// This file as the first part of a unit: the bytes of the whole unit,
    /// the other files' parts and where dpopt looked for files.
    pub(crate) fn into_unit(
        mut self,
        bytes: Vec<u8>,
        parts: Vec<Part>,
        searched: Vec<String>,
    ) -> SourceFile {
        let input_len = self.bytes.len();
        let newline = self.newline;
        self = SourceFile::new(std::mem::take(&mut self.name), bytes);
        self.input_len = input_len;
        self.newline = newline;
        self.parts = parts;
        self.searched = searched;
        self
    }

    /// Is the offset in the input file (not in a header or other source)?
    pub(crate) fn in_input(&self, offset: usize) -> bool {
        offset < self.input_len()
    }

    /// The part holding an offset beyond the input, if any.
    pub(crate) fn part_at(&self, offset: usize) -> Option<&Part> {
        if self.in_input(offset) {
            return None;
        }
        let k = self.parts.partition_point(|p| p.start <= offset);
        k.checked_sub(1).map(|i| &self.parts[i])
    }

    /// The file holding an offset and the offset in it.
    pub(crate) fn local(&self, offset: usize) -> (&SourceFile, usize) {
        match self.part_at(offset) {
            Some(p) => (&p.file, (offset - p.start).min(p.file.bytes.len())),
            None => (self, offset),
        }
    }

    /// The 1-based line of an offset in the file holding it, and that
    /// file's name quoted for `#line`.
    pub(crate) fn line_directive_at(&self, offset: usize) -> (usize, String) {
        let (file, at) = self.local(offset);
        (file.line_of(at), file.quoted_name())
    }

    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }

    /// 1-based (line, column) of a byte offset; the column counts bytes.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let line = self.line_of(offset);
        (line, offset - self.line_starts[line - 1] + 1)
    }

    /// `FILE:LINE:COL` of a byte offset (in a header or other source of
    /// the unit: that file's name, line and column).
    pub fn location(&self, offset: usize) -> String {
        if let Some(p) = self.part_at(offset) {
            return p.file.location(offset - p.start);
        }
        let (line, col) = self.line_col(offset);
        format!("{}:{}:{}", self.name, line, col)
    }

    /// Offset of the start of the line holding `offset`.
    pub(crate) fn line_start(&self, offset: usize) -> usize {
        self.line_starts[self.line_of(offset) - 1]
    }

    /// Byte offsets where lines start, in order.
    pub fn line_starts(&self) -> &[usize] {
        &self.line_starts
    }

    /// The leading blanks of the line holding `offset`, in original bytes.
    pub(crate) fn indentation_at(&self, offset: usize) -> String {
        let start = self.line_start(offset);
        self.view[start..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect()
    }

    /// The file name quoted for a `#line` directive.
    pub(crate) fn quoted_name(&self) -> String {
        quote_for_line_directive(&self.name)
    }
}

/// Quote a path for `#line N "path"`.
pub(crate) fn quote_for_line_directive(name: &str) -> String {
    let mut quoted = String::with_capacity(name.len() + 2);
    quoted.push('"');
    for c in name.chars() {
        match c {
            '\\' => quoted.push_str("\\\\"),
            '"' => quoted.push_str("\\\""),
            c if (c as u32) < 0x20 => quoted.push('?'),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_bytes_keep_offsets() {
        let file = SourceFile::new("a.cu", b"// caf\xe9\nint x;\n".to_vec());
        assert_eq!(file.view.len(), file.bytes.len());
        assert_eq!(&file.view[..9], "// caf\x7f\ni");
        assert_eq!(file.line_col(8), (2, 1));
        assert_eq!(file.newline, "\n");
        // UTF-8 characters are identifier bytes, stray bytes are not.
        let file = SourceFile::new("b.cu", b"\xc3\xa9t\xc3\xa9 \xdfP".to_vec());
        assert_eq!(file.view, "__t__ \x7fP");
        let file = SourceFile::new("c.cu", b"x\xdfPragma".to_vec());
        assert_eq!(file.view, "x\x7fPragma");
    }

    #[test]
    fn crlf_is_detected() {
        let file = SourceFile::new("a.cu", b"a\r\nb\r\nc\n".to_vec());
        assert_eq!(file.newline, "\r\n");
        assert_eq!(file.line_of(3), 2);
        assert_eq!(file.location(6), "a.cu:3:1");
    }

    #[test]
    fn line_directive_names_are_escaped() {
        assert_eq!(
            quote_for_line_directive("C:\\a \"b\".cu"),
            "\"C:\\\\a \\\"b\\\".cu\""
        );
    }
}
