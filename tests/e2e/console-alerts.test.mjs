// An operator's alert: on Configuration > Alerts the operator sends "drive.offline" to a
// webhook; a drive then fails three times in a row (the archive's own error path, driven from
// `manage.py shell` as the drive would) and a real receiver here gets the alert, signed
// (checked here with node's crypto); the page's log shows it delivered. The drive is varied
// back online after. The shell runs without blocking this process (execFile, not
// execFileSync): the receiver lives in this process's event loop, and a blocked loop could not
// answer the alert the worker sends while the shell is still running (a timed-out first
// delivery under load).
//
//   scripts/e2e.sh tests/e2e/console-alerts.test.mjs   (E2E_HOOK_PORT: the receiver's port)
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';

import { OPERATOR, callApi, launchChromium, logIn, openPage, shoot, until } from './browser.mjs';
import { startReceiver } from './hooks.mjs';

const HOOK_PORT = Number(process.env.E2E_HOOK_PORT || 8883) + 2;
const WAIT_MS = 60_000;
const FAIL_DRIVE = `
from django.conf import settings
from backend.archive.models import Drive
from backend.archive.services import drives
drive = Drive.objects.exclude(state="offline").order_by("-name").first()
for _ in range(settings.GRANARY_DRIVE_ERROR_LIMIT):
    drives.drive_error(drive, "SCSI sense 4/44/00: internal target failure (journey)")
print(drive.name)
`;

/** @type {import('playwright-core').Browser | undefined} */
let browser;
/** @type {Awaited<ReturnType<typeof startReceiver>>} */
let hook;
/** @type {Awaited<ReturnType<typeof openPage>> | undefined} */
let desk;
let driveName = '';

before(async () => {
  hook = await startReceiver(HOOK_PORT);
  browser = await launchChromium();
});

after(async () => {
  if (desk) {
    if (driveName) {
      await callApi(desk.context, 'POST', `/api/v1/archive/drives/${driveName}/vary/`, {
        json: { online: true, reason: 'journey over' },
      });
    }
    const mine = (await callApi(desk.context, 'GET', '/api/v1/event-endpoints/')).body;
    for (const endpoint of mine.filter((/** @type {{ name: string }} */ e) => e.name === 'Alerts')) {
      await callApi(desk.context, 'DELETE', `/api/v1/event-endpoints/${endpoint.id}/`);
    }
  }
  await desk?.context.close();
  await browser?.close();
  hook.close();
});

test('an operator gets an alert at a webhook when a drive goes offline', async () => {
  desk = await openPage(browser, { width: 1280, height: 900 });
  const { page } = desk;
  await logIn(page, OPERATOR, '/config/alerts');
  await page.getByRole('heading', { name: 'Alerts' }).waitFor();
  const form = page.locator('form', { has: page.getByRole('heading', { name: 'New endpoint' }) });
  await form.getByLabel('Channel').selectOption('webhook');
  await form.getByLabel('Webhook URL').fill(`http://127.0.0.1:${HOOK_PORT}/alerts`);
  assert.equal(await form.getByRole('checkbox', { name: /drive\.offline/ }).isChecked(), true);
  await form.getByRole('button', { name: 'Add endpoint' }).click();
  hook.secret = (await form.getByTestId('webhook-secret').textContent()) ?? '';
  assert.match(hook.secret, /^whsec_/);

  const { stdout } = await promisify(execFile)('.venv/bin/python',
    ['manage.py', 'shell', '-c', FAIL_DRIVE], { env: process.env, encoding: 'utf8' });
  driveName = stdout.trim().split('\n').pop() ?? '';
  assert.ok(driveName);
  const alert = () => hook.received.find((r) => r.type === 'org.granary.drive.offline'
    && r.data.drive === driveName);
  await until(async () => alert(), `the receiver got drive.offline for ${driveName}`, WAIT_MS);
  assert.equal(alert()?.valid, true);

  const endpoint = page.getByRole('region', { name: `Endpoint http://127.0.0.1:${HOOK_PORT}/alerts` });
  const row = endpoint.getByRole('row', { name: new RegExp(`drive\\.offline.*drives/${driveName}`) });
  await until(async () => (await row.textContent())?.includes('Delivered'), 'the log says delivered', WAIT_MS);
  await shoot(page, 'console-alerts-desktop.png');
});
