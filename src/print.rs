//! `outln!`: `println!` through [`crate::runner::print_out`], the one path to standard output, so
//! a reader that goes away (`sim list | head -1`) ends the command quietly (exit 0) instead of a
//! panic. `clippy::print_stdout` is denied in this crate to keep it the one path.

/// Prints a line to standard output; a closed pipe ends the process quietly.
macro_rules! outln {
    () => {
        $crate::runner::print_out("\n")
    };
    ($($arg:tt)*) => {
        $crate::runner::print_out(&format!("{}\n", format_args!($($arg)*)))
    };
}
