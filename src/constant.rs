//! Integer constants that the file defines, and the value of a launch
//! configuration expression built from them: literals, object-like macros
//! (`#define NUM_THREADS 256`), `constexpr`/`const` integers and `enum`
//! members, and `dim3` variables of the parent given once. Used to tell,
//! before the program runs, that a thresholded site always or never runs
//! its child serially.

use crate::phases::directive_text;
use crate::program::{Function, Program};
use crate::token::TokenKind;
use std::collections::HashMap;

/// Deepest nesting read (parentheses, macro expansions).
const MAX_DEPTH: usize = 64;

/// The constants of one file, by name. A name given two different values
/// (in `#if` branches, or shadowed) is not a constant.
#[derive(Debug, Default)]
pub struct Constants {
    /// Name -> the text of its value.
    definitions: HashMap<String, Option<String>>,
}

impl Constants {
    pub fn of(program: &Program) -> Self {
        let view = program.view.as_str();
        let mut c = Constants::default();
        let sig = &program.sig;
        // Definitions in `#if` branches that `-D` rules out are not read.
        let ruled_out = crate::conditional::ruled_out(program);
        for (i, t) in sig.iter().enumerate() {
            match t.kind {
                TokenKind::Directive => {
                    let raw = t.text(view);
                    if !raw.contains("def") && !raw.contains('\\') {
                        continue;
                    }
                    if !ruled_out.is_empty()
                        && program
                            .condition_at(t.start)
                            .iter()
                            .any(|b| ruled_out.contains(b))
                    {
                        continue;
                    }
                    let logical = directive_text(raw, t.start);
                    let text = logical.text.trim_start();
                    let Some(rest) = text.strip_prefix('#') else {
                        continue;
                    };
                    let Some(rest) = rest.trim_start().strip_prefix("define") else {
                        continue;
                    };
                    if !rest.starts_with([' ', '\t']) {
                        continue;
                    }
                    let rest = rest.trim_start();
                    let name: String = rest
                        .chars()
                        .take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '_')
                        .collect();
                    let body = &rest[name.len()..];
                    if name.is_empty() || body.starts_with('(') {
                        continue; // function-like macros are not constants
                    }
                    c.define(&name, body.trim());
                }
                TokenKind::Ident if matches!(t.text(view), "constexpr" | "const") => {
                    // `constexpr int N = 4;`, `const unsigned N = 4u;`
                    let mut j = i + 1;
                    while sig.get(j).is_some_and(|s| {
                        s.kind == TokenKind::Ident
                            && is_integer_type_word(s.text(view))
                            && sig.get(j + 1).is_some_and(|n| n.kind == TokenKind::Ident)
                    }) {
                        j += 1;
                    }
                    let (Some(name), Some(eq)) = (sig.get(j), sig.get(j + 1)) else {
                        continue;
                    };
                    if j == i + 1
                        || name.kind != TokenKind::Ident
                        || eq.text(view) != "="
                        || !sig[i + 1..j]
                            .iter()
                            .any(|s| is_integer_type_word(s.text(view)))
                    {
                        continue;
                    }
                    let end = (j + 2..sig.len().min(j + 2 + 256))
                        .find(|&k| matches!(sig[k].text(view), ";" | "," | ")" | "{" | "}"));
                    if let Some(end) = end.filter(|&e| e > j + 2) {
                        c.define(name.text(view), &view[sig[j + 2].start..sig[end - 1].end]);
                    }
                }
                TokenKind::Ident if t.text(view) == "enum" => {
                    let Some(open) =
                        (i + 1..sig.len().min(i + 8)).find(|&k| sig[k].text(view) == "{")
                    else {
                        continue;
                    };
                    let Some(close) = program.brackets.partner(open) else {
                        continue;
                    };
                    let mut next = 0i128;
                    let mut k = open + 1;
                    while k < close {
                        let name = sig[k];
                        if name.kind != TokenKind::Ident {
                            break;
                        }
                        let value = if sig[k + 1].text(view) == "=" {
                            let end = (k + 2..close)
                                .find(|&e| sig[e].text(view) == ",")
                                .unwrap_or(close);
                            let text = &view[sig[k + 2].start..sig[end - 1].end];
                            k = end + 1;
                            c.value(text)
                        } else {
                            k += 2;
                            Some(next)
                        };
                        match value {
                            Some(v) => {
                                c.define(name.text(view), &v.to_string());
                                next = v + 1;
                            }
                            None => break,
                        }
                    }
                }
                _ => {}
            }
        }
        // `-D NAME=VALUE` wins over the file's definitions: the usual
        // `#ifndef NAME` / `#define NAME default` keeps the command line's.
        for (name, value) in &program.defines {
            c.definitions.insert(name.clone(), Some(value.clone()));
        }
        c
    }

    fn define(&mut self, name: &str, value: &str) {
        let value = value.to_string();
        self.definitions
            .entry(name.to_string())
            .and_modify(|old| {
                if old.as_deref() != Some(value.as_str()) {
                    *old = None;
                }
            })
            .or_insert(Some(value));
    }

    /// The value of an integer expression, when it is a constant.
    pub fn value(&self, text: &str) -> Option<i128> {
        Evaluator {
            constants: self,
            locals: &HashMap::new(),
            tokens: tokenize(text)?,
            at: 0,
            depth: 0,
        }
        .whole()
    }

    /// The thread count of a grid or block expression of a launch in
    /// `parent`: `dim3(a, b, c)` is `a * b * c`, a `dim3` variable of the
    /// parent given once is its initializer's product.
    pub fn threads(&self, text: &str, parent: &Function, program: &Program) -> Option<i128> {
        let locals = dim3_variables(parent, program);
        let e = Evaluator {
            constants: self,
            locals: &locals,
            tokens: tokenize(text)?,
            at: 0,
            depth: 0,
        };
        e.whole_dim3()
    }
}

