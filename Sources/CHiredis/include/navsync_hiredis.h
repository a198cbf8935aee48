#ifndef NAVSYNC_HIREDIS_H
#define NAVSYNC_HIREDIS_H
/* The Redis client library (Debian's libhiredis-dev, 0.14) as Swift sees it,
 * plus the one function Swift cannot reach by itself: hiredis's libuv adapter
 * is a set of static functions in a header, so it is compiled here, in the
 * only C file of the project that touches libuv outside the UVLoop target. */
#include <hiredis/hiredis.h>
#include <hiredis/async.h>

/* Lets libuv drive the context's socket: `uv_loop` is the daemon's
 * `uv_loop_t *`, passed untyped so Swift callers need not import libuv.
 * Returns REDIS_OK or REDIS_ERR (already attached, or the poll handle could
 * not be set up). Must be called on the loop thread. */
int navsync_redis_attach(redisAsyncContext *context, void *uv_loop);

#endif
