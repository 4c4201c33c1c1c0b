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

enum pf_status pf_next_kv(struct pf_iter *it, struct pf_kv *kv, bool colon)
{
	const char *line, *eol, *s, *e;

	for (;;) {
		if (it->p >= it->end)
			return PF_END;
		line = it->p;
		eol = memchr(line, '\n', (size_t)(it->end - line));
		if (!eol)
			eol = it->end;
		it->p = eol < it->end ? eol + 1 : it->end;
		s = line;
		while (s < eol && is_blank(*s))
			s++;
		if (s < eol)
			break;	/* not a blank line */
	}
	/* key */
	const char *k = s;
	while (s < eol && !is_blank(*s) && !(colon && *s == ':'))
		s++;
	kv->key = k;
	kv->klen = (size_t)(s - k);
	if (colon) {
		if (s >= eol || *s != ':')
			return PF_BAD;
		s++;
	}
	if (kv->klen == 0)
		return PF_BAD;
	while (s < eol && is_blank(*s))
		s++;
	e = s;
	while (e < eol && !is_blank(*e))
		e++;
	const char *numend = e;
	while (e < eol && is_blank(*e))
		e++;
	if (colon && eol - e >= 2 && e[0] == 'k' && e[1] == 'B') {
		e += 2;
		while (e < eol && is_blank(*e))
			e++;
	}
	if (e != eol)
		return PF_BAD;
	return parse_dec(s, numend, &kv->v);
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
