#ifndef NAVSYNC_CNCURSES_SHIM_H
#define NAVSYNC_CNCURSES_SHIM_H
/* Wide-character API (wget_wch, add_wch) must be visible without the
   _XOPEN_SOURCE flag that SwiftPM refuses to pass. */
#define NCURSES_WIDECHAR 1
#include <locale.h>
#include <ncurses.h>

/* A_* attributes, ACS_* and KEY_F() are macros Swift cannot import. */
static inline int navsync_attr_bold(void) { return (int)A_BOLD; }
static inline int navsync_attr_reverse(void) { return (int)A_REVERSE; }
static inline int navsync_attr_dim(void) { return (int)A_DIM; }
static inline int navsync_key_f(int n) { return KEY_F(n); }
#endif
