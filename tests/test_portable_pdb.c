/* Reading the source lines of .NET methods from portable PDBs the .NET SDK
 * writes: tests/dotnet/TwoLoops is built once with its PDB beside the
 * assembly and once with it embedded (into TEST_CACHE), and both give the
 * two loops of TwoLoops their lines, under the path of Program.cs. A
 * missing PDB, one of another build and damaged ones give no PDB (or no
 * lines), never a crash. Skipped where the SDK is not installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "assembly_pdb.h"
#include "whole_file.h"
#include "clr_metadata.h"
#include "managed_image.h"
#include "portable_pdb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char source_dir[4096], build_dir[4096];
static bool built;

/* Builds TwoLoops with each debug type into build_dir/<type>/ (once: a
 * "built" mark keeps them for later runs). */
static int build_app(void **state)
{
	const char *source = getenv("TWOLOOPS_SOURCE"), *cache = getenv("TEST_CACHE");
	char command[40000], mark[4200];

	(void)state;
	if (!source || !cache || system("command -v dotnet >/dev/null") != 0)
		return 0;
	snprintf(source_dir, sizeof(source_dir), "%s", source);
	snprintf(build_dir, sizeof(build_dir), "%s/test_portable_pdb", cache);
	snprintf(mark, sizeof(mark), "%s/built", build_dir);
	if (access(mark, F_OK) != 0) {
		snprintf(command, sizeof(command),
			 "set -e; export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1; "
			 "rm -rf '%1$s'; mkdir -p '%1$s'; cp -r '%2$s' '%1$s/src'; "
			 "for type in portable embedded; do "
			 "dotnet build -c Release -p:DebugType=$type -o '%1$s/'$type '%1$s/src' "
			 ">'%1$s/build-'$type.log 2>&1; rm -rf '%1$s/src/obj'; done; touch '%3$s'",
			 build_dir, source_dir, mark);
		if (system(command) != 0) {
			fprintf(stderr, "dotnet build of TwoLoops failed: see %s/build-*.log\n",
				build_dir);
			return -1;
		}
	}
	built = true;
	return 0;
}

static char *path_in(const char *type, const char *name)
{
	static char path[2][4400];
	static int which;

	which ^= 1;
	snprintf(path[which], sizeof(path[which]), "%s/%s/%s", build_dir, type, name);
	return path[which];
}

/* The line of Program.cs that holds `marker`. */
static uint32_t source_line_of(const char *marker)
{
	char path[4200], text[512];
	uint32_t number = 0;
	FILE *source;

	snprintf(path, sizeof(path), "%s/Program.cs", source_dir);
	source = fopen(path, "r");
	assert_non_null(source);
	while (fgets(text, sizeof(text), source)) {
		number++;
		if (strstr(text, marker))
			break;
	}
	fclose(source);
	return number;
}

/* The MethodDef token of TwoLoops in the assembly at `path`. */
static uint32_t token_of_two_loops(const char *path)
{
	struct managed_image *image = managed_image_open(-1, path, false);
	const struct clr_metadata *metadata;
	struct clr_method_def method;
	uint32_t token = 0;

	assert_non_null(image);
	metadata = managed_image_metadata(image);
	for (uint32_t row = 1; clr_metadata_method_def(metadata, row, &method); row++)
		if (!strcmp(method.name, "TwoLoops"))
			token = 0x06000000 | row;
	managed_image_free(image);
	assert_int_not_equal(token, 0);
	return token;
}

/* The lines the method's IL offsets 0..255 are on, in IL order, each once. */
static size_t lines_of(struct portable_pdb *pdb, uint32_t token, uint32_t *lines, size_t room)
{
	size_t count = 0;

	for (uint32_t il = 0; il < 256; il++) {
		struct source_line line;

		if (!portable_pdb_line(pdb, token, il, &line))
			continue;
		assert_non_null(strstr(line.file, "/Program.cs"));
		assert_int_equal(line.file[0], '/');
		if ((count == 0 || lines[count - 1] != line.number) && count < room)
			lines[count++] = line.number;
	}
	return count;
}

static void check_two_loops(const char *type)
{
	char why[512] = "";
	const char *dll = path_in(type, "twoloops.dll");
	struct portable_pdb *pdb = assembly_pdb_open(-1, dll, why, sizeof(why));
	uint32_t token = token_of_two_loops(dll), lines[16];
	uint32_t first = source_line_of("TWO THIRDS"), second = source_line_of("ONE THIRD");
	size_t count;
	bool saw_first = false;

	if (!pdb)
		fail_msg("no PDB for %s: %s", dll, why);
	count = lines_of(pdb, token, lines, 16);
	/* Only the loops' lines and the closing brace: the first loop's
	 * before the second's. */
	for (size_t i = 0; i < count; i++) {
		saw_first |= lines[i] == first;
		if (lines[i] == second)
			assert_true(saw_first);
		assert_true(lines[i] == first || lines[i] == second || lines[i] == second + 1);
	}
	assert_true(saw_first);
	assert_false(portable_pdb_line(pdb, 0x02000001, 0, &(struct source_line){0}));
	assert_false(portable_pdb_line(pdb, 0x06ffffff, 0, &(struct source_line){0}));
	portable_pdb_free(pdb);
}

