//! A small C expression parser over significant tokens, enough to read launch
//! configurations (precedence climbing; unknown shapes become opaque leaves).

use crate::source::Span;
use crate::token::{Token, TokenKind};

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A literal, name, member access, index or anything not looked into.
    Leaf(Span),
    Paren(Box<Expr>, Span),
    /// `(type) e`, `static_cast<type>(e)` and the like.
    Cast(Box<Expr>, Span),
    Unary(String, Box<Expr>, Span),
    Binary(String, Box<Expr>, Box<Expr>, Span),
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>, Span),
    /// `name(args)`: `dim3(...)`, `ceil(...)`, user functions.
    Call(String, Vec<Expr>, Span),
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Leaf(r)
            | Expr::Paren(_, r)
            | Expr::Cast(_, r)
            | Expr::Unary(_, _, r)
            | Expr::Binary(_, _, _, r)
            | Expr::Ternary(_, _, _, r)
            | Expr::Call(_, _, r) => *r,
        }
    }

    /// Without enclosing parentheses, casts and unary plus.
    pub fn stripped(&self) -> &Expr {
        match self {
            Expr::Paren(e, _) | Expr::Cast(e, _) => e.stripped(),
            Expr::Unary(op, e, _) if op == "+" => e.stripped(),
            e => e,
        }
    }
}

/// Parse the significant tokens `tokens` as one expression. `None` when the
/// tokens are not a whole expression this parser understands.
pub fn parse_expr(tokens: &[Token], view: &str) -> Option<Expr> {
    // Bounded input, bounded recursion: no stack overflow on generated or
    // hostile input (such expressions are left to the fallback count).
    if tokens.len() > MAX_TOKENS {
        return None;
    }
    let mut p = ExprParser {
        tokens,
        view,
        at: 0,
        depth: 0,
    };
    let e = p.expr(0)?;
    (p.at == tokens.len()).then_some(e)
}

/// Longest expression read, in tokens.
const MAX_TOKENS: usize = 4096;
/// Deepest nesting of sub-expressions read.
const MAX_DEPTH: usize = 128;

struct ExprParser<'a> {
    tokens: &'a [Token],
    view: &'a str,
    at: usize,
    /// Nesting of `expr`/`unary` calls in progress.
    depth: usize,
}

/// Type words a cast may be written with (`(unsigned)n`).
pub(crate) const CAST_WORDS: &[&str] = &[
    "int",
    "unsigned",
    "signed",
    "long",
    "short",
    "char",
    "float",
    "double",
    "bool",
    "size_t",
    "const",
    "int32_t",
    "int64_t",
    "uint32_t",
    "uint64_t",
    "ptrdiff_t",
    "*",
];

fn precedence(op: &str) -> Option<(u8, bool)> {
    // (precedence, right associative)
    Some(match op {
        "?" => (1, true),
        "||" => (2, false),
        "&&" => (3, false),
        "|" => (4, false),
        "^" => (5, false),
        "&" => (6, false),
        "==" | "!=" => (7, false),
        "<" | ">" | "<=" | ">=" => (8, false),
        "<<" | ">>" => (9, false),
        "+" | "-" => (10, false),
        "*" | "/" | "%" => (11, false),
        _ => return None,
    })
}

