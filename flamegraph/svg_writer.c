/* Writes a laid-out flame graph as a standalone SVG: a header (title,
 * buttons), one <g> per frame with its hover <title>, <rect> and <text>,
 * and the script from flamegraph.js with the numbers it needs.
 *
 * Each frame's <rect> carries fg:x and fg:w, its position and width in
 * samples, so the script zooms exactly however deep the user goes. */
#include "flamegraph.h"
#include "allocation.h"
#include "frame_layout.h"
#include "output_buffer.h"
#include "palette.h"
#include "text_fit.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* flamegraph.js, embedded at build time by xxd -i (see meson.build). */
extern unsigned char flamegraph_js[];
extern unsigned int flamegraph_js_len;

enum { SIDE_PADDING = 10, TEXT_PADDING = 3 };

/* Monospace digits and letters are 0.6 em wide in the usual fonts; a bit
 * more leaves room for fonts that run wider. The script measures the real
 * width in the browser and re-fits names if this guess was short. */
static const double char_width_per_font_size = 0.62;

struct svg_geometry {
	double width, height, frame_height, font_size, char_width;
	double top, bottom; /* heights of the header and footer bands */
	double pixels_per_sample;
	bool inverted;
};

/* What the frames of one name share; computed on first use. */
struct name_style {
	bool known;
	size_t display_length;
	struct rgb colour;
};

struct svg_writer {
	struct output_buffer out;
	const struct flamegraph *graph;
	const struct flamegraph_options *options;
	const struct palette *palette;
	struct svg_geometry geometry;
	struct name_style *styles; /* by name id */
	double total, largest_change;
};

static const char *default_title(const struct flamegraph *graph,
				 const struct flamegraph_options *options)
{
	if (graph->order == FLAMEGRAPH_CHART)
		return graph->differential ? "Differential Flame Chart" : "Flame Chart";
	if (options->inverted)
		return graph->differential ? "Differential Icicle Graph" : "Icicle Graph";
	return graph->differential ? "Differential Flame Graph" : "Flame Graph";
}

static void put_attribute(struct output_buffer *out, const char *name, double value)
{
	output_char(out, ' ');
	output_string(out, name);
	output_string(out, "=\"");
	output_decimal(out, value, 2);
	output_char(out, '"');
}

static void put_text_element(struct output_buffer *out, const char *id, double x, double y,
			     const char *text)
{
	output_string(out, "<text id=\"");
	output_string(out, id);
	output_char(out, '"');
	put_attribute(out, "x", x);
	put_attribute(out, "y", y);
	output_char(out, '>');
	output_xml_text(out, text, strlen(text));
	output_string(out, "</text>\n");
}

/* A JavaScript string literal that is also safe inside CDATA. */
static void put_script_string(struct output_buffer *out, const char *text)
{
	output_char(out, '"');
	for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
		if (*c < 0x20 || *c == '"' || *c == '\\' || *c == '<' || *c == '>' || *c == '&') {
			static const char hex[] = "0123456789abcdef";
			char escape[6] = {'\\', 'u', '0', '0', hex[*c >> 4], hex[*c & 15]};

			output_bytes(out, escape, sizeof(escape));
		} else {
			output_char(out, (char)*c);
		}
	}
	output_char(out, '"');
}

