// Decodes a profile.pb.gz with the npm pprof-format package (the decoder
// Datadog's and Pyroscope's Node.js agents use) and prints what it holds:
//   samples N          the sum of the "samples" values
//   cpu_nanoseconds N  the sum of the "cpu" values
//   top FUNCTION       the leaf function with the most samples
//   label KEY VALUE    each distinct label
// usage: node pprof_format_decode.mjs PROFILE.pb.gz
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { Profile } from "pprof-format";

const profile = Profile.decode(gunzipSync(readFileSync(process.argv[2])));
const text = (index) => profile.stringTable.strings[Number(index)];
const types = profile.sampleType.map((type) => `${text(type.type)}/${text(type.unit)}`);
const samplesIndex = types.indexOf("samples/count");
const cpuIndex = types.indexOf("cpu/nanoseconds");
const functionName = new Map(profile.function.map((f) => [Number(f.id), text(f.name)]));
const leafName = new Map(profile.location.map((l) => [Number(l.id), functionName.get(Number(l.line[0].functionId))]));

let samples = 0, cpu = 0;
const byLeaf = new Map(), labels = new Set();
for (const sample of profile.sample) {
	const count = Number(sample.value[samplesIndex]);
	samples += count;
	cpu += Number(sample.value[cpuIndex]);
	const leaf = leafName.get(Number(sample.locationId[0]));
	byLeaf.set(leaf, (byLeaf.get(leaf) || 0) + count);
	for (const label of sample.label)
		labels.add(`${text(label.key)} ${text(label.str)}`);
}
console.log(`types ${types.join(" ")}`);
console.log(`samples ${samples}`);
console.log(`cpu_nanoseconds ${cpu}`);
console.log(`top ${[...byLeaf].sort((a, b) => b[1] - a[1])[0][0]}`);
for (const label of labels)
	console.log(`label ${label}`);
