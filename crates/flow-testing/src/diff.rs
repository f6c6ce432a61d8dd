//! A line diff for test failures: the longest common subsequence of lines, printed with `-` for
//! expected lines that are missing and `+` for actual lines that are new, with a little context.

/// Lines of context kept around each change.
const CONTEXT: usize = 2;

/// A readable diff from `expected` to `actual`; empty when they are equal.
pub fn line_diff(expected: &str, actual: &str) -> String {
    if expected == actual {
        return String::new();
    }
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    let ops = edit_script(&a, &b);
    if ops.iter().all(|op| matches!(op, Op::Same(_))) {
        return "  (the texts differ only in line endings or the final newline)\n".into();
    }
    let mut keep = vec![false; ops.len()];
    for (i, op) in ops.iter().enumerate() {
        if !matches!(op, Op::Same(_)) {
            let lo = i.saturating_sub(CONTEXT);
            let hi = (i + CONTEXT + 1).min(ops.len());
            keep[lo..hi].iter_mut().for_each(|k| *k = true);
        }
    }
    let mut out = String::new();
    let mut skipped = false;
    for (op, keep) in ops.iter().zip(keep) {
        if !keep {
            skipped = true;
            continue;
        }
        if skipped {
            out.push_str("  ...\n");
            skipped = false;
        }
        let (mark, line) = match op {
            Op::Same(l) => (' ', l),
            Op::Removed(l) => ('-', l),
            Op::Added(l) => ('+', l),
        };
        out.push(mark);
        out.push(' ');
        out.push_str(line);
        out.push('\n');
    }
    if skipped {
        out.push_str("  ...\n");
    }
    out
}

enum Op<'a> {
    Same(&'a str),
    Removed(&'a str),
    Added(&'a str),
}

fn edit_script<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Op<'a>> {
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..]. Expected files are small
    // (hundreds of lines), so the quadratic table is fine.
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::new();
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push(Op::Same(a[i]));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            // Removals first, so that a changed line reads as `-` old then `+` new.
            ops.push(Op::Removed(a[i]));
            i += 1;
        } else {
            ops.push(Op::Added(b[j]));
            j += 1;
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_diff_marks_changed_lines_with_context() {
        let d = line_diff("a\nb\nc\nd\ne\nf\ng\n", "a\nb\nc\nX\ne\nf\ng\n");
        assert_eq!(d, "  ...\n  b\n  c\n- d\n+ X\n  e\n  f\n  ...\n");
    }

    #[test]
    fn line_diff_is_empty_when_equal() {
        assert_eq!(line_diff("same\n", "same\n"), "");
        assert!(line_diff("x\n", "x").contains("final newline"));
    }
}
