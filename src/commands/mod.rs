//! What the binary does itself rather than call a command's crate for: `sim list`, the shell
//! completions and man pages (both generated from the binary's own clap definition), and the
//! hidden processes of a live run.

mod list;
mod live;
mod shell;

pub use list::list;
pub use live::{live_client, live_exec};
pub use shell::{completions, man, man_to_dir};
