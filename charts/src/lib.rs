//! locksim's charts (work in progress: nothing is drawn yet).
