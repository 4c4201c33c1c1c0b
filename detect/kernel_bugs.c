/* kernel_bugs.c - release parsing and the upstream-bug table (see
 * kernel_bugs.h). The facts and what each was checked against are listed
 * in docs/detectors.md ("Kernel facts"); change both together. */
#include "kernel_bugs.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Reads up to 4 decimal digits at *p, advancing it; -1 when none. (No
 * sscanf: this runs for every sample fed.) */
static int read_num(const char **p)
{
	int v = 0, n = 0;

	while (**p >= '0' && **p <= '9' && n < 4) {
		v = v * 10 + (**p - '0');
		(*p)++;
		n++;
	}
	return n ? v : -1;
}

void kver_parse(struct kver *k, const char *release)
{
	const char *p = release;

	memset(k, 0, sizeof(*k));
	if (!p)
		return;
	int ma = read_num(&p);
	if (ma < 2 || ma > 99 || *p != '.')
		return;
	p++;
	int mi = read_num(&p);
	if (mi < 0)
		return;
	int pa = 0;
	if (*p == '.') {
		p++;
		pa = read_num(&p);
		if (pa < 0)
			pa = 0;
	}
	k->major = ma;
	k->minor = mi;
	k->patch = pa;
}

int kver_known(const struct kver *k)
{
	return k->major > 0;
}

int kver_cmp(const struct kver *k, int major, int minor)
{
	if (k->major != major)
		return k->major < major ? -1 : 1;
	return k->minor < minor ? -1 : k->minor > minor ? 1 : 0;
}

/* One upstream bug: the releases [from, to) that have it upstream, the
 * commit that ended it, and where stable received it. */
struct kbug_info {
	int from_major, from_minor;	/* first release with the bug */
	int to_major, to_minor;		/* first release with the fix */
	const char *what;		/* the bug, short */
	const char *fix;		/* the fix: subject and commit */
	const char *stable;		/* the stable trees that received it, or NULL */
	/* verified stable releases with the fix; a series before the upstream
	 * range listed here took the bug as a backport first */
	struct { int major, minor, patch; } stable_fix[4];
};

static const struct kbug_info bugs[NKBUG] = {
	[KB_COLD_ANON] = {
		3, 8, 5, 3,
		"file-only reclaim while file pages refault (e9868505987a, \"mm,vmscan: only evict file "
		"pages when we have plenty\")",
		"\"mm: vmscan: scan anonymous pages on file refaults\" (2c012a4ad1a2)",
		"Cc stable 4.12+: in 4.14.135, 4.19.62, 5.1.21 and 5.2.3",
		{ { 4, 14, 135 }, { 4, 19, 62 }, { 5, 1, 21 }, { 5, 2, 3 } },
	},
	[KB_SCAN_ROUNDUP] = {
		4, 20, 5, 6,
		"scan-size round-up for online memory cgroups (68600f623d69, \"mm: don't miss the last "
		"page because of round-off error\")",
		"\"mm/vmscan.c: don't round up scan size for online memory cgroup\" (76073c646f5f)",
		"Cc stable 4.20+: in 5.4.23 and 5.5.7; 68600f623d69 had been backported to 4.14 and 4.19, "
		"which received the fix in 4.14.172 and 4.19.107",
		{ { 5, 4, 23 }, { 5, 5, 7 }, { 4, 14, 172 }, { 4, 19, 107 } },
	},
	[KB_KSWAPD_WRITEBACK] = {
		4, 0, 4, 11,
		"kswapd writeback regression (dirty pages at the inactive LRU tail, written or waited on "
		"by reclaim)",
		"the series \"mm: vmscan: fix kswapd writeback regression\" (\"mm: vmscan: move dirty pages "
		"out of the way until they're flushed\", c55e8d035b28)",
		NULL,
	},
	[KB_LAZYFREE_SWAPLESS] = {
		4, 5, 4, 12,
		"MADV_FREE acting as MADV_DONTNEED without swap",
		"\"mm: enable MADV_FREE for swapless system\" (93e06c7a6453), the series that also added "
		"pglazyfree/pglazyfreed",
		NULL,
	},
};

