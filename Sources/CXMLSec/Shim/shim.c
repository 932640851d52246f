#include "cxmlsec_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <xmlsec/openssl/evp.h>

/* First xmlsec error on this thread: the root cause, not the cascade that follows. */
static _Thread_local int cxmlsec_error_reason = 0;
static _Thread_local char cxmlsec_error_message[256];

static void cxmlsec_structured_noop(void *ctx, xmlErrorPtr error) {
    (void)ctx;
    (void)error;
}

static void cxmlsec_generic_noop(void *ctx, const char *msg, ...) {
    (void)ctx;
    (void)msg;
}

static void cxmlsec_error_callback(const char *file, int line, const char *func,
                                   const char *errorObject, const char *errorSubject,
                                   int reason, const char *msg) {
    (void)file;
    (void)line;
    (void)errorObject;
    if (cxmlsec_error_reason != 0) {
        return;
    }
    cxmlsec_error_reason = reason != 0 ? reason : -1;
    /* Only function, subject and xmlsec's message: never document content. */
    const char *f = func != NULL ? func : "?";
    const char *s = errorSubject != NULL ? errorSubject : "";
    const char *m = msg != NULL ? msg : "";
    size_t cap = sizeof(cxmlsec_error_message);
    size_t n = 0;
    const char *parts[5] = { f, ": ", s, s[0] != 0 ? ": " : "", m };
    for (int i = 0; i < 5 && n + 1 < cap; i++) {
        size_t len = strlen(parts[i]);
        if (len > cap - 1 - n) {
            len = cap - 1 - n;
        }
        memcpy(cxmlsec_error_message + n, parts[i], len);
        n += len;
    }
    cxmlsec_error_message[n] = 0;
}

void cxmlsec_silence_thread(void) {
    xmlSetStructuredErrorFunc(NULL, cxmlsec_structured_noop);
    xmlSetGenericErrorFunc(NULL, cxmlsec_generic_noop);
}

static pthread_once_t cxmlsec_once = PTHREAD_ONCE_INIT;
static int cxmlsec_init_result = CXMLSEC_INIT_NOT_RUN;

static void cxmlsec_init_once(void);

int cxmlsec_init(void) {
    pthread_once(&cxmlsec_once, cxmlsec_init_once);
    return cxmlsec_init_result;
}

/* SAMLGATE_XML_ARENA: `off`, `guard`, or on (the default, and any other value). */
static int cxmlsec_arena_mode_from_environment(void) {
    const char *value = getenv("SAMLGATE_XML_ARENA");
    if (value != NULL && strcmp(value, "off") == 0) {
        return CXMLSEC_ARENA_OFF;
    }
    if (value != NULL && strcmp(value, "guard") == 0) {
        return CXMLSEC_ARENA_GUARD;
    }
    return CXMLSEC_ARENA_ON;
}

static int cxmlsec_do_init(void) {
    /* First: the hooks are process-wide, and set here before any thread can be inside libxml2
     * (they serve the system's pointers too, so what was allocated before them is freed right). */
    (void)cxmlsec_arena_install(cxmlsec_arena_mode_from_environment());
    xmlInitParser();
    /* Defaults for threads created later, then this thread. */
    xmlThrDefSetStructuredErrorFunc(NULL, cxmlsec_structured_noop);
    xmlThrDefSetGenericErrorFunc(NULL, cxmlsec_generic_noop);
    cxmlsec_silence_thread();

    if (xmlSecInit() < 0) {
        return CXMLSEC_INIT_XMLSEC;
    }
    if (xmlSecCheckVersionExt(XMLSEC_VERSION_MAJOR, XMLSEC_VERSION_MINOR,
                              XMLSEC_VERSION_SUBMINOR, xmlSecCheckVersionABICompatible) != 1) {
        return CXMLSEC_INIT_VERSION;
    }
    if (xmlSecOpenSSLAppInit(NULL) < 0) {
        return CXMLSEC_INIT_OPENSSL_APP;
    }
    if (xmlSecOpenSSLInit() < 0) {
        return CXMLSEC_INIT_OPENSSL;
    }
    if (cxmlsec_exc_c14n_install() < 0) {
        return CXMLSEC_INIT_C14N_CLASSES;
    }
    /* Last: the crypto initialisation installs its own error callback. */
    xmlSecErrorsDefaultCallbackEnableOutput(0);
    xmlSecErrorsSetCallback(cxmlsec_error_callback);
    return CXMLSEC_INIT_OK;
}

static void cxmlsec_init_once(void) {
    cxmlsec_init_result = cxmlsec_do_init();
}

const char *cxmlsec_init_step(int result) {
    switch (result) {
    case CXMLSEC_INIT_OK: return "none";
    case CXMLSEC_INIT_XMLSEC: return "xmlSecInit";
    case CXMLSEC_INIT_VERSION: return "xmlSecCheckVersionExt (libxmlsec1 not ABI-compatible with its headers)";
    case CXMLSEC_INIT_OPENSSL_APP: return "xmlSecOpenSSLAppInit";
    case CXMLSEC_INIT_OPENSSL: return "xmlSecOpenSSLInit";
    case CXMLSEC_INIT_C14N_CLASSES: return "installing the exclusive C14N transform classes";
    case CXMLSEC_INIT_NOT_RUN: return "not run";
    default: return "unknown step";
    }
}

