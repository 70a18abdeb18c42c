/* The .NET runtime's reply on its diagnostics IPC socket. */
#include "dotnet_diagnostics.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[128];

	dotnet_diagnostics_check_reply(data, size, why, sizeof(why));
	return 0;
}
