//! Stage 1a: split the file into tokens with the pest grammar.

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::grammar::{DpGrammar, Rule};
use crate::source::SourceFile;
use crate::token::{Token, TokenKind};
use pest::Parser;

/// Lex the whole file. The grammar accepts any input, so this cannot fail;
/// the tokens cover every byte of the file, in order.
pub fn lex(file: &SourceFile) -> Vec<Token> {
    let pairs = DpGrammar::parse(Rule::source, &file.view)
        .expect("the lexer grammar accepts every input")
        .next()
        .expect("source rule")
        .into_inner();
    let mut tokens = Vec::with_capacity(file.view.len() / 3);
    for pair in pairs {
        let kind = match pair.as_rule() {
            Rule::newline => TokenKind::Newline,
            Rule::hspace => TokenKind::Space,
            Rule::line_comment => TokenKind::LineComment,
            Rule::block_comment => TokenKind::BlockComment,
            Rule::directive => TokenKind::Directive,
            Rule::string | Rule::raw_string => TokenKind::Str,
            Rule::char_lit => TokenKind::Char,
            Rule::number => TokenKind::Number,
            Rule::ident => TokenKind::Ident,
            Rule::punct => TokenKind::Punct,
            Rule::other => TokenKind::Other,
            Rule::EOI => continue,
            rule => unreachable!("lexer produced {rule:?}"),
        };
        let span = pair.as_span();
        tokens.push(Token {
            kind,
            start: span.start(),
            end: span.end(),
        });
    }
    tokens
}

/// Lex a piece of text (a function body, a configuration argument) on its
/// own: the tokens' offsets are offsets into `text`. Bytes >= 0x80 are read
/// as `_`, as in a file.
pub fn lex_text(text: &str) -> Vec<Token> {
    lex(&SourceFile::new("", text.as_bytes().to_vec()))
}

/// What a token that never closes is, if it is one: an unterminated block
/// comment, raw string, string or character literal.
pub fn unterminated(token: &Token, view: &str) -> Option<&'static str> {
    let text = token.text(view);
    match token.kind {
        TokenKind::BlockComment => {
            // Splices may stand inside the `/*` and `*/` (phase 2 first).
            let joined = crate::phases::without_splices(text);
            (joined.len() < 4 || !joined.ends_with("*/")).then_some("comment")
        }
        TokenKind::Str if is_raw_string(text) => {
            let open = text.find('"')?;
            let paren = text[open..].find('(').map(|p| open + p)?;
            let closing = format!("){}\"", &text[open + 1..paren]);
            (text.len() < paren + 1 + closing.len() || !text.ends_with(&closing))
                .then_some("raw string literal")
        }
        TokenKind::Str
            if text.len() < 2
                || !text.ends_with('"')
                || text.ends_with("\\\"") && {
                    // `"...\"` is closed, `"...\"` with an odd number of
                    // backslashes before the quote is not.
                    let backslashes = text[..text.len() - 1]
                        .bytes()
                        .rev()
                        .take_while(|&b| b == b'\\')
                        .count();
                    backslashes % 2 == 1
                } =>
        {
            Some("string literal")
        }
        TokenKind::Char if text.len() < 2 || !text.ends_with('\'') => Some("character literal"),
        _ => None,
    }
}

/// Do two punctuator characters written together start a longer operator
/// (`+` `+` is `++`, `<` `<` is `<<`)?
fn forms_operator(a: u8, b: u8) -> bool {
    const PAIRS: &[&[u8; 2]] = &[
        b"++", b"--", b"<<", b">>", b"<=", b">=", b"==", b"!=", b"&&", b"||", b"+=", b"-=", b"*=",
        b"/=", b"%=", b"&=", b"|=", b"^=", b"->", b"::", b"##", b".*", b"..", b"<:", b"<%", b"%:",
        b"%>", b":>", b"//", b"/*",
    ];
    PAIRS.contains(&&[a, b])
}