/// Is the launch block `text` (in `parent`) made of `parent`'s own block
/// dimensions: `blockDim`, `blockDim.x`, `dim3(blockDim.x, blockDim.y)`, a
/// `dim3` variable declared so, each dimension at most once (the others 1)?
/// Then it holds at most as many threads as `parent`'s block.
/// `at`: where the launch stands (a `dim3` variable is the declaration of
/// that name nearest before it whose block encloses it, never assigned).
pub fn is_own_block(text: &str, parent: &Function, program: &Program, at: usize) -> bool {
    let norm = |s: &str| s.split_whitespace().collect::<String>();
    let text = norm(text);
    let view = program.view.as_str();
    let sig = &program.sig;
    let (open, close) = (parent.body_tokens.start, parent.body_tokens.end);
    let launch = program.sig_index_at(at);
    let mut local: Option<Vec<String>> = None;
    for i in open..close.min(launch) {
        if sig[i].text(view) != "dim3" {
            continue;
        }
        // the innermost `{` before the declaration must enclose the launch
        let scope = (open..i)
            .rev()
            .find(|&b| sig[b].text(view) == "{" && program.brackets.encloses(b, i));
        if !scope.is_some_and(|b| program.brackets.encloses(b, launch)) {
            continue;
        }
        let body = &sig[i + 1..close];
        let mut d = 0;
        while let Some(name) = body.get(d).filter(|s| s.kind == TokenKind::Ident) {
            let (value, next) = declarator(body, view, d + 1);
            if name.text(view) == text {
                local = value;
            }
            match body.get(next).map(|s| s.text(view)) {
                Some(",") => d = next + 1,
                _ => break,
            }
        }
    }
    // written again between the declaration and the launch: not known
    let written = local.is_some()
        && (open..close).any(|i| {
            sig[i].text(view) == text
                && i + 1 < sig.len()
                && ({
                    let member = sig[i + 1].text(view) == ".";
                    crate::token::is_modified_at(sig, if member { i + 2 } else { i }, view)
                })
        });
    let parts: Vec<String> = if let Some(v) = local.filter(|_| !written) {
        v.iter().map(|p| norm(p)).collect()
    } else if let Some(inner) = text.strip_prefix("dim3(").and_then(|t| t.strip_suffix(')')) {
        inner.split(',').map(norm).collect()
    } else {
        vec![text]
    };
    if parts.len() == 1 && parts[0] == "blockDim" {
        return true;
    }
    let mut seen = std::collections::HashSet::new();
    (1..=3).contains(&parts.len())
        && parts.iter().any(|p| p != "1")
        && parts.iter().all(|p| {
            p == "1"
                || (matches!(p.as_str(), "blockDim.x" | "blockDim.y" | "blockDim.z")
                    && seen.insert(p.clone()))
        })
}

