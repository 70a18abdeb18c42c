/* The flame graph library: folded text in, frame layout, colours, SVG out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "flamegraph.h"
#include "frame_layout.h"
#include "palette.h"
#include "text_fit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct flamegraph *read_text(const char *text, enum flamegraph_order order,
				    struct folded_read_stats *stats)
{
	struct flamegraph *graph = flamegraph_new(order);
	FILE *in = fmemopen((void *)text, strlen(text), "r");

	assert_non_null(in);
	assert_int_equal(flamegraph_read_folded(graph, in, FOLDED_ONE_OR_TWO, stats), 0);
	fclose(in);
	return graph;
}

static char *write_folded(struct flamegraph *graph)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	assert_int_equal(flamegraph_write_folded(graph, out), 0);
	fclose(out);
	return text;
}

/* `text`, read as folded stacks in `order`, is written back as `expected`. */
static void assert_written_back(const char *text, enum flamegraph_order order, const char *expected)
{
	struct flamegraph *graph = read_text(text, order, NULL);
	char *folded = write_folded(graph);

	assert_string_equal(folded, expected);
	free(folded);
	flamegraph_free(graph);
}

static char *write_svg(struct flamegraph *graph, const struct flamegraph_options *options)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	assert_int_equal(flamegraph_write_svg(graph, options, out), 0);
	fclose(out);
	return text;
}

/* The attribute `name` of the <rect> of the frame titled "`frame` (...". */
static double frame_attribute(const char *svg, const char *frame, const char *name)
{
	char title[512], attribute[64];
	const char *at, *rect;

	snprintf(title, sizeof(title), "<title>%s (", frame);
	at = strstr(svg, title);
	if (!at)
		fail_msg("no frame %s", frame);
	rect = strstr(at, "<rect");
	snprintf(attribute, sizeof(attribute), " %s=\"", name);
	return strtod(strstr(rect, attribute) + strlen(attribute), NULL);
}

/* Counts too large for six decimals in 64 bits (a weight in bytes or
 * microseconds) are written back whole. */
static void test_folded_huge_counts(void **state)
{
	(void)state;
	assert_written_back("a;b 20000000000000\na;c 544444444444442\n", FLAMEGRAPH_MERGED,
			    "a;b 20000000000000\na;c 544444444444442\n");
}

/* More root frames than the writer's first allocation (16): every process
 * of a whole-machine capture starts its own root. */
static void test_folded_many_roots(void **state)
{
	char text[40 * 16] = "", line[16];
	struct folded_read_stats stats;
	struct flamegraph *graph;
	char *folded;

	(void)state;
	for (int i = 0; i < 40; i++) {
		snprintf(line, sizeof(line), "p%02d;f 1\n", i);
		strcat(text, line);
	}
	graph = read_text(text, FLAMEGRAPH_MERGED, &stats);
	folded = write_folded(graph);
	assert_string_equal(folded, text);
	free(folded);
	flamegraph_free(graph);
}

static void test_folded_frames_with_spaces_and_decimals(void **state)
{
	struct folded_read_stats stats;
	struct flamegraph *graph =
	    read_text("dotnet;void [demo] Demo.Program::Main(string[])[OptimizedTier1] 2.5\n"
		      "dotnet;int32 [System.Private.CoreLib] "
		      "System.SpanHelpers::IndexOf(char&,char,int32) 7\r\n",
		      FLAMEGRAPH_MERGED, &stats);
	char *folded = write_folded(graph);

	(void)state;
	assert_int_equal(stats.lines, 2);
	assert_int_equal(stats.stacks, 2);
	assert_int_equal(stats.bad_lines, 0);
	assert_false(flamegraph_is_differential(graph));
	assert_string_equal(
	    folded, "dotnet;int32 [System.Private.CoreLib] "
		    "System.SpanHelpers::IndexOf(char&,char,int32) 7\n"
		    "dotnet;void [demo] Demo.Program::Main(string[])[OptimizedTier1] 2.5\n");
	free(folded);
	flamegraph_free(graph);
}

