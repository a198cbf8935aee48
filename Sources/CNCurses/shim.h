#ifndef NAVSYNC_CNCURSES_SHIM_H
#define NAVSYNC_CNCURSES_SHIM_H
/* Wide-character API (wget_wch, add_wch) must be visible without the
   _XOPEN_SOURCE flag that SwiftPM refuses to pass. */
#define NCURSES_WIDECHAR 1
#include <langinfo.h>
#include <locale.h>
#include <ncurses.h>
#include <strings.h>
#include <sys/ioctl.h>

/* A_* attributes, ACS_* and KEY_F() are macros Swift cannot import. */
static inline int navsync_attr_bold(void) { return (int)A_BOLD; }
static inline int navsync_attr_reverse(void) { return (int)A_REVERSE; }
static inline int navsync_attr_dim(void) { return (int)A_DIM; }
static inline int navsync_key_f(int n) { return KEY_F(n); }

/* stdscr is a C global, which Swift 6 cannot read safely; the client
   asks for it once, right after newterm, and keeps the pointer. */
static inline WINDOW *navsync_stdscr(void) { return stdscr; }

/* Line-drawing characters by their VT100 letter ('l' upper left corner,
   'q' horizontal line...); ACS_* are macros over a global table. */
static inline chtype navsync_acs(char letter) { return NCURSES_ACS(letter); }

/* The terminal's size as the kernel knows it (ioctl is variadic, so Swift
   cannot call it). Returns 0 on success, -1 otherwise. */
static inline int navsync_terminal_size(int fd, int *rows, int *cols) {
    struct winsize size;
    if (ioctl(fd, TIOCGWINSZ, &size) != 0 || size.ws_row == 0 || size.ws_col == 0) return -1;
    *rows = size.ws_row;
    *cols = size.ws_col;
    return 0;
}

/* Columns a character takes (0, 1 or 2; -1 if unprintable) in the current
   locale. glibc declares wcwidth only for _XOPEN_SOURCE, which SwiftPM
   does not pass, so it is declared here. */
extern int wcwidth(wchar_t c);
static inline int navsync_wcwidth(unsigned int c) { return wcwidth((wchar_t)c); }

/* True when the locale's character set is UTF-8 (after setlocale). */
static inline int navsync_locale_is_utf8(void) {
    const char *codeset = nl_langinfo(CODESET);
    return codeset && strcasecmp(codeset, "UTF-8") == 0;
}
#endif
