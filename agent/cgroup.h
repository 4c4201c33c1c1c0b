/* cgroup.h - finding the memory cgroup hierarchies and choosing which
 * cgroups a sample reports.
 *
 * Hierarchies: without a root directory they come from /proc/self/mountinfo
 * (the cgroup2 mount, and the cgroup v1 mount carrying the memory
 * controller). Under --root DIR they are found by the contract's convention
 * (CONTRACT.md §4): v2 at DIR/sys/fs/cgroup when it holds cgroup.controllers,
 * else v1 memory at DIR/sys/fs/cgroup/memory and v2 at
 * DIR/sys/fs/cgroup/unified. A hybrid machine thus has two hierarchies, v1
 * walked first.
 *
 * Selection: the root cgroup is never reported; directories are visited
 * breadth first (names sorted, so output is stable and, when --cgroup-max
 * cuts, the shallower cgroups are the ones kept) down to `depth` levels.
 * A path is reported when it matches an include glob (or there is none) and
 * no exclude glob (fnmatch without FNM_PATHNAME: `*` also matches `/`).
 * Directories whose path the contract would refuse (not printable UTF-8,
 * over 4096 bytes) are skipped with their subtree.
 */
#ifndef VMSCOPE_AGENT_CGROUP_H
#define VMSCOPE_AGENT_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "procfs.h"

struct cg_hier {
	int version;		/* 1 or 2 */
	char *mount;		/* owned absolute path of the hierarchy root */
	bool kernfs;		/* a real cgroup filesystem (not a recorded tree):
				 * directory link counts and short getdents
				 * reads can be trusted (see cgroup.c) */
};

struct cg_hiers {
	struct cg_hier h[2];
	int n;
};

/* Finds the hierarchies (see above); root NULL means the live system.
 * Returns the number found (0 is not an error: a machine or tree may have
 * no memory cgroups), or -1 when out of memory. */
int cg_discover(struct cg_hiers *hs, const char *root);

/* Same as cg_discover(NULL) but reading a given mountinfo file (tests). */
int cg_discover_mountinfo(struct cg_hiers *hs, const char *mountinfo_path);

void cg_hiers_release(struct cg_hiers *hs);

struct cg_select {
	int depth;			/* levels below the root */
	int max;			/* entries per sample, over all hierarchies */
	char *const *include;		/* borrowed globs */
	size_t ninclude;
	char *const *exclude;
	size_t nexclude;
};

/* True when a cgroup path passes the include/exclude globs. */
bool cg_path_selected(const struct cg_select *sel, const char *path);

#define CG_SLOTS 9	/* kept files per cgroup (indexes are collect.c's) */

struct cg_node;

/* Called for each reported cgroup: dirfd is an open descriptor of its
 * directory (owned by the walker), path its contract path. nd, when not
 * NULL, is the directory's node, whose kept files (CG_SLOTS of them) and
 * cached contents survive between walks: read its files with cg_read. */
typedef void (*cg_visit_fn)(void *ctx, const struct cg_hier *h, int dirfd,
			    const char *path, size_t pathlen, struct cg_node *nd);

/* Reused memory of the walk (queue and directory listings). */
#define CG_DENTS_BUF 16384

/* A directory whose descriptors are kept between walks: found again by
 * (hierarchy, relative path) and trusted only while its inode number is
 * the one listed (a cgroup removed and created again under the same name
 * is another directory). In a recorded tree (not kernfs) its kept files
 * are trusted only while the directory's modification and change times
 * are those seen when they were opened, or, once those were confirmed
 * with an inotify watch in place, while the watch reports no change of the
 * directory's entries (see node_validate in cgroup.c). */
/* Cached cgroup files: a limit or a setting (memory.max, memory.high,
 * memory.limit_in_bytes, memory.swappiness, ...) changes only when someone
 * writes it, and a write raises an inotify IN_MODIFY event on the file
 * (vfs_write, for cgroupfs files as for any other). A cgroup's copy of such
 * a file is used instead of reading it while the file's own watch has seen
 * no event: four of a v2 cgroup's nine reads per sample, two of a v1
 * cgroup's five. Files the kernel changes on its own (memory.current,
 * memory.stat, memory.pressure, and memory.events, whose change events
 * are asynchronous and were missing for oom_kill before Linux 5.x) are
 * never cached. The copy is also read afresh every CG_CACHE_REFRESH uses,
 * a bound on staleness should an event ever be lost. */
