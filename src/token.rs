//! Tokens of a CUDA C++ file, as byte ranges into the source.

use std::ops::Range;

/// A significant token (not a blank, comment or line break): its index in
/// `Program::sig`, the file's significant tokens.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SigIdx(pub usize);

/// On one line, also in `{:#?}`.
impl std::fmt::Debug for SigIdx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigIdx({})", self.0)
    }
}

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

    pub fn span(&self) -> crate::source::Span {
        crate::source::Span::new(self.start, self.end)
    }

    pub fn text<'a>(&self, view: &'a str) -> &'a str {
        &view[self.start..self.end]
    }
}

/// Is `w` one C identifier (letters, digits, `_`, not starting with a digit)?
pub fn is_identifier(w: &str) -> bool {
    w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
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

/// How [`split_top_level`] reads `<` and `>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Angles {
    /// As brackets, outside parentheses: template arguments and parameters
    /// (`map<int, int> m, int n`).
    Brackets,
    /// As operators: expressions (`a < b, c`).
    Operators,
}

/// Split tokens at the commas that are not nested in brackets (nor, with
/// [`Angles::Brackets`], in angles). No tokens give no parts; otherwise
/// every comma ends a part, so `a,` gives `a` and an empty part.
pub fn split_top_level<'t>(tokens: &'t [Token], view: &str, angles: Angles) -> Vec<&'t [Token]> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut angle = 0i32;
    let mut start = 0;
    let track = angles == Angles::Brackets;
    for (i, t) in tokens.iter().enumerate() {
        match t.text(view) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            "<" if track && depth == 0 => angle += 1,
            ">" if track && depth == 0 && angle > 0 => angle -= 1,
            ">>" if track && depth == 0 && angle > 0 => angle = (angle - 2).max(0),
            "," if depth == 0 && angle == 0 => {
                parts.push(&tokens[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < tokens.len() || !parts.is_empty() {
        parts.push(&tokens[start..]);
    }
    parts
}

/// Is `tokens[i]` an identifier followed by `(`: a call (or a function-like
/// macro, a constructor, a declaration's name)? `tokens` are significant
/// tokens.
pub fn is_call_at(tokens: &[Token], i: usize, view: &str) -> bool {
    tokens[i].kind == TokenKind::Ident && tokens.get(i + 1).is_some_and(|n| n.text(view) == "(")
}

/// The calls among `tokens` (see [`is_call_at`]): each one's index and name.
pub fn calls<'a>(
    tokens: &'a [Token],
    view: &'a str,
) -> impl Iterator<Item = (usize, &'a str)> + 'a {
    (0..tokens.len())
        .filter(move |&i| is_call_at(tokens, i, view))
        .map(move |i| (i, tokens[i].text(view)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex_text;

    fn significant(text: &str) -> Vec<Token> {
        lex_text(text)
            .into_iter()
            .filter(|t| t.kind.is_significant())
            .collect()
    }

    fn split(text: &str, angles: Angles) -> Vec<String> {
        let tokens = significant(text);
        split_top_level(&tokens, text, angles)
            .into_iter()
            .map(|part| {
                part.iter()
                    .map(|t| t.text(text))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    #[test]
    fn splits_at_top_level_commas() {
        assert_eq!(split("", Angles::Operators), Vec::<String>::new());
        assert_eq!(split("a", Angles::Operators), ["a"]);
        assert_eq!(split("a,", Angles::Operators), ["a", ""]);
        assert_eq!(
            split("f(a, b), c[1, 2], {x, y}", Angles::Operators),
            ["f ( a , b )", "c [ 1 , 2 ]", "{ x , y }"]
        );
        assert_eq!(split("a < b, c > d", Angles::Operators), ["a < b", "c > d"]);
        assert_eq!(
            split("map<int, int> m, int n", Angles::Brackets),
            ["map < int , int > m", "int n"]
        );
        assert_eq!(
            split("A<B<int, int>> x, y", Angles::Brackets),
            ["A < B < int , int >> x", "y"]
        );
        // In parentheses `<` is an operator even for a template's parameters.
        assert_eq!(
            split("int a = (x < y), b", Angles::Brackets),
            ["int a = ( x < y )", "b"]
        );
    }

    #[test]
    fn calls_are_identifiers_before_a_parenthesis() {
        let text = "f(a) + g (b) * h + (c)(d) + k[1](e) + m::n(z)";
        let tokens = significant(text);
        let names: Vec<&str> = calls(&tokens, text).map(|(_, n)| n).collect();
        assert_eq!(names, ["f", "g", "n"]);
        let (i, _) = calls(&tokens, text).nth(1).unwrap();
        assert_eq!(tokens[i].text(text), "g");
        assert!(is_call_at(&tokens, i, text));
        assert!(!is_call_at(&tokens, i + 1, text));
    }

    #[test]
    fn identifiers() {
        assert!(is_identifier("_a1"));
        assert!(is_identifier("N"));
        assert!(!is_identifier("1a"));
        assert!(!is_identifier(""));
        assert!(!is_identifier("a-b"));
        assert!(!is_identifier("a b"));
    }
}
