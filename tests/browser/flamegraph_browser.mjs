// Opens flame graphs made by `profcpu flamegraph` in headless Chromium and
// uses them as a person would: hover, click to zoom, reset, search with a
// regex, toggle case, reload from the URL. Expected numbers are computed
// here from the folded file, independently of the C code.
//
// usage: node flamegraph_browser.mjs PROFCPU SAMPLE.folded OUTPUT_DIR WORKLOAD
// WORKLOAD is a busy program that `profcpu collect` profiles, so that the
// flame graph of a real capture is used too.
// Exit status: 0 passed, 1 failed, 77 skipped (Chromium missing or unable
// to start). Screenshots are written to OUTPUT_DIR.
import { execFileSync, spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const SKIP = 77;
const chromiumPath = "/usr/bin/chromium";
const here = dirname(fileURLToPath(import.meta.url));
const [profcpu, samplePath, outputDir, workload] = process.argv.slice(2).map((p) => resolve(p));

let failures = 0;
function check(condition, what, detail = "") {
	console.log(`${condition ? "ok  " : "FAIL"} ${what}${detail ? ": " + detail : ""}`);
	if (!condition)
		failures++;
}

function skip(reason) {
	console.log(`SKIP: ${reason}`);
	process.exit(SKIP);
}

if (!existsSync(chromiumPath))
	skip(`${chromiumPath} is missing (scripts/install-deps installs Debian's chromium)`);
if (!existsSync(join(here, "node_modules", "playwright-core"))) {
	try {
		execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: here, stdio: "inherit" });
	} catch (error) {
		skip(`npm ci failed in ${here}: ${error.message}`);
	}
}
const { chromium } = await import("playwright-core");

// --- Expected values, from the folded text -------------------------------
function readFolded(path) {
	return readFileSync(path, "utf8").split("\n").filter((l) => l.trim())
		.map((line) => {
			const cut = line.lastIndexOf(" ");
			return { frames: line.slice(0, cut).split(";"), count: Number(line.slice(cut + 1)) };
		});
}
const sum = (list) => list.reduce((total, s) => total + s.count, 0);
const stacks = readFolded(samplePath);
const total = sum(stacks);
const display = (name) => name.replace(/_\[[kji]\]$/, "");
// Samples under a frame named `name` at `depth` (root frame "all" is depth 0).
function samplesUnder(path) {
	return stacks.filter((s) => path.every((name, i) => s.frames[i] === name))
		.reduce((sum, s) => sum + s.count, 0);
}
function matchedShare(regex, of = stacks) {
	const hit = of.filter((s) => s.frames.some((f) => regex.test(display(f))));
	return (100 * sum(hit)) / sum(of);
}

// Deep .NET-like folded stacks of about `bytes`, written in pieces: 20 to 60
// frames of managed methods under a thread pool dispatcher, random counts.
function writeDeepFolded(path, bytes) {
	let seed = 7, written = 0, chunk = [];
	const random = (n) => { // mulberry32: well mixed, so stacks spread as in real captures
		seed = (seed + 0x6d2b79f5) | 0;
		let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
		t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
		return ((t ^ (t >>> 14)) >>> 0) % n;
	};
	writeFileSync(path, "");
	while (written < bytes) {
		const frames = ["dotnet", "[unknown]", "System.Threading.ThreadPoolWorkQueue::Dispatch()[OptimizedTier1]"];
		const depth = 20 + random(40);
		for (let d = 0; d < depth; d++)
			frames.push(`void [App.Module${d % 17}] App.Namespace${d % 5}.Type${random(6 + d)}::` +
				`Method${random(3 + (d >> 1))}(int32,string)[OptimizedTier1]`);
		const line = `${frames.join(";")} ${1 + random(50)}\n`;
		chunk.push(line);
		written += line.length;
		if (chunk.length === 2000) {
			appendFileSync(path, chunk.join(""));
			chunk = [];
		}
	}
	appendFileSync(path, chunk.join(""));
}

// --- Graphs ----------------------------------------------------------------
mkdirSync(outputDir, { recursive: true });
const svgPath = join(outputDir, "dotnet.svg");
execFileSync(profcpu, ["flamegraph", "--title", "demo CPU", "--subtitle", "dotnet demo.dll, 30 s",
	"-i", samplePath, "-o", svgPath]);
const diffInput = join(outputDir, "after.folded");
writeFileSync(diffInput, stacks.map((s) => {
	const leaf = s.frames[s.frames.length - 1];
	const factor = leaf.includes("IndexOf") ? 0.3 : leaf.includes("mark_object") ? 2 : 1;
	return `${s.frames.join(";")} ${Math.round(s.count * factor)}`;
}).join("\n") + "\n");
const diffFolded = execFileSync(profcpu, ["diff", samplePath, diffInput]);
const diffSvg = join(outputDir, "dotnet-diff.svg");
execFileSync(profcpu, ["flamegraph", "-o", diffSvg], { input: diffFolded });

