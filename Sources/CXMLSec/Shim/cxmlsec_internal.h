#ifndef CXMLSEC_INTERNAL_H
#define CXMLSEC_INTERNAL_H

/*
 * What the shim's C files call of each other, and Swift never does: outside include/, so the
 * module Swift imports does not show it. The files depend on each other in one direction only:
 * shim.c (initialisation) -> exc_c14n.c (the transform classes) -> c14n.c (libxml2's C14N).
 */
#include "CXMLSec.h"

/// Swaps samlgate's exclusive C14N classes in for xmlsec's in the transform registry (0 on
/// success). Called once by cxmlsec_init. Defined in exc_c14n.c.
int cxmlsec_exc_c14n_install(void);

/// libxml2's exclusive canonicalization of the xmlsec node set `nodes`, written to the next
/// transform in the chain (or to `transform->outBuf` when it is the last), exactly as
/// xmlsec's own exclusive C14N transform does it: `xmlC14NExecute` with
/// `xmlSecNodeSetContains` as the visibility callback. `prefixes` is the NULL-terminated
/// InclusiveNamespaces PrefixList, or NULL. Returns 0 on success, -1 on failure.
/// The exc-c14n classes' path when the native hook declines. Defined in c14n.c.
int cxmlsec_exc_c14n_libxml2(xmlSecTransformPtr transform, xmlSecNodeSetPtr nodes, xmlChar **prefixes,
                             int withComments, xmlSecTransformCtxPtr transformCtx);

/// Routes libxml2's allocations through the verification arena in `mode` (a CXMLSEC_ARENA_
/// value; OFF does nothing). Called by cxmlsec_init before libxml2 allocates anything; 0 on
/// success, -1 when the address space could not be reserved (the arena then stays off).
/// Defined in arena.c.
int cxmlsec_arena_install(int mode);

#endif /* CXMLSEC_INTERNAL_H */
