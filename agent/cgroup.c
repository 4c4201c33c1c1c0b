/* cgroup.c - memory cgroup hierarchies and the breadth-first selection walk. */
#include "cgroup.h"
#include "alog.h"
#include "names.h"

#include <dirent.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/inotify.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define WALK_BUF_MAX (2u << 20)	/* queue and listing caps */

void cg_hiers_release(struct cg_hiers *hs)
{
	for (int i = 0; i < hs->n; i++)
		free(hs->h[i].mount);
	memset(hs, 0, sizeof(*hs));
}

static int add_hier(struct cg_hiers *hs, int version, const char *mount)
{
	char *m = strdup(mount);

	if (!m)
		return -1;
	struct statfs sf;
	hs->h[hs->n].version = version;
	hs->h[hs->n].mount = m;
	hs->h[hs->n].kernfs = statfs(mount, &sf) == 0 &&
		((unsigned long)sf.f_type == CGROUP_SUPER_MAGIC ||
		 (unsigned long)sf.f_type == CGROUP2_SUPER_MAGIC);
	hs->n++;
	return 0;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Undoes mountinfo's octal escapes (\040 for a space) in place. */
static void unescape_octal(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

/* True when the comma-separated option list has the word. */
static bool has_opt(const char *opts, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = opts; p && *p;) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		if (n == wl && !memcmp(p, word, wl))
			return true;
		p = c ? c + 1 : NULL;
	}
	return false;
}

int cg_discover_mountinfo(struct cg_hiers *hs, const char *path)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	char v1[4096] = "", v2[4096] = "";

	memset(hs, 0, sizeof(*hs));
	if (!f) {
		alog_warn("could not open %s: %s; reporting no cgroups", path, strerror(errno));
		return 0;
	}
	while (getline(&line, &cap, f) > 0) {
		/* id parent maj:min root mountpoint opts [optional...] - fstype source superopts */
		char *fields[6], *save = NULL, *tok;
		int nf = 0;
		char *sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		for (tok = strtok_r(line, " ", &save); tok && nf < 6; tok = strtok_r(NULL, " ", &save))
			fields[nf++] = tok;
		if (nf < 5)
			continue;
		char *rest = sep + 3, *fstype, *src, *sopts;
		save = NULL;
		fstype = strtok_r(rest, " \n", &save);
		src = strtok_r(NULL, " \n", &save);
		sopts = strtok_r(NULL, " \n", &save);
		(void)src;
		if (!fstype)
			continue;
		unescape_octal(fields[4]);
		if (!strcmp(fstype, "cgroup2") && !v2[0] && strlen(fields[4]) < sizeof(v2))
			strcpy(v2, fields[4]);
		else if (!strcmp(fstype, "cgroup") && !v1[0] && has_opt(sopts, "memory") &&
			 strlen(fields[4]) < sizeof(v1))
			strcpy(v1, fields[4]);
	}
	free(line);
	fclose(f);
	if (v1[0] && add_hier(hs, 1, v1) < 0)
		return -1;
	if (v2[0] && add_hier(hs, 2, v2) < 0) {
		cg_hiers_release(hs);
		return -1;
	}
	return hs->n;
}

