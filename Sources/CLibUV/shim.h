#ifndef NAVSYNC_CLIBUV_SHIM_H
#define NAVSYNC_CLIBUV_SHIM_H
#include <uv.h>
#endif
