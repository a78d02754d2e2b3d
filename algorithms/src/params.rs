//! Reading a model's parameters by name into its typed configuration, every name checked against
//! the model's schema. A key the model's code reads that its schema does not declare (a typo in
//! the code), or a value of another type than the read expects, becomes a [`ParamProblem`]
//! naming the key and listing the valid keys, which the scenario parser reports at the model's
//! table with exit code 2; it is never a panic. A model reads every key once, in its config's
//! `read`, and its `validate` returns the problems the read found first.

use std::cell::RefCell;

use locksim_simulator::dist::Dist;
use locksim_simulator::model::{ParamProblem, ParamSpec, ParamValue, Params};

/// Reads one model's parameters, recording a problem instead of panicking. A read that fails
/// returns a neutral value (0, `false`, `""`), never used: the problem rejects the row.
pub struct ParamReader<'a> {
    model: &'static str,
    schema: &'static [ParamSpec],
    params: &'a Params,
    problems: RefCell<Vec<ParamProblem>>,
}

impl<'a> ParamReader<'a> {
    /// A reader of `params` for `model`, whose keys are `schema`'s.
    pub fn new(model: &'static str, schema: &'static [ParamSpec], params: &'a Params) -> Self {
        ParamReader { model, schema, params, problems: RefCell::new(Vec::new()) }
    }

    fn problem(&self, key: &str, message: String) {
        let mut problems = self.problems.borrow_mut();
        if !problems.iter().any(|p| p.key == key) {
            problems.push(ParamProblem { key: key.to_string(), message });
        }
    }