static void the_pdb_beside_the_assembly_gives_each_loop_its_line(void **state)
{
	(void)state;
	if (!built)
		skip();
	check_two_loops("portable");
}

static void the_embedded_pdb_gives_each_loop_its_line(void **state)
{
	(void)state;
	if (!built)
		skip();
	assert_int_not_equal(access(path_in("embedded", "twoloops.pdb"), F_OK), 0);
	check_two_loops("embedded");
}

/* A copy of the portable build's assembly in its own folder, with `pdb`
 * (`size` bytes) beside it, or none when NULL. Returns the copy's path. */
static const char *assembly_with(const char *folder, const uint8_t *pdb, size_t size)
{
	static char dll[4500];
	char path[4400];
	size_t dll_size;
	uint8_t *bytes = read_whole(path_in("portable", "twoloops.dll"), &dll_size);

	snprintf(path, sizeof(path), "%s/%s", build_dir, folder);
	mkdir(path, 0755);
	snprintf(dll, sizeof(dll), "%s/twoloops.dll", path);
	write_whole(dll, bytes, dll_size);
	free(bytes);
	snprintf(path, sizeof(path), "%s/%s/twoloops.pdb", build_dir, folder);
	unlink(path);
	if (pdb)
		write_whole(path, pdb, size);
	return dll;
}

static void a_missing_or_foreign_pdb_is_refused_with_its_reason(void **state)
{
	char why[512] = "";
	size_t size;
	uint8_t *pdb, id[PORTABLE_PDB_ID_SIZE], *at;
	struct portable_pdb *parsed;

	(void)state;
	if (!built)
		skip();
	assert_null(assembly_pdb_open(-1, assembly_with("missing", NULL, 0), why, sizeof(why)));
	assert_non_null(strstr(why, "none beside it"));

	/* The same PDB with another id: of another build. */
	pdb = read_whole(path_in("portable", "twoloops.pdb"), &size);
	parsed = portable_pdb_parse(read_whole(path_in("portable", "twoloops.pdb"), &size), size,
				    why, sizeof(why));
	assert_non_null(parsed);
	portable_pdb_id(parsed, id);
	portable_pdb_free(parsed);
	at = memmem(pdb, size, id, sizeof(id));
	assert_non_null(at);
	at[0] ^= 0xff;
	assert_null(assembly_pdb_open(-1, assembly_with("foreign", pdb, size), why, sizeof(why)));
	assert_non_null(strstr(why, "another build"));

	/* A Windows PDB. */
	memcpy(pdb, "Microsoft C/C++ MSF 7.00\r\n", 26);
	assert_null(assembly_pdb_open(-1, assembly_with("windows", pdb, size), why, sizeof(why)));
	assert_non_null(strstr(why, "Windows PDB"));
	free(pdb);
}

/* Every prefix and many one-byte changes of the real PDB: parsed or
 * refused, and every lookup bounded (ASan checks each read). */
static void damaged_pdbs_give_no_lines_or_wrong_ones_never_a_crash(void **state)
{
	size_t size;
	uint8_t *pdb;
	uint32_t token;

	(void)state;
	if (!built)
		skip();
	token = token_of_two_loops(path_in("portable", "twoloops.dll"));
	pdb = read_whole(path_in("portable", "twoloops.pdb"), &size);
	for (size_t length = 0; length <= size; length += length < 1024 ? 1 : 7) {
		for (size_t change = 0; change < 2; change++) {
			uint8_t *copy = malloc(length ? length : 1);
			struct portable_pdb *parsed;
			char why[256];

			memcpy(copy, pdb, length);
			if (change && length)
				copy[(length * 31) % length] ^= (uint8_t)(length | 1);
			parsed = portable_pdb_parse(copy, length, why, sizeof(why));
			for (uint32_t il = 0; parsed && il < 64; il++) {
				struct source_line line;

				if (portable_pdb_line(parsed, token, il, &line))
					assert_true(strlen(line.file) < 4096);
			}
			portable_pdb_free(parsed);
		}
	}
	free(pdb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(the_pdb_beside_the_assembly_gives_each_loop_its_line),
	    cmocka_unit_test(the_embedded_pdb_gives_each_loop_its_line),
	    cmocka_unit_test(a_missing_or_foreign_pdb_is_refused_with_its_reason),
	    cmocka_unit_test(damaged_pdbs_give_no_lines_or_wrong_ones_never_a_crash),
	};

	return cmocka_run_group_tests(tests, build_app, NULL);
}
