/*
 * The checks of an XML signature samlgate makes without xmlsec's transform chain (see
 * NativeSignature.swift): a reference's digest computed while its canonical bytes are written,
 * and the SignatureValue checked against a public key taken once from the trust store.
 * OpenSSL 3 only; every algorithm object is fetched once per process.
 */
#include "cxmlsec_internal.h"

#include <pthread.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <stdlib.h>
#include <xmlsec/openssl/evp.h>

static EVP_MD *cxmlsec_digests[5];
static pthread_once_t cxmlsec_digests_once = PTHREAD_ONCE_INIT;

static void cxmlsec_fetch_digests(void) {
    cxmlsec_digests[CXMLSEC_DIGEST_SHA1] = EVP_MD_fetch(NULL, "SHA1", NULL);
    cxmlsec_digests[CXMLSEC_DIGEST_SHA256] = EVP_MD_fetch(NULL, "SHA256", NULL);
    cxmlsec_digests[CXMLSEC_DIGEST_SHA384] = EVP_MD_fetch(NULL, "SHA384", NULL);
    cxmlsec_digests[CXMLSEC_DIGEST_SHA512] = EVP_MD_fetch(NULL, "SHA512", NULL);
    ERR_clear_error();
}

/* The fetched digest for `digest`, or NULL. */
static const EVP_MD *cxmlsec_md(cxmlsec_digest digest) {
    pthread_once(&cxmlsec_digests_once, cxmlsec_fetch_digests);
    if (digest < CXMLSEC_DIGEST_SHA1 || digest > CXMLSEC_DIGEST_SHA512) {
        return NULL;
    }
    return cxmlsec_digests[digest];
}

EVP_PKEY *cxmlsec_public_key(xmlSecKeyPtr key) {
    if (key == NULL) {
        return NULL;
    }
    xmlSecKeyDataPtr value = xmlSecKeyGetValue(key);
    if (value == NULL) {
        return NULL;
    }
    EVP_PKEY *pkey = xmlSecOpenSSLEvpKeyDataGetEvp(value);
    if (pkey == NULL || EVP_PKEY_up_ref(pkey) != 1) {
        return NULL;
    }
    return pkey;
}

void cxmlsec_public_key_free(EVP_PKEY *key) {
    EVP_PKEY_free(key);
}

/* XML Signature's ECDSA value r || s (RFC 4050 / 6931) as the DER OpenSSL verifies, in `der`
 * (of `derSize` bytes); returns its length, or -1 when the value is not exactly two halves of
 * the curve's order length. */
static int cxmlsec_ecdsa_der(EVP_PKEY *key, const unsigned char *signature, size_t signatureSize, unsigned char *der,
                             size_t derSize) {
    BIGNUM *order = NULL;
    if (EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_EC_ORDER, &order) != 1) {
        /* Not every provider exports the order: fall back on the key size. */
        ERR_clear_error();
    }
    int bits = order != NULL ? BN_num_bits(order) : EVP_PKEY_get_bits(key);
    BN_free(order);
    size_t half = (size_t)(bits + 7) / 8;
    if (bits <= 0 || signatureSize != 2 * half) {
        return -1;
    }
    ECDSA_SIG *sig = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(signature, (int)half, NULL);
    BIGNUM *s = BN_bin2bn(signature + half, (int)half, NULL);
    int length = -1;
    if (sig != NULL && r != NULL && s != NULL && ECDSA_SIG_set0(sig, r, s) == 1) {
        r = NULL;
        s = NULL;
        int needed = i2d_ECDSA_SIG(sig, NULL);
        if (needed > 0 && (size_t)needed <= derSize) {
            unsigned char *cursor = der;
            length = i2d_ECDSA_SIG(sig, &cursor);
        }
    }
    BN_free(r);
    BN_free(s);
    ECDSA_SIG_free(sig);
    return length;
}

/* Each thread keeps the verify contexts of the last few keys it used: creating one (a provider
 * lookup, the key's parameters read into the operation) costs as much again as the RSA check
 * itself. An entry holds a reference on its key, so a key address found here is that key, never
 * a later key allocated at a freed one's address. Freed with the thread (pthread key). */
#define CXMLSEC_VERIFY_CONTEXTS 8

typedef struct {
    EVP_PKEY_CTX *ctx[CXMLSEC_VERIFY_CONTEXTS];
    cxmlsec_digest digest[CXMLSEC_VERIFY_CONTEXTS];
    unsigned next;
} cxmlsec_verify_cache;

static pthread_key_t cxmlsec_verify_cache_key;
static pthread_once_t cxmlsec_verify_cache_once = PTHREAD_ONCE_INIT;

static void cxmlsec_verify_cache_free(void *raw) {
    cxmlsec_verify_cache *cache = raw;
    for (unsigned i = 0; i < CXMLSEC_VERIFY_CONTEXTS; i++) {
        EVP_PKEY_CTX_free(cache->ctx[i]);
    }
    free(cache);
}

