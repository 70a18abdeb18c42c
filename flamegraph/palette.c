#include "palette.h"
#include "flamegraph.h"
#include "name_table.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

/* A colour family: each channel ranges from `low` by up to `spread`. */
struct family {
	struct rgb low, spread;
};

static const struct family red_family = {{215, 70, 55}, {40, 60, 30}};
static const struct family green_family = {{70, 185, 60}, {50, 45, 50}};
static const struct family aqua_family = {{60, 190, 190}, {40, 35, 35}};
static const struct family purple_family = {{165, 135, 215}, {35, 30, 30}};
static const struct family yellow_family = {{200, 190, 50}, {35, 35, 40}};
static const struct family orange_family = {{235, 135, 25}, {20, 40, 30}};
static const struct family tan_family = {{200, 170, 135}, {25, 20, 20}};
static const struct family grey_family = {{175, 175, 175}, {20, 20, 20}};
static const struct family hot_family = {{205, 0, 0}, {50, 230, 55}};
static const struct family mem_family = {{0, 190, 0}, {0, 50, 60}};
static const struct family io_family = {{80, 80, 190}, {60, 60, 55}};
static const struct family blue_family = {{80, 80, 205}, {60, 60, 50}};
static const struct family pastel_yellow = {{175, 175, 50}, {55, 55, 20}};
static const struct family pink_purple = {{190, 80, 190}, {65, 20, 65}};
static const struct family orange_only = {{190, 90, 0}, {65, 65, 0}};

struct palette {
	const char *name;
	bool by_kind; /* colour by frame kind; otherwise one family for all */
	const struct family *family;
};

static const struct palette palettes[] = {
    {"dotnet", true, NULL},	     {"java", true, NULL},
    {"hot", false, &hot_family},     {"mem", false, &mem_family},
    {"io", false, &io_family},	     {"red", false, &red_family},
    {"green", false, &green_family}, {"blue", false, &blue_family},
    {"aqua", false, &aqua_family},   {"yellow", false, &pastel_yellow},
    {"purple", false, &pink_purple}, {"orange", false, &orange_only},
};

const struct palette *palette_find(const char *name)
{
	for (size_t i = 0; i < sizeof(palettes) / sizeof(*palettes); i++)
		if (!strcasecmp(palettes[i].name, name))
			return &palettes[i];
	return NULL;
}

bool flamegraph_palette_is_known(const char *name)
{
	return palette_find(name) != NULL;
}

static bool ends_with(const char *name, size_t length, const char *suffix)
{
	size_t suffix_length = strlen(suffix);

	return length >= suffix_length &&
	       !memcmp(name + length - suffix_length, suffix, suffix_length);
}

static bool starts_with(const char *name, size_t length, const char *prefix)
{
	size_t prefix_length = strlen(prefix);

	return length >= prefix_length && !memcmp(name, prefix, prefix_length);
}

static bool contains(const char *name, size_t length, const char *needle)
{
	return memmem(name, length, needle, strlen(needle)) != NULL;
}

/* "[Assembly] " at the start or after the return type, as the .NET
 * runtime's perf maps name JIT-compiled methods. */
static bool has_assembly_tag(const char *name, size_t length)
{
	for (size_t i = 0; i < length; i++) {
		size_t end;

		if (name[i] != '[' || (i && name[i - 1] != ' '))
			continue;
		for (end = i + 1; end < length && name[end] != ']' && name[end] != ' '; end++)
			;
		if (end > i + 1 && end + 1 < length && name[end] == ']' && name[end + 1] == ' ')
			return true;
	}
	return false;
}

/* "Assembly!Namespace.Type::Method", as PerfView and profcpu's folded
 * stacks name .NET methods: a '!' before the first "::". */
static bool has_assembly_prefix(const char *name, size_t length)
{
	const char *bang = memchr(name, '!', length);
	const char *scope = memmem(name, length, "::", 2);

	return bang && bang > name && scope && bang < scope;
}

enum frame_kind frame_kind_of(const char *name, size_t length, size_t *display_length)
{
	static const struct {
		const char *suffix;
		enum frame_kind kind;
	} annotations[] = {
	    {"_[k]", FRAME_KERNEL}, {"_[j]", FRAME_MANAGED}, {"_[i]", FRAME_INLINED}};

	*display_length = length;
	for (size_t i = 0; i < sizeof(annotations) / sizeof(*annotations); i++) {
		if (ends_with(name, length, annotations[i].suffix)) {
			*display_length = length - 4;
			return annotations[i].kind;
		}
	}
	if (length == 9 && !memcmp(name, "[unknown]", 9))
		return FRAME_UNKNOWN;
	if (starts_with(name, length, "[kernel.kallsyms]"))
		return FRAME_KERNEL;
	/* "[stub] NAME" as profcpu names them; "stub<N> NAME" as a perf map does */
	if (starts_with(name, length, "[stub] ") || starts_with(name, length, "stub<"))
		return FRAME_RUNTIME_STUB;
	if (contains(name, length, "::") &&
	    (has_assembly_tag(name, length) || has_assembly_prefix(name, length)))
		return FRAME_MANAGED;
	if (length > 2 && name[0] == '[' && name[length - 1] == ']' && !memchr(name, ' ', length))
		return FRAME_MODULE_ONLY;
	if (contains(name, length, "::"))
		return FRAME_NATIVE_CPP;
	return FRAME_NATIVE;
}

static const struct family *family_of(enum frame_kind kind)
{
	switch (kind) {
	case FRAME_MANAGED:
		return &green_family;
	case FRAME_INLINED:
		return &aqua_family;
	case FRAME_RUNTIME_STUB:
		return &purple_family;
	case FRAME_NATIVE_CPP:
		return &yellow_family;
	case FRAME_KERNEL:
		return &orange_family;
	case FRAME_MODULE_ONLY:
		return &tan_family;
	case FRAME_UNKNOWN:
		return &grey_family;
	case FRAME_NATIVE:
		break;
	}
	return &red_family;
}

struct rgb palette_colour(const struct palette *palette, enum frame_kind kind, const char *name,
			  size_t length)
{
	const struct family *family = palette->by_kind ? family_of(kind) : palette->family;
	uint64_t hash = hash_bytes(name, length);
	/* One shade for the whole colour, plus a little independent tint, so
	 * neighbours differ but the family stays recognisable. */
	double shade = (double)(hash & 0xFFFF) / 0xFFFF;
	double tint = (double)(hash >> 16 & 0xFFFF) / 0xFFFF;

	return (struct rgb){
	    .red = (uint8_t)(family->low.red + family->spread.red * shade),
	    .green =
		(uint8_t)(family->low.green + family->spread.green * (0.7 * shade + 0.3 * tint)),
	    .blue = (uint8_t)(family->low.blue + family->spread.blue * tint),
	};
}

struct rgb palette_change_colour(double before, double after, double largest_change)
{
	double change = after - before, share;
	uint8_t pale;

	if (change == 0 || largest_change <= 0)
		return (struct rgb){221, 221, 221};
	share = fabs(change) / largest_change;
	/* Even the smallest change is visibly tinted. */
	pale = (uint8_t)(230 - 200 * (share < 1 ? share : 1));
	if (change > 0)
		return (struct rgb){255, pale, pale};
	return (struct rgb){pale, pale, 255};
}
