// A granule whose copy 1 lives in the object store, ordered and downloaded in the browser: the
// demo keeps copy 1 of the sea surface temperature collection in a bucket of the local S3 server
// that e2e.sh (like make run) starts, copy 2 on tape. An operator releases one granule's data
// file from the disk cache; a scientist orders it, the archive recalls it from the bucket (no
// tape mount), and the file downloaded through the order page's link hashes to the catalog's
// checksum (computed here from the bytes).
//
//   E2E_PORT=8779 scripts/e2e.sh tests/e2e/portal-object-store.test.mjs
//
// Screenshots: var/screenshots/object-store-*.png.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';

import { BASE_URL, OPERATOR, callApi, launchChromium, logIn, openPage, pageText, shoot } from './browser.mjs';

const RUN = Date.now();
// A user of its own, so no other journey's cart or orders get in the way.
const USER = { user: `objects${RUN}`, password: `granary-${RUN}` };
const COLLECTION = 'GHRSST_OISST_L4.2.1';
const DAY = '2026-11-06';
const WAIT_MS = Number(process.env.E2E_ARCHIVE_WAIT_MS || 180_000);

/** @type {import('playwright-core').Browser | undefined} */
let browser;

/**
 * Run Python in Granary's Django (the journey's database and data root, from e2e.sh's
 * environment); the last line it prints (the shell announces its imports first).
 * @param {string} code
 */
function django(code) {
  const out = execFileSync('.venv/bin/python', ['manage.py', 'shell', '-c', code], { encoding: 'utf8' });
  return out.trim().split('\n').pop() ?? '';
}

before(async () => {
  django(`from backend.accounts.services import create_user; create_user(${JSON.stringify(USER.user)}, "user", password=${JSON.stringify(USER.password)})`);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
});

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test('a granule whose copy 1 is in the object store is recalled from it and downloads intact', async () => {
  const { context, page, consoleErrors } = await openPage(browser, { width: 1280, height: 900 });
  try {
    await logIn(page, OPERATOR, '/');
    /** @type {any} */
    let granule;
    const deadline = Date.now() + WAIT_MS;
    while (!granule) {
      const answer = await callApi(context, 'GET', `/api/v1/granules/?collection=${COLLECTION}&start=${DAY}&end=${DAY}`);
      granule = answer.body.results?.[0];
      assert.ok(granule || Date.now() < deadline, `no archived ${COLLECTION} granule of ${DAY}`);
      if (!granule) await sleep(1000);
    }
    const data = granule.files.find((/** @type {any} */ f) => f.role === 'data');

    // Where the catalog says its copies are: copy 1 an object in the demo bucket, copy 2 on tape.
    const media = django([
      'from backend.archive.models import FileCopy',
      `print(";".join(f"{c.copy_number}:{c.medium}:{c.bucket.name if c.bucket_id else c.volume.label}" for c in FileCopy.objects.filter(file_id=${data.id}, state="verified").order_by("copy_number")))`,
    ].join('\n'));
    const [first, second] = media.split(';');
    assert.match(first, /^1:object:granary-archive$/, media);
    assert.match(second, /^2:tape:/, media);

    // Off the disk cache: an order must bring it back from a copy.
    const released = await callApi(context, 'POST', '/api/v1/archive/cache/release/', { json: { files: [data.id] } });
    assert.equal(released.status, 200, JSON.stringify(released.body));
    await context.clearCookies();

    await logIn(page, USER, '/search');
    await page.goto(`${BASE_URL}/granules/${granule.id}`, { waitUntil: 'load' });
    await page.getByRole('heading', { name: granule.granule_id }).waitFor();
    // The granule page names each copy's medium and place: the bucket and key, then the tape.
    const files = page.getByRole('table', { name: `Files of ${granule.granule_id}` });
    const shown = await files.getByRole('row', { name: new RegExp(data.name.replaceAll('.', '\\.')) }).innerText();
    assert.match(shown, /Copy 1: object store · bucket granary-archive, key \S+/, shown);
    assert.match(shown, /Copy 2: tape · [A-Z]\d{5} in silo\d/, shown);
    await shoot(page, 'object-store-granule.png');
    await page.getByRole('button', { name: `Add ${granule.granule_id} to the cart` }).click();
    await page.getByRole('link', { name: /is in the cart/ }).waitFor();
    await page.getByRole('link', { name: 'Cart, 1 granule' }).click();
    await page.getByRole('button', { name: /^Order 1 granule/ }).click();
    await page.waitForURL((url) => /^\/orders\/\d+$/.test(url.pathname));
    const orderId = Number(new URL(page.url()).pathname.split('/').pop());
    await page.getByRole('heading', { name: new RegExp(`Order ${orderId}\\s*Ready`) }).waitFor({ timeout: WAIT_MS }).catch(async () => {
      throw new Error(`order ${orderId} never got ready. The page says:\n${await pageText(page)}`);
    });
    await shoot(page, 'object-store-order-ready.png');

    const row = page.getByRole('row', { name: new RegExp(data.name.replaceAll('.', '\\.')) });
    const listed = (await row.locator('[data-checksum]').innerText()).trim();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      row.getByRole('link', { name: `Download ${data.name}` }).click(),
    ]);
    const path = await download.path();
    assert.ok(path, `the download of ${data.name} failed: ${await download.failure()}`);
    const bytes = await readFile(path);
    assert.equal(bytes.length, data.size);
    const kind = data.checksum_type.toLowerCase().replace('-', '');
    assert.equal(createHash(kind).update(bytes).digest('hex'), data.checksum);
    assert.equal(listed, data.checksum);

    // The recall that brought it back read the bucket, not a tape.
    const recalls = django([
      'from backend.archive.models import ArchiveRequest',
      `print(",".join(sorted(str(r.bucket.name if r.bucket_id else "tape") for r in ArchiveRequest.objects.filter(kind="recall", file_id=${data.id}, state="done"))))`,
    ].join('\n'));
    assert.equal(recalls, 'granary-archive');
    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await context.close();
  }
});