fn is_integer_type_word(w: &str) -> bool {
    matches!(
        w,
        "int"
            | "unsigned"
            | "signed"
            | "long"
            | "short"
            | "size_t"
            | "int32_t"
            | "uint32_t"
            | "int64_t"
            | "uint64_t"
            | "static"
            | "const"
            | "constexpr"
            | "__device__"
            | "__constant__"
            | "inline"
    )
}

/// `dim3 name(args);`, `dim3 name{args};`, `dim3 name = dim3(args);` or
/// `dim3 name = expr;` in the body, for names never assigned again.
fn dim3_variables(parent: &Function, program: &Program) -> HashMap<String, Vec<String>> {
    let view = program.view.as_str();
    let body = program.sig_in(parent.body);
    let mut found: HashMap<String, Option<Vec<String>>> = HashMap::new();
    let mut declared_at = Vec::new();
    for (i, t) in body.iter().enumerate() {
        if t.text(view) != "dim3" {
            continue;
        }
        // `dim3 a(...), b = ..., c{...};`: one declarator after another.
        let mut d = i + 1;
        while let Some(name_token) = body.get(d).filter(|s| s.kind == TokenKind::Ident) {
            declared_at.push(d);
            let name = name_token.text(view).to_string();
            let (value, next) = declarator(body, view, d + 1);
            found.entry(name).and_modify(|v| *v = None).or_insert(value);
            match body.get(next).map(|s| s.text(view)) {
                Some(",") => d = next + 1,
                _ => break,
            }
        }
    }
    // Written again (`g = ...`, `g.x = ...`, `++g.x`): not a constant.
    for (i, t) in body.iter().enumerate() {
        let Some(entry) = found.get_mut(t.text(view)) else {
            continue;
        };
        let declared = declared_at.contains(&i);
        let member = body.get(i + 1).is_some_and(|s| s.text(view) == ".");
        let at = if member { i + 2 } else { i };
        if !declared && crate::token::is_modified_at(body, at, view) {
            *entry = None;
        }
    }
    found
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
}

