// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Uses a flame graph the way a reader does, in headless Chromium: hovers,
 * clicks to zoom, zooms back out through an ancestor, resets, searches (a
 * valid and an invalid regular expression), and prints what it saw, one
 * "key value" line each, for tests/flamegraph.bats to check. Page errors
 * and console errors are printed as "error ..." lines.
 *
 * usage: node flamegraph.cjs FILE.svg STEPS [FILE.svg STEPS]...
 * Each FILE in a page of its own, in one browser (its start is most of a
 * run's time), its lines after "page N" (1, 2, ...).
 * STEPS: a JSON list of [action, argument]: ["zoom", name] (a pointer
 * click at the middle of the frame's box), ["reset"], ["search", regex],
 * ["hover", name], ["frames"] (every frame drawn, as "frame NAME x=.. w=..
 * opacity=.. fill=.. label=.."), ["matched"], ["time-search", regex] (the
 * milliseconds one search takes, as "search-ms MS").
 * A name may be "name@N": the Nth frame of that name, in file order.
 */
'use strict';

const { chromium } = require('playwright-core');

async function main() {
	const args = process.argv.slice(2);
	const browser = await chromium.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		       '--disable-background-networking', '--disable-component-update',
		       '--disable-sync'],
	});

	for (let i = 0; i + 1 < args.length; i += 2) {
		console.log(`page ${i / 2 + 1}`);
		await browse(browser, args[i], JSON.parse(args[i + 1]));
	}
	await browser.close();
}

async function browse(browser, file, steps) {
	const page = await browser.newPage();
	let answer = null;

	page.on('pageerror', (e) => console.log(`error page ${e.message}`));
	page.on('console', (m) => { if (m.type() === 'error') console.log(`error console ${m.text()}`); });
	// Search asks with prompt(): answer it with the step's expression.
	page.on('dialog', (d) => d.accept(answer === null ? undefined : answer));
	await page.goto('file://' + file);

	// The frame's <g>, by the name in its title: "name (N unit, P%)".
	const frame = async (spec) => {
		const [name, nth] = spec.split('@');
		const gs = await page.$$('g.f');
		let seen = 0;

		for (const g of gs) {
			const title = await g.$eval('title', (t) => t.textContent);
			if (title.replace(/ \([^(]*\)$/, '').replace(/ \(inlined\)$/, '') !== name)
				continue;
			if (seen++ === (nth ? +nth : 0))
				return g;
		}
		throw new Error(`no frame ${spec}`);
	};

	for (const [action, arg] of steps) {
		if (action === 'zoom') {
			// Clicked as a user would, with the mouse, at the middle of the drawn
			// box: whatever the page has there (the box, its label) gets the click.
			const g = await frame(arg);
			await g.scrollIntoViewIfNeeded();
			const box = await (await g.$('rect')).boundingBox();
			if (!box || box.width < 1)
				throw new Error(`frame ${arg} is not drawn`);
			await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
		} else if (action === 'reset' || action === 'search') {
			answer = action === 'search' ? arg : null;
			await page.click(`text.ctl >> text=${action === 'reset' ? 'Reset zoom' : 'Search'}`);
		} else if (action === 'hover') {
			const g = await frame(arg);
			await g.hover();
			const s = await g.$eval('rect', (r) => getComputedStyle(r).stroke);
			const t = await g.$eval('title', (t) => t.textContent);
			console.log(`hover ${arg} stroke=${s} title=${t}`);
		} else if (action === 'frames') {
			const all = await page.$$eval('g.f', (gs) => gs.map((g) => {
				const r = g.querySelector('rect');
				const name = g.querySelector('title').textContent.replace(/ \([^(]*\)$/, '');
				return { name, shown: getComputedStyle(g).display !== 'none',
					 x: +r.getAttribute('x'), w: +r.getAttribute('width'),
					 o: getComputedStyle(r).opacity, fill: r.style.fill,
					 label: g.querySelector('text').textContent };
			}));
			for (const f of all)
				if (f.shown)
					console.log(`frame ${f.name} x=${f.x.toFixed(1)} w=${f.w.toFixed(1)} ` +
						    `opacity=${f.o} fill=${f.fill || '-'} label=${f.label || '-'}`);
			console.log('frames end');
		} else if (action === 'matched') {
			const t = await page.$eval('#matched', (e) => e.textContent);
			console.log(`matched ${t || '-'}`);
		} else if (action === 'time-search') {
			// One search's time, the best of 5 rounds of 10 searches: the page's
			// timer counts in steps of 0.1 ms, and a round may meet the collector.
			const ms = await page.evaluate((re) => {
				const ask = window.prompt;
				let best = Infinity;

				window.prompt = () => re;
				for (let round = 0; round < 5; round++) {
					const t0 = performance.now();

					for (let i = 0; i < 10; i++)
						search();
					best = Math.min(best, (performance.now() - t0) / 10);
				}
				window.prompt = ask;
				return best;
			}, arg);
			console.log(`search-ms ${ms.toFixed(3)}`);
		} else {
			throw new Error(`unknown step ${action}`);
		}
	}
	await page.close();
}

main().catch((e) => {
	console.log(`error driver ${e.message}`);
	process.exit(1);
});
