// Subsetting at order (issue #32) against a live Granary (seed_demo data, a real worker on every
// queue, `transform` included): a scientist puts 5 GHRSST days in the cart, cuts them in the cart
// to a box and one variable (the cart shows the estimated size, and refuses an impossible
// choice before ordering), orders, waits on the order page until every file is cut, downloads
// each through the page's link, checks it against the listed SHA-256, and opens it with xarray: only
// that variable, only that box. (tests/distribution/test_subset_orders.py checks the values
// against numpy on the whole file.)
//
//   E2E_PORT=8891 E2E_S3_PORT=8892 scripts/e2e.sh tests/e2e/portal-subset.test.mjs
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';

import {
  SCIENTIST, callApi, launchChromium, logIn, openPage, pageText, shoot, until,
} from './browser.mjs';

const COLLECTION = 'GHRSST_OISST_L4.2.1';
const BOX = { West: '-10', South: '30', East: '20', North: '50' };
const ARCHIVE_WAIT_MS = Number(process.env.E2E_ARCHIVE_WAIT_MS || 180_000);
const READY_WAIT_MS = Number(process.env.E2E_READY_WAIT_MS || 240_000);

/** What xarray sees in a file: its data variables and the extent of its coordinates. */
const OPEN_WITH_XARRAY = `
import json, sys, xarray
with xarray.open_dataset(sys.argv[1]) as ds:
    print(json.dumps({"variables": sorted(ds.data_vars), "lat": [float(ds.lat.min()), float(ds.lat.max())],
                      "lon": [float(ds.lon.min()), float(ds.lon.max())], "history": ds.attrs.get("history", "")}))
`;

/** @type {import('playwright-core').Browser | undefined} */
let browser;

before(async () => {
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
});

test('a scientist orders 5 GHRSST days cut to a box and one variable, and downloads only that', async () => {
  const { context, page, consoleErrors } = await openPage(browser, { width: 1280, height: 1000 });
  try {
    await logIn(page, SCIENTIST, '/cart');
    const days = await until(async () => {
      const answer = await callApi(context, 'GET', `/api/v1/granules/?collection=${COLLECTION}&limit=20`);
      const archived = (answer.body.results ?? []).filter((/** @type {{ state: string }} */ g) => g.state === 'archived');
      return archived.length >= 5 && archived.slice(0, 5);
    }, `fewer than 5 archived ${COLLECTION} granules`, ARCHIVE_WAIT_MS);
    await callApi(context, 'DELETE', '/api/v1/cart/');
    const added = await callApi(context, 'POST', '/api/v1/cart/', {
      json: { granules: days.map((/** @type {{ id: number }} */ g) => g.id) },
    });
    assert.equal(added.status, 200, JSON.stringify(added.body));

    await page.reload({ waitUntil: 'load' });
    await page.getByRole('heading', { name: 'Cart', level: 1 }).waitFor();
    await page.getByRole('checkbox', { name: /Cut each file/ }).check();
    await page.getByRole('checkbox', { name: 'analysed_sst' }).check();
    for (const [side, value] of Object.entries(BOX)) await page.getByLabel(side, { exact: true }).fill(value);
    const estimate = page.getByRole('status').filter({ hasText: /About|Estimating|variable|outside/ });
    await estimate.filter({ hasText: /^About [\d.]+ [KMG]?B of [\d.]+ [KMG]?B/ }).waitFor();

    // An impossible choice is refused in the cart, before ordering.
    await page.getByLabel('From (UTC, ISO 8601)').fill('2031-01-01T00:00:00Z');
    await estimate.filter({ hasText: /outside every granule/ }).waitFor();
    assert.ok(await page.getByRole('button', { name: /^Order 5 granules/ }).isDisabled());
    await page.getByLabel('From (UTC, ISO 8601)').fill('');
    await estimate.filter({ hasText: /^About/ }).waitFor();
    await shoot(page, 'portal-subset-cart.png');
    await page.getByRole('button', { name: /^Order 5 granules .*estimated/ }).click();

    await page.waitForURL((url) => /^\/orders\/\d+$/.test(url.pathname));
    const orderId = Number(new URL(page.url()).pathname.split('/').pop());
    await page
      .getByRole('heading', { name: new RegExp(`Order ${orderId}\\s*Ready`) })
      .waitFor({ timeout: READY_WAIT_MS })
      .catch(async () => {
        throw new Error(`order ${orderId} never got ready. The page says:\n${await pageText(page)}`);
      });
    await shoot(page, 'portal-subset-order.png');

    const links = (await callApi(context, 'GET', `/api/v1/orders/${orderId}/links/`)).body;
    assert.equal(links.links.length, 5, JSON.stringify(links));
    for (const link of links.links) {
      assert.match(link.name, /\.subset\.nc$/);
      const row = page.getByRole('row', { name: new RegExp(link.name.replaceAll('.', '\\.')) });
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        row.getByRole('link', { name: `Download ${link.name}` }).click(),
      ]);
      const path = await download.path();
      assert.ok(path, `the download of ${link.name} failed: ${await download.failure()}`);
      const bytes = await readFile(path);
      assert.equal(bytes.length, link.size);
      assert.equal(link.checksum_type, 'SHA256');
      assert.equal(createHash('sha256').update(bytes).digest('hex'), link.checksum);
      const seen = JSON.parse(execFileSync('.venv/bin/python', ['-c', OPEN_WITH_XARRAY, path], { encoding: 'utf8' }));
      assert.deepEqual(seen.variables, ['analysed_sst']);
      assert.ok(seen.lat[0] >= 30 && seen.lat[1] <= 50, `latitudes ${seen.lat}`);
      assert.ok(seen.lon[0] >= -10 && seen.lon[1] <= 20, `longitudes ${seen.lon}`);
      assert.match(seen.history, new RegExp(`Granary order ${orderId}`));
    }
    // the cart's refusal of the impossible time range is a 400 the browser logs; nothing else
    const refusals = consoleErrors.filter((line) => /status of 400 \(Bad Request\)/.test(line));
    assert.ok(refusals.length >= 1, 'the impossible choice was not asked about');
    assert.deepEqual(consoleErrors.filter((line) => !refusals.includes(line)), [], 'the browser console logged errors');
  } finally {
    await shoot(page, 'portal-subset-last.png');
    await context.close();
  }
});
