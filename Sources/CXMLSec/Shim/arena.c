/*
 * The verification arena: every libxml2 and libxmlsec1 allocation made on a thread while it
 * verifies one document comes from that thread's bump arena, and the whole arena is given back
 * at once when the document is done.
 *
 * libxml2's allocator hooks (xmlMemSetup) are process-wide, so the hooks below serve two kinds
 * of caller:
 *  - a thread inside a window (cxmlsec_arena_begin .. cxmlsec_arena_end) with a slot: bump
 *    allocation from its slot, frees of the last block popped, every other free a no-op;
 *  - everyone else (other threads, the metadata reader, key loading, test IdPs, a thread whose
 *    arena is full or that got no slot): the system allocator, exactly as without the hooks.
 * A pointer is told apart by its address alone: all slots live in one region reserved once and
 * never unmapped, so a free of an arena pointer never reaches the system allocator, whichever
 * thread or window it comes from, and never reads the pointer's memory unless it belongs to the
 * calling thread's open window.
 *
 * What must not outlive a window: nothing created inside it may be kept by anything that
 * outlives it. The verifier parses with a parser context of its own inside the window (the
 * thread's long-lived context and its dictionary are never touched there), initialises and
 * finalises its xmlsec contexts inside it, and the window's end clears the thread's last libxml2
 * error (whose strings would be arena memory). A realloc of arena memory from a closed window
 * is a use after the reset: the process aborts rather than copy bytes that may belong to the
 * next document. Under AddressSanitizer every block is poisoned when freed and at the reset; in
 * guard mode (SAMLGATE_XML_ARENA=guard) each closed window's pages are made inaccessible until
 * the slot wraps around, so a late read or write from any library faults at once.
 */
#include "cxmlsec_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum {
    ARENA_SLOTS = 64,
    ARENA_HEADER = 16,
};
/* Room for one document's tree: a 1 MiB response (the verifier's default limit) builds about
 * 10 MiB; a larger one continues on the system allocator. */
static const size_t arena_slot_size = (size_t)32 << 20;
/* What a slot keeps resident after a window that used more. */
static const size_t arena_resident = (size_t)1 << 20;

/* The allocator reads and writes its block headers, which stay poisoned for everyone else: an
 * instrumented build (make sanitize) must not check the allocator's own accesses. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_UNCHECKED __attribute__((no_sanitize("address")))
#endif
#endif
#ifndef ARENA_UNCHECKED
#define ARENA_UNCHECKED
#endif

/* AddressSanitizer's manual poisoning, present only when its runtime is linked in. */
void __asan_poison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));
void __asan_unpoison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));

static int arena_mode = CXMLSEC_ARENA_OFF;
static uint8_t *arena_region = NULL;
static uint8_t *arena_region_end = NULL;
static _Atomic uint64_t arena_slots_taken = 0;
static _Atomic uint64_t arena_overflow_count = 0;
/* How often each slot was given back by an exiting thread, for tests. */
static _Atomic uint64_t arena_slot_releases[ARENA_SLOTS];
static pthread_key_t arena_thread_key;
static size_t arena_page = 4096;

typedef struct {
    uint8_t *base;   /* this thread's slot, NULL when it has none */
    size_t start;    /* where the open window began (guard mode moves it on) */
    size_t top;      /* the next free byte */
    size_t high;     /* the furthest the open window reached */
    size_t limit;    /* usable bytes of the slot */
    int depth;       /* nested windows */
    int slot;
    int overflowed;  /* the open window sent an allocation to the system */
} arena_thread_state;

static _Thread_local arena_thread_state arena = { NULL, 0, 0, 0, 0, 0, -1, 0 };
/* Allocations this thread's arena served, for tests. */
static _Thread_local unsigned long long arena_served = 0;

static inline size_t arena_round(size_t size) {
    return (size + 15) & ~(size_t)15;
}

static inline void arena_poison(const void *p, size_t size) {
    if (__asan_poison_memory_region != NULL && size > 0) {
        __asan_poison_memory_region(p, size);
    }
}

static inline void arena_unpoison(const void *p, size_t size) {
    if (__asan_unpoison_memory_region != NULL && size > 0) {
        __asan_unpoison_memory_region(p, size);
    }
}

static inline int arena_owns(const void *p) {
    const uint8_t *u = (const uint8_t *)p;
    return u >= arena_region && u < arena_region_end;
}

