/* The nettrace reader and the runtime-events summary on a small stream
 * written here as the runtime writes it (trace header, a metadata block, a
 * stack block, an event block with compressed headers, a sequence point),
 * then on every prefix of it (a session cut short) and on every one-byte
 * corruption of it (a hostile file): it must count what it can and never
 * read outside the bytes it was given (ASan checks). Then the JIT code its
 * method events name, each range at its time (runtime_methods.h), and the
 * events that carry stacks (runtime_stacks.h): lock waits with their
 * lengths, exceptions and allocation ticks with their types, each with the
 * stack it names by id, also one written in an earlier stack block,
 * .NET 10's randomized allocation samples weighed by their chance, and
 * waits on wait handles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime_events.h"
#include "runtime_methods.h"
#include "runtime_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct stream {
	uint8_t bytes[4096];
	size_t length;
};

static void put(struct stream *stream, const void *data, size_t size)
{
	assert_true(stream->length + size <= sizeof(stream->bytes));
	if (size)
		memcpy(stream->bytes + stream->length, data, size);
	stream->length += size;
}

static void put_u8(struct stream *stream, uint8_t value)
{
	put(stream, &value, 1);
}

static void put_u16(struct stream *stream, uint16_t value)
{
	put(stream, &value, 2);
}

static void put_u32(struct stream *stream, uint32_t value)
{
	put(stream, &value, 4);
}

static void put_u64(struct stream *stream, uint64_t value)
{
	put(stream, &value, 8);
}

static void put_utf16(struct stream *stream, const char *text)
{
	do
		put_u16(stream, (uint16_t)*text);
	while (*text++);
}

/* BeginPrivateObject, the type object named `type`, and for blocks the size
 * and the padding to a 4-byte offset. Returns where the size goes. */
static size_t begin_object(struct stream *stream, const char *type)
{
	size_t size_at;

	put_u8(stream, 5);
	put_u8(stream, 5);
	put_u8(stream, 1);
	put_u32(stream, 2);
	put_u32(stream, 2);
	put_u32(stream, (uint32_t)strlen(type));
	put(stream, type, strlen(type));
	put_u8(stream, 6);
	if (!strcmp(type, "Trace"))
		return 0;
	size_at = stream->length;
	put_u32(stream, 0);
	while (stream->length % 4)
		put_u8(stream, 0);
	return size_at;
}

/* The block's size counts from after the padding to its end. */
static void end_block(struct stream *stream, size_t size_at)
{
	size_t content_start = (size_at + 4 + 3) / 4 * 4;
	uint32_t size = (uint32_t)(stream->length - content_start);

	memcpy(stream->bytes + size_at, &size, 4);
	put_u8(stream, 6);
}

/* An event blob with a compressed header: metadata id, thread, stack id,
 * timestamp difference and payload size given. */
static void put_event(struct stream *stream, uint8_t metadata_id, uint8_t thread, uint8_t stack,
		      uint8_t time_step, const uint8_t *payload, uint8_t payload_size)
{
	assert_true(payload_size < 128); /* one byte of its varint */
	put_u8(stream, 1 | 4 | 8 | 128);
	put_u8(stream, metadata_id);
	put_u8(stream, thread);
	put_u8(stream, stack);
	put_u8(stream, time_step);
	put_u8(stream, payload_size);
	put(stream, payload, payload_size);
}

static void put_block_header(struct stream *stream)
{
	put_u16(stream, 20);
	put_u16(stream, 1); /* compressed headers */
	put_u64(stream, 0);
	put_u64(stream, 0);
}

#define RUNTIME "Microsoft-Windows-DotNETRuntime"
#define RUNDOWN "Microsoft-Windows-DotNETRuntimeRundown"

/* The metadata of one event: id, provider, event id, version. */
static void put_provider_metadata(struct stream *stream, uint8_t id, const char *provider,
				  uint32_t event_id, uint32_t version)
{
	struct stream payload = {0};

	put_u32(&payload, id);
	put_utf16(&payload, provider);
	put_u32(&payload, event_id);
	put_utf16(&payload, "");
	put_u64(&payload, 1);
	put_u32(&payload, version);
	put_u32(&payload, 4);
	put_u32(&payload, 0); /* no fields described */
	put_event(stream, 0, 0, 0, 0, payload.bytes, (uint8_t)payload.length);
}

