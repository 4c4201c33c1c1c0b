/* static.c - dashboard files (see static.h). Text files (HTML, JS, CSS,
 * JSON, SVG) go out gzip-compressed to a client that accepts it: uPlot and
 * the modules shrink about 4x. The compressed bytes are kept in a small
 * cache keyed by path, size and mtime, so a file is compressed once per
 * version, not once per request. */
#include "static.h"
#include "respond.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <zlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const struct {
	const char *ext, *type;
} mime_types[] = {
	{ ".html", "text/html; charset=utf-8" },
	{ ".htm", "text/html; charset=utf-8" },
	{ ".js", "text/javascript; charset=utf-8" },
	{ ".mjs", "text/javascript; charset=utf-8" },
	{ ".css", "text/css; charset=utf-8" },
	{ ".svg", "image/svg+xml" },
	{ ".json", "application/json" },
	{ ".map", "application/json" },
	{ ".png", "image/png" },
	{ ".ico", "image/x-icon" },
	{ ".woff2", "font/woff2" },
	{ ".txt", "text/plain; charset=utf-8" },
	{ ".md", "text/markdown; charset=utf-8" },
};

const char *static_mime(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (dot && !strchr(dot, '/'))
		for (size_t i = 0; i < sizeof(mime_types) / sizeof(mime_types[0]); i++)
			if (strcasecmp(dot, mime_types[i].ext) == 0)
				return mime_types[i].type;
	return "application/octet-stream";
}

bool static_path_ok(const char *path)
{
	size_t n = strlen(path);

	if (n == 0 || n > 1024 || path[0] != '/')
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)path[i];
		if (c < 0x20 || c == 0x7f || c == '\\')
			return false;
	}
	/* every component after a '/' */
	for (const char *p = path + 1; *p;) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		if (len == 0 && slash)
			return false;	/* "//" */
		if (len && p[0] == '.')
			return false;	/* ".", "..", and dotfiles (.git, .env, .htpasswd) */
		p += len;
		if (*p == '/')
			p++;
	}
	return true;
}

static void http_date(time_t t, char *buf, size_t len)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

bool static_accepts_gzip(const char *accept_encoding)
{
	/* "gzip", "gzip;q=0.8", "deflate, gzip"; not "gzip;q=0" */
	for (const char *p = accept_encoding; p && *p;) {
		p += strspn(p, " \t,");
		size_t n = strcspn(p, ",;");
		bool gz = (n == 4 && strncasecmp(p, "gzip", 4) == 0) || (n == 6 && strncasecmp(p, "x-gzip", 6) == 0);
		p += n;
		if (*p == ';') {
			const char *q = p + 1;
			q += strspn(q, " \t");
			if (gz && strncasecmp(q, "q=", 2) == 0 && strtod(q + 2, NULL) <= 0.0)
				gz = false;
			p += strcspn(p, ",");
		}
		if (gz)
			return true;
	}
	return false;
}

bool static_compressible(const char *mime)
{
	return strncmp(mime, "text/", 5) == 0 || strcmp(mime, "application/json") == 0 ||
	       strcmp(mime, "image/svg+xml") == 0;
}

int static_gzip(const void *in, size_t len, unsigned char **out, size_t *outlen)
{
	z_stream z;
	unsigned char *buf;
	uLong cap = compressBound((uLong)len) + 32;	/* + the gzip header and trailer */

	*out = NULL;
	*outlen = 0;
	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip wrapper instead of zlib's */
	if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	buf = malloc(cap);
	if (!buf) {
		deflateEnd(&z);
		return -1;
	}
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = buf;
	z.avail_out = (uInt)cap;
	int rc = deflate(&z, Z_FINISH);
	size_t n = z.total_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(buf);
		return -1;
	}
	*out = buf;
	*outlen = n;
	return 0;
}

void static_etag(long long size, long long mtime_s, long mtime_ns, bool gz, char *buf, size_t len)
{
	snprintf(buf, len, "\"%llx-%llx.%lx%s\"", size, mtime_s, mtime_ns, gz ? "-gz" : "");
}

/* The compressed-file cache: a handful of slots (the dashboard has about
 * twenty files), replaced round-robin. */
#define GZ_SLOTS 48
#define GZ_MAX_FILE (8 << 20)	/* larger files go out as they are */
static struct gz_slot {
	char path[PATH_MAX];
	off_t size;
	struct timespec mtime;
	unsigned char *gz;	/* owned */
	size_t gzlen;
} gz_cache[GZ_SLOTS];
static unsigned gz_next;
static pthread_mutex_t gz_lock = PTHREAD_MUTEX_INITIALIZER;

/* A response with the gzip form of the open file fd (path, stat sb), from
 * the cache or compressed now; NULL when that fails (the caller sends the
 * file as it is). Does not close fd. */
static struct MHD_Response *gz_response(const char *path, int fd, const struct stat *sb)
{
	struct MHD_Response *r = NULL;

