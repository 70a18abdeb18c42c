#include "method_def_name.h"

#include "clr_metadata.h"
#include "clr_signature.h"

bool method_def_name(const struct managed_image *image, uint32_t token, char *name, size_t size)
{
	const struct clr_metadata *metadata = managed_image_metadata(image);
	struct clr_type_scope scope = {metadata, NULL, NULL};
	struct name_text text = {name, size, 0};
	char parameters_text[512] = "";
	struct name_text parameters = {parameters_text, sizeof(parameters_text), 0};
	uint32_t row = token & 0xffffff;
	struct clr_method_def method;

	if (size == 0 || token >> 24 != CLR_TABLE_METHOD_DEF || !metadata ||
	    !clr_metadata_method_def(metadata, row, &method))
		return false;
	name[0] = '\0';
	/* the return type, or "?" as the ReadyToRun names write a malformed
	 * signature's */
	if (!clr_signature_write_method(method.signature, method.signature_size, &scope, &text,
					&parameters))
		name_text_append(&text, "?");
	name_text_append(&text, " [");
	name_text_append(&text, clr_metadata_assembly_name(metadata));
	name_text_append(&text, "] ");
	clr_signature_write_type_name(
	    metadata,
	    (struct clr_token){CLR_TABLE_TYPE_DEF, clr_metadata_method_owner(metadata, row)},
	    CLR_TYPE_REFLECTION, &text);
	name_text_append(&text, "::");
	name_text_append(&text, method.name);
	name_text_append(&text, parameters_text[0] ? parameters_text : "()");
	return true;
}
