//! The model reference (`docs/models.md`) lists every parameter `sim list` shows, with its
//! default, in the model's own section: the docs cannot fall behind the code.

use std::fs;

#[test]
fn every_model_parameter_is_in_its_section_of_docs_models_md_with_its_default() {
    let text = fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/models.md")).unwrap();
    let mut missing = Vec::new();
    for model in locksim_algorithms::registry() {
        let heading = format!("\n## {}\n", model.name());
        let Some(start) = text.find(&heading) else {
            missing.push(format!("no `## {}` section", model.name()));
            continue;
        };
        let body = &text[start + heading.len()..];
        let section = &body[..body.find("\n## ").unwrap_or(body.len())];
        for spec in model.params() {
            // Other tables (Redlock's presets, Redis's persistence per crash kind) may name a
            // parameter first: the parameter table's row is one that gives the default.
            let rows: Vec<&str> = section.lines().filter(|l| l.starts_with(&format!("| `{}` |", spec.name))).collect();
            let default = format!("`{}`", spec.default);
            if rows.is_empty() {
                missing.push(format!("{}: `{}` has no row", model.name(), spec.name));
            } else if !rows.iter().any(|r| r.contains(&default)) {
                missing.push(format!("{}: no row of `{}` gives the default {default}", model.name(), spec.name));
            }
        }
    }
    assert!(missing.is_empty(), "docs/models.md is behind the code:\n  {}", missing.join("\n  "));
}
