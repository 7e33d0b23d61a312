// Operator dashboards end to end on the demo as `seed_demo --history` seeds it: log in through the
// SPA's login page, read a month in every chart and the archive board's history, vary a drive
// off and on again.
//
//   GRANARY_URL=http://127.0.0.1:8765 node --test tests/e2e/dashboards.test.mjs
//
// Uses the system Chromium through playwright-core. Screenshots land in var/screenshots/.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { BASE_URL, launchChromium, logIn as logInAs, openPage, pageText, shoot, sidewaysOverflow } from './browser.mjs';

const USER = process.env.E2E_OPERATOR || 'operator';
const PASSWORD = process.env.E2E_OPERATOR_PASSWORD || 'granary-operator';

/** @type {import('playwright-core').Browser | undefined} */
let browser;

before(async () => {
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
});

/**
 * A fresh browser context with console errors collected.
 * @param {{ width: number, height: number }} viewport
 */
function open(viewport) {
  return openPage(browser, viewport);
}

/**
 * Log in as the operator through the login page and land on `next`.
 * @param {import('playwright-core').Page} page
 * @param {string} next
 */
function logIn(page, next) {
  return logInAs(page, { user: USER, password: PASSWORD }, next);
}

/**
 * GET an API path with the page's session.
 * @param {import('playwright-core').Page} page
 * @param {string} path
 */
async function api(page, path) {
  return page.evaluate(async (url) => {
    const response = await fetch(url, { headers: { Accept: 'application/json' } });
    return { status: response.status, body: await response.json() };
  }, path);
}

const MIGRATE_WAIT_MS = Number(process.env.E2E_MIGRATE_WAIT_MS || 120_000);

/**
 * Poll the throughput API until the archive has migrated something (or give up).
 * @param {import('playwright-core').Page} page
 * @returns {Promise<{ by_direction: Record<string, number[]> }>}
 */
async function waitForMigrate(page) {
  const deadline = Date.now() + MIGRATE_WAIT_MS;
  for (;;) {
    const answer = await api(page, '/api/v1/metrics/throughput/?hours=48');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    if (Math.max(...answer.body.by_direction.migrate) > 0 || Date.now() > deadline) return answer.body;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/**
 * How many pixels of a canvas are not transparent: a drawn chart has plenty.
 * @param {import('playwright-core').Locator} canvas
 */
async function paintedPixels(canvas) {
  return canvas.evaluate((element) => {
    const c = /** @type {HTMLCanvasElement} */ (element);
    const ctx = c.getContext('2d');
    if (!ctx || !c.width || !c.height) return 0;
    const data = ctx.getImageData(0, 0, c.width, c.height).data;
    let painted = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) painted += 1;
    return painted;
  });
}

test('login page refuses a wrong password in the API’s words', async () => {
  const { context, page } = await open({ width: 1280, height: 800 });
  try {
    await page.goto(`${BASE_URL}/login`, { waitUntil: 'load' });
    await page.getByLabel('User name').fill(USER);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Log in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /Wrong user name or password\./);
  } finally {
    await shoot(page, 'login-refused.png');
    await context.close();
  }
});

test('an operator logs in and reads the throughput charts fed by the archive', async () => {
  const { context, page, consoleErrors } = await open({ width: 1280, height: 900 });
  try {
    await logIn(page, '/dashboards');
    await page.getByRole('link', { name: 'Dashboards' }).waitFor();

    // Today: both directions against their targets, numbers from the API.
    const today = await api(page, '/api/v1/metrics/today/');
    assert.equal(today.status, 200);
    const ingestCard = page.getByRole('article', { name: 'Ingest' });
    await ingestCard.waitFor();
    assert.match(await ingestCard.innerText(), /of 1\.00 TB|of [\d.]+ [KMGTP]?B/);
    await page.getByRole('article', { name: 'Distribution' }).waitFor();

    // The worker ingests and archives the demo granules: wait until the migrate series is
    // non-zero in the API (seed_demo only submits them) …
    const throughput = await waitForMigrate(page);
    assert.ok(
      Math.max(...throughput.by_direction.migrate) > 0,
      `no migrate throughput after ${MIGRATE_WAIT_MS / 1000} s: ${JSON.stringify(throughput.by_direction)}`,
    );
    // The page refreshes every 10 s; a reload shows the new figures at once.
    await page.reload({ waitUntil: 'load' });

    // … and the chart says so and has actually drawn something.
    const byDirection = page.getByRole('img', { name: /Peak hourly rate .* by direction: .*migrate [\d.]+ MB\/s/ });
    await byDirection.waitFor().catch(async () => {
      throw new Error(`the throughput chart never named the migrate rate. The page says:\n${await pageText(page)}`);
    });
    assert.ok((await paintedPixels(byDirection)) > 500, 'the by-direction chart drew nothing');
    const byCollection = page.getByRole('img', { name: /by collection: / });
    await byCollection.waitFor();
    assert.ok((await paintedPixels(byCollection)) > 500, 'the by-collection chart drew nothing');
    const daily = page.getByRole('img', { name: /^Ingest: .* ingested over 30 days/ });
    await daily.waitFor();
    assert.ok((await paintedPixels(daily)) > 500, 'the 30-day chart drew nothing');

    // The numbers behind the chart are there for keyboard and screen-reader users.
    const tape = page.getByRole('figure', { name: 'Tape MB/s (migrate and recall)' });
    await tape.getByText('Show the numbers').click();
    await tape.getByRole('columnheader', { name: 'migrate' }).waitFor();

    assert.ok((await sidewaysOverflow(page)) <= 0, 'the dashboard scrolls sideways');
    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await shoot(page, 'dashboard-throughput.png');
    await context.close();
  }
});

