//! The `#if` branches that the command line's `-D` definitions rule out.
//!
//! dpopt reads every branch of an `#if` group alike. With `-D NAME[=VALUE]`
//! some conditions are decided: `#ifdef NAME` is taken, `#ifndef NAME` is
//! not, `#if NAME > 2 && defined(OTHER)` is decided when every name in it is
//! given on the command line (or the result does not depend on the others),
//! and an `#else` or `#elif` after a taken branch is not. A branch is only
//! ruled out when that is certain: a name the command line does not give
//! may be defined by the file or a header, so its conditions stay open, and
//! a name the file `#undef`s is never decided.

use crate::phases::directive_text;
use crate::program::Program;
use crate::token::TokenKind;
use std::collections::{HashMap, HashSet};

/// Deepest nesting of parentheses read in a condition.
const MAX_DEPTH: usize = 64;

/// The (group, branch) pairs of `Program::conditions` that are certainly not
/// compiled with the program's `-D` definitions. Empty without definitions.
pub fn ruled_out(program: &Program) -> HashSet<(usize, usize)> {
    let view = program.view.as_str();
    let mut dead = HashSet::new();
    if program.defines.is_empty() {
        return dead;
    }
    let directives: Vec<(usize, String)> = program
        .sig
        .iter()
        .filter(|t| t.kind == TokenKind::Directive)
        .map(|t| (t.start, directive_text(t.text(view), t.start).text))
        .collect();
    let undefined: HashSet<String> = directives
        .iter()
        .filter_map(|(_, text)| {
            let (word, rest) = split_directive(text);
            (word == "undef").then(|| first_name(rest).to_string())
        })
        .collect();
    let known: HashMap<&str, &str> = program
        .defines
        .iter()
        .filter(|(n, _)| !undefined.contains(n))
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    // Per group: some branch taken for certain; every branch so far ruled out.
    let mut groups: HashMap<usize, (bool, bool)> = HashMap::new();
    for (offset, stack) in &program.conditions {
        let Ok(k) = directives.binary_search_by_key(offset, |d| d.0) else {
            continue;
        };
        let (word, rest) = split_directive(&directives[k].1);
        let Some(&(group, branch)) = stack.last() else {
            continue;
        };
        let condition = match word {
            "if" | "elif" => evaluate(rest, &known).map(|v| v != 0),
            "ifdef" | "elifdef" => known.contains_key(first_name(rest)).then_some(true),
            "ifndef" | "elifndef" => known.contains_key(first_name(rest)).then_some(false),
            "else" => Some(true),
            _ => continue, // `#endif`: the stack after it is the outer one
        };
        let (taken, all_out) = groups.get(&group).copied().unwrap_or((false, true));
        let first = matches!(word, "if" | "ifdef" | "ifndef");
        let truth = if first {
            condition
        } else if taken {
            Some(false)
        } else if all_out {
            condition
        } else {
            condition.filter(|c| !c)
        };
        let (taken, all_out) = if first {
            (truth == Some(true), truth == Some(false))
        } else {
            (
                taken || truth == Some(true),
                all_out && truth == Some(false),
            )
        };
        groups.insert(group, (taken, all_out));
        if truth == Some(false) {
            dead.insert((group, branch));
        }
    }
    dead
}

/// The condition under which the given `#if` branches (a suffix of a
/// `Program::condition_at` stack, outermost first) are all compiled, as one
/// `#if` expression: branch `b` of a group is "not the conditions of the
/// branches before it, and its own" (`#ifdef N` is `defined(N)`). Generated
/// code that belongs to those branches (a continuation of a sync inside
/// one) is wrapped in it. `None` when a directive has no condition to copy.
pub fn branch_condition(program: &Program, branches: &[(usize, usize)]) -> Option<String> {
    let view = program.view.as_str();
    let mut terms: Vec<String> = Vec::new();
    for &(group, branch) in branches {
        for (offset, stack) in &program.conditions {
            let Some(&(g, b)) = stack.last() else {
                continue;
            };
            if g != group || b > branch {
                continue;
            }
            let k = program.sig.partition_point(|t| t.start < *offset);
            let t = program.sig.get(k).filter(|t| t.start == *offset)?;
            let text = directive_text(t.text(view), t.start).text;
            let (word, rest) = split_directive(&text);
            let rest = rest.trim();
            let term = match word {
                "if" | "elif" if !rest.is_empty() => format!("({rest})"),
                "ifdef" | "elifdef" if !first_name(rest).is_empty() => {
                    format!("defined({})", first_name(rest))
                }
                "ifndef" | "elifndef" if !first_name(rest).is_empty() => {
                    format!("!defined({})", first_name(rest))
                }
                // `#else` adds nothing of its own; an `#endif` here closes a
                // group nested in the branch.
                "else" | "endif" => continue,
                _ => return None,
            };
            terms.push(if b < branch { format!("!{term}") } else { term });
        }
    }
    Some(if terms.is_empty() {
        "1".to_string()
    } else {
        terms.join(" && ")
    })
}