void cxmlsec_clear_error(void) {
    cxmlsec_error_reason = 0;
    cxmlsec_error_message[0] = 0;
}

int cxmlsec_first_error_reason(void) {
    return cxmlsec_error_reason;
}

const char *cxmlsec_first_error_message(void) {
    return cxmlsec_error_message;
}

void cxmlsec_xml_free(void *ptr) {
    if (ptr != NULL) {
        xmlFree(ptr);
    }
}

void *cxmlsec_xml_malloc(size_t size) {
    return xmlMalloc(size);
}

size_t cxmlsec_sizeof_dsig_ctx(void) {
    return sizeof(xmlSecDSigCtx);
}

size_t cxmlsec_sizeof_keyinfo_ctx(void) {
    return sizeof(xmlSecKeyInfoCtx);
}

size_t cxmlsec_sizeof_transform_ctx(void) {
    return sizeof(xmlSecTransformCtx);
}

size_t cxmlsec_offsetof_dsig_status(void) {
    return offsetof(xmlSecDSigCtx, status);
}

size_t cxmlsec_sizeof_dsig_reference_ctx(void) {
    return sizeof(xmlSecDSigReferenceCtx);
}

size_t cxmlsec_sizeof_ptr_list(void) {
    return sizeof(xmlSecPtrList);
}

xmlSecDSigCtxPtr cxmlsec_dsig_ctx_alloc(void) {
    xmlSecDSigCtxPtr ctx = (xmlSecDSigCtxPtr)xmlMalloc(sizeof(xmlSecDSigCtx));
    if (ctx != NULL) {
        memset(ctx, 0, sizeof(xmlSecDSigCtx));
    }
    return ctx;
}

int cxmlsec_signature_value_matches(const xmlChar *algorithm, xmlSecKeyPtr key, const xmlSecByte *data, xmlSecSize dataSize,
                                    const xmlSecByte *signature, xmlSecSize signatureSize) {
    xmlSecTransformId id;
    xmlSecTransformPtr transform;
    xmlSecTransformCtx ctx;
    xmlSecKeyReq request;
    int result = -1;

    if (algorithm == NULL || key == NULL || data == NULL || signature == NULL) {
        return -1;
    }
    id = xmlSecTransformIdListFindByHref(xmlSecTransformIdsGet(), algorithm, xmlSecTransformUsageSignatureMethod);
    if (id == xmlSecTransformIdUnknown) {
        return -1;
    }
    if (xmlSecTransformCtxInitialize(&ctx) < 0) {
        return -1;
    }
    if (xmlSecKeyReqInitialize(&request) < 0) {
        xmlSecTransformCtxFinalize(&ctx);
        return -1;
    }
    transform = xmlSecTransformCreate(id);
    if (transform == NULL) {
        goto done;
    }
    transform->operation = xmlSecTransformOperationVerify;
    if (xmlSecTransformSetKeyReq(transform, &request) < 0) {
        goto done;
    }
    if (!xmlSecKeyMatch(key, NULL, &request)) {
        result = 0; /* an EC key for an RSA method, say: not this key */
        goto done;
    }
    if (xmlSecTransformSetKey(transform, key) < 0) {
        goto done;
    }
    if (xmlSecTransformPushBin(transform, data, dataSize, 1, &ctx) < 0) {
        goto done;
    }
    if (xmlSecTransformVerify(transform, signature, signatureSize, &ctx) < 0) {
        result = 0; /* a malformed value (a wrong-length ECDSA value) is not this key's */
        goto done;
    }
    result = transform->status == xmlSecTransformStatusOk ? 1 : 0;
done:
    if (transform != NULL) {
        xmlSecTransformDestroy(transform);
    }
    xmlSecKeyReqFinalize(&request);
    xmlSecTransformCtxFinalize(&ctx);
    return result;
}

int cxmlsec_key_strength(xmlSecKeyDataPtr data, int *bits, char *group, size_t groupSize) {
    if (groupSize > 0) group[0] = '\0';
    *bits = 0;
    if (data == NULL) return -1;
    EVP_PKEY *pkey = xmlSecOpenSSLEvpKeyDataGetEvp(data);
    if (pkey == NULL) return -1;
    *bits = EVP_PKEY_get_bits(pkey);
    int type = EVP_PKEY_get_base_id(pkey);
    if (type == EVP_PKEY_RSA || type == EVP_PKEY_RSA_PSS) return 1;
    if (type != EVP_PKEY_EC) return 3;
    size_t length = 0;
    if (groupSize == 0 || EVP_PKEY_get_group_name(pkey, group, groupSize, &length) != 1) {
        if (groupSize > 0) group[0] = '\0';
        ERR_clear_error(); /* explicit parameters have no group name: not an error of the next call's */
    }
    return 2;
}

int cxmlsec_certificate_not_after(const unsigned char *der, size_t length, long long *notAfter) {
    const unsigned char *cursor = der;
    X509 *certificate = d2i_X509(NULL, &cursor, (long)length);
    if (certificate == NULL) {
        ERR_clear_error();
        return -1;
    }
    struct tm parts;
    memset(&parts, 0, sizeof(parts));
    int read = ASN1_TIME_to_tm(X509_get0_notAfter(certificate), &parts);
    X509_free(certificate);
    if (read != 1) {
        ERR_clear_error();
        return -1;
    }
    *notAfter = (long long)timegm(&parts);
    return 0;
}
