/*
 * Exclusive C14N transform classes that take the place of xmlsec's own in its registry.
 *
 * xmlsec looks a transform up by algorithm URI in its global registry first and only then
 * checks the context's enabled list, so a replacement must sit in the registry itself:
 * cxmlsec_exc_c14n_install() swaps these two classes in for xmlsec's exc-c14n classes, once,
 * inside the library initialisation (before any thread can look them up).
 *
 * They behave like xmlsec's classes (same URIs, same libxml2 call) except that each node set is
 * first offered to the native hook the Swift verifier registers (cxmlsec_set_native_c14n_hook),
 * and that PrefixList is split as the exc-c14n spec says (on any XML whitespace, empty tokens
 * dropped) where xmlsec 1.2.37 splits on single spaces only (so a leading or doubled space gives
 * it an empty token, which libxml2 reads as #default), and that a list longer than
 * CXMLSEC_MAX_INCLUSIVE_PREFIXES prefixes (or with a longer prefix than
 * CXMLSEC_MAX_INCLUSIVE_PREFIX_LENGTH) fails the transform instead of costing prefixes x
 * elements lookups. The hook
 * either pushes the canonical bytes itself (returns 1) or declines (0), and then libxml2
 * canonicalizes as xmlsec would.
 */
#include "cxmlsec_internal.h"

#include <stdatomic.h>
#include <string.h>

/* Per-transform state after the xmlSecTransform header: the InclusiveNamespaces prefixes. */
typedef struct {
    xmlChar **prefixes; /* NULL-terminated, or NULL when no list was given */
    int count;
} cxmlsec_prefix_list;

#define CXMLSEC_PREFIXES(transform) \
    ((cxmlsec_prefix_list *)(((xmlSecByte *)(transform)) + sizeof(xmlSecTransform)))

static _Atomic(cxmlsec_native_c14n_hook) cxmlsec_hook = NULL;

void cxmlsec_set_native_c14n_hook(cxmlsec_native_c14n_hook hook) {
    atomic_store_explicit(&cxmlsec_hook, hook, memory_order_release);
}

static int cxmlsec_c14n_initialize(xmlSecTransformPtr transform) {
    cxmlsec_prefix_list *list = CXMLSEC_PREFIXES(transform);
    list->prefixes = NULL;
    list->count = 0;
    return 0;
}

static void cxmlsec_c14n_finalize(xmlSecTransformPtr transform) {
    cxmlsec_prefix_list *list = CXMLSEC_PREFIXES(transform);
    if (list->prefixes != NULL) {
        for (int i = 0; i < list->count; i++) {
            xmlFree(list->prefixes[i]);
        }
        xmlFree(list->prefixes);
    }
    list->prefixes = NULL;
    list->count = 0;
}

