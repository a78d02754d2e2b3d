//! `sim completions SHELL` and `sim man`: the shell completion script (clap_complete) and the man
//! page (clap_mangen), both generated from the same clap definition as `sim --help`, so they
//! cannot drift from it.

use clap_complete::Shell;

use crate::exit::{CliError, OK};
use crate::runner::print_out;

/// Prints the completion script for `shell`.
pub fn completions(mut cmd: clap::Command, shell: Shell) -> Result<i32, CliError> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "sim", &mut out);
    print_out(&String::from_utf8_lossy(&out));
    Ok(OK)
}

/// Prints the man page in roff.
pub fn man(cmd: clap::Command) -> Result<i32, CliError> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut out)
        .map_err(|e| CliError::bad_input(format!("cannot render the man page: {e}")))?;
    print_out(&String::from_utf8_lossy(&out));
    Ok(OK)
}
