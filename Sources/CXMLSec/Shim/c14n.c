/*
 * libxml2's canonicalization of an xmlsec node set, called exactly as xmlsec's own C14N
 * transforms call it: for the exc-c14n classes when the native hook declines, and for the
 * verifier's LibXML2Canonicalization (an inclusive SignedInfo; the native canonicalizer's oracle).
 */
#include "cxmlsec_internal.h"

/* xmlsec's C14N call (libxml2's `mode`) on `buf`, which it closes (flushing into whatever it feeds). */
static int cxmlsec_c14n_run(xmlSecNodeSetPtr nodes, int mode, xmlChar **prefixes, int withComments, xmlOutputBufferPtr buf) {
    if (buf == NULL) {
        return -1;
    }
    if (xmlC14NExecute(nodes->doc, (xmlC14NIsVisibleCallback)xmlSecNodeSetContains, nodes,
                       mode, prefixes, withComments, buf) < 0) {
        (void)xmlOutputBufferClose(buf);
        return -1;
    }
    return xmlOutputBufferClose(buf) < 0 ? -1 : 0;
}

int cxmlsec_exc_c14n_libxml2(xmlSecTransformPtr transform, xmlSecNodeSetPtr nodes, xmlChar **prefixes,
                             int withComments, xmlSecTransformCtxPtr transformCtx) {
    if (transform == NULL || nodes == NULL || nodes->doc == NULL || transformCtx == NULL) {
        return -1;
    }
    return cxmlsec_c14n_run(nodes, XML_C14N_EXCLUSIVE_1_0, prefixes, withComments,
                            transform->next != NULL
                                ? xmlSecTransformCreateOutputBuffer(transform->next, transformCtx)
                                : xmlSecBufferCreateOutputBuffer(&(transform->outBuf)));
}

int cxmlsec_c14n_to_buffer(xmlSecNodeSetPtr nodes, int mode, xmlChar **prefixes, int withComments, xmlBufferPtr out) {
    if (nodes == NULL || nodes->doc == NULL || out == NULL) {
        return -1;
    }
    if (mode != XML_C14N_EXCLUSIVE_1_0 && prefixes != NULL) {
        return -1; /* only exclusive C14N takes an InclusiveNamespaces list */
    }
    return cxmlsec_c14n_run(nodes, mode, prefixes, withComments, xmlOutputBufferCreateBuffer(out, NULL));
}
