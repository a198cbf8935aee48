// nettle: SHA-1 and base64 for the WebSocket handshake's accept key.
// The short names (sha1_init ...) are macros; Swift sees the nettle_ ones.
#include <nettle/sha1.h>
#include <nettle/base64.h>