static void put_metadata(struct stream *stream, uint8_t id, uint32_t event_id, uint32_t version)
{
	put_provider_metadata(stream, id, RUNTIME, event_id, version);
}

/* The stream's start: the trace object of a session that began at tick 0,
 * 100,000 ticks a second, in process 4242. */
static void write_trace_header(struct stream *stream)
{
	put(stream, "Nettrace", 8);
	put_u32(stream, 20);
	put(stream, "!FastSerialization.1", 20);
	begin_object(stream, "Trace");
	put(stream, (uint8_t[16]){0}, 16);
	put_u64(stream, 0);	 /* the session's start */
	put_u64(stream, 100000); /* ticks per second */
	put_u32(stream, 8);
	put_u32(stream, 4242);
	put_u32(stream, 2);
	put_u32(stream, 1000);
	put_u8(stream, 6);
}

/* A sequence point and the end of the stream. */
static void write_trace_end(struct stream *stream)
{
	size_t size_at = begin_object(stream, "SPBlock");

	put_u64(stream, 5000);
	put_u32(stream, 0);
	end_block(stream, size_at);
	put_u8(stream, 1);
}

/* Two gen2 GCs, one pause of 1.2 ms on thread 7, one exception. */
static void write_trace(struct stream *stream)
{
	uint8_t gc_start[16] = {1, 0, 0, 0, 2}, suspend[8] = {1}, exception[64];
	struct stream type = {0};
	size_t size_at;

	write_trace_header(stream);
	size_at = begin_object(stream, "MetadataBlock");
	put_block_header(stream);
	put_metadata(stream, 1, 1, 2);	/* GCStart */
	put_metadata(stream, 2, 9, 1);	/* GCSuspendEEBegin */
	put_metadata(stream, 3, 3, 1);	/* GCRestartEEEnd */
	put_metadata(stream, 4, 80, 1); /* ExceptionThrown */
	end_block(stream, size_at);

	size_at = begin_object(stream, "StackBlock");
	put_u32(stream, 1);
	put_u32(stream, 1);
	put_u32(stream, 16);
	put_u64(stream, 0x1000);
	put_u64(stream, 0x2000);
	end_block(stream, size_at);

	put_utf16(&type, "Demo.KnownException");
	memcpy(exception, type.bytes, type.length);
	size_at = begin_object(stream, "EventBlock");
	put_block_header(stream);
	put_event(stream, 2, 7, 1, 100, suspend, sizeof(suspend));
	put_event(stream, 1, 7, 1, 10, gc_start, sizeof(gc_start));
	put_event(stream, 3, 7, 1, 110, NULL, 0);		    /* restart: 120 ticks after */
	put_event(stream, 1, 8, 1, 10, gc_start, sizeof(gc_start)); /* thread 8, no pause */
	put_event(stream, 4, 7, 1, 10, exception, (uint8_t)type.length);
	end_block(stream, size_at);
	write_trace_end(stream);
}

static void counts_what_the_runtime_wrote(void **state)
{
	struct stream stream = {0};
	struct runtime_trace trace;
	struct runtime_events *events = &trace.events;

	(void)state;
	write_trace(&stream);
	assert_int_equal(runtime_trace_parse(stream.bytes, stream.length, &trace), 0);
	assert_false(events->info.truncated);
	assert_int_equal(events->info.process_id, 4242);
	assert_int_equal(events->events, 5);
	assert_int_equal(events->gc_count[2], 2);
	assert_int_equal(events->gc_count[0] + events->gc_count[1], 0);
	assert_true(events->gc_pause_seconds > 0.00119 && events->gc_pause_seconds < 0.00121);
	assert_int_equal(events->exceptions.count, 1);
	assert_string_equal(events->exceptions.items[0].name, "Demo.KnownException");
	assert_int_equal(events->exceptions.items[0].count, 1);
	runtime_trace_release(&trace);
}