static void test_folded_duplicates_merge_in_any_order(void **state)
{
	struct folded_read_stats stats;
	struct flamegraph *graph =
	    read_text("a;b;c 1\nx;y 4\na;b 2\na;b;c 3\nx;y 1", FLAMEGRAPH_MERGED, &stats);
	char *folded = write_folded(graph);

	(void)state;
	assert_int_equal(stats.stacks, 5);
	assert_int_equal(flamegraph_stack_count(graph), 3);
	assert_string_equal(folded, "a;b 2\na;b;c 4\nx;y 5\n");
	free(folded);
	flamegraph_free(graph);
}

static void test_folded_bad_lines_are_counted(void **state)
{
	struct folded_read_stats stats;
	struct flamegraph *graph = read_text("\n"
					     "a;b 1\n"
					     "no count here\n" /* line 3: the first bad one */
					     "a;;b 2\n"	       /* empty frame */
					     "a;b 1x\n"	       /* not a number */
					     "7\n"	       /* a count without a stack */
					     "   \n"
					     "a;c 3\n",
					     FLAMEGRAPH_MERGED, &stats);

	(void)state;
	assert_int_equal(stats.lines, 8);
	assert_int_equal(stats.stacks, 2);
	assert_int_equal(stats.bad_lines, 4);
	assert_int_equal(stats.first_bad_line, 3);
	flamegraph_free(graph);
}

static void test_empty_input_has_no_stacks(void **state)
{
	struct folded_read_stats stats;
	struct flamegraph *graph = read_text("", FLAMEGRAPH_MERGED, &stats);
	struct flamegraph_options options = {0};
	FILE *out = fopen("/dev/null", "w");

	(void)state;
	assert_int_equal(stats.lines, 0);
	assert_int_equal(stats.stacks, 0);
	errno = 0;
	assert_int_equal(flamegraph_write_svg(graph, &options, out), -1);
	assert_int_equal(errno, ENODATA);
	fclose(out);
	flamegraph_free(graph);
}

static void test_two_columns_make_a_differential_graph(void **state)
{
	struct flamegraph *graph = read_text("a;b 10 5\na;c 1 4\n", FLAMEGRAPH_MERGED, NULL);
	struct flamegraph_options options = {0};
	char *svg, *folded;

	(void)state;
	assert_true(flamegraph_is_differential(graph));
	folded = write_folded(graph);
	assert_string_equal(folded, "a;b 10 5\na;c 1 4\n");
	svg = write_svg(graph, &options);
	assert_non_null(strstr(svg, ">Differential Flame Graph</text>"));
	/* Sized by the second column; b shrank (blue), c grew (red). */
	assert_non_null(strstr(svg, "<title>b (5 samples, 55.56%; -5, -55.56%)</title>"));
	assert_non_null(strstr(svg, "<title>c (4 samples, 44.44%; +3, +33.33%)</title>"));
	assert_non_null(strstr(strstr(svg, "<title>b ("), "fill=\"rgb(30,30,255)\""));
	free(svg);
	free(folded);
	flamegraph_free(graph);
}

static void test_change_colours(void **state)
{
	struct rgb grew = palette_change_colour(1, 11, 10);
	struct rgb grew_little = palette_change_colour(10, 11, 10);
	struct rgb shrank = palette_change_colour(11, 1, 10);
	struct rgb same = palette_change_colour(5, 5, 10);

	(void)state;
	assert_int_equal(grew.red, 255);
	assert_true(grew.green < 50 && grew.blue < 50);
	assert_int_equal(grew_little.red, 255);
	assert_true(grew_little.green > grew.green && grew_little.green < 255);
	assert_int_equal(shrank.blue, 255);
	assert_true(shrank.red < 50);
	assert_true(same.red == same.green && same.green == same.blue);
}

