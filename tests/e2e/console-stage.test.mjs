// A grid client's bulk stage request in the operator's view: 2,000 files on tape are asked for
// through the WLCG Tape REST API with the scientist's bearer token; the operator sees the
// request beside the orders (who, files, states, mounts planned), raises its priority and
// cancels what is left; the Tape REST API then reports the files as the operator left them.
//
//   scripts/e2e.sh tests/e2e/console-stage.test.mjs
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, test } from 'node:test';

import {
  BASE_URL,
  OPERATOR,
  callApi,
  launchChromium,
  logIn,
  openPage,
  shoot,
  until,
} from './browser.mjs';

/** @type {import('playwright-core').Browser | undefined} */
let browser;
/** @type {{ token: string, paths: string[], drives: string[] }} */
let made;

before(async () => {
  browser = await launchChromium();
  const out = execFileSync(
    '.venv/bin/python',
    ['manage.py', 'shell', '-c', "exec(open('tests/e2e/stage_setup.py').read())"],
    { env: process.env, encoding: 'utf8' },
  );
  made = JSON.parse(out.trim().split('\n').pop() ?? '{}');
  assert.equal(made.paths.length, 2000);
});

/**
 * Vary the drives the setup held back on again, as the operator of `context`.
 * @param {import('playwright-core').BrowserContext} context
 */
async function releaseDrives(context) {
  for (const name of made?.drives ?? []) {
    const answer = await callApi(context, 'POST', `/api/v1/archive/drives/${name}/vary/`, {
      json: { online: true, reason: 'stage journey: cancel seen' },
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  }
}

after(async () => {
  if (browser && made?.drives?.length) {
    const desk = await openPage(browser, { width: 1280, height: 900 });
    await logIn(desk.page, OPERATOR, '/orders');
    await releaseDrives(desk.context).catch(() => undefined);
    await desk.context.close();
  }
  await browser?.close();
});

/**
 * The Tape REST API as a grid client calls it: JSON, Authorization: Bearer.
 * @param {string} method
 * @param {string} path
 * @param {unknown} [json]
 */
async function tape(method, path, json) {
  const response = await fetch(`${BASE_URL}/api/tape/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${made.token}`, 'Content-Type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

test('an operator raises a bulk stage request and cancels it', async () => {
  const staged = await tape('POST', '/stage', { files: made.paths.map((path) => ({ path })) });
  assert.equal(staged.status, 201, JSON.stringify(staged.body));
  const id = staged.body.requestId;
  const short = id.slice(0, 8);

  const { page, context, consoleErrors } = await openPage(browser, { width: 1280, height: 900 });
  await logIn(page, OPERATOR, '/orders');
  const section = page.getByRole('region', { name: 'Bulk stage requests' });
  const row = section.getByRole('row', { name: new RegExp(short) });
  await row.waitFor();
  const text = await row.innerText();
  assert.match(text, /scientist/);
  assert.match(text, /2,000/);
  await shoot(page, 'console-stage-request.png');

  const priority = row.getByRole('combobox', { name: `Priority of stage request ${short}` });
  assert.equal(await priority.inputValue(), '1');
  await priority.selectOption('0');
  await until(async () => (await priority.inputValue()) === '0', 'priority shown as High', 10_000);
  const list = await page.evaluate(async () => (await fetch('/api/v1/stage-requests/')).json());
  assert.equal(list.results.find((/** @type {{id: string}} */ s) => s.id === id).priority, 0);

  await row.getByRole('button', { name: 'Cancel' }).click();
  await until(
    async () => /cancelled/.test(await row.innerText()),
    'the request shown with its cancelled files',
    60_000,
  ).catch(async (error) => {
    await shoot(page, 'console-stage-cancel-failed.png');
    throw error;
  });
  await shoot(page, 'console-stage-cancelled.png');
  await releaseDrives(context);
  made.drives = [];
  const status = await tape('GET', `/stage/${id}`);
  assert.equal(status.status, 200);
  const states = new Set(status.body.files.map((/** @type {{state: string}} */ f) => f.state));
  for (const state of states) assert.ok(['COMPLETED', 'CANCELLED'].includes(state), state);
  assert.ok(status.body.completedAt, 'the request is over once nothing is left to stage');
  assert.deepEqual(consoleErrors, []);
});