static void keeps_what_a_cut_stream_holds(void **state)
{
	struct stream stream = {0};

	(void)state;
	write_trace(&stream);
	for (size_t length = 0; length < stream.length; length++) {
		uint8_t *copy = malloc(length ? length : 1); /* exact size: ASan sees overreads */
		struct runtime_trace trace;
		int status;

		memcpy(copy, stream.bytes, length);
		status = runtime_trace_parse(copy, length, &trace);
		assert_true(status == -1 || trace.events.info.truncated);
		assert_true(trace.events.gc_count[2] <= 2);
		runtime_trace_release(&trace);
		free(copy);
	}
}

static void survives_every_damaged_byte(void **state)
{
	struct stream stream = {0};

	(void)state;
	write_trace(&stream);
	for (size_t at = 0; at < stream.length; at++)
		for (unsigned flip = 1; flip < 256; flip <<= 1) {
			uint8_t *copy = malloc(stream.length);
			struct runtime_trace trace;

			memcpy(copy, stream.bytes, stream.length);
			copy[at] ^= (uint8_t)flip;
			runtime_trace_parse(copy, stream.length, &trace);
			runtime_trace_release(&trace);
			free(copy);
		}
}

static void refuses_what_is_not_nettrace(void **state)
{
	static const uint8_t text[] = "Nettrac but not quite";
	struct runtime_trace trace;

	(void)state;
	assert_int_equal(runtime_trace_parse(text, sizeof(text), &trace), -1);
	assert_non_null(strstr(trace.why, "not a nettrace"));
	runtime_trace_release(&trace);
}

/* A method event's payload: MethodID, ModuleID, start, size, token, flags
 * (the tier in bits 7 to 9), namespace, name, signature, ClrInstanceID. */
static void put_method_event(struct stream *stream, uint8_t metadata_id, uint8_t time_step,
			     uint64_t start, uint32_t size, uint32_t tier, const char *name,
			     const char *signature)
{
	struct stream payload = {0};

	put_u64(&payload, 1);
	put_u64(&payload, 0x77);
	put_u64(&payload, start);
	put_u32(&payload, size);
	put_u32(&payload, 0x06000001);
	put_u32(&payload, 0x8 | tier << 7);
	put_utf16(&payload, "Demo.Program");
	put_utf16(&payload, name);
	put_utf16(&payload, signature);
	put_u16(&payload, 0);
	put_event(stream, metadata_id, 1, 0, time_step, payload.bytes, (uint8_t)payload.length);
}

/* At 0x5000 the method Old is loaded (tick 100) and unloaded (tick 200),
 * then New takes its place (tick 300); the rundown (ticks 400 and 500)
 * lists New and Steady, which never loaded while the session ran, and the
 * module both live in. */
static void write_method_trace(struct stream *stream)
{
	struct stream module = {0};
	size_t size_at;

	write_trace_header(stream);
	size_at = begin_object(stream, "MetadataBlock");
	put_block_header(stream);
	put_provider_metadata(stream, 1, RUNTIME, 143, 1); /* MethodLoadVerbose */
	put_provider_metadata(stream, 2, RUNTIME, 144, 1); /* MethodUnloadVerbose */
	put_provider_metadata(stream, 3, RUNDOWN, 144, 1); /* MethodDCEndVerbose */
	put_provider_metadata(stream, 4, RUNDOWN, 154, 2); /* ModuleDCEnd */
	end_block(stream, size_at);

	put_u64(&module, 0x77);
	put_u64(&module, 0x88);
	put_u32(&module, 0);
	put_u32(&module, 0);
	put_utf16(&module, "/app/demo.dll");
	put_utf16(&module, "");
	size_at = begin_object(stream, "EventBlock");
	put_block_header(stream);
	put_method_event(stream, 1, 100, 0x5000, 0x100, 3, "Old", "void  ()");
	put_method_event(stream, 2, 100, 0x5000, 0x100, 3, "Old", "void  ()");
	put_method_event(stream, 1, 100, 0x5000, 0x80, 4, "New", "int32  (int32)");
	put_method_event(stream, 3, 100, 0x5000, 0x80, 4, "New", "int32  (int32)");
	put_method_event(stream, 3, 100, 0x9000, 0x40, 0, "Steady", "instance void  (string)");
	put_event(stream, 4, 1, 0, 1, module.bytes, (uint8_t)module.length);
	end_block(stream, size_at);
	write_trace_end(stream);
}

