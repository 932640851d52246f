#ifndef CXMLSEC_H
#define CXMLSEC_H

/*
 * The one header Swift imports for libxml2 + libxmlsec1 (OpenSSL backend).
 *
 * SwiftPM drops every -D flag that pkg-config reports, so the defines that
 * `pkg-config --cflags xmlsec1-openssl` prints are repeated here, before any
 * xmlsec include. XMLSEC_NO_SIZE_T is ABI-critical: it makes xmlSecSize a
 * 32-bit unsigned int, which is how the Debian library was built. A layout
 * test compares MemoryLayout<xmlSecDSigCtx>.size with cxmlsec_sizeof_dsig_ctx().
 */
#ifndef XMLSEC_CRYPTO_OPENSSL
#define XMLSEC_CRYPTO_OPENSSL 1
#endif
#ifndef XMLSEC_NO_SIZE_T
#define XMLSEC_NO_SIZE_T
#endif
#ifndef XMLSEC_NO_CRYPTO_DYNAMIC_LOADING
#define XMLSEC_NO_CRYPTO_DYNAMIC_LOADING 1
#endif
#ifndef XMLSEC_NO_GOST
#define XMLSEC_NO_GOST 1
#endif
#ifndef XMLSEC_NO_GOST2012
#define XMLSEC_NO_GOST2012 1
#endif
#ifndef XMLSEC_OPENSSL3_ENGINES
#define XMLSEC_OPENSSL3_ENGINES 1
#endif
#ifndef __XMLSEC_FUNCTION__
#define __XMLSEC_FUNCTION__ __func__
#endif

#include <stddef.h>

/*
 * Debian's libxml2 is built with ICU, and <libxml/encoding.h> then includes ICU's headers,
 * whose enums clash with Foundation's bundled ICU module in any Swift file importing both.
 * Nothing here uses ICU: the only effect of the undef is that xmlCharEncodingHandler is
 * declared without its two trailing ICU pointers, a struct we never allocate or read.
 */
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/valid.h>
#include <libxml/xmlerror.h>
#include <libxml/dict.h>
#include <libxml/c14n.h>

#include <xmlsec/xmlsec.h>
#include <xmlsec/xmltree.h>
#include <xmlsec/xmldsig.h>
#include <xmlsec/transforms.h>
#include <xmlsec/nodeset.h>
#include <xmlsec/buffer.h>
#include <xmlsec/keys.h>
#include <xmlsec/keysdata.h>
#include <xmlsec/errors.h>
#include <xmlsec/base64.h>
#include <xmlsec/openssl/app.h>
#include <xmlsec/openssl/crypto.h>

/// What cxmlsec_init reports: OK, or the step of the initialisation that failed.
enum {
    CXMLSEC_INIT_OK = 0,
    /// xmlSecInit failed.
    CXMLSEC_INIT_XMLSEC = -1,
    /// xmlSecCheckVersionExt: the libxmlsec1 loaded is not ABI-compatible with these headers.
    CXMLSEC_INIT_VERSION = -2,
    /// xmlSecOpenSSLAppInit failed.
    CXMLSEC_INIT_OPENSSL_APP = -3,
    /// xmlSecOpenSSLInit failed.
    CXMLSEC_INIT_OPENSSL = -4,
    /// samlgate's exclusive C14N classes could not replace xmlsec's in its registry.
    CXMLSEC_INIT_C14N_CLASSES = -5,
    /// The initialisation has not run (never returned by cxmlsec_init).
    CXMLSEC_INIT_NOT_RUN = -100,
};

/// Initialises libxml2, libxmlsec1 and its OpenSSL backend, silences libxml2's
/// error output and routes xmlsec errors into per-thread capture.
/// Runs the initialisation exactly once per process (pthread_once) and returns its
/// result every time: CXMLSEC_INIT_OK, or the CXMLSEC_INIT_ code of the step that
/// failed. Safe from any thread.
int cxmlsec_init(void);

/// The name of the step a cxmlsec_init result stands for ("xmlSecInit", …), for messages.
const char *cxmlsec_init_step(int result);

/// The verification arena's modes (arena.c): the system allocator for everything, the arena
/// for allocations inside windows, or the arena with each closed window's pages inaccessible.
enum {
    CXMLSEC_ARENA_OFF = 0,
    CXMLSEC_ARENA_ON = 1,
    CXMLSEC_ARENA_GUARD = 2,
};

/// The arena's mode, fixed by cxmlsec_init from SAMLGATE_XML_ARENA (`off`, `guard`; anything
/// else or unset: on). OFF also when the arena's address space could not be reserved.
int cxmlsec_arena_mode(void);

/// Opens a window on the calling thread (windows nest; only the outermost counts): libxml2
/// and libxmlsec1 allocate from the thread's arena until the matching cxmlsec_arena_end, which
/// gives all of it back. Returns 1 when allocations are served by the arena, 0 when they go to
/// the system (arena off, or no slot free). Nothing allocated inside may be used after the end.
int cxmlsec_arena_begin(void);