int cg_discover(struct cg_hiers *hs, const char *root)
{
	char p[4200];

	if (!root)
		return cg_discover_mountinfo(hs, "/proc/self/mountinfo");
	memset(hs, 0, sizeof(*hs));
	snprintf(p, sizeof(p), "%s/sys/fs/cgroup/cgroup.controllers", root);
	if (access(p, F_OK) == 0) {
		snprintf(p, sizeof(p), "%s/sys/fs/cgroup", root);
		return add_hier(hs, 2, p) < 0 ? -1 : hs->n;
	}
	snprintf(p, sizeof(p), "%s/sys/fs/cgroup/memory", root);
	if (is_dir(p) && add_hier(hs, 1, p) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/sys/fs/cgroup/unified", root);
	if (is_dir(p) && add_hier(hs, 2, p) < 0) {
		cg_hiers_release(hs);
		return -1;
	}
	return hs->n;
}

bool cg_path_selected(const struct cg_select *sel, const char *path)
{
	bool in = sel->ninclude == 0;

	for (size_t i = 0; i < sel->ninclude && !in; i++)
		in = fnmatch(sel->include[i], path, 0) == 0;
	if (!in)
		return false;
	for (size_t i = 0; i < sel->nexclude; i++)
		if (fnmatch(sel->exclude[i], path, 0) == 0)
			return false;
	return true;
}

/* Forgets a node's cached files and removes their watches. */
static void cache_drop(struct cg_walk *wk, struct cg_node *nd)
{
	for (int i = 0; i < nd->ncache; i++)
		if (nd->cache[i].wd >= 0 && wk->ino_tried && wk->ino_fd >= 0)
			inotify_rm_watch(wk->ino_fd, nd->cache[i].wd);	/* EINVAL when gone: fine */
	free(nd->cache);
	nd->cache = NULL;
	nd->ncache = 0;
}

/* Closes a node's kept files, forgets its absent marks and its cached
 * files (a copy is only as good as the descriptor it was read through). */
static void node_files_close(struct cg_walk *wk, struct cg_node *nd)
{
	for (int i = 0; i < CG_SLOTS; i++)
		pf_keep_close(&wk->keep, &nd->fd[i]);
	cache_drop(wk, nd);
	nd->stamped = false;
}

static void node_close(struct cg_walk *wk, struct cg_node *nd)
{
	pf_keep_close(&wk->keep, &nd->dirfd);
	node_files_close(wk, nd);
	if (nd->wd >= 0 && wk->ino_tried && wk->ino_fd >= 0)
		inotify_rm_watch(wk->ino_fd, nd->wd);	/* EINVAL when already gone: fine */
	nd->wd = -1;
	nd->changed = false;
}

/* A directory stamp is trusted only when both times are this many seconds
 * older than the walk: a change within the same timestamp tick as the stat
 * that recorded the stamp would leave the times equal (filesystems store
 * coarse times: a jiffy on ext4 and tmpfs, 2 s on FAT). */
#define STAMP_MARGIN_S 3

static bool ts_eq(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* What changes a directory's entries (a kept file replaced, created,
 * removed) or the directory itself. */
#define WATCH_MASK (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | \
		    IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

/* Whether the walk's inotify descriptor exists, creating it at the first
 * need. Without one (inotify off, or the per-user instance limit) recorded
 * tree directories are checked by their times every visit and no cgroup
 * file is cached. */
static bool ino_ready(struct cg_walk *wk)
{
	if (!wk->ino_tried) {
		wk->ino_tried = true;
		wk->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (wk->ino_fd < 0)
			alog_info("no inotify (%s): cgroup limits are read every sample, recorded tree "
				  "directories checked every sample", strerror(errno));
	}
	return wk->ino_fd >= 0;
}

/* Recorded trees: keeps a directory's kept files only while its entries
 * are unchanged. A file rewritten in place shows through its kept
 * descriptor (pread from offset 0), but one replaced (renamed over),
 * created or removed changes the directory's modification and change
 * times, so one fstat of the directory tells when the files must be
 * opened (and absent ones looked for) afresh. A stamp younger than
 * STAMP_MARGIN_S is not trusted: the files are opened afresh next visit
 * too, as they are every visit of a directory that keeps changing.
 * Once a stamp is trusted with an inotify watch of the directory already
 * in place (added before the fstat, so no change falls between them), the
 * watch takes over: a visit with no event for the directory needs no
 * system call (one fstat per cgroup per sample before: a sixth of a v1
 * cgroup's calls); an event (or a lost event queue) makes the next visit
 * open the files afresh and check the times again. */
static void node_validate(struct cg_walk *wk, struct cg_node *nd, int dfd, const char *mount,
			  const char *path, time_t now)
{
	struct stat st;

	if (nd->wd >= 0 && nd->stamped && !nd->changed)
		return;	/* watched, and nothing changed */
	if (nd->changed)
		node_files_close(wk, nd);
	nd->changed = false;
	if (nd->wd < 0 && ino_ready(wk)) {
		char full[PATH_MAX];
		if ((size_t)snprintf(full, sizeof(full), "%s%s", mount, path) < sizeof(full))
			nd->wd = inotify_add_watch(wk->ino_fd, full, WATCH_MASK);	/* -1: checked by times */
	}
	if (fstat(dfd, &st) < 0) {
		node_files_close(wk, nd);
		return;
	}
	if (!nd->stamped || !ts_eq(&st.st_mtim, &nd->mtim) || !ts_eq(&st.st_ctim, &nd->ctim))
		node_files_close(wk, nd);
	nd->mtim = st.st_mtim;
	nd->ctim = st.st_ctim;
	nd->stamped = st.st_mtim.tv_sec < now - STAMP_MARGIN_S &&
		st.st_ctim.tv_sec < now - STAMP_MARGIN_S;
}

/* What one event means for a node: a directory watch's event makes its
 * next visit check the directory (recorded trees); a file watch's event
 * makes the file's copy invalid, and IN_IGNORED (the watch is gone: file
 * removed, or inotify_rm_watch) forgets the copy. */
static void watch_event(struct cg_node *nd, const struct inotify_event *ev)
{
	bool all = ev->mask & IN_Q_OVERFLOW;	/* events were lost */

	if (all || nd->wd == ev->wd) {
		nd->changed = true;
		if ((ev->mask & IN_IGNORED) && nd->wd == ev->wd)
			nd->wd = -1;	/* the directory is gone */
	}
	for (int i = 0; i < nd->ncache; i++) {
		struct cg_cached *e = &nd->cache[i];
		if (!all && e->wd != ev->wd)
			continue;
		e->valid = false;
		if ((ev->mask & IN_IGNORED) && e->wd == ev->wd)
			e->wd = -1;	/* never valid again; dropped with the node's files */
	}
}

/* Reads the watches' events since the last walk (one read when there are
 * none). Events are few: directory watches exist only in recorded trees,
 * and file watches only on files that change when written. */
static void watch_events(struct cg_walk *wk)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	if (!wk->ino_tried || wk->ino_fd < 0)
		return;
	while ((n = read(wk->ino_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			for (size_t i = 0; i < wk->nnodes; i++)
				watch_event(&wk->nodes[i], ev);
			p += sizeof(*ev) + ev->len;
		}
	}
}

/* Whether a file watch is already some cached file's (the same file
 * reached twice: a recorded tree's hard links). inotify gives one watch
 * per file, and removing it for one copy would leave the other unwatched,
 * so such a file is not cached. */
static bool wd_in_use(const struct cg_walk *wk, int wd)
{
	for (size_t i = 0; i < wk->nnodes; i++)
		for (int j = 0; j < wk->nodes[i].ncache; j++)
			if (wk->nodes[i].cache[j].wd == wd)
				return true;
	return false;
}

#define FILE_WATCH_MASK (IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)

/* Watches a node's kept file `name` and adds its copy, invalid until the
 * next read. The watch is added by the file's path, not through
 * /proc/self/fd/N: that would make the kernel build a proc inode and
 * dentry per descriptor (~1 KiB of kernel memory each, charged to the
 * agent). The path names the file the kept descriptor reads unless it was
 * replaced in between: in cgroupfs only by a controller disabled and
 * enabled again, which makes the kept descriptor fail and so drops the
 * copies (cg_read); in a recorded tree the directory's own watch, in
 * place since before the files were opened, closes them. */
static void cache_watch(struct cg_walk *wk, struct cg_node *nd, int slot, const char *name)
{
	char full[PATH_MAX];

	if (nd->ncache >= CG_SLOTS || wk->gen < wk->watch_retry_gen || !wk->visit_mount ||
	    !ino_ready(wk))
		return;
	if ((size_t)snprintf(full, sizeof(full), "%s%s/%s", wk->visit_mount, wk->visit_path, name) >=
	    sizeof(full))
		return;
	int wd = inotify_add_watch(wk->ino_fd, full, FILE_WATCH_MASK);
	if (wd < 0) {
		if (errno == ENOSPC) {
			alog_info("inotify watches exhausted (fs.inotify.max_user_watches): some cgroup "
				  "limits are read every sample");
			wk->watch_retry_gen = wk->gen + 1000;	/* try again in 1,000 samples */
		}
		return;
	}
	if (wd_in_use(wk, wd))
		return;
	struct cg_cached *nc = realloc(nd->cache, (nd->ncache + 1u) * sizeof(*nc));
	if (!nc) {
		inotify_rm_watch(wk->ino_fd, wd);
		return;
	}
	nd->cache = nc;
	memset(&nc[nd->ncache], 0, sizeof(nc[0]));
	nc[nd->ncache].wd = wd;
	nc[nd->ncache].slot = (uint8_t)slot;
	nd->ncache++;
}

int cg_read(struct cg_walk *wk, struct cg_node *nd, int dirfd, const char *name, int slot,
	    bool cached, struct rbuf *rb)
{
	struct cg_cached *e = NULL;

	if (!nd)
		return pf_read(rb, dirfd, name);
	for (int i = 0; cached && i < nd->ncache; i++) {
		if (nd->cache[i].slot != slot)
			continue;
		if (nd->cache[i].wd < 0) {
			/* its watch went away (IN_IGNORED): forget it, watch afresh below */
			nd->cache[i] = nd->cache[--nd->ncache];
			break;
		}
		e = &nd->cache[i];
		break;
	}
	if (e && e->valid && e->uses < CG_CACHE_REFRESH) {
		e->uses++;
		return rbuf_set(rb, e->data, e->len);
	}
	unsigned long failed = wk->keep.failed;
	int rc = pf_read_kept(rb, dirfd, name, &nd->fd[slot], &wk->keep);
	if (wk->keep.failed != failed) {
		cache_drop(wk, nd);	/* the directory's files were removed */
		e = NULL;
	}
	if (!cached || nd->fd[slot] < 0)
		return rc;
	if (!e) {
		if (rc == 0 || rc == -ENODATA)
			cache_watch(wk, nd, slot, name);
		return rc;
	}
	e->valid = rc == 0 && rb->len <= CG_CACHED_MAX;
	if (e->valid) {
		memcpy(e->data, rb->p, rb->len);
		e->len = (uint8_t)rb->len;
		e->uses = 0;
	}
	return rc;
}

/* Recorded trees: whether the kept descriptor of a hierarchy's root is
 * still the directory at its path (the tree may have been replaced). */
static bool root_current(const struct cg_hier *h, const struct cg_node *nd)
{
	struct stat st;

	return stat(h->mount, &st) == 0 && (uint64_t)st.st_dev == nd->dev &&
		(uint64_t)st.st_ino == nd->dino;
}

void cg_walk_release(struct cg_walk *wk)
{
	for (size_t i = 0; i < wk->nnodes; i++) {
		node_close(wk, &wk->nodes[i]);
		free(wk->nodes[i].rel);
	}
	free(wk->nodes);
	free(wk->index);
	free(wk->q);
	free(wk->l);
	free(wk->dents);
	free(wk->names);
	if (wk->ino_tried && wk->ino_fd >= 0)
		close(wk->ino_fd);
	memset(wk, 0, sizeof(*wk));
}

/* Appends bytes to a capped growable buffer; -1 over the cap or OOM. */
static int buf_append(char **b, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n > *cap) {
		size_t nc = *cap ? *cap : 4096;
		while (nc < *len + n)
			nc *= 2;
		if (nc > WALK_BUF_MAX)
			return -1;
		char *nb = realloc(*b, nc);
		if (!nb)
			return -1;
		*b = nb;
		*cap = nc;
	}
	memcpy(*b + *len, s, n);
	*len += n;
	return 0;
}

