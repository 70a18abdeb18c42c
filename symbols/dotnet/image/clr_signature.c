#include "clr_signature.h"

#include <stdio.h>
#include <string.h>

/* II.23.1.16, and the runtime's ZapSig additions used by ReadyToRun. */
enum element_type {
	ELEMENT_VOID = 0x01,
	ELEMENT_STRING = 0x0e,
	ELEMENT_PTR = 0x0f,
	ELEMENT_BYREF = 0x10,
	ELEMENT_VALUETYPE = 0x11,
	ELEMENT_CLASS = 0x12,
	ELEMENT_VAR = 0x13,
	ELEMENT_ARRAY = 0x14,
	ELEMENT_GENERICINST = 0x15,
	ELEMENT_TYPEDBYREF = 0x16,
	ELEMENT_I = 0x18,
	ELEMENT_U = 0x19,
	ELEMENT_FNPTR = 0x1b,
	ELEMENT_OBJECT = 0x1c,
	ELEMENT_SZARRAY = 0x1d,
	ELEMENT_MVAR = 0x1e,
	ELEMENT_CMOD_REQD = 0x1f,
	ELEMENT_CMOD_OPT = 0x20,
	ELEMENT_CANON_ZAPSIG = 0x3e,
	ELEMENT_MODULE_ZAPSIG = 0x3f,
	ELEMENT_SENTINEL = 0x41,
	ELEMENT_PINNED = 0x45,
};

#define SIGNATURE_HAS_THIS  0x20
#define SIGNATURE_GENERIC   0x10
#define MAX_NESTING	    32	/* types inside types in one signature */
#define MAX_ENCLOSING_TYPES 16	/* Outer+Middle+Inner */
#define MAX_PARAMETERS	    256 /* a bound for hostile counts; methods have fewer */

/* Names of the primitive element types 0x01..0x0e, 0x18, 0x19, 0x1c. */
static const char *primitive_name(uint8_t element, enum clr_type_style style)
{
	static const char *const signature_names[] = {
	    [0x01] = "void",	    [0x02] = "bool",   [0x03] = "char",	      [0x04] = "int8",
	    [0x05] = "uint8",	    [0x06] = "int16",  [0x07] = "uint16",     [0x08] = "int32",
	    [0x09] = "uint32",	    [0x0a] = "int64",  [0x0b] = "uint64",     [0x0c] = "float32",
	    [0x0d] = "float64",	    [0x0e] = "string", [0x16] = "typedbyref", [0x18] = "native int",
	    [0x19] = "native uint", [0x1c] = "object"};
	static const char *const reflection_names[] = {
	    [0x01] = "System.Void",   [0x02] = "System.Boolean", [0x03] = "System.Char",
	    [0x04] = "System.SByte",  [0x05] = "System.Byte",	 [0x06] = "System.Int16",
	    [0x07] = "System.UInt16", [0x08] = "System.Int32",	 [0x09] = "System.UInt32",
	    [0x0a] = "System.Int64",  [0x0b] = "System.UInt64",	 [0x0c] = "System.Single",
	    [0x0d] = "System.Double", [0x0e] = "System.String",	 [0x16] = "System.TypedReference",
	    [0x18] = "System.IntPtr", [0x19] = "System.UIntPtr", [0x1c] = "System.Object"};

	if (element >= sizeof(signature_names) / sizeof(*signature_names))
		return NULL;
	return style == CLR_TYPE_SIGNATURE ? signature_names[element] : reflection_names[element];
}

void name_text_append_length(struct name_text *out, const char *text, size_t length)
{
	if (!out || out->size == 0)
		return;
	if (length > out->size - 1 - out->length)
		length = out->size - 1 - out->length;
	memcpy(out->text + out->length, text, length);
	out->length += length;
	out->text[out->length] = '\0';
}

void name_text_append(struct name_text *out, const char *text)
{
	if (out)
		name_text_append_length(out, text, strlen(text));
}

static uint8_t read_byte(struct clr_signature_reader *reader)
{
	if (reader->position >= reader->size) {
		reader->failed = true;
		return 0;
	}
	return reader->bytes[reader->position++];
}

