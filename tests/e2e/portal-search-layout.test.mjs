// The search page as a scientist meets it (issue #34 items 3, 6, 9, 10): on a phone the map and
// its area tools (behind a toggle on the first screen) come before the result cards; at 1440 px "Add to cart" stays on one line and a
// granule id wraps only after a separator; hovering or focusing a row lights its footprint on
// the map (on top of the others) and a click on a footprint marks its row; an id prefix typed
// without * that finds nothing offers the wildcard search; a full page load logs no warning or
// error (React Router's "No HydrateFallback element" included).
//
//   E2E_PORT=8821 scripts/e2e.sh tests/e2e/portal-search-layout.test.mjs
//
// Screenshots: var/screenshots/search-390x844.png, search-1440x900.png, search-highlight.png.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { BASE_URL, SCIENTIST, launchChromium, logIn, openPage, pageText, shoot } from './browser.mjs';

const WAIT_MS = Number(process.env.E2E_ARCHIVE_WAIT_MS || 180_000);

/** @type {import('playwright-core').Browser | undefined} */
let browser;

before(async () => {
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
});

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A page whose console warnings are collected too.
 * @param {{ width: number, height: number }} viewport
 */
async function openWatched(viewport) {
  const opened = await openPage(browser, viewport);
  /** @type {string[]} */
  const warnings = [];
  opened.page.on('console', (message) => {
    if (message.type() === 'warning') warnings.push(message.text());
  });
  return { ...opened, warnings };
}

/**
 * Wait until the demo's MODIS swaths are archived, so the map has footprints to light.
 * @param {import('playwright-core').Page} page
 */
async function waitForSwaths(page) {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const answer = await page.request.get(`${BASE_URL}/api/v1/granules/?q=MOD021KM&limit=50`);
    const found = (await answer.json()).results ?? [];
    if (found.length >= 6) return found;
    assert.ok(Date.now() < deadline, 'the demo MODIS swaths were never archived');
    await sleep(2000);
  }
}

/** @param {import('playwright-core').Page} page */
async function resultsShown(page) {
  await page.getByRole('region', { name: 'Results' }).getByRole('row').nth(1).waitFor();
}

test('a full page load logs no warning, and wide results keep ids and buttons whole', async () => {
  const { context, page, consoleErrors, warnings } = await openWatched({ width: 1440, height: 900 });
  try {
    await logIn(page, SCIENTIST, '/search');
    await waitForSwaths(page);
    for (const path of ['/search', '/cart', '/collections/MOD021KM.061', '/search']) {
      await page.goto(`${BASE_URL}${path}`, { waitUntil: 'load' });
      await page.getByRole('heading', { level: 1 }).waitFor();
    }
    await resultsShown(page);
    await sleep(500);
    assert.deepEqual(warnings, [], 'the browser console logged warnings');
    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');

    // Every "Add to cart" on one line: its text is one line box.
    const lines = await page.locator('.search-results button').filter({ hasText: 'Add to cart' })
      .evaluateAll((buttons) => buttons.map((button) => {
        const range = document.createRange();
        range.selectNodeContents(button);
        return new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top))).size;
      }));
    assert.ok(lines.length >= 10, `${lines.length} Add to cart buttons`);
    assert.deepEqual([...new Set(lines)], [1], `Add to cart takes ${lines} lines`);

    // A granule id breaks only after ".", "_" or "-": walk its characters and note where a
    // new line starts.
    const breaks = await page.locator('.search-results a.mono').evaluateAll((links) => links.flatMap((link) => {
      const text = link.textContent ?? '';
      /** @type {string[]} */
      const bad = [];
      let top = null;
      let seen = '';
      const walker = document.createTreeWalker(link, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (let i = 0; i < (node.textContent ?? '').length; i++) {
          const range = document.createRange();
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          const rect = range.getClientRects()[0];
          if (rect && top !== null && rect.top > top + 2 && !/[._-]$/.test(seen)) bad.push(`${text}: "${seen}|"`);
          if (rect) top = rect.top;
          seen += node.textContent?.[i] ?? '';
        }
      }
      return bad;
    }));
    assert.deepEqual(breaks, [], 'granule ids break mid-token');
    await shoot(page, 'search-1440x900.png');
  } finally {
    await context.close();
  }
});

test('on a phone the map and its area tools come before the results', async () => {
  const { context, page, consoleErrors } = await openWatched({ width: 390, height: 844 });
  try {
    await page.goto(`${BASE_URL}/search`, { waitUntil: 'load' });
    await resultsShown(page);
    const top = async (/** @type {import('playwright-core').Locator} */ locator) =>
      locator.evaluate((element) => element.getBoundingClientRect().top + window.scrollY);
    const results = page.getByRole('region', { name: 'Results' });
    // The way to the map is on the first screen, before the results (which stay there too).
    const toggle = page.getByRole('button', { name: 'Map and area tools' });
    const toggleTop = await top(toggle);
    assert.ok(toggleTop < 800, `the map's toggle starts ${toggleTop} px down, below the first screen`);
    assert.ok(toggleTop < await top(results), 'the map comes after the results');
    await page.screenshot({ path: 'var/screenshots/search-390x844-first-screen.png' });

    await toggle.click();
    const tools = page.getByRole('toolbar', { name: 'Area tools' });
    const map = page.getByRole('region', { name: /Map of the search box/ });
    await map.waitFor();
    const [toolsTop, mapTop, resultsTop] = [await top(tools), await top(map), await top(results)];
    assert.ok(toolsTop < 844, `the area tools start ${toolsTop} px down, below the first screen`);
    assert.ok(mapTop < resultsTop, `the map (${mapTop} px) comes after the results (${resultsTop} px)`);
    await page.locator('path.box-map__footprint').first().waitFor();
    await page.screenshot({ path: 'var/screenshots/search-390x844-map-open.png' });
    await shoot(page, 'search-390x844.png');
    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await context.close();
  }
});

