//! The process's heap: how glibc's allocator serves a long-running process, and giving
//! freed memory back to the system. Only glibc on Linux has these knobs; elsewhere both
//! functions do nothing.
//!
//! Why it matters (BENCHMARKS.md): the desktop app loads the marketplace (50,000 registry rows
//! and their index, tens of MiB of short-lived allocations) and syncs registries on worker
//! threads. glibc gives each thread that contends for the heap an arena of its own, and what an
//! arena freed stays with the process: with 50,000 entries the app's core process kept 23 MiB
//! more after a sync with its default arenas than with one, and 7 MiB more after loading with
//! glibc's moving threshold for mapping large blocks than with a fixed one.

/// Set the allocator up for a process that runs for hours: one arena for all threads, and every
/// allocation of 128 KiB or more mapped on its own, so that it goes back to the system when
/// freed. (By default glibc raises that threshold as large blocks are freed, and later large
/// blocks land in the heap between small ones, where freeing them returns nothing.) Call first
/// thing in `main`, before any thread exists; meant for the desktop app, whose threads mostly
/// wait (the command line has no need). Costs some lock contention when threads allocate at
/// the same moment, and a system call per large allocation.
pub fn tune_for_a_long_running_process() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's parameters; called before other threads exist.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// Return the heap's free memory to the system. glibc keeps what small allocations freed for
/// the process; call it after a burst of allocations a long-running process no longer needs.
/// Takes about a millisecond.
pub fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only rearranges the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}
