// A scientist's searches against a live Granary (seed_demo data, a real worker): a single day
// (From = To) finds that day's granules, a granule id with a wildcard finds the granule, and
// clicking or dragging across the timeline narrows the dates and so the results. Then the same
// page at phone width, where the first results must be on the first screen.
//
//   E2E_PORT=8795 E2E_DB=granary_e2e_fe1 scripts/e2e.sh tests/e2e/portal-search.test.mjs
//
// Screenshots land in var/screenshots/search-*.png.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import {
  BASE_URL, SCIENTIST, SCREENSHOTS, launchChromium, logIn, openPage, pageText, shoot,
  sidewaysOverflow,
} from './browser.mjs';

// seed_demo delivers 12 daily snow cover granules, one per UTC day from 2026-11-01
// (demo/products.py DAY0); a granule id names its day as year and day of the year.
const SNOW_DAYS = 12;
const ARCHIVE_WAIT_MS = Number(process.env.E2E_ARCHIVE_WAIT_MS || 180_000);

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
 * The day of the year of a yyyy-mm-dd day, as MODIS granule ids write it (A2026305).
 * @param {string} day
 */
function modisDay(day) {
  const date = new Date(`${day}T00:00:00Z`);
  const first = Date.UTC(date.getUTCFullYear(), 0, 1);
  const doy = Math.round((date.getTime() - first) / 86_400_000) + 1;
  return `A${date.getUTCFullYear()}${String(doy).padStart(3, '0')}`;
}

/**
 * Every snow cover granule id, once the worker has archived all of them.
 * @param {import('playwright-core').Page} page
 * @returns {Promise<string[]>}
 */
async function snowGranules(page) {
  const deadline = Date.now() + ARCHIVE_WAIT_MS;
  for (;;) {
    const answer = await page.evaluate(async () => {
      const response = await fetch('/api/v1/granules/?collection=MOD10C1.061&limit=100', {
        headers: { Accept: 'application/json' },
      });
      return response.json();
    });
    const ids = answer.results.map((/** @type {{ granule_id: string }} */ g) => g.granule_id);
    if (ids.length >= SNOW_DAYS) return ids;
    assert.ok(Date.now() < deadline, `only ${ids.length} snow granules archived after ${ARCHIVE_WAIT_MS / 1000} s`);
    await sleep(1000);
  }
}

/**
 * The granule ids in the results table, once it has settled on `expected` rows' worth.
 * @param {import('playwright-core').Page} page
 */
async function resultIds(page) {
  const results = page.getByRole('region', { name: 'Results' });
  await results.locator('table[aria-busy="true"]').waitFor({ state: 'detached' }).catch(() => {});
  return results.locator('tbody th a').allInnerTexts();
}

/**
 * Wait until the results table lists exactly `expected` (in any order).
 * @param {import('playwright-core').Page} page
 * @param {string[]} expected
 */
async function waitForResults(page, expected) {
  const want = [...expected].sort();
  const deadline = Date.now() + 20_000;
  for (;;) {
    const got = (await resultIds(page)).sort();
    if (JSON.stringify(got) === JSON.stringify(want)) return;
    if (Date.now() > deadline) {
      assert.deepEqual(got, want, `the results are not as expected. The page says:\n${await pageText(page)}`);
    }
    await sleep(250);
  }
}

