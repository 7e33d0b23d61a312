// The operator's failures console end to end: the provider delivers a granule declared with a
// checksum its bytes do not have (as the demo traffic does); the Failures page shows it once in
// the groups by reason, with its collection; the operator retries the group after confirming
// and reads the outcome; the dead-letter section answers. Desktop and phone widths.
//
//   GRANARY_URL=http://127.0.0.1:8765 node --test tests/e2e/console-failures.test.mjs
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';

import {
  OPERATOR, PROVIDER, callApi, launchChromium, logIn, openPage, pageText, shoot, sidewaysOverflow,
  stageFile,
} from './browser.mjs';

const INGEST_WAIT_MS = Number(process.env.E2E_INGEST_WAIT_MS || 120_000);
const GROUP = /MD5 checksum is <hex>, the provider declared <hex>/;

/** @type {import('playwright-core').Browser | undefined} */
let browser;

before(async () => {
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
});

/**
 * The provider uploads one file and asks to ingest it declared with another checksum; returns
 * once the request has failed, with the failed granule's id.
 */
async function deliverWithAWrongChecksum() {
  const { context, page } = await openPage(browser, { width: 1280, height: 900 });
  try {
    await logIn(page, PROVIDER, '/provider');
    const stamp = Date.now();
    const name = `MOD021KM.A2026331.${stamp}.061.hdf`;
    const path = `console-failures/${name}`;
    const staged = await stageFile(context, path, randomBytes(40_000));
    const declared = createHash('md5').update(`not ${name}`).digest('hex');
    const granuleId = name.replace(/\.hdf$/, '');
    const start = new Date(Date.UTC(2026, 10, 27, 0, 0, 0));
    const submitted = await callApi(context, 'POST', '/api/v1/ingest/requests/', {
      json: {
        granules: [
          {
            collection: 'MOD021KM.061',
            granule_id: granuleId,
            temporal: {
              start: start.toISOString(),
              end: new Date(start.getTime() + 300_000).toISOString(),
            },
            bbox: [-20, 10, 5, 30],
            files: [{ ...staged, name, checksum: declared }],
          },
        ],
      },
    });
    assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
    const deadline = Date.now() + INGEST_WAIT_MS;
    for (;;) {
      const { body } = await callApi(
        context,
        'GET',
        `/api/v1/ingest/requests/${submitted.body.id}/?granules=0`,
      );
      if (body?.state === 'failed') return granuleId;
      if (Date.now() > deadline)
        throw new Error(`the ingest request did not fail in time: ${JSON.stringify(body)}`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  } finally {
    await context.close();
  }
}

test('a failed ingest shows as a group by reason, and retrying the group says what it did', async () => {
  const granuleId = await deliverWithAWrongChecksum();
  const { context, page, consoleErrors } = await openPage(browser, { width: 1280, height: 900 });
  try {
    await logIn(page, OPERATOR, '/dashboards/failures');
    const groups = page.locator('section[aria-labelledby="failure-groups-heading"]');
    await groups.getByRole('heading', { name: 'Failures by reason' }).waitFor();
    const row = groups.getByRole('row', { name: GROUP });
    await row
      .waitFor()
      .catch(async () => assert.fail(`no checksum group: ${await pageText(page)}`));
    assert.equal(await row.count(), 1, 'one cause is one group');
    const text = await row.innerText();
    assert.match(text, /ingest · granule/);
    assert.match(text, /MOD021KM\.061 \(\d+\)/);
    const count = Number(await row.locator('td').nth(1).innerText());
    assert.ok(count >= 1, `the group counts the failed granule: ${text}`);
    await shoot(page, 'console-failures.png');

    await row.getByRole('button', { name: new RegExp(`^Retry ${count}`) }).click();
    const confirm = row.getByRole('group', { name: 'Confirm retrying' });
    assert.match(await confirm.innerText(), new RegExp(`Send ${count} granules? round again\\?`));
    await shoot(page, 'console-failures-confirm.png');
    await confirm.getByRole('button', { name: 'Yes, retry' }).click();
    await groups.getByText(new RegExp(`Sent ${count} granules? round again`)).waitFor();
    await shoot(page, 'console-failures-retried.png');

    // the retried granule went round again through ingest's own retry
    const failing = page.locator('section[aria-labelledby="ingest-failures-heading"]');
    await failing.getByRole('heading', { name: /Ingest requests with failed granules/ }).waitFor();
    const dead = page.locator('section[aria-labelledby="dead-letter-heading"]');
    await dead.locator('table, .status--empty').first().waitFor();
    assert.ok(granuleId);
    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await context.close();
  }
});

test('the failures page works at phone width', async () => {
  const { context, page, consoleErrors } = await openPage(browser, { width: 390, height: 844 });
  try {
    await logIn(page, OPERATOR, '/dashboards/failures');
    await page.getByRole('heading', { name: 'Failures by reason' }).waitFor();
    await page
      .locator('section[aria-labelledby="failure-groups-heading"]')
      .locator('table, .status--empty')
      .first()
      .waitFor();
    await page
      .locator('section[aria-labelledby="dead-letter-heading"]')
      .locator('table, .status--empty')
      .first()
      .waitFor();
    assert.ok((await sidewaysOverflow(page)) <= 0, 'the failures page scrolls sideways on a phone');
    await shoot(page, 'console-failures-phone.png');
    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await context.close();
  }
});
