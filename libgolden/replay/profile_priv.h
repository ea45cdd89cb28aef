/* What the routing profile and the expert placement share inside replay/: the layer number of
 * a router tap's name. */
#ifndef LG_REPLAY_PROFILE_PRIV_H
#define LG_REPLAY_PROFILE_PRIV_H
#include <stdbool.h>
#include <stdint.h>

/* "layers/N/router/..." (lay points at "layers/"): N, decimal digits only, 0..2^31-1, into
 * *layer. false for any other text. */
bool lg_router_layer(const char *lay, int64_t *layer);

#endif
