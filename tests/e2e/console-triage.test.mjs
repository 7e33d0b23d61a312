// Issue #34, what operators and providers tripped on, seen in the browser on the demo's own
// failures (seed_demo: a delivery declared with a checksum of zeros and one naming a file never
// staged; a granule whose cached copy changed before it reached tape):
// - the granule console's "failed" filter lists the granules the Failures page lists (item 1);
// - the provider's stuck request says why it stopped and what happens next (item 2);
// - no Retry or Repair that cannot succeed: their reasons instead, and a redelivery (item 8);
// - the operator's top navigation is one line at 1440 px; a bulk job says why items were
//   skipped; each drive has its own vary-off reason; cached copies can be released (item 10).
//
//   scripts/e2e.sh tests/e2e/console-triage.test.mjs
import assert from 'node:assert/strict';
import { copyFile, mkdir } from 'node:fs/promises';
import { after, before, test } from 'node:test';

import {
  BASE_URL,
  OPERATOR,
  PROVIDER,
  SCREENSHOTS,
  callApi,
  launchChromium,
  logIn,
  openPage,
  pageText,
  shoot,
  sidewaysOverflow,
  until,
} from './browser.mjs';

const WAIT_MS = Number(process.env.E2E_ARCHIVE_WAIT_MS || 180_000);
const STUCK_SHOT = process.env.E2E_STUCK_SHOT || '/work/shots/provider-stuck-request.png';

/** @type {import('playwright-core').Browser | undefined} */
let browser;

before(async () => {
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
});

/**
 * Poll `check` until it answers something truthy, or fail saying `what`.
 * @template T
 * @param {() => Promise<T>} check
 * @param {string} what
 */
const waitUntil = (check, what) => until(check, what, WAIT_MS);

/**
 * The provider's request of the demo with this label.
 * @param {import('playwright-core').Page} page
 * @param {string} label
 */
async function requestLabelled(page, label) {
  const list = await callApi(page.context(), 'GET', '/api/v1/ingest/requests/');
  const found = list.body.results.find((/** @type {any} */ r) => r.label === label);
  assert.ok(found, `no ingest request "${label}": ${JSON.stringify(list.body).slice(0, 400)}`);
  return found;
}

/**
 * The granule ids a table's row headers show (the first word of each).
 * @param {import('playwright-core').Locator} table
 */
async function rowIds(table) {
  const cells = await table.locator('tbody th').allInnerTexts();
  return cells.map((text) => text.trim().split(/\s+/)[0]);
}

test('the failed filter lists the granules the Failures page lists', async () => {
  const { page, consoleErrors } = await openPage(browser, { width: 1440, height: 900 });
  try {
    await logIn(page, OPERATOR, '/dashboards/failures');
    // what the Failures page lists: the granules of each ingest request with failed granules,
    // and the files of the failed archive requests (a granule's file is GRANULE.ext)
    // (other journeys may add failures of their own: every request is read)
    const ingestSection = page.locator('section[aria-labelledby="ingest-failures-heading"]');
    await ingestSection.getByRole('button', { name: /demo failures/ }).waitFor();
    const fromIngest = [];
    for (const disclosure of await ingestSection.locator('button.disclosure').all()) {
      await disclosure.click();
      const table = ingestSection.getByRole('table', {
        name: `Failed granules of request #${(await disclosure.innerText()).match(/#(\d+)/)?.[1]}`,
      });
      await table.locator('tbody tr').first().waitFor();
      fromIngest.push(...(await rowIds(table)));
    }
    const requests = page.getByRole('table', { name: /Failed archive requests/ });
    await requests.locator('tbody tr').first().waitFor();
    const fromArchive = (await requests.locator('tbody tr').allInnerTexts()).map(
      (text) => text.match(/(MOD\S+?)\.hdf/)?.[1],
    );
    const listed = new Set([...fromIngest, ...fromArchive]);
    assert.ok(!listed.has(undefined), `unread rows: ${[...listed]}`);
    assert.ok(listed.size >= 3, `the demo fails 3 granules: ${[...listed]}`);

    // the console: choose "failed" in the state filter
    await page.getByRole('link', { name: 'Granules' }).click();
    await page.getByLabel('State').selectOption('failed');
    await page.getByRole('button', { name: 'Find granules' }).click();
    await page
      .getByRole('button', { name: `failed ${listed.size}`, exact: true })
      .waitFor()
      .catch(async () => {
        assert.fail(`the failed chip does not count ${listed.size}: ${await pageText(page)}`);
      });
    const ingestTable = page.getByRole('table', { name: /Failed in ingest/ });
    await ingestTable.locator('tbody tr').first().waitFor();
    const catalogued = page.locator('table').filter({ hasText: 'still archiving' });
    await catalogued.waitFor();
    const shown = new Set([...(await rowIds(ingestTable)), ...(await rowIds(catalogued))]);
    assert.deepEqual([...shown].sort(), [...listed].sort());
    const text = await page.locator('main').innerText();
    assert.match(text, /does not match its catalog checksum/);
    assert.match(text, /Retry is not possible: \S+ was declared with a checksum of only zeros/);
    assert.ok((await sidewaysOverflow(page)) <= 0, 'the failed list scrolls sideways');
    await shoot(page, 'console-granules-failed.png');
    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await page.context().close();
  }
});