/* Whether `p` is a block of this thread's open window (its header is then readable). */
static inline int arena_in_window(const uint8_t *p) {
    return arena.depth > 0 && arena.base != NULL && p >= arena.base + arena.start + ARENA_HEADER && p < arena.base + arena.top;
}

static void arena_abort(const char *what) {
    fprintf(stderr, "samlgate: libxml2 %s memory of a closed verification arena (a use after its reset); aborting\n", what);
    abort();
}

ARENA_UNCHECKED static void *arena_malloc(size_t size) {
    if (arena.depth > 0 && arena.base != NULL) {
        size_t rounded = arena_round(size);
        if (size < arena.limit && rounded + ARENA_HEADER <= arena.limit - arena.top) {
            uint8_t *block = arena.base + arena.top;
            arena.top += ARENA_HEADER + rounded;
            if (arena.top > arena.high) {
                arena.high = arena.top;
            }
            *(size_t *)block = size;
            arena_unpoison(block + ARENA_HEADER, size);
            arena_served++;
            return block + ARENA_HEADER;
        }
        arena.overflowed = 1;
        atomic_fetch_add_explicit(&arena_overflow_count, 1, memory_order_relaxed);
    }
    return malloc(size);
}

ARENA_UNCHECKED static void arena_free(void *p) {
    if (p == NULL) {
        return;
    }
    if (!arena_owns(p)) {
        free(p);
        return;
    }
    uint8_t *u = (uint8_t *)p;
    if (!arena_in_window(u)) {
        return; /* another thread's window, or a closed one: the reset gives it back */
    }
    size_t rounded = arena_round(*(size_t *)(u - ARENA_HEADER));
    arena_poison(u, rounded);
    if (u + rounded == arena.base + arena.top) {
        arena.top = (size_t)(u - ARENA_HEADER - arena.base);
    }
}

ARENA_UNCHECKED static void *arena_realloc(void *p, size_t size) {
    if (p == NULL) {
        return arena_malloc(size);
    }
    if (!arena_owns(p)) {
        /* The system's block stays the system's: its owner may outlive the window. */
        return realloc(p, size);
    }
    uint8_t *u = (uint8_t *)p;
    if (!arena_in_window(u)) {
        arena_abort("reallocated");
    }
    size_t old = *(size_t *)(u - ARENA_HEADER);
    size_t offset = (size_t)(u - arena.base);
    if (offset + arena_round(old) == arena.top && size < arena.limit && arena_round(size) <= arena.limit - offset) {
        /* The last block grows or shrinks where it is. */
        arena.top = offset + arena_round(size);
        if (arena.top > arena.high) {
            arena.high = arena.top;
        }
        *(size_t *)(u - ARENA_HEADER) = size;
        arena_unpoison(u, size);
        return p;
    }
    if (size <= old) {
        *(size_t *)(u - ARENA_HEADER) = size;
        arena_poison(u + arena_round(size), arena_round(old) - arena_round(size));
        return p;
    }
    void *moved = arena_malloc(size);
    if (moved == NULL) {
        return NULL;
    }
    memcpy(moved, p, old);
    arena_free(p);
    return moved;
}

static char *arena_strdup(const char *s) {
    size_t size = strlen(s) + 1;
    char *copy = (char *)arena_malloc(size);
    if (copy != NULL) {
        memcpy(copy, s, size);
    }
    return copy;
}

/* Gives the slot back when its thread exits. */
static void arena_thread_exit(void *value) {
    (void)value;
    if (arena.base == NULL) {
        return;
    }
    if (arena_mode == CXMLSEC_ARENA_GUARD) {
        mprotect(arena.base, arena.limit, PROT_READ | PROT_WRITE);
    }
    madvise(arena.base, arena.limit, MADV_DONTNEED);
    arena_unpoison(arena.base, arena.limit);
    atomic_fetch_add_explicit(&arena_slot_releases[arena.slot], 1, memory_order_relaxed);
    atomic_fetch_and_explicit(&arena_slots_taken, ~((uint64_t)1 << arena.slot), memory_order_acq_rel);
    arena.base = NULL;
    arena.slot = -1;
}

