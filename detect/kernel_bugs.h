/* kernel_bugs.h - the kernel release a sample came from and the upstream
 * bugs whose shape a detector recognises, so that an alert can say whether
 * the host's release is before, inside or after the bug's upstream range
 * and name the fix (docs/detectors.md, "Kernel-aware verdicts").
 *
 * Only upstream releases are known here: a distribution kernel (RHEL,
 * Ubuntu, Debian) carries backports under an older version number, so
 * every verdict says so. Every version and commit in the table was checked
 * against the kernel's history (the table in docs/detectors.md says how).
 */
#ifndef VMSCOPE_KERNEL_BUGS_H
#define VMSCOPE_KERNEL_BUGS_H

#include <stddef.h>

/* A release as major.minor.patch; all 0 when unknown. */
struct kver {
	int major, minor, patch;
};

/* Parses the leading "X.Y[.Z]" of a release string ("5.4.0-150-generic",
 * "6.1.0-18-amd64", "4.19.91-27.al7.x86_64"). NULL or unparsable: all 0.
 * Cannot fail. */
void kver_parse(struct kver *k, const char *release);

/* True when k is known. */
int kver_known(const struct kver *k);

/* <0, 0, >0 as k is before, equal to, after major.minor (patch ignored). */
int kver_cmp(const struct kver *k, int major, int minor);

enum kbug {
	KB_COLD_ANON,		/* seed 000: file-only reclaim while cold anon waits */
	KB_SCAN_ROUNDUP,	/* seed 004: scan size rounded up for online memcgs */
	KB_KSWAPD_WRITEBACK,	/* seed 003: kswapd writeback regression */
	KB_LAZYFREE_SWAPLESS,	/* seed 002: MADV_FREE acted as MADV_DONTNEED without swap */
	NKBUG
};

/* Writes one sentence about bug b for kernel k into buf (at most len
 * bytes, always terminated): where the release stands against the bug's
 * upstream range, the fix by its subject and release, and that
 * distribution kernels may carry backports. Unknown k: the fix alone.
 * Returns buf. */
const char *kbug_verdict(enum kbug b, const struct kver *k, char *buf, size_t len);

/* 1 when k is known and inside b's upstream range, else 0. */
int kbug_inside(enum kbug b, const struct kver *k);

#endif