static void test_layout_widths_follow_counts(void **state)
{
	struct flamegraph *graph =
	    read_text("root;big 300\nroot;small 100\nroot 100\n", FLAMEGRAPH_MERGED, NULL);
	struct flamegraph_options options = {.width = 1020}; /* 1000 pixels inside */
	char *svg = write_svg(graph, &options);

	(void)state;
	assert_float_equal(frame_attribute(svg, "all", "width"), 1000, 0.01);
	assert_float_equal(frame_attribute(svg, "big", "width"), 600, 0.01);
	assert_float_equal(frame_attribute(svg, "small", "width"), 200, 0.01);
	/* Siblings in name order from the left edge; self time on the right. */
	assert_float_equal(frame_attribute(svg, "big", "x"), 10, 0.01);
	assert_float_equal(frame_attribute(svg, "small", "x"), 610, 0.01);
	assert_float_equal(frame_attribute(svg, "small", "fg:x"), 300, 0.001);
	/* A flame graph grows upwards. */
	assert_true(frame_attribute(svg, "big", "y") < frame_attribute(svg, "root", "y"));
	free(svg);
	flamegraph_free(graph);
}

static void test_min_width_prunes_narrow_frames(void **state)
{
	struct flamegraph *graph =
	    read_text("a;wide 990\na;narrow;deeper 10\n", FLAMEGRAPH_MERGED, NULL);
	struct flamegraph_options pixels = {.width = 1020, .min_width = 11};
	struct flamegraph_options percent = {
	    .width = 1020, .min_width = 0.5, .min_width_is_percent = true};
	char *pruned = write_svg(graph, &pixels), *kept = write_svg(graph, &percent);

	(void)state;
	assert_null(strstr(pruned, "<title>narrow ("));
	assert_null(strstr(pruned, "<title>deeper ("));
	assert_non_null(strstr(pruned, "<title>wide ("));
	assert_non_null(strstr(kept, "<title>narrow ("));
	assert_non_null(strstr(kept, "<title>deeper ("));
	free(pruned);
	free(kept);
	flamegraph_free(graph);
}

static size_t count_of(const char *text, const char *needle)
{
	size_t count = 0;

	for (const char *at = text; (at = strstr(at, needle)); at += strlen(needle))
		count++;
	return count;
}

/* 2,000 leaves under "main", each its own width: with room for 100 frames
 * the widest are drawn, the rest merged into one grey "…" frame right of
 * them that holds their samples and says how many it stands for. */
static void test_frame_cap_merges_the_narrowest(void **state)
{
	struct flamegraph *graph = flamegraph_new(FLAMEGRAPH_MERGED);
	struct flamegraph_options capped = {.max_frames = 100, .min_width = -1};
	struct flamegraph_options all = {.max_frames = FLAMEGRAPH_ALL_FRAMES, .min_width = -1};
	double merged_samples = 0;
	char *svg, *every;

	(void)state;
	for (int i = 1; i <= 2000; i++) {
		char leaf[32];
		const char *frames[] = {"main", leaf};

		snprintf(leaf, sizeof(leaf), "leaf%d", i);
		flamegraph_add_stack(graph, frames, 2, i);
	}
	svg = write_svg(graph, &capped);
	every = write_svg(graph, &all);
	assert_int_equal(count_of(svg, "fg:w="), 100);
	assert_int_equal(count_of(every, "fg:w="), 2002);
	assert_non_null(strstr(svg, "<title>leaf2000 ("));
	assert_null(strstr(svg, "<title>leaf1 ("));
	/* Kept: main, all, 97 leaves; merged: the other 1,903. */
	assert_non_null(strstr(svg, "<title>\xE2\x80\xA6 1903 narrow frames merged ("));
	for (int i = 1; i <= 1903; i++)
		merged_samples += i;
	assert_float_equal(frame_attribute(svg, "\xE2\x80\xA6 1903 narrow frames merged", "fg:w"),
			   merged_samples, 0.001);
	/* It follows the leaves kept, after the last of them. */
	assert_true(frame_attribute(svg, "\xE2\x80\xA6 1903 narrow frames merged", "fg:x") >=
		    frame_attribute(svg, "leaf2000", "fg:x") + 2000);
	free(svg);
	free(every);
	flamegraph_free(graph);
}

