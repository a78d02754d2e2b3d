//! The hidden `sim live-client SPEC` and `sim live-exec`: a client process and a server of a live
//! run (started by `sim live` and `sim compare` only).

use locksim_campaign::{Class, CommandError};

/// `sim live-exec -- PROGRAM ARGS…`: becomes PROGRAM, set to die with the `sim` that started it.
/// Returns only when that fails.
pub fn live_exec(command: &[std::ffi::OsString]) -> Result<Class, CommandError> {
    Err(CommandError::Failed(locksim_live::supervisor::exec_dying_with_parent(command)))
}

/// `sim live-client SPEC`: one client process of a live run.
pub fn live_client(spec: &str) -> Result<Class, CommandError> {
    locksim_live::client_main(spec).map_err(CommandError::Failed)?;
    Ok(Class::Passed)
}
