#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>

#include "CThreadName.h"

int cthreadname_set_current(const char *name) {
    char cut[16];
    strncpy(cut, name, sizeof(cut) - 1);
    cut[sizeof(cut) - 1] = '\0';
    return pthread_setname_np(pthread_self(), cut);
}