/* A flame chart's x is time: a frame left out by the cap leaves a gap, and
 * the frames after it keep their place. */
static void test_frame_cap_keeps_time_in_a_flame_chart(void **state)
{
	struct flamegraph *graph = read_text("a;x 1\na;y 1000\na;z 1\n", FLAMEGRAPH_CHART, NULL);
	struct flamegraph_options capped = {.max_frames = 3, .min_width = -1};
	char *svg = write_svg(graph, &capped);

	(void)state;
	assert_int_equal(count_of(svg, "fg:w="), 3);
	assert_float_equal(frame_attribute(svg, "y", "fg:x"), 1, 0.001);
	assert_null(strstr(svg, "narrow frame"));
	free(svg);
	flamegraph_free(graph);
}

static void test_inverted_and_reverse(void **state)
{
	struct flamegraph *graph =
	    read_text("main;parse;strlen 3\nmain;print;strlen 1\n", FLAMEGRAPH_MERGED, NULL);
	struct flamegraph_options inverted = {.inverted = true};
	struct flamegraph_options reverse = {.reverse = true};
	char *icicle = write_svg(graph, &inverted), *reversed = write_svg(graph, &reverse);

	(void)state;
	assert_non_null(strstr(icicle, ">Icicle Graph</text>"));
	assert_true(frame_attribute(icicle, "main", "y") < frame_attribute(icicle, "parse", "y"));
	/* Leaf first: strlen becomes the one root frame, with all samples. */
	assert_non_null(strstr(reversed, "<title>strlen (4 samples, 100%)</title>"));
	assert_true(frame_attribute(reversed, "parse", "y") <
		    frame_attribute(reversed, "strlen", "y"));
	assert_non_null(strstr(reversed, "<title>main (3 samples, 75%)</title>"));
	free(icicle);
	free(reversed);
	flamegraph_free(graph);
}

static void test_flame_chart_keeps_input_order(void **state)
{
	(void)state;
	/* Adjacent repeats merge; a later return to z is a new frame. */
	assert_written_back("m;z 1\nm;z 1\nm;a 1\nm;z 1\n", FLAMEGRAPH_CHART,
			    "m;z 2\nm;a 1\nm;z 1\n");
}

static void test_stacks_from_memory(void **state)
{
	const char *first[] = {"dotnet", "[unknown]", "entry_SYSCALL_64_[k]"};
	const char *second[] = {"dotnet", "[unknown]"};
	struct flamegraph *graph = flamegraph_new(FLAMEGRAPH_MERGED);
	char *folded;

	(void)state;
	flamegraph_add_stack(graph, first, 3, 5);
	flamegraph_add_stack(graph, second, 2, 1);
	flamegraph_add_stack(graph, second, 0, 9); /* depth 0: nothing */
	flamegraph_add_stack(graph, second, 2, 0); /* no samples: nothing */
	folded = write_folded(graph);
	assert_string_equal(folded,
			    "dotnet;[unknown] 1\ndotnet;[unknown];entry_SYSCALL_64_[k] 5\n");
	free(folded);
	flamegraph_free(graph);
}

/* A frame's full names show under its name on hover, each once, a line
 * each, also when the graph is reversed. */
