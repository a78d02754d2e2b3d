//! Row labels as parts of file names: `sim run --report` writes `explain-LABEL.svg`, `sim
//! explain` `explain-LABEL-S-I.svg`, `sim explore` `LABEL-KIND-seedN.toml`, `sim compare`
//! `compare-LABEL.svg`. One sanitizer for all of them, and the parser refuses two labels that it
//! maps to one name (`a/b` and `a_b`), so that no output overwrites another's.

/// A row label as a file-name part: anything but ASCII letters, digits, `-` and `_` becomes `_`.
pub fn label_file_part(label: &str) -> String {
    label.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

/// The key two labels collide on: their file-name parts, ignoring case (macOS and Windows file
/// systems do).
pub(crate) fn collision_key(label: &str) -> String {
    label_file_part(label).to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitized_names_and_their_collisions() {
        assert_eq!(label_file_part("redis-fast_2"), "redis-fast_2");
        assert_eq!(label_file_part("a/b c.é"), "a_b_c__");
        assert_eq!(collision_key("a/b"), collision_key("a_b"));
        assert_eq!(collision_key("Fast"), collision_key("fast"));
        assert_ne!(collision_key("a-b"), collision_key("a_b"));
    }
}