/// Closes the window cxmlsec_arena_begin opened.
void cxmlsec_arena_end(void);

/// Whether the calling thread is inside a window served by its arena.
int cxmlsec_arena_active(void);

/// Whether everything allocated in the calling thread's open window came from its arena (no
/// allocation overflowed to the system): a tree built in it is then given back whole at the
/// window's end, and need not be freed node by node.
int cxmlsec_arena_holds_everything(void);

/// The calling thread's arena slot (0 to 63), or -1 when it has none.
int cxmlsec_arena_slot(void);

/// How often `slot` was given back by a thread that exited, for tests.
unsigned long long cxmlsec_arena_slot_releases(int slot);

/// Allocations the calling thread's arena has served since the thread started.
unsigned long long cxmlsec_arena_served(void);

/// Allocations that did not fit their thread's arena and went to the system, process-wide.
unsigned long long cxmlsec_arena_overflows(void);

/// Caps the calling thread's arena at `limit` bytes (0: the whole slot), for tests of the
/// overflow path. Call outside any window.
void cxmlsec_arena_limit_for_testing(size_t limit);

/// Silences libxml2's per-thread error handlers on the calling thread
/// (libxml2 2.9 keeps them per thread). Cheap; call once per worker thread.
void cxmlsec_silence_thread(void);

/// Forgets the error captured on the calling thread.
void cxmlsec_clear_error(void);

/// xmlsec reason code of the first error on the calling thread since the last clear, or 0.
int cxmlsec_first_error_reason(void);

/// Message of the first xmlsec error on the calling thread since the last clear ("" if none).
/// Static per-thread storage: copy it before the next xmlsec call.
const char *cxmlsec_first_error_message(void);

/// `xmlFree` is a global function pointer in libxml2 and does not import into Swift.
void cxmlsec_xml_free(void *ptr);

/// `xmlMalloc`, for the same reason (tests of the verification arena).
void *cxmlsec_xml_malloc(size_t size);

/// Zeroed, xmlMalloc'ed memory of the C size of xmlSecDSigCtx (not initialised:
/// call xmlSecDSigCtxInitialize). Free with cxmlsec_xml_free.
xmlSecDSigCtxPtr cxmlsec_dsig_ctx_alloc(void);

/// The native canonicalization hook: canonicalize `nodes` and push the bytes to the next
/// transform (1), decline so that libxml2 does it (0), or fail (-1). `prefixes` is the
/// NULL-terminated InclusiveNamespaces PrefixList, or NULL.
typedef int (*cxmlsec_native_c14n_hook)(xmlSecTransformPtr transform, xmlSecNodeSetPtr nodes, int withComments,
                                        xmlChar **prefixes, xmlSecTransformCtxPtr transformCtx);

/// The most prefixes an `InclusiveNamespaces PrefixList` may name, and the longest prefix.
/// Both canonicalizers look every listed prefix up at every element they write (a cost of
/// prefixes x elements x depth), so an unbounded list is a CPU bomb that runs before any digest
/// is compared. Real IdPs list at most a handful of short prefixes. The exc-c14n classes refuse a
/// longer list (the transform fails to read); the Swift precheck refuses it first, with a code.
#define CXMLSEC_MAX_INCLUSIVE_PREFIXES 16
#define CXMLSEC_MAX_INCLUSIVE_PREFIX_LENGTH 64

/// Registers the hook the exc-c14n classes offer node sets to (NULL: always libxml2).
/// Any thread, any time; the store is atomic.
void cxmlsec_set_native_c14n_hook(cxmlsec_native_c14n_hook hook);

/// samlgate's exclusive C14N transform classes (without / with comments): xmlsec's
/// behaviour plus the native hook. They replace xmlsec's classes in its registry during
/// cxmlsec_init, so enable these, not xmlSecTransformExclC14N…GetKlass().
xmlSecTransformId cxmlsec_exc_c14n_klass(void);
xmlSecTransformId cxmlsec_exc_c14n_with_comments_klass(void);

/// libxml2's canonicalization of the xmlsec node set `nodes` in `mode` (an xmlC14NMode:
/// XML_C14N_1_0, XML_C14N_EXCLUSIVE_1_0, XML_C14N_1_1), exactly as xmlsec's own C14N transforms
/// run it (`xmlC14NExecute` with `xmlSecNodeSetContains` as the visibility callback: a C
/// function because that is a cast between C function types), into a caller-owned libxml2
/// buffer. `prefixes` is the NULL-terminated InclusiveNamespaces PrefixList, or NULL; it must be
/// NULL unless `mode` is exclusive. Lets the verifier canonicalize a `SignedInfo` to choose the
/// key before any digest. Returns 0 on success, -1 on failure.
int cxmlsec_c14n_to_buffer(xmlSecNodeSetPtr nodes, int mode, xmlChar **prefixes, int withComments, xmlBufferPtr out);