static void test_titles_hold_full_names(void **state)
{
	const char *frames[] = {"Kernel", "Lib!Ns.Type::Run"};
	const char *quick[] = {NULL, "void [Lib] Ns.Type::Run(int32)[QuickJitted]"};
	const char *tier1[] = {NULL, "void [Lib] Ns.Type::Run(int32)[OptimizedTier1]"};
	struct flamegraph *graph = flamegraph_new(FLAMEGRAPH_MERGED);
	struct flamegraph_options plain = {0}, reverse = {.reverse = true};
	char *svg, *reversed;

	(void)state;
	flamegraph_add_titled_stack(graph, frames, quick, 2, 1);
	flamegraph_add_titled_stack(graph, frames, tier1, 2, 3);
	flamegraph_add_titled_stack(graph, frames, tier1, 2, 1);
	svg = write_svg(graph, &plain);
	reversed = write_svg(graph, &reverse);
	assert_non_null(strstr(svg, "<title>Lib!Ns.Type::Run (5 samples, 100%)\n"
				    "void [Lib] Ns.Type::Run(int32)[QuickJitted]\n"
				    "void [Lib] Ns.Type::Run(int32)[OptimizedTier1]</title>"));
	assert_non_null(strstr(svg, "<title>Kernel (5 samples, 100%)</title>"));
	assert_non_null(strstr(reversed, "<title>Lib!Ns.Type::Run (5 samples, 100%)\n"
					 "void [Lib] Ns.Type::Run(int32)[QuickJitted]\n"));
	free(svg);
	free(reversed);
	flamegraph_free(graph);
}

static void test_names_are_escaped_for_xml(void **state)
{
	const char *frames[] = {"Dictionary<K,V>::Get&\"'", "bad\x01utf8\xff"};
	struct flamegraph *graph = flamegraph_new(FLAMEGRAPH_MERGED);
	struct flamegraph_options options = {.title = "a < b & \"c\"", .count_name = "ms<"};
	char *svg;

	(void)state;
	flamegraph_add_stack(graph, frames, 2, 1);
	svg = write_svg(graph, &options);
	assert_non_null(
	    strstr(svg, "<title>Dictionary&lt;K,V&gt;::Get&amp;&quot;&apos; (1 ms&lt;, "));
	assert_non_null(strstr(svg, ">a &lt; b &amp; &quot;c&quot;</text>"));
	assert_non_null(strstr(svg, "bad\xEF\xBF\xBDutf8\xEF\xBF\xBD (1 ms"));
	assert_null(strstr(svg, "Dictionary<"));
	assert_non_null(strstr(svg, "countName: \"ms\\u003c\""));
	free(svg);
	flamegraph_free(graph);
}

