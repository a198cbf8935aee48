// OpenSSL 3 (libssl-dev) for the TLS listeners and clients; only NavSyncTLS imports it.
// Several of the calls it needs are macros around SSL_CTX_ctrl / BIO_ctrl, which
// Swift cannot import; the inline functions below give them a callable form.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <openssl/bio.h>
#include <openssl/buffer.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>

/// The key type of Ed25519 (EVP_PKEY_ED25519 is a macro of a macro).
static inline int navsync_pkey_ed25519(void) { return EVP_PKEY_ED25519; }

static inline int navsync_ssl_ctx_set_min_tls12(SSL_CTX *ctx) {
    return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}

static inline long navsync_ssl_ctx_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

static inline long navsync_ssl_ctx_release_buffers_mode(void) { return SSL_MODE_RELEASE_BUFFERS; }

static inline unsigned long navsync_ssl_ctx_set_options(SSL_CTX *ctx, unsigned long options) {
    return (unsigned long)SSL_CTX_set_options(ctx, options);
}

static inline unsigned long navsync_ssl_hardening_options(void) {
    return SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_COMPRESSION;
}

static inline long navsync_ssl_ctx_session_cache_off(SSL_CTX *ctx) {
    return SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
}

static inline int navsync_ssl_set_sni(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/// Bytes waiting to be read from a BIO (BIO_pending is a macro).
static inline size_t navsync_bio_pending(BIO *bio) { return BIO_ctrl_pending(bio); }

/// The memory a memory BIO holds, whether or not it is still unread.
static inline size_t navsync_mem_bio_capacity(BIO *bio) {
    BUF_MEM *memory = NULL;
    BIO_get_mem_ptr(bio, &memory);
    return memory ? memory->max : 0;
}

/// Memory BIOs report "retry" when empty instead of EOF: the engine feeds them as bytes arrive.
static inline BIO *navsync_new_memory_bio(void) {
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio) BIO_set_mem_eof_return(bio, -1);
    return bio;
}

/// Caps one connection at TLS 1.2 (a macro around SSL_ctrl); the tests use it.
static inline int navsync_ssl_set_max_tls12(SSL *ssl) {
    return (int)SSL_set_max_proto_version(ssl, TLS1_2_VERSION);
}
