#include "library_loader.h"

#include <dlfcn.h>
#include <stdio.h>

bool library_load(const char *soname, const char *package, const struct library_function *functions,
		  size_t count, char *why, size_t why_size)
{
	void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

	if (!handle) {
		snprintf(why, why_size, "cannot load %s (%s): install it (Debian's %s)", soname,
			 dlerror(), package);
		return false;
	}
	for (size_t i = 0; i < count; i++)
		if (!(*functions[i].pointer = dlsym(handle, functions[i].name))) {
			snprintf(why, why_size, "%s has no %s: install a newer %s", soname,
				 functions[i].name, package);
			/* None may point into the library closed. */
			while (i--)
				*functions[i].pointer = NULL;
			dlclose(handle);
			return false;
		}
	return true;
}
