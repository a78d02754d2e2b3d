//! `sim completions SHELL` and `sim man [SUBCOMMAND...]`: the shell completion script
//! (clap_complete) and the man pages (clap_mangen), all generated from the same clap definition
//! as `sim --help`, so they cannot drift from it.

use std::path::Path;

use clap_complete::Shell;

use locksim_campaign::stdout::print_out;
use locksim_campaign::{Class, CommandError};

/// Prints the completion script for `shell`.
pub fn completions(mut cmd: clap::Command, shell: Shell) -> Result<Class, CommandError> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "sim", &mut out);
    print_out(&String::from_utf8_lossy(&out));
    Ok(Class::Passed)
}

/// `cmd` as the man pages see it: built (so that each subcommand is named `sim-run`, the name
/// the SUBCOMMANDS section's `sim-run(1)` refers to) and without clap's `help` subcommand,
/// which has no page of its own.
fn built(cmd: clap::Command) -> clap::Command {
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// The subcommands a page exists for (the hidden ones, started by `sim live`, have none).
fn visible(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands().filter(|s| !s.is_hide_set())
}

/// Prints the man page (roff) of `sim`, or of the subcommand `path` names (`["run"]` is
/// `sim-run(1)`, `["bench", "engine"]` is `sim-bench-engine(1)`). An unknown name is bad input:
/// exit 2 with the valid ones.
pub fn man(cmd: clap::Command, path: &[String]) -> Result<Class, CommandError> {
    let mut page = built(cmd);
    for name in path {
        let Some(sub) = visible(&page).find(|s| s.get_name() == name).cloned() else {
            let valid: Vec<&str> = visible(&page).map(|s| s.get_name()).collect();
            let whose = page.get_display_name().unwrap_or(page.get_name()).to_string();
            return Err(CommandError::bad_input(if valid.is_empty() {
                format!("sim man: `{whose}` has no subcommands, so no page for `{name}`")
            } else {
                format!("sim man: no subcommand `{name}` of `{whose}`; expected one of: {}", valid.join(", "))
            }));
        };
        page = sub;
    }
    let mut out = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut out)
        .map_err(|e| CommandError::bad_input(format!("cannot render the man page: {e}")))?;
    print_out(&String::from_utf8_lossy(&out));
    Ok(Class::Passed)
}

/// Writes every page (`sim.1`, `sim-run.1`, …, `sim-bench-engine.1`) into `dir`, creating it, and
/// prints the files written.
pub fn man_to_dir(cmd: clap::Command, dir: &Path) -> Result<Class, CommandError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CommandError::bad_input(format!("cannot create the man page directory {}: {e}", dir.display())))?;
    clap_mangen::generate_to(built(cmd), dir)
        .map_err(|e| CommandError::bad_input(format!("cannot write the man pages to {}: {e}", dir.display())))?;
    let mut written: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| CommandError::bad_input(format!("cannot list {}: {e}", dir.display())))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n == "sim.1" || n.starts_with("sim-") && n.ends_with(".1"))
        .collect();
    written.sort();
    print_out(&format!("{} man pages in {}: {}\n", written.len(), dir.display(), written.join(", ")));
    Ok(Class::Passed)
}