/* The name `ranges` give `address` at `tick` of the stream, or NULL. */
static const char *name_at(struct code_ranges *ranges, uint64_t address, uint64_t tick)
{
	struct code_range found;

	return code_ranges_lookup(ranges, address, tick * 10000, &found) ? found.name : NULL;
}

static void names_code_by_its_method_events(void **state)
{
	char path[] = "/tmp/profcpu-methods-XXXXXX";
	struct stream stream = {0};
	struct runtime_trace trace;
	struct code_ranges *ranges;
	int fd = mkstemp(path);

	(void)state;
	write_method_trace(&stream);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, stream.bytes, stream.length), (ssize_t)stream.length);
	close(fd);
	/* One reading of the file gives the methods and the events. */
	assert_int_equal(runtime_trace_read(path, &trace), 0);
	unlink(path);
	ranges = trace.methods;
	assert_non_null(ranges);
	assert_int_equal(trace.process_id, 4242);
	assert_true(trace.events.events > 0);
	/* In the perf map's form, with the tier; valid from its load. */
	assert_string_equal(name_at(ranges, 0x5010, 150),
			    "void [demo] Demo.Program::Old()[QuickJitted]");
	assert_null(name_at(ranges, 0x5010, 250)); /* unloaded */
	assert_string_equal(name_at(ranges, 0x5010, 350),
			    "int32 [demo] Demo.Program::New(int32)[OptimizedTier1]");
	/* Past New's end, Old's bytes are gone too. */
	assert_null(name_at(ranges, 0x50f0, 350));
	/* The rundown names code that was there all along. */
	assert_string_equal(name_at(ranges, 0x9010, 50),
			    "instance void [demo] Demo.Program::Steady(string)");
	runtime_trace_release(&trace);
}

/* Parses `stream` with each bit of each byte flipped in turn, and checks
 * what it gives: every stack within the addresses read. */
static void parse_every_damaged_byte(const struct stream *stream)
{
	for (size_t at = 0; at < stream->length; at++)
		for (unsigned flip = 1; flip < 256; flip <<= 1) {
			uint8_t *copy = malloc(stream->length);
			struct runtime_trace trace;

			memcpy(copy, stream->bytes, stream->length);
			copy[at] ^= (uint8_t)flip;
			runtime_trace_parse(copy, stream->length, &trace);
			for (size_t i = 0; i < trace.stacks.count; i++)
				assert_true(trace.stacks.events[i].first_ip +
						trace.stacks.events[i].depth <=
					    trace.stacks.ip_count);
			runtime_trace_release(&trace);
			free(copy);
		}
}

static void survives_every_damaged_method_byte(void **state)
{
	struct stream stream = {0};

	(void)state;
	write_method_trace(&stream);
	parse_every_damaged_byte(&stream);
}

/* A stack block of one stack, id `id`, of `depth` addresses from `first`. */
static void write_stack_block(struct stream *stream, uint32_t id, size_t depth, uint64_t first)
{
	size_t size_at = begin_object(stream, "StackBlock");

	put_u32(stream, id);
	put_u32(stream, 1);
	put_u32(stream, (uint32_t)(depth * 8));
	for (size_t i = 0; i < depth; i++)
		put_u64(stream, first + i * 0x100);
	end_block(stream, size_at);
}

/* Thread 7 waits 5 ms (ContentionStop_V1's DurationNs) at stack 1 for a
 * lock thread 1234 holds (ContentionStart_V2's LockOwnerThreadID), thread
 * 8 waits 120 ticks (1.2 ms: a ContentionStop without one) at stack 2 for
 * a lock its ContentionStart_V1 does not say the holder of, an
 * exception is thrown at stack 1 and 250,000 bytes of System.Byte[] are
 * allocated at stack 2. Stack 1 is in the first stack block, stack 2 in
 * the second: the events after both name stack 1 by its id. Thread 9's
 * wait has no end. */
