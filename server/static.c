/* static.c - dashboard files (see static.h). */
#include "static.h"
#include "respond.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return false;
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
	fd = open(real_file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return not_found(rq);
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return not_found(rq);
	}
	http_date(sb.st_mtime, date, sizeof(date));
	const char *ims = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "If-Modified-Since");
	bool is_html = strcmp(static_mime(real_file), mime_types[0].type) == 0;
	if (ims && strcmp(ims, date) == 0) {
		close(fd);
		struct MHD_Response *r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
		if (!r)
			return MHD_NO;
		MHD_add_response_header(r, "Last-Modified", date);
		return respond_queue(rq, 304, r);
	}
	struct MHD_Response *resp = MHD_create_response_from_fd((size_t)sb.st_size, fd);
	if (!resp) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", static_mime(real_file));
	MHD_add_response_header(resp, "Last-Modified", date);
	MHD_add_response_header(resp, "Cache-Control", is_html ? "no-cache" : "public, max-age=3600");
	return respond_queue(rq, 200, resp);
}
