//! Model parameters: each value read against its [`ParamSpec`], defaults parsed from the schema's
//! TOML literal text by the same reader as user input (so a default can never mean something a
//! user could not write), and the model's own cross-parameter checks mapped back to the key that
//! set the value.

use std::panic::{catch_unwind, AssertUnwindSafe};

use toml_edit::ImDocument;

use crate::dist::Dist;
use crate::model::{DynModel, ParamKind, ParamSpec, ParamValue, Params};
use crate::scenario::values::{check_dist, check_time_dist, dist, int_in, number_in};
use crate::scenario::walk::{quote, Node, Res, Source, Tab};
use crate::setup::WorkloadSpec;
use crate::time::MAX_TIME_MS;

/// One parameter value, typed and range-checked by its spec. A constant given for a
/// distribution parameter is stored as [`ParamValue::Num`] (what `Params::dist` reads as a
/// constant), so a file that writes the default's value compares equal to the default.
pub(crate) fn value(src: &Source, spec: &ParamSpec, node: &Node) -> Res<ParamValue> {
    let kind = bounded_kind(spec);
    Ok(match &kind {
        ParamKind::Number { min, max } => ParamValue::Num(number_in(src, node, *min, *max)?),
        ParamKind::Dist { min, max } => {
            let d = dist(src, node)?;
            check_dist(src, node, &d, *min, *max, &kind.describe())?;
            if is_time(spec) {
                check_time_dist(src, node, &d, *min, &kind.describe())?;
            }
            match d {
                Dist::Const(v) => ParamValue::Num(v),
                d => ParamValue::Dist(d),
            }
        }
        ParamKind::Int { min, max } => ParamValue::Int(int_in(src, node, *min, *max)?),
        ParamKind::Bool => ParamValue::Bool(node.as_bool(src)?),
        ParamKind::Choice(choices) => {
            let expected = kind.describe();
            let s = node.as_str(src, &expected)?;
            if !choices.contains(&s) {
                return Err(node.err(src, format!("expected {expected}, found {}", quote(s))));
            }
            ParamValue::Str(s.to_string())
        }
    })
}

/// Whether a parameter is a time in milliseconds (by the naming rule: units last, `ttl_ms`).
fn is_time(spec: &ParamSpec) -> bool {
    spec.name.ends_with("_ms")
}

/// The parameter's kind, a time's range capped at [`MAX_TIME_MS`] as every time in a scenario
/// is (a model whose schema allows more still gets no time that overflows nanoseconds).
fn bounded_kind(spec: &ParamSpec) -> ParamKind {
    match spec.kind {
        ParamKind::Number { min, max } if is_time(spec) => ParamKind::Number { min, max: max.min(MAX_TIME_MS) },
        ParamKind::Dist { min, max } if is_time(spec) => ParamKind::Dist { min, max: max.min(MAX_TIME_MS) },
        ref other => other.clone(),
    }
}

/// Every parameter at its default. An invalid default is the model's bug; the message says so
/// (the caller places it where the model is named).
pub(crate) fn defaults(model: &'static dyn DynModel) -> Result<Params, String> {
    let mut params = Params::default();
    for spec in model.params() {
        let text = format!("v = {}", spec.default);
        let src = Source::new("<default>", &text);
        let bad = |why: String| {
            format!(
                "model `{}` has an invalid default for parameter `{}` ({}): {why}",
                model.name(),
                spec.name,
                spec.default
            )
        };
        let doc = ImDocument::parse(text.as_str()).map_err(|e| bad(e.message().trim().to_string()))?;
        let root = Node::root(doc.as_table()).as_table(&src, "a table").map_err(|e| bad(e.message))?;
        let node = root.get("v").ok_or_else(|| bad("no value".into()))?;
        let v = value(&src, spec, node).map_err(|e| bad(e.message))?;
        params.values.insert(spec.name.to_string(), v);
    }
    Ok(params)
}

fn names(model: &'static dyn DynModel) -> String {
    let n: Vec<&str> = model.params().iter().map(|p| p.name).collect();
    if n.is_empty() {
        "(none)".to_string()
    } else {
        n.join(", ")
    }
}

/// Applies the overrides in `tab` (skipping `skip`, the keys the caller reads itself). An unknown
/// key lists the model's parameters, and says which other models have it if any do (the usual
/// mistake is a parameter of the wrong model).
pub(crate) fn apply(
    src: &Source,
    model: &'static dyn DynModel,
    all: &[&'static dyn DynModel],
    params: &mut Params,
    tab: &Tab,
    skip: &[&str],
) -> Res<()> {
    for (key, node) in tab.entries() {
        if skip.contains(&key.as_str()) {
            continue;
        }
        let Some(spec) = model.params().iter().find(|p| p.name == key) else {
            let owners: Vec<&str> =
                all.iter().filter(|m| m.params().iter().any(|p| p.name == key)).map(|m| m.name()).collect();
            let hint = if owners.is_empty() {
                String::new()
            } else {
                format!(" (`{key}` is a parameter of {})", owners.join(", "))
            };
            let also = if skip.is_empty() { String::new() } else { format!(" (besides {})", skip.join(", ")) };
            return Err(node.key_err(
                src,
                format!(
                    "unknown parameter `{key}` for model `{}`{hint}; its parameters{also} are: {}",
                    model.name(),
                    names(model)
                ),
            ));
        };
        params.set_explicit(key, value(src, spec, node)?);
    }
    Ok(())
}

/// Text of a caught panic.
pub(crate) fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}

/// The model's own checks. The first problem becomes the error, at the key that set the value
/// when the file set it, else at `fallback` (where the model is named); its key path is
/// `prefix.param` either way.
pub(crate) fn validate(
    src: &Source,
    model: &'static dyn DynModel,
    params: &Params,
    facts: &WorkloadSpec,
    tab: Option<&Tab>,
    fallback: &Node,
    prefix: &str,
) -> Res<()> {
    // A model's validate is code we do not own; a panic in it must not take the parser down.
    let problems = catch_unwind(AssertUnwindSafe(|| model.validate(params, facts))).map_err(|p| {
        fallback.err(src, format!("model `{}` failed while checking its parameters: {}", model.name(), panic_text(&*p)))
    })?;
    match problems.first() {
        None => Ok(()),
        Some(p) => {
            let at = tab.and_then(|t| t.get(&p.key)).map(|n| n.at.clone()).unwrap_or_else(|| fallback.at.clone());
            Err(src.error(&at, &format!("{prefix}.{}", p.key), p.message.clone()))
        }
    }
}
