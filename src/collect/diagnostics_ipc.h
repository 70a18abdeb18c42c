/* The message header of the .NET diagnostics IPC (dotnet/diagnostics
 * documentation/design-docs/ipc-protocol.md), shared by the commands
 * profcpu sends: little endian, like this machine. */
#ifndef PROFCPU_DIAGNOSTICS_IPC_H
#define PROFCPU_DIAGNOSTICS_IPC_H

#include <stdint.h>

struct ipc_header {
	char magic[14]; /* "DOTNET_IPC_V1\0" */
	uint16_t size;	/* of the whole message */
	uint8_t command_set, command_id;
	uint16_t reserved;
} __attribute__((packed));

#define IPC_MAGIC	"DOTNET_IPC_V1"
#define SERVER_RESPONSE 0xFF /* the command set of every reply */
#define RESPONSE_OK	0x00
#define UNKNOWN_COMMAND 0x80131385u /* the error code of a command the runtime lacks */

#endif