impl<'a> ExprParser<'a> {
    fn peek(&self) -> Option<&'a str> {
        self.tokens.get(self.at).map(|t| t.text(self.view))
    }

    fn span(&self, from: usize) -> Span {
        Span::new(self.tokens[from].start, self.tokens[self.at - 1].end)
    }

    fn expect(&mut self, s: &str) -> Option<()> {
        (self.peek()? == s).then(|| self.at += 1)
    }

    /// Run `parse` one nesting level deeper, failing past `MAX_DEPTH`.
    fn nested(&mut self, parse: impl FnOnce(&mut Self) -> Option<Expr>) -> Option<Expr> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let e = parse(self);
        self.depth -= 1;
        e
    }

    fn expr(&mut self, min_prec: u8) -> Option<Expr> {
        self.nested(|p| p.binary(min_prec))
    }

    fn binary(&mut self, min_prec: u8) -> Option<Expr> {
        let start = self.at;
        let mut lhs = self.unary()?;
        while let Some(op) = self.peek() {
            let Some((prec, right)) = precedence(op) else {
                break;
            };
            if prec < min_prec {
                break;
            }
            self.at += 1;
            if op == "?" {
                let then = self.expr(0)?;
                self.expect(":")?;
                let other = self.expr(prec)?;
                lhs = Expr::Ternary(
                    Box::new(lhs),
                    Box::new(then),
                    Box::new(other),
                    self.span(start),
                );
                continue;
            }
            let rhs = self.expr(if right { prec } else { prec + 1 })?;
            lhs = Expr::Binary(
                op.to_string(),
                Box::new(lhs),
                Box::new(rhs),
                self.span(start),
            );
        }
        Some(lhs)
    }

    fn unary(&mut self) -> Option<Expr> {
        self.nested(Self::prefixed)
    }

    fn prefixed(&mut self) -> Option<Expr> {
        let start = self.at;
        match self.peek()? {
            op @ ("-" | "+" | "!" | "~" | "*" | "&" | "++" | "--") => {
                self.at += 1;
                let e = self.unary()?;
                Some(Expr::Unary(op.to_string(), Box::new(e), self.span(start)))
            }
            "(" if self.is_cast() => {
                while self.peek()? != ")" {
                    self.at += 1;
                }
                self.at += 1;
                let e = self.unary()?;
                Some(Expr::Cast(Box::new(e), self.span(start)))
            }
            _ => self.postfix(),
        }
    }

    fn is_cast(&self) -> bool {
        let mut i = self.at + 1;
        let mut any = false;
        while let Some(t) = self.tokens.get(i) {
            let s = t.text(self.view);
            if s == ")" {
                return any
                    && self.tokens.get(i + 1).is_some_and(|n| {
                        let n = n.text(self.view);
                        !matches!(
                            n,
                            "+" | "-" | "*" | "/" | "%" | ")" | "," | "?" | ":" | "<" | ">" | "=="
                        ) || n == "-"
                    });
            }
            if !CAST_WORDS.contains(&s) {
                return false;
            }
            any = true;
            i += 1;
        }
        false
    }

    fn postfix(&mut self) -> Option<Expr> {
        let start = self.at;
        let first = *self.tokens.get(self.at)?;
        let mut e = match first.text(self.view) {
            "(" => {
                self.at += 1;
                let inner = self.expr(0)?;
                self.expect(")")?;
                Expr::Paren(Box::new(inner), self.span(start))
            }
            "static_cast" | "reinterpret_cast" | "const_cast" => {
                self.at += 1;
                self.expect("<")?;
                while self.peek()? != ">" {
                    self.at += 1;
                }
                self.at += 1;
                self.expect("(")?;
                let inner = self.expr(0)?;
                self.expect(")")?;
                Expr::Cast(Box::new(inner), self.span(start))
            }
            _ if matches!(first.kind, TokenKind::Ident) => {
                self.at += 1;
                while self.peek() == Some("::") {
                    self.at += 2;
                }
                if self.at > self.tokens.len() {
                    return None;
                }
                let name = self.view[first.start..self.tokens[self.at - 1].end].to_string();
                if self.peek() == Some("(") {
                    self.at += 1;
                    let mut args = Vec::new();
                    if self.peek()? != ")" {
                        loop {
                            args.push(self.expr(0)?);
                            match self.peek()? {
                                "," => self.at += 1,
                                ")" => break,
                                _ => return None,
                            }
                        }
                    }
                    self.at += 1;
                    Expr::Call(name, args, self.span(start))
                } else {
                    Expr::Leaf(self.span(start))
                }
            }
            _ if matches!(
                first.kind,
                TokenKind::Number | TokenKind::Char | TokenKind::Str
            ) =>
            {
                self.at += 1;
                Expr::Leaf(self.span(start))
            }
            _ => return None,
        };
        // Member access, indexing, calls through expressions, ++/--.
        loop {
            match self.peek() {
                Some("." | "->") => {
                    self.at += 1;
                    if self.tokens.get(self.at)?.kind != TokenKind::Ident {
                        return None;
                    }
                    self.at += 1;
                    e = Expr::Leaf(self.span(start));
                }
                Some("[") => {
                    self.at += 1;
                    self.expr(0)?;
                    self.expect("]")?;
                    e = Expr::Leaf(self.span(start));
                }
                Some("++" | "--") => {
                    self.at += 1;
                    e = Expr::Leaf(self.span(start));
                }
                Some("(") if !matches!(e, Expr::Call(..)) => {
                    let mut depth = 0;
                    loop {
                        match self.peek()? {
                            "(" => depth += 1,
                            ")" => depth -= 1,
                            _ => {}
                        }
                        self.at += 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    e = Expr::Leaf(self.span(start));
                }
                _ => break,
            }
        }
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;
    use crate::source::SourceFile;

    pub(crate) fn parse_text(text: &str) -> (SourceFile, Option<Expr>) {
        let file = SourceFile::new("e.cu", text.as_bytes().to_vec());
        let toks: Vec<Token> = lex(&file)
            .into_iter()
            .filter(|t| t.kind.is_significant())
            .collect();
        let e = parse_expr(&toks, &file.view);
        (file, e)
    }

    #[test]
    fn precedence_and_casts() {
        let (f, e) = parse_text("(n + 127) / 128 + 1");
        let e = e.unwrap();
        let Expr::Binary(op, lhs, _, _) = &e else {
            panic!("{e:?}")
        };
        assert_eq!(op, "+");
        assert_eq!(&f.view[lhs.span().range()], "(n + 127) / 128");
        let (f, e) = parse_text("ceil((float)n / b)");
        let Expr::Call(name, args, _) = e.unwrap() else {
            panic!()
        };
        assert_eq!(name, "ceil");
        assert_eq!(&f.view[args[0].span().range()], "(float)n / b");
    }

    #[test]
    fn ternary_and_members() {
        let (_, e) = parse_text("n / b + ((n % b == 0) ? 0 : 1)");
        assert!(e.is_some());
        let (_, e) = parse_text("row[v + 1] - row[v]");
        assert!(matches!(e.unwrap(), Expr::Binary(..)));
        let (_, e) = parse_text("a->deg(3).x * 2");
        assert!(e.is_some());
    }

    #[test]
    fn rejects_partial_input() {
        assert!(parse_text("a b").1.is_none());
        assert!(parse_text("(a").1.is_none());
    }
}