uint32_t clr_signature_read_number(struct clr_signature_reader *reader)
{
	uint32_t first = read_byte(reader);

	/* II.23.2: 1, 2 or 4 bytes, big-endian, length in the top bits. */
	if ((first & 0x80) == 0)
		return first;
	if ((first & 0xc0) == 0x80)
		return (first & 0x3f) << 8 | read_byte(reader);
	if ((first & 0xe0) == 0xc0) {
		uint32_t value = (first & 0x1f) << 24;

		value |= (uint32_t)read_byte(reader) << 16;
		value |= (uint32_t)read_byte(reader) << 8;
		return value | read_byte(reader);
	}
	reader->failed = true;
	return 0;
}

int32_t clr_signature_read_signed_number(struct clr_signature_reader *reader)
{
	size_t start = reader->position;
	uint32_t encoded = clr_signature_read_number(reader);
	/* The sign is in the lowest bit, the value in the 6, 13 or 28 bits
	 * above it, as long as the encoding was (1, 2 or 4 bytes). */
	unsigned value_bits = reader->position - start == 1   ? 6
			      : reader->position - start == 2 ? 13
							      : 28;

	if (!(encoded & 1))
		return (int32_t)(encoded >> 1);
	return (int32_t)(encoded >> 1) - (int32_t)(1u << value_bits);
}

static void append_number(struct name_text *out, uint32_t number)
{
	char digits[16];

	snprintf(digits, sizeof(digits), "%u", number);
	name_text_append(out, digits);
}

/* One type of a chain of nested types, outermost first: "Namespace.Outer",
 * then "/Inner" (signature style) or "+Inner" (reflection style). */
static void write_nested_part(const char *name_space, const char *name, bool outermost,
			      enum clr_type_style style, struct name_text *out)
{
	if (!outermost)
		name_text_append(out, style == CLR_TYPE_SIGNATURE ? "/" : "+");
	else if (*name_space) {
		name_text_append(out, name_space);
		name_text_append(out, ".");
	}
	name_text_append(out, name);
}

static void write_type_def_name(const struct clr_metadata *metadata, uint32_t row,
				enum clr_type_style style, struct name_text *out)
{
	uint32_t chain[MAX_ENCLOSING_TYPES];
	size_t depth = 0;
	struct clr_type_def type;

	/* Innermost first; a loop in NestedClass stops at the bound. */
	while (row && depth < MAX_ENCLOSING_TYPES) {
		chain[depth++] = row;
		row = clr_metadata_enclosing_type(metadata, row);
	}
	for (size_t i = depth; i-- > 0;) {
		if (!clr_metadata_type_def(metadata, chain[i], &type))
			return;
		write_nested_part(type.name_space, type.name, i == depth - 1, style, out);
	}
}

static void write_type_ref_name(const struct clr_metadata *metadata, uint32_t row,
				enum clr_type_style style, struct name_text *out)
{
	uint32_t chain[MAX_ENCLOSING_TYPES];
	size_t depth = 0;
	struct clr_type_ref type;

	/* A nested TypeRef has its enclosing TypeRef as scope. */
	while (depth < MAX_ENCLOSING_TYPES && clr_metadata_type_ref(metadata, row, &type)) {
		chain[depth++] = row;
		if (type.scope.table != CLR_TABLE_TYPE_REF)
			break;
		row = type.scope.row;
	}
	if (depth == 0)
		return;
	clr_metadata_type_ref(metadata, chain[depth - 1], &type);
	if (style == CLR_TYPE_SIGNATURE && type.scope.table == CLR_TABLE_ASSEMBLY_REF) {
		name_text_append(out, "[");
		name_text_append(out, clr_metadata_assembly_ref_name(metadata, type.scope.row));
		name_text_append(out, "]");
	}
	for (size_t i = depth; i-- > 0;) {
		clr_metadata_type_ref(metadata, chain[i], &type);
		write_nested_part(type.name_space, type.name, i == depth - 1, style, out);
	}
}

void clr_signature_write_type_name(const struct clr_metadata *metadata, struct clr_token token,
				   enum clr_type_style style, struct name_text *out)
{
	if (token.table == CLR_TABLE_TYPE_DEF)
		write_type_def_name(metadata, token.row, style, out);
	else if (token.table == CLR_TABLE_TYPE_REF)
		write_type_ref_name(metadata, token.row, style, out);
	else
		name_text_append(out, "?");
}

