/* libFuzzer entry point: the bytes are a portable PDB, or a .NET assembly
 * (starting "MZ") whose PDB is embedded in it, as a target's files may hold
 * them. Reads the PDB (assembly_pdb.h inflates an embedded one) and looks
 * up the lines of IL offsets in the first methods, as the resolver does
 * for sampled JIT code (portable_pdb.h). Any crash, leak or out-of-bounds
 * read is a bug. Seeded with the PDB of tests/dotnet/TwoLoops and its
 * assembly built with the PDB embedded (fuzz/make-seeds). */
#include "assembly_pdb.h"
#include "fuzz_input.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define METHODS	   16
#define IL_OFFSETS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct portable_pdb *read_input(const uint8_t *data, size_t size)
{
	char why[512], path[32];
	struct portable_pdb *pdb;
	uint8_t *copy;
	int fd;

	if (size >= 2 && !memcmp(data, "MZ", 2)) {
		fd = fuzz_input_file(data, size, path);
		pdb = assembly_pdb_open(-1, path, why, sizeof(why));
		close(fd);
		return pdb;
	}
	if (!(copy = malloc(size ? size : 1)))
		return NULL;
	memcpy(copy, data, size);
	return portable_pdb_parse(copy, size, why, sizeof(why)); /* takes the copy */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct portable_pdb *pdb = read_input(data, size);
	struct source_line line;

	if (!pdb)
		return 0;
	for (uint32_t method = 1; method <= METHODS; method++)
		for (uint32_t il = 0; il < IL_OFFSETS; il++)
			if (portable_pdb_line(pdb, 0x06000000 | method, il * 3, &line))
				(void)strlen(line.file);
	portable_pdb_free(pdb);
	return 0;
}