static const char *sort_base;

/* Listing entries are an 8-byte inode number followed by the name. */
#define ENT_NAME(e) ((e) + sizeof(uint64_t))

static int cmp_names(const void *a, const void *b)
{
	return strcmp(ENT_NAME(sort_base + *(const size_t *)a), ENT_NAME(sort_base + *(const size_t *)b));
}

/* The kernel's getdents64 record (glibc has no wrapper before 2.30). */
struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* Lists the subdirectories of dirfd (from its start) into wk->l /
 * wk->names, sorted by name, each with its inode number (rewind: the
 * descriptor was read before, a kept one). Reads
 * the entries with getdents64 into the walk's reused buffer rather than
 * through opendir, which would allocate 32 KiB per directory per sample and
 * cost three more system calls. On a real cgroup filesystem (kernfs) two
 * more calls are saved: a directory's link count there is always 2 plus
 * its subdirectories (kernfs_refresh_inode), so a leaf cgroup -- most of
 * them -- is not listed at all, and kernfs fills the getdents buffer as far
 * as the entries go, so a read leaving room for another record was the
 * last one. Recorded trees on other filesystems (btrfs and overlayfs report
 * 1 link for a directory) get the plain listing. Returns 0, or -1 when the
 * listing was cut (a buffer cap). The descriptor stays open (the caller's). */
static int list_subdirs(struct cg_walk *wk, int dirfd, bool kernfs, bool rewind)
{
	wk->llen = wk->nnames = 0;
	if (kernfs) {
		struct stat st;
		if (fstat(dirfd, &st) == 0 && st.st_nlink == 2)
			return 0;
	}
	if (!wk->dents && !(wk->dents = malloc(CG_DENTS_BUF)))
		return -1;
	if (rewind && lseek(dirfd, 0, SEEK_SET) < 0)
		return 0;	/* cannot happen on a directory; list nothing */
	for (;;) {
		long n = syscall(SYS_getdents64, dirfd, wk->dents, CG_DENTS_BUF);
		if (n <= 0)
			break;	/* the end, or the directory vanished: list what we have */
		for (long off = 0; off < n;) {
			struct linux_dirent64 *de = (struct linux_dirent64 *)(wk->dents + off);
			const char *name = de->d_name;
			off += de->d_reclen;
			if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
				continue;
			if (de->d_type != DT_DIR) {
				struct stat st;
				if (de->d_type != DT_UNKNOWN ||
				    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
				    !S_ISDIR(st.st_mode))
					continue;
			}
			if (wk->nnames == wk->ncap) {
				size_t nc = wk->ncap ? wk->ncap * 2 : 64;
				size_t *nn = nc * sizeof(size_t) <= WALK_BUF_MAX ?
					realloc(wk->names, nc * sizeof(size_t)) : NULL;
				if (!nn)
					return -1;
				wk->names = nn;
				wk->ncap = nc;
			}
			size_t at = wk->llen;
			uint64_t ino = de->d_ino;
			if (buf_append(&wk->l, &wk->llen, &wk->lcap, (const char *)&ino, sizeof(ino)) < 0 ||
			    buf_append(&wk->l, &wk->llen, &wk->lcap, name, strlen(name) + 1) < 0)
				return -1;
			wk->names[wk->nnames++] = at;
		}
		/* a record is at most 24 + 256 bytes, rounded to 8 */
		if (kernfs && n < (long)CG_DENTS_BUF - 288)
			break;
	}
	sort_base = wk->l;
	if (wk->nnames)
		qsort(wk->names, wk->nnames, sizeof(size_t), cmp_names);
	return 0;
}

/* Depth of a relative path "a/b/c" (3); "" is the root (0). */
static int rel_depth(const char *rel)
{
	int d = 0;

	if (!*rel)
		return 0;
	for (d = 1; *rel; rel++)
		if (*rel == '/')
			d++;
	return d;
}

static uint32_t node_hash(int hier, const char *rel, size_t n)
{
	uint32_t h = 2166136261u ^ (uint32_t)hier;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)rel[i]) * 16777619u;
	return h;
}

