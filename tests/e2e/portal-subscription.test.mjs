// A subscription end to end: a scientist subscribes to MOD021KM over a box and a month through
// the web page and sees the preview; the provider delivers one granule inside the box and one
// outside it through the real bulk ingest API (uploads, then a request), plus a PDR; the worker
// archives them; the scientist's delivery log shows the matching granule, and only it, without
// a reload; the provider follows its requests and the PAN in the provider view.
//
//   GRANARY_URL=http://127.0.0.1:8765 node --test tests/e2e/portal-subscription.test.mjs
//
// Needs the demo data (seed_demo) and a running worker. Screenshots: var/screenshots/portal-*.png.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';

import {
  BASE_URL, PROVIDER, SCIENTIST, callApi, launchChromium, logIn, openPage, pageText, shoot,
  sidewaysOverflow, stageFile,
} from './browser.mjs';

const INGEST_WAIT_MS = Number(process.env.E2E_INGEST_WAIT_MS || 180_000);
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

// The subscription: MOD021KM over Africa and Europe in November 2026 (the demo's month).
const COLLECTION = 'MOD021KM.061';
const BOX = { West: -20, South: -40, East: 50, North: 40 };
const WINDOW = { From: '2026-11-01', To: '2026-11-30' };

// Names the collection's file pattern accepts, new on every run (HHMM from the clock).
const RUN = Date.now();
/** @param {number} offset minutes after now */
function granuleId(offset) {
  const minute = (Math.floor(RUN / 60_000) + offset) % 1440;
  const hhmm = `${String(Math.floor(minute / 60)).padStart(2, '0')}${String(minute % 60).padStart(2, '0')}`;
  return `MOD021KM.A2026324.${hhmm}.061.${String(RUN).slice(-13).padStart(13, '0')}`;
}
const INSIDE = granuleId(0);
const OUTSIDE = granuleId(1);
const PDR_GOOD = granuleId(2);
const PDR_BAD = granuleId(3);

/** @type {import('playwright-core').Browser | undefined} */
let browser;
/** The scientist's and the provider's sessions, kept across the steps. */
/** @type {Awaited<ReturnType<typeof openPage>> | undefined} */
let scientist;
/** @type {Awaited<ReturnType<typeof openPage>> | undefined} */
let provider;
/** @type {number | undefined} */
let subscriptionId;
/** @type {number | undefined} */
let bulkRequestId;
/** @type {number | undefined} */
let pdrId;

before(async () => {
  browser = await launchChromium();
});

after(async () => {
  await scientist?.context.close();
  await provider?.context.close();
  await browser?.close();
});


/**
 * Poll until `check` returns a value (or give up, saying what was seen last).
 * @template T
 * @param {string} what
 * @param {() => Promise<T | undefined>} check
 * @param {() => Promise<string>} seen
 * @returns {Promise<T>}
 */
