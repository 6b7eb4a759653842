//! The allocator's settings, made once at start-up (process-wide, so here and not in the
//! library).

/// One malloc arena for the whole process. glibc gives each thread that allocates an arena of
/// its own; a snapshot's workers allocate the compressed objects the writer thread frees, and the
/// fragments the extra arenas kept were ~25 MiB of a cold snapshot's ~145 MiB peak on the Linux
/// tree (117 MiB with one arena, the same CPU time: the threads are few and allocate little
/// besides those buffers).
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes malloc's parameters; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}
