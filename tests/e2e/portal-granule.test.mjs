// A granule's page as a scientist meets it (issue #34 items 4, 5, 7, 10): an operator releases
// the data of a MODIS granule (tape only) and of a sea surface temperature granule (copy 1 in
// the demo's bucket) from the disk cache. The tape-only granule's browse image still shows, on
// its page and in search, with no console error, and its data file offers "order" only; the
// other's data file downloads from its page at once (straight from the bucket), bytes hashing to
// the catalog's checksum; a cached file downloads too. Its variables read as a table, not JSON.
// A granule withdrawn while in the cart is listed there as withdrawn, with the time, and its
// page says so instead of Django's "No Granule matches the given query."
//
//   E2E_PORT=8821 scripts/e2e.sh tests/e2e/portal-granule.test.mjs
//
// Screenshots: var/screenshots/granule-*.png.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';

import { BASE_URL, OPERATOR, callApi, launchChromium, logIn, openPage, pageText, shoot } from './browser.mjs';

const RUN = Date.now();
// A user of its own, so no other journey's cart or orders get in the way.
const USER = { user: `granules${RUN}`, password: `granary-${RUN}` };
const WAIT_MS = Number(process.env.E2E_ARCHIVE_WAIT_MS || 180_000);

/** @type {import('playwright-core').Browser | undefined} */
let browser;

before(async () => {
  execFileSync('.venv/bin/python', ['manage.py', 'shell', '-c',
    `from backend.accounts.services import create_user; create_user(${JSON.stringify(USER.user)}, "user", password=${JSON.stringify(USER.password)})`]);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
});

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Archived granules of a collection, every file in the disk cache and every copy written (so
 * the cache may let go).
 * @param {import('playwright-core').BrowserContext} context
 * @param {string} collection
 * @param {number} count
 */
async function archived(context, collection, count) {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const answer = await callApi(context, 'GET', `/api/v1/granules/?collection=${collection}&state=archived&limit=50`);
    /** @type {any[]} */
    const found = [];
    for (const granule of answer.body.results ?? []) {
      const detail = (await callApi(context, 'GET', `/api/v1/granules/${granule.id}/`)).body;
      const complete = detail.files.every((/** @type {any} */ f) => f.in_cache &&
        f.copies.filter((/** @type {any} */ c) => c.state === 'verified').length >= 2);
      if (complete) found.push(detail);
      if (found.length === count) return found;
    }
    assert.ok(Date.now() < deadline, `fewer than ${count} ${collection} granules with every copy verified`);
    await sleep(2000);
  }
}

/** @param {any} granule */
const dataFile = (granule) => granule.files.find((/** @type {any} */ f) => f.role === 'data');
/** @param {any} granule */
const browseFile = (granule) => granule.files.find((/** @type {any} */ f) => f.role === 'browse');

/** A file's row in a granule's file table (not its sidecar's, whose name starts the same). */
const fileRow = (/** @type {any} */ file) => new RegExp(`^${file.name.replaceAll('.', '\\.')} `);

/**
 * The downloaded file's checksum of the catalog's kind.
 * @param {string} path
 * @param {string} kind
 */
async function digest(path, kind) {
  return createHash(kind.toLowerCase().replace('-', '')).update(await readFile(path)).digest('hex');
}

