// Bulk jobs end to end: 100 granules archived to tape and released from the cache, then a bulk
// recall by query run from the Bulk jobs page (dry run, confirm) ends at 100 % with every
// file back in the cache.
//
//   scripts/e2e.sh tests/e2e/console-bulk.test.mjs
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, test } from 'node:test';

import {
  OPERATOR, launchChromium, logIn, openPage, shoot, sidewaysOverflow,
} from './browser.mjs';

const COUNT = 100;
const WAIT_MS = Number(process.env.E2E_BULK_WAIT_MS || 240_000);

/** @type {import('playwright-core').Browser | undefined} */
let browser;
/** @type {{ collection: string, files: number[] }} */
let made;

before(async () => {
  browser = await launchChromium();
  const out = execFileSync(
    '.venv/bin/python',
    ['manage.py', 'shell', '-c', "exec(open('tests/e2e/bulk_setup.py').read())"],
    { env: { ...process.env, E2E_BULK_GRANULES: String(COUNT) }, encoding: 'utf8' },
  );
  made = JSON.parse(out.trim().split('\n').pop() ?? '{}');
  assert.equal(made.files.length, COUNT);
});

after(async () => {
  await browser?.close();
});

/**
 * Call the API with the page's session (and its CSRF token on a POST).
 * @param {import('playwright-core').Page} page
 * @param {string} path
 * @param {unknown} [body]
 */
function api(page, path, body) {
  return page.evaluate(
    async ({ url, json }) => {
      const token = document.cookie.match(/csrftoken=([^;]+)/)?.[1] ?? '';
      const response = await fetch(url, {
        method: json === undefined ? 'GET' : 'POST',
        headers: { Accept: 'application/json', 'Content-Type': 'application/json', 'X-CSRFToken': token },
        body: json === undefined ? undefined : JSON.stringify(json),
      });
      return { status: response.status, body: await response.json() };
    },
    { url: path, json: body },
  );
}

/**
 * Ask until `check` says yes, or fail after WAIT_MS.
 * @param {() => Promise<boolean>} check
 * @param {string} what
 */
async function until(check, what) {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

test('a bulk recall by query of 100 released granules ends with all cached at 100 %', async () => {
  assert.ok(browser);
  const { page } = await openPage(browser, { width: 1280, height: 900 });
  await logIn(page, OPERATOR, '/dashboards/bulk');

  // on tape first (the release refuses dirty files), then out of the cache
  await until(async () => {
    const answer = await api(page, '/api/v1/archive/cache/release/', { files: made.files });
    return answer.status === 200;
  }, 'the granules to reach tape and leave the cache');
  for (const id of made.files.slice(0, 5)) {
    const status = await api(page, `/api/v1/archive/files/${id}/`);
    assert.equal(status.body.cache, null, 'released files are on tape only');
  }

  await page.goto(new URL('/dashboards/bulk', page.url()).href);
  await page.getByRole('link', { name: 'Bulk jobs' }).waitFor();
  await page.getByLabel('Action').selectOption('recall');
  await page.getByLabel('Collection(s)').fill(made.collection);
  await page.getByLabel('State(s)').fill('archived');
  await page.getByLabel('Reason (kept with the job)').fill('journey: stage for reprocessing');
  await page.getByRole('button', { name: 'Dry run' }).click();
  const total = page.getByText(/^Dry run: 100 granules, /);
  await total.waitFor();
  assert.match(await total.innerText(), /Dry run: 100 granules, 2(\.0+)? MB/);
  await shoot(page, 'bulk-dry-run-desktop.png');

  await page.getByRole('button', { name: 'Run on 100 granules' }).click();
  await page.getByRole('heading', { name: /Bulk job #\d+: Recall to cache/ }).waitFor();
  const jobUrl = page.url();
  const jobId = Number(jobUrl.split('/').filter(Boolean).pop());

  await until(async () => {
    const text = await page.locator('main').innerText();
    return text.includes('100 %') && /Recall to cache\s*done/.test(text);
  }, 'the job page to show 100 % and done');
  const text = await page.locator('main').innerText();
  assert.match(text, /100 done · 0 skipped · 0 failed/);
  const bar = page.getByRole('progressbar', { name: `Job ${jobId} progress` });
  assert.equal(await bar.getAttribute('aria-valuenow'), '100');
  await shoot(page, 'bulk-job-done-desktop.png');

  for (const id of made.files) {
    const status = await api(page, `/api/v1/archive/files/${id}/`);
    assert.equal(status.status, 200);
    assert.ok(status.body.cache, `file ${id} is back in the cache`);
  }

  await page.goto(new URL('/dashboards/bulk', page.url()).href);
  const row = page.getByRole('row', { name: new RegExp(`#${jobId}`) });
  await row.waitFor();
  assert.match(await row.innerText(), /100 %/);
  await shoot(page, 'bulk-jobs-desktop.png');
  await page.close();

  const { page: phone } = await openPage(browser, { width: 390, height: 844 });
  await logIn(phone, OPERATOR, `/dashboards/bulk/${jobId}`);
  await phone.getByRole('heading', { name: /Bulk job #\d+/ }).waitFor();
  assert.equal(await sidewaysOverflow(phone), 0, 'the job page fits a phone');
  await shoot(phone, 'bulk-job-phone.png');
  await phone.goto(new URL('/dashboards/bulk', phone.url()).href);
  await phone.getByRole('heading', { name: 'New bulk job' }).waitFor();
  await shoot(phone, 'bulk-jobs-phone.png');
  await phone.close();
});