/// The initializer of one `dim3` declarator starting at `k` (just after its
/// name): its parts, and the index of the token after the declarator.
fn declarator(
    body: &[crate::token::Token],
    view: &str,
    mut k: usize,
) -> (Option<Vec<String>>, usize) {
    let end_of = |from: usize| {
        let mut depth = 0i32;
        for (e, t) in body.iter().enumerate().skip(from).take(512) {
            match t.text(view) {
                "(" | "{" | "[" => depth += 1,
                ")" | "}" | "]" => depth -= 1,
                ";" | "," if depth == 0 => return e,
                _ => {}
            }
        }
        body.len()
    };
    if body.get(k).is_some_and(|s| s.text(view) == "=") {
        k += 1;
        if !body.get(k).is_some_and(|s| s.text(view) == "dim3") {
            let end = end_of(k);
            let value = (end > k && end < body.len())
                .then(|| vec![view[body[k].start..body[end - 1].end].to_string()]);
            return (value, end);
        }
        k += 1;
    }
    let Some(open) = body.get(k).filter(|s| matches!(s.text(view), "(" | "{")) else {
        return (None, end_of(k));
    };
    let close_text = if open.text(view) == "(" { ")" } else { "}" };
    let mut depth = 0;
    let mut parts = Vec::new();
    let mut start = k + 1;
    for e in k..body.len().min(k + 512) {
        match body[e].text(view) {
            "(" | "{" | "[" => depth += 1,
            ")" | "}" | "]" => {
                depth -= 1;
                if depth == 0 && body[e].text(view) == close_text {
                    if e > start {
                        parts.push(view[body[start].start..body[e - 1].end].to_string());
                    }
                    let value = (!parts.is_empty()).then_some(parts);
                    return (value, e + 1);
                }
            }
            "," if depth == 1 => {
                if e > start {
                    parts.push(view[body[start].start..body[e - 1].end].to_string());
                }
                start = e + 1;
            }
            _ => {}
        }
    }
    (None, end_of(k))
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(i128),
    Name(String),
    Op(&'static str),
}

const OPS: &[&str] = &[
    "<<", ">>", "::", "(", ")", "{", "}", ",", "+", "-", "*", "/", "%", "~", "!", "&", "|", "^",
    ".",
];

fn tokenize(text: &str) -> Option<Vec<Tok>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'\'' || b[i] == b'.') {
                i += 1;
            }
            out.push(Tok::Num(integer(&text[start..i])?));
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
        if out.len() > 4096 {
            return None;
        }
    }
    Some(out)
}

/// A C integer literal (decimal, hex, octal, binary; digit separators and
/// u/l suffixes allowed).
fn integer(text: &str) -> Option<i128> {
    let t = text.replace('\'', "");
    let t = t.trim_end_matches(['u', 'U', 'l', 'L', 'z', 'Z']);
    let (digits, radix) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        (b, 2)
    } else if t.len() > 1 && t.starts_with('0') {
        (&t[1..], 8)
    } else {
        (t, 10)
    };
    i128::from_str_radix(digits, radix).ok()
}

struct Evaluator<'a> {
    constants: &'a Constants,
    locals: &'a HashMap<String, Vec<String>>,
    tokens: Vec<Tok>,
    at: usize,
    depth: usize,
}

