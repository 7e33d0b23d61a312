// A scientist adds a webhook to a subscription on its page: the secret is shown once; "Send a
// test event" goes through the events worker to a real receiver here, which checks the
// Standard Webhooks signature (HMAC-SHA256 over id.timestamp.body, computed here with node's
// crypto, independently of Granary); the delivery log then shows it delivered, first try.
//
//   GRANARY_URL=http://127.0.0.1:8765 E2E_HOOK_PORT=8883 node --test tests/e2e/portal-webhook.test.mjs
//
// Needs a worker on the events queue and GRANARY_EVENTS_ALLOWED_NETS covering 127.0.0.1
// (scripts/e2e.sh sets both).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { BASE_URL, SCIENTIST, callApi, launchChromium, logIn, openPage, shoot, until } from './browser.mjs';
import { startReceiver } from './hooks.mjs';

const HOOK_PORT = Number(process.env.E2E_HOOK_PORT || 8883);
const WAIT_MS = 60_000;

/** @type {Awaited<ReturnType<typeof startReceiver>>} */
let hook;

/** @type {import('playwright-core').Browser | undefined} */
let browser;
/** @type {Awaited<ReturnType<typeof openPage>> | undefined} */
let scientist;
/** @type {number | undefined} */
let subscriptionId;

before(async () => {
  hook = await startReceiver(HOOK_PORT);
  browser = await launchChromium();
});

after(async () => {
  if (scientist && subscriptionId) {
    await callApi(scientist.context, 'DELETE', `/api/v1/subscriptions/${subscriptionId}/`);
  }
  await scientist?.context.close();
  await browser?.close();
  hook.close();
});

test('a scientist adds a webhook to a subscription and sees its test event delivered', async () => {
  scientist = await openPage(browser, { width: 1280, height: 900 });
  const { page, context } = scientist;
  await logIn(page, SCIENTIST, '/subscriptions');
  const made = await callApi(context, 'POST', '/api/v1/subscriptions/', {
    json: { name: `webhook journey ${Date.now()}`, collections: ['MOD021KM.061'] },
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  subscriptionId = made.body.id;
  await page.goto(`${BASE_URL}/subscriptions/${subscriptionId}`);

  const section = page.getByRole('region', { name: 'Webhooks' });
  await section.getByLabel('Webhook URL').fill(`http://127.0.0.1:${HOOK_PORT}/granary`);
  await section.getByRole('button', { name: 'Add webhook' }).click();
  hook.secret = (await section.getByTestId('webhook-secret').textContent()) ?? '';
  assert.match(hook.secret, /^whsec_/);

  await section.getByRole('button', { name: 'Send a test event' }).click();
  await until(async () => hook.received.length > 0, 'the receiver got the test event', WAIT_MS);
  assert.deepEqual(hook.received.map((r) => [r.valid, r.type]), [[true, 'org.granary.test']]);
  const row = section.getByRole('row').nth(1);
  await until(async () => (await row.textContent())?.includes('Delivered'), 'the log says delivered', WAIT_MS);
  assert.match((await row.textContent()) ?? '', /test.*Delivered.*1/);
  await shoot(page, 'portal-webhook-desktop.png');

  /** @type {{ id: number, rules: { subject: string }[] }[]} */
  const hooks = (await callApi(context, 'GET', '/api/v1/event-endpoints/')).body;
  const mine = `subscriptions/${subscriptionId}`;
  for (const endpoint of hooks.filter((h) => h.rules.some((rule) => rule.subject === mine))) {
    await callApi(context, 'DELETE', `/api/v1/event-endpoints/${endpoint.id}/`);
  }
});
