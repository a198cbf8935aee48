/*
 * A disk whose flushes fail, for the end-to-end test of a failed fsync
 * (Tests/EndToEndTests/FailedFsyncTests.swift). Loaded into navsyncd with
 * LD_PRELOAD: while the file named by NAVSYNC_FAIL_FSYNC_WHILE exists,
 * fsync(2) and fdatasync(2) fail with EIO without touching the disk; when it
 * is removed they work again. Everything else is the real libc.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

static int disk_is_failing(void) {
    const char *flag = getenv("NAVSYNC_FAIL_FSYNC_WHILE");
    return flag != NULL && access(flag, F_OK) == 0;
}

int fsync(int fd) {
    static int (*real_fsync)(int);
    if (disk_is_failing()) {
        errno = EIO;
        return -1;
    }
    if (real_fsync == NULL) real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    return real_fsync(fd);
}

int fdatasync(int fd) {
    static int (*real_fdatasync)(int);
    if (disk_is_failing()) {
        errno = EIO;
        return -1;
    }
    if (real_fdatasync == NULL) real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    return real_fdatasync(fd);
}
