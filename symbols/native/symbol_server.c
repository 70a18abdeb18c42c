#include "symbol_server.h"

#include "http_client.h"
#include "symbols_log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_SERVERS = 8, MAX_REDIRECTS = 5, TIMEOUT_MS = 30000 };

/* Debug files of large libraries are hundreds of MB; a bigger answer is not
 * a debug file. */
static const uint64_t MAX_DOWNLOAD_BYTES = (uint64_t)4 << 30;

enum key_layout {
	LAYOUT_MICROSOFT = 1,
	LAYOUT_DEBUGINFOD = 2,
};

struct server {
	char *url;   /* without a trailing '/' */
	char *shown; /* the URL without its user info, for the log */
	unsigned layouts;
	bool unreachable;
};

struct symbol_server {
	struct server servers[MAX_SERVERS];
	size_t count;
	char *cache_dir;
	FILE *log;
};

static void add_server(struct symbol_server *server, const char *url, size_t length,
		       unsigned layouts)
{
	while (length && url[length - 1] == '/')
		length--;
	if (length == 0 || server->count == MAX_SERVERS)
		return;
	server->servers[server->count].url = strndup(url, length);
	if (!server->servers[server->count].url)
		return;
	server->servers[server->count].shown = http_redact_url(server->servers[server->count].url);
	if (!server->servers[server->count].shown) {
		free(server->servers[server->count].url);
		return;
	}
	server->servers[server->count].layouts = layouts;
	server->count++;
}

static char *default_cache_dir(void)
{
	const char *base = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *path = NULL;

	if (base && *base)
		return asprintf(&path, "%s/profcpu/symbols", base) < 0 ? NULL : path;
	if (home && *home)
		return asprintf(&path, "%s/.cache/profcpu/symbols", home) < 0 ? NULL : path;
	return NULL;
}

struct symbol_server *symbol_server_new(const char *url, const char *debuginfod_urls,
					const char *cache_dir, FILE *log)
{
	struct symbol_server *server = calloc(1, sizeof(*server));

	if (!server)
		return NULL;
	server->log = log;
	if (url && *url)
		add_server(server, url, strlen(url), LAYOUT_MICROSOFT | LAYOUT_DEBUGINFOD);
	for (const char *cursor = debuginfod_urls; cursor && *cursor;) {
		size_t length = strcspn(cursor, " \t");

		add_server(server, cursor, length, LAYOUT_DEBUGINFOD);
		cursor += length;
		cursor += strspn(cursor, " \t");
	}
	if (server->count == 0) {
		symbol_server_free(server);
		return NULL;
	}
	server->cache_dir = cache_dir ? strdup(cache_dir) : default_cache_dir();
	if (!server->cache_dir) {
		symbols_log(log, "no folder to keep downloaded debug files in: symbol server off "
				 "(set HOME or XDG_CACHE_HOME)");
		symbol_server_free(server);
		return NULL;
	}
	return server;
}

void symbol_server_free(struct symbol_server *server)
{
	if (!server)
		return;
	for (size_t i = 0; i < server->count; i++) {
		free(server->servers[i].url);
		free(server->servers[i].shown);
	}
	http_client_cleanup();
	free(server->cache_dir);
	free(server);
}

bool symbol_server_key_path(const char *folder, const struct build_id *id, char *path, size_t size)
{
	char hex[BUILD_ID_HEX_MAX];
	int length;

	build_id_to_hex(id, hex);
	length = snprintf(path, size, "%s/_.debug/elf-buildid-sym-%s/_.debug", folder, hex);
	return length > 0 && (size_t)length < size;
}

/* mkdir -p for the folders above `path`'s last component. */
static bool make_parent_dirs(char *path)
{
	for (char *slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST) {
			*slash = '/';
			return false;
		}
		*slash = '/';
	}
	return true;
}

/* Where a download goes: the file, and how much it holds. */
struct download {
	FILE *out;
	uint64_t size;
};

