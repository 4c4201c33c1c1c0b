/* procfs.c - whole-file reads into a reused buffer and tolerant parsers. */
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void rbuf_release(struct rbuf *rb)
{
	free(rb->p);
	rb->p = NULL;
	rb->len = rb->cap = 0;
}

static int rbuf_grow(struct rbuf *rb)
{
	size_t ncap = rb->cap ? rb->cap * 2 : 16384;
	char *np;

	if (ncap > RBUF_MAX)
		return -EFBIG;
	np = realloc(rb->p, ncap);
	if (!np)
		return -ENOMEM;
	rb->p = np;
	rb->cap = ncap;
	return 0;
}

int rbuf_set(struct rbuf *rb, const char *p, size_t n)
{
	int rc;

	rb->len = 0;
	while (rb->cap < n + 1)
		if ((rc = rbuf_grow(rb)) < 0)
			return rc;
	memcpy(rb->p, p, n);
	rb->p[n] = '\0';
	rb->len = n;
	return 0;
}

/* Reads fd whole from offset 0 into rb (pread, so a kept descriptor needs
 * no lseek). Returns 0 or a negative errno; rb->len is set either way. */
static int read_all(struct rbuf *rb, int fd)
{
	int rc = 0;

	rb->len = 0;
	for (;;) {
		ssize_t n;
		if (rb->cap - rb->len < 4096 && (rc = rbuf_grow(rb)) < 0)
			break;
		n = pread(fd, rb->p + rb->len, rb->cap - rb->len - 1, (off_t)rb->len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		rb->len += (size_t)n;
		/* A short read is the end: /proc and cgroupfs files are seq_file
		 * or sysfs attributes, which fill the buffer as far as they can,
		 * and regular files (recorded trees) read short only at the end.
		 * This saves a read per file, a quarter of the agent's syscalls. */
		if ((size_t)n < rb->cap - (rb->len - (size_t)n) - 1)
			break;
	}
	if (rc < 0)
		rb->len = 0;
	return rc;
}

int pf_read_kept(struct rbuf *rb, int dirfd, const char *path, int *slot, struct pf_keep *k)
{
	int fd, rc;

	if (slot && *slot == PF_SLOT_ABSENT)
		return -ENOENT;
	if (slot && *slot >= 0) {
		rc = read_all(rb, *slot);
		if (rc == 0) {
			rb->p[rb->len] = '\0';
			return rb->len ? 0 : -ENODATA;
		}
		pf_keep_close(k, slot);	/* gone (ENODEV) or broken: open afresh */
		if (k)
			k->failed++;
	}
	rb->len = 0;
	bool keepable = slot && k && k->budget > 0;
	int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	bool stamped = slot && k && k->dir_stamped;
	fd = openat(dirfd, path, flags | (stamped ? O_NOFOLLOW : 0));
	if (fd < 0 && stamped && errno == ELOOP) {
		/* a symbolic link: read it, keep nothing, remember nothing */
		keepable = stamped = false;
		fd = openat(dirfd, path, flags);
	}
	if (fd < 0) {
		rc = -errno;
		if (rc == -ENOENT && stamped)
			*slot = PF_SLOT_ABSENT;
		return rc;
	}
	rc = read_all(rb, fd);
	if (rc == 0 && keepable) {
		*slot = fd;
		k->budget--;
		k->kept++;
	} else {
		close(fd);
	}
	if (rc < 0)
		return rc;
	rb->p[rb->len] = '\0';
	return rb->len ? 0 : -ENODATA;
}

void pf_keep_close(struct pf_keep *k, int *slot)
{
	if (!slot || *slot < 0) {
		if (slot)
			*slot = -1;	/* PF_SLOT_ABSENT: no descriptor, no budget */
		return;
	}
	close(*slot);
	*slot = -1;
	if (k) {
		k->budget++;
		k->kept--;
	}
}

int pf_read(struct rbuf *rb, int dirfd, const char *path)
{
	return pf_read_kept(rb, dirfd, path, NULL, NULL);
}

void pf_iter_init(struct pf_iter *it, const struct rbuf *rb)
{
	if (!rb->p) {	/* never read: nothing, still NUL-terminated */
		it->p = it->end = "";
		return;
	}
	it->p = rb->p;
	it->end = rb->p + rb->len;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Parses decimal digits [s, e) into an unsigned value; PF_RANGE when it
 * exceeds 2^63-1, PF_BAD when not all digits. */
static enum pf_status parse_dec(const char *s, const char *e, int64_t *v)
{
	uint64_t n = 0;

	if (s == e)
		return PF_BAD;
	for (; s < e; s++) {
		if (*s < '0' || *s > '9')
			return PF_BAD;
		if (n > ((uint64_t)INT64_MAX - (uint64_t)(*s - '0')) / 10) {
			/* keep validating the digits so "123abc" stays PF_BAD */
			for (s++; s < e; s++)
				if (*s < '0' || *s > '9')
					return PF_BAD;
			return PF_RANGE;
		}
		n = n * 10 + (uint64_t)(*s - '0');
	}
	*v = (int64_t)n;
	return PF_OK;
}

/* Character classes for pf_next_kv's single pass over a line. */
enum { CL_BLANK = 1, CL_NL = 2, CL_DIGIT = 4, CL_COLON = 8, CL_NUL = 16 };
static const unsigned char cls[256] = {
	['\0'] = CL_NUL, [':'] = CL_COLON, [' '] = CL_BLANK, ['\t'] = CL_BLANK,
	['\r'] = CL_BLANK, ['\v'] = CL_BLANK, ['\f'] = CL_BLANK, ['\n'] = CL_NL,
	['0'] = CL_DIGIT, ['1'] = CL_DIGIT, ['2'] = CL_DIGIT, ['3'] = CL_DIGIT, ['4'] = CL_DIGIT,
	['5'] = CL_DIGIT, ['6'] = CL_DIGIT, ['7'] = CL_DIGIT, ['8'] = CL_DIGIT, ['9'] = CL_DIGIT,
};

/* One pass over the line (it runs for every counter of every cgroup, the
 * agent's hottest loop: see docs/agent.md, Footprint). The rules are those
 * of the line-at-a-time form it replaced: blanks are is_blank()'s, a key
 * ends at a blank (or ':'), a value is one token of digits, optionally
 * followed by "kB" (colon form), and anything else on the line makes it
 * PF_BAD. The loops need no bounds check: the buffer ends with a NUL (see
 * pf_iter_init), which no loop passes; a NUL inside the text is what it
 * was before, a byte of the key or a malformed value. A value of at most
 * 18 digits cannot exceed 2^63-1, so it is converted without overflow
 * checks, and handed back as printed (kv->num) when that is already its
 * JSON form (no leading zero). */
static inline __attribute__((always_inline)) enum pf_status
next_kv(struct pf_iter *it, struct pf_kv *kv, const bool colon)
{
	const unsigned char *p = (const unsigned char *)it->p;
	const unsigned char *end = (const unsigned char *)it->end;

	kv->num = NULL;
	kv->nlen = 0;
	for (;;) {	/* blanks and blank lines */
		while (cls[*p] & CL_BLANK)
			p++;
		if (p >= end) {
			it->p = it->end;
			return PF_END;
		}
		if (*p != '\n')
			break;
		p++;
	}
	const unsigned char *k = p;
	const unsigned char stop = CL_BLANK | CL_NL | CL_NUL | (colon ? CL_COLON : 0);
	for (;;) {
		while (!(cls[*p] & stop))
			p++;
		if (*p || p >= end)
			break;
		p++;	/* a NUL inside the text: part of the key */
	}
	kv->key = (const char *)k;
	kv->klen = (size_t)(p - k);
	if (colon) {
		if (p >= end || *p != ':')
			goto bad;
		p++;
	}
	if (kv->klen == 0)
		goto bad;
	while (cls[*p] & CL_BLANK)
		p++;
	const unsigned char *num = p;
	uint64_t n = 0;
	while (cls[*p] & CL_DIGIT)
		n = n * 10 + (uint64_t)(*p++ - '0');	/* may wrap past 19 digits: see below */
	size_t nlen = (size_t)(p - num);
	if (p < end && !(cls[*p] & (CL_BLANK | CL_NL)))
		goto bad;	/* the token is not all digits */
	while (cls[*p] & CL_BLANK)
		p++;
	if (colon && end - p >= 2 && p[0] == 'k' && p[1] == 'B') {
		p += 2;
		while (cls[*p] & CL_BLANK)
			p++;
	}
	if (p < end && *p != '\n')
		goto bad;
	it->p = (const char *)(p < end ? p + 1 : end);
	if (nlen == 0)
		return PF_BAD;
	if (nlen > 18)
		return parse_dec((const char *)num, (const char *)num + nlen, &kv->v);
	kv->v = (int64_t)n;
	if (num[0] != '0' || nlen == 1) {
		kv->num = (const char *)num;
		kv->nlen = nlen;
	}
	return PF_OK;
bad:
	p = memchr(p, '\n', (size_t)(end - p));
	it->p = p ? (const char *)p + 1 : it->end;
	return PF_BAD;
}

enum pf_status pf_next_kv(struct pf_iter *it, struct pf_kv *kv, bool colon)
{
	/* two copies, each with its separators known at compile time */
	return colon ? next_kv(it, kv, true) : next_kv(it, kv, false);
}

/* Validates a PSI average as printed ("12.34"): digits, optionally a dot
 * and digits, at most 100. */
static bool psi_avg_ok(const char *s, size_t n)
{
	size_t i = 0, ip = 0;
	unsigned whole = 0;

	if (n == 0 || n >= sizeof(((struct psi_line *)0)->avg[0]))
		return false;
	while (i < n && s[i] >= '0' && s[i] <= '9') {
		whole = whole * 10 + (unsigned)(s[i] - '0');
		if (whole > 1000)
			return false;
		i++;
		ip++;
	}
	/* "02.33" is no JSON number (it is copied into the sample as is;
	 * fuzzing found it) and no kernel prints it */
	if (ip == 0 || (ip > 1 && s[0] == '0'))
		return false;
	bool frac_nonzero = false;
	if (i < n) {
		if (s[i] != '.' || i + 1 == n)
			return false;
		for (i++; i < n; i++) {
			if (s[i] < '0' || s[i] > '9')
				return false;
			if (s[i] != '0')
				frac_nonzero = true;
		}
	}
	return whole < 100 || (whole == 100 && !frac_nonzero);
}

int pf_parse_psi(const struct rbuf *rb, struct psi_res *out, bool *total_range)
{
	static const char *const avgs[] = { "avg10=", "avg60=", "avg300=" };
	struct pf_iter it;
	int lines = 0;

	memset(out, 0, sizeof(*out));
	*total_range = false;
	pf_iter_init(&it, rb);
	while (it.p < it.end) {
		const char *line = it.p;
		const char *eol = memchr(line, '\n', (size_t)(it.end - line));
		if (!eol)
			eol = it.end;
		it.p = eol < it.end ? eol + 1 : it.end;

		const char *s = line;
		while (s < eol && is_blank(*s))
			s++;
		struct psi_line *pl;
		if (eol - s >= 4 && !memcmp(s, "some", 4))
			pl = &out->some;
		else if (eol - s >= 4 && !memcmp(s, "full", 4))
			pl = &out->full;
		else
			continue;
		s += 4;
		struct psi_line tmp;
		memset(&tmp, 0, sizeof(tmp));
		bool ok = true;
		while (s < eol && ok) {
			while (s < eol && is_blank(*s))
				s++;
			if (s >= eol)
				break;
			const char *t = s;
			while (t < eol && !is_blank(*t))
				t++;
			size_t tl = (size_t)(t - s);
			bool matched = false;
			for (int a = 0; a < 3; a++) {
				size_t al = strlen(avgs[a]);
				if (tl > al && !memcmp(s, avgs[a], al)) {
					matched = true;
					if (!psi_avg_ok(s + al, tl - al)) {
						ok = false;
						break;
					}
					memcpy(tmp.avg[a], s + al, tl - al);
					tmp.avg[a][tl - al] = '\0';
				}
			}
			if (!matched && tl > 6 && !memcmp(s, "total=", 6)) {
				enum pf_status st = parse_dec(s + 6, t, &tmp.total);
				if (st == PF_OK)
					tmp.has_total = true;
				else if (st == PF_RANGE)
					*total_range = true;
				else
					ok = false;
			}
			/* unknown tokens (a future kernel's) are ignored */
			s = t;
		}
		if (!ok || (!tmp.avg[0][0] && !tmp.avg[1][0] && !tmp.avg[2][0] && !tmp.has_total))
			continue;
		tmp.present = true;
		*pl = tmp;
		lines++;
	}
	return lines ? 0 : -1;
}

int pf_parse_u63(const struct rbuf *rb, bool allow_hex, int64_t *v)
{
	const char *s = rb->p, *e = rb->p + rb->len;

	while (s < e && (is_blank(*s) || *s == '\n'))
		s++;
	while (e > s && (is_blank(e[-1]) || e[-1] == '\n'))
		e--;
	if (e - s == 3 && !memcmp(s, "max", 3))
		return 1;
	if (allow_hex && e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		uint64_t n = 0;
		for (s += 2; s < e; s++) {
			int d;
			if (*s >= '0' && *s <= '9')
				d = *s - '0';
			else if (*s >= 'a' && *s <= 'f')
				d = *s - 'a' + 10;
			else if (*s >= 'A' && *s <= 'F')
				d = *s - 'A' + 10;
			else
				return -EINVAL;
			if (n >> 59)
				return -ERANGE;
			n = n * 16 + (uint64_t)d;
		}
		if (n > (uint64_t)INT64_MAX)
			return -ERANGE;
		*v = (int64_t)n;
		return 0;
	}
	switch (parse_dec(s, e, v)) {
	case PF_OK:
		return 0;
	case PF_RANGE:
		return -ERANGE;
	default:
		return -EINVAL;
	}
}

int pf_parse_yn(const struct rbuf *rb, int64_t *v)
{
	const char *s = rb->p, *e = rb->p + rb->len;

	while (s < e && (is_blank(*s) || *s == '\n'))
		s++;
	while (e > s && (is_blank(e[-1]) || e[-1] == '\n'))
		e--;
	if (e - s != 1)
		return -EINVAL;
	if (*s == 'Y' || *s == 'y' || *s == '1')
		*v = 1;
	else if (*s == 'N' || *s == 'n' || *s == '0')
		*v = 0;
	else
		return -EINVAL;
	return 0;
}

int pf_first_line(const struct rbuf *rb, char *out, size_t outlen)
{
	const char *s = rb->p, *e;

	if (!rb->len)
		return -1;
	e = memchr(s, '\n', rb->len);
	if (!e)
		e = rb->p + rb->len;
	while (s < e && is_blank(*s))
		s++;
	while (e > s && is_blank(e[-1]))
		e--;
	if (e == s || (size_t)(e - s) >= outlen)
		return -1;
	memcpy(out, s, (size_t)(e - s));
	out[e - s] = '\0';
	return (int)(e - s);
}
