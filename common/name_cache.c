/* name_cache.c - per-thread memo of flattened-name ids (see name_cache.h). */
#include "name_cache.h"
#include "dict.h"

#include <string.h>

/* ~130 KiB of thread-local storage, touched only by threads that parse
 * samples (zero pages until then). */
__thread struct nc_slot nc_slots_[NC_NMAPS][NC_POSITIONS];
static __thread uint32_t fixed[NC_NFIXED];

void nc_store(struct nc_slot *s, const char *key, size_t len, uint32_t id)
{
	if (!s || !id || dict_id_staged(id) || len > NC_KEYMAX)
		return;	/* a staged id is one request's own (dict.h) */
	memcpy(s->key, key, len);
	s->key[len] = '\0';
	s->len = (uint8_t)len;
	s->id = id;
}

uint32_t nc_fixed(unsigned idx, const char *name, size_t len)
{
	if (idx >= NC_NFIXED)
		return dict_intern(name, len);
	if (fixed[idx])
		return fixed[idx];
	uint32_t id = dict_intern(name, len);
	if (!dict_id_staged(id))	/* a staged id is one request's own (dict.h) */
		fixed[idx] = id;
	return id;
}