static bool write_download(void *context, const char *data, size_t size, char *why, size_t why_size)
{
	struct download *download = context;

	download->size += size;
	if (download->size > MAX_DOWNLOAD_BYTES) {
		snprintf(why, why_size, "the answer is larger than 4 GiB: not a debug file");
		return false;
	}
	if (fwrite(data, 1, size, download->out) != size) {
		snprintf(why, why_size, "cannot write the download: %s", strerror(errno));
		return false;
	}
	return true;
}

/* GETs `url` into `out`. True when the server answered: `*status` is its
 * HTTP status; false with the reason in `why`. */
static bool download(const char *url, FILE *out, int *status, char *why, size_t why_size)
{
	struct download download = {.out = out};
	const struct http_request request = {
	    .method = "GET",
	    .url = url,
	    .timeout_ms = TIMEOUT_MS,
	    .max_redirects = MAX_REDIRECTS,
	    .sink = write_download,
	    .sink_context = &download,
	};

	return http_send(&request, status, why, why_size);
}

/* Tries each layout of one server; the file lands in `temporary`. */
static bool fetch_from(struct server *from, const char *hex, FILE *temporary, char *failure,
		       size_t failure_size)
{
	static const struct {
		enum key_layout layout;
		const char *format;
	} keys[] = {
	    {LAYOUT_MICROSOFT, "%s/_.debug/elf-buildid-sym-%s/_.debug"},
	    {LAYOUT_DEBUGINFOD, "%s/buildid/%s/debuginfo"},
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char url[PATH_MAX], why[256];
		int status;

		if (!(from->layouts & keys[i].layout))
			continue;
		snprintf(url, sizeof(url), keys[i].format, from->url, hex);
		if (ftruncate(fileno(temporary), 0) != 0 || fseek(temporary, 0, SEEK_SET) != 0)
			return false;
		if (download(url, temporary, &status, why, sizeof(why))) {
			if (status / 100 == 2 && fflush(temporary) == 0)
				return true;
			snprintf(failure, failure_size, "HTTP %d", status);
			continue;
		}
		/* Not an answer about this file: the server is down or broken. */
		snprintf(failure, failure_size, "%s; not asked again in this run", why);
		from->unreachable = true;
		return false;
	}
	return false;
}

char *symbol_server_fetch(struct symbol_server *server, const struct build_id *id,
			  const char *file_name)
{
	char path[PATH_MAX], temporary_path[PATH_MAX + 16], hex[BUILD_ID_HEX_MAX];
	struct stat status;

	if (id->size == 0 || !symbol_server_key_path(server->cache_dir, id, path, sizeof(path)))
		return NULL;
	if (stat(path, &status) == 0 && S_ISREG(status.st_mode))
		return strdup(path);
	build_id_to_hex(id, hex);
	for (size_t i = 0; i < server->count; i++) {
		struct server *from = &server->servers[i];
		char failure[320] = "";
		FILE *temporary;
		int fd;
		bool fetched;

		if (from->unreachable)
			continue;
		snprintf(temporary_path, sizeof(temporary_path), "%s.XXXXXX", path);
		if (!make_parent_dirs(temporary_path) || (fd = mkstemp(temporary_path)) < 0) {
			symbols_log(server->log, "cannot write in %s (%s): downloads are off",
				    server->cache_dir, strerror(errno));
			return NULL;
		}
		temporary = fdopen(fd, "w");
		if (!temporary) {
			close(fd);
			unlink(temporary_path);
			return NULL;
		}
		fetched = fetch_from(from, hex, temporary, failure, sizeof(failure));
		fclose(temporary);
		if (fetched && rename(temporary_path, path) == 0) {
			symbols_log(server->log, "%s: downloaded its debug file from %s into %s",
				    file_name, from->shown, path);
			return strdup(path);
		}
		unlink(temporary_path);
		symbols_log(server->log, "%s: no debug file for build-id %s on %s (%s)", file_name,
			    hex, from->shown, failure);
	}
	return NULL;
}
