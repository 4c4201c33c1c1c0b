/* procfs.h - reading and parsing the kernel's text files (/proc, cgroupfs).
 *
 * Files are read whole into one caller-owned, reused buffer (struct rbuf), so
 * a sample costs no allocation once the buffer has grown to the largest
 * file. Parsers are tolerant of what real kernels and recorded trees do:
 * runs of spaces or tabs, a last line without a newline, CR before LF. A
 * value above 2^63-1 (a kernel printing a negative per-cpu drift as
 * unsigned, e.g. 18446744073709551615) is reported as PF_RANGE so that the
 * caller drops it: the contract's integers are signed 64-bit.
 */
#ifndef VMSCOPE_AGENT_PROCFS_H
#define VMSCOPE_AGENT_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RBUF_MAX (4u << 20)	/* no kernel file we read is anywhere near this */

/* A growable read buffer; p is owned (free with rbuf_release). */
struct rbuf {
	char *p;
	size_t len, cap;
};

void rbuf_release(struct rbuf *rb);

/* Fills rb with n bytes (NUL-terminated, rb->len = n), as if read from a
 * file holding them: cgroup.c answers cached files this way. 0, or -ENOMEM
 * / -EFBIG (then rb->len is 0). */
int rbuf_set(struct rbuf *rb, const char *p, size_t n);

/* Reads the whole file `path` (relative to dirfd, or absolute / AT_FDCWD)
 * into rb, NUL-terminated, setting rb->len. Returns 0, or a negative errno
 * (-ENOENT when it vanished, -EACCES, -EOPNOTSUPP for PSI with psi=0,
 * -EFBIG over RBUF_MAX, -ENOMEM). An empty file returns -ENODATA: to the
 * contract an empty file is the same as an absent one. */
int pf_read(struct rbuf *rb, int dirfd, const char *path);

/* File descriptors kept open between samples, and how many more may be.
 * Reading a file again through a kept descriptor is one pread() instead of
 * openat+read+close: the kernel regenerates a seq_file or sysfs attribute
 * when it is read from offset 0, and a regular file (a recorded tree)
 * rewritten in place shows its new bytes. A regular file REPLACED (renamed
 * over), created or removed is not seen through a kept descriptor: the
 * walker (cgroup.c) closes a directory's kept files when the directory's
 * timestamps say its entries changed. The price is kernel memory: a
 * seq_file keeps its buffer (a page) while open. */
struct pf_keep {
	int budget;		/* descriptors that may still be kept; 0: none */
	int kept;		/* descriptors kept now */
	bool dir_stamped;	/* set by the walker while the directory being
				 * read is a recorded tree's, validated by its
				 * timestamps: a file found absent is marked
				 * PF_SLOT_ABSENT (not looked for again until
				 * the walker clears the slot), and a file
				 * reached through a symbolic link is not kept
				 * (its target's directory is not watched) */
	unsigned long failed;	/* kept descriptors whose read failed (and
				 * were closed and the file opened afresh),
				 * ever: cgroup.c drops what it cached of a
				 * directory whose files were removed */
};

/* A slot value: the file was absent (ENOENT) when last looked for, and its
 * directory has not changed since (costs no descriptor). */
#define PF_SLOT_ABSENT (-2)

/* pf_read, reusing or filling *slot (a kept descriptor of dirfd/path, -1
 * when none): with a kept descriptor the file is read again with pread at
 * offset 0; when that fails (a removed cgroup's files answer ENODEV) the
 * descriptor is closed and the file opened afresh. A freshly opened file
 * that was read is kept in *slot while k has budget, else closed. A slot
 * holding PF_SLOT_ABSENT answers -ENOENT without a system call. slot and k
 * may be NULL (plain pf_read). */
int pf_read_kept(struct rbuf *rb, int dirfd, const char *path, int *slot, struct pf_keep *k);

/* Closes a kept descriptor (if any) and gives its budget back; an absent
 * mark is cleared. */
void pf_keep_close(struct pf_keep *k, int *slot);

/* Line iteration over a buffer filled by pf_read. */
struct pf_iter {
	const char *p, *end;
};

/* rb must be NUL-terminated at rb->len, as pf_read leaves it (the parsers'
 * loops stop at that NUL rather than checking bounds). */
void pf_iter_init(struct pf_iter *it, const struct rbuf *rb);

enum pf_status {
	PF_END = 0,	/* no more lines */
	PF_OK,		/* key and value filled */
	PF_RANGE,	/* key filled, value above 2^63-1: drop it */
	PF_BAD,		/* malformed line (key may be empty): skip it */
};

struct pf_kv {
	const char *key;	/* points into the buffer, not NUL-terminated */
	size_t klen;
	int64_t v;
	const char *num;	/* PF_OK: v's digits as printed when that is also
				 * their JSON form (no leading zero), else NULL */
	size_t nlen;
};

/* Next "key value" line (vmstat, memory.stat, memory.events). With colon
 * set, the meminfo form "Key:   value kB" (the unit is optional). Blank
 * lines are skipped. */
enum pf_status pf_next_kv(struct pf_iter *it, struct pf_kv *kv, bool colon);

/* One PSI line ("some avg10=0.00 avg60=0.00 avg300=0.00 total=0"). The
 * averages are kept as the kernel printed them (validated as a decimal
 * number from 0 to 100) so they are emitted without float rounding. */
struct psi_line {
	bool present;
	bool has_total;
	char avg[3][16];	/* avg10, avg60, avg300; "" when absent */
	int64_t total;
};

struct psi_res {
	struct psi_line some, full;
};

/* Parses a pressure file already in rb. Returns 0 when at least one line was
 * understood, -1 otherwise. Sets *total_range when a total was above
 * 2^63-1 (and so dropped). */
int pf_parse_psi(const struct rbuf *rb, struct psi_res *out, bool *total_range);

/* Parses a one-value file (memory.current, memory.max, proc/sys/vm files):
 * returns 0 with *v set, 1 when it reads "max", or -EINVAL (not a number),
 * -ERANGE (above 2^63-1). Hex with 0x is accepted when allow_hex. */
int pf_parse_u63(const struct rbuf *rb, bool allow_hex, int64_t *v);

/* Parses a kernel boolean parameter (a module's bool param prints "Y" or
 * "N"; "1"/"0" and lower case accepted), blanks and newline around it:
 * returns 0 with *v 1 or 0, or -EINVAL. */
int pf_parse_yn(const struct rbuf *rb, int64_t *v);

/* Copies the first line of rb, trimmed, into out (at most outlen-1 bytes).
 * Returns its length, or -1 when empty or longer than outlen-1. */
int pf_first_line(const struct rbuf *rb, char *out, size_t outlen);

#endif