/// Whether `signature` (the decoded SignatureValue) is the signature of `data` (the canonical
/// SignedInfo) under `key` with the signature method `algorithm` (its URI), by xmlsec's own
/// signature-method transform — exactly the check xmlsec makes after the references: 1 yes,
/// 0 no (or the key does not fit the method), -1 failure (unknown method, allocation).
/// Lets the verifier pick the trusted key before the references' digests are computed.
int cxmlsec_signature_value_matches(const xmlChar *algorithm, xmlSecKeyPtr key, const xmlSecByte *data, xmlSecSize dataSize,
                                    const xmlSecByte *signature, xmlSecSize signatureSize);

// MARK: trusted keys

/// What the trust store checks of a loaded public key: returns 1 for RSA (RSA-PSS included),
/// 2 for EC, 3 for any other type, -1 when `data` carries no OpenSSL key. `bits` receives the
/// key size; `group` (of `groupSize` bytes) the OpenSSL name of an EC key's named curve
/// (`prime256v1`, `secp384r1`, `secp521r1`, …), or "" for other keys or explicit parameters.
int cxmlsec_key_strength(xmlSecKeyDataPtr data, int *bits, char *group, size_t groupSize);

/// The `notAfter` of the DER certificate `der` as seconds since 1970 in `notAfter`: 0 on
/// success, -1 when OpenSSL cannot read it. OpenSSL reads certificates of any key type (DSA,
/// unusual curves, short RSA keys) that higher-level Swift parsers refuse.
int cxmlsec_certificate_not_after(const unsigned char *der, size_t length, long long *notAfter);

// MARK: native signature checks (signature.c)

/// The digest and signature algorithms samlgate checks without xmlsec's transform chain.
typedef enum {
    CXMLSEC_DIGEST_SHA1 = 1,
    CXMLSEC_DIGEST_SHA256 = 2,
    CXMLSEC_DIGEST_SHA384 = 3,
    CXMLSEC_DIGEST_SHA512 = 4,
} cxmlsec_digest;

/// The OpenSSL public key inside a loaded xmlsec key, with a reference of its own (free it with
/// cxmlsec_public_key_free), or NULL. Taken once when the trust store loads the key: the
/// per-signature check then neither copies nor exports it.
struct evp_pkey_st *cxmlsec_public_key(xmlSecKeyPtr key);
void cxmlsec_public_key_free(struct evp_pkey_st *key);

/// Whether `signature` (the decoded SignatureValue) signs `data` (the canonical SignedInfo)
/// under `key` with RSA PKCS#1 v1.5 (`ecdsa` 0) or ECDSA (`ecdsa` 1) over `digest`: 1 yes, 0 no
/// (a key of the other family included), -1 not decided here — an RSA-PSS key, or an ECDSA value
/// that is not exactly twice the curve's order length (xmlsec accepts some such values; its own
/// transform then decides). An ECDSA value is XML Signature's r || s, converted to DER here. The
/// calling thread keeps a verify context for each of the last keys it used (signature.c).
int cxmlsec_signature_verify(struct evp_pkey_st *key, int ecdsa, cxmlsec_digest digest, const unsigned char *data, size_t dataSize,
                             const unsigned char *signature, size_t signatureSize);

/// A digest computed in pieces (a reference's canonical bytes, as they are written). One per
/// thread, reused: cxmlsec_digest_begin resets it for each reference.
typedef struct evp_md_ctx_st cxmlsec_digest_ctx;
cxmlsec_digest_ctx *cxmlsec_digest_ctx_new(void);
void cxmlsec_digest_ctx_free(cxmlsec_digest_ctx *ctx);
/// 0 on success, -1 on failure (unknown algorithm).
int cxmlsec_digest_begin(cxmlsec_digest_ctx *ctx, cxmlsec_digest digest);
int cxmlsec_digest_update(cxmlsec_digest_ctx *ctx, const unsigned char *data, size_t size);
/// Writes the digest to `out` (64 bytes at least) and returns its length, or -1.
int cxmlsec_digest_finish(cxmlsec_digest_ctx *ctx, unsigned char *out);

// MARK: test-only layout probes (LayoutTests; samlgate itself never calls them)

/// sizeof(xmlSecDSigCtx) as the C compiler sees it, for the Swift layout test.
size_t cxmlsec_sizeof_dsig_ctx(void);

/// sizeof(xmlSecKeyInfoCtx) and sizeof(xmlSecTransformCtx), for the layout test.
size_t cxmlsec_sizeof_keyinfo_ctx(void);
size_t cxmlsec_sizeof_transform_ctx(void);

/// offsetof(xmlSecDSigCtx, status), for the layout test.
size_t cxmlsec_offsetof_dsig_status(void);

/// sizeof(xmlSecDSigReferenceCtx) and sizeof(xmlSecPtrList), for the layout test.
size_t cxmlsec_sizeof_dsig_reference_ctx(void);
size_t cxmlsec_sizeof_ptr_list(void);

#endif /* CXMLSEC_H */