test('the provider sees why the stuck request stopped and what happens next', async () => {
  const { page, consoleErrors } = await openPage(browser, { width: 1280, height: 900 });
  try {
    await logIn(page, PROVIDER, '/provider');
    const stuck = await requestLabelled(page, 'demo damaged in cache');
    assert.equal(stuck.state, 'running');
    await page.goto(`${BASE_URL}/provider/requests/${stuck.id}`, { waitUntil: 'load' });
    await page.getByText(/1 granule has stopped and waits for someone to act/).waitFor();
    const row = page.getByRole('row', { name: /MOD021KM\.A/ });
    const text = await row.innerText();
    assert.match(text, /Stopped: the archive.s only copy of \S+\.hdf fails its checksum/);
    assert.match(text, /they will ask you to deliver the granule again/);
    assert.equal(await row.getByRole('button', { name: /^Retry/ }).count(), 0);
    await shoot(page, 'provider-stuck-request.png');
    await mkdir(STUCK_SHOT.replace(/\/[^/]+$/, ''), { recursive: true });
    await copyFile(`${SCREENSHOTS}provider-stuck-request.png`, STUCK_SHOT);

    // the failed request: no retry that would fail again, each with why and what to do
    const failures = await requestLabelled(page, 'demo failures');
    await page.goto(`${BASE_URL}/provider/requests/${failures.id}`, { waitUntil: 'load' });
    await page.getByText(/No failed granule can be retried as it stands/).waitFor();
    const body = await page.locator('main').innerText();
    assert.match(body, /Retry is not possible: \S+ was declared with a checksum of only zeros/);
    assert.match(
      body,
      /Next: submit the granule in a new request, declaring each file.s real checksum/,
    );
    assert.match(body, /Retry is not possible: \S+never-staged is not in the staging area/);
    assert.equal(await page.getByRole('button', { name: /^Retry/ }).count(), 0);
    await shoot(page, 'provider-failed-request.png');
    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await page.context().close();
  }
});