test('the archive board shows the drives and cache, and a drive varies off and on', async () => {
  const { context, page, consoleErrors } = await open({ width: 1280, height: 900 });
  try {
    await logIn(page, '/dashboards/archive');

    const drives = await api(page, '/api/v1/archive/drives/');
    assert.equal(drives.status, 200);
    /** @type {{ name: string, state: string }[]} */
    const list = drives.body;
    assert.ok(list.length > 0, 'the demo archive has no drives');
    for (const drive of list) await page.getByRole('row', { name: new RegExp(`^${drive.name} `) }).waitFor();
    await page.getByRole('meter', { name: 'Cache used' }).waitFor();
    // The object tier beside the silos: the demo's bucket on the local S3 server e2e.sh starts.
    const board = await api(page, '/api/v1/archive/buckets/board/');
    assert.equal(board.status, 200);
    assert.deepEqual(board.body.map((/** @type {any} */ b) => [b.name, b.health]),
      [['granary-archive', { ok: true, reason: '' }]]);
    const bucket = page.getByRole('table', { name: 'Buckets: 1 of 1 answering' })
      .getByRole('row', { name: /^granary-archive / });
    await bucket.waitFor();
    assert.match(await bucket.innerText(), /\bup\b/);
    await page.getByRole('table', { name: 'Volume groups' }).waitFor();
    const histogram = page.getByRole('img', { name: / volumes: / });
    await histogram.waitFor();
    assert.ok((await paintedPixels(histogram)) > 500, 'the % full histogram drew nothing');
    await shoot(page, 'dashboard-archive.png');

    // Vary the last idle drive off, see it offline, and put it back.
    const idle = [...list].reverse().find((drive) => drive.state === 'idle');
    assert.ok(idle, `no idle drive to vary: ${list.map((d) => `${d.name}=${d.state}`).join(', ')}`);
    const row = page.getByRole('row', { name: new RegExp(`^${idle.name} `) });
    await row.getByLabel(`Reason to vary ${idle.name} off`).fill('e2e: cleaning');
    await row.getByRole('button', { name: `Vary ${idle.name} off` }).click();
    await page.getByText(`${idle.name} varied off: now offline.`).waitFor().catch(async () => {
      throw new Error(`the drive did not go offline. The page says:\n${await pageText(page)}`);
    });
    assert.match(await row.innerText(), /offline/);
    assert.match(await row.innerText(), /e2e: cleaning/);
    const after = await api(page, `/api/v1/archive/drives/${idle.name}/`);
    assert.equal(after.body.state, 'offline');
    await shoot(page, 'dashboard-archive-varied-off.png');

    await row.getByRole('button', { name: `Vary ${idle.name} on` }).click();
    await page.getByText(new RegExp(`${idle.name} varied on: now `)).waitFor();
    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await shoot(page, 'dashboard-archive-end.png');
    await context.close();
  }
});

