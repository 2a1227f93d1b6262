//! How a child's parameters are stored in a record (aggregation's records,
//! the queue of deferred launches): decided in the analyze stage
//! (`ChildPlan::members`), written by the templates.

use crate::program::Function;

/// A child parameter as a record member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// `int n`, `const float *a`, `dpopt_bytes<Graph> g`: top-level `const`
    /// removed (records are assigned), unnamed parameters named, an array
    /// parameter as the pointer it is (`int r[]`: `int *r`).
    pub decl: String,
    /// The parameter's name (`dpopt_argN` when unnamed).
    pub name: String,
    /// What reads the value back from the member: `.get()` for a class
    /// kept as its bytes (as kernel arguments are copied: records need no
    /// constructor, whatever the class declares), else nothing.
    pub read: &'static str,
}

/// The members of a record of the child's parameters, in order.
pub fn members(child: &Function) -> Vec<Member> {
    child
        .params
        .iter()
        .enumerate()
        .map(|(i, param)| {
            let name = param
                .name
                .clone()
                .unwrap_or_else(|| format!("dpopt_arg{i}"));
            let member = member_declaration(&param.declaration, &name, param.name.is_none());
            match byte_stored_type(&member, &name) {
                Some(ty) => Member {
                    decl: format!("dpopt_bytes<{ty}> {name}"),
                    name,
                    read: ".get()",
                },
                None => Member {
                    decl: member,
                    name,
                    read: "",
                },
            }
        })
        .collect()
}

fn member_declaration(declaration: &str, name: &str, unnamed: bool) -> String {
    let mut decl = declaration.trim().to_string();
    if unnamed {
        decl = format!("{decl} {name}");
    }
    decl = decayed_array(&decl, name);
    if !decl.contains('*') && !decl.contains('&') {
        decl = without_top_level_cv(&decl);
    }
    decl.replace("* const ", "* ").replace("*const ", "*")
}

/// A value's declaration without its `const` and `volatile` (`int const n`,
/// `const volatile unsigned n`), those inside template arguments kept
/// (`Box<const int> b`): a record member is assigned.
fn without_top_level_cv(decl: &str) -> String {
    let mut depth = 0i32;
    let mut out: Vec<&str> = Vec::new();
    for word in decl.split_whitespace() {
        if depth == 0 && matches!(word, "const" | "volatile") {
            continue;
        }
        depth += word.matches('<').count() as i32 - word.matches('>').count() as i32;
        out.push(word);
    }
    out.join(" ")
}

/// A parameter declared as an array (`int r[]`, `float m[8]`, `int t[][4]`)
/// is a pointer (C++ adjusts a function parameter's array type), but as a
/// member it would be an array of incomplete or fixed size: the member is
/// the pointer (`int *r`, `float *m`, `int (*t)[4]`).
fn decayed_array(decl: &str, name: &str) -> String {
    let Some(at) = decl.rfind(name) else {
        return decl.to_string();
    };
    let after = decl[at + name.len()..].trim_start();
    if !after.starts_with('[')
        || decl[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
    {
        return decl.to_string();
    }
    let Some(close) = after.find(']') else {
        return decl.to_string();
    };
    let rest = after[close + 1..].trim();
    let head = decl[..at].trim_end();
    if rest.is_empty() {
        format!("{head} *{name}")
    } else {
        format!("{head} (*{name}){rest}")
    }
}

/// The type of a record member that is stored as bytes: one passed by
/// value whose type is not built from fundamental types alone (a class, a
/// vector type such as `float4`, a typedef): it may have constructors or a
/// destructor, which a `__device__` pool or a launch-parameter record cannot
/// run. Pointers, references and arrays (pointers too) are stored as they are.
fn byte_stored_type(member: &str, name: &str) -> Option<String> {
    const FUNDAMENTAL: &[&str] = &[
        "const",
        "volatile",
        "signed",
        "unsigned",
        "short",
        "long",
        "int",
        "char",
        "bool",
        "float",
        "double",
        "size_t",
        "ptrdiff_t",
        "int8_t",
        "int16_t",
        "int32_t",
        "int64_t",
        "uint8_t",
        "uint16_t",
        "uint32_t",
        "uint64_t",
        "uintptr_t",
        "intptr_t",
        "__int128",
        "std",
    ];
    if member.contains(['*', '&', '[', '(']) {
        return None;
    }
    let ty = member.trim_end().strip_suffix(name)?.trim_end();
    let words: Vec<&str> = ty
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    if words.is_empty() || words.iter().all(|w| FUNDAMENTAL.contains(w)) {
        return None;
    }
    Some(ty.to_string())
}

#[cfg(test)]
mod tests {
    use super::member_declaration;

    #[test]
    fn array_parameters_become_pointer_members() {
        assert_eq!(
            member_declaration("int results[]", "results", false),
            "int *results"
        );
        assert_eq!(
            member_declaration("const int vals[]", "vals", false),
            "const int *vals"
        );
        assert_eq!(member_declaration("float m[8]", "m", false), "float *m");
        assert_eq!(member_declaration("int t[][4]", "t", false), "int (*t)[4]");
        assert_eq!(
            member_declaration("int t [ ] [ 4 ]", "t", false),
            "int (*t)[ 4 ]"
        );
        assert_eq!(member_declaration("const int n", "n", false), "int n");
        assert_eq!(member_declaration("int const n", "n", false), "int n");
        assert_eq!(
            member_declaration("unsigned const volatile n", "n", false),
            "unsigned n"
        );
        assert_eq!(
            member_declaration("Box<const int> const b", "b", false),
            "Box<const int> b"
        );
        assert_eq!(
            member_declaration("int const *p", "p", false),
            "int const *p"
        );
        assert_eq!(member_declaration("int *const p", "p", false), "int *p");
        // a name that ends another word is not the declarator
        assert_eq!(member_declaration("my_t t", "t", false), "my_t t");
    }
}