test('an operator releases cached copies and reads what was kept and why', async () => {
  const { page, consoleErrors } = await openPage(browser, { width: 1280, height: 900 });
  try {
    await logIn(page, OPERATOR, '/dashboards/granules');
    // an archived granule whose files are all clean in the cache and kept for no order
    const target = await waitUntil(async () => {
      const list = await callApi(
        page.context(),
        'GET',
        '/api/v1/console/granules/?collection=MOD10C1.061&state=archived&limit=50',
      );
      for (const g of list.body.results) {
        const one = (await callApi(page.context(), 'GET', `/api/v1/console/granules/${g.id}/`))
          .body;
        if (
          one.files.length &&
          one.files.every(
            (/** @type {any} */ f) => f.cache?.state === 'clean' && !f.cache.keep_until,
          )
        )
          return one.granule;
      }
      return null;
    }, 'an archived granule clean in the cache');
    await page.goto(`${BASE_URL}/dashboards/granules/${target.id}`, { waitUntil: 'load' });
    await page.getByRole('button', { name: 'Release cached copies' }).click();
    const outcome = page.getByRole('status', { name: 'Release outcome' });
    await outcome.waitFor();
    assert.match(await outcome.innerText(), /Released [1-9]\d* files?, \S+ \S*B freed: /);
    // the data files left the cache; the browse image stays (granule pages and search show it)
    await page.getByText(/Only its browse image: browse images stay in the cache\./).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Release cached copies' }).count(), 0);
    await shoot(page, 'console-release-cache.png');

    // the stuck granule's cached file is its only copy: the cache keeps it, and says why
    const failed = await callApi(page.context(), 'GET', '/api/v1/console/granules/?state=failed');
    const [stuck] = failed.body.results;
    assert.ok(stuck, "the demo's stuck granule is listed as failed");
    await page.goto(`${BASE_URL}/dashboards/granules/${stuck.id}`, { waitUntil: 'load' });
    await page.getByRole('heading', { name: 'Archive work stopped' }).waitFor();
    assert.match(
      await page.locator('.cg-stopped').innerText(),
      /Retry is not possible: the cache holds the only copy/,
    );
    await page.getByRole('button', { name: 'Release cached copies' }).click();
    // (its sound files may go; the damaged one stays, with why: a 409 when nothing went)
    await page.getByText(/\S+\.hdf is dirty: a copy is still to be written to tape/).waitFor();
    await shoot(page, 'console-release-kept.png');
    // the refused release is a 409 the page explains; nothing else may be logged
    assert.deepEqual(
      consoleErrors.filter((e) => !/409/.test(e)),
      [],
      'the browser console logged errors',
    );
  } finally {
    await page.context().close();
  }
});

test('no retry or repair that cannot succeed; a redelivery instead', async () => {
  const desk = await openPage(browser, { width: 1440, height: 900 });
  const { page } = desk;
  try {
    await logIn(page, OPERATOR, '/dashboards/failures');
    const groups = page.locator('section[aria-labelledby="failure-groups-heading"]');
    const migrate = groups.getByRole('row', { name: /cached copy of <name> does not match/ });
    await migrate.waitFor();
    assert.match(await migrate.innerText(), /Retry is not possible: the cache holds the only copy/);
    assert.equal(await migrate.getByRole('button', { name: /^Retry/ }).count(), 0);
    const zeros = groups.getByRole('row', { name: /the provider declared <n>/ });
    assert.match(await zeros.innerText(), /Retry is not possible: .* only zeros/);
    assert.equal(await zeros.getByRole('button', { name: /^Retry/ }).count(), 0);
    const requests = page.getByRole('table', { name: /Failed archive requests/ });
    await requests.locator('tbody tr').first().waitFor();
    assert.equal(await requests.getByRole('button', { name: /^Retry request/ }).count(), 0);
    const discrepancies = page.getByRole('table', { name: /Discrepancies of reconciliation/ });
    await discrepancies.waitFor();
    const missing = discrepancies.getByRole('row', { name: /migration_missing/ }).first();
    assert.match(await missing.innerText(), /Repair is not possible: its source, the cached copy/);
    assert.equal(await missing.getByRole('button', { name: /^Repair/ }).count(), 0);
    await shoot(page, 'console-failures-no-retry.png');

    // ask for a redelivery: the group leaves, the provider's request fails with why
    await migrate.getByRole('button', { name: 'Ask for redelivery' }).click();
    const confirm = migrate.getByRole('group', { name: 'Confirm redelivery' });
    await confirm.getByLabel('Note to the provider').fill('e2e: cache disk fault');
    await confirm.getByRole('button', { name: 'Yes, ask for it again' }).click();
    await groups.getByText(/Asked for 1 granule to be delivered again/).waitFor();
    await waitUntil(async () => (await migrate.count()) === 0, 'the migrate group to leave');

    const provider = await openPage(browser, { width: 1280, height: 900 });
    try {
      await logIn(provider.page, PROVIDER, '/provider');
      const stuck = await requestLabelled(provider.page, 'demo damaged in cache');
      assert.equal(stuck.state, 'failed');
      await provider.page.goto(`${BASE_URL}/provider/requests/${stuck.id}`, { waitUntil: 'load' });
      const row = provider.page.getByRole('row', { name: /MOD021KM\.A/ });
      await row.waitFor();
      assert.match(await row.innerText(), /DATA ARCHIVE ERROR/);
      assert.match(await row.innerText(), /deliver the granule again.*e2e: cache disk fault/s);
      await shoot(provider.page, 'provider-redeliver-asked.png');
    } finally {
      await provider.context.close();
    }
    assert.deepEqual(desk.consoleErrors, [], 'the browser console logged errors');
  } finally {
    await desk.context.close();
  }
});

