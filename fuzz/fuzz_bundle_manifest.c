/* A .NET single-file app's executable, which the target chose: its ELF
 * program headers, the bundle marker in its data and the manifest, and the
 * files it stores (compressed ones inflated). The input is read both as a
 * whole executable and as a manifest alone. */
#include "bundle_manifest.h"
#include "fuzz_input.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bundle_manifest manifest;
	char path[32];
	int fd = fuzz_input_file(data, size, path);

	if (bundle_manifest_read(fd, &manifest)) {
		bundle_manifest_assembly_at(&manifest, 4096);
		for (size_t i = 0; i < manifest.count && i < 8; i++) {
			size_t read;

			/* A page, as the capture reads, and (bounded) all. */
			free(bundle_entry_read(fd, &manifest.entries[i], 4096, &read));
			free(bundle_entry_read(fd, &manifest.entries[i], 1u << 20, &read));
		}
		bundle_manifest_free(&manifest);
	}
	close(fd);
	if (bundle_manifest_parse(data, size, 1u << 30, &manifest)) {
		bundle_manifest_assembly_at(&manifest, 4096);
		bundle_manifest_find(&manifest, "app.dll");
		bundle_manifest_free(&manifest);
	}
	return 0;
}