// A real capture: the flame graph `profcpu collect` draws of a busy program.
const captureDir = join(outputDir, "capture");
rmSync(captureDir, { recursive: true, force: true });
const busy = spawn(workload, ["30"], { stdio: "ignore" });
try {
	execFileSync(profcpu, ["collect", "-pid", String(busy.pid), "-duration", "2", "-F", "499",
		"-o", captureDir], { stdio: "inherit" });
} finally {
	busy.kill("SIGKILL");
}
const captured = readFolded(join(captureDir, "folded_stacks.out"));

const userDataDir = mkdtempSync(join(tmpdir(), "profcpu-chromium-"));
let context;
try {
	context = await chromium.launchPersistentContext(userDataDir, {
		executablePath: chromiumPath,
		headless: true,
		args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync"],
		viewport: { width: 1220, height: 620 },
		// No time limits: a loaded machine starts Chromium slowly; meson's
		// test timeout catches a real hang.
		timeout: 0,
	});
	context.setDefaultTimeout(0);
} catch (error) {
	rmSync(userDataDir, { recursive: true, force: true });
	skip(`chromium did not start: ${error.message.split("\n")[0]}`);
}

try {
	const page = context.pages()[0] || (await context.newPage());
	const pageErrors = [];
	page.on("pageerror", (error) => pageErrors.push(error.message));
	// Everything is inside the SVG: any request elsewhere is a bug.
	const requests = [];
	page.on("request", (request) => {
		if (!request.url().startsWith("file:"))
			requests.push(request.url());
	});
	await page.goto(pathToFileURL(svgPath).href);

	const frame = (name) => page.locator("#frames > g", {
		has: page.locator(`xpath=./*[local-name()='title'][starts-with(., ${JSON.stringify(name + " (")})]`),
	}).first();
	const rectWidth = async (name) => Number(await frame(name).locator("rect").getAttribute("width"));
	const text = (id) => page.locator(`#${id}`).textContent();

	check((await text("title")) === "demo CPU", "title shown", await text("title"));
	check((await text("subtitle")) === "dotnet demo.dll, 30 s", "subtitle shown");

	// Hover: "name (N samples, P%)".
	const indexOf = "int32 [System.Private.CoreLib] System.SpanHelpers::IndexOf(char&,char,int32)[OptimizedTier1]";
	const indexOfSamples = stacks.filter((s) => s.frames.includes(indexOf)).reduce((a, s) => a + s.count, 0);
	await frame(indexOf).hover();
	const expectedHover = `${indexOf} (${indexOfSamples} samples, ${(100 * indexOfSamples / total).toFixed(2)}%)`;
	check((await text("details")) === expectedHover, "hover details", await text("details"));

	// Text stays inside its frame, ellipsis on long names.
	const overflow = await page.evaluate(() => {
		let worst = 0, trimmed = 0;
		for (const g of document.querySelectorAll("#frames > g")) {
			const rect = g.children[1], label = g.children[2];
			if (g.classList.contains("hide") || !label.textContent)
				continue;
			worst = Math.max(worst, label.getComputedTextLength() + 3 - Number(rect.getAttribute("width")));
			if (label.textContent.endsWith("\u2026"))
				trimmed++;
		}
		return { worst, trimmed };
	});
	check(overflow.worst <= 0, "every name fits its frame", `worst overflow ${overflow.worst.toFixed(2)}px`);
	check(overflow.trimmed > 0, "long names end with an ellipsis", `${overflow.trimmed} trimmed`);

	await page.screenshot({ path: join(outputDir, "dotnet.png") });

	// Click to zoom into Main: it fills the width, its children scale up.
	const main = "void [demo] Demo.Program::Main(string[])[OptimizedTier1]";
	const parser = "string [demo] Demo.Parser::ReadToken(class System.IO.TextReader)[OptimizedTier1]";
	const mainPath = stacks.find((s) => s.frames.includes(main)).frames;
	const mainSamples = samplesUnder(mainPath.slice(0, mainPath.indexOf(main) + 1));
	const parserSamples = samplesUnder([...mainPath.slice(0, mainPath.indexOf(main) + 1), parser]);
	const parserWidthBefore = await rectWidth(parser);
	await frame(main).click();
	const contentWidth = 1200 - 20;
	check(Math.abs((await rectWidth(main)) - contentWidth) < 0.02, "zoomed frame fills the width",
		String(await rectWidth(main)));
	const expectedParser = contentWidth * parserSamples / mainSamples;
	check(Math.abs((await rectWidth(parser)) - expectedParser) < 0.05, "child scaled with the zoom",
		`${await rectWidth(parser)} vs ${expectedParser.toFixed(2)} (was ${parserWidthBefore})`);
	check(await frame("FinalizerThread::FinalizerThreadStart(void*)").evaluate((g) => g.classList.contains("hide")),
		"frames outside the zoom are hidden");
	check(await frame("exe_start").evaluate((g) => g.classList.contains("parent")),
		"ancestors stay visible, faded");
	check(await page.locator("#unzoom").isVisible(), "Reset Zoom shown");
	const zoomUrl = new URL(page.url());
	check(zoomUrl.searchParams.has("x") && zoomUrl.searchParams.has("y"), "zoom kept in the URL", zoomUrl.search);
	await page.screenshot({ path: join(outputDir, "dotnet-zoomed.png") });

	await page.locator("#unzoom").click();
	check(Math.abs((await rectWidth(parser)) - parserWidthBefore) < 0.02, "Reset Zoom restores widths");
	check(!(await page.locator("#unzoom").isVisible()), "Reset Zoom hidden again");

	// Ctrl-F search with a regex; nested matches counted once.
	const term = "System\\.(String|SpanHelpers)::|Demo\\.Parser";
	page.once("dialog", (dialog) => dialog.accept(term));
	await page.keyboard.press("Control+f");
	const expectedMatch = `Matched: ${matchedShare(new RegExp(term)).toFixed(2)}%`;
	check((await text("matched")) === expectedMatch, "search Matched: share", `${await text("matched")} (want ${expectedMatch})`);
	const highlighted = await page.locator('#frames rect[fill="rgb(230,0,230)"]').count();
	check(highlighted >= 3, "matching frames highlighted", `${highlighted} frames`);
	check(new URL(page.url()).searchParams.get("s") === term, "search kept in the URL");

	// Case toggle.
	page.once("dialog", (dialog) => dialog.accept("spanhelpers"));
	await page.keyboard.press("Control+f");
	check((await text("matched")) === "Matched: 0.00%", "search is case-sensitive by default", await text("matched"));
	await page.locator("#ignorecase").click();
	const caseless = `Matched: ${matchedShare(/spanhelpers/i).toFixed(2)}%`;
	check((await text("matched")) === caseless, "ic makes it case-insensitive", await text("matched"));

	// Zoom and search come back from the URL.
	page.once("dialog", (dialog) => dialog.accept(term));
	await page.locator("#search").click(); // clears the active search
	await page.locator("#search").click(); // asks for a new one
	await frame(main).click();
	const saved = page.url();
	await page.goto("about:blank");
	await page.goto(saved);
	check(Math.abs((await rectWidth(main)) - contentWidth) < 0.02, "zoom restored from the URL", saved.split("?")[1]);
	check((await text("matched")) === expectedMatch, "search restored from the URL", await text("matched"));
	await page.screenshot({ path: join(outputDir, "dotnet-search.png") });
	await page.keyboard.press("Escape");
	check(!(await page.locator("#unzoom").isVisible()) && (await text("matched")).trim() === "",
		"Escape resets zoom and search");

	// Differential graph: red for growth, blue for shrinkage.
	await page.goto(pathToFileURL(diffSvg).href);
	const fill = async (name) => frame(name).locator("rect").getAttribute("fill");
	const [grew, shrank] = [await fill("WKS::gc_heap::mark_object_simple(unsigned char**)"), await fill(indexOf)];
	const rgb = (text) => text.match(/\d+/g).map(Number);
	check(rgb(grew)[0] === 255 && rgb(grew)[2] < 200, "grown frame is red", grew);
	check(rgb(shrank)[2] === 255 && rgb(shrank)[0] < 200, "shrunk frame is blue", shrank);
	await page.screenshot({ path: join(outputDir, "dotnet-diff.png") });

	// A big graph stays responsive: search and zoom are one pass each. Each
	// is timed against one plain pass over the same frames in the same page
	// (read a position, write a width), so the check holds however fast or
	// loaded the machine is; the best of three runs takes out pauses.
	const bigFolded = [];
	for (let i = 0; i < 40000; i++)
		bigFolded.push(`dotnet;[unknown];worker${i % 7};Demo.Module${i % 113}::Step${i % 1009};` +
			`System.Text.Json.Serializer::Write${i}(string)[OptimizedTier1] ${1 + (i % 13)}`);
	const bigSvg = join(outputDir, "big.svg");
	execFileSync(profcpu, ["flamegraph", "--minwidth", "0", "--max-frames", "0", "-o", bigSvg],
		{ input: bigFolded.join("\n") });
	await page.goto(pathToFileURL(bigSvg).href);
	const timings = await page.evaluate(() => {
		const click = (element) => element.dispatchEvent(new MouseEvent("click", { bubbles: true }));
		const best = { pass: Infinity, zoom: Infinity, reset: Infinity, search: Infinity };
		const time = (name, action) => {
			const started = performance.now();
			action();
			best[name] = Math.min(best[name], performance.now() - started);
		};
		const frames = document.querySelectorAll("#frames > g");
		window.prompt = () => "Step1[0-9]";
		for (let run = 0; run < 3; run++) {
			time("pass", () => {
				for (const frame of frames) {
					const rect = frame.querySelector("rect");
					rect.setAttribute("width", rect.getAttribute("width"));
				}
			});
			time("zoom", () => click(document.querySelector("#frames > g:nth-child(3)")));
			time("reset", () => click(document.getElementById("unzoom")));
			time("search", () => click(document.getElementById("search")));
			click(document.getElementById("search")); // clears it for the next run
		}
		return { frames: frames.length, ...best };
	});
	const slowest = Math.max(timings.zoom, timings.reset, timings.search);
	check(timings.frames > 40000 && slowest < 25 * Math.max(timings.pass, 1),
		"big graph: zoom, reset and search take a few passes over the frames",
		`${timings.frames} frames; one pass ${timings.pass.toFixed(0)} ms, zoom ${timings.zoom.toFixed(0)} ms, ` +
		`reset ${timings.reset.toFixed(0)} ms, search ${timings.search.toFixed(0)} ms`);

	// Folded files of 10 MB and 100 MB (deep .NET-like stacks) give SVGs a
	// browser opens at once: at most about 30,000 frames by default, the
	// narrow ones merged into "…" frames; search still finds frames.
	for (const megabytes of [10, 100]) {
		const folded = join(outputDir, `deep-${megabytes}mb.folded`), svg = join(outputDir, `deep-${megabytes}mb.svg`);
		writeDeepFolded(folded, megabytes * 1e6);
		execFileSync(profcpu, ["flamegraph", "-i", folded, "-o", svg]);
		rmSync(folded);
		const svgBytes = statSync(svg).size;
		check(svgBytes < 10e6, `${megabytes} MB of folded stacks: SVG under 10 MB`, `${(svgBytes / 1e6).toFixed(1)} MB`);
		const opened = performance.now();
		await page.goto(pathToFileURL(svg).href);
		const loadMs = performance.now() - opened;
		const drawn = await page.locator("#frames > g").count();
		const merged = await page.locator("#frames > g > title", { hasText: "narrow frames merged" }).count();
		check(drawn <= 31000 && merged > 0, `${megabytes} MB: ${drawn} frames drawn, ${merged} "…" frames`,
			`opened in ${loadMs.toFixed(0)} ms`);
		page.once("dialog", (dialog) => dialog.accept("ThreadPoolWorkQueue::Dispatch"));
		await page.keyboard.press("Control+f");
		check((await text("matched")) === "Matched: 100.00%", `${megabytes} MB: search finds the dispatcher in every stack`,
			await text("matched"));
		page.once("dialog", (dialog) => dialog.accept("Type3::Method1\\("));
		await page.keyboard.press("Control+f");
		const share = Number((await text("matched")).replace(/[^0-9.]/g, ""));
		check(share > 0 && share < 100, `${megabytes} MB: search of a deeper method`, await text("matched"));
		rmSync(svg);
	}

	// The flame graph of the real capture, as `profcpu collect` wrote it.
	await page.goto(pathToFileURL(join(captureDir, "flamegraph.svg")).href);
	const capturedTotal = sum(captured);
	await frame("workload_split").hover();
	// Counts read as a person writes them (1,082); the whole is "100%".
	check((await text("details")) ===
		`workload_split (${capturedTotal.toLocaleString("en-US")} samples, 100%)`,
		"real capture: the process frame holds every sample", await text("details"));
	page.once("dialog", (dialog) => dialog.accept("spin_(sixty|ten)"));
	await page.keyboard.press("Control+f");
	const capturedMatch = `Matched: ${matchedShare(/spin_(sixty|ten)/, captured).toFixed(2)}%`;
	check((await text("matched")) === capturedMatch, "real capture: search share",
		`${await text("matched")} (want ${capturedMatch})`);
	await frame("worker").click();
	check(Math.abs((await rectWidth("worker")) - contentWidth) < 0.02, "real capture: zoom into worker");
	await page.screenshot({ path: join(outputDir, "capture.png") });

	check(pageErrors.length === 0, "no script errors", pageErrors.join("; "));
	check(requests.length === 0, "no network requests", requests.join(" "));
} finally {
	await context.close();
	rmSync(userDataDir, { recursive: true, force: true });
}
console.log(failures ? `${failures} check(s) failed` : "all checks passed");
process.exit(failures ? 1 : 0);
