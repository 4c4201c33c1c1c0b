/* membudget.c - the process-wide in-flight byte budget (see membudget.h). */
#include "membudget.h"

void membudget_init(struct membudget *mb, size_t limit)
{
	atomic_init(&mb->used, 0);
	atomic_init(&mb->refused, 0);
	mb->limit = limit;
}

bool membudget_take(struct membudget *mb, size_t n, size_t held)
{
	if (!mb || n == 0)
		return true;
	size_t cur = atomic_load(&mb->used);
	for (;;) {
		if (mb->limit && cur != held && (n > mb->limit || cur > mb->limit - n)) {
			atomic_fetch_add(&mb->refused, 1);
			return false;
		}
		if (atomic_compare_exchange_weak(&mb->used, &cur, cur + n))
			return true;
	}
}

void membudget_give(struct membudget *mb, size_t n)
{
	if (mb && n)
		atomic_fetch_sub(&mb->used, n);
}

size_t membudget_used(const struct membudget *mb)
{
	return mb ? atomic_load(&((struct membudget *)mb)->used) : 0;
}
