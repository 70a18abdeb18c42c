#include "native_aot_name.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Names longer than this lose their generic arguments, as the JIT's do
 * (managed_name.h). */
#define LONG_NAME 200

/* Generic arguments and arrays nested deeper than this are no name the
 * compiler wrote for real code: the symbol is the target's, and each level
 * costs a call and a scan of the rest of the name. */
#define MAX_NESTING 32

struct output {
	char *text;
	size_t length, size;
	bool failed;	      /* the name has a form this reader does not reverse */
	bool elide_arguments; /* "[...]" for generic arguments */
};

struct span {
	const char *start, *end;
};

static void put(struct output *out, const char *text, size_t length)
{
	if (out->length + length >= out->size) {
		out->failed = true;
		return;
	}
	memcpy(out->text + out->length, text, length);
	out->length += length;
	out->text[out->length] = '\0';
}

static void put_text(struct output *out, const char *text)
{
	put(out, text, strlen(text));
}

static bool span_is(struct span span, const char *text)
{
	size_t length = strlen(text);

	return (size_t)(span.end - span.start) == length && !memcmp(span.start, text, length);
}

static bool starts_with(struct span span, const char *text)
{
	size_t length = strlen(text);

	return (size_t)(span.end - span.start) >= length && !memcmp(span.start, text, length);
}

static bool is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The '>' that closes the '<' at `open`, or NULL. */
static const char *closing(const char *open, const char *end)
{
	int depth = 0;

	for (const char *c = open; c < end; c++) {
		if (*c == '<')
			depth++;
		else if (*c == '>' && --depth == 0)
			return c;
	}
	return NULL;
}