static void write_header(struct svg_writer *writer)
{
	struct output_buffer *out = &writer->out;
	const struct svg_geometry *g = &writer->geometry;
	const struct flamegraph_options *options = writer->options;
	const char *title = options->title ? options->title : default_title(writer->graph, options);

	output_string(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
			   "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
			   "xmlns:fg=\"urn:profcpu:flamegraph\"");
	put_attribute(out, "width", g->width);
	put_attribute(out, "height", g->height);
	output_string(out, " viewBox=\"0 0 ");
	output_decimal(out, g->width, 2);
	output_char(out, ' ');
	output_decimal(out, g->height, 2);
	output_string(out, "\">\n");
	if (options->notes) {
		output_string(out, "<desc>");
		output_xml_text(out, options->notes, strlen(options->notes));
		output_string(out, "</desc>\n");
	}
	output_string(out, "<defs><linearGradient id=\"background\" x1=\"0\" y1=\"0\" x2=\"0\" "
			   "y2=\"1\"><stop offset=\"5%\" stop-color=\"#f6f7f9\"/>"
			   "<stop offset=\"95%\" stop-color=\"#e6e9ef\"/></linearGradient></defs>\n"
			   "<style type=\"text/css\">\n"
			   "text { font-family: ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, "
			   "'Liberation Mono', monospace; fill: #000; }\n"
			   "#title { font: 17px sans-serif; text-anchor: middle; }\n"
			   "#subtitle { font: 12px sans-serif; text-anchor: middle; fill: #555; }\n"
			   "#unzoom, #search, #ignorecase { cursor: pointer; fill: #2456a8; }\n"
			   "#search, #ignorecase, #matched { text-anchor: end; }\n"
			   "#ignorecase.active { fill: #c000c0; font-weight: bold; }\n"
			   "#frames > g { cursor: pointer; }\n"
			   "#frames > g:hover > rect { stroke: #000; stroke-width: 0.7; }\n"
			   "#frames text { pointer-events: none; }\n"
			   ".hide { display: none; }\n"
			   ".parent { opacity: 0.55; }\n"
			   "</style>\n"
			   "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" "
			   "fill=\"url(#background)\"/>\n");
	put_text_element(out, "title", g->width / 2, g->font_size * 2, title);
	if (options->subtitle)
		put_text_element(out, "subtitle", g->width / 2, g->font_size * 3.5,
				 options->subtitle);
	output_string(out, "<text id=\"unzoom\" class=\"hide\"");
	put_attribute(out, "x", SIDE_PADDING);
	put_attribute(out, "y", g->font_size * 2);
	output_string(out, ">Reset Zoom</text>\n<text id=\"search\"");
	put_attribute(out, "x", g->width - SIDE_PADDING - 4 * g->char_width);
	put_attribute(out, "y", g->font_size * 2);
	output_string(out,
		      "><title>Search with a regular expression (Ctrl-F)</title>Search</text>\n"
		      "<text id=\"ignorecase\"");
	put_attribute(out, "x", g->width - SIDE_PADDING);
	put_attribute(out, "y", g->font_size * 2);
	output_string(out, "><title>Toggle case-insensitive search (Ctrl-I)</title>ic</text>\n");
	put_text_element(out, "details", SIDE_PADDING, g->height - g->font_size + 2, " ");
	put_text_element(out, "matched", g->width - SIDE_PADDING, g->height - g->font_size + 2,
			 " ");
}

static const struct name_style *style_of(struct svg_writer *writer, uint32_t name)
{
	struct name_style *style = &writer->styles[name];
	const struct name_table *names = &writer->graph->names;

	if (!style->known) {
		const char *text = name_table_name(names, name);
		enum frame_kind kind =
		    frame_kind_of(text, name_table_length(names, name), &style->display_length);

		style->colour = palette_colour(writer->palette, kind, text, style->display_length);
		style->known = true;
	}
	return style;
}

/* "NAME (COUNT samples, SHARE%)", then the frame's full names, a line each. */
static void put_frame_title(struct svg_writer *writer, const struct placed_frame *frame,
			    const char *name, size_t length)
{
	struct output_buffer *out = &writer->out;
	uint32_t title = writer->graph->nodes[frame->node].title;

	output_string(out, "<g><title>");
	output_xml_text(out, name, length);
	output_string(out, " (");
	output_count(out, frame->width);
	output_char(out, ' ');
	output_xml_text(out, writer->options->count_name, strlen(writer->options->count_name));
	output_string(out, ", ");
	output_decimal(out, 100 * frame->width / writer->total, 2);
	output_char(out, '%');
	if (writer->graph->differential) {
		double change = frame->width - frame->width_before;

		output_string(out, "; ");
		if (change >= 0)
			output_char(out, '+');
		output_count(out, change);
		output_string(out, ", ");
		if (change >= 0)
			output_char(out, '+');
		output_decimal(out, 100 * change / writer->total, 2);
		output_char(out, '%');
	}
	output_char(out, ')');
	if (title != NO_TITLE) {
		const char *line = name_table_name(&writer->graph->names, title);
		const char *end = line + name_table_length(&writer->graph->names, title);

		for (const char *stop; line <= end; line = stop + 1) {
			stop = memchr(line, '\n', (size_t)(end - line));
			if (!stop)
				stop = end;
			output_char(out, '\n');
			output_xml_text(out, line, (size_t)(stop - line));
		}
	}
	output_string(out, "</title>");
}

