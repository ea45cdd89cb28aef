/* A last line of defence for the tools: HDF5 1.10 can crash, or loop, on malformed metadata. A
 * crash while libgolden is inside the HDF5 library, or one HDF5 section running longer than
 * the timeout (default 120 s; tools pass GOLDEN_HDF5_TIMEOUT through the setter), becomes one error line and exit status 2 after
 * the temporary outputs being written are removed; a crash anywhere else stays a crash. */
#ifndef GOLDEN_GUARD_H
#define GOLDEN_GUARD_H

/* Install SIGSEGV/SIGBUS handlers and the watchdog thread for tool `tool` (a string that lives
 * as long as the process). */
void lg_guard_install(const char *tool);

/* How long one HDF5 section may run before the watchdog ends the process (seconds; values
 * <= 0 keep the default of 120). Tools call it with the user's GOLDEN_HDF5_TIMEOUT: the
 * library reads no environment. Any time, before or after lg_guard_install. */
void lg_guard_set_hdf5_timeout(long long seconds);

/* libgolden bookkeeping (also usable by callers writing their own temporary files):
 * entering/leaving the HDF5 library, the file it is working on, temporary outputs.
 * enter/leave are called with the HDF5 lock held (golden_hdf5_lock): the "inside HDF5" mark
 * is the calling thread's, so a crash in any other thread stays a crash. */
void lg_guard_enter_hdf5(const char *file);
void lg_guard_leave_hdf5(void);
void lg_guard_add_temp(const char *path);
void lg_guard_remove_temp(const char *path);
/* Unlink every registered temporary output now. Async-signal-safe: the tools call it from
 * their SIGINT/SIGTERM/SIGHUP handler before dying of the signal. */
void lg_guard_unlink_temps(void);

#endif