static void index_insert(struct cg_walk *wk, size_t ni)
{
	const struct cg_node *nd = &wk->nodes[ni];
	size_t mask = wk->indexcap - 1;
	size_t i = node_hash(nd->hier, nd->rel, strlen(nd->rel)) & mask;

	while (wk->index[i])
		i = (i + 1) & mask;
	wk->index[i] = (uint32_t)ni + 1;
}

/* Rebuilds the index with room for at least `need` nodes; -1 when out of
 * memory (the old index stays). */
static int index_rebuild(struct cg_walk *wk, size_t need)
{
	size_t cap = wk->indexcap ? wk->indexcap : 64;

	while (cap < need * 2)
		cap *= 2;
	if (cap != wk->indexcap) {
		uint32_t *ni = malloc(cap * sizeof(*ni));
		if (!ni)
			return -1;
		free(wk->index);
		wk->index = ni;
		wk->indexcap = cap;
	}
	memset(wk->index, 0, wk->indexcap * sizeof(*wk->index));
	for (size_t i = 0; i < wk->nnodes; i++)
		index_insert(wk, i);
	return 0;
}

/* The node of (hier, rel) for this walk, added when new; a node whose inode
 * changed has its descriptors closed first. Returns its number, or -1 when
 * out of memory (the directory is then read without keeping). */
