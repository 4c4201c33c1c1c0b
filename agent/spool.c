/* spool.c - append-only segment files with a persisted head (see spool.h). */
#include "spool.h"
#include "alog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define SEG_PREFIX "seg-"
#define SEG_NAME_LEN 24		/* "seg-" + 20 digits */

static void seg_name(char out[SEG_NAME_LEN + 1], uint64_t seq)
{
	snprintf(out, SEG_NAME_LEN + 1, SEG_PREFIX "%020" PRIu64, seq);
}

/* mkdir -p with mode 0700 for what it creates. */
static int mkdir_p(const char *dir)
{
	char p[4096];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		char c = p[i];
		p[i] = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			return -errno;
		p[i] = c;
	}
	return 0;
}

static int cmp_seg(const void *a, const void *b)
{
	const struct spool_seg *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int push_seg(struct spool *s, uint64_t seq, uint64_t size)
{
	if (s->nsegs == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 16;
		struct spool_seg *n = realloc(s->segs, nc * sizeof(*n));
		if (!n)
			return -1;
		s->segs = n;
		s->cap = nc;
	}
	s->segs[s->nsegs].seq = seq;
	s->segs[s->nsegs].size = size;
	s->nsegs++;
	s->total += size;
	return 0;
}

/* Deletes the oldest segment from disk and the table. */
static void drop_first_seg(struct spool *s)
{
	char name[SEG_NAME_LEN + 1];

	seg_name(name, s->segs[0].seq);
	if (unlinkat(s->dirfd, name, 0) < 0 && errno != ENOENT)
		alog_warn("could not delete spool segment %s/%s: %s", s->dir, name, strerror(errno));
	s->total -= s->segs[0].size;
	memmove(s->segs, s->segs + 1, (s->nsegs - 1) * sizeof(*s->segs));
	s->nsegs--;
	if (s->nsegs == 0 && s->cur_fd >= 0) {
		close(s->cur_fd);
		s->cur_fd = -1;
	}
}

/* Writes the head in place: fixed width, so one pwrite at offset 0 always
 * replaces the whole text. A process crash cannot tear a pwrite, and no
 * fsync: after a power loss an older (or unreadable, then the oldest) head
 * only means re-posting samples the server already has, which it counts as
 * accepted duplicates. A write+fsync+rename per delivery would be the
 * costliest step of an agent with few cgroups. */
static int persist_head(struct spool *s)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "%020" PRIu64 " %020" PRIu64 "\n", s->head.seq,
			 s->head.off);

	if (s->headfd < 0)
		s->headfd = openat(s->dirfd, "head", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (s->headfd < 0 || pwrite(s->headfd, buf, (size_t)n, 0) != n)
		goto fail;
	if (s->head_failing)
		alog_info("spool %s: the head is persisted again", s->dir);
	s->head_failing = false;
	return 0;
fail:
	/* once per failing period: an unwritable spool fails at every ack */
	if (!s->head_failing)
		alog_error("could not persist the spool head in %s: %s (delivered samples may be posted "
			   "again after a restart; the server keeps one of each)", s->dir, strerror(errno));
	s->head_failing = true;
	return -1;
}

/* Drops segments the head has moved past; keeps the newest one (appended to). */
static void normalize(struct spool *s)
{
	while (s->nsegs > 0 && s->segs[0].seq < s->head.seq)
		drop_first_seg(s);
	while (s->nsegs > 1 && s->segs[0].seq == s->head.seq && s->head.off >= s->segs[0].size) {
		drop_first_seg(s);
		s->head.seq = s->segs[0].seq;
		s->head.off = 0;
	}
	if (s->nsegs > 0 && s->head.seq < s->segs[0].seq) {
		s->head.seq = s->segs[0].seq;
		s->head.off = 0;
	}
}

