#include "agent_kept.h"
#include "agent_spool.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LABELS_SUFFIX	  ".labels"
#define PROFILE_SUFFIX	  ".pb.gz"
#define PROFILE_NAME_KEY  "__name__=" /* in a labels file: not process_cpu */
#define SERVICE_KEY	  "service_name="
#define MAX_PROFILE_BYTES ((size_t)64 << 20)
#define OTLP_REQUEST	  "otlp-request.pb"
/* A period's request for all its processes: larger than one profile. */
#define MAX_OTLP_REQUEST_BYTES ((size_t)256 << 20)

/* DIR/series-NUMBER followed by `suffix` (malloc'd). */
static char *kept_path(const char *dir, size_t number, const char *suffix)
{
	return xasprintf("%s/series-%06zu%s", dir, number, suffix);
}

/* Writes `size` bytes of `data` to `path` in the spool; false when it
 * cannot, errno saying why. */
static bool write_kept_file(const char *path, const unsigned char *data, size_t size)
{
	FILE *out = agent_spool_open_file(path, O_WRONLY | O_CREAT | O_TRUNC, "w");
	bool written = out && fwrite(data, 1, size, out) == size;

	if (out && fclose(out) != 0)
		written = false;
	return written;
}

void agent_kept_write(const char *dir, size_t number, const unsigned char *data, size_t size,
		      const struct agent_labels *labels)
{
	char *path = kept_path(dir, number, PROFILE_SUFFIX);
	FILE *out;
	bool written = write_kept_file(path, data, size);

	if (written) {
		free(path);
		path = kept_path(dir, number, LABELS_SUFFIX);
		out = agent_spool_open_file(path, O_WRONLY | O_CREAT | O_TRUNC, "w");
		written = out != NULL;
		if (out) {
			fprintf(out, SERVICE_KEY "%s\n", labels->service);
			if (labels->profile_name)
				fprintf(out, PROFILE_NAME_KEY "%s\n", labels->profile_name);
			for (size_t i = 0; i < labels->labels.count; i++)
				fprintf(out, "%s\n", labels->labels.items[i]);
			written = fclose(out) == 0;
		}
	}
	if (!written)
		report_error("cannot keep %s for a later push: %s; that profile is dropped", path,
			     strerror(errno));
	free(path);
}

/* Reads a labels file, as agent_kept_write wrote it; false, errno set,
 * when it cannot. */
static bool read_labels(const char *path, struct agent_labels *labels)
{
	FILE *file = agent_spool_open_file(path, O_RDONLY, "r");
	char line[1024];

	if (file)
		errno = EINVAL; /* opened, but without a service_name line */
	while (file && fgets(line, sizeof(line), file)) {
		line[strcspn(line, "\n")] = '\0';
		if (!labels->service && !strncmp(line, SERVICE_KEY, strlen(SERVICE_KEY)))
			labels->service = xstrdup(line + strlen(SERVICE_KEY));
		else if (!labels->profile_name &&
			 !strncmp(line, PROFILE_NAME_KEY, strlen(PROFILE_NAME_KEY)))
			labels->profile_name = xstrdup(line + strlen(PROFILE_NAME_KEY));
		else
			string_list_append(&labels->labels, xstrdup(line));
	}
	if (file && ferror(file))
		errno = EIO;
	if (file)
		fclose(file);
	return labels->service != NULL;
}

bool agent_kept_read(const char *labels_path, unsigned char **data, size_t *size,
		     struct agent_labels *labels, char **profile_path, char *why, size_t why_size)
{
	*labels = (struct agent_labels){0};
	*profile_path = xasprintf("%.*s" PROFILE_SUFFIX,
				  (int)(strlen(labels_path) - strlen(LABELS_SUFFIX)), labels_path);
	*data = read_whole_file(*profile_path, O_NOFOLLOW, MAX_PROFILE_BYTES, size);
	if (*data && read_labels(labels_path, labels))
		return true;
	snprintf(why, why_size, "cannot read %s: %s", *data ? labels_path : *profile_path,
		 errno == EINVAL && *data ? "no service_name line" : strerror(errno));
	return false;
}

int agent_kept_is_labels_file(const struct dirent *entry)
{
	size_t length = strlen(entry->d_name);

	return length > strlen(LABELS_SUFFIX) &&
	       !strcmp(entry->d_name + length - strlen(LABELS_SUFFIX), LABELS_SUFFIX);
}

char *agent_kept_otlp_path(const char *dir)
{
	return xasprintf("%s/" OTLP_REQUEST, dir);
}

void agent_kept_write_otlp(const char *dir, const unsigned char *data, size_t size)
{
	char *path = agent_kept_otlp_path(dir);

	if (!write_kept_file(path, data, size)) {
		report_error("cannot keep %s for a later export: %s; that request is dropped", path,
			     strerror(errno));
		unlink(path);
	}
	free(path);
}

unsigned char *agent_kept_read_otlp(const char *path, size_t *size, char *why, size_t why_size)
{
	unsigned char *data = read_whole_file(path, O_NOFOLLOW, MAX_OTLP_REQUEST_BYTES, size);

	if (!data)
		snprintf(why, why_size, "cannot read %s: %s", path, strerror(errno));
	return data;
}