/* The types of CoreLib the compiler names without assembly or namespace. */
static const char *well_known_type(struct span name)
{
	static const char *const names[][2] = {
	    {"Bool", "Boolean"},  {"UInt8", "Byte"},	  {"Int8", "SByte"},
	    {"UInt16", "UInt16"}, {"Int16", "Int16"},	  {"UInt32", "UInt32"},
	    {"Int32", "Int32"},	  {"UInt64", "UInt64"},	  {"Int64", "Int64"},
	    {"Char", "Char"},	  {"Double", "Double"},	  {"Single", "Single"},
	    {"IntPtr", "IntPtr"}, {"UIntPtr", "UIntPtr"}, {"Object", "Object"},
	    {"String", "String"},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (span_is(name, names[i][0]))
			return names[i][1];
	return NULL;
}

enum { MAX_COMPONENTS = 64 };

/* Splits `name` at its single underscores: letters, digits and single
 * underscores only, no empty component. Returns the count, 0 if not. */
static size_t split_components(struct span name, struct span *components)
{
	size_t count = 0;
	const char *start = name.start;

	for (const char *c = name.start; c <= name.end; c++) {
		if (c < name.end && (is_letter(*c) || is_digit(*c)))
			continue;
		if (c < name.end && *c != '_')
			return 0;
		if (c == start || count == MAX_COMPONENTS)
			return 0; /* "__", a leading or trailing '_' */
		components[count++] = (struct span){start, c};
		start = c + 1;
	}
	return count;
}

static bool same_text(struct span a, struct span b)
{
	return a.end - a.start == b.end - b.start &&
	       !memcmp(a.start, b.start, (size_t)(a.end - a.start));
}

static bool all_digits(struct span span)
{
	for (const char *c = span.start; c < span.end; c++)
		if (!is_digit(*c))
			return false;
	return span.start < span.end;
}

/* How many leading components name the assembly. The compiler joins the
 * assembly's name and the namespace's with '_' as it joins their words, so
 * the boundary is a guess: the namespace usually begins with the assembly's
 * first word (PrimeWorker_PrimeWorker_..., System_Linq_System_Linq_...) or
 * with System, Internal or Microsoft. Otherwise an app's assembly is one
 * word, and a framework assembly (System.Console, whose types of no
 * namespace such as Interop are seen here) two. "S_P_" is System.Private.:
 * its assembly has three words (System.Private.CoreLib). */
static size_t assembly_length(const struct span *components, size_t count, bool system_private)
{
	static const char *const roots[] = {"System", "Internal", "Microsoft"};
	size_t shortest = system_private ? 3 : 1;

	for (size_t length = shortest; length < count; length++) {
		if (!system_private && same_text(components[length], components[0]))
			return length;
		for (size_t i = 0; i < sizeof(roots) / sizeof(*roots); i++)
			if (span_is(components[length], roots[i]))
				return length;
	}
	if (!system_private && span_is(components[0], "System") && count > 2)
		return 2;
	return shortest;
}

static void put_type(struct output *out, struct span type, bool with_assembly, unsigned depth);

/* "<A__B>" (the span within the brackets) as "[A,B]": each argument a type
 * without its namespace, as the JIT's names show them; `depth` the
 * arguments' nesting. */
static void put_arguments(struct output *out, struct span arguments, unsigned depth)
{
	const char *cursor = arguments.start;

	if (depth > MAX_NESTING) {
		out->failed = true;
		return;
	}
	put_text(out, "[");
	if (out->elide_arguments) {
		put_text(out, "...]");
		return;
	}
	while (!out->failed) {
		struct span rest = {cursor, arguments.end}, argument;
		const char *end;

		if (starts_with(rest, "System___Canon"))
			end = cursor + strlen("System___Canon");
		else if (starts_with(rest, "__Array<"))
			end = closing(cursor + strlen("__Array"), arguments.end);
		else
			for (end = cursor; end < arguments.end && !(end[0] == '_' && end[1] == '_');
			     end++)
				if (*end == '<' && !(end = closing(end, arguments.end)))
					break;
		if (!end) {
			out->failed = true;
			return;
		}
		if (starts_with(rest, "__Array<"))
			end++; /* past its '>' */
		argument = (struct span){cursor, end};
		put_type(out, argument, false, depth);
		if (end == arguments.end)
			break;
		if (arguments.end - end < 3 || end[0] != '_' || end[1] != '_' || end[2] == '_') {
			out->failed = true;
			return;
		}
		put_text(out, ",");
		cursor = end + 2;
	}
	put_text(out, "]");
}

/* The type `type` as "Assembly!Namespace.Type`N[Arguments]", or as
 * "Type`N[Arguments]" without `with_assembly`; `depth` its nesting in
 * generic arguments and arrays. */
static void put_type(struct output *out, struct span type, bool with_assembly, unsigned depth)
{
	struct span components[MAX_COMPONENTS], definition = type, arguments = {NULL, NULL};
	const char *open = memchr(type.start, '<', (size_t)(type.end - type.start));
	const char *well_known;
	size_t count, first;
	bool system_private;

	if (!with_assembly && span_is(type, "System___Canon")) {
		put_text(out, "__Canon");
		return;
	}
	if (depth > MAX_NESTING) {
		out->failed = true;
		return;
	}
	if (!with_assembly && starts_with(type, "__Array<") && type.end[-1] == '>') {
		put_type(out, (struct span){type.start + strlen("__Array<"), type.end - 1}, false,
			 depth + 1);
		put_text(out, "[]");
		return;
	}
	if (open) {
		if (closing(open, type.end) != type.end - 1) {
			out->failed = true;
			return;
		}
		definition.end = open;
		arguments = (struct span){open + 1, type.end - 1};
	}
	count = split_components(definition, components);
	if (count == 0) {
		out->failed = true;
		return;
	}
	if (count == 1 && (well_known = well_known_type(components[0]))) {
		put_text(out, with_assembly ? "System.Private.CoreLib!System." : "");
		put_text(out, well_known);
	} else {
		system_private =
		    count > 3 && span_is(components[0], "S") && span_is(components[1], "P");
		first = assembly_length(components, count, system_private);
		if (first >= count || all_digits(components[first])) {
			out->failed = true;
			return;
		}
		if (with_assembly) {
			put_text(out, system_private ? "System.Private" : "");
			for (size_t i = system_private ? 2 : 0; i < first; i++) {
				if (i > 0)
					put_text(out, ".");
				put(out, components[i].start,
				    (size_t)(components[i].end - components[i].start));
			}
			put_text(out, "!");
		} else {
			/* only the last name, with its arity */
			first = all_digits(components[count - 1]) && count - 1 > first ? count - 2
										       : count - 1;
		}
		for (size_t i = first; i < count; i++) {
			/* List`1 is "List_1": a number is the arity of the name before it */
			if (i > first)
				put_text(out, all_digits(components[i]) ? "`" : ".");
			put(out, components[i].start,
			    (size_t)(components[i].end - components[i].start));
		}
	}
	if (arguments.start)
		put_arguments(out, arguments, depth + 1);
}

/* Whether `method` is "_ctor" or "_cctor" (.ctor, .cctor), with the number
 * that tells overloads apart ("_ctor_2") or without. */
static bool is_constructor(struct span method)
{
	struct span number;

	if (starts_with(method, "_ctor"))
		number = (struct span){method.start + strlen("_ctor"), method.end};
	else if (starts_with(method, "_cctor"))
		number = (struct span){method.start + strlen("_cctor"), method.end};
	else
		return false;
	return number.start == number.end ||
	       (*number.start == '_' && all_digits((struct span){number.start + 1, number.end}));
}

/* The method's name: .ctor and .cctor (whose '.' became '_'; the number of
 * an overload dropped, as the JIT's names have none), or a name with its
 * generic arguments. */
static void put_method(struct output *out, struct span method)
{
	const char *open = memchr(method.start, '<', (size_t)(method.end - method.start));
	struct span name = {method.start, open ? open : method.end}, components[MAX_COMPONENTS];

	if (is_constructor(method)) {
		put_text(out, starts_with(method, "_ctor") ? ".ctor" : ".cctor");
		return;
	}
	if (!is_letter(*method.start) || !split_components(name, components) ||
	    (open && closing(open, method.end) != method.end - 1)) {
		out->failed = true;
		return;
	}
	put(out, name.start, (size_t)(name.end - name.start));
	if (open)
		put_arguments(out, (struct span){open + 1, method.end - 1}, 1);
}

/* The one "__" between owner and method outside any "<...>": a run of
 * exactly two underscores, or three before "ctor"/"cctor" at the end (the
 * method .ctor). NULL when there is none, or another run of two or more
 * (a compiler-generated name: <>c, <Main>b__0_0, ...). */
static const char *find_separator(const char *symbol, const char *end)
{
	const char *separator = NULL;
	int depth = 0;

	for (const char *c = symbol; c < end; c++) {
		size_t run = 0;

		if (*c == '<' || *c == '>') {
			depth += *c == '<' ? 1 : -1;
			continue;
		}
		if (*c != '_' || depth != 0)
			continue;
		while (c + run < end && c[run] == '_')
			run++;
		if (run >= 2) {
			if (separator || run > 3 ||
			    (run == 3 && !is_constructor((struct span){c + 2, end})))
				return NULL;
			separator = c;
		}
		c += run - 1;
	}
	return depth == 0 ? separator : NULL;
}

static bool render(struct output *out, const char *symbol)
{
	const char *end = symbol + strlen(symbol), *separator = find_separator(symbol, end);

	/* unbox_X__M: the stub that unboxes a value type for its method */
	if (!separator || !is_letter(symbol[0]) || !strncmp(symbol, "unbox_", 6))
		return false;
	out->length = 0;
	out->failed = false;
	out->text[0] = '\0';
	put_type(out, (struct span){symbol, separator}, true, 0);
	put_text(out, "::");
	put_method(out, (struct span){separator + 2, end});
	return !out->failed;
}

char *native_aot_name(const char *symbol)
{
	struct output out = {.size = strlen(symbol) + 64};

	if (!(out.text = malloc(out.size)))
		return NULL;
	if (render(&out, symbol) && out.length > LONG_NAME) {
		out.elide_arguments = true;
		render(&out, symbol);
	}
	if (out.failed || !out.length) {
		free(out.text);
		return NULL;
	}
	return out.text;
}
