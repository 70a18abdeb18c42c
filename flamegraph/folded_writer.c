/* Writes the frame tree back as folded text, one line per stack with
 * samples of its own, in name order (flame charts: in the order added). */
#include "frame_layout.h"
#include "allocation.h"
#include "output_buffer.h"

#include <stdlib.h>

struct pending_node {
	uint32_t node;
	size_t path_length; /* bytes of the path text before this node's name */
};

int flamegraph_write_folded(struct flamegraph *graph, FILE *out)
{
	struct frame_children children;
	struct output_buffer buffer;
	struct pending_node *pending = NULL;
	size_t pending_count = 0, pending_capacity = 0;
	char *path = NULL;
	size_t path_capacity = 0;

	frame_children_build(&children, graph);
	output_buffer_init(&buffer, out);
	fg_grow((void **)&pending, &pending_capacity, 1 + children.first[1] - children.first[0],
		sizeof(*pending));
	for (uint32_t i = children.first[1]; i > children.first[0]; i--)
		pending[pending_count++] = (struct pending_node){children.nodes[i - 1], 0};
	while (pending_count) {
		struct pending_node item = pending[--pending_count];
		const struct frame_node *node = &graph->nodes[item.node];
		size_t name_length = name_table_length(&graph->names, node->name);
		size_t length = item.path_length + name_length;
		uint32_t first = children.first[item.node], last = children.first[item.node + 1];

		fg_grow((void **)&path, &path_capacity, length + 1, 1);
		memcpy(path + item.path_length, name_table_name(&graph->names, node->name),
		       name_length);
		if (node->self_before || node->self_after) {
			output_bytes(&buffer, path, length);
			output_char(&buffer, ' ');
			if (graph->differential) {
				output_decimal(&buffer, node->self_before, 6);
				output_char(&buffer, ' ');
			}
			output_decimal(&buffer, node->self_after, 6);
			output_char(&buffer, '\n');
		}
		path[length] = ';';
		fg_grow((void **)&pending, &pending_capacity, pending_count + (last - first),
			sizeof(*pending));
		for (uint32_t i = last; i > first; i--)
			pending[pending_count++] =
			    (struct pending_node){children.nodes[i - 1], length + 1};
	}
	free(pending);
	free(path);
	frame_children_free(&children);
	return output_buffer_finish(&buffer);
}
