/* The runtime events' profiles (runtime_profiles.h) from events with
 * stacks as runtime_stacks.h keeps them, named by a real resolver from a
 * perf map in a capture folder, as postprocess names them: the wait's
 * nanoseconds, the exception's type as the leaf frame, the allocation's
 * objects, the share under no named frame, the top places printed, and the
 * pprof file's sample types and values (emit_pprof_events), read back with
 * protobuf-c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "emit.h"
#include "profile.pb-c.h"
#include "runtime_profiles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define PID	   4242
#define CODE	   0x7f0000000000ull /* anonymous memory the JIT wrote */
#define WAIT_ON_A  (CODE + 0x1000)
#define THROW_A	   (CODE + 0x2000)
#define MAIN	   (CODE + 0x3000)
#define NOT_IN_MAP (CODE + 0x9000)
#define PERF_MAP                                                                                   \
	"7f0000001000 100 void [demo] Demo.Program::WaitOnA()[OptimizedTier1]\n"                   \
	"7f0000002000 100 void [demo] Demo.Program::ThrowA(int32)[OptimizedTier1]\n"               \
	"7f0000003000 100 int32 [demo] Demo.Program::Main(string[])[OptimizedTier1]\n"

struct fixture {
	char dir[64];
	struct resolver *resolver;
	struct runtime_stacks stacks;
	struct runtime_profile profiles[RUNTIME_STACK_KINDS];
};

/* An event of `kind` at the return addresses `ips` (leaf first). */
static void add_event(struct runtime_stacks *stacks, enum runtime_stack_kind kind, uint64_t weight,
		      uint64_t objects, const char *type, const uint64_t *ips, size_t depth)
{
	stacks->ips = realloc(stacks->ips, (stacks->ip_count + depth) * sizeof(*stacks->ips));
	stacks->events = realloc(stacks->events, (stacks->count + 1) * sizeof(*stacks->events));
	assert_non_null(stacks->ips);
	assert_non_null(stacks->events);
	memcpy(stacks->ips + stacks->ip_count, ips, depth * sizeof(*ips));
	stacks->events[stacks->count++] = (struct runtime_stack_event){
	    .kind = kind,
	    .time = 1000 * (stacks->count + 1),
	    .thread_id = 7,
	    .weight = weight,
	    .objects = objects,
	    .type = type ? string_table_intern(stacks->types, type) : NULL,
	    .first_ip = stacks->ip_count,
	    .depth = depth,
	};
	stacks->ip_count += depth;
}

/* Two waits in WaitOnA (3 ms for a lock thread 1234 held, 1 ms for one
 * thread 5678 held) and one at code no map names (1 ms, its holder not
 * named); three Demo.KnownException thrown in ThrowA; one allocation tick
 * of 100,000 bytes, 100 objects of System.Byte[], in Main. */
static int set_up(void **state)
{
	struct fixture *fixture = calloc(1, sizeof(*fixture));
	char path[128];
	FILE *map;
	uint64_t wait[] = {WAIT_ON_A + 0x10, MAIN + 0x20}, unknown[] = {NOT_IN_MAP},
		 thrown[] = {THROW_A + 0x8, MAIN + 0x20}, allocated[] = {MAIN + 0x40};

	assert_non_null(fixture);
	strcpy(fixture->dir, "/tmp/profcpu-runtime-profiles-XXXXXX");
	assert_non_null(mkdtemp(fixture->dir));
	snprintf(path, sizeof(path), "%s/perf-%d.map", fixture->dir, PID);
	map = fopen(path, "w");
	assert_non_null(map);
	fputs(PERF_MAP, map);
	fclose(map);
	fixture->resolver = resolver_new(&(struct resolver_config){.capture_dir = fixture->dir});
	resolver_add_mapping(fixture->resolver, PID, CODE, 0x100000, 0,
			     &(struct mapped_file){.path = "//anon"});

	fixture->stacks.types = string_table_new();
	add_event(&fixture->stacks, RUNTIME_STACK_CONTENTION, 3000000, 1, NULL, wait, 2);
	add_event(&fixture->stacks, RUNTIME_STACK_CONTENTION, 1000000, 1, NULL, wait, 2);
	add_event(&fixture->stacks, RUNTIME_STACK_CONTENTION, 1000000, 1, NULL, unknown, 1);
	fixture->stacks.events[0].lock_owner = 1234;
	fixture->stacks.events[1].lock_owner = 5678;
	for (int i = 0; i < 3; i++)
		add_event(&fixture->stacks, RUNTIME_STACK_EXCEPTION, 1, 1, "Demo.KnownException",
			  thrown, 2);
	add_event(&fixture->stacks, RUNTIME_STACK_ALLOCATION, 100000, 100, "System.Byte[]",
		  allocated, 1);
	runtime_profiles_build(&fixture->stacks, fixture->resolver, PID, NULL, fixture->profiles);
	*state = fixture;
	return 0;
}

