//! Matching brackets among a program's significant tokens: which `(`, `[`
//! and `{` closes where. Every walk over the token stream that steps over a
//! bracketed group or asks whether a bracket encloses a position asks here,
//! so the table itself (typed `SigIdx` entries) is never indexed by hand.

use crate::token::{SigIdx, Token, TokenKind};

/// For each significant token that is a matched bracket, its partner.
#[derive(Debug, Clone, Default)]
pub struct Brackets {
    partner: Vec<Option<SigIdx>>,
}

impl Brackets {
    /// Pair up (), [] and {} among significant tokens; the byte offset of
    /// the first bracket without a partner, if any.
    pub fn match_in(sig: &[Token], view: &str) -> (Brackets, Option<usize>) {
        let mut partner = vec![None; sig.len()];
        let mut stack: Vec<usize> = Vec::new();
        let mut unbalanced = None;
        for (i, t) in sig.iter().enumerate() {
            if t.kind != TokenKind::Punct {
                continue;
            }
            let s = t.text(view);
            let open = match s {
                "(" | "[" | "{" => {
                    stack.push(i);
                    continue;
                }
                ")" => "(",
                "]" => "[",
                "}" => "{",
                _ => continue,
            };
            match stack.last() {
                Some(&j) if sig[j].text(view) == open => {
                    stack.pop();
                    partner[i] = Some(SigIdx(j));
                    partner[j] = Some(SigIdx(i));
                }
                _ => {
                    unbalanced.get_or_insert(t.start);
                }
            }
        }
        if let Some(&j) = stack.first() {
            unbalanced.get_or_insert(sig[j].start);
        }
        (Brackets { partner }, unbalanced)
    }

    /// The partner of the bracket at significant position `k`: `None` for
    /// a token that is not a matched bracket, or a position past the end.
    pub fn partner(&self, k: usize) -> Option<usize> {
        self.partner.get(k).copied().flatten().map(|p| p.0)
    }

    /// The position after the group that opens at `k` (after its partner),
    /// or `k + 1` when `k` is not a matched bracket.
    pub fn skip(&self, k: usize) -> usize {
        self.partner(k).map_or(k + 1, |p| p + 1)
    }

    /// Does the bracket at `open` have its partner after position `k` (so
    /// that, for an opening bracket before `k`, the group holds `k`)?
    pub fn encloses(&self, open: usize, k: usize) -> bool {
        self.partner(open).is_some_and(|p| p > k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;
    use crate::source::SourceFile;

    fn brackets(text: &str) -> (Brackets, Option<usize>) {
        let file = SourceFile::new("t.cu", text.as_bytes().to_vec());
        let sig: Vec<Token> = lex(&file)
            .into_iter()
            .filter(|t| t.kind.is_significant())
            .collect();
        Brackets::match_in(&sig, &file.view)
    }

    #[test]
    fn pairs_nested_groups() {
        // f ( a [ 0 ] ) { }
        // 0 1 2 3 4 5 6 7 8
        let (b, unbalanced) = brackets("f(a[0]) { }");
        assert_eq!(unbalanced, None);
        assert_eq!((b.partner(1), b.partner(6)), (Some(6), Some(1)));
        assert_eq!((b.partner(3), b.partner(5)), (Some(5), Some(3)));
        assert_eq!((b.partner(7), b.partner(8)), (Some(8), Some(7)));
        assert_eq!((b.partner(0), b.partner(99)), (None, None));
        assert_eq!((b.skip(1), b.skip(0)), (7, 1));
        assert!(b.encloses(1, 4) && !b.encloses(3, 5) && !b.encloses(0, 1));
    }

    #[test]
    fn reports_the_first_unbalanced_bracket() {
        // A closer of the wrong kind stays unmatched; its offset is reported.
        let (b, unbalanced) = brackets("a(b]);");
        assert_eq!(unbalanced, Some(3));
        assert_eq!(b.partner(1), Some(4));
        let (_, unclosed) = brackets("x { (");
        assert_eq!(unclosed, Some(2));
    }
}