static void write_frame(struct svg_writer *writer, const struct placed_frame *frame)
{
	struct output_buffer *out = &writer->out;
	const struct svg_geometry *g = &writer->geometry;
	const char *name;
	size_t length;
	struct rgb colour;
	char merged_name[64];
	double x = SIDE_PADDING + frame->x * g->pixels_per_sample;
	double width = frame->width * g->pixels_per_sample;
	double y = g->inverted ? g->top + frame->depth * g->frame_height
			       : g->height - g->bottom - (frame->depth + 1) * g->frame_height;
	size_t max_chars =
	    width > 2 * TEXT_PADDING ? (size_t)((width - 2 * TEXT_PADDING) / g->char_width) : 0;
	bool ellipsis;
	size_t shown;

	if (frame->merged) {
		/* Narrow frames merged under their parent: grey, named by
		 * their count. */
		length = (size_t)snprintf(merged_name, sizeof(merged_name),
					  ELLIPSIS " %" PRIu32 " narrow frame%s merged",
					  frame->merged, frame->merged == 1 ? "" : "s");
		name = merged_name;
		colour = palette_colour(writer->palette, FRAME_UNKNOWN, name, length);
	} else {
		uint32_t name_id = writer->graph->nodes[frame->node].name;
		const struct name_style *style = style_of(writer, name_id);

		name = name_table_name(&writer->graph->names, name_id);
		length = style->display_length;
		colour = style->colour;
	}
	shown = text_fit(name, length, max_chars, &ellipsis);

	if (writer->graph->differential)
		colour = palette_change_colour(frame->width_before, frame->width,
					       writer->largest_change);
	put_frame_title(writer, frame, name, length);
	output_string(out, "<rect");
	put_attribute(out, "x", x);
	put_attribute(out, "y", y);
	put_attribute(out, "width", width);
	put_attribute(out, "height", g->frame_height - 1);
	output_string(out, " fill=\"rgb(");
	output_integer(out, colour.red);
	output_char(out, ',');
	output_integer(out, colour.green);
	output_char(out, ',');
	output_integer(out, colour.blue);
	output_string(out, ")\" rx=\"2\" fg:x=\"");
	output_decimal(out, frame->x, 3);
	output_string(out, "\" fg:w=\"");
	output_decimal(out, frame->width, 3);
	output_string(out, "\"/><text");
	put_attribute(out, "x", x + TEXT_PADDING);
	put_attribute(out, "y", y + g->frame_height / 2 + g->font_size * 0.35);
	output_char(out, '>');
	output_xml_text(out, name, shown);
	if (ellipsis)
		output_string(out, ELLIPSIS);
	output_string(out, "</text></g>\n");
}

static void write_script(struct svg_writer *writer)
{
	struct output_buffer *out = &writer->out;
	const struct svg_geometry *g = &writer->geometry;

	output_string(out, "<script type=\"text/ecmascript\"><![CDATA[\nvar fgConfig = {");
	output_string(out, "frameHeight: ");
	output_decimal(out, g->frame_height, 2);
	output_string(out, ", top: ");
	output_decimal(out, g->top, 2);
	output_string(out, ", bottom: ");
	output_decimal(out, g->height - g->bottom, 2);
	output_string(out, ", inverted: ");
	output_string(out, g->inverted ? "true" : "false");
	output_string(out, ", sidePadding: ");
	output_integer(out, SIDE_PADDING);
	output_string(out, ", textPadding: ");
	output_integer(out, TEXT_PADDING);
	output_string(out, ", width: ");
	output_decimal(out, g->width, 2);
	output_string(out, ", charWidth: ");
	output_decimal(out, g->char_width, 3);
	output_string(out, ", total: ");
	output_decimal(out, writer->total, 3);
	output_string(out, ", countName: ");
	put_script_string(out, writer->options->count_name);
	output_string(out, "};\n");
	output_bytes(out, (const char *)flamegraph_js, flamegraph_js_len);
	output_string(out, "]]></script>\n");
}

