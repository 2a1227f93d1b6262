//! The output file as emit writes it: pieces copied from the user's source
//! and pieces dpopt generated, in order. The writer counts lines as it
//! writes, so a generated line that asks for `#line` pointing at the output
//! itself (`transform::OUTPUT_LINE_MARKER`) gets its exact number on the
//! spot; the user's bytes are copied and counted, never searched.

use crate::source::quote_for_line_directive;
use crate::transform::OUTPUT_LINE_MARKER;

/// Where rendered text goes: copied user bytes and generated text.
pub trait Sink {
    fn user(&mut self, bytes: &[u8]);
    fn generated(&mut self, bytes: &[u8]);
}

/// A plain buffer: both kinds are just bytes (a fragment that `emit` writes
/// later as generated text).
impl Sink for Vec<u8> {
    fn user(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
    fn generated(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Text kept for later, the user's bytes and generated text apart, in the
/// order written: a piece of a launch that a template places, a child's
/// definitions around its copied body, a fragment that emit inserts.
#[derive(Debug, Clone, Default)]
pub struct Fragment {
    chunks: Vec<(bool, Vec<u8>)>,
}

impl Fragment {
    /// Generated text alone.
    pub fn generated_bytes(bytes: Vec<u8>) -> Fragment {
        Fragment {
            chunks: vec![(false, bytes)],
        }
    }

    /// Write it into `out` as it was written here.
    pub fn write_to(&self, out: &mut impl Sink) {
        for (user, bytes) in &self.chunks {
            if *user {
                out.user(bytes);
            } else {
                out.generated(bytes);
            }
        }
    }

    pub fn append(&mut self, other: Fragment) {
        for (user, bytes) in other.chunks {
            self.push(user, &bytes);
        }
    }

    fn push(&mut self, user: bool, bytes: &[u8]) {
        match self.chunks.last_mut() {
            Some((u, b)) if *u == user => b.extend_from_slice(bytes),
            _ => self.chunks.push((user, bytes.to_vec())),
        }
    }

    /// Its line breaks (`\r\n`, `\n`, a lone `\r`).
    pub fn line_breaks(&self) -> usize {
        let bytes: Vec<u8> = self
            .chunks
            .iter()
            .flat_map(|(_, b)| b.iter().copied())
            .collect();
        lines_with_endings(&bytes)
            .filter(|l| l.ends_with(b"\n") || l.ends_with(b"\r"))
            .count()
    }

    /// Split off its last line when that is generated text (the `#line`
    /// that resumes the input after a child's definitions).
    pub fn split_off_last_generated_line(&mut self) -> Fragment {
        let Some((false, last)) = self.chunks.last_mut() else {
            return Fragment::default();
        };
        let body = last
            .strip_suffix(b"\r\n")
            .or_else(|| last.strip_suffix(b"\n"))
            .or_else(|| last.strip_suffix(b"\r"))
            .unwrap_or(last);
        let at = body
            .iter()
            .rposition(|&b| b == b'\n' || b == b'\r')
            .map_or(0, |i| i + 1);
        let tail = last.split_off(at);
        if last.is_empty() {
            self.chunks.pop();
        }
        Fragment::generated_bytes(tail)
    }
}

impl Sink for Fragment {
    fn user(&mut self, bytes: &[u8]) {
        self.push(true, bytes);
    }
    fn generated(&mut self, bytes: &[u8]) {
        self.push(false, bytes);
    }
}

/// The output file being written.
pub struct OutFile {
    bytes: Vec<u8>,
    /// The number of the line being written (1-based).
    line: usize,
    /// The last byte written was a `\r` (a `\n` after it ends the same line).
    after_cr: bool,
    /// `#line`'s quoted name of the output.
    quoted: String,
}

impl OutFile {
    pub fn new(output_name: &str, capacity: usize) -> Self {
        OutFile {
            bytes: Vec::with_capacity(capacity),
            line: 1,
            after_cr: false,
            quoted: quote_for_line_directive(output_name),
        }
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    fn at_line_start(&self) -> bool {
        matches!(self.bytes.last(), None | Some(b'\n' | b'\r'))
    }

    /// Count the line breaks of text just written (`\r\n`, `\n`, lone `\r`).
    fn count(&mut self, bytes: &[u8]) {
        for &b in bytes {
            match b {
                b'\n' if self.after_cr => {}
                b'\n' | b'\r' => self.line += 1,
                _ => {}
            }
            self.after_cr = b == b'\r';
        }
    }
}

impl Sink for OutFile {
    fn user(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
        self.count(bytes);
    }

    /// Generated text: each marker line becomes `#line N "output"`, N being
    /// the number of the line after it.
    fn generated(&mut self, bytes: &[u8]) {
        let marker = OUTPUT_LINE_MARKER.as_bytes();
        for chunk in lines_with_endings(bytes) {
            let content = chunk.strip_suffix(b"\n").unwrap_or(chunk);
            let content = content.strip_suffix(b"\r").unwrap_or(content);
            if content == marker && self.at_line_start() {
                let ending = &chunk[content.len()..];
                let directive = format!("#line {} {}", self.line + 1, self.quoted);
                self.bytes.extend_from_slice(directive.as_bytes());
                self.bytes.extend_from_slice(ending);
                self.count(ending);
            } else {
                self.user(chunk);
            }
        }
    }
}

/// The lines of a text, each with its ending (`\r\n`, `\n` or a lone
/// `\r`); the last may have none.
pub fn lines_with_endings(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            Some(i) if rest[i] == b'\r' && rest.get(i + 1) == Some(&b'\n') => i + 2,
            Some(i) => i + 1,
            None => rest.len(),
        };
        let (line, tail) = rest.split_at(end);
        rest = tail;
        Some(line)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_become_the_next_lines_number() {
        let mut out = OutFile::new("out.cu", 0);
        out.user(b"a\r\nb\rc\n");
        out.generated(format!("{OUTPUT_LINE_MARKER}\nx\n").as_bytes());
        out.user(b"#line DPOPT_OUTPUT_LINE\n");
        assert_eq!(
            String::from_utf8(out.into_bytes()).unwrap(),
            "a\r\nb\rc\n#line 5 \"out.cu\"\nx\n#line DPOPT_OUTPUT_LINE\n"
        );
    }

    #[test]
    fn crlf_split_between_pieces_is_one_line_break() {
        let mut out = OutFile::new("o", 0);
        out.user(b"a\r");
        out.user(b"\nb\n");
        out.generated(format!("{OUTPUT_LINE_MARKER}\r\n").as_bytes());
        assert_eq!(out.into_bytes(), b"a\r\nb\n#line 4 \"o\"\r\n".to_vec());
    }

    #[test]
    fn a_fragment_keeps_user_bytes_apart() {
        let mut f = Fragment::default();
        f.generated(b"k<<<");
        f.user(b"#line DPOPT_OUTPUT_LINE\r\n");
        f.generated(format!(">>>\n{OUTPUT_LINE_MARKER}\n").as_bytes());
        assert_eq!(f.line_breaks(), 3);
        let mut out = OutFile::new("o", 0);
        f.write_to(&mut out);
        // The marker is replaced in generated text only.
        assert_eq!(
            String::from_utf8(out.into_bytes()).unwrap(),
            "k<<<#line DPOPT_OUTPUT_LINE\r\n>>>\n#line 4 \"o\"\n"
        );
    }

    #[test]
    fn the_last_generated_line_splits_off() {
        let mut f = Fragment::generated_bytes(b"a\n".to_vec());
        f.user(b"body\n");
        f.generated(b"x\n#line 7 \"in.cu\"\n");
        let tail = f.split_off_last_generated_line();
        let mut out = Vec::new();
        tail.write_to(&mut out);
        assert_eq!(out, b"#line 7 \"in.cu\"\n");
        let mut head = Vec::new();
        f.write_to(&mut head);
        assert_eq!(head, b"a\nbody\nx\n");
    }

    #[test]
    fn lines_end_at_each_kind_of_ending() {
        let lines: Vec<&[u8]> = lines_with_endings(b"a\r\nb\rc\nd").collect();
        assert_eq!(lines, [&b"a\r\n"[..], b"b\r", b"c\n", b"d"]);
    }
}