static bool write_type(struct clr_signature_reader *reader, const struct clr_type_scope *scope,
		       enum clr_type_style style, struct name_text *out, unsigned nesting);

static bool write_method_parts(struct clr_signature_reader *reader,
			       const struct clr_type_scope *scope, struct name_text *return_type,
			       struct name_text *parameters, unsigned nesting);

/* FNPTR: "method [unmanaged ]RET *(PARAMS)". */
static bool write_function_pointer(struct clr_signature_reader *reader,
				   const struct clr_type_scope *scope, struct name_text *out,
				   unsigned nesting)
{
	static const char *const unmanaged[] = {[1] = "unmanaged cdecl ",
						[2] = "unmanaged stdcall ",
						[3] = "unmanaged thiscall ",
						[4] = "unmanaged fastcall ",
						[9] = "unmanaged "};
	char parameters_text[512] = "";
	struct name_text parameters = {parameters_text, sizeof(parameters_text), 0};
	unsigned convention =
	    reader->position < reader->size ? reader->bytes[reader->position] & 0x0f : 0;

	name_text_append(out, "method ");
	if (convention < sizeof(unmanaged) / sizeof(*unmanaged) && unmanaged[convention])
		name_text_append(out, unmanaged[convention]);
	if (!write_method_parts(reader, scope, out, &parameters, nesting + 1))
		return false;
	name_text_append(out, " *");
	name_text_append(out, parameters_text);
	return true;
}

/* A TypeDefOrRefEncoded token, after CLASS or VALUETYPE. */
static void write_token(struct clr_signature_reader *reader, const struct clr_type_scope *scope,
			enum clr_type_style style, uint8_t element, struct name_text *out)
{
	struct clr_token token = clr_metadata_type_def_or_ref(clr_signature_read_number(reader));

	if (!out)
		return; /* only reading */
	if (style == CLR_TYPE_SIGNATURE)
		name_text_append(out, element == ELEMENT_VALUETYPE ? "valuetype " : "class ");
	if (scope->metadata)
		clr_signature_write_type_name(scope->metadata, token, style, out);
	else
		name_text_append(out, "?");
}

static bool write_generic_instance(struct clr_signature_reader *reader,
				   const struct clr_type_scope *scope, enum clr_type_style style,
				   struct name_text *out, unsigned nesting)
{
	uint8_t element = read_byte(reader);
	uint32_t count;

	if (element != ELEMENT_CLASS && element != ELEMENT_VALUETYPE)
		return false;
	write_token(reader, scope, style, element, out);
	count = clr_signature_read_number(reader);
	if (count == 0 || count > MAX_PARAMETERS)
		return false;
	name_text_append(out, style == CLR_TYPE_SIGNATURE ? "<" : "[");
	for (uint32_t i = 0; i < count && !reader->failed; i++) {
		if (i)
			name_text_append(out, ",");
		if (!write_type(reader, scope, style, out, nesting + 1))
			return false;
	}
	name_text_append(out, style == CLR_TYPE_SIGNATURE ? ">" : "]");
	return !reader->failed;
}

/* ARRAY: element type, rank, sizes, lower bounds (II.23.2.13). */
static bool write_array(struct clr_signature_reader *reader, const struct clr_type_scope *scope,
			enum clr_type_style style, struct name_text *out, unsigned nesting)
{
	uint32_t rank, count;

	if (!write_type(reader, scope, style, out, nesting + 1))
		return false;
	rank = clr_signature_read_number(reader);
	if (rank == 0 || rank > 32)
		return false;
	for (int list = 0; list < 2; list++) {
		count = clr_signature_read_number(reader);
		if (count > rank)
			return false;
		for (uint32_t i = 0; i < count; i++)
			clr_signature_read_number(reader);
	}
	name_text_append(out, "[");
	for (uint32_t i = 1; i < rank; i++)
		name_text_append(out, ",");
	name_text_append(out, "]");
	return !reader->failed;
}

static bool write_type(struct clr_signature_reader *reader, const struct clr_type_scope *scope,
		       enum clr_type_style style, struct name_text *out, unsigned nesting)
{
	uint8_t element = read_byte(reader);
	const char *primitive = primitive_name(element, style);