test('queues and failures dashboards answer', async () => {
  const { context, page, consoleErrors } = await open({ width: 1280, height: 900 });
  try {
    await logIn(page, '/dashboards/queues');
    await page.getByRole('heading', { name: 'Queues', level: 1 }).waitFor();
    await page.locator('table, .status--empty').first().waitFor();
    await shoot(page, 'dashboard-queues.png');

    await page.getByRole('navigation', { name: 'Dashboards' }).getByRole('link', { name: 'Failures' }).click();
    await page.getByRole('heading', { name: 'Archive requests' }).waitFor();
    await page.getByRole('button', { name: 'Retry all failed requests' }).waitFor();
    await page.locator('section[aria-labelledby="ingest-failures-heading"]').locator('.ingest-failures, .status--empty').first().waitFor();
    await shoot(page, 'dashboard-failures.png');

    // a reconciliation runs in the worker and the board shows what it read and found
    await page.getByRole('button', { name: 'Run reconciliation' }).click();
    await page.getByText(/Reconciliation #\d+ started \(sample\)/).waitFor();
    await page.getByText(/Run #\d+ \(sample of \d+\) · done/).waitFor({ timeout: 60_000 });
    // the demo damaged one cached file on purpose: a sample run reports what it found
    assert.match(
      await page.locator('section[aria-labelledby="reconciliation-heading"]').innerText(),
      /· \d+ discrepanc/,
    );
    await shoot(page, 'dashboard-reconciliation.png');
    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await context.close();
  }
});

/**
 * The rows of the table behind a chart, opened from its "Show the numbers".
 * @param {import('playwright-core').Page} page
 * @param {string} title
 */
async function chartRows(page, title) {
  const figure = page.getByRole('figure', { name: title });
  await figure.getByText('Show the numbers').click();
  const rows = figure.locator('tbody tr');
  await rows.first().waitFor();
  return rows.evaluateAll((trs) =>
    trs.map((tr) => Array.from(tr.querySelectorAll('th, td'), (cell) => cell.textContent?.trim() ?? '')),
  );
}

test('on the seeded demo every dashboard has a month to show', async () => {
  for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
    const phone = viewport.width < 500 ? '-phone' : '';
    const { context, page, consoleErrors } = await open(viewport);
    try {
      await logIn(page, '/dashboards');
      await page.getByRole('note').filter({ hasText: 'Demo data:' }).waitFor();

      // 30 days of each direction, most of them with bytes, each against its own target
      for (const title of ['Ingest per day', 'Distribution per day']) {
        const rows = await chartRows(page, title);
        assert.equal(rows.length, 30, `${title}: ${rows.length} days`);
        const busy = rows.filter(([, bytes]) => !/^0 B$/.test(bytes));
        assert.ok(busy.length >= 29, `${title}: only ${busy.length} days with bytes`);
        const shares = busy.slice(0, -1).map(([, , share]) => Number.parseFloat(share));
        assert.ok(shares.every((share) => share > 40 && share < 150), `${title}: ${shares}`);
      }
      // 48 hours: each direction has hours with data
      for (const title of ['Ingest MB/s', 'Distribution MB/s', 'Tape MB/s (migrate and recall)']) {
        const rows = await chartRows(page, title);
        assert.ok(rows.length >= 24, `${title}: ${rows.length} hours with data`);
      }
      const collections = await chartRows(page, 'MB/s by collection');
      assert.ok(collections.length >= 24, `by collection: ${collections.length} hours`);
      assert.ok((await sidewaysOverflow(page)) <= 0, 'the throughput page scrolls sideways');
      await shoot(page, `dashboard-month${phone}.png`);

      // the archive board's history: a repack done and a drive left offline with its reason
      await page.getByRole('navigation', { name: 'Dashboards' }).getByRole('link', { name: 'Archive' }).click();
      const repacks = page.getByRole('table', { name: 'Finished repacks' });
      await repacks.waitFor();
      assert.match(await repacks.innerText(), /#\d+/);
      const faults = page.getByRole('list', { name: 'Drive faults' });
      assert.match(await faults.innerText(), /silo2-d4\s+offline\s+Head errors/);
      assert.ok((await sidewaysOverflow(page)) <= 0, 'the archive board scrolls sideways');
      await shoot(page, `dashboard-archive-history${phone}.png`);

      // failures: a failed migration, the ingest failures with their reasons, a reconciliation
      await page.getByRole('navigation', { name: 'Dashboards' }).getByRole('link', { name: 'Failures' }).click();
      // the demo's damaged migration, or (once the triage journey asked for a redelivery) its
      // failure with the redelivery's reason
      await page.getByText(/does not match its catalog checksum|was damaged before it reached tape/)
        .first().waitFor();
      await page.getByText(/“demo failures” from MODAPS/).waitFor();
      await page.getByText(/Run #\d+ \(.+\) · done/).waitFor();
      assert.ok((await sidewaysOverflow(page)) <= 0, 'the failures page scrolls sideways');
      assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
    } finally {
      await context.close();
    }
  }
});

test('dashboards work at phone width', async () => {
  const { context, page, consoleErrors } = await open({ width: 390, height: 844 });
  try {
    await logIn(page, '/dashboards');
    await page.getByRole('img', { name: /by direction: ingest/ }).waitFor();
    assert.ok((await sidewaysOverflow(page)) <= 0, 'the throughput dashboard scrolls sideways on a phone');
    await shoot(page, 'dashboard-throughput-phone.png');

    await page.getByRole('navigation', { name: 'Dashboards' }).getByRole('link', { name: 'Archive' }).click();
    await page.getByRole('meter', { name: 'Cache used' }).waitFor();
    assert.ok((await sidewaysOverflow(page)) <= 0, 'the archive board scrolls sideways on a phone');
    await shoot(page, 'dashboard-archive-phone.png');

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('banner').getByRole('link', { name: 'Log in' }).waitFor();
    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await context.close();
  }
});
