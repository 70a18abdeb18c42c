// speedscope's own importer, in Debian's Chromium, opens three outputs of a
// real capture: perf_script.out (its Linux perf importer), folded_stacks.out
// (its collapsed-stack importer) and speedscope.json (its own format). Each
// file is opened the way `speedscope FILE` opens one (#localProfilePath and
// speedscope.loadFileFromBase64). Checked: the number of samples its
// importer added (as many as folded_stacks.out counts) and, in what its
// Export button writes, a named frame.
//
// speedscope keeps its profile inside its bundle, and its export merges
// samples into open/close events, so a copy of the bundle counts samples
// where its profile builder receives them: a counter at the entry of
// appendSampleWithWeight and appendSampleWithTimestamp, nothing else
// changed (the bundle of the pinned version; the test fails if they move).
//
// usage: node speedscope_import.mjs CAPTURE_DIR FRAME_REGEX
// Exit status: 0 passed, 1 failed, 77 skipped.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const SKIP = 77;
const chromiumPath = "/usr/bin/chromium";
const here = dirname(fileURLToPath(import.meta.url));
const captureDir = resolve(process.argv[2]);
const framePattern = new RegExp(process.argv[3]);

let failures = 0;
function check(condition, what, detail = "") {
	console.log(`${condition ? "ok  " : "FAIL"} ${what}${detail ? ": " + detail : ""}`);
	if (!condition)
		failures++;
}

if (!existsSync(chromiumPath)) {
	console.log(`SKIP: ${chromiumPath} is missing (scripts/install-deps installs Debian's chromium)`);
	process.exit(SKIP);
}
if (!existsSync(join(here, "node_modules", "speedscope")))
	execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: here, stdio: "inherit" });
const { chromium } = await import("playwright-core");

// The samples of folded_stacks.out: what every importer must find.
const expected = readFileSync(join(captureDir, "folded_stacks.out"), "utf8").split("\n")
	.filter((line) => line.trim())
	.reduce((total, line) => total + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);

const work = mkdtempSync(join(tmpdir(), "speedscope-"));
cpSync(join(here, "node_modules", "speedscope", "dist", "release"), join(work, "app"), { recursive: true });
const app = join(work, "app", "index.html");
const bundleName = readdirSync(join(work, "app")).find((name) => /^speedscope-.*\.js$/.test(name));
const hooks = [
	["appendSampleWithWeight(n,a){if(a===0)return;",
		"appendSampleWithWeight(n,a){if(a===0)return;if(n.length){globalThis.countedWeight+=a;globalThis.countedCalls++}"],
	["appendSampleWithTimestamp(n,a){", "appendSampleWithTimestamp(n,a){globalThis.countedTimestamps++;"],
];
let bundle = readFileSync(join(work, "app", bundleName), "utf8");
for (const [from, to] of hooks) {
	if (!bundle.includes(from)) {
		console.log(`FAIL: speedscope's bundle has no ${from}: update the hooks for this version`);
		process.exit(1);
	}
	bundle = bundle.replace(from, to);
}
writeFileSync(join(work, "app", bundleName), bundle);

// How each importer adds a sample: the perf importer by its timestamp,
// the collapsed-stack importer with its count as weight, speedscope's own
// format one entry per sample (and empty stacks for idle time).
const countOf = {
	"perf_script.out": (counts) => counts.countedTimestamps,
	"folded_stacks.out": (counts) => counts.countedWeight,
	"speedscope.json": (counts) => counts.countedCalls,
};

function frameNames(exported) {
	return exported.shared.frames.map((frame) => frame.name);
}
const browser = await chromium.launch({ executablePath: chromiumPath, args: ["--allow-file-access-from-files"] });
try {
	for (const file of ["perf_script.out", "folded_stacks.out", "speedscope.json"]) {
		const page = await browser.newPage({ acceptDownloads: true });
		const errors = [];
		page.on("pageerror", (error) => errors.push(error.message));
		page.on("dialog", (dialog) => { errors.push(dialog.message()); dialog.dismiss(); });
		await page.addInitScript(() => {
			globalThis.countedWeight = globalThis.countedCalls = globalThis.countedTimestamps = 0;
		});
		const loader = join(work, `${file}.js`);
		const base64 = readFileSync(join(captureDir, file)).toString("base64");
		writeFileSync(loader, `speedscope.loadFileFromBase64(${JSON.stringify(file)}, "${base64}")\n`);
		await page.goto(`file://${app}#localProfilePath=${encodeURIComponent(loader)}`);
		const exportButton = page.getByText("Export", { exact: false });
		try {
			await exportButton.first().waitFor({ timeout: 30000 });
		} catch {
			check(false, `speedscope opens ${file}`, errors.join("; ") || "no Export button");
			await page.close();
			continue;
		}
		const [download] = await Promise.all([page.waitForEvent("download"), exportButton.first().click()]);
		const exported = JSON.parse(readFileSync(await download.path(), "utf8"));
		const samples = countOf[file](await page.evaluate(() => ({
			countedWeight: globalThis.countedWeight, countedCalls: globalThis.countedCalls,
			countedTimestamps: globalThis.countedTimestamps,
		})));
		const names = frameNames(exported);
		check(errors.length === 0, `speedscope opens ${file} without errors`, errors.join("; "));
		check(samples === expected, `${file}: speedscope's importer adds ${samples} samples`,
			`folded_stacks.out has ${expected}`);
		const named = names.find((name) => framePattern.test(name));
		check(named !== undefined, `${file}: a frame matches /${framePattern.source}/`,
			named || names.slice(0, 5).join(" | "));
		console.log(`     ${file}: ${exported.profiles.length} profiles, ${names.length} frames`);
		await page.close();
	}
} finally {
	await browser.close();
	rmSync(work, { recursive: true, force: true });
}
if (failures) {
	console.log(`${failures} check(s) failed`);
	process.exit(1);
}
console.log("all checks passed");
