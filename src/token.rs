//! Tokens of a CUDA C++ file, as byte ranges into the source.

use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    Space,
    Newline,
    LineComment,
    BlockComment,
    /// A whole preprocessor line (`#...`, continuations included).
    Directive,
    Str,
    Char,
    Number,
    Ident,
    Punct,
    Other,
}

impl TokenKind {
    /// Tokens that carry meaning for the parser (not blanks or comments).
    pub fn is_significant(self) -> bool {
        !matches!(
            self,
            TokenKind::Space
                | TokenKind::Newline
                | TokenKind::LineComment
                | TokenKind::BlockComment
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub start: usize,
    pub end: usize,
}

impl Token {
    pub fn range(&self) -> Range<usize> {
        self.start..self.end
    }

    pub fn text<'a>(&self, view: &'a str) -> &'a str {
        &view[self.start..self.end]
    }
}