static long node_get(struct cg_walk *wk, int hier, const char *rel, size_t rlen, uint64_t ino)
{
	if (wk->indexcap) {
		size_t mask = wk->indexcap - 1;
		for (size_t i = node_hash(hier, rel, rlen) & mask; wk->index[i]; i = (i + 1) & mask) {
			struct cg_node *nd = &wk->nodes[wk->index[i] - 1];
			if (nd->hier != hier || strcmp(nd->rel, rel))
				continue;
			if (nd->ino != ino) {
				node_close(wk, nd);
				nd->ino = ino;
			}
			nd->gen = wk->gen;
			return (long)(wk->index[i] - 1);
		}
	}
	if ((wk->nnodes + 1) * 2 > wk->indexcap && index_rebuild(wk, wk->nnodes + 1) < 0)
		return -1;
	if (wk->nnodes == wk->nodecap) {
		size_t nc = wk->nodecap ? wk->nodecap * 2 : 64;
		struct cg_node *nn = realloc(wk->nodes, nc * sizeof(*nn));
		if (!nn)
			return -1;
		wk->nodes = nn;
		wk->nodecap = nc;
	}
	struct cg_node *nd = &wk->nodes[wk->nnodes];
	if (!(nd->rel = strndup(rel, rlen)))
		return -1;
	nd->ino = ino;
	nd->hier = hier;
	nd->dirfd = -1;
	for (int i = 0; i < CG_SLOTS; i++)
		nd->fd[i] = -1;
	nd->gen = wk->gen;
	nd->stamped = false;
	nd->dev = nd->dino = 0;
	nd->wd = -1;
	nd->changed = false;
	nd->cache = NULL;
	nd->ncache = 0;
	index_insert(wk, wk->nnodes);
	return (long)wk->nnodes++;
}

