// Operator configuration end to end (#20): the operator creates a collection with its archive
// policy in the configuration pages and gives the demo provider MODAPS the right to deliver it;
// the provider ingests a granule into it through the bulk ingest API and it shows as archived.
// Then the operator declares a 5-minute cadence for the collection (in the form), the provider
// delivers the rest of an hour but one granule in the middle, and the completeness page names
// exactly the span the journey left out.
//
//   GRANARY_URL=http://127.0.0.1:8765 node --test tests/e2e/console-config.test.mjs
//
// Needs the demo data (seed_demo) and a running worker. Screenshots: var/screenshots/config-*.png.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';

import {
  BASE_URL, OPERATOR, PROVIDER, callApi, launchChromium, logIn, openPage, pageText, shoot,
  sidewaysOverflow, stageFile,
} from './browser.mjs';

const INGEST_WAIT_MS = Number(process.env.E2E_INGEST_WAIT_MS || 180_000);
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

const SHORT_NAME = 'E2ECAD';
const VERSION = '001';
const KEY = `${SHORT_NAME}.${VERSION}`;
const TITLE = 'Journey product delivered every five minutes';
const DAY = '2026-11-10';
const CADENCE_MIN = 5;
// The hour the collection declares; the journey delivers every 5-minute slot of it but one.
const SLOTS = Array.from({ length: 12 }, (_, i) => i * CADENCE_MIN);
const LEFT_OUT = 25; // minutes past midnight: the granule that never comes