/* The stable release of k's series that received the fix (into buf), or
 * NULL when its series is not listed. *has it: k is that release or later. */
static const char *stable_series(const struct kbug_info *i, const struct kver *k, bool *has, char *buf,
				 size_t len)
{
	for (size_t n = 0; n < sizeof(i->stable_fix) / sizeof(i->stable_fix[0]); n++) {
		if (i->stable_fix[n].major > 0 && i->stable_fix[n].major == k->major &&
		    i->stable_fix[n].minor == k->minor) {
			*has = k->patch >= i->stable_fix[n].patch;
			snprintf(buf, len, "%d.%d.%d", k->major, k->minor, i->stable_fix[n].patch);
			return buf;
		}
	}
	*has = false;
	return NULL;
}

/* The stable release of k's series known to carry the fix when k has it, or NULL. */
static const char *stable_fixed(const struct kbug_info *i, const struct kver *k, char *buf, size_t len)
{
	bool has;
	const char *r = stable_series(i, k, &has, buf, len);
	return has ? r : NULL;
}

/* k is in a series before the upstream range that took the bug as a
 * backport and is older than that series' fix. */
static bool backported_bug(const struct kbug_info *i, const struct kver *k, char *buf, size_t len)
{
	bool has;
	return kver_cmp(k, i->from_major, i->from_minor) < 0 && stable_series(i, k, &has, buf, len) && !has;
}

int kbug_inside(enum kbug b, const struct kver *k)
{
	const struct kbug_info *i = &bugs[b];
	char buf[32];

	if (!kver_known(k))
		return 0;
	if (backported_bug(i, k, buf, sizeof(buf)))
		return 1;
	return kver_cmp(k, i->from_major, i->from_minor) >= 0 && kver_cmp(k, i->to_major, i->to_minor) < 0 &&
	       !stable_fixed(i, k, buf, sizeof(buf));
}

const char *kbug_verdict(enum kbug b, const struct kver *k, char *buf, size_t len)
{
	const struct kbug_info *i = &bugs[b];
	char rel[32];
	const char *where;

	if (!len)
		return buf;
	if (!kver_known(k)) {
		snprintf(buf, len, "upstream fix for the %s: %s in %d.%d%s%s", i->what, i->fix, i->to_major,
			 i->to_minor, i->stable ? "; " : "", i->stable ? i->stable : "");
		return buf;
	}
	char fixed_in[32];
	snprintf(rel, sizeof(rel), "%d.%d.%d", k->major, k->minor, k->patch);
	if (backported_bug(i, k, fixed_in, sizeof(fixed_in))) {
		snprintf(buf, len, "kernel %s is before the upstream range of the %s (%d.%d up to %d.%d), but its "
			 "stable series took the bug as a backport and the fix only in %s, so it may have it: %s; "
			 "distribution kernels may carry backports",
			 rel, i->what, i->from_major, i->from_minor, i->to_major, i->to_minor, fixed_in, i->fix);
		return buf;
	}
	if (kver_cmp(k, i->from_major, i->from_minor) < 0)
		where = "is before";
	else if (kver_cmp(k, i->to_major, i->to_minor) >= 0)
		where = "is after";
	else if (stable_fixed(i, k, fixed_in, sizeof(fixed_in)))
		where = "is inside, but its stable series has the fix since";
	else
		where = "is inside";
	if (strcmp(where, "is inside, but its stable series has the fix since") == 0) {
		snprintf(buf, len, "kernel %s is inside the upstream range of the %s (%d.%d up to %d.%d), but its "
			 "stable series has the fix since %s: %s; distribution kernels may carry backports",
			 rel, i->what, i->from_major, i->from_minor, i->to_major, i->to_minor, fixed_in, i->fix);
		return buf;
	}
	snprintf(buf, len, "kernel %s %s the upstream range of the %s (%d.%d up to %d.%d, fixed by %s%s%s); "
		 "distribution kernels may carry backports",
		 rel, where, i->what, i->from_major, i->from_minor, i->to_major, i->to_minor, i->fix,
		 i->stable ? "; " : "", i->stable ? i->stable : "");
	return buf;
}