static int cxmlsec_is_space(xmlChar c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The optional <ec:InclusiveNamespaces PrefixList="..."/> child, and nothing else. */
static int cxmlsec_c14n_read_node(xmlSecTransformPtr transform, xmlNodePtr node, xmlSecTransformCtxPtr transformCtx) {
    cxmlsec_prefix_list *list = CXMLSEC_PREFIXES(transform);
    xmlNodePtr cur;
    xmlChar *value;
    const xmlChar *p;
    int capacity;
    (void)transformCtx;

    if (node == NULL || list->prefixes != NULL) {
        return -1;
    }
    cur = xmlSecGetNextElementNode(node->children);
    if (cur == NULL) {
        return 0;
    }
    if (!xmlSecCheckNodeName(cur, BAD_CAST "InclusiveNamespaces", BAD_CAST "http://www.w3.org/2001/10/xml-exc-c14n#")) {
        return -1;
    }
    value = xmlGetProp(cur, BAD_CAST "PrefixList");
    if (value == NULL) {
        return -1;
    }
    capacity = CXMLSEC_MAX_INCLUSIVE_PREFIXES + 1; /* a longer list is refused below */
    list->prefixes = (xmlChar **)xmlMalloc(sizeof(xmlChar *) * (size_t)capacity);
    if (list->prefixes == NULL) {
        xmlFree(value);
        return -1;
    }
    list->count = 0;
    for (p = value; *p != 0;) {
        const xmlChar *start;
        while (*p != 0 && cxmlsec_is_space(*p)) {
            p++;
        }
        start = p;
        while (*p != 0 && !cxmlsec_is_space(*p)) {
            p++;
        }
        if (p > start) {
            xmlChar *token;
            if (list->count >= CXMLSEC_MAX_INCLUSIVE_PREFIXES || p - start > CXMLSEC_MAX_INCLUSIVE_PREFIX_LENGTH) {
                /* See CXMLSEC_MAX_INCLUSIVE_PREFIXES: refused before any canonicalization. */
                xmlFree(value);
                list->prefixes[list->count] = NULL;
                return -1;
            }
            token = xmlStrndup(start, (int)(p - start));
            if (token == NULL) {
                xmlFree(value);
                list->prefixes[list->count] = NULL;
                return -1;
            }
            list->prefixes[list->count++] = token;
        }
    }
    list->prefixes[list->count] = NULL;
    xmlFree(value);
    return xmlSecGetNextElementNode(cur->next) == NULL ? 0 : -1;
}

static int cxmlsec_c14n_pop_bin(xmlSecTransformPtr transform, xmlSecByte *data, xmlSecSize maxDataSize,
                                xmlSecSize *dataSize, xmlSecTransformCtxPtr transformCtx) {
    /* Never called in push mode; present so that xmlsec sees a binary output. */
    (void)transform;
    (void)data;
    (void)maxDataSize;
    (void)dataSize;
    (void)transformCtx;
    return -1;
}

static int cxmlsec_c14n_push_xml(xmlSecTransformPtr transform, xmlSecNodeSetPtr nodes, xmlSecTransformCtxPtr transformCtx) {
    cxmlsec_prefix_list *list = CXMLSEC_PREFIXES(transform);
    int withComments;
    cxmlsec_native_c14n_hook hook;

    if (nodes == NULL || nodes->doc == NULL || transformCtx == NULL) {
        return -1;
    }
    switch (transform->status) {
    case xmlSecTransformStatusNone:
        transform->status = xmlSecTransformStatusWorking;
        break;
    case xmlSecTransformStatusWorking:
    case xmlSecTransformStatusFinished:
        return 0;
    default:
        return -1;
    }
    withComments = transform->id == cxmlsec_exc_c14n_with_comments_klass() ? 1 : 0;
    hook = atomic_load_explicit(&cxmlsec_hook, memory_order_acquire);
    if (hook != NULL) {
        int handled = hook(transform, nodes, withComments, list->prefixes, transformCtx);
        if (handled < 0) {
            return -1;
        }
        if (handled > 0) {
            transform->status = xmlSecTransformStatusFinished;
            return 0;
        }
    }
    if (cxmlsec_exc_c14n_libxml2(transform, nodes, list->prefixes, withComments, transformCtx) < 0) {
        return -1;
    }
    transform->status = xmlSecTransformStatusFinished;
    return 0;
}

/* The two classes differ only in name and URI. Designated initialisers: a field added to or
 * moved in xmlsec's struct cannot shift the methods into the wrong slots. */
#define CXMLSEC_EXC_C14N_KLASS(variable, klassName, klassHref)                                   \
    static xmlSecTransformKlass variable = {                                                    \
        .klassSize = sizeof(xmlSecTransformKlass),                                              \
        .objSize = sizeof(xmlSecTransform) + sizeof(cxmlsec_prefix_list),                       \
        .name = BAD_CAST klassName,                                                             \
        .href = BAD_CAST klassHref,                                                             \
        .usage = xmlSecTransformUsageC14NMethod | xmlSecTransformUsageDSigTransform,            \
        .initialize = cxmlsec_c14n_initialize,                                                  \
        .finalize = cxmlsec_c14n_finalize,                                                      \
        .readNode = cxmlsec_c14n_read_node,                                                     \
        .getDataType = xmlSecTransformDefaultGetDataType,                                       \
        .popBin = cxmlsec_c14n_pop_bin,                                                         \
        .pushXml = cxmlsec_c14n_push_xml,                                                       \
    }

CXMLSEC_EXC_C14N_KLASS(cxmlsec_exc_c14n, "exc-c14n", "http://www.w3.org/2001/10/xml-exc-c14n#");
CXMLSEC_EXC_C14N_KLASS(cxmlsec_exc_c14n_with_comments, "exc-c14n-with-comments",
                       "http://www.w3.org/2001/10/xml-exc-c14n#WithComments");

xmlSecTransformId cxmlsec_exc_c14n_klass(void) {
    return &cxmlsec_exc_c14n;
}

xmlSecTransformId cxmlsec_exc_c14n_with_comments_klass(void) {
    return &cxmlsec_exc_c14n_with_comments;
}

int cxmlsec_exc_c14n_install(void) {
    xmlSecPtrListPtr registry = xmlSecTransformIdsGet();
    xmlSecSize size = xmlSecPtrListGetSize(registry);
    int replaced = 0;
    for (xmlSecSize i = 0; i < size; i++) {
        xmlSecTransformId id = (xmlSecTransformId)xmlSecPtrListGetItem(registry, i);
        if (id == xmlSecTransformExclC14NGetKlass()) {
            if (xmlSecPtrListSet(registry, (xmlSecPtr)cxmlsec_exc_c14n_klass(), i) < 0) {
                return -1;
            }
            replaced++;
        } else if (id == xmlSecTransformExclC14NWithCommentsGetKlass()) {
            if (xmlSecPtrListSet(registry, (xmlSecPtr)cxmlsec_exc_c14n_with_comments_klass(), i) < 0) {
                return -1;
            }
            replaced++;
        }
    }
    return replaced == 2 ? 0 : -1;
}
