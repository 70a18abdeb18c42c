// Decodes the common and resource parts of OTLP ExportProfilesServiceRequests
// with the decoder the OpenTelemetry JS SDK generated from opentelemetry-proto
// (@opentelemetry/otlp-transformer's generated/root.js): each ResourceProfiles'
// Resource and its ScopeProfiles' InstrumentationScope, and each
// KeyValueAndUnit's AnyValue in the dictionary's attribute_table. No package
// reachable here ships profiles/v1development (see tests/agent_otlp.sh): only
// the path down to those messages is walked by field number, with the same
// package's protobufjs Reader (every length checked; the wire type of each
// field walked into too, which the generated decoders do not check: the
// test compares what they read with its own decoding). Prints one JSON line
// a request:
//   {"file": PATH, "resources": [{"attributes": {KEY: VALUE}, "scope": {"name", "version"}}],
//    "attribute_values": [VALUE]}
// A value is a string, or a number for an int. Fails on anything the decoder
// refuses (Message.verify) or cannot read.
// usage: node otlp_transformer_decode.mjs REQUEST.otlp...
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const root = require("@opentelemetry/otlp-transformer/build/src/generated/root.js");
const { Reader } = require("protobufjs/minimal");
const { Resource } = root.opentelemetry.proto.resource.v1;
const { InstrumentationScope, AnyValue } = root.opentelemetry.proto.common.v1;
const LENGTH_DELIMITED = 2;

// The length-delimited fields numbered `number` of the message `bytes`.
function fieldsNumbered(bytes, number) {
	const reader = Reader.create(bytes), found = [];
	while (reader.pos < reader.len) {
		const tag = reader.uint32();
		if (tag >>> 3 === number) {
			if ((tag & 7) !== LENGTH_DELIMITED)
				throw new Error(`field ${number} is not length-delimited`);
			found.push(reader.bytes());
		} else {
			reader.skipType(tag & 7);
		}
	}
	return found;
}

// The message `bytes` decoded as `type`, checked, as a plain object.
function decode(type, bytes) {
	const message = type.decode(bytes);
	const problem = type.verify(message);
	if (problem)
		throw new Error(`${type.name}: ${problem}`);
	return type.toObject(message, { longs: Number, defaults: false });
}

function value(any) {
	if ("stringValue" in any) return any.stringValue;
	if ("intValue" in any) return any.intValue;
	throw new Error(`an AnyValue neither string nor int: ${JSON.stringify(any)}`);
}

for (const file of process.argv.slice(2)) {
	const request = readFileSync(file);
	const resources = fieldsNumbered(request, 1).map((resourceProfiles) => {
		const resource = decode(Resource, fieldsNumbered(resourceProfiles, 1)[0]);
		const scopes = fieldsNumbered(resourceProfiles, 2).map((scopeProfiles) =>
			decode(InstrumentationScope, fieldsNumbered(scopeProfiles, 1)[0]));
		if (scopes.length !== 1)
			throw new Error(`${scopes.length} ScopeProfiles in a ResourceProfiles`);
		const attributes = {};
		for (const pair of resource.attributes || [])
			attributes[pair.key] = value(pair.value);
		return { attributes, scope: { name: scopes[0].name, version: scopes[0].version } };
	});
	const dictionary = fieldsNumbered(request, 2);
	if (dictionary.length !== 1)
		throw new Error(`${dictionary.length} dictionaries`);
	// Entry 0 is the zero value: a KeyValueAndUnit with no value.
	const attributeValues = fieldsNumbered(dictionary[0], 6).slice(1).map((entry) =>
		value(decode(AnyValue, fieldsNumbered(entry, 2)[0])));
	console.log(JSON.stringify({ file, resources, attribute_values: attributeValues }));
}
