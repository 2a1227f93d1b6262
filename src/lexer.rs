//! Stage 1a: split the file into tokens with the pest grammar.

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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn comments_hide_launches() {
        let toks = kinds("// k<<<1,1>>>();\n/* #pragma dp threshold(1) */ x");
        assert_eq!(toks.len(), 1);
    }
}