/* Closes and forgets the nodes the last walk did not meet. */
static void node_sweep(struct cg_walk *wk)
{
	size_t kept = 0;

	for (size_t i = 0; i < wk->nnodes; i++) {
		struct cg_node *nd = &wk->nodes[i];
		if (nd->gen == wk->gen) {
			wk->nodes[kept++] = *nd;
			continue;
		}
		node_close(wk, nd);
		free(nd->rel);
	}
	if (kept == wk->nnodes)
		return;
	wk->nnodes = kept;
	if (index_rebuild(wk, kept) < 0) {
		/* cannot happen (the table only shrinks); forget everything */
		for (size_t i = 0; i < wk->nnodes; i++) {
			node_close(wk, &wk->nodes[i]);
			free(wk->nodes[i].rel);
		}
		wk->nnodes = 0;
		memset(wk->index, 0, wk->indexcap * sizeof(*wk->index));
	}
}

/* Keeps fd in *slot when the budget allows; returns whether it did. */
static bool keep_fd(struct cg_walk *wk, int *slot, int fd)
{
	if (wk->keep.budget <= 0)
		return false;
	wk->keep.budget--;
	wk->keep.kept++;
	*slot = fd;
	return true;
}

/* Appends a queue entry: the directory's inode number, its relative path. */
static int queue_push(struct cg_walk *wk, uint64_t ino, const char *rel, size_t rlen)
{
	size_t at = wk->qlen;

	if (buf_append(&wk->q, &wk->qlen, &wk->qcap, (const char *)&ino, sizeof(ino)) < 0 ||
	    buf_append(&wk->q, &wk->qlen, &wk->qcap, rel, rlen) < 0 ||
	    buf_append(&wk->q, &wk->qlen, &wk->qcap, "", 1) < 0) {
		wk->qlen = at;
		return -1;
	}
	return 0;
}

/* One hierarchy, breadth first from its root. The queue holds the
 * directories still to visit (inode number, relative path without the
 * leading '/', the root as ""). A directory is opened only when it is
 * reported or listed, and then once for both; on kernfs with a budget its
 * descriptor (and the files collect.c reads through the node's slots) stay
 * open for the next walk. */
