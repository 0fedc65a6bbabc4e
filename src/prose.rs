//! Lists as people write them in messages.

/// `items` as prose: "a", "a and b", "a, b and c"; empty for none.
pub fn and_list<S: AsRef<str>>(items: &[S]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_string(),
        [init @ .., last] => {
            let init: Vec<&str> = init.iter().map(AsRef::as_ref).collect();
            format!("{} and {}", init.join(", "), last.as_ref())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::and_list;

    #[test]
    fn a_list_reads_as_prose() {
        assert_eq!(and_list::<&str>(&[]), "");
        assert_eq!(and_list(&["go"]), "go");
        assert_eq!(and_list(&["go", "node"]), "go and node");
        assert_eq!(
            and_list(&["go".to_string(), "node".to_string(), "python".to_string()]),
            "go, node and python"
        );
    }
}