    /// The value of a key the schema declares; a problem otherwise.
    fn value(&self, key: &str) -> Option<&'a ParamValue> {
        let Some(spec) = self.schema.iter().find(|s| s.name == key) else {
            let valid: Vec<&str> = self.schema.iter().map(|s| s.name).collect();
            self.problem(
                key,
                format!(
                    "model `{}` reads a parameter `{key}` its schema does not have (a bug in the model); valid keys: {}",
                    self.model,
                    valid.join(", ")
                ),
            );
            return None;
        };
        let value = self.params.values.get(key);
        if value.is_none() {
            self.problem(key, format!("no value for `{key}`: expected {}", spec.kind.describe()));
        }
        value
    }

    fn wrong_type(&self, key: &str, read_as: &str, found: &ParamValue) {
        let expected = self.schema.iter().find(|s| s.name == key).map(|s| s.kind.describe()).unwrap_or_default();
        self.problem(key, format!("`{key}` is read as {read_as} but holds {found:?} (the schema says {expected})"));
    }

    /// A plain number (a `Number`, an `Int` widened, or a constant `Dist`).
    pub fn f64(&self, key: &str) -> f64 {
        match self.value(key) {
            Some(ParamValue::Num(v)) | Some(ParamValue::Dist(Dist::Const(v))) => *v,
            Some(ParamValue::Int(v)) => *v as f64,
            Some(other) => {
                self.wrong_type(key, "a number", other);
                0.0
            }
            None => 0.0,
        }
    }

    /// A distribution (a number as a constant one).
    pub fn dist(&self, key: &str) -> Dist {
        match self.value(key) {
            Some(ParamValue::Dist(d)) => d.clone(),
            Some(ParamValue::Num(v)) => Dist::Const(*v),
            Some(ParamValue::Int(v)) => Dist::Const(*v as f64),
            Some(other) => {
                self.wrong_type(key, "a distribution", other);
                Dist::Const(0.0)
            }
            None => Dist::Const(0.0),
        }
    }

    /// An integer.
    pub fn int(&self, key: &str) -> i64 {
        match self.value(key) {
            Some(ParamValue::Int(v)) => *v,
            Some(other) => {
                self.wrong_type(key, "an integer", other);
                0
            }
            None => 0,
        }
    }

    /// A boolean.
    pub fn bool(&self, key: &str) -> bool {
        match self.value(key) {
            Some(ParamValue::Bool(v)) => *v,
            Some(other) => {
                self.wrong_type(key, "true or false", other);
                false
            }
            None => false,
        }
    }

    /// A choice: the string chosen.
    pub fn str(&self, key: &str) -> &'a str {
        match self.value(key) {
            Some(ParamValue::Str(v)) => v,
            Some(other) => {
                self.wrong_type(key, "a choice", other);
                ""
            }
            None => "",
        }
    }

    /// What the reads found wrong, in the order found (one per key).
    pub fn problems(self) -> Vec<ParamProblem> {
        self.problems.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locksim_simulator::model::ParamKind;

    const SCHEMA: &[ParamSpec] = &[
        ParamSpec { name: "ttl_ms", kind: ParamKind::Number { min: 0.0, max: 1e9 }, default: "10", meaning: "" },
        ParamSpec { name: "mode", kind: ParamKind::Choice(&["a", "b"]), default: "\"a\"", meaning: "" },
    ];

    fn params() -> Params {
        let mut p = Params::default();
        p.values.insert("ttl_ms".into(), ParamValue::Num(10.0));
        p.values.insert("mode".into(), ParamValue::Str("b".into()));
        p
    }

    #[test]
    fn declared_keys_read_their_values_without_problems() {
        let p = params();
        let r = ParamReader::new("toy", SCHEMA, &p);
        assert_eq!((r.f64("ttl_ms"), r.str("mode")), (10.0, "b"));
        assert!(r.problems().is_empty());
    }

    #[test]
    fn an_undeclared_key_is_a_problem_listing_the_valid_keys_not_a_panic() {
        let p = params();
        let r = ParamReader::new("toy", SCHEMA, &p);
        assert_eq!(r.f64("ttl"), 0.0);
        let _ = r.f64("ttl");
        let problems = r.problems();
        assert_eq!(problems.len(), 1, "one problem per key: {problems:?}");
        assert_eq!(problems[0].key, "ttl");
        assert!(problems[0].message.contains("valid keys: ttl_ms, mode"), "{}", problems[0].message);
    }

    /// The parameters of one `model` row as the parser fills them (every schema default).
    fn row_params(model: &str) -> Params {
        let text = format!("name = \"p\"\nduration_ms = 1000\nalgorithms = [\"{model}\"]\n");
        let sc = locksim_simulator::scenario::parse_str("p.toml", &text, &crate::registry())
            .unwrap_or_else(|e| panic!("{e}"));
        sc.runs[0].params.clone()
    }

    /// Each model that reads through the reader: its validate. A parameter the model reads that
    /// the row lacks (what a key misspelt in the model's code looks like from the reader's side)
    /// comes back as a problem at that key; before the reader, the model's read panicked.
    #[test]
    fn a_key_the_model_reads_but_the_row_lacks_is_a_problem_not_a_panic() {
        use locksim_simulator::setup::WorkloadSpec;
        for model in ["redis", "redlock", "consul", "hazelcast", "dynamodb"] {
            let dyn_model = crate::registry().into_iter().find(|m| m.name() == model).expect("registered");
            let mut params = row_params(model);
            assert_eq!(
                dyn_model.validate(&params, &WorkloadSpec::default()),
                Vec::new(),
                "{model}: the defaults are valid"
            );
            params.values.remove("service_ms");
            let problems = dyn_model.validate(&params, &WorkloadSpec::default());
            assert_eq!(problems.first().map(|p| p.key.as_str()), Some("service_ms"), "{model}: {problems:?}");
        }
    }

    #[test]
    fn a_read_of_the_wrong_type_is_a_problem_naming_the_schema_type() {
        let p = params();
        let r = ParamReader::new("toy", SCHEMA, &p);
        assert!(!r.bool("mode"));
        let problems = r.problems();
        assert_eq!(problems[0].key, "mode");
        assert!(problems[0].message.contains("one of \"a\", \"b\""), "{}", problems[0].message);
    }
}