/// The directive's name and the text after it.
fn split_directive(text: &str) -> (&str, &str) {
    let t = text.trim_start().trim_start_matches('#').trim_start();
    let end = t
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(t.len());
    (&t[..end], &t[end..])
}

fn first_name(text: &str) -> &str {
    let t = text.trim_start();
    let end = t
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(t.len());
    &t[..end]
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(i128),
    Name(String),
    Op(&'static str),
}

const OPS: &[&str] = &[
    "&&", "||", "==", "!=", "<=", ">=", "<", ">", "!", "(", ")", "+", "-", "*",
];

fn tokenize(text: &str) -> Option<Vec<Tok>> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_alphanumeric() {
                i += 1;
            }
            let digits = text[start..i].trim_end_matches(['u', 'U', 'l', 'L']);
            out.push(Tok::Num(digits.parse().ok()?));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Name(text[start..i].to_string()));
        } else {
            let op = OPS.iter().find(|op| text[i..].starts_with(**op))?;
            out.push(Tok::Op(op));
            i += op.len();
        }
        if out.len() > 1024 {
            return None;
        }
    }
    Some(out)
}

/// The value of an `#if` condition, `None` when it is not certain.
fn evaluate(text: &str, known: &HashMap<&str, &str>) -> Option<i128> {
    let tokens = tokenize(text)?;
    let mut p = Parser {
        tokens,
        at: 0,
        known,
        depth: 0,
    };
    let v = p.or()?;
    (p.at == p.tokens.len()).then_some(v)?
}

struct Parser<'a> {
    tokens: Vec<Tok>,
    at: usize,
    known: &'a HashMap<&'a str, &'a str>,
    depth: usize,
}

/// A parsed sub-expression: `None` when malformed; `Some(None)` when well
/// formed but not certain.
type Value = Option<Option<i128>>;

