#include "curl_library.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

bool curl_library_load(struct curl_library *curl, char *why, size_t why_size)
{
	/* Each function, and where its pointer goes. */
	const struct {
		const char *name;
		void **pointer;
	} functions[] = {
	    {"curl_global_init", (void **)&curl->global_init},
	    {"curl_global_cleanup", (void **)&curl->global_cleanup},
	    {"curl_easy_init", (void **)&curl->easy_init},
	    {"curl_easy_cleanup", (void **)&curl->easy_cleanup},
	    {"curl_easy_reset", (void **)&curl->easy_reset},
	    {"curl_easy_setopt", (void **)&curl->easy_setopt},
	    {"curl_easy_perform", (void **)&curl->easy_perform},
	    {"curl_easy_getinfo", (void **)&curl->easy_getinfo},
	    {"curl_easy_strerror", (void **)&curl->easy_strerror},
	    {"curl_easy_escape", (void **)&curl->easy_escape},
	    {"curl_free", (void **)&curl->free},
	    {"curl_mime_init", (void **)&curl->mime_init},
	    {"curl_mime_addpart", (void **)&curl->mime_addpart},
	    {"curl_mime_name", (void **)&curl->mime_name},
	    {"curl_mime_filename", (void **)&curl->mime_filename},
	    {"curl_mime_type", (void **)&curl->mime_type},
	    {"curl_mime_data", (void **)&curl->mime_data},
	    {"curl_mime_free", (void **)&curl->mime_free},
	};

	memset(curl, 0, sizeof(*curl));
	curl->handle = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!curl->handle) /* Debian's GnuTLS build, as the sidecar image has */
		curl->handle = dlopen("libcurl-gnutls.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!curl->handle) {
		snprintf(why, why_size, "libcurl is not installed (%s)", dlerror());
		return false;
	}
	for (size_t i = 0; i < sizeof(functions) / sizeof(*functions); i++) {
		*functions[i].pointer = dlsym(curl->handle, functions[i].name);
		if (!*functions[i].pointer) {
			snprintf(why, why_size, "libcurl has no %s", functions[i].name);
			curl_library_unload(curl);
			return false;
		}
	}
	return true;
}

void curl_library_unload(struct curl_library *curl)
{
	if (curl->handle)
		dlclose(curl->handle);
	memset(curl, 0, sizeof(*curl));
}