	if (sb->st_size <= 0 || sb->st_size > GZ_MAX_FILE || strlen(path) >= PATH_MAX)
		return NULL;
	pthread_mutex_lock(&gz_lock);
	for (int i = 0; i < GZ_SLOTS; i++) {
		struct gz_slot *e = &gz_cache[i];
		if (e->gz && e->size == sb->st_size && e->mtime.tv_sec == sb->st_mtim.tv_sec &&
		    e->mtime.tv_nsec == sb->st_mtim.tv_nsec && strcmp(e->path, path) == 0) {
			r = MHD_create_response_from_buffer(e->gzlen, e->gz, MHD_RESPMEM_MUST_COPY);
			pthread_mutex_unlock(&gz_lock);
			return r;
		}
	}
	pthread_mutex_unlock(&gz_lock);
	size_t len = (size_t)sb->st_size, got = 0;
	char *raw = malloc(len);
	if (!raw)
		return NULL;
	while (got < len) {
		ssize_t k = pread(fd, raw + got, len - got, (off_t)got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	unsigned char *gz = NULL;
	size_t gzlen = 0;
	int rc = got == len ? static_gzip(raw, len, &gz, &gzlen) : -1;
	free(raw);
	if (rc < 0)
		return NULL;
	r = MHD_create_response_from_buffer(gzlen, gz, MHD_RESPMEM_MUST_COPY);
	pthread_mutex_lock(&gz_lock);
	struct gz_slot *e = &gz_cache[gz_next++ % GZ_SLOTS];
	free(e->gz);
	snprintf(e->path, sizeof(e->path), "%s", path);
	e->size = sb->st_size;
	e->mtime = sb->st_mtim;
	e->gz = gz;	/* the cache owns it now */
	e->gzlen = gzlen;
	pthread_mutex_unlock(&gz_lock);
	return r;
}

static enum MHD_Result not_found(struct request *rq)
{
	return respond_error(rq, 404, "not found", rq->path, NULL);
}

enum MHD_Result static_serve(struct request *rq)
{
	const char *dir = rq->app->cfg->web_dir;
	char rel[1100], full[PATH_MAX], real_dir[PATH_MAX], real_file[PATH_MAX], date[64];
	struct stat sb;
	int fd;

	if (!static_path_ok(rq->path))
		return not_found(rq);
	snprintf(rel, sizeof(rel), "%s%s", rq->path,
		 rq->path[strlen(rq->path) - 1] == '/' ? "index.html" : "");
	if (snprintf(full, sizeof(full), "%s%s", dir, rel) >= (int)sizeof(full))
		return not_found(rq);
	/* the file must resolve to a place inside the web directory */
	if (!realpath(dir, real_dir) || !realpath(full, real_file))
		return not_found(rq);
	size_t dl = strlen(real_dir);
	if (strncmp(real_file, real_dir, dl) != 0 || (real_file[dl] != '/' && real_file[dl] != '\0'))
		return not_found(rq);
	/* nor through a link to a dotfile inside it */
	if (real_file[dl] && !static_path_ok(real_file + dl))
		return not_found(rq);
	fd = open(real_file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return not_found(rq);
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return not_found(rq);
	}
	http_date(sb.st_mtime, date, sizeof(date));
	const char *mime = static_mime(real_file);
	bool is_html = strcmp(mime, mime_types[0].type) == 0;
	bool zip_ok = static_compressible(mime);
	bool gz = zip_ok && sb.st_size >= 256 &&
		  static_accepts_gzip(MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Accept-Encoding"));
	char etag[96];
	static_etag((long long)sb.st_size, (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec, gz, etag, sizeof(etag));
	const char *inm = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "If-None-Match");
	const char *ims = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "If-Modified-Since");
	/* If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2) */
	if (inm ? strstr(inm, etag) != NULL : (ims && strcmp(ims, date) == 0)) {
		close(fd);
		struct MHD_Response *r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
		if (!r)
			return MHD_NO;
		MHD_add_response_header(r, "Last-Modified", date);
		MHD_add_response_header(r, "ETag", etag);
		if (zip_ok)
			MHD_add_response_header(r, "Vary", "Accept-Encoding");
		return respond_queue(rq, 304, r);
	}
	struct MHD_Response *resp = gz ? gz_response(real_file, fd, &sb) : NULL;
	if (resp) {
		close(fd);
		MHD_add_response_header(resp, "Content-Encoding", "gzip");
	} else {
		if (gz)	/* compression failed: the plain file, with its own tag */
			static_etag((long long)sb.st_size, (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec, false,
				    etag, sizeof(etag));
		resp = MHD_create_response_from_fd((size_t)sb.st_size, fd);
		if (!resp) {
			close(fd);
			return MHD_NO;
		}
	}
	MHD_add_response_header(resp, "Content-Type", mime);
	MHD_add_response_header(resp, "Last-Modified", date);
	MHD_add_response_header(resp, "ETag", etag);
	if (zip_ok)
		MHD_add_response_header(resp, "Vary", "Accept-Encoding");
	MHD_add_response_header(resp, "Cache-Control", is_html ? "no-cache" : "public, max-age=3600");
	return respond_queue(rq, 200, resp);
}

const char *static_missing_vendor(const char *web_dir)
{
	static const char *const files[] = { "vendor/uPlot.min.esm.js", "vendor/uPlot.min.css" };
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int n = snprintf(path, sizeof(path), "%s/%s", web_dir, files[i]);
		if (n < 0 || (size_t)n >= sizeof(path) || access(path, R_OK) != 0)
			return files[i];
	}
	return NULL;
}
