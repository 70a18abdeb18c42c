#include "contract_descriptor.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The compact form nests four deep (globals' [[index], type]); anything
 * deeper is not a descriptor and costs the tokenizer nothing to refuse. */
enum { MAX_DEPTH = 8 };

struct contract_descriptor {
	json_object *root;
	json_object *types, *globals, *contracts; /* objects, or NULL */
	uint64_t *pointer_data;
	size_t pointer_count;
};

void runtime_memory_error(char *error, size_t size, const char *format, ...)
{
	va_list arguments;

	if (!size)
		return;
	va_start(arguments, format);
	vsnprintf(error, size, format, arguments);
	va_end(arguments);
}

/* A JSON number or a numeric string ("0x8", "12"), not negative. */
static bool json_unsigned(json_object *value, uint64_t *result)
{
	if (json_object_is_type(value, json_type_int)) {
		/* json-c keeps a negative number as a signed one, a larger one
		 * than INT64_MAX as an unsigned one */
		if (json_object_get_int64(value) < 0)
			return false;
		*result = json_object_get_uint64(value);
		return true;
	}
	if (!json_object_is_type(value, json_type_string))
		return false;

	const char *text = json_object_get_string(value);
	char *end;

	if (!*text || *text == '-' || *text == '+' || *text == ' ')
		return false;
	errno = 0;
	*result = strtoull(text, &end, 0);
	return !errno && *end == '\0' &&
	       (size_t)(end - text) == (size_t)json_object_get_string_len(value);
}

static json_object *member(json_object *object, const char *name)
{
	json_object *value;

	if (!object || !json_object_object_get_ex(object, name, &value))
		return NULL;
	return value;
}

static json_object *optional_object(json_object *root, const char *name, bool *valid)
{
	json_object *value = member(root, name);

	if (value && !json_object_is_type(value, json_type_object))
		*valid = false;
	return json_object_is_type(value, json_type_object) ? value : NULL;
}