/* A free slot for this thread, or none (the thread then allocates from the system). */
static void arena_acquire(void) {
    uint64_t taken = atomic_load_explicit(&arena_slots_taken, memory_order_acquire);
    while (taken != UINT64_MAX) {
        int slot = __builtin_ctzll(~taken);
        uint64_t claimed = taken | ((uint64_t)1 << slot);
        if (atomic_compare_exchange_weak_explicit(&arena_slots_taken, &taken, claimed, memory_order_acq_rel,
                                                  memory_order_acquire)) {
            arena.slot = slot;
            arena.base = arena_region + (size_t)slot * arena_slot_size;
            if (arena.limit == 0 || arena.limit > arena_slot_size) {
                arena.limit = arena_slot_size;
            }
            arena.start = arena.top = arena.high = 0;
            arena_poison(arena.base, arena.limit);
            pthread_setspecific(arena_thread_key, arena.base);
            return;
        }
    }
}

int cxmlsec_arena_install(int mode) {
    if (mode == CXMLSEC_ARENA_OFF) {
        return 0;
    }
    long page = sysconf(_SC_PAGESIZE);
    if (page > 0) {
        arena_page = (size_t)page;
    }
    size_t size = (size_t)ARENA_SLOTS * arena_slot_size;
    void *region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) {
        return -1;
    }
    if (pthread_key_create(&arena_thread_key, arena_thread_exit) != 0) {
        munmap(region, size);
        return -1;
    }
    arena_region = (uint8_t *)region;
    arena_region_end = arena_region + size;
    if (xmlMemSetup(arena_free, arena_malloc, arena_realloc, arena_strdup) != 0) {
        return -1;
    }
    arena_mode = mode;
    return 0;
}

int cxmlsec_arena_mode(void) {
    return arena_mode;
}

int cxmlsec_arena_begin(void) {
    if (arena_mode == CXMLSEC_ARENA_OFF) {
        return 0;
    }
    if (arena.depth++ > 0) {
        return arena.base != NULL;
    }
    if (arena.base == NULL) {
        arena_acquire();
        if (arena.base == NULL) {
            return 0;
        }
    }
    if (arena_mode == CXMLSEC_ARENA_GUARD && arena.start > arena.limit / 2) {
        /* Wrapped around: the slot is opened again, whole. */
        mprotect(arena.base, arena.limit, PROT_READ | PROT_WRITE);
        arena.start = 0;
    }
    arena.top = arena.high = arena.start;
    arena.overflowed = 0;
    return 1;
}

int cxmlsec_arena_active(void) {
    return arena.depth > 0 && arena.base != NULL;
}

int cxmlsec_arena_holds_everything(void) {
    return arena.depth > 0 && arena.base != NULL && !arena.overflowed;
}

void cxmlsec_arena_end(void) {
    if (arena_mode == CXMLSEC_ARENA_OFF || arena.depth == 0) {
        return;
    }
    if (--arena.depth > 0) {
        return;
    }
    /* The thread's last libxml2 error keeps copies of its strings: freed (here a no-op) and
     * forgotten now, so that nothing points into the window after it closes. */
    xmlResetLastError();
    if (arena.base == NULL) {
        return;
    }
    arena_poison(arena.base + arena.start, arena.high - arena.start);
    if (arena_mode == CXMLSEC_ARENA_GUARD) {
        size_t end = (arena.high + arena_page - 1) & ~(arena_page - 1);
        if (end > arena.limit) {
            end = arena.limit;
        }
        mprotect(arena.base + arena.start, end - arena.start, PROT_NONE);
        arena.start = arena.top = arena.high = end;
        return;
    }
    if (arena.high > arena_resident) {
        madvise(arena.base + arena_resident, arena.high - arena_resident, MADV_DONTNEED);
    }
    arena.start = arena.top = arena.high = 0;
}

int cxmlsec_arena_slot(void) {
    return arena.slot;
}

unsigned long long cxmlsec_arena_slot_releases(int slot) {
    if (slot < 0 || slot >= ARENA_SLOTS) {
        return 0;
    }
    return atomic_load_explicit(&arena_slot_releases[slot], memory_order_relaxed);
}

unsigned long long cxmlsec_arena_served(void) {
    return arena_served;
}

unsigned long long cxmlsec_arena_overflows(void) {
    return atomic_load_explicit(&arena_overflow_count, memory_order_relaxed);
}

void cxmlsec_arena_limit_for_testing(size_t limit) {
    arena.limit = limit == 0 || limit > arena_slot_size ? arena_slot_size : limit;
    if (arena.base != NULL) {
        /* Start over at the slot's beginning, opened again in guard mode. */
        if (arena_mode == CXMLSEC_ARENA_GUARD) {
            mprotect(arena.base, arena_slot_size, PROT_READ | PROT_WRITE);
        }
        arena.start = arena.top = arena.high = 0;
    }
}
