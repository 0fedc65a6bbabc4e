//! "Did you mean …?": the closest known name to a mistyped one.

/// The candidate closest to `name` by edit distance, when it is close enough
/// to be a plausible typo: one edit for short names, else a third of the
/// name's length and at least two. A candidate that differs only in case
/// (`AUTO`, `Implementation`) or that `name` extends with a suffix after a
/// `_` or `-` (`timeout_secs`) is the one meant, however far its spelling.
pub fn suggest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let candidates: Vec<&str> = candidates.into_iter().collect();
    if let Some(same) = candidates
        .iter()
        .find(|c| c.to_lowercase() == name.to_lowercase())
    {
        return Some((*same).to_string());
    }
    if let Some(stem) = candidates.iter().filter(|c| c.len() >= 3).find(|c| {
        name.strip_prefix(**c)
            .is_some_and(|rest| rest.starts_with(['_', '-']))
    }) {
        return Some((*stem).to_string());
    }
    let length = name.chars().count();
    let limit = if length <= 3 { 1 } else { (length / 3).max(2) };
    candidates
        .into_iter()
        .map(|c| (distance(name, c), c))
        .filter(|(d, c)| *d <= limit || (c.starts_with(name) && name.len() >= 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.to_string())
}

/// Optimal string alignment distance: insertions, deletions, substitutions
/// and transpositions of neighbours each cost one.
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        d[i * width] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_word() {
        let keys = [
            "profile",
            "default_phase",
            "max_retries",
            "workflow",
            "jobs",
        ];
        assert_eq!(suggest("profle", keys).as_deref(), Some("profile"));
        assert_eq!(suggest("porfile", keys).as_deref(), Some("profile"));
        assert_eq!(suggest("max_retry", keys).as_deref(), Some("max_retries"));
        assert_eq!(suggest("colour", keys), None);
        assert_eq!(suggest("JOBS", keys).as_deref(), Some("jobs"));
        assert_eq!(suggest("jobs_max", keys).as_deref(), Some("jobs"));
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