static double largest_change(const struct frame_layout *layout)
{
	double largest = 0;

	for (size_t i = 1; i < layout->count; i++) { /* the root would dwarf the rest */
		double change = fabs(layout->frames[i].width - layout->frames[i].width_before);

		if (change > largest)
			largest = change;
	}
	return largest;
}

static int check_options(const struct flamegraph_options *options)
{
	if (options->width < 0 || options->frame_height < 0 || isnan(options->width) ||
	    isnan(options->frame_height) || isnan(options->min_width) || options->width > 1e6 ||
	    options->frame_height > 1e4 || (options->width && options->width < 4 * SIDE_PADDING) ||
	    (options->frame_height && options->frame_height < 4) ||
	    (options->palette && !palette_find(options->palette))) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int flamegraph_write_svg(struct flamegraph *graph, const struct flamegraph_options *given,
			 FILE *out)
{
	struct flamegraph_options options = *given;
	struct svg_writer writer = {.options = &options};
	struct svg_geometry *g = &writer.geometry;
	struct frame_layout layout;
	double content_width, min_width_pixels;

	if (check_options(&options))
		return -1;
	if (!options.width)
		options.width = 1200;
	if (!options.frame_height)
		options.frame_height = 16;
	if (!options.count_name)
		options.count_name = "samples";
	writer.palette = palette_find(options.palette ? options.palette : "dotnet");
	content_width = options.width - 2 * SIDE_PADDING;
	if (options.min_width < 0)
		min_width_pixels = 0;
	else if (options.min_width_is_percent)
		min_width_pixels = content_width * options.min_width / 100;
	else
		min_width_pixels = options.min_width ? options.min_width : 0.1;

	for (size_t node = 0; node < graph->node_count; node++)
		writer.total += graph->nodes[node].self_after;
	if (!(writer.total > 0)) {
		errno = ENODATA;
		return -1;
	}
	if (!options.max_frames)
		options.max_frames = FLAMEGRAPH_DEFAULT_MAX_FRAMES;
	frame_layout_build(&layout, graph, options.reverse,
			   min_width_pixels * writer.total / content_width,
			   options.max_frames == FLAMEGRAPH_ALL_FRAMES ? 0 : options.max_frames);
	writer.graph = layout.graph;

	*g = (struct svg_geometry){
	    .width = options.width,
	    .frame_height = options.frame_height,
	    .font_size = options.frame_height < 16 ? options.frame_height * 0.75 : 12,
	    .pixels_per_sample = content_width / writer.total,
	    .inverted = options.inverted,
	};
	g->char_width = g->font_size * char_width_per_font_size;
	g->top = g->font_size * (options.subtitle ? 4.5 : 3);
	g->bottom = g->font_size * 2 + 10;
	g->height = g->top + (layout.max_depth + 1) * g->frame_height + g->bottom;
	writer.largest_change = largest_change(&layout);
	writer.styles = fg_calloc(writer.graph->names.count, sizeof(*writer.styles));

	output_buffer_init(&writer.out, out);
	write_header(&writer);
	output_string(&writer.out, "<g id=\"frames\">\n");
	for (size_t i = 0; i < layout.count; i++)
		write_frame(&writer, &layout.frames[i]);
	output_string(&writer.out, "</g>\n");
	write_script(&writer);
	output_string(&writer.out, "</svg>\n");

	free(writer.styles);
	frame_layout_free(&layout);
	return output_buffer_finish(&writer.out);
}