test('a hovered or focused row lights its footprint; a clicked footprint marks its row', async () => {
  // Tall enough for the map and the rows at once: nothing scrolls while the pointer is on a row.
  const { context, page, consoleErrors } = await openWatched({ width: 1440, height: 1800 });
  try {
    const swaths = await waitForSwaths(page);
    await page.goto(`${BASE_URL}/search?q=MOD021KM`, { waitUntil: 'load' });
    await resultsShown(page);
    const results = page.getByRole('region', { name: 'Results' });
    const highlighted = page.locator('path.box-map__footprint--highlight');
    await page.locator('path.box-map__footprint').first().waitFor();
    assert.equal(await highlighted.count(), 0);

    // What is on top of the map where the lit footprint's outline has its middle.
    const onTop = () => highlighted.evaluate((path) => {
      const box = path.getBoundingClientRect();
      const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
      return {
        lit: hit === path ? true : `${hit?.tagName}.${hit?.getAttribute('class')}`,
        last: path === Array.from(path.closest('svg')?.querySelectorAll('path') ?? []).at(-1),
      };
    });

    const rows = results.getByRole('row');
    for (const index of [3, 5]) {
      await rows.nth(index).hover();
      await highlighted.waitFor();
      assert.equal(await highlighted.count(), 1);
      assert.deepEqual(await onTop(), { lit: true, last: true }, `row ${index}'s footprint is hidden under others`);
      assert.ok(await page.locator('path.box-map__footprint--faded').count() >= swaths.length - 1);
    }
    await shoot(page, 'search-highlight.png');
    // Keyboard focus does the same.
    await page.mouse.move(5, 5);
    await rows.nth(2).getByRole('link').focus();
    await highlighted.waitFor();
    assert.deepEqual(await onTop(), { lit: true, last: true });
    await rows.nth(2).getByRole('link').blur();
    await page.waitForFunction(() => document.querySelectorAll('path.box-map__footprint--highlight').length === 0);

    // The reverse: a footprint clicked marks its row (the tooltip names the granule under the
    // pointer).
    const target = await page.locator('path.box-map__footprint').last().evaluate((path) => {
      const box = path.getBoundingClientRect();
      return { x: box.left + box.width / 2, y: box.top + box.height / 2 };
    });
    await page.mouse.move(target.x, target.y);
    const tooltip = page.locator('.leaflet-tooltip');
    await tooltip.waitFor();
    const named = (await tooltip.innerText()).trim();
    await page.mouse.click(target.x, target.y);
    const marked = results.locator('tr[aria-current="true"]');
    await marked.waitFor().catch(async () => {
      throw new Error(`clicking ${named}'s footprint marked no row. The page says:\n${await pageText(page)}`);
    });
    assert.equal(await marked.count(), 1);
    assert.equal((await marked.getByRole('link').innerText()).replace(/\s/g, ''), named);
    assert.ok(await marked.isVisible());
    assert.equal(new URL(page.url()).pathname, '/search', 'the click left the search');
    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await context.close();
  }
});

test('an id prefix typed without * offers the wildcard search', async () => {
  const { context, page, consoleErrors } = await openWatched({ width: 1440, height: 900 });
  try {
    const swaths = await waitForSwaths(page);
    const id = swaths[0].granule_id;
    const prefix = id.slice(0, id.indexOf('.', id.indexOf('.') + 1));   // MOD021KM.A2026307
    const starting = swaths.filter((/** @type {any} */ g) => g.granule_id.toUpperCase().startsWith(prefix.toUpperCase()));
    await page.goto(`${BASE_URL}/search?q=${encodeURIComponent(prefix)}`, { waitUntil: 'load' });
    await page.getByText('No granules match').waitFor();
    const offer = page.getByRole('button', { name: `Search for ${prefix}*` });
    await offer.waitFor();
    const count = starting.length;
    await page.getByText(new RegExp(`^${count} granules?$`)).waitFor();
    await offer.click();
    await page.waitForURL((url) => url.searchParams.get('q') === `${prefix}*`);
    await resultsShown(page);
    const shown = await page.getByRole('region', { name: 'Results' }).locator('a.mono').allInnerTexts();
    assert.deepEqual(shown.map((text) => text.replace(/\s/g, '')).sort(),
      starting.map((/** @type {any} */ g) => g.granule_id).sort());
    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await context.close();
  }
});
