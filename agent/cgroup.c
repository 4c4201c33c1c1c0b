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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
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

void cg_walk_release(struct cg_walk *wk)
{
	free(wk->q);
	free(wk->l);
	free(wk->dents);
	free(wk->names);
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

static int cmp_names(const void *a, const void *b)
{
	return strcmp(sort_base + *(const size_t *)a, sort_base + *(const size_t *)b);
}

/* The kernel's getdents64 record (glibc has no wrapper before 2.30). */
struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* Lists the subdirectories of dirfd into wk->l / wk->names, sorted. Reads
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
static int list_subdirs(struct cg_walk *wk, int dirfd, bool kernfs)
{
	wk->llen = wk->nnames = 0;
	if (kernfs) {
		struct stat st;
		if (fstat(dirfd, &st) == 0 && st.st_nlink == 2)
			return 0;
	}
	if (!wk->dents && !(wk->dents = malloc(CG_DENTS_BUF)))
		return -1;
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
			if (buf_append(&wk->l, &wk->llen, &wk->lcap, name, strlen(name) + 1) < 0)
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

/* One hierarchy, breadth first from its root. The queue holds the
 * relative paths (no leading '/') of directories still to visit, the root
 * as "". A directory is opened only when it is reported or listed, and
 * then once for both. */
static int walk_one(struct cg_walk *wk, const struct cg_hier *h, const struct cg_select *sel,
		    cg_visit_fn fn, void *ctx, int visited)
{
	int mfd = open(h->mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char path[CGROUP_PATH_MAXLEN + 2];

	if (mfd < 0) {
		alog_debug("could not open cgroup hierarchy %s: %s", h->mount, strerror(errno));
		return visited;
	}
	wk->qlen = 0;
	if (buf_append(&wk->q, &wk->qlen, &wk->qcap, "", 1) < 0) {
		close(mfd);
		return visited;
	}
	for (size_t qoff = 0; qoff < wk->qlen && !wk->truncated;) {
		const char *rel = wk->q + qoff;
		size_t rlen = strlen(rel);
		size_t next = qoff + rlen + 1;
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
		int dfd = openat(mfd, depth ? rel : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0) {
			qoff = next;
			continue;	/* vanished since it was listed */
		}
		if (selected) {
			fn(ctx, h, dfd, path, rlen + 1);
			visited++;
		}
		if (list && list_subdirs(wk, dfd, h->kernfs) < 0)
			wk->truncated = true;
		for (size_t i = 0; list && i < wk->nnames; i++) {
			const char *name = wk->l + wk->names[i];
			/* wk->q may move when appended to: index it afresh each time */
			int n = snprintf(path, sizeof(path), "/%s%s%s", wk->q + qoff,
					 depth ? "/" : "", name);
			if (n < 0 || (size_t)n >= sizeof(path) ||
			    !name_cgroup_path_valid(path, (size_t)n)) {
				wk->skipped_bad++;
				continue;
			}
			/* the relative path (without the leading '/') goes on the queue */
			if (buf_append(&wk->q, &wk->qlen, &wk->qcap, path + 1, (size_t)n) < 0) {
				wk->truncated = true;
				break;
			}
		}
		close(dfd);
		qoff = next;
	}
	close(mfd);
	return visited;
}

int cg_walk(struct cg_walk *wk, const struct cg_hiers *hs, const struct cg_select *sel,
	    cg_visit_fn fn, void *ctx)
{
	int visited = 0;

	wk->skipped_bad = 0;
	wk->truncated = false;
	if (sel->depth <= 0 || sel->max <= 0)
		return 0;
	for (int i = 0; i < hs->n; i++)
		visited = walk_one(wk, &hs->h[i], sel, fn, ctx, visited);
	return visited;
}
