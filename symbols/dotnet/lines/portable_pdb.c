#include "portable_pdb.h"
#include "clr_metadata.h"
#include "clr_signature.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define METHOD_DEF_TOKEN   0x06000000u
#define MAX_DOCUMENT_NAME  4096
#define MSF_SIGNATURE	   "Microsoft C/C++ MSF 7.00"
#define MSF_SIGNATURE_SIZE (sizeof(MSF_SIGNATURE) - 1)

struct portable_pdb {
	uint8_t *data;
	size_t size;
	struct clr_metadata metadata;
	uint32_t document_count;
	/* Each Document's joined name, made on first use; "" when its blob
	 * is malformed. */
	char **document_names;
};

struct portable_pdb *portable_pdb_parse(uint8_t *data, size_t size, char *why, size_t why_size)
{
	struct portable_pdb *pdb = calloc(1, sizeof(*pdb));

	if (pdb && clr_metadata_parse(&pdb->metadata, data, size) &&
	    pdb->metadata.pdb_size >= PORTABLE_PDB_ID_SIZE) {
		pdb->data = data;
		pdb->size = size;
		pdb->document_count = clr_metadata_row_count(&pdb->metadata, CLR_TABLE_DOCUMENT);
		pdb->document_names = calloc(pdb->document_count + 1, sizeof(*pdb->document_names));
		if (pdb->document_names)
			return pdb;
	}
	if (size >= MSF_SIGNATURE_SIZE && !memcmp(data, MSF_SIGNATURE, MSF_SIGNATURE_SIZE))
		snprintf(why, why_size,
			 "it is a Windows PDB, not a portable one (build with "
			 "<DebugType>portable</DebugType>)");
	else
		snprintf(why, why_size, "it is not a portable PDB, or it is damaged");
	free(pdb);
	free(data);
	return NULL;
}

void portable_pdb_free(struct portable_pdb *pdb)
{
	if (!pdb)
		return;
	for (uint32_t i = 0; i <= pdb->document_count; i++)
		free(pdb->document_names[i]);
	free(pdb->document_names);
	free(pdb->data);
	free(pdb);
}

void portable_pdb_id(const struct portable_pdb *pdb, uint8_t id[PORTABLE_PDB_ID_SIZE])
{
	memcpy(id, pdb->metadata.pdb, PORTABLE_PDB_ID_SIZE);
}

/* A UTF-8 character's length from its first byte (1 for a stray byte). */
static size_t utf8_length(uint8_t first)
{
	if (first >= 0xf0)
		return 4;
	if (first >= 0xe0)
		return 3;
	return first >= 0xc0 ? 2 : 1;
}

/* A Document's name blob: a separator character, then the #Blob indexes
 * of the parts (0: an empty part), joined by the separator. */
static char *join_document_name(const struct clr_metadata *metadata, const uint8_t *blob,
				uint32_t size)
{
	struct clr_signature_reader reader = {.bytes = blob, .size = size};
	size_t separator_length = size ? utf8_length(blob[0]) : 0;
	char *name = malloc(MAX_DOCUMENT_NAME);
	struct name_text text = {.text = name, .size = MAX_DOCUMENT_NAME};

	if (!name || separator_length == 0 || separator_length > size) {
		free(name);
		return NULL;
	}
	name[0] = '\0';
	reader.position = separator_length;
	for (bool first = true; reader.position < size; first = false) {
		uint32_t index = clr_signature_read_number(&reader);
		const uint8_t *part = NULL;
		uint32_t part_size = 0;

		if (reader.failed ||
		    (index && !clr_metadata_blob(metadata, index, &part, &part_size)))
			break;
		if (!first)
			name_text_append_length(&text, (const char *)blob, separator_length);
		if (part_size)
			name_text_append_length(&text, (const char *)part, part_size);
	}
	/* A name cut at its room, or cut short, names no file. */
	if (reader.failed || reader.position < size || text.length + 1 >= MAX_DOCUMENT_NAME ||
	    memchr(name, '\0', text.length)) {
		free(name);
		return NULL;
	}
	return name;
}

static const char *document_name(struct portable_pdb *pdb, uint32_t row)
{
	const uint8_t *blob;
	uint32_t size;

	if (row == 0 || row > pdb->document_count)
		return NULL;
	if (!pdb->document_names[row]) {
		char *name = NULL;

		if (clr_metadata_document_name(&pdb->metadata, row, &blob, &size))
			name = join_document_name(&pdb->metadata, blob, size);
		pdb->document_names[row] = name ? name : strdup("");
	}
	return pdb->document_names[row] && pdb->document_names[row][0] ? pdb->document_names[row]
								       : NULL;
}

/* One sequence point as the blob's records give it. */
struct sequence_point {
	uint32_t il_offset, document, line;
	bool hidden;
};

/* The sequence points blob of a method (the format specification,
 * "Sequence Points Blob"): a header, then records, each a sequence point
 * with its IL offset and lines as deltas from the one before, or a change
 * of document. Finds the last point at or before `il_offset`. */
static bool find_sequence_point(const struct clr_method_debug_information *information,
				uint32_t il_offset, struct sequence_point *found)
{
	struct clr_signature_reader reader = {.bytes = information->sequence_points,
					      .size = information->sequence_points_size};
	struct sequence_point point = {.document = information->document};
	bool first = true, have_line = false, have_found = false;

	clr_signature_read_number(&reader); /* the local signature */
	if (point.document == 0)
		point.document = clr_signature_read_number(&reader);
	while (reader.position < reader.size && !reader.failed) {
		uint32_t delta_il = clr_signature_read_number(&reader), delta_lines;
		int64_t delta_columns;

		if (!first && delta_il == 0) {
			point.document = clr_signature_read_number(&reader);
			continue;
		}
		if (delta_il > UINT32_MAX - point.il_offset)
			return false;
		point.il_offset = first ? delta_il : point.il_offset + delta_il;
		first = false;
		delta_lines = clr_signature_read_number(&reader);
		delta_columns = delta_lines == 0
				    ? (int64_t)clr_signature_read_number(&reader)
				    : (int64_t)clr_signature_read_signed_number(&reader);
		point.hidden = delta_lines == 0 && delta_columns == 0;
		if (!point.hidden) {
			int64_t line = have_line ? (int64_t)point.line +
						       clr_signature_read_signed_number(&reader)
						 : (int64_t)clr_signature_read_number(&reader);

			/* The start column, which is not kept. */
			if (have_line)
				clr_signature_read_signed_number(&reader);
			else
				clr_signature_read_number(&reader);
			if (line <= 0 || line >= PORTABLE_PDB_HIDDEN_LINE)
				return false;
			point.line = (uint32_t)line;
			have_line = true;
		}
		if (reader.failed || point.il_offset > il_offset)
			break;
		*found = point;
		have_found = true;
	}
	return have_found;
}

bool portable_pdb_line(struct portable_pdb *pdb, uint32_t method_token, uint32_t il_offset,
		       struct source_line *line)
{
	struct clr_method_debug_information information;
	struct sequence_point point;
	const char *file;

	if ((method_token & 0xff000000u) != METHOD_DEF_TOKEN ||
	    !clr_metadata_method_debug_information(&pdb->metadata, method_token & 0xffffffu,
						   &information) ||
	    !information.sequence_points || !find_sequence_point(&information, il_offset, &point) ||
	    point.hidden || !(file = document_name(pdb, point.document)))
		return false;
	*line = (struct source_line){.file = file, .number = point.line};
	return true;
}
