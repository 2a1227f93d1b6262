//! The child's leading bounds guard, for the serial version (thresholding).
//!
//! Most children begin with `int i = blockIdx.x * blockDim.x + threadIdx.x;
//! if (i >= n) return;` for a parameter `n`: every thread whose global index
//! reaches `n` does nothing. A child launched with `(n + 31) / 32` blocks of
//! 32 threads then has up to 31 such threads, and the serial version, which
//! runs every child thread in the parent thread, would run them all: on a
//! road-like graph (degree <= 4) that made the parent kernel execute 1.7x the
//! instructions of the flat code (Nsight Compute, bench/probes/road_gap.sh).
//! When the guard is found, the serial version of a one-dimensional launch
//! stops at `min(threads, n)` instead, which skips exactly the threads that
//! would return at once.

/// The parameter `n` of a body that starts with the guard, if it does. The
/// index must be a signed integer (so that `i >= n` compares numerically for
/// any integer `n`); comments or other statements before the guard, or any
/// other form, give `None` (the serial version then runs every thread).
pub fn bounding_parameter(body: &str, params: &[Option<String>]) -> Option<String> {
    let text: String = body.chars().filter(|c| !c.is_whitespace()).collect();
    let text = text.strip_prefix('{')?;
    let (declaration, rest) = text.split_once(';')?;
    let (lhs, index_expr) = declaration.split_once('=')?;
    const INDEX: [&str; 4] = [
        "blockIdx.x*blockDim.x+threadIdx.x",
        "blockDim.x*blockIdx.x+threadIdx.x",
        "threadIdx.x+blockIdx.x*blockDim.x",
        "threadIdx.x+blockDim.x*blockIdx.x",
    ];
    if !INDEX.contains(&index_expr) {
        return None;
    }
    const SIGNED: [&str; 8] = [
        "int",
        "constint",
        "long",
        "constlong",
        "longlong",
        "constlonglong",
        "int64_t",
        "constint64_t",
    ];
    let index = SIGNED
        .iter()
        .filter_map(|t| lhs.strip_prefix(t))
        .find(|name| is_identifier(name))?;
    let bound = rest
        .strip_prefix("if(")?
        .strip_prefix(index)?
        .strip_prefix(">=")?
        .split_once(")return;")?
        .0;
    params
        .iter()
        .flatten()
        .find(|p| p.as_str() == bound)
        .cloned()
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::bounding_parameter;

    fn params(names: &[&str]) -> Vec<Option<String>> {
        names.iter().map(|n| Some(n.to_string())).collect()
    }

    #[test]
    fn finds_the_usual_guard() {
        let body = "{\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= deg) return;\n  x[i] = 1;\n}";
        assert_eq!(
            bounding_parameter(body, &params(&["x", "deg"])),
            Some("deg".to_string())
        );
        let body = "{ const int j = threadIdx.x + blockIdx.x * blockDim.x; if (j >= n) return; }";
        assert_eq!(
            bounding_parameter(body, &params(&["n"])),
            Some("n".to_string())
        );
    }

    #[test]
    fn refuses_other_forms() {
        let p = params(&["n"]);
        // unsigned index: `i >= n` would compare as unsigned for a negative n
        assert_eq!(
            bounding_parameter(
                "{ unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; }",
                &p
            ),
            None
        );
        assert_eq!(
            bounding_parameter(
                "{ auto i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; }",
                &p
            ),
            None
        );
        // a bound that is not a parameter, another comparison, a 2-D index, a statement first
        assert_eq!(
            bounding_parameter(
                "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= m) return; }",
                &p
            ),
            None
        );
        assert_eq!(
            bounding_parameter(
                "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i > n) return; }",
                &p
            ),
            None
        );
        assert_eq!(
            bounding_parameter(
                "{ int i = blockIdx.y * blockDim.x + threadIdx.x; if (i >= n) return; }",
                &p
            ),
            None
        );
        assert_eq!(
            bounding_parameter(
                "{ f(); int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; }",
                &p
            ),
            None
        );
        assert_eq!(
            bounding_parameter(
                "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n + 1) return; }",
                &p
            ),
            None
        );
        assert_eq!(
            bounding_parameter(
                "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) { return; } }",
                &p
            ),
            None
        );
    }
}
