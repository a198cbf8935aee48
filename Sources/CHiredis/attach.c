/* The single documented exception to "only UVLoop touches libuv": hiredis
 * polls its own socket through a uv_poll_t that its adapter creates and frees
 * (on redisAsyncFree, in the handle's close callback). */
#include <sys/ioctl.h>
#include <uv.h>
#include <hiredis/adapters/libuv.h>
#include "navsync_hiredis.h"

/* libuv reports a socket error (POLLERR: a refused connect, a reset) as a
 * non-zero status and stops the poll; the 0.14 adapter ignores such calls,
 * so hiredis would never learn that its connection failed and would wait
 * for ever. Here hiredis is made to look at the socket instead: while
 * connecting it checks SO_ERROR (write side), once connected a read
 * returns the error. Either way it calls our connect or disconnect
 * callback. */
/* hiredis reads at most 16 KiB per call, and libuv reports a readable
 * socket once per loop turn: a burst of published changes bigger than that
 * was taken over several turns, and the daemon wrote to every watcher once
 * per turn. Reading on while the socket holds bytes (bounded, so one busy
 * connection cannot keep the loop) hands the whole burst to the hub in one
 * turn, and every watcher gets it in one write. */
enum { navsync_max_reads_per_turn = 64 };

static void navsync_drain(redisLibuvEvents *p) {
    for (int reads = 1; reads < navsync_max_reads_per_turn; reads++) {
        if (p->context == NULL || !(p->context->c.flags & REDIS_CONNECTED)) return;
        int pending = 0;
        if (ioctl(p->context->c.fd, FIONREAD, &pending) != 0 || pending <= 0) return;
        redisAsyncHandleRead(p->context);
    }
}

static void navsync_poll(uv_poll_t *handle, int status, int events) {
    redisLibuvEvents *p = (redisLibuvEvents *)handle->data;
    if (status == 0) {
        redisLibuvPoll(handle, status, events);
        if (events & UV_READABLE) navsync_drain(p);
        return;
    }
    if (p->context == NULL) return;
    redisAsyncContext *context = p->context;
    if (context->c.flags & REDIS_CONNECTED) {
        redisAsyncHandleRead(context);
    } else {
        redisAsyncHandleWrite(context);
    }
    /* Still alive (the error was transient): libuv stopped the poll, start it again. */
    if (p->context != NULL && p->events) uv_poll_start(&p->handle, p->events, navsync_poll);
}

/* The adapter's own event functions, followed by a restart of the poll with
 * the callback above (same events, only the callback differs). */
static void navsync_repoll(void *privdata) {
    redisLibuvEvents *p = (redisLibuvEvents *)privdata;
    if (p->events) uv_poll_start(&p->handle, p->events, navsync_poll);
}
static void navsync_add_read(void *privdata) { redisLibuvAddRead(privdata); navsync_repoll(privdata); }
static void navsync_del_read(void *privdata) { redisLibuvDelRead(privdata); navsync_repoll(privdata); }
static void navsync_add_write(void *privdata) { redisLibuvAddWrite(privdata); navsync_repoll(privdata); }
static void navsync_del_write(void *privdata) { redisLibuvDelWrite(privdata); navsync_repoll(privdata); }

int navsync_redis_attach(redisAsyncContext *context, void *uv_loop) {
    int rc = redisLibuvAttach(context, (uv_loop_t *)uv_loop);
    if (rc != REDIS_OK) return rc;
    context->ev.addRead = navsync_add_read;
    context->ev.delRead = navsync_del_read;
    context->ev.addWrite = navsync_add_write;
    context->ev.delWrite = navsync_del_write;
    return REDIS_OK;
}