static void cxmlsec_verify_cache_make_key(void) {
    (void)pthread_key_create(&cxmlsec_verify_cache_key, cxmlsec_verify_cache_free);
}

/* This thread's verify context for `key` with `digest` set, created on first use; NULL on failure. */
static EVP_PKEY_CTX *cxmlsec_verify_context(EVP_PKEY *key, int rsa, cxmlsec_digest digest) {
    pthread_once(&cxmlsec_verify_cache_once, cxmlsec_verify_cache_make_key);
    cxmlsec_verify_cache *cache = pthread_getspecific(cxmlsec_verify_cache_key);
    if (cache == NULL) {
        cache = calloc(1, sizeof(*cache));
        if (cache == NULL || pthread_setspecific(cxmlsec_verify_cache_key, cache) != 0) {
            free(cache);
            return NULL;
        }
    }
    unsigned slot = CXMLSEC_VERIFY_CONTEXTS;
    for (unsigned i = 0; i < CXMLSEC_VERIFY_CONTEXTS; i++) {
        if (cache->ctx[i] != NULL && EVP_PKEY_CTX_get0_pkey(cache->ctx[i]) == key) {
            slot = i;
            break;
        }
    }
    if (slot == CXMLSEC_VERIFY_CONTEXTS) {
        EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key, NULL);
        if (ctx == NULL || EVP_PKEY_verify_init(ctx) != 1 || (rsa && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) != 1)) {
            EVP_PKEY_CTX_free(ctx);
            return NULL;
        }
        slot = cache->next;
        cache->next = (cache->next + 1) % CXMLSEC_VERIFY_CONTEXTS;
        EVP_PKEY_CTX_free(cache->ctx[slot]);
        cache->ctx[slot] = ctx;
        cache->digest[slot] = 0;
    }
    if (cache->digest[slot] != digest) {
        if (EVP_PKEY_CTX_set_signature_md(cache->ctx[slot], cxmlsec_md(digest)) != 1) {
            return NULL;
        }
        cache->digest[slot] = digest;
    }
    return cache->ctx[slot];
}

int cxmlsec_signature_verify(EVP_PKEY *key, int ecdsa, cxmlsec_digest digest, const unsigned char *data, size_t dataSize,
                             const unsigned char *signature, size_t signatureSize) {
    const EVP_MD *md = cxmlsec_md(digest);
    if (key == NULL || md == NULL || data == NULL || signature == NULL) {
        return -1;
    }
    int type = EVP_PKEY_get_base_id(key);
    if (type == EVP_PKEY_RSA_PSS) {
        return -1;
    }
    if (ecdsa ? type != EVP_PKEY_EC : type != EVP_PKEY_RSA) {
        return 0; /* an EC key for an RSA method, say: not this key, as xmlsec's key match says */
    }
    unsigned char der[2 * 80 + 16];
    const unsigned char *value = signature;
    size_t valueSize = signatureSize;
    if (ecdsa) {
        int length = cxmlsec_ecdsa_der(key, signature, signatureSize, der, sizeof(der));
        if (length < 0) {
            return -1;
        }
        value = der;
        valueSize = (size_t)length;
    }
    unsigned char hash[EVP_MAX_MD_SIZE];
    unsigned int hashSize = 0;
    EVP_PKEY_CTX *ctx = cxmlsec_verify_context(key, !ecdsa, digest);
    int result = -1;
    if (ctx != NULL && EVP_Digest(data, dataSize, hash, &hashSize, md, NULL) == 1) {
        /* 1: verified; 0 or a negative value: a signature that does not verify, of any shape. */
        result = EVP_PKEY_verify(ctx, value, valueSize, hash, hashSize) == 1 ? 1 : 0;
    }
    ERR_clear_error();
    return result;
}

EVP_MD_CTX *cxmlsec_digest_ctx_new(void) {
    return EVP_MD_CTX_new();
}

void cxmlsec_digest_ctx_free(EVP_MD_CTX *ctx) {
    EVP_MD_CTX_free(ctx);
}

int cxmlsec_digest_begin(EVP_MD_CTX *ctx, cxmlsec_digest digest) {
    const EVP_MD *md = cxmlsec_md(digest);
    if (ctx == NULL || md == NULL || EVP_DigestInit_ex(ctx, md, NULL) != 1) {
        ERR_clear_error();
        return -1;
    }
    return 0;
}

int cxmlsec_digest_update(EVP_MD_CTX *ctx, const unsigned char *data, size_t size) {
    return EVP_DigestUpdate(ctx, data, size) == 1 ? 0 : -1;
}

int cxmlsec_digest_finish(EVP_MD_CTX *ctx, unsigned char *out) {
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(ctx, out, &length) != 1) {
        ERR_clear_error();
        return -1;
    }
    return (int)length;
}