test('a scientist searches by day, by granule id pattern and by the timeline', async () => {
  const { context, page, consoleErrors } = await openPage(browser, { width: 1280, height: 900 });
  try {
    await logIn(page, SCIENTIST, '/search');
    const snow = await snowGranules(page);
    const form = page.getByRole('search', { name: 'Granule search' });

    // One day, From = To: that day's snow granule and no other day's.
    const day = '2026-11-03';
    await form.getByLabel('Granule id or words').fill('MOD10C1*');
    await form.getByLabel('From').fill(day);
    await form.getByLabel('To').fill(day);
    await form.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL((url) => url.searchParams.get('start') === day && url.searchParams.get('end') === day);
    await waitForResults(
      page,
      snow.filter((id) => id.includes(modisDay(day))),
    );
    await shoot(page, 'search-one-day.png');

    // A granule id with a wildcard finds that granule, across all days.
    const target = snow.find((id) => id.includes(modisDay('2026-11-07')));
    assert.ok(target, `no snow granule of 2026-11-07 in ${snow.join(', ')}`);
    const pattern = `${target.slice(0, target.indexOf('.061'))}.*`;
    await page.goto(`${BASE_URL}/search?q=${encodeURIComponent(pattern)}`, { waitUntil: 'load' });
    await waitForResults(page, [target]);
    const row = page.getByRole('region', { name: 'Results' }).getByRole('row', { name: new RegExp(target) });
    await row.getByRole('img', { name: `Browse image of ${target}` }).waitFor();

    // Every snow granule, newest first, with the timeline of their days.
    await page.goto(`${BASE_URL}/search?q=MOD10C1*&per_page=50`, { waitUntil: 'load' });
    await waitForResults(page, snow);
    const results = page.getByRole('region', { name: 'Results' });
    assert.match(await results.innerText(), new RegExp(`${SNOW_DAYS} granules match`));
    await results.getByRole('button', { name: `Add all ${SNOW_DAYS} matching to cart` }).waitFor();
    const timeline = page.getByRole('figure', { name: 'When the granules start' });
    const canvas = timeline.locator('canvas');
    await canvas.waitFor();
    assert.match(await timeline.innerText(), /counted per day/);
    await shoot(page, 'search-timeline.png');

    // Clicking a bar narrows the dates to its day: the results are that day's granule.
    const box = await canvas.boundingBox();
    assert.ok(box, 'the timeline has no size');
    await page.mouse.click(box.x + box.width * 0.6, box.y + box.height * 0.5);
    await page.waitForURL((url) => url.searchParams.has('start'));
    const clicked = new URL(page.url()).searchParams;
    const clickedDay = clicked.get('start') ?? '';
    assert.equal(clicked.get('end'), clickedDay, 'a click narrows to one day');
    assert.equal(clicked.get('q'), 'MOD10C1*', 'the rest of the search stays');
    await waitForResults(
      page,
      snow.filter((id) => id.includes(modisDay(clickedDay))),
    );
    assert.equal(await form.getByLabel('From').inputValue(), clickedDay);

    // Dragging across bars narrows to the span, in whichever direction it goes.
    await page.goto(`${BASE_URL}/search?q=MOD10C1*&per_page=50`, { waitUntil: 'load' });
    await waitForResults(page, snow);
    const again = await canvas.boundingBox();
    assert.ok(again, 'the timeline has no size');
    await page.mouse.move(again.x + again.width * 0.7, again.y + again.height * 0.5);
    await page.mouse.down();
    await page.mouse.move(again.x + again.width * 0.5, again.y + again.height * 0.5, { steps: 5 });
    await page.mouse.move(again.x + again.width * 0.3, again.y + again.height * 0.5, { steps: 5 });
    await page.mouse.up();
    await page.waitForURL((url) => url.searchParams.has('start'));
    const span = new URL(page.url()).searchParams;
    const [from, to] = [span.get('start') ?? '', span.get('end') ?? ''];
    assert.ok(from < to, `a drag narrows to a span, not ${from}..${to}`);
    const inSpan = snow.filter((id) => {
      const dayOf = (/** @type {string} */ d) => modisDay(d);
      const days = [];
      for (let d = new Date(`${from}T00:00:00Z`); d <= new Date(`${to}T00:00:00Z`); d.setUTCDate(d.getUTCDate() + 1)) {
        days.push(dayOf(d.toISOString().slice(0, 10)));
      }
      return days.some((doy) => id.includes(doy));
    });
    assert.ok(inSpan.length > 1 && inSpan.length < snow.length, `the span ${from}..${to} holds ${inSpan.length}`);
    await waitForResults(page, inSpan);
    await shoot(page, 'search-dragged.png');

    assert.deepEqual(consoleErrors, []);
  } finally {
    await context.close();
  }
});

test('on a phone the first results are on the first screen', async () => {
  const { context, page, consoleErrors } = await openPage(browser, { width: 390, height: 844 });
  try {
    await logIn(page, SCIENTIST, '/search');
    await snowGranules(page);
    await page.goto(`${BASE_URL}/search?q=MOD10C1*`, { waitUntil: 'load' });
    const firstRow = page.getByRole('region', { name: 'Results' }).locator('tbody tr').first();
    await firstRow.waitFor();
    const row = await firstRow.boundingBox();
    assert.ok(row, 'the first result has no size');
    assert.ok(row.y + Math.min(row.height, 80) <= 844, `the first result starts at ${row.y}px, below the first screen`);
    // The first screen only, as the phone shows it.
    await page.screenshot({ path: `${SCREENSHOTS}search-phone-first-screen.png` });
    await shoot(page, 'search-phone.png');
    const wide = await page.evaluate(() =>
      Array.from(document.querySelectorAll('main *'))
        .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth)
        .slice(0, 8)
        .map((el) => `${el.tagName}.${el.className} ${Math.round(el.getBoundingClientRect().right)}`),
    );
    assert.equal(await sidewaysOverflow(page), 0, `the page scrolls sideways: ${wide.join(', ')}`);

    // The other filters are one tap away.
    const form = page.getByRole('search', { name: 'Granule search' });
    assert.equal(await form.getByLabel('From').isVisible(), false);
    await form.getByRole('button', { name: 'More filters' }).click();
    await form.getByLabel('From').waitFor();
    await shoot(page, 'search-phone-filters.png');
    assert.deepEqual(consoleErrors, []);
  } finally {
    await context.close();
  }
});
