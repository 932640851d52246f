#ifndef CTHREADNAME_H
#define CTHREADNAME_H

/// The GNU extensions of threads the Workers need. Glibc declares them only under _GNU_SOURCE,
/// which Swift's Glibc module does not define, hence this shim (CNIOLinux does the same).

/// Names the calling thread (what `top -H`, `perf` and /proc/<pid>/task/<tid>/comm show),
/// cut to the 15 bytes Linux keeps. Returns 0, or the error pthread_setname_np reported.
int cthreadname_set_current(const char *name);

/// How many CPUs the process may run on: its affinity mask (`taskset`, a Kubernetes static
/// CPU-manager cpuset, `docker --cpuset-cpus`), as sched_getaffinity reports it for the calling
/// thread. Returns -1 when it cannot be read (more than 1024 CPUs, or no such call).
int cthreadname_affinity_cpu_count(void);

#endif /* CTHREADNAME_H */