static int tear_down(void **state)
{
	struct fixture *fixture = *state;
	char path[128];

	runtime_profiles_release(fixture->profiles);
	runtime_stacks_release(&fixture->stacks);
	resolver_free(fixture->resolver);
	snprintf(path, sizeof(path), "%s/perf-%d.map", fixture->dir, PID);
	unlink(path);
	rmdir(fixture->dir);
	free(fixture);
	return 0;
}

/* The folded stack of `profile` that `text` is, root first, or fails. */
static uint64_t folded_count(const struct profile *profile, const char *text)
{
	struct folded_profile folded;
	uint64_t count = 0;
	char line[1024];

	profile_fold(profile, &(struct fold_options){.weigh_by_period = true}, &folded);
	for (size_t i = 0; i < folded.count; i++) {
		size_t length = 0;

		for (size_t frame = 0; frame < folded.stacks[i].depth; frame++)
			length +=
			    (size_t)snprintf(line + length, sizeof(line) - length, "%s%s",
					     frame ? ";" : "", folded.stacks[i].functions[frame]);
		if (!strcmp(line, text))
			count = folded.stacks[i].count;
	}
	folded_profile_release(&folded);
	return count;
}

static void names_the_stacks_as_the_samples_are(void **state)
{
	struct fixture *fixture = *state;
	const struct runtime_profile *contention = &fixture->profiles[RUNTIME_STACK_CONTENTION];
	const struct runtime_profile *exceptions = &fixture->profiles[RUNTIME_STACK_EXCEPTION];
	const struct runtime_profile *alloc = &fixture->profiles[RUNTIME_STACK_ALLOCATION];

	assert_int_equal(contention->profile.sample_count, 3);
	/* Threads no sample named are named as their process: unknown here. */
	assert_int_equal(
	    folded_count(&contention->profile,
			 "[unknown];demo!Demo.Program::Main;demo!Demo.Program::WaitOnA"),
	    4000000);
	assert_int_equal(contention->unnamed_weight, 1000000);
	assert_int_equal(folded_count(&exceptions->profile,
				      "[unknown];demo!Demo.Program::Main;"
				      "demo!Demo.Program::ThrowA;Demo.KnownException"),
			 3);
	assert_int_equal(exceptions->unnamed_weight, 0);
	assert_int_equal(
	    folded_count(&alloc->profile, "[unknown];demo!Demo.Program::Main;System.Byte[]"),
	    100000);
	assert_int_equal(alloc->counts[0], 100);
}

static void prints_the_top_places(void **state)
{
	struct fixture *fixture = *state;
	char text[4096] = {0};
	FILE *out = fmemopen(text, sizeof(text) - 1, "w");

	assert_non_null(out);
	runtime_profiles_print(fixture->profiles, out);
	fclose(out);
	assert_non_null(strstr(text, "lock contention by where threads waited: 3 events, 20.0% "
				     "under no named frame\n"));
	assert_non_null(strstr(text, "        4.0 ms       2 waits  demo!Demo.Program::WaitOnA\n"));
	assert_non_null(strstr(text, "        1.0 ms       1 waits  (no named frame)\n"));
	assert_non_null(
	    strstr(text, "       3  Demo.KnownException  in demo!Demo.Program::ThrowA\n"));
	assert_non_null(strstr(text, "0.1 MB  System.Byte[]  in demo!Demo.Program::Main\n"));
}

/* The pprof profile `emit_pprof_events` wrote for `runtime` with
 * `values`, unpacked (free it with perftools__profiles__profile__free_unpacked). */
