//! Stage 3: generate code for the plan. `renderer` copies source text with
//! launch sites rewritten and builtins substituted, `site` writes a rewritten
//! launch, `child` writes the definitions shared by all sites of one child,
//! and `templates` holds the tera templates those fragments come from.

pub mod child;
pub mod context;
pub mod continuation;
pub mod floor;
pub mod position_clone;
pub mod promote;
pub mod renderer;
pub mod serial_split;
pub mod site;
pub mod templates;

pub use renderer::Renderer;

/// Generated fragments go through tera as `String`s. Text copied from a file
/// that is not valid UTF-8 is carried through them losslessly by mapping each
/// byte >= 0x80 to a private-use character and back.
#[derive(Debug, Clone, Copy)]
pub struct TextCodec {
    lossless_bytes: bool,
}

const PRIVATE_BASE: u32 = 0xF700;

impl TextCodec {
    pub fn for_bytes(bytes: &[u8]) -> Self {
        TextCodec {
            lossless_bytes: std::str::from_utf8(bytes).is_err(),
        }
    }

    /// Bytes of the file to a string for a template.
    pub fn to_text(self, bytes: &[u8]) -> String {
        if !self.lossless_bytes {
            return String::from_utf8(bytes.to_vec()).expect("file is valid UTF-8");
        }
        bytes
            .iter()
            .map(|&b| {
                if b < 0x80 {
                    b as char
                } else {
                    char::from_u32(PRIVATE_BASE + b as u32).expect("private use")
                }
            })
            .collect()
    }

    /// A template's output back to bytes.
    pub fn to_bytes(self, text: &str) -> Vec<u8> {
        if !self.lossless_bytes {
            return text.as_bytes().to_vec();
        }
        let mut out = Vec::with_capacity(text.len());
        for c in text.chars() {
            let u = c as u32;
            if (PRIVATE_BASE + 0x80..=PRIVATE_BASE + 0xFF).contains(&u) {
                out.push((u - PRIVATE_BASE) as u8);
            } else {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
        out
    }
}

/// Use the file's line ending in generated text: in a CRLF file every bare
/// `\n` becomes `\r\n`, in a CR file `\r` (copied user text already has
/// the file's endings).
pub fn with_newlines(text: &str, newline: &str) -> String {
    if newline == "\n" {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + text.len() / 20);
    let mut prev = '\0';
    for c in text.chars() {
        if c == '\n' && prev != '\r' {
            out.push('\r');
            if newline == "\r" {
                prev = c;
                continue;
            }
        }
        out.push(c);
        prev = c;
    }
    out
}

/// Marker line that `emit` replaces with `#line N "OUTPUT"` pointing at the
/// generated code itself.
pub const OUTPUT_LINE_MARKER: &str = "#line DPOPT_OUTPUT_LINE";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codec_round_trips_invalid_utf8() {
        let bytes = b"a\xe9b\xff".to_vec();
        let codec = TextCodec::for_bytes(&bytes);
        let text = codec.to_text(&bytes);
        assert_eq!(
            codec.to_bytes(&format!("<{text}>")),
            b"<a\xe9b\xff>".to_vec()
        );
    }

    #[test]
    fn crlf_conversion_leaves_existing_crlf() {
        assert_eq!(with_newlines("a\nb\r\nc", "\r\n"), "a\r\nb\r\nc");
        assert_eq!(with_newlines("a\nb\rc\r\nd\n\n", "\r"), "a\rb\rc\r\nd\r\r");
        assert_eq!(with_newlines("a\nb", "\n"), "a\nb");
    }
}
