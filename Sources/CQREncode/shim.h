// libqrencode (libqrencode-dev): the QR code `navsync link` draws on a terminal.
#include <qrencode.h>
