// The scientist's portal, #21: a collection's own page (DOI, citation, variables, extent on a
// map), reached from the collections list; and "Subscribe to this search", which carries the
// search's collections, dates, box and attribute filters into a new subscription.
//
//   E2E_PORT=8796 E2E_DB=granary_e2e_fe2 scripts/e2e.sh tests/e2e/portal-collection.test.mjs
//
// Needs the demo data (seed_demo). Screenshots: var/screenshots/collection-*.png, subscribe-*.png.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import {
  BASE_URL, SCIENTIST, launchChromium, logIn, openPage, pageText, shoot, sidewaysOverflow,
} from './browser.mjs';

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
// The demo's MOD021KM: its DOI and variables as demo/definitions.py declares them.
const COLLECTION = 'MOD021KM.061';
const DOI = '10.5067/MODIS/MOD021KM.061';

/** @type {import('playwright-core').Browser | undefined} */
let browser;

before(async () => {
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
});

/**
 * Console errors but the 400 answers the app shows by design (a preview of a half-typed filter).
 * @param {string[]} errors
 */
function unexpected(errors) {
  return errors.filter((text) => !/status of 400/.test(text));
}

/** @type {[string, { width: number, height: number }][]} */
const VIEWPORTS = [['desktop', DESKTOP], ['phone', PHONE]];

for (const [width, viewport] of VIEWPORTS) {
  test(`a collection's page shows its DOI, variables and extent (${width})`, async () => {
    const { context, page, consoleErrors } = await openPage(browser, viewport);
    try {
      const api = await context.request.get(`${BASE_URL}/api/v1/collections/${COLLECTION}/`);
      assert.equal(api.status(), 200);
      const expected = await api.json();
      assert.ok(expected.variables.length > 0, 'the demo collection lists no variables');

      await page.goto(`${BASE_URL}/`, { waitUntil: 'load' });
      await page.getByRole('link', { name: COLLECTION, exact: true }).click();
      await page.waitForURL((url) => url.pathname === `/collections/${COLLECTION}`);
      await page.getByRole('heading', { level: 1, name: expected.title }).waitFor();

      const doi = page.getByRole('link', { name: DOI });
      assert.equal(await doi.getAttribute('href'), `https://doi.org/${DOI}`);
      await page.getByText(expected.citation).waitFor();
      await page.getByRole('button', { name: 'Copy citation' }).waitFor();

      const table = page.getByRole('table', { name: 'Variables' });
      for (const variable of expected.variables) {
        const row = table.getByRole('row').filter({ hasText: variable.name });
        assert.equal(await row.count(), 1, `no row for ${variable.name}: ${await pageText(page)}`);
        if (variable.units) assert.match(await row.innerText(), new RegExp(variable.units.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      }

      const coverage = page.getByRole('region', { name: 'Coverage', exact: true });
      const text = await coverage.innerText();
      assert.match(text, /Declared by the data provider/, text);
      assert.match(text, /-180,-90,180,90/, text);
      const map = page.getByRole('region', { name: `Area covered by ${COLLECTION}` });
      await map.waitFor();
      // A global extent is an outline: the box must not fill the map with one colour.
      const outline = map.locator('path.box-map__box--outline').first();
      await outline.waitFor();
      const fill = await outline.evaluate((path) => getComputedStyle(path).fill);
      assert.equal(fill, 'none');

      await page.getByRole('link', { name: 'Search this collection' }).waitFor();
      await shoot(page, `collection-${width}.png`);
      const wide = await page.evaluate(() =>
        Array.from(document.querySelectorAll('main *:not(.leaflet-container *)'))
          .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
          .slice(0, 3)
          .map((el) => `${el.tagName}.${el.className}`),
      );
      assert.ok((await sidewaysOverflow(page)) <= 0, `the page scrolls sideways: ${wide.join(' ')}`);
      assert.deepEqual(unexpected(consoleErrors), [], 'the browser console logged errors');
    } finally {
      await context.close();
    }
  });
}

test('subscribing from a search carries its collections, dates, box and conditions', async () => {
  const { context, page, consoleErrors } = await openPage(browser, DESKTOP);
  try {
    const search = '/search?collection=MOD10C1.061&start=2026-11-01&end=2026-11-30&bbox=-20,-40,50,40&day_night=Day&cloud_below=40';
    await logIn(page, SCIENTIST, '/search');
    await page.goto(`${BASE_URL}${search}`, { waitUntil: 'load' });
    await page.getByRole('link', { name: 'Subscribe to this search' }).click();
    await page.waitForURL((url) => url.pathname === '/subscriptions/new');
    await page.getByText('Filled in from your search').waitFor();

    const name = `From a search ${Date.now()}`;
    await page.getByLabel('Name').fill(name);
    await page.getByRole('region', { name: 'Area of the subscription' }).locator('path.box-map__box').first().waitFor();
    await shoot(page, 'subscribe-from-search-desktop.png');
    await page.setViewportSize(PHONE);
    assert.ok((await sidewaysOverflow(page)) <= 0, 'the form scrolls sideways on a phone');
    await shoot(page, 'subscribe-from-search-phone.png');
    await page.setViewportSize(DESKTOP);

    await page.getByRole('button', { name: 'Create subscription' }).click();
    await page.waitForURL(/\/subscriptions\/\d+$/).catch(async () => {
      throw new Error(`not created: ${await pageText(page)}`);
    });
    const id = Number(new URL(page.url()).pathname.split('/').pop());
    const saved = await (await context.request.get(`${BASE_URL}/api/v1/subscriptions/${id}/`)).json();
    assert.equal(saved.name, name);
    assert.deepEqual(saved.collections, ['MOD10C1.061']);
    assert.deepEqual(saved.bbox, [-20, -40, 50, 40]);
    assert.equal(saved.start, '2026-11-01T00:00:00Z');
    assert.match(saved.end, /^(2026-11-30T23:59|2026-12-01T00:00:00)/);
    assert.deepEqual(
      saved.conditions.map((/** @type {{name: string, op: string, value: unknown}} */ c) => [c.name, c.op, c.value]).sort(),
      [['cloud_cover', 'lt', 40], ['day_night', 'eq', 'Day']],
    );

    // The same name again: the server's refusal is shown on the name field.
    await page.goto(`${BASE_URL}/subscriptions/new${new URL(`${BASE_URL}${search}`).search}`, { waitUntil: 'load' });
    await page.getByLabel('Name').fill(name);
    await page.getByRole('button', { name: 'Create subscription' }).click();
    await page.getByText(/You already have a subscription named/).first().waitFor();
    assert.equal(await page.getByLabel('Name').getAttribute('aria-invalid'), 'true');
    await shoot(page, 'subscribe-name-taken.png');
    assert.deepEqual(unexpected(consoleErrors), [], 'the browser console logged errors');

    // Leave the scientist's subscriptions as found: the subscription journey starts from none.
    const csrf = (await context.cookies()).find((c) => c.name === 'csrftoken')?.value ?? '';
    const gone = await context.request.delete(`${BASE_URL}/api/v1/subscriptions/${id}/`, {
      headers: { 'X-CSRFToken': csrf, Referer: `${BASE_URL}/` },
    });
    assert.equal(gone.status(), 204, await gone.text());
  } finally {
    await context.close();
  }
});