#define CG_CACHED_MAX 24	/* longest content kept: "18446744073709551615\n" */
#define CG_CACHE_REFRESH 64

struct cg_cached {
	int wd;			/* the file's inotify watch */
	uint8_t slot;		/* which of the node's files */
	bool valid;		/* data is the file's content, unchanged since */
	uint8_t len;
	uint8_t uses;		/* answers from data since it was read */
	char data[CG_CACHED_MAX];
};

struct cg_node {
	char *rel;		/* owned relative path ("" for the root) */
	uint64_t ino;
	int hier;
	int dirfd;		/* kept, or -1 */
	int fd[CG_SLOTS];	/* kept files, -1 when empty, or PF_SLOT_ABSENT */
	uint32_t gen;		/* the last walk that met it */
	bool stamped;		/* recorded tree: mtim/ctim are old enough to
				 * tell a later change (see node_validate) */
	struct timespec mtim, ctim;
	uint64_t dev, dino;	/* recorded tree's hierarchy root: what dirfd is */
	int wd;			/* recorded tree: inotify watch of the directory, or -1 */
	bool changed;		/* the watch reported a change since the last visit */
	struct cg_cached *cache;	/* owned, ncache entries (cg_read) */
	uint8_t ncache;
};

struct cg_walk {
	char *q;		/* owned: queued directories, NUL-separated relative paths */
	size_t qlen, qcap;
	char *l;		/* owned: names of the directory being listed */
	size_t llen, lcap;
	size_t *names;		/* owned: offsets into l */
	char *dents;		/* owned: getdents64 buffer, CG_DENTS_BUF bytes */
	size_t nnames, ncap;
	unsigned long skipped_bad;	/* paths refused by the contract, last walk */
	bool truncated;		/* the last walk stopped at sel->max or a buffer cap */
	/* Kept descriptors. keep.budget is set by the owner before the first
	 * walk; 0 keeps nothing. A node not met by a walk (its cgroup is gone
	 * or no longer walked) is closed at its end. */
	struct pf_keep keep;
	struct cg_node *nodes;	/* owned */
	size_t nnodes, nodecap;
	uint32_t *index;	/* owned open-addressing table of node numbers + 1 */
	size_t indexcap;	/* a power of two, at least twice nnodes */
	uint32_t gen;
	/* recorded trees: one inotify descriptor watching the kept nodes'
	 * directories (created at the first need; ino_fd -1 when it could
	 * not be: then every visit checks the directory times) */
	bool ino_tried;
	int ino_fd;
	/* file watches could not be added (fs.inotify.max_user_watches):
	 * not tried again before this walk generation */
	uint32_t watch_retry_gen;
	/* the directory being visited, while the visitor runs (borrowed):
	 * its hierarchy's mount and its contract path */
	const char *visit_mount, *visit_path;
};

/* Reads file `name` of the visited cgroup (dirfd, nd as given to the
 * visitor; nd NULL: a plain read) into rb, through the node's kept slot
 * `slot` (pf_read_kept). When `cached` (the file is one only a write
 * changes, see struct cg_cached) and the file is kept open, it is answered
 * from the node's copy while that is valid: the copy is taken from the
 * second read on, once the file's watch (added after the first) is in
 * place before the read. A node's copies are all dropped when one of its
 * kept descriptors fails (a cgroup's memory controller disabled removes
 * its files, and enabling it again creates new ones that no watch
 * covers): so a visitor reads a file it never caches (memory.current)
 * before the cached ones. Returns what pf_read_kept returns. */
int cg_read(struct cg_walk *wk, struct cg_node *nd, int dirfd, const char *name, int slot,
	    bool cached, struct rbuf *rb);

/* Closes every kept descriptor and frees the walk's memory. */
void cg_walk_release(struct cg_walk *wk);

/* Visits the selected cgroups of every hierarchy, at most sel->max in all,
 * breadth first. Each directory is opened once: reported (when selected)
 * and listed for children (when above the depth limit) through the same
 * descriptor. Returns the number visited. Directories vanishing or
 * unreadable mid-walk are skipped silently (cgroups come and go). */
int cg_walk(struct cg_walk *wk, const struct cg_hiers *hs, const struct cg_select *sel,
	    cg_visit_fn fn, void *ctx);

#endif