impl Evaluator<'_> {
    fn whole(mut self) -> Option<i128> {
        let v = self.expr(0)?;
        (self.at == self.tokens.len()).then_some(v)
    }

    /// A grid or block expression: `dim3(...)`, a `dim3` variable, or a
    /// scalar.
    fn whole_dim3(mut self) -> Option<i128> {
        match (self.tokens.first(), self.tokens.get(1)) {
            (Some(Tok::Name(n)), Some(Tok::Op("(" | "{"))) if n == "dim3" => {
                self.at = 2;
                let mut product = 1i128;
                loop {
                    product = product.checked_mul(self.expr(0)?)?;
                    match self.next()? {
                        Tok::Op(",") => continue,
                        Tok::Op(")" | "}") => break,
                        _ => return None,
                    }
                }
                (self.at == self.tokens.len()).then_some(product)
            }
            (Some(Tok::Name(n)), None) if self.locals.contains_key(n) => {
                let parts = &self.locals[n];
                let mut product = 1i128;
                for p in parts {
                    let v = Evaluator {
                        constants: self.constants,
                        locals: &HashMap::new(),
                        tokens: tokenize(p)?,
                        at: 0,
                        depth: self.depth + 1,
                    }
                    .whole()?;
                    product = product.checked_mul(v)?;
                }
                Some(product)
            }
            _ => self.whole(),
        }
    }

    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn expr(&mut self, min_prec: u8) -> Option<i128> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let mut lhs = self.unary();
        while let (Some(v), Some(Tok::Op(op))) = (lhs, self.peek().cloned()) {
            let prec = match op {
                "|" => 1,
                "^" => 2,
                "&" => 3,
                "<<" | ">>" => 4,
                "+" | "-" => 5,
                "*" | "/" | "%" => 6,
                _ => break,
            };
            if prec < min_prec {
                break;
            }
            self.at += 1;
            let Some(r) = self.expr(prec + 1) else {
                lhs = None;
                break;
            };
            lhs = match op {
                "|" => Some(v | r),
                "^" => Some(v ^ r),
                "&" => Some(v & r),
                "<<" => u32::try_from(r)
                    .ok()
                    .filter(|&s| s < 64)
                    .and_then(|s| v.checked_shl(s)),
                ">>" => u32::try_from(r).ok().filter(|&s| s < 64).map(|s| v >> s),
                "+" => v.checked_add(r),
                "-" => v.checked_sub(r),
                "*" => v.checked_mul(r),
                "/" => v.checked_div(r),
                _ => v.checked_rem(r),
            };
        }
        self.depth -= 1;
        lhs
    }

    fn unary(&mut self) -> Option<i128> {
        match self.next()? {
            Tok::Num(n) => Some(n),
            Tok::Op("-") => self.expr(7).and_then(i128::checked_neg),
            Tok::Op("+") => self.expr(7),
            Tok::Op("~") => self.expr(7).map(|v| !v),
            Tok::Op("!") => self.expr(7).map(|v| (v == 0) as i128),
            Tok::Op("(") => {
                // A cast to an integer type, or parentheses.
                let save = self.at;
                let mut k = self.at;
                while let Some(Tok::Name(w)) = self.tokens.get(k) {
                    if !is_integer_type_word(w) {
                        break;
                    }
                    k += 1;
                }
                if k > save && self.tokens.get(k) == Some(&Tok::Op(")")) {
                    self.at = k + 1;
                    return self.expr(7);
                }
                let v = self.expr(0)?;
                (self.next()? == Tok::Op(")")).then_some(v)
            }
            Tok::Name(name) if name == "sizeof" => self.size_of(),
            Tok::Name(name) => {
                let value = self.constants.definitions.get(&name)?.clone()?;
                if self.depth >= MAX_DEPTH {
                    return None;
                }
                Evaluator {
                    constants: self.constants,
                    locals: self.locals,
                    tokens: tokenize(&value)?,
                    at: 0,
                    depth: self.depth + 8,
                }
                .whole()
            }
            Tok::Op(_) => None,
        }
    }
}