/** @param {number} minute */
const hhmm = (minute) => `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;
/** @param {number} minute */
const granuleId = (minute) => `${SHORT_NAME}.${DAY.replaceAll('-', '')}T${hhmm(minute).replace(':', '')}`;

/** @type {import('playwright-core').Browser | undefined} */
let browser;
/** @type {Awaited<ReturnType<typeof openPage>> | undefined} */
let operator;
/** @type {Awaited<ReturnType<typeof openPage>> | undefined} */
let provider;

before(async () => {
  browser = await launchChromium();
});

after(async () => {
  await operator?.context.close();
  await provider?.context.close();
  await browser?.close();
});


/**
 * Stage one file per granule and submit them as one bulk request; its id.
 * @param {import('playwright-core').BrowserContext} context
 * @param {number[]} minutes slot starts, minutes past midnight of DAY
 */
async function ingest(context, minutes) {
  const granules = [];
  for (const minute of minutes) {
    const id = granuleId(minute);
    const file = await stageFile(context, `e2e-config/${id}.dat`, randomBytes(4_000));
    granules.push({
      collection: KEY,
      granule_id: id,
      temporal: { start: `${DAY}T${hhmm(minute)}:00Z`, end: `${DAY}T${hhmm(minute + CADENCE_MIN)}:00Z` },
      bbox: [-10, -10, 10, 10],
      files: [file],
    });
  }
  const submitted = await callApi(context, 'POST', '/api/v1/ingest/requests/', { json: { granules } });
  assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
  return /** @type {number} */ (submitted.body.id);
}

/**
 * Open the provider's page of a request and wait until it shows every granule archived.
 * @param {import('playwright-core').Page} page
 * @param {number} requestId
 * @param {number[]} minutes
 */
async function seeArchived(page, requestId, minutes) {
  await page.goto(`${BASE_URL}/provider/requests/${requestId}`, { waitUntil: 'load' });
  const heading = page.getByRole('heading', { level: 1 });
  await heading.getByText(`Ingest request ${requestId}`).waitFor();
  await heading.getByText('completed').waitFor({ timeout: INGEST_WAIT_MS }).catch(async () => {
    throw new Error(`request ${requestId} never showed as completed. The page says:\n${await pageText(page)}`);
  });
  const table = page.getByRole('region', { name: 'Granules' });
  for (const minute of minutes) {
    const row = table.getByRole('row', { name: new RegExp(granuleId(minute).replace('.', '\\.')) });
    assert.match(await row.innerText(), /archived/, `${granuleId(minute)} is not archived`);
  }
}

test('a collection created in the configuration pages receives an ingest', async () => {
  operator = await openPage(browser, DESKTOP);
  const { page, consoleErrors } = operator;
  await logIn(page, OPERATOR, '/config');
  await page.getByRole('heading', { name: 'Collections', level: 1 }).waitFor();
  await page.getByRole('row', { name: /MOD021KM\.061/ }).waitFor();
  await shoot(page, 'config-collections.png');

  await page.getByRole('link', { name: 'New collection' }).click();
  await page.getByRole('heading', { name: 'New collection', level: 1 }).waitFor();
  await page.getByLabel('Short name').fill(SHORT_NAME);
  await page.getByLabel('Version').fill(VERSION);
  await page.getByLabel('Title').fill(TITLE);
  await page.getByLabel(/^File patterns/).fill(`^(?P<granule>${SHORT_NAME}\\.\\d{8}T\\d{4})\\.dat$`);
  await page.getByLabel('Number of copies').selectOption('2');
  // Copy targets are volume groups (tape) and buckets (the object store e2e.sh starts), each
  // labelled by its medium.
  const first = page.getByLabel('Copy 1 target');
  await first.locator('option', { hasText: 'object store: granary-archive' }).waitFor({ state: 'attached' });
  const offered = await first.locator('option').allInnerTexts();
  for (const label of ['tape: primary (silo1)', 'tape: backup (silo2)', 'object store: granary-archive']) {
    assert.ok(offered.includes(label), `${label} is not offered: ${offered.join(', ')}`);
  }
  await first.selectOption('primary');
  await page.getByLabel('Copy 2 target').selectOption('backup');
  await page.getByLabel('Days new granules stay in the cache').fill('3');
  await page.getByLabel('Reason (kept in the audit log)').fill('journey product');
  await shoot(page, 'config-collection-new.png');
  await page.getByRole('button', { name: 'Create collection' }).click();
  await page.getByText(`Collection ${KEY} created.`).waitFor();
  const row = page.getByRole('row', { name: new RegExp(KEY.replace('.', '\\.')) });
  assert.match(await row.innerText(), /primary \+ backup[\s\S]*3/);

  // The right to deliver it, given in the provider's page.
  await page.getByRole('navigation', { name: 'Configuration' }).getByRole('link', { name: 'Providers' }).click();
  await page.getByRole('link', { name: 'MODAPS', exact: true }).click();
  await page.getByRole('heading', { name: 'Provider MODAPS', level: 1 }).waitFor();
  await page.getByRole('checkbox', { name: new RegExp(KEY.replace('.', '\\.')) }).check();
  await page.getByLabel('Reason (kept in the audit log)').fill('MODAPS delivers the journey product');
  await page.getByRole('button', { name: 'Save provider' }).click();
  await page.getByText('Saved MODAPS.').waitFor();
  await shoot(page, 'config-provider.png');
  const rights = await callApi(operator.context, 'GET', '/api/v1/config/providers/MODAPS/');
  assert.ok(rights.body.collections.includes(KEY), JSON.stringify(rights.body));

  provider = await openPage(browser, DESKTOP);
  await logIn(provider.page, PROVIDER, '/provider');
  const requestId = await ingest(provider.context, [0]);
  await seeArchived(provider.page, requestId, [0]);
  await shoot(provider.page, 'config-ingest-archived.png');
  assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
});

test('the completeness page names the span the provider left out', async () => {
  assert.ok(operator && provider, 'an earlier step failed');
  const { page, consoleErrors } = operator;
  await page.goto(`${BASE_URL}/config/collections/${encodeURIComponent(KEY)}`, { waitUntil: 'load' });
  await page.getByRole('heading', { name: `Collection ${KEY}`, level: 1 }).waitFor();
  await page.getByLabel('One granule every', { exact: true }).fill(String(CADENCE_MIN));
  await page.getByLabel('One granule every: unit').selectOption('minutes');
  await page.getByLabel('Starts (UTC)').fill(`${DAY}T00:00`);
  await page.getByLabel('Ends (UTC; blank: ongoing)').fill(`${DAY}T01:00`);
  await page.getByLabel('Reason (kept in the audit log)').fill('MODAPS promised one every 5 minutes');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText(`Saved ${KEY}.`).waitFor();
  assert.match(await page.getByRole('row', { name: new RegExp(KEY.replace('.', '\\.')) }).innerText(), /5 minutes/);

  const rest = SLOTS.filter((minute) => minute !== 0 && minute !== LEFT_OUT);
  const requestId = await ingest(provider.context, rest);
  await seeArchived(provider.page, requestId, rest);

  await page.getByRole('navigation', { name: 'Configuration' }).getByRole('link', { name: 'Completeness' }).click();
  await page.getByRole('heading', { name: 'Completeness', level: 1 }).waitFor();
  await page.getByLabel('Collection').selectOption(KEY);
  await page.getByLabel('Day (UTC)').fill(DAY);
  const figures = page.getByRole('definition');
  await page.getByRole('table', { name: 'Gaps' }).waitFor().catch(async () => {
    throw new Error(`no gap table. The page says:\n${await pageText(page)}`);
  });
  // 12 slots in the declared hour, 11 delivered: one missing, from 00:25 to 00:30.
  assert.deepEqual(await figures.allInnerTexts(), ['12', '11', '1', 'no target']);
  const gaps = page.getByRole('table', { name: 'Gaps' }).getByRole('row');
  assert.equal(await gaps.count(), 2, await page.getByRole('table', { name: 'Gaps' }).innerText());
  const gap = (await gaps.nth(1).innerText()).split('\t').map((cell) => cell.trim());
  assert.deepEqual(gap, [`${DAY} ${hhmm(LEFT_OUT)} UTC`, `${DAY} ${hhmm(LEFT_OUT + CADENCE_MIN)} UTC`, '1']);
  await shoot(page, 'config-completeness.png');
  assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
});

test('the configuration and completeness pages fit a phone', async () => {
  const phone = await openPage(browser, PHONE);
  try {
    const { page, consoleErrors } = phone;
    await logIn(page, OPERATOR, '/config');
    const pages = [
      ['/config', 'Collections', 'config-collections-phone.png'],
      [`/config/collections/${encodeURIComponent(KEY)}`, `Collection ${KEY}`, 'config-collection-phone.png'],
      ['/config/providers', 'Providers', 'config-providers-phone.png'],
      ['/config/providers/MODAPS', 'Provider MODAPS', 'config-provider-phone.png'],
      ['/config/users', 'Users', 'config-users-phone.png'],
      ['/config/audit', 'Audit log', 'config-audit-phone.png'],
      [`/config/completeness?collection=${encodeURIComponent(KEY)}&day=${DAY}`, 'Completeness', 'config-completeness-phone.png'],
    ];
    for (const [path, heading, file] of pages) {
      await page.goto(`${BASE_URL}${path}`, { waitUntil: 'load' });
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
      await page.waitForLoadState('networkidle');
      await shoot(page, file);
      assert.ok((await sidewaysOverflow(page)) <= 0, `${path} scrolls sideways on a phone`);
    }
    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await phone.context.close();
  }
});

test('the other configuration pages at desktop width', async () => {
  assert.ok(operator, 'an earlier step failed');
  const { page } = operator;
  for (const [path, heading, file] of [
    ['/config/providers', 'Providers', 'config-providers.png'],
    ['/config/users', 'Users', 'config-users.png'],
    ['/config/audit', 'Audit log', 'config-audit.png'],
    [`/config/collections/${encodeURIComponent(KEY)}`, `Collection ${KEY}`, 'config-collection-edit.png'],
  ]) {
    await page.goto(`${BASE_URL}${path}`, { waitUntil: 'load' });
    await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
    await page.waitForLoadState('networkidle');
    await shoot(page, file);
    assert.ok((await sidewaysOverflow(page)) <= 0, `${path} scrolls sideways`);
  }
});