async function waitFor(what, check, seen) {
  const deadline = Date.now() + INGEST_WAIT_MS;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen in ${INGEST_WAIT_MS / 1000} s; last seen: ${await seen()}`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/**
 * Console errors but the 400 answers the app shows to the user by design (a preview of a
 * half-typed filter).
 * @param {string[]} errors
 */
function unexpected(errors) {
  return errors.filter((text) => !/status of 400/.test(text));
}

const DEMO_FAILURES = ['demo failures', 'demo damaged in cache'];

test('the demo granules are archived before the journey starts', async () => {
  provider = await openPage(browser, DESKTOP);
  await logIn(provider.page, PROVIDER, '/provider');
  const context = provider.context;
  await waitFor(
    'archiving the demo granules',
    async () => {
      const { body } = await callApi(context, 'GET', '/api/v1/ingest/requests/');
      /** @type {{ id: number, state: string, label: string }[]} */
      const requests = body.results;
      // seed_demo --history makes these two fail on purpose, for the operator's dashboards
      // and other journeys may have left requests of their own (failed on purpose, too)
      const meant = requests.filter((r) => r.label.startsWith('demo ') && !DEMO_FAILURES.includes(r.label));
      return meant.length > 0 && meant.every((r) => r.state === 'completed') ? true : undefined;
    },
    async () => JSON.stringify((await callApi(context, 'GET', '/api/v1/ingest/requests/')).body.results),
  );
});

test('a scientist subscribes to a box and a month through the page and sees the preview', async () => {
  scientist = await openPage(browser, DESKTOP);
  const { page, context, consoleErrors } = scientist;
  await logIn(page, SCIENTIST, '/subscriptions');
  await page.getByRole('heading', { name: 'Subscriptions', level: 1 }).waitFor();
  await page.getByText('No subscriptions yet').waitFor();
  await shoot(page, 'portal-sub-list-empty.png');

  await page.getByRole('link', { name: 'New subscription' }).click();
  await page.getByRole('heading', { name: 'New subscription', level: 1 }).waitFor();
  await page.getByLabel('Name').fill('Africa and Europe, November');
  await page.getByRole('checkbox', { name: new RegExp(COLLECTION.replace('.', '\\.')) }).check();
  const area = page.getByRole('group', { name: 'Area (optional)' });
  for (const [side, value] of Object.entries(BOX)) await area.getByLabel(side).fill(String(value));
  for (const [label, value] of Object.entries(WINDOW)) await page.getByLabel(label, { exact: true }).fill(value);

  // The preview counts what the same filter matches among the last 30 days' granules.
  const filter = {
    collections: [COLLECTION], bbox: Object.values(BOX), start: WINDOW.From, end: WINDOW.To,
    conditions: [], new_versions: false, days: 30,
  };
  const expected = await callApi(context, 'POST', '/api/v1/subscriptions/preview/', { json: filter });
  assert.equal(expected.status, 200, JSON.stringify(expected.body));
  assert.ok(expected.body.count > 0, `no demo granule lies in the box: ${JSON.stringify(expected.body)}`);
  const count = page.getByRole('complementary', { name: 'Preview' }).getByRole('status');
  const sentence = `${expected.body.count} granule${expected.body.count === 1 ? '' : 's'} of the last 30 days match`;
  await count.getByText(sentence).waitFor().catch(async () => {
    throw new Error(`the preview never said “${sentence}”; it says: ${await count.innerText()}`);
  });
  await page.getByRole('heading', { name: 'Newest matches' }).waitFor();
  await shoot(page, 'portal-sub-new.png');

  await page.getByRole('button', { name: 'Create subscription' }).click();
  await page.waitForURL(/\/subscriptions\/\d+$/);
  subscriptionId = Number(new URL(page.url()).pathname.split('/').pop());
  await page.getByText('Subscription “Africa and Europe, November” created.').waitFor();
  await page.getByText('Nothing delivered yet').waitFor();
  const summary = await page.locator('dl').innerText();
  assert.match(summary, /20° W to 50° E, 40° S to 40° N/);
  assert.match(summary, /1 Nov 2026 to 30 Nov 2026/);

  const saved = await callApi(context, 'GET', `/api/v1/subscriptions/${subscriptionId}/`);
  assert.deepEqual(saved.body.bbox, Object.values(BOX));
  assert.equal(saved.body.start, '2026-11-01T00:00:00Z');
  assert.deepEqual(saved.body.collections, [COLLECTION]);
  await shoot(page, 'portal-sub-detail-empty.png');
  assert.deepEqual(unexpected(consoleErrors), [], 'the browser console logged errors');
});

test('the provider ingests one granule inside the box and one outside it, and a PDR', async () => {
  assert.ok(provider && subscriptionId, 'an earlier step failed');
  const { context, page, consoleErrors } = provider;
  const observed = { start: '2026-11-20T10:00:00Z', end: '2026-11-20T10:05:00Z' };
  const granules = [];
  for (const [id, bbox] of [[INSIDE, [10, 0, 30, 15]], [OUTSIDE, [120, 0, 140, 15]]]) {
    const file = await stageFile(context, `e2e/${id}.hdf`, randomBytes(20_000));
    granules.push({ collection: COLLECTION, granule_id: id, temporal: observed, bbox, attributes: { day_night: 'Day' }, files: [file] });
  }
  const submitted = await callApi(context, 'POST', '/api/v1/ingest/requests/', { json: { granules } });
  assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
  bulkRequestId = submitted.body.id;

  // A PDR of two file groups: one delivered as declared, one whose checksum is wrong.
  const good = await stageFile(context, `e2e/pdr/${PDR_GOOD}.hdf`, randomBytes(8_000));
  const bad = await stageFile(context, `e2e/pdr/${PDR_BAD}.hdf`, randomBytes(8_000));
  /** @type {(id: string, file: { size: number }, checksum: string) => string[]} */
  const group = (id, file, checksum) => [
    'OBJECT = FILE_GROUP;', '  DATA_TYPE = MOD021KM;', '  DATA_VERSION = 061;', '  NODE_NAME = modaps.example.org;',
    '  BEGINNING_DATE/TIME = 2026-11-21T10:00:00Z;', '  ENDING_DATE/TIME = 2026-11-21T10:05:00Z;',
    '  OBJECT = FILE_SPEC;', '    DIRECTORY_ID = /e2e/pdr;', `    FILE_ID = ${id}.hdf;`, '    FILE_TYPE = SCIENCE;',
    `    FILE_SIZE = ${file.size};`, '    FILE_CKSUM_TYPE = MD5;', `    FILE_CKSUM_VALUE = ${checksum};`,
    '  END_OBJECT = FILE_SPEC;', 'END_OBJECT = FILE_GROUP;',
  ];
  const text = [
    'ORIGINATING_SYSTEM = MODAPS;', 'TOTAL_FILE_COUNT = 2;', 'EXPIRATION_TIME = 2099-01-10T12:00:00Z;',
    ...group(PDR_GOOD, good, good.checksum), ...group(PDR_BAD, bad, '0'.repeat(32)), '',
  ].join('\n');
  const pdr = await callApi(context, 'POST', '/api/v1/ingest/pdrs/', { json: { name: `MODAPS.${RUN}.PDR`, text } });
  assert.equal(pdr.status, 202, JSON.stringify(pdr.body));
  pdrId = pdr.body.id;

  // The provider view lists the request and follows it live (no reload) until it is archived.
  await page.goto(`${BASE_URL}/provider`, { waitUntil: 'load' });
  await page.getByRole('link', { name: `Request ${bulkRequestId}` }).waitFor();
  await shoot(page, 'portal-provider-requests-running.png');
  await page.getByRole('link', { name: `Request ${bulkRequestId}` }).click();
  const heading = page.getByRole('heading', { level: 1 });
  await heading.getByText(`Ingest request ${bulkRequestId}`).waitFor();
  await shoot(page, 'portal-provider-request-running.png');
  await heading.getByText('completed').waitFor({ timeout: INGEST_WAIT_MS }).catch(async () => {
    throw new Error(`request ${bulkRequestId} never showed as completed. The page says:\n${await pageText(page)}`);
  });
  const granuleTable = page.getByRole('region', { name: 'Granules' });
  for (const id of [INSIDE, OUTSIDE]) {
    assert.match(await granuleTable.getByRole('row', { name: new RegExp(id) }).innerText(), /archived/);
  }
  assert.equal(await page.getByRole('progressbar', { name: 'Percent done in bytes' }).getAttribute('value'), '100');
  await shoot(page, 'portal-provider-request-archived.png');

  // The PDR: answered with a long PAN, a disposition per file, and the failure in the request.
  await page.getByRole('navigation', { name: 'Ingest' }).getByRole('link', { name: 'PDRs' }).click();
  await page.getByRole('link', { name: `MODAPS.${RUN}.PDR` }).click();
  await page.getByRole('table', { name: 'Disposition of each file' }).waitFor({ timeout: INGEST_WAIT_MS }).catch(async () => {
    throw new Error(`the PAN of PDR ${pdrId} never appeared. The page says:\n${await pageText(page)}`);
  });
  const dispositions = page.getByRole('table', { name: 'Disposition of each file' });
  assert.match(await dispositions.getByRole('row', { name: new RegExp(PDR_GOOD) }).innerText(), /SUCCESSFUL/);
  assert.match(await dispositions.getByRole('row', { name: new RegExp(PDR_BAD) }).innerText(), /CHECKSUM VERIFICATION FAILURE/);
  await shoot(page, 'portal-provider-pdr.png');

  await page.getByRole('link', { name: /per-granule state/ }).click();
  const failedRow = page.getByRole('region', { name: 'Granules' }).getByRole('row', { name: new RegExp(PDR_BAD) });
  assert.match(await failedRow.innerText(), /failed[\s\S]*MD5 checksum is [0-9a-f]{32}, the provider declared 0{32}/);
  // a checksum of zeros was declared: retrying would fail again, so no Retry, and the row says why
  await failedRow.getByText(/Retry is not possible/).waitFor();
  assert.match(await failedRow.innerText(), /declared with a checksum of only zeros/);
  assert.equal(await failedRow.getByRole('button', { name: `Retry ${PDR_BAD}` }).count(), 0);
  await shoot(page, 'portal-provider-request-failed.png');
  await page.getByRole('navigation', { name: 'Ingest' }).getByRole('link', { name: 'PDRs' }).click();
  await page.getByRole('row', { name: new RegExp(`MODAPS\\.${RUN}\\.PDR`) }).waitFor();
  await shoot(page, 'portal-provider-pdrs.png');
  assert.deepEqual(unexpected(consoleErrors), [], 'the browser console logged errors');
});

test('the matching granule, and only it, appears in the delivery log without a reload', async () => {
  assert.ok(scientist && provider && subscriptionId && bulkRequestId, 'an earlier step failed');
  const { page, context, consoleErrors } = scientist;
  // The scientist's page has stayed open on the subscription since it was created.
  const log = page.getByRole('region', { name: 'Delivery log' });
  await log.getByRole('row', { name: new RegExp(INSIDE) }).waitFor({ timeout: INGEST_WAIT_MS }).catch(async () => {
    throw new Error(`no delivery of ${INSIDE} appeared. The page says:\n${await pageText(page)}`);
  });
  assert.match(await log.getByRole('row', { name: new RegExp(INSIDE) }).innerText(), /Delivered[\s\S]*notified/);

  // Every granule of the ingest is archived by now and each was matched when it was; the
  // log keeps exactly the one inside the box while it refreshes a few more times.
  const pdrGranules = await callApi(provider.context, 'GET', `/api/v1/ingest/pdrs/${pdrId}/`);
  assert.equal(pdrGranules.body.state, 'answered');
  for (let i = 0; i < 3; i += 1) {
    const rows = await log.getByRole('row').count();
    assert.equal(rows, 2, `the delivery log has ${rows - 1} rows: ${await log.innerText()}`);
    const text = await log.innerText();
    for (const other of [OUTSIDE, PDR_GOOD, PDR_BAD]) assert.ok(!text.includes(other), `${other} was delivered too`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  const deliveries = await callApi(context, 'GET', `/api/v1/subscriptions/${subscriptionId}/deliveries/`);
  /** @type {{ granule: string }[]} */
  const delivered = deliveries.body.results;
  assert.deepEqual(delivered.map((d) => d.granule), [`${COLLECTION}:${INSIDE}`]);
  await shoot(page, 'portal-sub-delivered.png');

  await page.getByRole('link', { name: 'Subscriptions', exact: true }).first().click();
  await page.getByRole('row', { name: /Africa and Europe, November/ }).waitFor();
  await shoot(page, 'portal-sub-list.png');
  assert.deepEqual(unexpected(consoleErrors), [], 'the browser console logged errors');
});

test('subscriptions and the provider view work at phone width', async () => {
  assert.ok(subscriptionId && bulkRequestId, 'an earlier step failed');
  const phone = await openPage(browser, PHONE);
  try {
    const { page, consoleErrors } = phone;
    await logIn(page, SCIENTIST, `/subscriptions/${subscriptionId}`);
    await page.getByRole('region', { name: 'Delivery log' }).getByRole('row', { name: new RegExp(INSIDE) }).waitFor();
    await shoot(page, 'portal-sub-detail-phone.png');
    assert.ok((await sidewaysOverflow(page)) <= 0, 'the subscription page scrolls sideways on a phone');

    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('complementary', { name: 'Preview' }).getByText(/granules? of the last 30 days match/).waitFor();
    await shoot(page, 'portal-sub-edit-phone.png');
    assert.ok((await sidewaysOverflow(page)) <= 0, 'the subscription form scrolls sideways on a phone');

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('banner').getByRole('link', { name: 'Log in' }).waitFor();
    await logIn(page, PROVIDER, `/provider/requests/${bulkRequestId}`);
    await page.getByRole('region', { name: 'Granules' }).getByRole('row', { name: new RegExp(INSIDE) }).waitFor();
    await shoot(page, 'portal-provider-request-phone.png');
    assert.ok((await sidewaysOverflow(page)) <= 0, 'the provider request page scrolls sideways on a phone');
    assert.deepEqual(unexpected(consoleErrors), [], 'the browser console logged errors');
  } finally {
    await phone.context.close();
  }
});
