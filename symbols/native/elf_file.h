/* One ELF file opened for symbols: a mapped binary or a candidate debug file.
 * Files are untrusted. They are read through libelf with read(2), never
 * mmap(2): a target that truncates its file under us would otherwise raise
 * SIGBUS in the profiler. */
#ifndef PROFCPU_ELF_FILE_H
#define PROFCPU_ELF_FILE_H

#include "build_id.h"
#include "symbol_table.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

struct load_segment {
	uint64_t file_offset, file_size, address;
};

struct elf_file {
	int fd;
	Elf *elf;
	struct build_id build_id;      /* size 0: none */
	struct debuglink debuglink;    /* name "": none */
	struct load_segment *segments; /* PT_LOAD, in header order */
	size_t segment_count;
};

/* Opens `fd` (taking ownership: it is closed on failure too) when it is a
 * regular file holding an ELF object. Returns NULL otherwise. */
struct elf_file *elf_file_open(int fd);
void elf_file_close(struct elf_file *file);

/* Converts an offset into the file, as a mapping gives it, to the virtual
 * address symbols use, through the PT_LOAD segment whose file bytes hold that
 * offset. False when none does (headers, padding between segments). */
bool load_segments_find_address(const struct load_segment *segments, size_t count,
				uint64_t file_offset, uint64_t *address);

/* Reads `size` bytes of the file's image at the virtual `address`, as its
 * PT_LOAD segments map it (code, to recognise a prologue). False where no
 * segment's file bytes hold them all. */
bool elf_file_read_at(const struct elf_file *file, uint64_t address, void *bytes, size_t size);

/* True when the file has a .symtab: its own full symbol table, as an
 * unstripped binary or a separate debug file has. */
bool elf_file_has_symtab(const struct elf_file *file);

/* True when the file has a DWARF line table (.debug_line), which source
 * lines come from: a binary built with -g, or a separate debug file. */
bool elf_file_has_line_table(const struct elf_file *file);

/* Adds the defined function symbols of the .symtab, or of the .dynsym when
 * there is no .symtab, to `table`. Returns the number added. */
size_t elf_file_read_symbols(const struct elf_file *file, struct symbol_table *table);

/* True when the file's dynamic symbol table defines `name` (a symbol it
 * exports, whatever its version). */
bool elf_file_exports(const struct elf_file *file, const char *name);

/* The same, with the symbol's value (its address in the file) and size
 * where not NULL. */
bool elf_file_export(const struct elf_file *file, const char *name, uint64_t *value,
		     uint64_t *size);

#endif
