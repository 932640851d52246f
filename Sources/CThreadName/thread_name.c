#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "CThreadName.h"

int cthreadname_set_current(const char *name) {
    char cut[16];
    strncpy(cut, name, sizeof(cut) - 1);
    cut[sizeof(cut) - 1] = '\0';
    return pthread_setname_np(pthread_self(), cut);
}

int cthreadname_affinity_cpu_count(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return -1;
    }
    return CPU_COUNT(&set);
}