static void write_stack_trace(struct stream *stream)
{
	uint8_t start[3] = {0}, stop[11] = {0}, exception[64], tick[96];
	double five_ms = 5e6;
	struct stream type = {0}, allocation = {0}, owned = {0};
	size_t size_at;

	write_trace_header(stream);
	size_at = begin_object(stream, "MetadataBlock");
	put_block_header(stream);
	put_metadata(stream, 1, 81, 1); /* ContentionStart */
	put_metadata(stream, 2, 91, 1); /* ContentionStop_V1 */
	put_metadata(stream, 3, 91, 0); /* ContentionStop */
	put_metadata(stream, 4, 80, 1); /* ExceptionThrown_V1 */
	put_metadata(stream, 5, 10, 4); /* GCAllocationTick_V4 */
	put_metadata(stream, 6, 81, 2); /* ContentionStart_V2 */
	end_block(stream, size_at);
	write_stack_block(stream, 1, 3, 0x7f0000001000);
	write_stack_block(stream, 2, 2, 0x7f0000005000);

	memcpy(stop + 3, &five_ms, sizeof(five_ms));
	put_utf16(&type, "Demo.KnownException");
	memcpy(exception, type.bytes, type.length);
	put_u32(&allocation, 100000);
	put_u32(&allocation, 0);
	put_u16(&allocation, 0);
	put_u64(&allocation, 250000);
	put_u64(&allocation, 0x1234); /* TypeID */
	put_utf16(&allocation, "System.Byte[]");
	put_u32(&allocation, 0);      /* HeapIndex */
	put_u64(&allocation, 0x5678); /* Address */
	put_u64(&allocation, 1024);   /* ObjectSize */
	memcpy(tick, allocation.bytes, allocation.length);
	put_u8(&owned, 0);	 /* ContentionFlags: managed */
	put_u16(&owned, 0);	 /* ClrInstanceID */
	put_u64(&owned, 0x9000); /* LockID */
	put_u64(&owned, 0x9100); /* AssociatedObjectID */
	put_u64(&owned, 1234);	 /* LockOwnerThreadID */
	size_at = begin_object(stream, "EventBlock");
	put_block_header(stream);
	put_event(stream, 6, 7, 1, 100, owned.bytes, (uint8_t)owned.length);
	put_event(stream, 2, 7, 0, 100, stop, sizeof(stop));
	put_event(stream, 1, 8, 2, 100, start, sizeof(start));
	put_event(stream, 3, 8, 0, 120, NULL, 0);
	put_event(stream, 3, 8, 0, 100, NULL, 0); /* no wait to end */
	put_event(stream, 4, 7, 1, 10, exception, (uint8_t)type.length);
	put_event(stream, 5, 8, 2, 10, tick, (uint8_t)allocation.length);
	put_event(stream, 1, 9, 1, 10, start, sizeof(start));
	end_block(stream, size_at);
	write_trace_end(stream);
}

