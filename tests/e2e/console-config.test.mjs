// The operators' configuration end to end: a collection created in the UI (with its archive
// policy, delivered by MODAPS) receives an ingest through the provider API and shows archived;
// a collection with a cadence missing one granule shows that gap on the completeness page.
//
//   GRANARY_URL=http://127.0.0.1:8765 node --test tests/e2e/console-config.test.mjs
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';

import { BASE_URL, launchChromium, logIn, openPage, pageText, shoot, sidewaysOverflow } from './browser.mjs';

const OPERATOR = { user: process.env.E2E_OPERATOR || 'operator', password: process.env.E2E_OPERATOR_PASSWORD || 'granary-operator' };
const PROVIDER = { user: 'modaps', password: 'granary-provider' };
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const STAMP = String(Date.now()).slice(-6);
const DAY = '2026-01-15';

/** @type {import('playwright-core').Browser | undefined} */
let browser;

before(async () => {
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
});

/**
 * Create a collection through the form, with two copies and optionally a cadence and extent.
 * @param {import('playwright-core').Page} page
 * @param {{ shortName: string, cadenceMinutes?: string, start?: string, end?: string }} spec
 */
async function createCollection(page, { shortName, cadenceMinutes, start, end }) {
  await page.goto(`${BASE_URL}/config/collections/new`, { waitUntil: 'load' });
  await page.getByLabel('Short name').fill(shortName);
  await page.getByLabel('Version').fill('1');
  await page.getByLabel('Title', { exact: true }).fill(`Journey product ${shortName}`);
  await page.getByLabel(/^File patterns/).fill(`^(?P<granule>${shortName}\\.\\d+)\\.dat$`);
  await page.getByLabel('Number of copies').selectOption('2');
  await page.getByRole('option', { name: /^backup/ }).first().waitFor({ state: 'attached' });
  await page.getByLabel('Copy 1 volume group').selectOption('primary');
  await page.getByLabel('Copy 2 volume group').selectOption('backup');
  if (cadenceMinutes) await page.getByLabel('One granule every', { exact: true }).fill(cadenceMinutes);
  if (start) await page.getByLabel('Starts (UTC)').fill(start);
  if (end) await page.getByLabel(/^Ends \(UTC/).fill(end);
  await page.getByRole('button', { name: 'Create collection' }).click();
  await page.getByText(`Collection ${shortName}.1 created.`).waitFor().catch(async () => {
    throw new Error(`not created: ${await pageText(page)}`);
  });
}

/**
 * Tick the collection on MODAPS's page and save.
 * @param {import('playwright-core').Page} page
 * @param {string} key
 */
async function letModapsDeliver(page, key) {
  await page.goto(`${BASE_URL}/config/providers/MODAPS`, { waitUntil: 'load' });
  await page.getByRole('checkbox', { name: new RegExp(key.replace('.', '\\.')) }).check();
  await page.getByRole('button', { name: 'Save provider' }).click();
  await page.getByText('Saved MODAPS.').waitFor();
}

/**
 * As the page's (provider) session: upload each granule's file, submit one ingest request,
 * wait until it is final; returns the request.
 * @param {import('playwright-core').Page} page
 * @param {string} key
 * @param {{ id: string, start: string, end: string }[]} granules
 */
async function ingest(page, key, granules) {
  const specs = granules.map((g) => {
    const text = `bytes of ${g.id} ${STAMP}\n`.repeat(50);
    return { ...g, text, name: `${g.id}.dat`, md5: createHash('md5').update(text).digest('hex') };
  });
  return page.evaluate(
    async ({ key, specs, folder }) => {
      const csrf = document.cookie.split('; ').find((c) => c.startsWith('csrftoken='))?.split('=')[1] ?? '';
      for (const s of specs) {
        const put = await fetch(`/api/v1/ingest/uploads/${folder}/${s.name}`, {
          method: 'PUT',
          body: s.text,
          headers: { 'X-CSRFToken': csrf, 'X-Checksum-Type': 'MD5', 'X-Checksum': s.md5, 'Content-Type': 'application/octet-stream' },
        });
        if (!put.ok) throw new Error(`upload ${s.name}: ${put.status} ${await put.text()}`);
      }
      const body = {
        granules: specs.map((s) => ({
          collection: key,
          granule_id: s.id,
          temporal: { start: s.start, end: s.end },
          bbox: [-10, -10, 10, 10],
          files: [{ name: s.name, path: `${folder}/${s.name}`, size: new Blob([s.text]).size, checksum_type: 'MD5', checksum: s.md5 }],
        })),
      };
      const made = await fetch('/api/v1/ingest/requests/', {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'X-CSRFToken': csrf, 'Content-Type': 'application/json', Accept: 'application/json' },
      });
      const request = await made.json();
      if (!made.ok) throw new Error(`ingest request: ${made.status} ${JSON.stringify(request)}`);
      for (let i = 0; i < 240; i++) {
        const now = await (await fetch(`/api/v1/ingest/requests/${request.id}/`)).json();
        if (now.state === 'completed' || now.state === 'failed') return now;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      throw new Error(`ingest request ${request.id} did not finish`);
    },
    { key, specs, folder: `journey-${key}` },
  );
}

test('a collection created in the UI receives an ingest and shows archived', async () => {
  const shortName = `CFGA${STAMP}`;
  const key = `${shortName}.1`;
  const ops = await openPage(browser, DESKTOP);
  const prov = await openPage(browser, DESKTOP);
  try {
    await logIn(ops.page, OPERATOR, '/config');
    await createCollection(ops.page, { shortName });
    const row = ops.page.getByRole('row').filter({ hasText: key });
    assert.match(await row.innerText(), /primary \+ backup/);
    await shoot(ops.page, 'config-collections-desktop.png');
    await letModapsDeliver(ops.page, key);

    await logIn(prov.page, PROVIDER, '/provider');
    const granuleId = `${shortName}.0001`;
    const request = await ingest(prov.page, key, [
      { id: granuleId, start: '2026-01-10T00:00:00Z', end: '2026-01-10T00:05:00Z' },
    ]);
    assert.equal(request.state, 'completed', JSON.stringify(request));

    // The provider's request page shows it archived, linking to the granule.
    await prov.page.goto(`${BASE_URL}/provider/requests/${request.id}`, { waitUntil: 'load' });
    await prov.page.getByText(/1 of 1 granules\s+archived/).waitFor().catch(async () => {
      throw new Error(`not archived: ${await pageText(prov.page)}`);
    });
    await prov.page.getByRole('link', { name: granuleId }).click();
    await prov.page.waitForURL(/\/granules\/\d+$/);
    const granulePath = new URL(prov.page.url()).pathname;

    // The operator sees the granule archived, with its two copies.
    await ops.page.goto(`${BASE_URL}${granulePath}`, { waitUntil: 'load' });
    await ops.page.getByRole('heading', { name: granuleId }).waitFor();
    const archived = await ops.page.getByText('Archived', { exact: true }).locator('xpath=following-sibling::*[1]').innerText();
    assert.match(archived, /\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/, await pageText(ops.page));
    await shoot(ops.page, 'config-ingested-granule-desktop.png');

    await ops.page.goto(`${BASE_URL}/config/audit?target_type=collection`, { waitUntil: 'load' });
    await ops.page.getByText(`collection ${key}`).waitFor();
    await ops.page.setViewportSize(PHONE);
    assert.ok((await sidewaysOverflow(ops.page)) <= 0, 'the audit log scrolls sideways on a phone');
    await shoot(ops.page, 'config-audit-phone.png');
    assert.deepEqual(ops.consoleErrors, []);
  } finally {
    await ops.context.close();
    await prov.context.close();
  }
});

test('the completeness report names the gap the journey made', async () => {
  const shortName = `CFGB${STAMP}`;
  const key = `${shortName}.1`;
  const ops = await openPage(browser, DESKTOP);
  const prov = await openPage(browser, DESKTOP);
  try {
    await logIn(ops.page, OPERATOR, '/config');
    await createCollection(ops.page, {
      shortName, cadenceMinutes: '5', start: `${DAY}T10:00`, end: `${DAY}T10:25`,
    });
    await letModapsDeliver(ops.page, key);
    await logIn(prov.page, PROVIDER, '/provider');
    /** @param {number} minutes */
    const at = (minutes) => `${DAY}T10:${String(minutes).padStart(2, '0')}:00Z`;
    const request = await ingest(prov.page, key, [0, 1, 3, 4].map((i) => ({
      id: `${shortName}.${i}`, start: at(5 * i), end: at(5 * i + 5),
    })));
    assert.equal(request.state, 'completed', JSON.stringify(request));

    await ops.page.goto(`${BASE_URL}/config/completeness?collection=${key}&day=${DAY}`, { waitUntil: 'load' });
    const gaps = ops.page.getByRole('table', { name: 'Gaps' });
    await gaps.waitFor().catch(async () => {
      throw new Error(`no gaps table: ${await pageText(ops.page)}`);
    });
    const rows = await gaps.locator('tbody tr').allInnerTexts();
    assert.equal(rows.length, 1, rows.join('\n'));
    assert.match(rows[0], new RegExp(`${DAY} 10:10 UTC[\\s\\S]*${DAY} 10:15 UTC[\\s\\S]*1`));
    /** @param {string} term */
    const figure = async (term) => ops.page.locator('dt', { hasText: term }).locator('xpath=following-sibling::dd').innerText();
    assert.deepEqual([await figure('Expected'), await figure('Received'), await figure('Missing')], ['5', '4', '1']);
    await shoot(ops.page, 'config-completeness-desktop.png');
    await ops.page.setViewportSize(PHONE);
    assert.ok((await sidewaysOverflow(ops.page)) <= 0, 'the completeness page scrolls sideways on a phone');
    await shoot(ops.page, 'config-completeness-phone.png');
    assert.deepEqual(ops.consoleErrors, []);
  } finally {
    await ops.context.close();
    await prov.context.close();
  }
});
