//! The worker pool a campaign runs its seeds on. Results never depend on its size: seeds are
//! folded in seed order whatever thread ran them.

/// The most worker threads `--threads` accepts. Each thread holds a seed's world and history at
/// once, and starting a hundred thousand threads aborted the process (one stack each); 1024 is
/// far beyond the cores of any machine this runs on, where more threads than cores only add
/// memory.
pub const MAX_THREADS: usize = 1024;

/// A pool of `threads` workers (default: every core); `--threads 0` and more than
/// [`MAX_THREADS`] are refused with the message to show.
pub fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, String> {
    match threads {
        Some(0) => return Err("--threads 0: expected at least 1 thread (default: all cores)".to_string()),
        Some(n) if n > MAX_THREADS => {
            return Err(format!("--threads {n}: expected at most {MAX_THREADS} threads (default: all cores)"));
        }
        _ => {}
    }
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| format!("cannot start {threads} threads: {e}"))
}