test('the operator’s top navigation is one line at 1440 px', async () => {
  const { page } = await openPage(browser, { width: 1440, height: 900 });
  try {
    await logIn(page, OPERATOR, '/dashboards');
    const tops = await page
      .locator('.site-nav a')
      .evaluateAll((links) => links.map((a) => Math.round(a.getBoundingClientRect().top)));
    assert.equal(tops.length, 8, 'the operator has eight links');
    assert.equal(new Set(tops).size, 1, `the links wrap onto rows at ${[...new Set(tops)]}`);
    const user = await page.locator('.user-menu').boundingBox();
    const nav = await page.locator('.site-nav').boundingBox();
    assert.ok(user && nav && Math.abs(user.y - nav.y) < 8, 'the login sits beside the links');
    await shoot(page, 'operator-nav-1440.png');
  } finally {
    await page.context().close();
  }
});

test('each drive its own vary-off reason', async () => {
  const { page, consoleErrors } = await openPage(browser, { width: 1440, height: 900 });
  try {
    await logIn(page, OPERATOR, '/dashboards/archive');
    const drives = (await callApi(page.context(), 'GET', '/api/v1/archive/drives/')).body;
    const idle = drives.filter((/** @type {any} */ d) => d.state === 'idle');
    assert.ok(
      idle.length >= 2,
      `two idle drives: ${drives.map((/** @type {any} */ d) => d.state)}`,
    );
    const [first, second] = idle;
    await page.getByLabel(`Reason to vary ${first.name} off`).fill('e2e: not this one');
    await page.getByLabel(`Reason to vary ${second.name} off`).fill('e2e: cleaning');
    const row = page.getByRole('row', { name: new RegExp(`^${second.name} `) });
    await row.getByRole('button', { name: `Vary ${second.name} off` }).click();
    await page.getByText(`${second.name} varied off: now offline.`).waitFor();
    const after = (await callApi(page.context(), 'GET', `/api/v1/archive/drives/${second.name}/`))
      .body;
    assert.equal(after.offline_reason, 'e2e: cleaning');
    assert.match(await row.innerText(), /e2e: cleaning/);
    await shoot(page, 'archive-vary-per-drive.png');
    await row.getByRole('button', { name: `Vary ${second.name} on` }).click();
    await page.getByText(new RegExp(`${second.name} varied on: now `)).waitFor();
    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await page.context().close();
  }
});

test('a bulk job says why granules were skipped', async () => {
  const { page, consoleErrors } = await openPage(browser, { width: 1280, height: 900 });
  try {
    await logIn(page, OPERATOR, '/dashboards/bulk');
    const made = await callApi(page.context(), 'POST', '/api/v1/console/bulk/', {
      json: {
        kind: 'reingest',
        query: { collection: 'MOD10C1.061', state: 'archived' },
        reason: 'e2e: why skipped',
      },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    await page.goto(`${BASE_URL}/dashboards/bulk/${made.body.id}`, { waitUntil: 'load' });
    const why = page.getByRole('region', { name: 'Why granules were skipped or failed' });
    await why.waitFor({ timeout: WAIT_MS });
    const text = await why.innerText();
    assert.match(
      text,
      /skipped\s+\d+: its latest ingest \(request #\d+\) is archived: nothing to send round again/,
    );
    await shoot(page, 'bulk-skipped-why.png');
    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await page.context().close();
  }
});
