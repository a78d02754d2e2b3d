//! The binary's one path to stdout (see [`locksim_campaign::stdout`]), for what it prints
//! itself: completions and the man page.

pub use locksim_campaign::stdout::print_out;