test('data on disk or in the bucket downloads from its page; browse images outlive the cache', async () => {
  const operator = await openPage(browser, { width: 1440, height: 900 });
  const { context, page, consoleErrors } = await openPage(browser, { width: 1440, height: 900 });
  try {
    await logIn(operator.page, OPERATOR, '/');
    const [modis] = await archived(operator.context, 'MOD021KM.061', 1);
    const [sst, cached] = await archived(operator.context, 'GHRSST_OISST_L4.2.1', 2);
    assert.ok(browseFile(modis), 'the demo MODIS granule has no browse image');

    // Every file of both released, as an operator frees the cache: the browse images stay, and
    // the answer says why.
    const files = [...modis.files, ...sst.files].map((/** @type {any} */ f) => f.id);
    const released = await callApi(operator.context, 'POST', '/api/v1/archive/cache/release/', { json: { files } });
    assert.equal(released.status, 200, JSON.stringify(released.body));
    const kept = Object.fromEntries(released.body.kept.map((/** @type {any} */ k) => [k.file, k.reason]));
    assert.match(kept[browseFile(modis).id] ?? '', /browse image/, JSON.stringify(released.body));
    assert.ok(released.body.files.includes(dataFile(modis).id), JSON.stringify(released.body));

    await logIn(page, USER, '/search');

    // The tape-only granule: its browse image shows; its data needs an order.
    await page.goto(`${BASE_URL}/granules/${modis.id}`, { waitUntil: 'load' });
    await page.getByRole('heading', { name: modis.granule_id }).waitFor();
    const image = page.getByRole('img', { name: `Browse image of ${modis.granule_id}` });
    await image.waitFor();
    await page.waitForFunction((name) => {
      const img = /** @type {HTMLImageElement | null} */ (document.querySelector(`img[alt="Browse image of ${name}"]`));
      return img !== null && img.complete && img.naturalWidth > 0;
    }, modis.granule_id);
    const files1 = page.getByRole('table', { name: `Files of ${modis.granule_id}` });
    const modisData = files1.getByRole('row', { name: fileRow(dataFile(modis)) });
    await modisData.getByText('Order it: on tape only').waitFor();
    assert.equal(await modisData.getByRole('link', { name: /^Download/ }).count(), 0);
    await page.getByText(/\d+ of \d+ files are on tape only/).waitFor();
    await shoot(page, 'granule-tape-only.png');

    // …and in the search results, its thumbnail loads too.
    await page.goto(`${BASE_URL}/search?q=${encodeURIComponent(modis.granule_id)}`, { waitUntil: 'load' });
    await page.waitForFunction((name) => {
      const img = /** @type {HTMLImageElement | null} */ (document.querySelector(`.search-results img[alt="Browse image of ${name}"]`));
      return img !== null && img.complete && img.naturalWidth > 0;
    }, modis.granule_id);

    // The granule in the bucket: its data downloads from the page at once, intact.
    await page.goto(`${BASE_URL}/granules/${sst.id}`, { waitUntil: 'load' });
    const sstData = dataFile(sst);
    const row = page.getByRole('table', { name: `Files of ${sst.granule_id}` })
      .getByRole('row', { name: fileRow(sstData) });
    await row.getByText('Not in cache').waitFor();
    const [fromBucket] = await Promise.all([
      page.waitForEvent('download'),
      row.getByRole('link', { name: `Download ${sstData.name}` }).click(),
    ]);
    assert.equal(fromBucket.suggestedFilename(), sstData.name);
    const bucketPath = await fromBucket.path();
    assert.ok(bucketPath, await fromBucket.failure() ?? 'no download');
    assert.equal(await digest(bucketPath, sstData.checksum_type), sstData.checksum);

    // Its variables, a table of names, units and shapes.
    const variables = page.getByRole('table', { name: 'Variables of the granule' });
    await variables.getByRole('row', { name: /^analysed_sst / }).getByText('kelvin').waitFor();
    assert.equal(await page.getByText(/\{"name"/).count(), 0, 'raw JSON is still shown');
    await shoot(page, 'granule-object-store.png');

    // A granule in the disk cache downloads the same way.
    await page.goto(`${BASE_URL}/granules/${cached.id}`, { waitUntil: 'load' });
    const cachedData = dataFile(cached);
    const [fromCache] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: `Download ${cachedData.name}` }).click(),
    ]);
    const cachePath = await fromCache.path();
    assert.ok(cachePath, await fromCache.failure() ?? 'no download');
    assert.equal(await digest(cachePath, cachedData.checksum_type), cachedData.checksum);

    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await context.close();
    await operator.context.close();
  }
});

test('a granule withdrawn while in the cart is said to be withdrawn, and when', async () => {
  const operator = await openPage(browser, { width: 1440, height: 900 });
  const { context, page, consoleErrors } = await openPage(browser, { width: 1440, height: 900 });
  /** @type {number | null} */
  let goneId = null;
  try {
    await logIn(operator.page, OPERATOR, '/');
    const [kept, gone] = await archived(operator.context, 'MOD10C1.061', 2);
    goneId = gone.id;
    await logIn(page, USER, '/search');
    const added = await callApi(context, 'POST', '/api/v1/cart/', { json: { granules: [kept.id, gone.id] } });
    assert.equal(added.status, 200, JSON.stringify(added.body));

    const before = Date.now();
    const withdrawn = await callApi(operator.context, 'POST', `/api/v1/console/granules/${gone.id}/withdraw/`, {
      json: { reason: 'e2e: calibration error' },
    });
    assert.equal(withdrawn.status, 200, JSON.stringify(withdrawn.body));

    await page.goto(`${BASE_URL}/cart`, { waitUntil: 'load' });
    const notice = page.getByRole('region', { name: 'A granule in your cart was withdrawn' });
    await notice.waitFor().catch(async () => {
      throw new Error(`the cart does not say it. The page says:\n${await pageText(page)}`);
    });
    const said = await notice.innerText();
    assert.ok(said.includes(gone.granule_id), said);
    assert.match(said, /e2e: calibration error/);
    const when = said.match(/withdrawn on (\d{4}-\d{2}-\d{2} \d{2}:\d{2}) UTC/);
    assert.ok(when, said);
    const at = Date.parse(`${when[1].replace(' ', 'T')}:00Z`);
    assert.ok(Math.abs(at - before) < 120_000, `withdrawn at ${when[1]}, asked at ${new Date(before).toISOString()}`);
    // The rest is still ordered as one.
    await page.getByRole('button', { name: /^Order 1 granule/ }).waitFor();
    await shoot(page, 'granule-withdrawn-cart.png');

    // Its page says the same, not Django's words.
    await page.goto(`${BASE_URL}/granules/${gone.id}`, { waitUntil: 'load' });
    await page.getByRole('heading', { name: `Granule ${gone.id} was withdrawn` }).waitFor();
    const alert = await page.getByRole('alert').innerText();
    assert.ok(alert.includes(`Withdrawn on ${when[1]} UTC`), alert);
    assert.match(alert, /e2e: calibration error/);
    assert.equal(await page.getByText('No Granule matches the given query.').count(), 0);
    await shoot(page, 'granule-withdrawn-page.png');
    // The one error Chromium logs is the page's 410 itself.
    const others = consoleErrors.filter((line) => !/status of 410/.test(line));
    assert.deepEqual(others, [], 'the browser console logged errors');
  } finally {
    // the demo's granule comes back: later journeys count the demo's snow granules
    if (goneId !== null) {
      const restored = await callApi(operator.context, 'POST', `/api/v1/console/granules/${goneId}/restore/`, {
        json: { reason: 'e2e: withdrawn by mistake' },
      });
      assert.equal(restored.status, 200, JSON.stringify(restored.body));
    }
    await context.close();
    await operator.context.close();
  }
});
