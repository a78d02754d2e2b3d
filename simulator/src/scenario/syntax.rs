//! A best-effort key path for a TOML syntax error. The TOML parser stops at the first bad byte
//! and builds no tree, so the path is read from the text itself: the last table header above the
//! error (`[workload]`, or the n-th `[[faults]]` as `faults.n`) and the key the error's line
//! assigns, if it assigns one. A line inside a multi-line string can fool it; the line and column
//! stay exact either way.

/// Header name without brackets, spaces or quotes (`[ models."redis" ]` is `models.redis`), if
/// `line` is a table header at all (a line `["a"],` inside a multi-line array is not: it does not
/// end at its bracket).
fn header(line: &str) -> Option<(String, bool)> {
    let t = line.split('#').next().unwrap_or("").trim();
    let (inner, array) = if let Some(h) = t.strip_prefix("[[") {
        (h.strip_suffix("]]")?, true)
    } else {
        (t.strip_prefix('[')?.strip_suffix(']')?, false)
    };
    let ok = |c: char| c.is_alphanumeric() || "_-.\"' ".contains(c);
    if inner.trim().is_empty() || !inner.chars().all(ok) {
        return None;
    }
    let name: String = inner.chars().filter(|c| !matches!(c, ' ' | '"' | '\'')).collect();
    Some((name, array))
}

/// The key path around byte `offset`, if one can be told.
pub(crate) fn key_near(text: &str, offset: usize) -> Option<String> {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = &text[line_start..line_end];

    let mut table = String::new();
    let mut arrays: Vec<(String, usize)> = Vec::new();
    for l in text[..line_start].lines() {
        if let Some((name, array)) = header(l) {
            table = if array {
                let n = match arrays.iter_mut().find(|(a, _)| *a == name) {
                    Some((_, n)) => {
                        *n += 1;
                        *n
                    }
                    None => {
                        arrays.push((name.clone(), 0));
                        0
                    }
                };
                format!("{name}.{n}")
            } else {
                name
            };
        }
    }
    if let Some((name, _)) = header(line) {
        return Some(name);
    }
    let key = line
        .split_once('=')
        .map(|(k, _)| k.trim())
        .filter(|k| !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || "_-.\"' ".contains(c)));
    let key: Option<String> = key.map(|k| k.chars().filter(|c| !matches!(c, ' ' | '"' | '\'')).collect());
    match (table.is_empty(), key) {
        (true, None) => None,
        (true, Some(k)) => Some(k),
        (false, None) => Some(table),
        (false, Some(k)) => Some(format!("{table}.{k}")),
    }
}

/// The TOML parser's message for an error at byte `offset`, completed where it says too little:
/// a key with no value (`hold_ms =` at the end of a line or of the file) gets an empty message or
/// "invalid string",
/// and an integer beyond 64 bits only "number too large to fit in target type".
pub(crate) fn explain(text: &str, offset: usize, message: &str) -> String {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let before = text[line_start..offset].trim_end();
    let rest = text[offset..].split('\n').next().unwrap_or("").trim();
    // toml_edit says nothing here, or guesses "invalid string" from the line's end.
    if before.ends_with('=') && (rest.is_empty() || rest.starts_with('#')) {
        return "a value is missing after `=`: expected a number, a \"string\", true or false, an array [ … ] \
                or an inline table { … }"
            .to_string();
    }
    if message.is_empty() {
        return "the text cannot be read as TOML here".to_string();
    }
    if message.contains("number too large") {
        return format!(
            "{message}: an integer must lie within -9223372036854775808 and 9223372036854775807 (64 bits); \
             write a larger value as a float, such as 1e20"
        );
    }
    message.to_string()
}

#[cfg(test)]
mod tests {
    use super::{explain, key_near};

    #[test]
    fn explains_a_missing_value_and_a_too_large_integer() {
        let text = "a = 1\nb =\n";
        assert!(explain(text, text.len() - 1, "").contains("a value is missing after `=`"));
        assert!(explain("b = ", 4, "").contains("a value is missing"));
        assert_eq!(explain("b = [", 5, ""), "the text cannot be read as TOML here");
        assert!(explain("b = 1", 4, "number too large to fit in target type").contains("64 bits"));
        assert_eq!(explain("b = x", 4, "invalid string"), "invalid string");
    }

    #[test]
    fn finds_the_table_and_key_of_an_error_line() {
        let text = "name = \"t\"\n[[faults]]\nkind = 1\n[[faults]]\nat_ms = = 3\n";
        assert_eq!(key_near(text, text.find("= 3").unwrap()).as_deref(), Some("faults.1.at_ms"));
        let text = "[workload]\nclients = [\n  [\"a\"],\n  3 4\n]\n";
        assert_eq!(key_near(text, text.find("4").unwrap()).as_deref(), Some("workload"));
        assert_eq!(key_near("[models . \"redis\"\n", 5).as_deref(), None);
        assert_eq!(key_near("x = é", 100).as_deref(), Some("x"));
    }
}
