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

/// Operators that modify their left operand (or, for `++`/`--`, either).
pub const MODIFYING_OPERATORS: &[&str] = &[
    "=", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=",
];

/// Is the identifier `tokens[i]` written (assigned, incremented) or its
/// address taken there? `tokens` are significant tokens.
pub fn is_modified_at(tokens: &[Token], i: usize, view: &str) -> bool {
    let next = tokens.get(i + 1).map(|n| n.text(view)).unwrap_or("");
    let prev = if i > 0 { tokens[i - 1].text(view) } else { "" };
    MODIFYING_OPERATORS.contains(&next) || matches!(prev, "++" | "--" | "&")
}
