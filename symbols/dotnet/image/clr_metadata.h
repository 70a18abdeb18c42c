/* ECMA-335 metadata (partition II, chapters 22 and 24) of a .NET assembly:
 * the tables stream (#~) and the #Strings, #Blob and #GUID heaps, read in
 * place from the bytes of the image.
 *
 * Only what names methods is offered: TypeDef, TypeRef, MethodDef,
 * NestedClass, Module, Assembly and AssemblyRef rows; and of a portable PDB
 * (the same format, its own tables), the #Pdb stream and the Document and
 * MethodDebugInformation tables, whose sequence points portable_pdb.h reads. Every index read from
 * the tables is checked before it is used; a row or heap entry out of range
 * reads as empty. The uncompressed tables stream (#-, written only by
 * edit-and-continue) is not supported. */
#ifndef PROFCPU_CLR_METADATA_H
#define PROFCPU_CLR_METADATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum clr_table {
	CLR_TABLE_MODULE = 0x00,
	CLR_TABLE_TYPE_REF = 0x01,
	CLR_TABLE_TYPE_DEF = 0x02,
	CLR_TABLE_METHOD_DEF = 0x06,
	CLR_TABLE_MEMBER_REF = 0x0a,
	CLR_TABLE_MODULE_REF = 0x1a,
	CLR_TABLE_TYPE_SPEC = 0x1b,
	CLR_TABLE_ASSEMBLY = 0x20,
	CLR_TABLE_ASSEMBLY_REF = 0x23,
	CLR_TABLE_NESTED_CLASS = 0x29,
	/* Portable PDB tables (the Portable PDB v1.0 format specification). */
	CLR_TABLE_DOCUMENT = 0x30,
	CLR_TABLE_METHOD_DEBUG_INFORMATION = 0x31,
	CLR_TABLE_COUNT = 0x32, /* tables after these are not read */
};

#define CLR_MAX_COLUMNS 9

struct clr_table_layout {
	const uint8_t *rows; /* row 1 is at rows[0] */
	uint32_t row_count, row_size;
	uint8_t column_offset[CLR_MAX_COLUMNS], column_size[CLR_MAX_COLUMNS];
};

struct clr_metadata {
	const uint8_t *strings, *blobs, *guids;
	uint32_t strings_size, blobs_size, guids_size;
	const uint8_t *pdb; /* a portable PDB's #Pdb stream; NULL in an assembly */
	uint32_t pdb_size;
	struct clr_table_layout tables[CLR_TABLE_COUNT];
};

/* A coded index (II.24.2.6) split into its table and row (0: null). */
struct clr_token {
	enum clr_table table;
	uint32_t row;
};

struct clr_type_def {
	uint32_t flags;
	const char *name, *name_space;
	uint32_t first_method; /* MethodList: the first MethodDef row it owns */
};

struct clr_type_ref {
	struct clr_token scope; /* Module, ModuleRef, AssemblyRef or TypeRef (nested) */
	const char *name, *name_space;
};

struct clr_method_def {
	uint16_t flags;
	const char *name;
	const uint8_t *signature; /* a MethodDefSig (II.23.2.1) */
	uint32_t signature_size;
};

/* A MemberRef row: a method (or field) of another module or of a generic
 * instantiation. */
struct clr_member_ref {
	const char *name;
	const uint8_t *signature;
	uint32_t signature_size;
};

/* A portable PDB's MethodDebugInformation row: the document of the
 * method's sequence points (0: the blob names it, or several) and the blob
 * of the points (NULL when the method has none). */
struct clr_method_debug_information {
	uint32_t document; /* a Document row */
	const uint8_t *sequence_points;
	uint32_t sequence_points_size;
};

/* Reads the metadata whose root ("BSJB") is at `data` (`size` bytes).
 * False when it is malformed. */
bool clr_metadata_parse(struct clr_metadata *metadata, const uint8_t *data, size_t size);

uint32_t clr_metadata_row_count(const struct clr_metadata *metadata, enum clr_table table);

/* A #Strings entry; "" when the index or its terminator is outside the heap. */
const char *clr_metadata_string(const struct clr_metadata *metadata, uint32_t index);

/* A #Blob entry; false when it lies outside the heap. */
bool clr_metadata_blob(const struct clr_metadata *metadata, uint32_t index, const uint8_t **bytes,
		       uint32_t *size);

/* Rows, 1-based; false when `row` is out of range. */
bool clr_metadata_type_def(const struct clr_metadata *metadata, uint32_t row,
			   struct clr_type_def *type);
bool clr_metadata_type_ref(const struct clr_metadata *metadata, uint32_t row,
			   struct clr_type_ref *type);
bool clr_metadata_method_def(const struct clr_metadata *metadata, uint32_t row,
			     struct clr_method_def *method);
bool clr_metadata_member_ref(const struct clr_metadata *metadata, uint32_t row,
			     struct clr_member_ref *member);

/* A portable PDB's rows: the MethodDebugInformation row of a method (the
 * same number as its MethodDef row), and the blob of a Document's name
 * (split in parts, portable_pdb.c joins them). */
bool clr_metadata_method_debug_information(const struct clr_metadata *metadata, uint32_t row,
					   struct clr_method_debug_information *information);
bool clr_metadata_document_name(const struct clr_metadata *metadata, uint32_t row,
				const uint8_t **name, uint32_t *size);

/* The TypeDef row that owns MethodDef `method_row` (from the TypeDefs'
 * MethodList runs); 0 when none does. */
uint32_t clr_metadata_method_owner(const struct clr_metadata *metadata, uint32_t method_row);

/* The TypeDef row enclosing the nested TypeDef `type_row`; 0 when it is
 * not nested. */
uint32_t clr_metadata_enclosing_type(const struct clr_metadata *metadata, uint32_t type_row);

/* The assembly's own name (Assembly table); "" when it has none. */
const char *clr_metadata_assembly_name(const struct clr_metadata *metadata);

/* The name of AssemblyRef `row`; "" when out of range. */
const char *clr_metadata_assembly_ref_name(const struct clr_metadata *metadata, uint32_t row);

/* The module's MVID (16 bytes, a build identity); false when it has none. */
bool clr_metadata_mvid(const struct clr_metadata *metadata, uint8_t mvid[16]);

/* Splits a TypeDefOrRefOrSpecEncoded value (II.23.2.8) of a signature. */
struct clr_token clr_metadata_type_def_or_ref(uint32_t coded);

#endif
