#ifndef NAVSYNC_CGLIBCMALLOC_SHIM_H
#define NAVSYNC_CGLIBCMALLOC_SHIM_H
/* glibc's malloc extensions (malloc_trim), which Swift's Glibc module leaves out. */
#include <malloc.h>
#endif
