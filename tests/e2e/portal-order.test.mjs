// A scientist's journey through the portal against a live Granary (seed_demo data, a real
// worker and beat): search by a box drawn on the map and a time range, put two granules in the
// cart (one of them only on emulated tape), order them for HTTPS download, watch the order
// page until the archive has recalled the tape one, download a file through the page's link
// and check its bytes against the checksum the page lists.
//
//   E2E_PORT=8771 scripts/e2e.sh tests/e2e/portal-order.test.mjs
//
// An operator first releases the data file of one demo granule from the disk cache (the
// archive's `cache/release` operation), so that granule lives on tape only. Screenshots of every
// page the journey passes through land in var/screenshots/portal-*.png.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';

import {
  BASE_URL, OPERATOR, SCIENTIST, launchChromium, logIn, openPage, pageText, shoot, sidewaysOverflow,
} from './browser.mjs';

// The demo granules start on 2026-11-01 (demo/granules.py).
const FROM = '2026-11-01';
const TO = '2026-11-02';
const ARCHIVE_WAIT_MS = Number(process.env.E2E_ARCHIVE_WAIT_MS || 180_000);
const READY_WAIT_MS = Number(process.env.E2E_READY_WAIT_MS || 240_000);

/** @type {import('playwright-core').Browser | undefined} */
let browser;

before(async () => {
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
});

/**
 * Call the API with the page's session (and its CSRF token on unsafe methods).
 * @param {import('playwright-core').Page} page
 * @param {string} path
 * @param {unknown} [body] JSON to POST
 * @returns {Promise<{ status: number, body: any }>}
 */
async function callApi(page, path, body) {
  return page.evaluate(
    async ({ url, json }) => {
      const token = document.cookie.match(/(?:^|; )csrftoken=([^;]*)/)?.[1] ?? '';
      const response = await fetch(url, {
        method: json === undefined ? 'GET' : 'POST',
        headers: { Accept: 'application/json', 'Content-Type': 'application/json', 'X-CSRFToken': decodeURIComponent(token) },
        body: json === undefined ? undefined : JSON.stringify(json),
      });
      return { status: response.status, body: await response.json() };
    },
    { url: path, json: body },
  );
}

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The archived demo granules of a collection on the journey's first day, once the worker has
 * ingested and archived them (seed_demo only submits them).
 * @param {import('playwright-core').Page} page
 * @param {string} collection
 */
async function archivedGranules(page, collection) {
  const deadline = Date.now() + ARCHIVE_WAIT_MS;
  for (;;) {
    const answer = await callApi(page, `/api/v1/granules/?collection=${collection}&start=${FROM}&end=${FROM}`);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    if (answer.body.results.length > 0) return answer.body.results;
    assert.ok(Date.now() < deadline, `no archived ${collection} granule of ${FROM} after ${ARCHIVE_WAIT_MS / 1000} s`);
    await sleep(1000);
  }
}

/**
 * An operator drops the data file of `granule` from the disk cache: it is on tape only now.
 * @param {{ id: number, files: { id: number, role: string }[] }} granule
 */
async function releaseDataFile(granule) {
  const { context, page } = await openPage(browser, { width: 1280, height: 800 });
  try {
    await logIn(page, OPERATOR, '/');
    const data = granule.files.filter((file) => file.role === 'data').map((file) => file.id);
    const answer = await callApi(page, '/api/v1/archive/cache/release/', { files: data });
    assert.equal(answer.status, 200, `release refused: ${JSON.stringify(answer.body)}`);
  } finally {
    await context.close();
  }
}