fn is_raw_string(text: &str) -> bool {
    let starts = |text: &str| {
        ["R\"", "LR\"", "uR\"", "UR\"", "u8R\""]
            .iter()
            .any(|p| text.starts_with(p))
    };
    // The prefix may be split by line splices (`R\` newline `"(`).
    starts(text)
        || text.starts_with(['R', 'L', 'u', 'U'])
            && starts(&crate::phases::without_splices(
                text.get(..text.len().min(32)).unwrap_or(text),
            ))
}

/// Tokens that dpopt cannot read as the compiler does, in a file it must
/// analyse: a line splice that splits an identifier, number or operator
/// (`ker\` newline `nel`), and the alternative tokens (digraphs) `<%`, `%>`,
/// `<:`, `:>`, `%:` outside directives. Also unterminated comments and raw
/// strings, which swallow the rest of the file.
pub fn unreadable_tokens(tokens: &[Token], view: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        match t.kind {
            TokenKind::Directive => {
                use crate::phases::{unclosed_in_directive, Unclosed};
                match unclosed_in_directive(t.text(view)) {
                    Some(Unclosed::Comment(at)) => out.push(Diagnostic::new(
                        DiagnosticKind::Unterminated { what: "comment" },
                        t.start + at..t.start + at + 2,
                        "opened here, never closed",
                    )),
                    Some(Unclosed::RawString(at)) => out.push(Diagnostic::new(
                        DiagnosticKind::Unterminated {
                            what: "raw string literal",
                        },
                        t.start + at..t.start + at + 2,
                        "opened here; in a directive it ends with the line",
                    )),
                    None => {}
                }
            }
            TokenKind::BlockComment | TokenKind::Str => {
                if let Some(what @ ("comment" | "raw string literal")) = unterminated(t, view) {
                    out.push(Diagnostic::new(
                        DiagnosticKind::Unterminated { what },
                        t.start..(t.start + 2).min(t.end),
                        "opened here, never closed",
                    ));
                }
            }
            TokenKind::Punct => {
                let s = t.text(view);
                let plain = match s {
                    "<%" => "{",
                    "%>" => "}",
                    "<:" => "[",
                    ":>" => "]",
                    "%:" => "#",
                    "%:%:" => "##",
                    _ => continue,
                };
                out.push(Diagnostic::new(
                    DiagnosticKind::UnreadableToken {
                        token: s.to_string(),
                        why: "dpopt does not read alternative tokens (digraphs) outside directives",
                        fix: format!("write `{plain}` instead of `{s}`"),
                    },
                    t.range(),
                    "alternative token",
                ));
            }
            TokenKind::Ident
                if t.text(view).contains('\\')
                    && !crate::parser::is_pragma_operator_name(t.text(view)) =>
            {
                out.push(Diagnostic::new(
                    DiagnosticKind::UnreadableToken {
                        token: t.text(view).split('\\').next().unwrap_or("").to_string() + "\\",
                        why: "a line splice joins this identifier with the next line's, which dpopt does not read",
                        fix: "join the two lines (remove the `\\` at the end of the line)".to_string(),
                    },
                    t.range(),
                    "identifier split by a line splice",
                ));
            }
            TokenKind::Space => {
                let text = t.text(view);
                if !text.contains('\\') || i == 0 {
                    continue;
                }
                let (Some(before), Some(after)) = (tokens.get(i - 1), tokens.get(i + 1)) else {
                    continue;
                };
                let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
                let last = view.as_bytes()[before.end - 1];
                let first = view.as_bytes()[after.start];
                let glued = before.end == t.start
                    && after.start == t.end
                    && text.starts_with('\\')
                    && text
                        .trim_end_matches(['\r', '\n'])
                        .trim_end_matches([' ', '\t', '\x0b', '\x0c', '\0'])
                        == "\\";
                let splits = (word(last) && word(first))
                    || (before.kind == TokenKind::Punct
                        && after.kind == TokenKind::Punct
                        && forms_operator(last, first));
                if glued && splits && before.kind.is_significant() && after.kind.is_significant() {
                    out.push(Diagnostic::new(
                        DiagnosticKind::UnreadableToken {
                            token: format!("{}\\", before.text(view)),
                            why: "a line splice joins this token with the next line's, which dpopt does not read",
                            fix: "join the two lines (remove the `\\` at the end of the line)".to_string(),
                        },
                        before.start..t.start + 1,
                        "token split by a line splice",
                    ));
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Span;

    fn kinds(text: &str) -> Vec<(TokenKind, String)> {
        let file = SourceFile::new("t.cu", text.as_bytes().to_vec());
        lex(&file)
            .into_iter()
            .filter(|t| t.kind.is_significant())
            .map(|t| (t.kind, t.text(&file.view).to_string()))
            .collect()
    }

    #[test]
    fn tokens_cover_every_byte() {
        let text = "int a = 1'000; /* x\n */ #x\n  #pragma dp threshold(1) \\\n coarsen(2)\nk<<<a,b>>>(\"<<<\");";
        let mut bytes = text.as_bytes().to_vec();
        bytes.push(0xff);
        let file = SourceFile::new("t.cu", bytes);
        let tokens = lex(&file);
        let mut at = 0;
        for t in &tokens {
            assert_eq!(t.start, at);
            at = t.end;
        }
        assert_eq!(at, file.bytes.len());
    }

    #[test]
    fn directives_only_at_line_start() {
        let toks = kinds("#include <a>\n  #pragma dp threshold(4) \\\n  coarsen(2)\nx # y\n");
        assert_eq!(toks[0].0, TokenKind::Directive);
        assert_eq!(
            toks[1],
            (
                TokenKind::Directive,
                "#pragma dp threshold(4) \\\n  coarsen(2)".into()
            )
        );
        assert_eq!(toks[3], (TokenKind::Punct, "#".into()));
    }

    #[test]
    fn launch_chevrons_and_strings() {
        let toks = kinds("k<<<g, b>>>(\"<<<\", '\\'');");
        let texts: Vec<_> = toks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(
            texts,
            ["k", "<<<", "g", ",", "b", ">>>", "(", "\"<<<\"", ",", "'\\''", ")", ";"]
        );
    }

    #[test]
    fn translation_phases_decide_directives() {
        // A comment before `#`, the `%:` digraph, a splice after `#`.
        for text in [
            "x;\n/* a */ #pragma dp threshold(4)\n",
            "x;\n%:pragma dp threshold(4)\n",
            "x;\n#\\\npragma dp threshold(4)\n",
        ] {
            let toks = kinds(text);
            assert_eq!(toks[2].0, TokenKind::Directive, "{text:?}: {toks:?}");
        }
        // A splice at the end of the previous line: `#` is not first.
        let toks = kinds("x; \\\n#pragma dp threshold(4)\n");
        assert!(toks.iter().all(|t| t.0 != TokenKind::Directive));
    }

    #[test]
    fn raw_strings_with_prefixes() {
        for prefix in ["", "L", "u8", "u", "U"] {
            let text = format!("s = {prefix}R\"x(\n#pragma dp threshold(4)\n)x\";");
            let toks = kinds(&text);
            assert_eq!(toks.len(), 4, "{text}: {toks:?}");
            assert_eq!(toks[2].0, TokenKind::Str);
        }
    }

    #[test]
    fn unterminated_tokens() {
        let file = SourceFile::new("t.cu", b"a /* x\n b".to_vec());
        let toks = lex(&file);
        let d = unreadable_tokens(&toks, &file.view);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].span, Span::new(2, 4));
        let file = SourceFile::new("t.cu", b"a = R\"(x\n".to_vec());
        let d = unreadable_tokens(&lex(&file), &file.view);
        assert!(matches!(
            d[0].kind,
            DiagnosticKind::Unterminated {
                what: "raw string literal"
            }
        ));
        let file = SourceFile::new("t.cu", b"ker\\\nnel<<<1, 1>>>(); x <% y".to_vec());
        let d = unreadable_tokens(&lex(&file), &file.view);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(d[0].span, Span::new(0, 8));
    }

    #[test]
    fn comments_hide_launches() {
        let toks = kinds("// k<<<1,1>>>();\n/* #pragma dp threshold(1) */ x");
        assert_eq!(toks.len(), 1);
    }
}