static void test_long_names_end_with_an_ellipsis(void **state)
{
	bool ellipsis;
	const char *long_name = "System.Text.Json.JsonSerializer::Serialize";
	struct flamegraph *graph = flamegraph_new(FLAMEGRAPH_MERGED);
	const char *frames[] = {long_name};
	/* 200 pixels inside; a 10% frame is 20 pixels: two 7.44-pixel characters,
	 * too few to show, while the 90% frame shows 22 of 42 characters and "…". */
	struct flamegraph_options options = {.width = 220};
	const char *other[] = {"x"};
	char *svg;

	(void)state;
	assert_int_equal(text_fit("abcdef", 6, 6, &ellipsis), 6);
	assert_false(ellipsis);
	assert_int_equal(text_fit("abcdef", 6, 4, &ellipsis), 3);
	assert_true(ellipsis);
	assert_int_equal(text_fit("abcdef", 6, 2, &ellipsis), 0);
	/* UTF-8 is cut between characters: "é" is two bytes. */
	assert_int_equal(text_fit("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 8, 3, &ellipsis), 4);
	assert_true(ellipsis);
	assert_int_equal(text_fit("\xC3\xA9\xC3\xA9\xC3\xA9", 6, 3, &ellipsis), 6);
	assert_false(ellipsis);

	flamegraph_add_stack(graph, frames, 1, 9);
	flamegraph_add_stack(graph, other, 1, 1);
	svg = write_svg(graph, &options);
	assert_non_null(strstr(svg, ">System.Text.Json.JsonS\xE2\x80\xA6</text>"));
	assert_non_null(strstr(strstr(svg, "<title>x ("), "></text>"));
	free(svg);
	flamegraph_free(graph);
}

static void test_palette_tells_dotnet_frames_apart(void **state)
{
	static const struct {
		const char *name;
		enum frame_kind kind;
		size_t shown;
	} cases[] = {
	    {"int32 [System.Private.CoreLib] System.SpanHelpers::IndexOf(char&,char,int32)"
	     "[OptimizedTier1]",
	     FRAME_MANAGED, 92},
	    {"[demo] Demo.Program::Main", FRAME_MANAGED, 25},
	    {"System.Private.CoreLib!System.SpanHelpers::IndexOf", FRAME_MANAGED, 50},
	    {"Anonymously Hosted DynamicMethods Assembly!dynamicClass::lambda_method1",
	     FRAME_MANAGED, 71},
	    {"Foo::operator!=(Foo const&)", FRAME_NATIVE_CPP, 27},
	    {"Interop::Sys::Read_[j]", FRAME_MANAGED, 18},
	    {"Inlined::Helper_[i]", FRAME_INLINED, 15},
	    {"stub<1> AllocateTemporaryEntryPoints<PRECODE_FIXUP>", FRAME_RUNTIME_STUB, 51},
	    {"[stub] AllocateTemporaryEntryPoints<PRECODE_FIXUP>", FRAME_RUNTIME_STUB, 50},
	    {"MethodDesc::DoPrestub(MethodTable*)", FRAME_NATIVE_CPP, 35},
	    {"entry_SYSCALL_64_[k]", FRAME_KERNEL, 16},
	    {"[libcoreclr.so]", FRAME_MODULE_ONLY, 15},
	    {"[unknown]", FRAME_UNKNOWN, 9},
	    {"dotnet", FRAME_NATIVE, 6},
	    {"__memmove_avx_unaligned_erms", FRAME_NATIVE, 28},
	};
	const struct palette *dotnet = palette_find("DotNet");
	struct rgb first, again, managed;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		size_t shown;

		assert_int_equal(frame_kind_of(cases[i].name, strlen(cases[i].name), &shown),
				 cases[i].kind);
		assert_int_equal(shown, cases[i].shown);
	}
	assert_non_null(dotnet);
	assert_null(palette_find("nope"));
	assert_true(flamegraph_palette_is_known("hot"));
	first = palette_colour(dotnet, FRAME_NATIVE, "dotnet", 6);
	again = palette_colour(dotnet, FRAME_NATIVE, "dotnet", 6);
	managed = palette_colour(dotnet, FRAME_MANAGED, "dotnet", 6);
	assert_memory_equal(&first, &again, sizeof(first));
	assert_true(managed.green > managed.red); /* the green family */
	assert_true(first.red > first.green);	  /* the red family */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_folded_frames_with_spaces_and_decimals),
	    cmocka_unit_test(test_folded_duplicates_merge_in_any_order),
	    cmocka_unit_test(test_folded_many_roots),
	    cmocka_unit_test(test_folded_huge_counts),
	    cmocka_unit_test(test_folded_bad_lines_are_counted),
	    cmocka_unit_test(test_empty_input_has_no_stacks),
	    cmocka_unit_test(test_two_columns_make_a_differential_graph),
	    cmocka_unit_test(test_change_colours),
	    cmocka_unit_test(test_layout_widths_follow_counts),
	    cmocka_unit_test(test_min_width_prunes_narrow_frames),
	    cmocka_unit_test(test_frame_cap_merges_the_narrowest),
	    cmocka_unit_test(test_frame_cap_keeps_time_in_a_flame_chart),
	    cmocka_unit_test(test_inverted_and_reverse),
	    cmocka_unit_test(test_flame_chart_keeps_input_order),
	    cmocka_unit_test(test_stacks_from_memory),
	    cmocka_unit_test(test_titles_hold_full_names),
	    cmocka_unit_test(test_names_are_escaped_for_xml),
	    cmocka_unit_test(test_long_names_end_with_an_ellipsis),
	    cmocka_unit_test(test_palette_tells_dotnet_frames_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