static void keeps_the_stacks_of_waits_exceptions_and_allocations(void **state)
{
	struct stream stream = {0};
	struct runtime_trace trace;
	const struct runtime_stacks *stacks = &trace.stacks;
	const struct runtime_stack_event *event;

	(void)state;
	write_stack_trace(&stream);
	if (runtime_trace_parse(stream.bytes, stream.length, &trace) != 0)
		fail_msg("%s", trace.why);
	assert_int_equal(stacks->count, 4);
	assert_int_equal(stacks->seen[RUNTIME_STACK_CONTENTION], 2);
	assert_int_equal(stacks->seen_weight[RUNTIME_STACK_CONTENTION], 6200000);
	assert_int_equal(trace.events.contentions, 2);
	assert_true(trace.events.contention_seconds > 0.00619 &&
		    trace.events.contention_seconds < 0.00621);

	event = &stacks->events[0];
	assert_int_equal(event->kind, RUNTIME_STACK_CONTENTION);
	assert_int_equal(event->thread_id, 7);
	assert_int_equal(event->weight, 5000000);
	assert_int_equal(event->time, 1000000); /* tick 100 at 100,000 a second */
	assert_int_equal(event->depth, 3);
	assert_int_equal(stacks->ips[event->first_ip], 0x7f0000001000);
	assert_int_equal(stacks->ips[event->first_ip + 2], 0x7f0000001200);
	assert_int_equal(event->lock_owner, 1234);

	event = &stacks->events[1];
	assert_int_equal(event->kind, RUNTIME_STACK_CONTENTION);
	assert_int_equal(event->weight, 1200000);
	assert_int_equal(event->lock_owner, 0);
	assert_int_equal(event->depth, 2);
	assert_int_equal(stacks->ips[event->first_ip], 0x7f0000005000);

	/* Stack 1 came before the stack block that the previous events read. */
	event = &stacks->events[2];
	assert_int_equal(event->kind, RUNTIME_STACK_EXCEPTION);
	assert_string_equal(event->type, "Demo.KnownException");
	assert_int_equal(event->weight, 1);
	assert_int_equal(event->depth, 3);
	assert_int_equal(stacks->ips[event->first_ip], 0x7f0000001000);

	event = &stacks->events[3];
	assert_int_equal(event->kind, RUNTIME_STACK_ALLOCATION);
	assert_string_equal(event->type, "System.Byte[]");
	assert_int_equal(event->weight, 250000);
	assert_int_equal(event->objects, 244); /* 250,000 bytes of 1,024-byte arrays */
	assert_int_equal(event->depth, 2);
	runtime_trace_release(&trace);
}

/* The summary names the thread that held the lock, heaviest first, and
 * the waits whose event did not name one. */
static void prints_the_threads_that_held_the_locks(void **state)
{
	struct stream stream = {0};
	struct runtime_trace trace;
	char text[4096] = {0};
	FILE *out = fmemopen(text, sizeof(text) - 1, "w");

	(void)state;
	assert_non_null(out);
	write_stack_trace(&stream);
	if (runtime_trace_parse(stream.bytes, stream.length, &trace) != 0)
		fail_msg("%s", trace.why);
	assert_int_equal(trace.events.lock_owners.count, 2);
	runtime_events_print(&trace.events, out);
	fclose(out);
	assert_non_null(strstr(text, "  lock contention: 2 waits, 6.2 ms in total\n"
				     "    by the thread that held the lock:\n"
				     "           5.0 ms       1 waits  tid 1234\n"
				     "           1.2 ms       1 waits  (not named)\n"));
	runtime_trace_release(&trace);
}

/* .NET 10's AllocationSampled: a 1,024-byte System.Byte[] sampled at its
 * 100th byte stands for 1 / (1 - (1 - 1/102400)^1024) = 100.5 objects and
 * 102,912 bytes; beside it, the tick's bytes are not counted again. */
static void weighs_randomized_allocation_samples(void **state)
{
	struct stream stream = {0}, sample = {0}, tick = {0};
	struct runtime_trace trace;
	const struct runtime_stack_event *event;
	size_t size_at;

	(void)state;
	write_trace_header(&stream);
	size_at = begin_object(&stream, "MetadataBlock");
	put_block_header(&stream);
	put_metadata(&stream, 1, 303, 0); /* AllocationSampled */
	put_metadata(&stream, 2, 10, 4);  /* GCAllocationTick_V4 */
	end_block(&stream, size_at);
	write_stack_block(&stream, 1, 2, 0x7f0000001000);

	put_u32(&sample, 0);
	put_u16(&sample, 0);
	put_u64(&sample, 0x1234); /* TypeID */
	put_utf16(&sample, "System.Byte[]");
	put_u64(&sample, 0x5678); /* Address */
	put_u64(&sample, 1024);	  /* ObjectSize */
	put_u64(&sample, 100);	  /* SampledByteOffset */
	put_u32(&tick, 100000);
	put_u32(&tick, 0);
	put_u16(&tick, 0);
	put_u64(&tick, 100000);
	put_u64(&tick, 0x1234);
	put_utf16(&tick, "System.Byte[]");
	put_u32(&tick, 0);
	size_at = begin_object(&stream, "EventBlock");
	put_block_header(&stream);
	put_event(&stream, 2, 7, 1, 10, tick.bytes, (uint8_t)tick.length);
	put_event(&stream, 1, 7, 1, 10, sample.bytes, (uint8_t)sample.length);
	end_block(&stream, size_at);
	write_trace_end(&stream);

	assert_int_equal(runtime_trace_parse(stream.bytes, stream.length, &trace), 0);
	assert_true(trace.stacks.allocations_sampled);
	assert_int_equal(trace.stacks.count, 1);
	event = &trace.stacks.events[0];
	assert_true(event->sampled);
	assert_string_equal(event->type, "System.Byte[]");
	assert_true(event->weight > 102900 && event->weight < 102925);
	assert_int_equal(event->objects, 101);
	assert_int_equal(event->depth, 2);
	runtime_trace_release(&trace);
}

