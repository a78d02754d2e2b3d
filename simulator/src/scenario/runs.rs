//! The rows of a scenario: `algorithms` (each with its defaults, overridden by `[models.NAME]`)
//! and `[[variants]]`.
//!
//! A variant starts from its model's schema defaults, NOT from `[models.NAME]`: a variant is a
//! self-contained configuration, so reading its table alone tells what it runs, and adding or
//! removing a `[models.NAME]` block never changes a variant's row.

use crate::model::{DynModel, ModelRef};
use crate::scenario::file_names;
use crate::scenario::params;
use crate::scenario::types::RunSpec;
use crate::scenario::values::name;
use crate::scenario::walk::{quote, Node, Res, Source, Tab};
use crate::setup::WorkloadSpec;

/// A row with what the later checks need: its model, and whether it is an algorithm or a variant
/// (for messages).
pub(crate) struct Run {
    pub spec: RunSpec,
    pub model: &'static dyn DynModel,
    pub is_variant: bool,
}

impl Run {
    /// "algorithm redis" / "variant redis-wait".
    pub fn describe(&self) -> String {
        let what = if self.is_variant { "variant" } else { "algorithm" };
        format!("{what} {}", self.spec.label)
    }
}

fn known(models: &[&'static dyn DynModel]) -> String {
    models.iter().map(|m| m.name()).collect::<Vec<_>>().join(", ")
}

fn find(models: &[&'static dyn DynModel], name: &str) -> Option<&'static dyn DynModel> {
    models.iter().copied().find(|m| m.name() == name)
}

/// Reads `algorithms`, `models` and `variants` into rows, in file order (algorithms first).
pub(crate) fn runs(src: &Source, root: &Tab, models: &[&'static dyn DynModel], facts: &WorkloadSpec) -> Res<Vec<Run>> {
    // `algorithms`: the model names, each with the node that named it (for error positions).
    let mut algorithms: Vec<(&'static dyn DynModel, Node)> = Vec::new();
    if let Some(node) = root.get("algorithms") {
        for item in node.as_array(src, "an array of model names")? {
            let text = item.as_str(src, &format!("a model name (one of {})", known(models)))?;
            let model = find(models, text).ok_or_else(|| {
                item.err(src, format!("unknown model {}; known models: {}", quote(text), known(models)))
            })?;
            if algorithms.iter().any(|(m, _)| m.name() == text) {
                return Err(item.err(src, format!("model `{text}` is listed twice in `algorithms`")));
            }
            algorithms.push((model, item));
        }
    }

    // `[models.NAME]`: overrides for listed algorithms only.
    let mut overrides: Vec<(String, Tab)> = Vec::new();
    if let Some(node) = root.get("models") {
        let tab = node.as_table(src, "a table of [models.NAME] parameter tables")?;
        for (key, n) in tab.entries() {
            let Some(model) = find(models, key) else {
                return Err(n.key_err(
                    src,
                    format!("unknown model `{key}` in [models.{key}]; known models: {}", known(models)),
                ));
            };
            if !algorithms.iter().any(|(m, _)| m.name() == key) {
                let listed: Vec<&str> = algorithms.iter().map(|(m, _)| m.name()).collect();
                let listed = if listed.is_empty() { "none".to_string() } else { listed.join(", ") };
                return Err(n.key_err(
                    src,
                    format!(
                        "[models.{key}] overrides model `{key}`, which `algorithms` does not list \
                         (listed: {listed}); add it to `algorithms`, or use a [[variants]] table"
                    ),
                ));
            }
            let t = n.as_table(src, &format!("a table of model {}'s parameters", model.name()))?;
            overrides.push((key.clone(), t));
        }
    }

    let mut runs = Vec::new();
    for (model, named_at) in &algorithms {
        let table = overrides.iter().find(|(k, _)| k == model.name()).map(|(_, t)| t);
        let mut params = params::defaults(*model).map_err(|m| named_at.err(src, m))?;
        if let Some(t) = table {
            params::apply(src, *model, models, &mut params, t, &[])?;
        }
        let prefix = format!("models.{}", model.name());
        let fallback = table.map(|t| &t.node).unwrap_or(named_at);
        params::validate(src, *model, &params, facts, table, fallback, &prefix)?;
        let spec = RunSpec { label: model.name().to_string(), model: ModelRef(*model), params };
        runs.push(Run { spec, model: *model, is_variant: false });
    }

    if let Some(node) = root.get("variants") {
        let mut first_at: Vec<(String, usize)> = Vec::new();
        // Every label's file-name part, with the label and its line: outputs are named after
        // labels, so two labels with one file name would overwrite each other's files.
        let mut label_files: Vec<(String, String, usize)> = algorithms
            .iter()
            .map(|(m, at)| (file_names::collision_key(m.name()), m.name().to_string(), src.line_col(at.at.start).0))
            .collect();
        for item in node.as_array(src, "an array of tables ([[variants]])")? {
            let tab = item.as_table(src, "a table with `name`, `model` and that model's parameters")?;
            let name_node = tab.required(src, "name", "a label for the variant's row")?;
            let label = name(src, name_node)?;
            if algorithms.iter().any(|(m, _)| m.name() == label) {
                return Err(name_node.err(
                    src,
                    format!(
                        "variant name `{label}` is already the label of an algorithm; give the variant its own name"
                    ),
                ));
            }
            if let Some((_, line)) = first_at.iter().find(|(l, _)| l == label) {
                return Err(name_node.err(
                    src,
                    format!(
                        "variant name `{label}` is used twice (first on line {line}); each variant needs a unique name"
                    ),
                ));
            }
            let key = file_names::collision_key(label);
            if let Some((_, other, line)) = label_files.iter().find(|(k, _, _)| *k == key) {
                return Err(name_node.err(
                    src,
                    format!(
                        "variant name `{label}` gives the same file names as `{other}` (line {line}): outputs are \
                         named after labels (explain-LABEL.svg, LABEL-KIND-seedN.toml), with every character but \
                         ASCII letters, digits, `-` and `_` replaced by `_`, and case ignored; give the variant a \
                         name that differs in those characters"
                    ),
                ));
            }
            label_files.push((key, label.to_string(), src.line_col(name_node.at.start).0));
            first_at.push((label.to_string(), src.line_col(name_node.at.start).0));
            let model_node = tab.required(src, "model", &format!("a model name (one of {})", known(models)))?;
            let model_name = model_node.as_str(src, &format!("a model name (one of {})", known(models)))?;
            let model = find(models, model_name).ok_or_else(|| {
                model_node.err(src, format!("unknown model {}; known models: {}", quote(model_name), known(models)))
            })?;
            let mut params = params::defaults(model).map_err(|m| model_node.err(src, m))?;
            params::apply(src, model, models, &mut params, &tab, &["name", "model"])?;
            params::validate(src, model, &params, facts, Some(&tab), model_node, &item.path)?;
            let spec = RunSpec { label: label.to_string(), model: ModelRef(model), params };
            runs.push(Run { spec, model, is_variant: true });
        }
    }

    if runs.is_empty() {
        let at = root.get("algorithms").unwrap_or(&root.node);
        return Err(src.error(
            &at.at,
            "algorithms",
            format!(
                "nothing to run: expected `algorithms` to name at least one model ({}), or a [[variants]] table",
                known(models)
            ),
        ));
    }
    Ok(runs)
}
