/* Where the tests find .NET's arm64 runtime pack (NuGet's
 * Microsoft.NETCore.App.Runtime.linux-arm64: a real arm64 libcoreclr.so and
 * ReadyToRun framework), which scripts/test restores into the NuGet cache
 * (tests/dotnet/Arm64RuntimePack). */
#ifndef PROFCPU_TEST_ARM64_RUNTIME_PACK_H
#define PROFCPU_TEST_ARM64_RUNTIME_PACK_H

#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The pack's runtimes/linux-arm64 folder into `dir`, the newest version
 * the NuGet cache ($NUGET_PACKAGES, else ~/.nuget/packages) holds; false
 * when it holds none. */
static inline bool find_arm64_runtime_pack(char *dir, size_t size)
{
	const char *packages = getenv("NUGET_PACKAGES"), *home = getenv("HOME");
	char pattern[4096];
	glob_t found;
	bool ok;

	if (packages)
		snprintf(pattern, sizeof(pattern), "%s", packages);
	else
		snprintf(pattern, sizeof(pattern), "%s/.nuget/packages", home ? home : "/root");
	snprintf(pattern + strlen(pattern), sizeof(pattern) - strlen(pattern),
		 "/microsoft.netcore.app.runtime.linux-arm64/*/runtimes/linux-arm64");
	ok = glob(pattern, GLOB_ONLYDIR, NULL, &found) == 0;
	if (ok)
		snprintf(dir, size, "%s", found.gl_pathv[found.gl_pathc - 1]);
	globfree(&found);
	return ok;
}

#endif
