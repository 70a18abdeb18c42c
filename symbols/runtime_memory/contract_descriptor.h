/* The .NET runtime's description of itself (.NET 9 and later): the JSON
 * "data descriptor" that libcoreclr.so's DotNetRuntimeContractDescriptor
 * points to, in its compact form:
 *
 *   {"version": 0, "baseline": "empty",
 *    "types": {"MethodDesc": {"!": 16, "Slot": 4, "CodeData": [8, "pointer"]}},
 *    "globals": {"ExecutionManagerCodeRangeMapAddress": [[20], "pointer"],
 *                "MethodDescAlignment": ["0x8", "uint64"], "Architecture": ["x64", "string"]},
 *    "contracts": {"ExecutionManager": 2}}
 *
 * A type gives its size ("!") and its fields' offsets; a global is a value
 * (a number or a "0x" string) or, as [index], the index-th entry of the
 * descriptor's pointer data (the address of a runtime variable). The text
 * is the target's, so every lookup checks what it finds; a descriptor that
 * leans on a baseline other than "empty" (well-known layouts this reader
 * does not carry) is refused. */
#ifndef PROFCPU_CONTRACT_DESCRIPTOR_H
#define PROFCPU_CONTRACT_DESCRIPTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct contract_descriptor;

/* The most pointer data entries a descriptor may have. */
#define CONTRACT_DESCRIPTOR_MAX_POINTER_DATA (1 << 16)

/* Parses `length` bytes of JSON, with the descriptor's `pointer_count`
 * pointer data entries (copied; at most
 * CONTRACT_DESCRIPTOR_MAX_POINTER_DATA). NULL on failure, with the reason
 * in `error` (one line). */
struct contract_descriptor *contract_descriptor_parse(const char *json, size_t length,
						      const uint64_t *pointer_data,
						      size_t pointer_count, char *error,
						      size_t error_size);
void contract_descriptor_free(struct contract_descriptor *descriptor);

/* Formats the one-line reason of a failure into `error` (`size` bytes, none
 * when 0): how this folder's readers of the runtime's memory report. */
void runtime_memory_error(char *error, size_t size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* The offset of `field` in `type`. False when either is not described. */
bool contract_descriptor_field(const struct contract_descriptor *descriptor, const char *type,
			       const char *field, uint32_t *offset);

/* The size of `type`. False when it gives none. */
bool contract_descriptor_type_size(const struct contract_descriptor *descriptor, const char *type,
				   uint32_t *size);

/* A numeric global's value (a pointer global's: the address from the pointer
 * data). False when there is none, or it is a string. */
bool contract_descriptor_global(const struct contract_descriptor *descriptor, const char *name,
				uint64_t *value);

/* A string global ("Architecture": "x64"), or NULL. Lives as long as the
 * descriptor. */
const char *contract_descriptor_global_string(const struct contract_descriptor *descriptor,
					      const char *name);

/* The version of the algorithmic contract `name` the runtime implements
 * ("ExecutionManager": 2 in .NET 10). False when it lists none. */
bool contract_descriptor_contract(const struct contract_descriptor *descriptor, const char *name,
				  uint32_t *version);

#endif
