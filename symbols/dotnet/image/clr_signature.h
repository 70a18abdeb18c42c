/* ECMA-335 signatures (partition II, 23.2), with the ReadyToRun additions
 * (ELEMENT_TYPE_CANON_ZAPSIG, ELEMENT_TYPE_MODULE_ZAPSIG), read from
 * untrusted bytes and written as text the way the .NET runtime writes
 * method names into its perf map and jitdump:
 *
 *   CLR_TYPE_SIGNATURE   a parameter: "int32", "class [System.Runtime]System.IO.TextWriter",
 *                        "valuetype System.Span`1<!0>", "uint8&", "!!0"
 *   CLR_TYPE_REFLECTION  a generic argument of a method's type:
 *                        "System.Int32", "System.__Canon", "Outer+Inner"
 *
 * Every read is bounds-checked and nesting is bounded: a malformed
 * signature makes the reader fail, never read outside its bytes. */
#ifndef PROFCPU_CLR_SIGNATURE_H
#define PROFCPU_CLR_SIGNATURE_H

#include "clr_metadata.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Text that grows to at most `size` - 1 characters and is then cut. */
struct name_text {
	char *text;
	size_t size, length;
};

void name_text_append(struct name_text *out, const char *text);
void name_text_append_length(struct name_text *out, const char *text, size_t length);

struct clr_signature_reader {
	const uint8_t *bytes;
	size_t size, position;
	bool failed; /* set by the first read past the end or malformed value */
};

/* A compressed unsigned integer (II.23.2); 0 and `failed` past the end. */
uint32_t clr_signature_read_number(struct clr_signature_reader *reader);

/* A compressed signed integer (II.23.2); 0 and `failed` past the end. */
int32_t clr_signature_read_signed_number(struct clr_signature_reader *reader);

enum clr_type_style { CLR_TYPE_SIGNATURE, CLR_TYPE_REFLECTION };

/* Where type tokens are resolved: the module the signature belongs to, and,
 * for ELEMENT_TYPE_MODULE_ZAPSIG, the module a ReadyToRun module override
 * index names (NULL when it cannot be had: the type is written "?"). */
struct clr_type_scope {
	const struct clr_metadata *metadata;
	const struct clr_metadata *(*module_override)(void *context, uint32_t index);
	void *context;
};

/* Reads one type and appends its text to `out` (NULL: only reads it).
 * False when the signature is malformed. */
bool clr_signature_write_type(struct clr_signature_reader *reader,
			      const struct clr_type_scope *scope, enum clr_type_style style,
			      struct name_text *out);

/* Writes the name of the type `token` (TypeDef or TypeRef) of `metadata`:
 * "Namespace.Outer+Inner" in reflection style, "[Assembly]Namespace.Outer/Inner"
 * (the assembly only for types of another one) in signature style. */
void clr_signature_write_type_name(const struct clr_metadata *metadata, struct clr_token token,
				   enum clr_type_style style, struct name_text *out);

/* Parts of a method signature (MethodDefSig, II.23.2.1), written as the
 * runtime does: `return_type` gets "[instance ]RET", `parameters` gets
 * "(P1,P2)". Either may be NULL. False when the signature is malformed. */
bool clr_signature_write_method(const uint8_t *signature, size_t size,
				const struct clr_type_scope *scope, struct name_text *return_type,
				struct name_text *parameters);

#endif
