#include "symbol_server.h"

#include "curl_library.h"
#include "symbols_log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_SERVERS = 8, CONNECT_TIMEOUT_SECONDS = 5, STALLED_SECONDS = 30 };

/* Debug files of large libraries are hundreds of MB; a bigger answer is not
 * a debug file. */
static const curl_off_t MAX_DOWNLOAD_BYTES = (curl_off_t)4 << 30;

enum key_layout {
	LAYOUT_MICROSOFT = 1,
	LAYOUT_DEBUGINFOD = 2,
};

struct server {
	char *url; /* without a trailing '/' */
	unsigned layouts;
	bool unreachable;
};

struct symbol_server {
	struct server servers[MAX_SERVERS];
	size_t count;
	char *cache_dir;
	FILE *log;
	struct curl_library library;
	CURL *curl;
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
	char why[256];

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
	if (!curl_library_load(&server->library, why, sizeof(why))) {
		symbols_log(log, "%s: symbol server off", why);
		symbol_server_free(server);
		return NULL;
	}
	if (server->library.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    !(server->curl = server->library.easy_init())) {
		symbols_log(log, "libcurl failed to start: symbol server off");
		symbol_server_free(server);
		return NULL;
	}
	return server;
}

void symbol_server_free(struct symbol_server *server)
{
	if (!server)
		return;
	for (size_t i = 0; i < server->count; i++)
		free(server->servers[i].url);
	if (server->curl) {
		server->library.easy_cleanup(server->curl);
		server->library.global_cleanup();
	}
	curl_library_unload(&server->library);
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

/* GETs `url` into `out`. Returns the curl result; `*status` is the HTTP
 * status when the server answered. */
static CURLcode download(struct symbol_server *server, const char *url, FILE *out, long *status)
{
	CURL *curl = server->curl;
	CURLcode result;

	server->library.easy_reset(curl);
	server->library.easy_setopt(curl, CURLOPT_URL, url);
	server->library.easy_setopt(curl, CURLOPT_WRITEDATA, out);
	server->library.easy_setopt(curl, CURLOPT_FAILONERROR, 1L);
	server->library.easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
	server->library.easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
	server->library.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	server->library.easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	server->library.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, (long)CONNECT_TIMEOUT_SECONDS);
	server->library.easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
	server->library.easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, (long)STALLED_SECONDS);
	server->library.easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, MAX_DOWNLOAD_BYTES);
	server->library.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	server->library.easy_setopt(curl, CURLOPT_USERAGENT, "profcpu/" PROFCPU_VERSION);
	result = server->library.easy_perform(curl);
	*status = 0;
	server->library.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
	return result;
}

/* Tries each layout of one server; the file lands in `temporary`. */
static bool fetch_from(struct symbol_server *server, struct server *from, const char *hex,
		       FILE *temporary, char *failure, size_t failure_size)
{
	static const struct {
		enum key_layout layout;
		const char *format;
	} keys[] = {
	    {LAYOUT_MICROSOFT, "%s/_.debug/elf-buildid-sym-%s/_.debug"},
	    {LAYOUT_DEBUGINFOD, "%s/buildid/%s/debuginfo"},
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char url[PATH_MAX];
		long status;
		CURLcode result;

		if (!(from->layouts & keys[i].layout))
			continue;
		snprintf(url, sizeof(url), keys[i].format, from->url, hex);
		if (ftruncate(fileno(temporary), 0) != 0 || fseek(temporary, 0, SEEK_SET) != 0)
			return false;
		result = download(server, url, temporary, &status);
		if (result == CURLE_OK && fflush(temporary) == 0)
			return true;
		if (result == CURLE_HTTP_RETURNED_ERROR) {
			snprintf(failure, failure_size, "HTTP %ld", status);
			continue;
		}
		/* Not an answer about this file: the server is down or broken. */
		snprintf(failure, failure_size, "%s; not asked again in this run",
			 server->library.easy_strerror(result));
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
		char failure[CURL_ERROR_SIZE + 64] = "";
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
		fetched = fetch_from(server, from, hex, temporary, failure, sizeof(failure));
		fclose(temporary);
		if (fetched && rename(temporary_path, path) == 0) {
			symbols_log(server->log, "%s: downloaded its debug file from %s into %s",
				    file_name, from->url, path);
			return strdup(path);
		}
		unlink(temporary_path);
		symbols_log(server->log, "%s: no debug file for build-id %s on %s (%s)", file_name,
			    hex, from->url, failure);
	}
	return NULL;
}