static int walk_one(struct cg_walk *wk, const struct cg_hier *h, int hier,
		    const struct cg_select *sel, cg_visit_fn fn, void *ctx, int visited,
		    time_t now)
{
	bool keeping = wk->keep.budget > 0 || wk->keep.kept > 0;
	long root = keeping ? node_get(wk, hier, "", 0, 0) : -1;
	char path[CGROUP_PATH_MAXLEN + 2];

	if (root >= 0 && !h->kernfs && wk->nodes[root].dirfd >= 0 &&
	    !root_current(h, &wk->nodes[root]))
		node_close(wk, &wk->nodes[root]);	/* the tree was replaced */
	int mfd = root >= 0 ? wk->nodes[root].dirfd : -1;
	bool mfd_kept = mfd >= 0;

	if (mfd < 0) {
		mfd = open(h->mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (mfd < 0) {
			alog_debug("could not open cgroup hierarchy %s: %s", h->mount, strerror(errno));
			return visited;
		}
		struct stat st;
		if (root >= 0 && !h->kernfs) {
			/* a recorded tree's root is kept only while it is what the path names */
			if (fstat(mfd, &st) < 0)
				root = -1;
			else {
				wk->nodes[root].dev = (uint64_t)st.st_dev;
				wk->nodes[root].dino = (uint64_t)st.st_ino;
			}
		}
		mfd_kept = root >= 0 && keep_fd(wk, &wk->nodes[root].dirfd, mfd);
	}
	wk->qlen = 0;
	if (queue_push(wk, 0, "", 0) < 0) {
		if (!mfd_kept)
			close(mfd);
		return visited;
	}
	for (size_t qoff = 0; qoff < wk->qlen && !wk->truncated;) {
		uint64_t ino;
		memcpy(&ino, wk->q + qoff, sizeof(ino));
		const char *rel = wk->q + qoff + sizeof(ino);
		size_t rlen = strlen(rel);
		size_t relat = qoff + sizeof(ino);
		size_t next = relat + rlen + 1;
		int depth = rel_depth(rel);
		bool selected = false;

		if (depth > 0) {
			path[0] = '/';
			memcpy(path + 1, rel, rlen + 1);
			selected = cg_path_selected(sel, path);
			if (selected && visited >= sel->max) {
				wk->truncated = true;
				break;
			}
		}
		bool list = depth < sel->depth;
		if (!selected && !list) {
			qoff = next;
			continue;
		}
		int dfd = mfd;
		bool dkept = true;	/* the root's descriptor is closed below */
		long ni = -1;
		if (depth > 0) {
			ni = keeping ? node_get(wk, hier, rel, rlen, ino) : -1;
			dfd = ni >= 0 ? wk->nodes[ni].dirfd : -1;
			dkept = dfd >= 0;
			if (dfd < 0) {
				dfd = openat(mfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
				if (dfd < 0) {
					qoff = next;
					continue;	/* vanished since it was listed */
				}
				dkept = ni >= 0 && keep_fd(wk, &wk->nodes[ni].dirfd, dfd);
			}
		}
		if (selected) {
			if (ni >= 0 && !h->kernfs)
				node_validate(wk, &wk->nodes[ni], dfd, h->mount, path, now);
			wk->keep.dir_stamped = ni >= 0 && !h->kernfs;
			wk->visit_mount = h->mount;
			wk->visit_path = path;
			fn(ctx, h, dfd, path, rlen + 1, ni >= 0 ? &wk->nodes[ni] : NULL);
			wk->visit_mount = wk->visit_path = NULL;
			wk->keep.dir_stamped = false;
			visited++;
		}
		if (list && list_subdirs(wk, dfd, h->kernfs, depth ? dkept : mfd_kept) < 0)
			wk->truncated = true;
		for (size_t i = 0; list && i < wk->nnames; i++) {
			const char *ent = wk->l + wk->names[i];
			const char *name = ENT_NAME(ent);
			uint64_t cino;
			memcpy(&cino, ent, sizeof(cino));
			/* "/" rel ["/"] name, without snprintf (once per child
			 * of every listed directory, every sample); wk->q may
			 * move when appended to: index it afresh each time */
			size_t nl = strlen(name), n = 1 + rlen + (depth ? 1 : 0) + nl;
			if (n < sizeof(path)) {
				char *o = path;
				*o++ = '/';
				memcpy(o, wk->q + relat, rlen);
				o += rlen;
				if (depth)
					*o++ = '/';
				memcpy(o, name, nl + 1);
			}
			if (n >= sizeof(path) || !name_cgroup_path_valid(path, n)) {
				wk->skipped_bad++;
				continue;
			}
			if (queue_push(wk, cino, path + 1, n - 1) < 0) {
				wk->truncated = true;
				break;
			}
		}
		if (!dkept)
			close(dfd);
		qoff = next;
	}
	if (!mfd_kept)
		close(mfd);
	return visited;
}

int cg_walk(struct cg_walk *wk, const struct cg_hiers *hs, const struct cg_select *sel,
	    cg_visit_fn fn, void *ctx)
{
	int visited = 0;

	wk->skipped_bad = 0;
	wk->truncated = false;
	if (++wk->gen == 0)
		wk->gen = 1;
	time_t now = time(NULL);
	watch_events(wk);
	if (sel->depth > 0 && sel->max > 0)
		for (int i = 0; i < hs->n; i++)
			visited = walk_one(wk, &hs->h[i], i, sel, fn, ctx, visited, now);
	node_sweep(wk);
	return visited;
}