test('a scientist finds granules by box and time, orders one from tape and downloads it intact', async () => {
  const { context, page, consoleErrors } = await openPage(browser, { width: 1280, height: 900 });
  try {
    await logIn(page, SCIENTIST, '/search');

    // The journey's two granules: a snow cover day (its data file sent to tape only) and a sea
    // surface temperature day; both global, so any box over land and sea finds them.
    const [snow] = await archivedGranules(page, 'MOD10C1.061');
    const [sst] = await archivedGranules(page, 'GHRSST_OISST_L4.2.1');
    await releaseDataFile(snow);
    const tapeFile = snow.files.find((/** @type {{ role: string }} */ file) => file.role === 'data');

    // Search: a time range typed into the form, a box drawn on the map.
    await page.goto(`${BASE_URL}/search`, { waitUntil: 'load' });
    const form = page.getByRole('search', { name: 'Granule search' });
    await form.getByLabel('From').fill(FROM);
    await form.getByLabel('To').fill(TO);
    const map = page.getByRole('region', { name: /Map of the search box/ });
    await map.waitFor();
    await page.locator('.box-map__land').first().waitFor();
    await page.getByRole('button', { name: 'Draw a box' }).click();
    const frame = await map.boundingBox();
    assert.ok(frame, 'the map has no size');
    await page.mouse.move(frame.x + frame.width * 0.3, frame.y + frame.height * 0.25);
    await page.mouse.down();
    await page.mouse.move(frame.x + frame.width * 0.5, frame.y + frame.height * 0.5, { steps: 5 });
    await page.mouse.move(frame.x + frame.width * 0.7, frame.y + frame.height * 0.7, { steps: 5 });
    await page.mouse.up();

    await page.waitForURL((url) => url.searchParams.has('bbox'));
    const search = new URL(page.url()).searchParams;
    assert.equal(search.get('start'), FROM);
    assert.equal(search.get('end'), TO);
    const [west, south, east, north] = (search.get('bbox') ?? '').split(',').map(Number);
    assert.ok(west < east && south < north, `the drawn box is ${search.get('bbox')}`);
    await page.waitForFunction(
      (value) => /** @type {HTMLInputElement | null} */ (document.querySelector('input[name="west"]'))?.value === value,
      String(west),
    );

    const results = page.getByRole('region', { name: 'Results' });
    const snowRow = results.getByRole('row', { name: new RegExp(snow.granule_id) });
    await snowRow.waitFor().catch(async () => {
      throw new Error(`${snow.granule_id} was not found. The page says:\n${await pageText(page)}`);
    });
    assert.match(await snowRow.innerText(), /On tape/);
    const sstRow = results.getByRole('row', { name: new RegExp(sst.granule_id) });
    assert.match(await sstRow.innerText(), /In cache/);
    assert.ok((await page.locator('.box-map__footprint').count()) > 0, 'no footprint on the map');
    assert.match(await results.innerText(), /\d+ granules? match/);
    await shoot(page, 'portal-search.png');

    // The address is the search: a reload shows the same.
    await page.reload({ waitUntil: 'load' });
    await results.getByRole('row', { name: new RegExp(snow.granule_id) }).waitFor();

    // One granule from the results, the other from its own page.
    await snowRow.getByRole('button', { name: `Add ${snow.granule_id} to the cart` }).click();
    await snowRow.getByRole('link', { name: /is in the cart/ }).waitFor();

    await page.getByRole('link', { name: snow.granule_id, exact: true }).click();
    await page.getByRole('heading', { name: snow.granule_id }).waitFor();
    const browse = page.getByRole('img', { name: `Browse image of ${snow.granule_id}` });
    await browse.waitFor();
    await page.waitForFunction(
      (alt) => {
        const img = /** @type {HTMLImageElement | null} */ (document.querySelector(`img[alt="${alt}"]`));
        return img !== null && img.complete && img.naturalWidth > 0;
      },
      `Browse image of ${snow.granule_id}`,
    );
    assert.match(await page.locator('main').innerText(), /1 of 2 files are on tape only/);
    await shoot(page, 'portal-granule-on-tape.png');
    await page.getByRole('link', { name: 'Back to the search' }).click();
    await page.waitForURL((url) => url.pathname === '/search' && url.searchParams.get('bbox') !== null);

    await results.getByRole('link', { name: sst.granule_id, exact: true }).click();
    await page.getByRole('heading', { name: sst.granule_id }).waitFor();
    assert.match(await page.locator('main').innerText(), /Every file is in the disk cache/);
    await page.getByRole('button', { name: `Add ${sst.granule_id} to the cart` }).click();
    await page.getByRole('link', { name: /is in the cart/ }).waitFor();
    await shoot(page, 'portal-granule.png');

    // The cart: total size and limits, then an HTTPS order.
    await page.getByRole('link', { name: 'Cart, 2 granules' }).click();
    await page.getByRole('heading', { name: 'Cart', level: 1 }).waitFor();
    const cartTable = page.getByRole('table', { name: 'Granules in the cart' });
    await cartTable.waitFor();
    assert.equal(await cartTable.getByRole('row').count(), 4);
    const limits = page.getByRole('region', { name: 'Before you order' });
    assert.match(await limits.innerText(), /Total size\s*[\d.]+ [KMG]B/);
    assert.match(await limits.innerText(), /Open orders\s*\d+\s*of \d+ at once/);
    assert.ok(await page.getByRole('radio', { name: /HTTPS download/ }).isChecked());
    await shoot(page, 'portal-cart.png');
    await page.getByRole('button', { name: /^Order 2 granules/ }).click();

    // The order page follows the recall on its own.
    await page.waitForURL((url) => /^\/orders\/\d+$/.test(url.pathname));
    const orderId = Number(new URL(page.url()).pathname.split('/').pop());
    const heading = page.getByRole('heading', { name: new RegExp(`Order ${orderId}`) });
    await heading.waitFor();
    const tapeRow = page.getByRole('row', { name: new RegExp(tapeFile.name) });
    await tapeRow.waitFor();
    // The tape file waits for its recall (orders settle on beat's sweep, every 30 s), with the
    // archive's estimate, while the page refreshes itself.
    await tapeRow.getByText(/^Waiting for tape, ready in about \d+ min$/).waitFor({ timeout: 30_000 });
    assert.match(await page.getByRole('status').innerText(), /waiting for tape, ready in about \d+ min/);
    await shoot(page, 'portal-order-staging.png');

    await page
      .getByRole('heading', { name: new RegExp(`Order ${orderId}\\s*Ready`) })
      .waitFor({ timeout: READY_WAIT_MS })
      .catch(async () => {
        throw new Error(`order ${orderId} never got ready. The page says:\n${await pageText(page)}`);
      });
    const files = snow.files.length + sst.files.length;
    assert.equal(await page.getByRole('status').innerText(), `${files} of ${files} files ready.`);
    assert.match(await tapeRow.innerText(), /Ready/);
    await shoot(page, 'portal-order-ready.png');

    // Download the recalled file through the page's link and check it against the page's checksum.
    const listed = (await tapeRow.locator('[data-checksum]').innerText()).trim();
    assert.match(await tapeRow.innerText(), /MD5/);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      tapeRow.getByRole('link', { name: `Download ${tapeFile.name}` }).click(),
    ]);
    const path = await download.path();
    assert.ok(path, `the download of ${tapeFile.name} failed: ${await download.failure()}`);
    const bytes = await readFile(path);
    assert.equal(bytes.length, tapeFile.size);
    assert.equal(createHash('md5').update(bytes).digest('hex'), listed);
    assert.equal(listed, tapeFile.checksum);

    // The archive brought the file back into the cache for the order.
    const again = await callApi(page, `/api/v1/granules/${snow.id}/`);
    assert.equal(again.body.residency, 'cache');

    await page.getByRole('link', { name: 'My orders' }).click();
    const row = page.getByRole('row', { name: new RegExp(`Order ${orderId}`) });
    await row.waitFor();
    assert.match(await row.innerText(), /Ready|Delivered/);
    await shoot(page, 'portal-orders.png');

    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await shoot(page, 'portal-last.png');
    await context.close();
  }
});

test('the search works on a phone', async () => {
  const { context, page, consoleErrors } = await openPage(browser, { width: 390, height: 844 });
  try {
    await logIn(page, SCIENTIST, '/search');
    await page.goto(`${BASE_URL}/search?start=${FROM}&end=${TO}&bbox=-60,-40,60,60`, { waitUntil: 'load' });
    await page.getByRole('region', { name: 'Results' }).getByRole('row').nth(1).waitFor();
    // on a phone the map waits behind its toggle, above the results
    await page.getByRole('button', { name: 'Map and area tools' }).click();
    await page.locator('.box-map__land').first().waitFor();
    assert.ok((await sidewaysOverflow(page)) <= 0, 'the search page scrolls sideways on a phone');
    await shoot(page, 'portal-search-phone.png');
    await page.goto(`${BASE_URL}/orders`, { waitUntil: 'load' });
    await page.getByRole('heading', { name: 'My orders' }).waitFor();
    assert.ok((await sidewaysOverflow(page)) <= 0, 'the orders page scrolls sideways on a phone');
    await shoot(page, 'portal-orders-phone.png');
    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await context.close();
  }
});
