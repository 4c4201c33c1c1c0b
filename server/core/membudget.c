/* membudget.c - the process-wide in-flight byte budget (see membudget.h). */
#include "membudget.h"

void membudget_init(struct membudget *mb, size_t limit)
{
	atomic_init(&mb->used, 0);
	atomic_init(&mb->refused, 0);
	mb->limit = limit;
	mb->lone = 0;
}

void membudget_set_lone(struct membudget *mb, size_t lone)
{
	mb->lone = lone;
}

/* The room kept for small holders past the limit (membudget.h). */
static bool small_lane(const struct membudget *mb, size_t cur, size_t n, size_t held, size_t small)
{
	size_t lane = (mb->lone > mb->limit ? mb->lone : mb->limit) + mb->limit / 4;

	return n <= small && held <= small - n && cur <= lane && n <= lane - cur;
}

bool membudget_take(struct membudget *mb, size_t n, size_t held)
{
	return membudget_take_small(mb, n, held, mb ? mb->limit / 64 : 0);
}

bool membudget_take_small(struct membudget *mb, size_t n, size_t held, size_t small_max)
{
	if (!mb || n == 0)
		return true;
	size_t cur = atomic_load(&mb->used);
	for (;;) {
		if (mb->limit && cur != held && (n > mb->limit || cur > mb->limit - n) && !small_lane(mb, cur, n, held, small_max)) {
			atomic_fetch_add(&mb->refused, 1);
			return false;
		}
		if (atomic_compare_exchange_weak(&mb->used, &cur, cur + n))
			return true;
	}
}

void membudget_force(struct membudget *mb, size_t n)
{
	if (mb && n)
		atomic_fetch_add(&mb->used, n);
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
