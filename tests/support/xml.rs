//! A minimal XML well-formedness check shared by the tests that write SVG (no XML crate in the
//! workspace), used by `tests/report.rs` and `tests/explain.rs` (`crate::support::xml`).

/// A minimal XML well-formedness check (no DTDs): tags nest and close, attributes are quoted and
/// unique, entities are well formed, and there is exactly one root element, which is returned.
pub fn xml_root(text: &str) -> Result<String, String> {
    fn check_entities(s: &str, at: usize) -> Result<(), String> {
        let mut rest = s;
        while let Some(i) = rest.find('&') {
            let after = &rest[i + 1..];
            let end = after.find(';').ok_or_else(|| format!("unterminated entity near byte {at}"))?;
            let name = &after[..end];
            let ok = matches!(name, "lt" | "gt" | "amp" | "quot" | "apos")
                || name.strip_prefix("#x").is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()))
                || name.strip_prefix('#').is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()));
            if !ok {
                return Err(format!("bad entity &{name}; near byte {at}"));
            }
            rest = &after[end + 1..];
        }
        Ok(())
    }
    let is_name = |c: char| c.is_alphanumeric() || "_-.:".contains(c);
    let mut stack: Vec<&str> = Vec::new();
    let mut root: Option<String> = None;
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let Some(lt) = rest.find('<') else {
            if !rest.trim().is_empty() {
                return Err(format!("text after the root element at byte {i}"));
            }
            break;
        };
        let chars = &rest[..lt];
        if stack.is_empty() && !chars.trim().is_empty() {
            return Err(format!("text outside the root element at byte {i}"));
        }
        check_entities(chars, i)?;
        i += lt;
        let rest = &text[i..];
        let skip = |open: &str, close: &str| -> Option<Result<usize, String>> {
            rest.starts_with(open).then(|| {
                rest.find(close).map(|e| e + close.len()).ok_or_else(|| format!("unterminated {open} at byte {i}"))
            })
        };
        if let Some(n) = skip("<?", "?>").or_else(|| skip("<!--", "-->")).or_else(|| skip("<![CDATA[", "]]>")) {
            i += n?;
            continue;
        }
        if rest.starts_with("<!") {
            if root.is_some() {
                return Err(format!("declaration inside the document at byte {i}"));
            }
            i += rest.find('>').ok_or("unterminated declaration")? + 1;
            continue;
        }
        if let Some(close) = rest.strip_prefix("</") {
            let end = close.find('>').ok_or_else(|| format!("unterminated end tag at byte {i}"))?;
            let name = close[..end].trim_end();
            match stack.pop() {
                Some(open) if open == name => {}
                other => return Err(format!("</{name}> at byte {i} closes {other:?}")),
            }
            i += 2 + end + 1;
            continue;
        }
        // A start tag.
        let body = &rest[1..];
        let name_len = body.find(|c: char| !is_name(c)).unwrap_or(body.len());
        let name = &body[..name_len];
        if name.is_empty() {
            return Err(format!("a '<' that starts no tag at byte {i}"));
        }
        if stack.is_empty() {
            if root.is_some() {
                return Err(format!("a second root element <{name}> at byte {i}"));
            }
            root = Some(name.to_string());
        }
        let mut j = 1 + name_len;
        let mut attrs: Vec<&str> = Vec::new();
        loop {
            let tail = &rest[j..];
            let trimmed = tail.trim_start();
            let ws = tail.len() - trimmed.len();
            j += ws;
            if trimmed.starts_with("/>") {
                j += 2;
                break;
            }
            if trimmed.starts_with('>') {
                j += 1;
                stack.push(name);
                break;
            }
            if ws == 0 {
                return Err(format!("<{name}> at byte {i}: attributes need white space before them"));
            }
            let attr_len = trimmed.find(|c: char| !is_name(c)).unwrap_or(trimmed.len());
            let attr = &trimmed[..attr_len];
            if attr.is_empty() {
                return Err(format!("<{name}> at byte {i}: a malformed attribute"));
            }
            if attrs.contains(&attr) {
                return Err(format!("<{name}> at byte {i}: attribute {attr} twice"));
            }
            attrs.push(attr);
            let after = trimmed[attr_len..].trim_start();
            let after = after.strip_prefix('=').ok_or_else(|| format!("<{name}> {attr}: no '='"))?.trim_start();
            let quote = after
                .chars()
                .next()
                .filter(|q| *q == '"' || *q == '\'')
                .ok_or_else(|| format!("<{name}> {attr}: unquoted"))?;
            let value_len = after[1..].find(quote).ok_or_else(|| format!("<{name}> {attr}: unterminated value"))?;
            let value = &after[1..1 + value_len];
            if value.contains('<') {
                return Err(format!("<{name}> {attr}: '<' in a value"));
            }
            check_entities(value, i)?;
            j += trimmed.len() - after.len() + 1 + value_len + 1;
        }
        i += j;
    }
    if let Some(open) = stack.last() {
        return Err(format!("<{open}> is never closed"));
    }
    root.ok_or_else(|| "no root element".to_string())
}