impl Parser<'_> {
    fn eat(&mut self, op: &'static str) -> bool {
        let found = self.tokens.get(self.at) == Some(&Tok::Op(op));
        if found {
            self.at += 1;
        }
        found
    }

    fn or(&mut self) -> Value {
        let mut v = self.and()?;
        while self.eat("||") {
            let r = self.and()?;
            v = match (v, r) {
                (Some(a), _) if a != 0 => Some(1),
                (_, Some(b)) if b != 0 => Some(1),
                (Some(_), Some(_)) => Some(0),
                _ => None,
            };
        }
        Some(v)
    }

    fn and(&mut self) -> Value {
        let mut v = self.comparison()?;
        while self.eat("&&") {
            let r = self.comparison()?;
            v = match (v, r) {
                (Some(0), _) | (_, Some(0)) => Some(0),
                (Some(_), Some(_)) => Some(1),
                _ => None,
            };
        }
        Some(v)
    }

    fn comparison(&mut self) -> Value {
        let mut v = self.additive()?;
        while let Some(Tok::Op(op @ ("==" | "!=" | "<" | ">" | "<=" | ">="))) =
            self.tokens.get(self.at).cloned()
        {
            self.at += 1;
            let r = self.additive()?;
            v = match (v, r) {
                (Some(a), Some(b)) => Some(i128::from(match op {
                    "==" => a == b,
                    "!=" => a != b,
                    "<" => a < b,
                    ">" => a > b,
                    "<=" => a <= b,
                    _ => a >= b,
                })),
                _ => None,
            };
        }
        Some(v)
    }

    fn additive(&mut self) -> Value {
        let mut v = self.unary()?;
        while let Some(Tok::Op(op @ ("+" | "-" | "*"))) = self.tokens.get(self.at).cloned() {
            self.at += 1;
            let r = self.unary()?;
            v = match (v, r) {
                (Some(a), Some(b)) => match op {
                    "+" => a.checked_add(b),
                    "-" => a.checked_sub(b),
                    _ => a.checked_mul(b),
                },
                _ => None,
            };
        }
        Some(v)
    }

    fn unary(&mut self) -> Value {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        let tok = self.tokens.get(self.at).cloned()?;
        self.at += 1;
        match tok {
            Tok::Num(n) => Some(Some(n)),
            Tok::Op("!") => Some(self.unary()?.map(|v| i128::from(v == 0))),
            Tok::Op("-") => Some(self.unary()?.and_then(i128::checked_neg)),
            Tok::Op("(") => {
                self.depth += 1;
                let v = self.or()?;
                self.depth -= 1;
                self.eat(")").then_some(v)
            }
            Tok::Name(n) if n == "defined" => {
                let paren = self.eat("(");
                let Some(Tok::Name(name)) = self.tokens.get(self.at).cloned() else {
                    return None;
                };
                self.at += 1;
                if paren && !self.eat(")") {
                    return None;
                }
                Some(self.known.contains_key(name.as_str()).then_some(1))
            }
            Tok::Name(n) => Some(
                self.known
                    .get(n.as_str())
                    .and_then(|v| v.trim().trim_end_matches(['u', 'U', 'l', 'L']).parse().ok()),
            ),
            Tok::Op(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    fn dead(text: &str, defines: &[(&str, &str)]) -> Vec<(usize, usize)> {
        let file = SourceFile::new("t.cu", text.as_bytes().to_vec());
        let mut program = crate::parser::parse(&file, crate::lexer::lex(&file));
        program.defines = defines
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        let mut d: Vec<_> = ruled_out(&program).into_iter().collect();
        d.sort();
        d
    }

    const GROUP: &str =
        "#ifdef BIG\n#define T 512\n#elif SMALL > 1\n#define T 32\n#else\n#define T 128\n#endif\n";

    #[test]
    fn decides_only_what_is_certain() {
        assert!(dead(GROUP, &[]).is_empty());
        // BIG given: the #elif and #else are out.
        assert_eq!(dead(GROUP, &[("BIG", "1")]), [(0, 1), (0, 2)]);
        // BIG not given (it may come from a header): SMALL = 0 rules out
        // the #elif, but the #else stays open (the first branch may be taken).
        assert_eq!(dead(GROUP, &[("SMALL", "0")]), [(0, 1)]);
        assert!(dead(GROUP, &[("SMALL", "4")]).is_empty());
        // #undef in the file: never decided.
        let undef = format!("#undef BIG\n{GROUP}");
        assert!(dead(&undef, &[("BIG", "1")]).is_empty());
    }

    #[test]
    fn conditions() {
        let text = "#ifndef N\n#define N 8\n#endif\n#if defined(A) && A >= 2 || 0\n#endif\n#if !defined B\n#endif\n#if X && Y\n#endif\n";
        assert_eq!(dead(text, &[("N", "4")]), [(0, 0)]);
        assert_eq!(dead(text, &[("A", "1")]), [(1, 0)]);
        assert!(dead(text, &[("A", "2")]).is_empty());
        assert_eq!(dead(text, &[("B", "1")]), [(2, 0)]);
        // `X && Y` is false as soon as one of them is 0.
        assert_eq!(dead(text, &[("Y", "0")]), [(3, 0)]);
        assert!(dead(text, &[("Y", "1")]).is_empty());
    }

    #[test]
    fn the_condition_of_a_branch() {
        let text = "#ifdef BIG // big\n#elif SMALL > 1\n#if A\n#endif\n#else\n#ifndef C\nx\n#endif\n#endif\n";
        let file = SourceFile::new("t.cu", text.as_bytes().to_vec());
        let program = crate::parser::parse(&file, crate::lexer::lex(&file));
        let x = program.condition_at(text.find('x').unwrap());
        assert_eq!(x, [(0, 2), (2, 0)]);
        assert_eq!(
            branch_condition(&program, &x).unwrap(),
            "!defined(BIG) && !(SMALL > 1) && !defined(C)"
        );
        assert_eq!(
            branch_condition(&program, &[(0, 1)]).unwrap(),
            "!defined(BIG) && (SMALL > 1)"
        );
        assert_eq!(branch_condition(&program, &[]).unwrap(), "1");
    }
}