/* WaitHandleWaitStart on thread 7, its Stop 120 ticks (1.2 ms) later;
 * thread 8's wait starts then and is still going on 100 ticks later, at
 * the trace's last event: it counts 1 ms. */
static void times_waits_on_wait_handles(void **state)
{
	struct stream stream = {0};
	uint8_t start[11] = {1}; /* WaitSource MonitorWait, AssociatedObjectID, ClrInstanceID */
	uint8_t stop[2] = {0};
	struct runtime_trace trace;
	size_t size_at;

	(void)state;
	write_trace_header(&stream);
	size_at = begin_object(&stream, "MetadataBlock");
	put_block_header(&stream);
	put_metadata(&stream, 1, 301, 0); /* WaitHandleWaitStart */
	put_metadata(&stream, 2, 302, 0); /* WaitHandleWaitStop */
	end_block(&stream, size_at);
	write_stack_block(&stream, 1, 2, 0x7f0000001000);
	size_at = begin_object(&stream, "EventBlock");
	put_block_header(&stream);
	put_event(&stream, 1, 7, 1, 10, start, sizeof(start));
	put_event(&stream, 2, 7, 0, 120, stop, sizeof(stop));
	put_event(&stream, 1, 8, 1, 0, start, sizeof(start));
	put_event(&stream, 2, 7, 0, 100, stop, sizeof(stop)); /* no wait of 7's to end */
	end_block(&stream, size_at);
	write_trace_end(&stream);

	assert_int_equal(runtime_trace_parse(stream.bytes, stream.length, &trace), 0);
	assert_int_equal(trace.stacks.count, 2);
	assert_int_equal(trace.stacks.events[0].kind, RUNTIME_STACK_WAIT);
	assert_int_equal(trace.stacks.events[0].weight, 1200000);
	assert_int_equal(trace.stacks.events[0].depth, 2);
	assert_int_equal(trace.stacks.events[1].thread_id, 8);
	assert_int_equal(trace.stacks.events[1].weight, 1000000);
	assert_int_equal(trace.stacks.seen[RUNTIME_STACK_WAIT], 2);
	assert_int_equal(trace.events.contentions, 0); /* not a lock's */
	runtime_trace_release(&trace);
}

static void survives_every_damaged_stack_byte(void **state)
{
	struct stream stream = {0};

	(void)state;
	write_stack_trace(&stream);
	parse_every_damaged_byte(&stream);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(counts_what_the_runtime_wrote),
	    cmocka_unit_test(keeps_what_a_cut_stream_holds),
	    cmocka_unit_test(survives_every_damaged_byte),
	    cmocka_unit_test(refuses_what_is_not_nettrace),
	    cmocka_unit_test(names_code_by_its_method_events),
	    cmocka_unit_test(survives_every_damaged_method_byte),
	    cmocka_unit_test(keeps_the_stacks_of_waits_exceptions_and_allocations),
	    cmocka_unit_test(prints_the_threads_that_held_the_locks),
	    cmocka_unit_test(weighs_randomized_allocation_samples),
	    cmocka_unit_test(times_waits_on_wait_handles),
	    cmocka_unit_test(survives_every_damaged_stack_byte),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