static Perftools__Profiles__Profile *write_and_read(const struct runtime_profile *runtime,
						    struct pprof_values values)
{
	char path[] = "/tmp/profcpu-pprof-XXXXXX";
	int fd = mkstemp(path);
	FILE *out = fdopen(fd, "w");
	uint8_t bytes[1 << 16];
	gzFile in;
	int length;

	assert_non_null(out);
	values.counts = runtime->counts;
	values.label_values = runtime->lock_owners;
	assert_int_equal(emit_pprof_events(&runtime->profile, &values, 0, out), 0);
	fclose(out);
	in = gzopen(path, "rb");
	assert_non_null(in);
	length = gzread(in, bytes, sizeof(bytes));
	gzclose(in);
	unlink(path);
	assert_true(length > 0);
	return perftools__profiles__profile__unpack(NULL, (size_t)length, bytes);
}

static const char *text_of(const Perftools__Profiles__Profile *profile, int64_t index)
{
	return profile->string_table[index];
}

static void writes_pprof_with_its_sample_types(void **state)
{
	struct fixture *fixture = *state;
	Perftools__Profiles__Profile *profile =
	    write_and_read(&fixture->profiles[RUNTIME_STACK_CONTENTION],
			   (struct pprof_values){"contentions", "count", "delay", "nanoseconds",
						 NULL, "lock_owner_tid", NULL});
	int64_t delay = 0, contentions = 0, held_by[2] = {0};

	assert_non_null(profile);
	assert_int_equal(profile->n_sample_type, 2);
	assert_string_equal(text_of(profile, profile->sample_type[0]->type), "contentions");
	assert_string_equal(text_of(profile, profile->sample_type[1]->type), "delay");
	assert_string_equal(text_of(profile, profile->sample_type[1]->unit), "nanoseconds");
	assert_string_equal(text_of(profile, profile->default_sample_type), "delay");
	/* The same stack waited for two holders: a sample each. */
	assert_int_equal(profile->n_sample, 3);
	for (size_t i = 0; i < profile->n_sample; i++) {
		const Perftools__Profiles__Sample *sample = profile->sample[i];

		contentions += sample->value[0];
		delay += sample->value[1];
		for (size_t label = 0; label < sample->n_label; label++) {
			const char *value = text_of(profile, sample->label[label]->str);

			if (strcmp(text_of(profile, sample->label[label]->key), "lock_owner_tid"))
				continue;
			held_by[!strcmp(value, "5678")] += sample->value[1];
			assert_true(!strcmp(value, "1234") || !strcmp(value, "5678"));
		}
	}
	assert_int_equal(contentions, 3);
	assert_int_equal(delay, 5000000);
	assert_int_equal(held_by[0], 3000000);
	assert_int_equal(held_by[1], 1000000);
	perftools__profiles__profile__free_unpacked(profile, NULL);

	profile = write_and_read(&fixture->profiles[RUNTIME_STACK_ALLOCATION],
				 (struct pprof_values){"alloc_objects", "count", "alloc_space",
						       "bytes", NULL, NULL, NULL});
	assert_non_null(profile);
	assert_int_equal(profile->n_sample, 1);
	assert_int_equal(profile->sample[0]->value[0], 100);
	assert_int_equal(profile->sample[0]->value[1], 100000);
	perftools__profiles__profile__free_unpacked(profile, NULL);

	profile = write_and_read(
	    &fixture->profiles[RUNTIME_STACK_EXCEPTION],
	    (struct pprof_values){"exceptions", "count", NULL, NULL, NULL, NULL, NULL});
	assert_non_null(profile);
	assert_int_equal(profile->n_sample_type, 1);
	assert_string_equal(text_of(profile, profile->sample_type[0]->type), "exceptions");
	assert_int_equal(profile->sample[0]->n_value, 1);
	assert_int_equal(profile->sample[0]->value[0], 3);
	perftools__profiles__profile__free_unpacked(profile, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(names_the_stacks_as_the_samples_are),
	    cmocka_unit_test(prints_the_top_places),
	    cmocka_unit_test(writes_pprof_with_its_sample_types),
	};

	return cmocka_run_group_tests(tests, set_up, tear_down);
}
