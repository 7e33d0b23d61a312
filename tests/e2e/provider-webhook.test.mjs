// The modern PAN: a provider subscribes its collections' ingest events to a webhook on its
// Notifications page, delivers a granule, and a real receiver here gets "granule archived"
// for it, signed (checked here with node's crypto); the page's delivery log says delivered.
//
//   scripts/e2e.sh tests/e2e/provider-webhook.test.mjs   (E2E_HOOK_PORT: the receiver's port)
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';

import { PROVIDER, callApi, launchChromium, logIn, openPage, shoot, stageFile, until } from './browser.mjs';
import { startReceiver } from './hooks.mjs';

const HOOK_PORT = Number(process.env.E2E_HOOK_PORT || 8883) + 1;
const COLLECTION = 'MOD10C1.061';
const WAIT_MS = 120_000;

/** @type {import('playwright-core').Browser | undefined} */
let browser;
/** @type {Awaited<ReturnType<typeof startReceiver>>} */
let hook;
/** @type {Awaited<ReturnType<typeof openPage>> | undefined} */
let provider;

before(async () => {
  hook = await startReceiver(HOOK_PORT);
  browser = await launchChromium();
});

after(async () => {
  if (provider) {
    const mine = (await callApi(provider.context, 'GET', '/api/v1/event-endpoints/')).body;
    for (const endpoint of mine.filter((/** @type {{ name: string }} */ e) => e.name === 'Ingest events')) {
      await callApi(provider.context, 'DELETE', `/api/v1/event-endpoints/${endpoint.id}/`);
    }
  }
  await provider?.context.close();
  await browser?.close();
  hook.close();
});

test('a provider receives "granule archived" for its ingest at its webhook', async () => {
  provider = await openPage(browser, { width: 1280, height: 900 });
  const { page, context } = provider;
  await logIn(page, PROVIDER, '/provider/notifications');
  await page.getByRole('heading', { name: 'Notifications' }).waitFor();
  const form = page.locator('form', { has: page.getByRole('heading', { name: 'New endpoint' }) });
  await form.getByLabel('Webhook URL').fill(`http://127.0.0.1:${HOOK_PORT}/pan`);
  // only the collection this journey delivers to: the demo's own ingest tells nothing here
  for (const box of await form.getByRole('group', { name: 'Collections' }).getByRole('checkbox').all()) {
    const name = (await box.evaluate((el) => el.parentElement?.textContent ?? '')).trim();
    await box.setChecked(name === COLLECTION);
  }
  await form.getByRole('button', { name: 'Add endpoint' }).click();
  hook.secret = (await form.getByTestId('webhook-secret').textContent()) ?? '';
  assert.match(hook.secret, /^whsec_/);

  const granuleId = `MOD10C1.A2025167.061.${String(Date.now()).slice(-13).padStart(13, '0')}`;
  const file = await stageFile(context, `e2e-pan/${granuleId}.hdf`, randomBytes(20_000));
  const submitted = await callApi(context, 'POST', '/api/v1/ingest/requests/', {
    json: {
      granules: [{
        collection: COLLECTION, granule_id: granuleId, bbox: [-180, -90, 180, 90], files: [file],
        temporal: { start: '2025-06-16T00:00:00Z', end: '2025-06-16T23:59:59Z' },
      }],
    },
  });
  assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
  const archived = () => hook.received.find((r) => r.type === 'org.granary.granule.archived'
    && r.data.granule_id === granuleId);
  await until(async () => archived(), `the receiver got granule.archived for ${granuleId}`, WAIT_MS);
  assert.equal(archived()?.valid, true);
  assert.equal(archived()?.data.collection, COLLECTION);
  assert.ok(hook.received.every((r) => r.valid), 'every request was signed with the secret');

  const endpoint = page.getByRole('region', { name: `Endpoint http://127.0.0.1:${HOOK_PORT}/pan` });
  const row = endpoint.getByRole('row', { name: new RegExp(`granule\\.archived.*granules/`) }).first();
  await until(async () => (await row.textContent())?.includes('Delivered'), 'the log says delivered', WAIT_MS);
  await shoot(page, 'provider-webhook-desktop.png');
});