	if (reader->failed || nesting > MAX_NESTING)
		return false;
	if (primitive) {
		name_text_append(out, primitive);
		return true;
	}
	switch (element) {
	case ELEMENT_CLASS:
	case ELEMENT_VALUETYPE:
		write_token(reader, scope, style, element, out);
		return !reader->failed;
	case ELEMENT_PTR:
	case ELEMENT_BYREF:
	case ELEMENT_SZARRAY:
		if (!write_type(reader, scope, style, out, nesting + 1))
			return false;
		name_text_append(out, element == ELEMENT_PTR	 ? "*"
				      : element == ELEMENT_BYREF ? "&"
								 : "[]");
		return true;
	case ELEMENT_VAR:
	case ELEMENT_MVAR:
		name_text_append(out, element == ELEMENT_VAR ? "!" : "!!");
		append_number(out, clr_signature_read_number(reader));
		return !reader->failed;
	case ELEMENT_GENERICINST:
		return write_generic_instance(reader, scope, style, out, nesting);
	case ELEMENT_ARRAY:
		return write_array(reader, scope, style, out, nesting);
	case ELEMENT_FNPTR:
		return write_function_pointer(reader, scope, out, nesting);
	case ELEMENT_CMOD_REQD:
	case ELEMENT_CMOD_OPT: {
		struct clr_token token =
		    clr_metadata_type_def_or_ref(clr_signature_read_number(reader));

		/* Written after the type it modifies, as the runtime does. */
		if (!write_type(reader, scope, style, out, nesting + 1))
			return false;
		name_text_append(out, element == ELEMENT_CMOD_REQD ? " modreq(" : " modopt(");
		if (scope->metadata)
			clr_signature_write_type_name(scope->metadata, token, CLR_TYPE_SIGNATURE,
						      out);
		name_text_append(out, ")");
		return true;
	}
	case ELEMENT_PINNED:
		return write_type(reader, scope, style, out, nesting + 1);
	case ELEMENT_CANON_ZAPSIG:
		name_text_append(out, style == CLR_TYPE_SIGNATURE ? "class System.__Canon"
								  : "System.__Canon");
		return true;
	case ELEMENT_MODULE_ZAPSIG: {
		uint32_t index = clr_signature_read_number(reader);
		struct clr_type_scope other = *scope;

		/* Only a name needs the other module (which may mean reading it). */
		other.metadata = out && scope->module_override
				     ? scope->module_override(scope->context, index)
				     : NULL;
		return !reader->failed && write_type(reader, &other, style, out, nesting + 1);
	}
	}
	reader->failed = true;
	return false;
}

bool clr_signature_write_type(struct clr_signature_reader *reader,
			      const struct clr_type_scope *scope, enum clr_type_style style,
			      struct name_text *out)
{
	return write_type(reader, scope, style, out, 0);
}

static bool write_method_parts(struct clr_signature_reader *reader,
			       const struct clr_type_scope *scope, struct name_text *return_type,
			       struct name_text *parameters, unsigned nesting)
{
	uint8_t convention = read_byte(reader);
	uint32_t count;

	if (convention & SIGNATURE_GENERIC)
		clr_signature_read_number(reader);
	count = clr_signature_read_number(reader);
	if (reader->failed || count > MAX_PARAMETERS)
		return false;
	if (convention & SIGNATURE_HAS_THIS)
		name_text_append(return_type, "instance ");
	if (!write_type(reader, scope, CLR_TYPE_SIGNATURE, return_type, nesting))
		return false;
	name_text_append(parameters, "(");
	for (uint32_t i = 0; i < count; i++) {
		if (i)
			name_text_append(parameters, ",");
		if (reader->position < reader->size &&
		    reader->bytes[reader->position] == ELEMENT_SENTINEL) {
			reader->position++;
			name_text_append(parameters, "...,");
		}
		if (!write_type(reader, scope, CLR_TYPE_SIGNATURE, parameters, nesting))
			return false;
	}
	name_text_append(parameters, ")");
	return true;
}

bool clr_signature_write_method(const uint8_t *signature, size_t size,
				const struct clr_type_scope *scope, struct name_text *return_type,
				struct name_text *parameters)
{
	struct clr_signature_reader reader = {signature, size, 0, false};

	return signature && write_method_parts(&reader, scope, return_type, parameters, 0);
}
