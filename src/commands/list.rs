//! `sim list [MODEL]`: every model with its parameters, defaults and meaning.

use locksim_campaign::{Class, CommandError};
use locksim_simulator::model::DynModel;

/// Prints every model of `models` (or only the one named `only`) with its parameters.
pub fn list(models: &[&'static dyn DynModel], only: Option<&str>) -> Result<Class, CommandError> {
    let names: Vec<&str> = models.iter().map(|m| m.name()).collect();
    if let Some(name) = only {
        if !names.contains(&name) {
            return Err(CommandError::bad_input(format!("unknown model `{name}`; valid models: {}", names.join(", "))));
        }
    }
    for m in models.iter().filter(|m| only.is_none_or(|n| n == m.name())) {
        outln!("{}: {}", m.name(), m.summary());
        let width = m.params().iter().map(|p| p.name.len()).max().unwrap_or(0);
        let dwidth = m.params().iter().map(|p| p.default.len()).max().unwrap_or(0);
        for p in m.params() {
            outln!("  {:<width$}  {:<dwidth$}  {} ({})", p.name, p.default, p.meaning, p.kind.describe());
        }
        outln!();
    }
    if models.is_empty() {
        outln!("no models are built into this binary");
    }
    Ok(Class::Passed)
}
