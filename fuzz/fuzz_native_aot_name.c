/* A symbol of an ELF file the target chose: read as a NativeAOT method's
 * name when the file exports DotNetRuntimeDebugHeader. */
#include "native_aot_name.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *symbol = malloc(size + 1);

	if (!symbol)
		return 0;
	memcpy(symbol, data, size);
	symbol[size] = '\0'; /* a symbol ends at its first NUL */
	free(native_aot_name(symbol));
	free(symbol);
	return 0;
}
