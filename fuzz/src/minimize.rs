//! Test-case reduction: delta debugging over lines, then over bytes, keeping
//! a candidate whenever it still shows the violation.

use std::time::Instant;

/// Limits of one reduction.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub deadline: Instant,
    pub max_tests: usize,
}

/// Shrink `input` while `still_fails` holds. The predicate is assumed to
/// hold for `input`.
pub fn minimize(
    input: &[u8],
    budget: Budget,
    mut still_fails: impl FnMut(&[u8]) -> bool,
) -> Vec<u8> {
    let mut tests = 0usize;
    let mut test = |candidate: &[u8]| -> bool {
        if tests >= budget.max_tests || Instant::now() >= budget.deadline {
            return false;
        }
        tests += 1;
        still_fails(candidate)
    };
    let lines = split_lines(input);
    let lines = reduce(lines, &mut |units: &[&[u8]]| test(&units.concat()));
    let current = lines.concat();
    let bytes: Vec<&[u8]> = current.chunks(1).collect();
    reduce(bytes, &mut |units: &[&[u8]]| test(&units.concat())).concat()
}

fn split_lines(input: &[u8]) -> Vec<&[u8]> {
    input.split_inclusive(|&b| b == b'\n').collect()
}

/// Remove chunks of units, from half of them down to one at a time
/// (a simplified ddmin: complements only, which is what shrinks fastest).
fn reduce<'a>(
    mut units: Vec<&'a [u8]>,
    test: &mut dyn FnMut(&[&'a [u8]]) -> bool,
) -> Vec<&'a [u8]> {
    let mut chunk = (units.len() / 2).max(1);
    loop {
        let mut i = 0;
        let mut removed_any = false;
        while i < units.len() {
            let end = (i + chunk).min(units.len());
            let candidate: Vec<&[u8]> = units[..i].iter().chain(&units[end..]).copied().collect();
            if test(&candidate) {
                units = candidate;
                removed_any = true;
            } else {
                i = end;
            }
        }
        if chunk == 1 {
            if !removed_any {
                break;
            }
        } else {
            chunk /= 2;
        }
    }
    units
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn shrinks_to_the_essential_bytes() {
        let input = b"line one\nthe BUG is here\nline three\n".to_vec();
        let budget = Budget {
            deadline: Instant::now() + Duration::from_secs(10),
            max_tests: 10_000,
        };
        let out = minimize(&input, budget, |c| c.windows(3).any(|w| w == b"BUG"));
        assert_eq!(out, b"BUG");
    }
}
