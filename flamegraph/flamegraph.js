// Interactivity for profcpu flame graphs: hover details, click to zoom,
// regex search with the share of samples matched, and the zoom and search
// kept in the page URL (?x=&y=&s=). Embedded in every SVG after a
// `fgConfig` object with the graph's geometry (see svg_writer.c).
//
// Frames come in depth-first order (a frame before its children, children
// left to right), each with its position and width in samples (fg:x, fg:w).
// Every action is one pass over the frames, so big graphs stay responsive.
"use strict";
(function () {
	var config = fgConfig;
	var svg = document.documentElement;
	var framesGroup = document.getElementById("frames");
	var details = document.getElementById("details");
	var matchedText = document.getElementById("matched");
	var unzoomButton = document.getElementById("unzoom");
	var searchButton = document.getElementById("search");
	var caseButton = document.getElementById("ignorecase");
	var searchColour = "rgb(230,0,230)";

	var groups = Array.prototype.slice.call(framesGroup.children);
	var count = groups.length;
	var xs = new Float64Array(count), widths = new Float64Array(count);
	var depths = new Int32Array(count);
	var names = new Array(count), labels = new Array(count);
	var rects = new Array(count), texts = new Array(count), fills = new Array(count);
	var contentWidth = config.width - 2 * config.sidePadding;
	var charWidth = config.charWidth;
	var zoomed = 0; // index of the frame filling the width; 0 is the root
	var searchTerm = null, ignoreCase = false;

	for (var i = 0; i < count; i++) {
		var group = groups[i];
		var label = group.firstElementChild.textContent;
		var rect = group.children[1];
		var y = parseFloat(rect.getAttribute("y"));

		group.frameIndex = i;
		labels[i] = label;
		var head = label.split("\n", 1)[0]; // full names follow on their own lines
		names[i] = head.slice(0, head.lastIndexOf(" ("));
		rects[i] = rect;
		texts[i] = group.children[2];
		fills[i] = rect.getAttribute("fill");
		xs[i] = parseFloat(rect.getAttribute("fg:x"));
		widths[i] = parseFloat(rect.getAttribute("fg:w"));
		depths[i] = Math.round(config.inverted ? (y - config.top) / config.frameHeight
			: (config.bottom - y) / config.frameHeight - 1);
	}

	// The shown part of a name in `pixels`, cut with an ellipsis.
	function fitName(name, pixels) {
		var chars = Math.floor((pixels - 2 * config.textPadding) / charWidth);
		var cut;

		if (chars < 3)
			return "";
		if (name.length <= chars)
			return name;
		cut = chars - 1;
		if (/[\ud800-\udbff]/.test(name.charAt(cut - 1)))
			cut--; // keep surrogate pairs whole
		return name.slice(0, cut) + "\u2026";
	}

	function place(i, x, width) {
		rects[i].setAttribute("x", x.toFixed(2));
		rects[i].setAttribute("width", width.toFixed(2));
		var label = fitName(names[i], width);

		texts[i].setAttribute("x", (x + config.textPadding).toFixed(2));
		if (texts[i].textContent !== label) // text changes cost a re-layout
			texts[i].textContent = label;
	}

	// The browser's monospace font may run wider than the writer guessed:
	// measure it once and re-fit every name if so.
	function measureFont() {
		var probe = document.createElementNS("http://www.w3.org/2000/svg", "text");
		var measured;

		probe.textContent = "MMMMMMMMMMMMMMMMMMMM";
		framesGroup.appendChild(probe);
		measured = probe.getComputedTextLength() / 20;
		framesGroup.removeChild(probe);
		if (measured > charWidth) {
			charWidth = measured;
			return true;
		}
		return false;
	}

	function setHidden(element, hidden) {
		element.classList.toggle("hide", hidden);
	}

	function zoom(target) {
		var left = xs[target], right = left + widths[target], depth = depths[target];
		var epsilon = widths[target] * 1e-9;
		var scale = contentWidth / widths[target];

		zoomed = target;
		for (var i = 0; i < count; i++) {
			var start = xs[i], end = start + widths[i];
			var inside = start >= left - epsilon && end <= right + epsilon;
			var ancestor = depths[i] < depth && start <= left + epsilon && end >= right - epsilon;

			setHidden(groups[i], !(ancestor || (inside && depths[i] >= depth)));
			groups[i].classList.toggle("parent", ancestor);
			if (ancestor)
				place(i, config.sidePadding, contentWidth);
			else if (inside && depths[i] >= depth)
				place(i, config.sidePadding + (start - left) * scale, widths[i] * scale);
		}
		setHidden(unzoomButton, target === 0);
		saveState();
	}

	// Highlights the frames whose name matches `term` (a regex; none to
	// clear) and shows the share of all samples they cover.
	function search(term) {
		var pattern = null, covered = -Infinity, matched = 0;
		var epsilon = config.total * 1e-12;
		var message = " ";

		searchTerm = term || null;
		if (searchTerm) {
			try {
				pattern = new RegExp(searchTerm, ignoreCase ? "i" : "");
			} catch (error) {
				message = "Bad regex: " + error.message;
				searchTerm = null;
			}
		}
		for (var i = 0; i < count; i++) {
			var hit = pattern !== null && pattern.test(names[i]);

			rects[i].setAttribute("fill", hit ? searchColour : fills[i]);
			// Depth-first order: a match inside the last counted match
			// starts before that one ends, and is not counted again.
			if (hit && xs[i] >= covered - epsilon) {
				matched += widths[i];
				covered = xs[i] + widths[i];
			}
		}
		if (pattern !== null)
			message = "Matched: " + (100 * matched / config.total).toFixed(2) + "%";
		matchedText.textContent = message;
		searchButton.lastChild.textContent = pattern !== null ? "Reset Search" : "Search";
		saveState();
	}

	function askSearch() {
		var term = window.prompt("Search for a regular expression" +
			(ignoreCase ? ", ignoring case" : "") + " (e.g. ^System\\.Text)",
			searchTerm || "");

		if (term !== null)
			search(term);
	}

	function toggleCase() {
		ignoreCase = !ignoreCase;
		caseButton.classList.toggle("active", ignoreCase);
		if (searchTerm)
			search(searchTerm);
	}

	function saveState() {
		var params = new URLSearchParams(window.location.search);

		params.delete("x");
		params.delete("y");
		params.delete("s");
		if (zoomed !== 0) {
			params.set("x", rects[zoomed].getAttribute("fg:x"));
			params.set("y", depths[zoomed]);
		}
		if (searchTerm)
			params.set("s", searchTerm);
		var query = params.toString();
		try {
			history.replaceState(null, "", window.location.pathname +
				(query ? "?" + query : "") + window.location.hash);
		} catch (error) {
			// Some viewers (file:// in a few browsers) refuse URL changes.
		}
	}

	function restoreState() {
		var params = new URLSearchParams(window.location.search);
		var x = params.get("x"), y = params.get("y");

		if (x !== null && y !== null) {
			for (var i = 0; i < count; i++) {
				if (depths[i] === Number(y) && rects[i].getAttribute("fg:x") === x) {
					zoom(i);
					break;
				}
			}
		}
		if (params.get("s"))
			search(params.get("s"));
	}

	function frameOf(event) {
		var group = event.target.closest("#frames > g");

		return group ? group.frameIndex : undefined;
	}

	framesGroup.addEventListener("mouseover", function (event) {
		var i = frameOf(event);

		if (i !== undefined)
			details.textContent = labels[i];
	});
	framesGroup.addEventListener("mouseout", function (event) {
		if (frameOf(event) !== undefined)
			details.textContent = " ";
	});
	framesGroup.addEventListener("click", function (event) {
		var i = frameOf(event);

		if (i !== undefined)
			zoom(i);
	});
	unzoomButton.addEventListener("click", function () {
		zoom(0);
	});
	searchButton.addEventListener("click", function () {
		if (searchTerm)
			search(null);
		else
			askSearch();
	});
	caseButton.addEventListener("click", toggleCase);
	window.addEventListener("keydown", function (event) {
		if (event.key === "F3" || ((event.ctrlKey || event.metaKey) && event.key === "f")) {
			event.preventDefault();
			askSearch();
		} else if ((event.ctrlKey || event.metaKey) && event.key === "i") {
			event.preventDefault();
			toggleCase();
		} else if (event.key === "Escape") {
			search(null);
			zoom(0);
		}
	});

	var fontRunsWider = measureFont();
	restoreState(); // zooming, if the URL asks, re-fits the names too
	if (fontRunsWider && zoomed === 0)
		zoom(0);
})();
