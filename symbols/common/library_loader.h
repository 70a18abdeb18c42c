/* Libraries opened when a command first needs them (dlopen), so that the
 * others start without them: libwget and its GnuTLS for HTTP, libmicrohttpd
 * for serve. Each user lists its functions once, with their declared types
 * (LIBRARY_FUNCTION_POINTER), and loads them all at once. */
#ifndef PROFCPU_LIBRARY_LOADER_H
#define PROFCPU_LIBRARY_LOADER_H

#include <stdbool.h>
#include <stddef.h>

/* A member of the user's table of functions, typed as its header declares
 * `name`; and the entry that tells library_load() where it goes. */
#define LIBRARY_FUNCTION_POINTER(name)	    __typeof__(name) *name;
#define LIBRARY_FUNCTION_ENTRY(table, name) {#name, (void **)&(table).name},

struct library_function {
	const char *name;
	void **pointer;
};

/* Opens the library `soname` and fills the pointer of each of `functions`.
 * False, with one phrase for the user in `why` (naming `package`, the
 * Debian package that holds it) and every pointer NULL, when the library or
 * a function is missing. A library loaded stays open for the rest of the
 * run. */
bool library_load(const char *soname, const char *package, const struct library_function *functions,
		  size_t count, char *why, size_t why_size);

#endif