struct contract_descriptor *contract_descriptor_parse(const char *json, size_t length,
						      const uint64_t *pointer_data,
						      size_t pointer_count, char *error,
						      size_t error_size)
{
	if (length > INT32_MAX || pointer_count > CONTRACT_DESCRIPTOR_MAX_POINTER_DATA) {
		runtime_memory_error(error, error_size,
				     "the descriptor is too large (%zu bytes, %zu pointers)",
				     length, pointer_count);
		return NULL;
	}

	json_tokener *tokener = json_tokener_new_ex(MAX_DEPTH);

	if (!tokener) {
		runtime_memory_error(error, error_size, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tokener, JSON_TOKENER_STRICT);

	json_object *root = json_tokener_parse_ex(tokener, json, (int)length);
	enum json_tokener_error status = json_tokener_get_error(tokener);
	size_t parsed = json_tokener_get_parse_end(tokener);

	json_tokener_free(tokener);
	/* the runtime's string may end in its NUL (strchr finds it too) */
	while (root && parsed < length && strchr(" \t\r\n", json[parsed]))
		parsed++;
	if (!root || status != json_tokener_success || parsed != length) {
		runtime_memory_error(
		    error, error_size, "the descriptor is not JSON (%s at byte %zu)",
		    root			      ? "trailing bytes"
		    : status == json_tokener_continue ? "it ends early"
						      : json_tokener_error_desc(status),
		    parsed);
		json_object_put(root);
		return NULL;
	}

	bool valid = json_object_is_type(root, json_type_object);
	json_object *baseline = member(root, "baseline");
	json_object *version = member(root, "version");

	if (!valid || !json_object_is_type(version, json_type_int)) {
		runtime_memory_error(error, error_size,
				     "the descriptor is not an object with a version");
		json_object_put(root);
		return NULL;
	}
	if (baseline && (!json_object_is_type(baseline, json_type_string) ||
			 strcmp(json_object_get_string(baseline), "empty") != 0)) {
		runtime_memory_error(
		    error, error_size,
		    "the descriptor builds on the baseline \"%.40s\", whose layouts profcpu "
		    "does not carry",
		    json_object_get_string(baseline));
		json_object_put(root);
		return NULL;
	}

	struct contract_descriptor *descriptor = calloc(1, sizeof(*descriptor));

	if (!descriptor || (pointer_count && !(descriptor->pointer_data =
						   malloc(pointer_count * sizeof(uint64_t))))) {
		free(descriptor);
		json_object_put(root);
		runtime_memory_error(error, error_size, "out of memory");
		return NULL;
	}
	descriptor->root = root;
	descriptor->types = optional_object(root, "types", &valid);
	descriptor->globals = optional_object(root, "globals", &valid);
	descriptor->contracts = optional_object(root, "contracts", &valid);
	if (pointer_count)
		memcpy(descriptor->pointer_data, pointer_data, pointer_count * sizeof(uint64_t));
	descriptor->pointer_count = pointer_count;
	if (!valid) {
		runtime_memory_error(
		    error, error_size,
		    "the descriptor's types, globals or contracts are not objects");
		contract_descriptor_free(descriptor);
		return NULL;
	}
	return descriptor;
}

void contract_descriptor_free(struct contract_descriptor *descriptor)
{
	if (!descriptor)
		return;
	json_object_put(descriptor->root);
	free(descriptor->pointer_data);
	free(descriptor);
}

/* An offset or a size: a number, or [number, "type name"]. Types are far
 * smaller than 4 GiB; a larger number is not believed. */
static bool type_number(json_object *value, uint32_t *result)
{
	uint64_t number;

	if (json_object_is_type(value, json_type_array)) {
		if (json_object_array_length(value) != 2 ||
		    !json_object_is_type(json_object_array_get_idx(value, 1), json_type_string))
			return false;
		value = json_object_array_get_idx(value, 0);
	}
	if (!json_object_is_type(value, json_type_int) || !json_unsigned(value, &number) ||
	    number > UINT32_MAX)
		return false;
	*result = (uint32_t)number;
	return true;
}

bool contract_descriptor_field(const struct contract_descriptor *descriptor, const char *type,
			       const char *field, uint32_t *offset)
{
	json_object *fields = member(descriptor->types, type);

	if (!json_object_is_type(fields, json_type_object) || strcmp(field, "!") == 0)
		return false;
	return type_number(member(fields, field), offset);
}

bool contract_descriptor_type_size(const struct contract_descriptor *descriptor, const char *type,
				   uint32_t *size)
{
	json_object *fields = member(descriptor->types, type);

	return json_object_is_type(fields, json_type_object) &&
	       type_number(member(fields, "!"), size);
}

/* A global's value without its type: value, [value, "type"], [[index]] or
 * [[index], "type"]. The type says "string" for a string global. */
static json_object *global_value(const struct contract_descriptor *descriptor, const char *name,
				 const char **type)
{
	json_object *value = member(descriptor->globals, name);

	*type = NULL;
	if (json_object_is_type(value, json_type_array)) {
		size_t length = json_object_array_length(value);
		json_object *type_name = json_object_array_get_idx(value, 1);

		if (length < 1 || length > 2 ||
		    (length == 2 && !json_object_is_type(type_name, json_type_string)))
			return NULL;
		if (length == 2)
			*type = json_object_get_string(type_name);
		value = json_object_array_get_idx(value, 0);
	}
	return value;
}

bool contract_descriptor_global(const struct contract_descriptor *descriptor, const char *name,
				uint64_t *value)
{
	const char *type;
	json_object *found = global_value(descriptor, name, &type);
	uint64_t index;

	if (!found || (type && strcmp(type, "string") == 0))
		return false;
	if (json_object_is_type(found, json_type_array)) {
		if (json_object_array_length(found) != 1 ||
		    !json_object_is_type(json_object_array_get_idx(found, 0), json_type_int) ||
		    !json_unsigned(json_object_array_get_idx(found, 0), &index) ||
		    index >= descriptor->pointer_count)
			return false;
		*value = descriptor->pointer_data[index];
		return true;
	}
	return json_unsigned(found, value);
}

const char *contract_descriptor_global_string(const struct contract_descriptor *descriptor,
					      const char *name)
{
	const char *type;
	json_object *found = global_value(descriptor, name, &type);

	if (!found || !type || strcmp(type, "string") != 0 ||
	    !json_object_is_type(found, json_type_string))
		return NULL;
	return json_object_get_string(found);
}

bool contract_descriptor_contract(const struct contract_descriptor *descriptor, const char *name,
				  uint32_t *version)
{
	json_object *value = member(descriptor->contracts, name);
	uint64_t number;

	if (!json_object_is_type(value, json_type_int) || !json_unsigned(value, &number) ||
	    number > UINT32_MAX)
		return false;
	*version = (uint32_t)number;
	return true;
}