/* Cuts a torn last line (no '\n') off the newest segment. */
static int cut_torn(struct spool *s)
{
	struct spool_seg *last = &s->segs[s->nsegs - 1];
	char name[SEG_NAME_LEN + 1], buf[4096];
	uint64_t end = last->size;
	int fd;

	if (end == 0)
		return 0;
	seg_name(name, last->seq);
	fd = openat(s->dirfd, name, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (end > 0) {
		size_t chunk = end < sizeof(buf) ? (size_t)end : sizeof(buf);
		ssize_t r = pread(fd, buf, chunk, (off_t)(end - chunk));
		if (r != (ssize_t)chunk) {
			close(fd);
			return -1;
		}
		char *nl = memrchr(buf, '\n', chunk);
		if (nl) {
			end = end - chunk + (uint64_t)(nl - buf) + 1;
			break;
		}
		end -= chunk;
	}
	if (end != last->size) {
		alog_warn("spool segment %s/%s ended in a partial record (%" PRIu64 " bytes); cut off",
			  s->dir, name, last->size - end);
		if (ftruncate(fd, (off_t)end) < 0 || fsync(fd) < 0) {
			close(fd);
			return -1;
		}
		s->total -= last->size - end;
		last->size = end;
	}
	close(fd);
	return 0;
}

static uint64_t count_records(struct spool *s, size_t i, uint64_t off);

/* errno values that mean the spool's directory cannot be written now (as
 * opposed to a missing directory or a bug) */
static bool cannot_write(int e)
{
	return e == EROFS || e == EACCES || e == EPERM || e == EIO || e == ENOSPC || e == EDQUOT;
}

static int open_append(struct spool *s)
{
	char name[SEG_NAME_LEN + 1];

	seg_name(name, s->segs[s->nsegs - 1].seq);
	s->cur_fd = openat(s->dirfd, name, O_WRONLY | O_APPEND | O_CLOEXEC);
	return s->cur_fd < 0 ? -1 : 0;
}

int spool_open(struct spool *s, const char *dir, uint64_t max_bytes, char *err, size_t errlen)
{
	DIR *d;
	struct dirent *de;
	int rc;

	memset(s, 0, sizeof(*s));
	s->dirfd = s->lockfd = s->cur_fd = s->headfd = -1;
	s->max_bytes = max_bytes;
	s->seg_target = max_bytes / 8 > 1024 ? max_bytes / 8 : 1024;
	if ((rc = mkdir_p(dir)) < 0) {
		snprintf(err, errlen, "could not create spool directory %s: %s", dir, strerror(-rc));
		return -1;
	}
	s->dir = strdup(dir);
	s->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!s->dir || s->dirfd < 0) {
		snprintf(err, errlen, "could not open spool directory %s: %s", dir, strerror(errno));
		goto fail;
	}
	/* On a filesystem smaller than --spool-max-bytes the disk fills first:
	 * segments of an eighth of its size let spool_drop_oldest free room
	 * an eighth at a time instead of the whole backlog. */
	struct statvfs vfs;
	if (fstatvfs(s->dirfd, &vfs) == 0) {
		uint64_t fs = (uint64_t)vfs.f_blocks * vfs.f_frsize;
		if (fs > 0 && fs / 8 < s->seg_target)
			s->seg_target = fs / 8 > 1024 ? fs / 8 : 1024;
	}
	s->lockfd = openat(s->dirfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (s->lockfd < 0 && cannot_write(errno)) {
		/* a directory that cannot be written: read what it holds, and
		 * lock it if a lock file is there (another agent cannot write
		 * it either) */
		int why = errno;
		s->readonly = true;
		s->lockfd = openat(s->dirfd, "lock", O_RDONLY | O_CLOEXEC);
		errno = s->lockfd < 0 ? why : errno;
		snprintf(err, errlen, "spool %s cannot be written: %s", dir, strerror(why));
	}
	if ((s->lockfd < 0 && !s->readonly) || (s->lockfd >= 0 && flock(s->lockfd, LOCK_EX | LOCK_NB) < 0)) {
		snprintf(err, errlen, "could not lock spool %s: %s", dir,
			 errno == EWOULDBLOCK ? "another agent uses it" : strerror(errno));
		s->readonly = false;
		goto fail;
	}
	d = fdopendir(dup(s->dirfd));
	if (!d) {
		snprintf(err, errlen, "could not list spool %s: %s", dir, strerror(errno));
		goto fail;
	}
	while ((de = readdir(d))) {
		struct stat st;
		char *end;
		if (strncmp(de->d_name, SEG_PREFIX, 4) || strlen(de->d_name) != SEG_NAME_LEN)
			continue;
		uint64_t seq = strtoull(de->d_name + 4, &end, 10);
		if (*end || fstatat(s->dirfd, de->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (push_seg(s, seq, (uint64_t)st.st_size) < 0) {
			closedir(d);
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	}
	closedir(d);
	if (s->nsegs > 1)
		qsort(s->segs, s->nsegs, sizeof(*s->segs), cmp_seg);

	FILE *hf = NULL;
	int hfd = openat(s->dirfd, "head", O_RDONLY | O_CLOEXEC);
	if (hfd >= 0 && (hf = fdopen(hfd, "r"))) {
		if (fscanf(hf, "%" SCNu64 " %" SCNu64, &s->head.seq, &s->head.off) != 2)
			s->head.seq = s->head.off = 0;
		fclose(hf);
	} else if (hfd >= 0) {
		close(hfd);
	}
	if (s->nsegs > 0) {
		/* read-only: a torn last record stays (peek stops at it) and
		 * appends go to a new segment once the directory takes writes */
		if (!s->readonly && cut_torn(s) < 0) {
			snprintf(err, errlen, "could not repair spool %s: %s", dir, strerror(errno));
			goto fail;
		}
		if (!s->readonly)
			normalize(s);
		if (s->head.seq == s->segs[0].seq && s->head.off > s->segs[0].size)
			s->head.off = s->segs[0].size;
		if (!s->readonly && open_append(s) < 0) {
			snprintf(err, errlen, "could not open spool segment in %s: %s", dir, strerror(errno));
			goto fail;
		}
		for (size_t i = 0; i < s->nsegs; i++)
			if (s->segs[i].seq >= s->head.seq)
				s->pending_n += count_records(s, i, s->segs[i].seq == s->head.seq ? s->head.off : 0);
	}
	return 0;
fail:
	spool_close(s);
	return -1;
}

void spool_close(struct spool *s)
{
	if (s->cur_fd >= 0)
		spool_sync(s);
	if (s->headfd >= 0) {
		if (fdatasync(s->headfd) < 0)
			alog_warn("could not sync the spool head in %s: %s", s->dir, strerror(errno));
		close(s->headfd);
	}
	if (s->cur_fd >= 0)
		close(s->cur_fd);
	if (s->lockfd >= 0)
		close(s->lockfd);
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->segs);
	free(s->dir);
	memset(s, 0, sizeof(*s));
	s->dirfd = s->lockfd = s->cur_fd = s->headfd = -1;
}

/* Takes the lock of a spool opened read-only, once it can be written. */
static int lock_late(struct spool *s)
{
	int fd = openat(s->dirfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		close(fd);
		errno = e == EWOULDBLOCK ? EBUSY : e;
		return -1;
	}
	s->lockfd = fd;
	return 0;
}

int spool_append_begin(struct spool *s)
{
	char name[SEG_NAME_LEN + 1];

	spool_check_removed(s);
	if (s->dirfd < 0 || (s->lockfd < 0 && lock_late(s) < 0)) {
		if (s->dirfd < 0)
			errno = ENOENT;
		return -1;
	}
	if (s->nsegs == 0 || s->segs[s->nsegs - 1].size >= s->seg_target || s->cur_fd < 0) {
		uint64_t seq = s->nsegs ? s->segs[s->nsegs - 1].seq + 1 :
			(s->head.seq ? s->head.seq + 1 : 1);
		bool was_empty = spool_empty(s);
		/* only the newest segment may hold unsynced records */
		if (s->unsynced && spool_sync(s) < 0)
			return -1;
		seg_name(name, seq);
		int fd = openat(s->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
		if (fd < 0)
			return -1;
		fsync(s->dirfd);
		if (push_seg(s, seq, 0) < 0) {
			close(fd);
			unlinkat(s->dirfd, name, 0);
			errno = ENOMEM;
			return -1;
		}
		if (s->cur_fd >= 0)
			close(s->cur_fd);
		s->cur_fd = fd;
		s->readonly = false;
		if (was_empty) {
			/* nothing pending: the head moves to the new segment and the
			 * consumed ones go */
			s->head.seq = seq;
			s->head.off = 0;
			normalize(s);
		}
	}
	s->rec_start = s->segs[s->nsegs - 1].size;
	return s->cur_fd;
}

void spool_append_abort(struct spool *s)
{
	if (s->cur_fd < 0)
		return;
	if (ftruncate(s->cur_fd, (off_t)s->rec_start) < 0) {
		/* once per failing period: it fails with every sample then */
		if (!s->abort_failing)
			alog_error("could not cut a partial record from the spool in %s: %s", s->dir,
				   strerror(errno));
		s->abort_failing = true;
		return;
	}
	s->abort_failing = false;
}

/* Counts the records ('\n') of segment i from offset off. */
static uint64_t count_records(struct spool *s, size_t i, uint64_t off)
{
	char name[SEG_NAME_LEN + 1], buf[8192];
	uint64_t n = 0;
	ssize_t r;
	int fd;

	seg_name(name, s->segs[i].seq);
	fd = openat(s->dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while ((r = pread(fd, buf, sizeof(buf), (off_t)off)) > 0) {
		for (ssize_t k = 0; k < r; k++)
			n += buf[k] == '\n';
		off += (uint64_t)r;
	}
	close(fd);
	return n;
}

long spool_append_commit(struct spool *s)
{
	struct stat st;
	long dropped = 0;

	if (fstat(s->cur_fd, &st) < 0) {
		alog_error("could not append to the spool in %s: %s", s->dir, strerror(errno));
		spool_append_abort(s);
		return -1;
	}
	struct spool_seg *last = &s->segs[s->nsegs - 1];
	s->total += (uint64_t)st.st_size - last->size;
	last->size = (uint64_t)st.st_size;
	s->unsynced = true;
	s->unsynced_end.seq = last->seq;
	s->unsynced_end.off = last->size;
	s->pending_n++;
	while (s->total > s->max_bytes && s->nsegs > 1 &&
	       !(s->pinned && s->segs[0].seq <= s->pin.seq)) {
		uint64_t from = s->segs[0].seq == s->head.seq ? s->head.off : 0;
		if (s->segs[0].seq >= s->head.seq)
			dropped += (long)count_records(s, 0, from);
		drop_first_seg(s);
		if (s->head.seq < s->segs[0].seq) {
			s->head.seq = s->segs[0].seq;
			s->head.off = 0;
		}
	}
	if (dropped) {
		s->dropped += (uint64_t)dropped;
		s->pending_n -= (uint64_t)dropped < s->pending_n ? (uint64_t)dropped : s->pending_n;
		persist_head(s);
	}
	return dropped;
}

int spool_sync(struct spool *s)
{
	if (!s->unsynced || s->cur_fd < 0)
		return 0;
	s->syncs++;
	if (fdatasync(s->cur_fd) < 0) {
		alog_error("could not sync the spool in %s: %s", s->dir, strerror(errno));
		return -1;
	}
	s->unsynced = false;
	return 0;
}

long spool_drop_oldest(struct spool *s)
{
	long dropped = 0;

	if (s->nsegs < 2 || (s->pinned && s->segs[0].seq <= s->pin.seq))
		return -1;
	uint64_t from = s->segs[0].seq == s->head.seq ? s->head.off : 0;
	if (s->segs[0].seq >= s->head.seq)
		dropped = (long)count_records(s, 0, from);
	drop_first_seg(s);
	if (s->head.seq < s->segs[0].seq) {
		s->head.seq = s->segs[0].seq;
		s->head.off = 0;
	}
	s->dropped += (uint64_t)dropped;
	s->pending_n -= (uint64_t)dropped < s->pending_n ? (uint64_t)dropped : s->pending_n;
	persist_head(s);
	return dropped;
}

bool spool_empty(const struct spool *s)
{
	if (s->nsegs == 0)
		return true;
	const struct spool_seg *last = &s->segs[s->nsegs - 1];
	return s->head.seq == last->seq && s->head.off >= last->size;
}

struct spool_pos spool_end(const struct spool *s)
{
	struct spool_pos end = { 0, 0 };

	if (s->nsegs > 0) {
		end.seq = s->segs[s->nsegs - 1].seq;
		end.off = s->segs[s->nsegs - 1].size;
	}
	return end;
}

struct spool_pos spool_rec_start(const struct spool *s)
{
	struct spool_pos p = { s->nsegs ? s->segs[s->nsegs - 1].seq : 0, s->rec_start };
	return p;
}

int spool_pos_cmp(struct spool_pos a, struct spool_pos b)
{
	if (a.seq != b.seq)
		return a.seq < b.seq ? -1 : 1;
	return a.off < b.off ? -1 : a.off > b.off;
}

uint64_t spool_pending_bytes(const struct spool *s)
{
	uint64_t before = 0;

	for (size_t i = 0; i < s->nsegs && s->segs[i].seq <= s->head.seq; i++)
		before += s->segs[i].seq == s->head.seq ? s->head.off : s->segs[i].size;
	return s->total - before;
}

int spool_peek(struct spool *s, size_t max_n, size_t max_bytes, spool_rec_fn fn, void *ctx,
	       struct spool_pos *ends, size_t *n, size_t *bytes)
{
	*n = 0;
	*bytes = 0;
	spool_check_removed(s);
	for (size_t i = 0; i < s->nsegs && *n < max_n; i++) {
		struct spool_seg *sg = &s->segs[i];
		uint64_t off = 0;
		char name[SEG_NAME_LEN + 1];

		if (sg->seq < s->head.seq)
			continue;
		if (sg->seq == s->head.seq)
			off = s->head.off;
		if (off >= sg->size)
			continue;
		seg_name(name, sg->seq);
		int fd = openat(s->dirfd, name, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			alog_error("could not open spool segment %s/%s: %s", s->dir, name, strerror(errno));
			return -1;
		}
		char *map = mmap(NULL, (size_t)sg->size, PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		if (map == MAP_FAILED) {
			alog_error("could not map spool segment %s/%s: %s", s->dir, name, strerror(errno));
			return -1;
		}
		int rc = 0;
		bool full = false;
		while (off < sg->size && *n < max_n) {
			char *p = map + off;
			char *nl = memchr(p, '\n', (size_t)(sg->size - off));
			if (!nl)
				break;
			size_t len = (size_t)(nl - p);
			if (*n > 0 && *bytes + len > max_bytes) {
				full = true;
				break;
			}
			if (fn && fn(ctx, p, len) < 0) {
				rc = -1;
				break;
			}
			off += len + 1;
			ends[*n].seq = sg->seq;
			ends[*n].off = off;
			(*n)++;
			*bytes += len;
		}
		munmap(map, (size_t)sg->size);
		if (rc < 0)
			return -1;
		if (full)
			break;
	}
	return 0;
}

int spool_ack(struct spool *s, struct spool_pos pos, size_t n)
{
	if (pos.seq < s->gen_seq) {
		/* records in flight when the directory was removed: they arrived
		 * after all, so they are not lost */
		uint64_t back = n < s->orphan_n ? n : s->orphan_n;
		s->orphan_n -= back;
		s->lost_removed -= back;
		return 0;
	}
	if (pos.seq < s->head.seq || (pos.seq == s->head.seq && pos.off <= s->head.off))
		return 0;
	s->pending_n -= n < s->pending_n ? n : s->pending_n;
	s->head = pos;
	/* accepted records need no durability: nothing is left to sync when
	 * the head passed the last record appended */
	if (s->unsynced && (pos.seq > s->unsynced_end.seq ||
			    (pos.seq == s->unsynced_end.seq && pos.off >= s->unsynced_end.off)))
		s->unsynced = false;
	normalize(s);
	return persist_head(s);
}

/* Forgets the segments of a removed directory (their descriptors too). */
static void forget_removed(struct spool *s)
{
	if (s->cur_fd >= 0)
		close(s->cur_fd);
	if (s->headfd >= 0)
		close(s->headfd);
	if (s->lockfd >= 0)
		close(s->lockfd);
	close(s->dirfd);
	s->cur_fd = s->headfd = s->lockfd = s->dirfd = -1;
	uint64_t next = s->nsegs ? s->segs[s->nsegs - 1].seq + 1 : s->head.seq + 1;
	s->nsegs = 0;
	s->total = 0;
	s->unsynced = false;
	s->pending_n = 0;
	/* positions of the old segments are before every new one */
	s->gen_seq = next;
	s->head.seq = next;
	s->head.off = 0;
}

/* Creates the directory again and takes its lock. */
static int reopen_dir(struct spool *s)
{
	int rc = mkdir_p(s->dir);

	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	s->dirfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0)
		return -1;
	return lock_late(s);
}

uint64_t spool_check_removed(struct spool *s)
{
	struct stat st;
	uint64_t lost = 0;

	if (s->dirfd >= 0 && fstat(s->dirfd, &st) == 0 && st.st_nlink > 0)
		return 0;
	if (s->dirfd >= 0) {
		lost = s->pending_n;
		s->orphan_n = s->pinned ? (s->pin_n < lost ? s->pin_n : lost) : 0;
		s->lost_removed += lost;
		alog_error("spool directory %s was removed while the agent ran: its %llu unsent samples are "
			   "lost (%llu of them in flight: not lost if the server takes them); creating it again",
			   s->dir, (unsigned long long)lost, (unsigned long long)s->orphan_n);
		forget_removed(s);
	}
	if (s->dirfd < 0 && reopen_dir(s) < 0) {
		if (!s->dir_failing)
			alog_error("could not create the spool directory %s again: %s; keeping samples in memory",
				   s->dir, strerror(errno));
		s->dir_failing = true;
		if (s->dirfd >= 0) {
			close(s->dirfd);
			s->dirfd = -1;
		}
		return lost;
	}
	if (s->dir_failing)
		alog_info("spool directory %s is there again", s->dir);
	s->dir_failing = false;
	return lost;
}
