// wslay: RFC 6455 framing with no IO of its own (Debian libwslay-dev, no .pc file).
#include <wslay/wslay.h>
