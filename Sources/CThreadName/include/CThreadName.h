#ifndef CTHREADNAME_H
#define CTHREADNAME_H

/// Names the calling thread (what `top -H`, `perf` and /proc/<pid>/task/<tid>/comm show),
/// cut to the 15 bytes Linux keeps. Glibc declares pthread_setname_np only under _GNU_SOURCE,
/// which Swift's Glibc module does not define, hence this shim (CNIOLinux does the same).
/// Returns 0, or the error pthread_setname_np reported.
int cthreadname_set_current(const char *name);

#endif /* CTHREADNAME_H */