impl Evaluator<'_> {
    /// `sizeof(T)` after `sizeof`, for a scalar type whose size CUDA fixes on
    /// every host it supports (`long` is not one: 4 bytes on Windows), or a
    /// pointer (64-bit).
    fn size_of(&mut self) -> Option<i128> {
        if self.next()? != Tok::Op("(") {
            return None;
        }
        let mut words = Vec::new();
        let mut pointer = false;
        loop {
            match self.next()? {
                Tok::Op(")") => break,
                Tok::Op("*") => pointer = true,
                Tok::Name(w) if !pointer => words.push(w),
                _ => return None,
            }
        }
        words.retain(|w| !matches!(w.as_str(), "const" | "volatile"));
        if pointer && !words.is_empty() {
            return Some(8);
        }
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let size = match words.as_slice() {
            ["char"] | ["signed" | "unsigned", "char"] | ["bool"] | ["int8_t" | "uint8_t"] => 1,
            ["short"]
            | ["short" | "signed" | "unsigned", "short"]
            | ["unsigned", "short", "int"] => 2,
            ["int16_t" | "uint16_t" | "__half" | "half"] => 2,
            ["int" | "unsigned" | "signed" | "float" | "int32_t" | "uint32_t"] => 4,
            ["unsigned" | "signed", "int"] => 4,
            ["long", "long"] | ["unsigned" | "signed", "long", "long"] => 8,
            ["double" | "size_t" | "int64_t" | "uint64_t" | "ptrdiff_t"] => 8,
            _ => return None,
        };
        Some(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    fn constants(text: &str) -> (SourceFile, Program, Constants) {
        let file = SourceFile::new("t.cu", text.as_bytes().to_vec());
        let program = crate::parser::parse(&file, crate::lexer::lex(&file));
        let c = Constants::of(&program);
        (file, program, c)
    }

    #[test]
    fn macros_constexpr_and_enums() {
        let (_, _, c) = constants(
            "#define NUM_THREADS_PER_BLOCK 256\n#define BLOCKS (2 * 2)\n#define F(x) x\n\
             constexpr int kTile = 32;\nstatic const unsigned kWarps = 0x4u;\nenum { A = 3, B, C = B * 2 };\n",
        );
        assert_eq!(c.value("4 * NUM_THREADS_PER_BLOCK"), Some(1024));
        assert_eq!(c.value("BLOCKS + kTile / kWarps"), Some(12));
        assert_eq!(c.value("(int)C << 1"), Some(16));
        assert_eq!(c.value("F(2)"), None);
        assert_eq!(c.value("n + 1"), None);
        assert_eq!(c.value("1'000"), Some(1000));
        // NVIDIA's cdpQuadtree and KLAP's QT size shared memory with sizeof.
        assert_eq!(c.value("16 * sizeof(int)"), Some(64));
        assert_eq!(
            c.value("32 * sizeof(unsigned long long) + sizeof(float *)"),
            Some(264)
        );
        assert_eq!(c.value("sizeof(long)"), None);
        assert_eq!(c.value("sizeof(Node)"), None);
        assert_eq!(c.value("sizeof(x) * 2"), None);
    }

    #[test]
    fn conflicting_definitions_are_not_constants() {
        let (_, _, c) = constants(
            "#ifdef X\n#define N 4\n#else\n#define N 8\n#endif\n#define M 2\n#define M 2\n",
        );
        assert_eq!(c.value("N"), None);
        assert_eq!(c.value("M"), Some(2));
    }

    /// `-D` definitions: constants, and the `#if` branch they select.
    #[test]
    fn command_line_definitions() {
        let text =
            "#ifdef X\n#define N 4\n#else\n#define N 8\n#endif\n#ifndef T\n#define T 64\n#endif\n";
        let file = SourceFile::new("t.cu", text.as_bytes().to_vec());
        let mut program = crate::parser::parse(&file, crate::lexer::lex(&file));
        let with = |program: &mut Program, defines: &[(&str, &str)]| {
            program.defines = defines
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect();
            Constants::of(program)
        };
        let c = with(&mut program, &[]);
        assert_eq!((c.value("N"), c.value("T")), (None, Some(64)));
        let c = with(&mut program, &[("X", "1")]);
        assert_eq!((c.value("N"), c.value("T")), (Some(4), Some(64)));
        let c = with(&mut program, &[("T", "16")]);
        assert_eq!((c.value("N"), c.value("T")), (None, Some(16)));
    }

    #[test]
    fn dim3_variables_given_once() {
        let (_, program, c) = constants(
            "#define B 128\n__global__ void p(int n) {\n  dim3 grid(4, 2);\n  dim3 block = dim3(B);\n  dim3 g2(n);\n  dim3 g3(2);\n  g3.x = n;\n}\n",
        );
        let p = &program.functions[crate::program::FunctionId(0)];
        assert_eq!(c.threads("grid", p, &program), Some(8));
        assert_eq!(c.threads("block", p, &program), Some(128));
        assert_eq!(c.threads("dim3(2, B)", p, &program), Some(256));
        assert_eq!(c.threads("g2", p, &program), None);
        assert_eq!(c.threads("g3", p, &program), None);
    }
}
