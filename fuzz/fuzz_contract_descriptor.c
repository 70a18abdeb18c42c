/* The .NET runtime's contract descriptor JSON, which the target's memory
 * holds: parsed, then every kind of lookup, by the names the route uses and
 * by the first key the input itself spells. */
#include "contract_descriptor.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t pointers[] = {0, 0x1000, 0x2000, 0x3000};
	char error[128], name[32] = "";
	uint32_t number;
	uint64_t value;
	struct contract_descriptor *descriptor =
	    contract_descriptor_parse((const char *)data, size, pointers, 4, error, sizeof(error));

	if (!descriptor)
		return 0;
	/* a name from the input: what follows its first quote */
	const uint8_t *quote = memchr(data, '"', size);
	if (quote) {
		size_t left = size - (size_t)(quote + 1 - data);
		const uint8_t *end = memchr(quote + 1, '"', left);
		size_t length = end ? (size_t)(end - quote - 1) : left;

		memcpy(name, quote + 1, length < sizeof(name) - 1 ? length : sizeof(name) - 1);
	}
	const char *const types[] = {"RangeSection", "MethodDesc", "T", "!", name};
	for (size_t i = 0; i < sizeof(types) / sizeof(*types); i++) {
		contract_descriptor_type_size(descriptor, types[i], &number);
		contract_descriptor_field(descriptor, types[i], "RangeBegin", &number);
		contract_descriptor_field(descriptor, types[i], name, &number);
		contract_descriptor_global(descriptor, types[i], &value);
		contract_descriptor_global_string(descriptor, types[i]);
		contract_descriptor_contract(descriptor, types[i], &number);
	}
	contract_descriptor_free(descriptor);
	return 0;
}
