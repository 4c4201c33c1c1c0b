/* harness.h - a tiny unit-test harness: CHECK macros count passes and
 * failures; TEST_MAIN prints "N passed, N failed" and sets the exit code.
 * Each tests/unit/test_*.c is its own binary. */
#ifndef VMSCOPE_HARNESS_H
#define VMSCOPE_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int harness_pass, harness_fail;

#define CHECK(cond) do { \
	if (cond) { harness_pass++; } else { harness_fail++; \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } \
	} while (0)

#define CHECK_INT(a, b) do { \
	long long va_ = (long long)(a), vb_ = (long long)(b); \
	if (va_ == vb_) { harness_pass++; } else { harness_fail++; \
		fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", \
			__FILE__, __LINE__, #a, va_, #b, vb_); } \
	} while (0)

#define CHECK_STR(a, b) do { \
	const char *sa_ = (a), *sb_ = (b); \
	if (sa_ && sb_ && strcmp(sa_, sb_) == 0) { harness_pass++; } else { harness_fail++; \
		fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", \
			__FILE__, __LINE__, #a, sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)"); } \
	} while (0)

/* substring check, for error messages */
#define CHECK_CONTAINS(hay, needle) do { \
	const char *h_ = (hay), *n_ = (needle); \
	if (h_ && strstr(h_, n_)) { harness_pass++; } else { harness_fail++; \
		fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", \
			__FILE__, __LINE__, h_ ? h_ : "(null)", n_); } \
	} while (0)

static inline int harness_report(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, harness_pass, harness_fail);
	return harness_fail ? 1 : 0;
}

#endif
