//! File name patterns as the product writes them: `*` matches any run of characters (also
//! none), `?` exactly one; everything else matches itself, case-sensitively.

/// Whether `name` matches `pattern`.
pub fn matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Greedy matching with one backtrack point, the last `*`: linear for the patterns people
    // write, never exponential.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn matches_wildcards_when_star_and_question_mark_are_used() {
        assert!(matches("*", "a.csv"));
        assert!(matches("*.csv", "orders.csv"));
        assert!(!matches("*.csv", "orders.csv.tmp"));
        assert!(matches("order?.txt", "order1.txt"));
        assert!(!matches("order?.txt", "order12.txt"));
        assert!(matches("a*b*c", "axxbyyc"));
        assert!(!matches("a*b*c", "axxbyy"));
        assert!(matches("", ""));
        assert!(!matches("", "a"));
        assert!(!matches("*.CSV", "a.csv"));
    }
}
