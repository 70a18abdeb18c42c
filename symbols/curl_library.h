/* libcurl, loaded when a symbol server is first asked or a profile is
 * pushed. Linked in, it and the
 * forty libraries it needs cost every run of profcpu 4 ms of relocations,
 * most runs never download anything. */
#ifndef PROFCPU_CURL_LIBRARY_H
#define PROFCPU_CURL_LIBRARY_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

struct curl_library {
	void *handle;
	CURLcode (*global_init)(long flags);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *curl);
	void (*easy_reset)(CURL *curl);
	CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *curl);
	CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
	const char *(*easy_strerror)(CURLcode code);
	char *(*easy_escape)(CURL *curl, const char *text, int length);
	void (*free)(void *pointer);
	curl_mime *(*mime_init)(CURL *curl);
	curl_mimepart *(*mime_addpart)(curl_mime *mime);
	CURLcode (*mime_name)(curl_mimepart *part, const char *name);
	CURLcode (*mime_filename)(curl_mimepart *part, const char *filename);
	CURLcode (*mime_type)(curl_mimepart *part, const char *type);
	CURLcode (*mime_data)(curl_mimepart *part, const char *data, size_t size);
	void (*mime_free)(curl_mime *mime);
};

/* Loads libcurl.so.4 (or libcurl-gnutls.so.4, the same API). Returns false, with the reason in `why`, when it is
 * not installed. */
bool curl_library_load(struct curl_library *curl, char *why, size_t why_size);
void curl_library_unload(struct curl_library *curl);

#endif
