// The operator's granule console end to end: the provider delivers a snow granule of the
// journey's own (other journeys count the demo's), the operator finds it by a wildcard id, reads its
// timeline, withdraws it (gone from the scientist's search and from STAC), delete it, and
// repack the volume that held it: the volume ends scratch with its bytes reclaimed.
//
//   GRANARY_URL=http://127.0.0.1:8765 node --test tests/e2e/console-granules.test.mjs
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';

import {
  BASE_URL, OPERATOR, PROVIDER, callApi, launchChromium, logIn, openPage, pageText, shoot,
  sidewaysOverflow, stageFile, until as waitUntil,
} from './browser.mjs';

const WAIT_MS = Number(process.env.E2E_ARCHIVE_WAIT_MS || 180_000);
const COLLECTION = 'MOD10C1.061';

/** @type {import('playwright-core').Browser | undefined} */
let browser;

before(async () => {
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
});

/**
 * GET `path`, or POST `body` to it, with the page's session.
 * @param {import('playwright-core').Page} page
 * @param {string} path
 * @param {unknown} [body]
 */
function api(page, path, body) {
  return callApi(page.context(), body === undefined ? 'GET' : 'POST', path, { json: body });
}

/**
 * Poll `check` until it answers something truthy, or fail saying `what`.
 * @template T
 * @param {() => Promise<T>} check
 * @param {string} what
 */
const until = (check, what) => waitUntil(check, what, WAIT_MS);

/**
 * The demo's granules once the archive is quiet: every one archived, nothing still moving.
 * @param {import('playwright-core').Page} page
 */
async function archiveSettled(page) {
  return until(async () => {
    const counts = await api(page, `/api/v1/console/granules/counts/?collection=${COLLECTION}`);
    assert.equal(counts.status, 200, JSON.stringify(counts.body));
    const { states } = counts.body;
    const busy = states.registered + states.archiving;
    const queue = await api(page, '/api/v1/archive/requests/?state=queued');
    const running = await api(page, '/api/v1/archive/requests/?state=running');
    const moving = queue.body.results.length + running.body.results.length;
    return states.archived > 0 && busy === 0 && moving === 0 ? counts.body : null;
  }, 'the demo granules are not all archived, or archive work is still moving');
}

/**
 * The provider delivers one snow granule of a day the demo does not cover (a 2025 day), named
 * anew on every run; its granule id.
 */
async function deliverOwnGranule() {
  const { context, page } = await openPage(browser, { width: 1280, height: 800 });
  try {
    await logIn(page, PROVIDER, '/provider');
    const granuleId = `MOD10C1.A2025166.061.${String(Date.now()).slice(-13).padStart(13, '0')}`;
    const file = await stageFile(context, `e2e-console/${granuleId}.hdf`, randomBytes(30_000));
    const granule = {
      collection: COLLECTION,
      granule_id: granuleId,
      temporal: { start: '2025-06-15T00:00:00Z', end: '2025-06-15T23:59:59Z' },
      bbox: [-180, -90, 180, 90],
      files: [file],
    };
    const submitted = await callApi(context, 'POST', '/api/v1/ingest/requests/', { json: { granules: [granule] } });
    assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
    return granuleId;
  } finally {
    await context.close();
  }
}

/**
 * What an anonymous visitor's search page and STAC say about `granuleId`.
 * @param {import('playwright-core').Page} page
 * @param {string} granuleId
 */
async function publicView(page, granuleId) {
  await page.goto(`${BASE_URL}/search?q=${encodeURIComponent(granuleId)}`, { waitUntil: 'load' });
  const results = page.getByRole('region', { name: 'Results' });
  const row = results.getByRole('row', { name: new RegExp(granuleId.replaceAll('.', '\\.')) });
  const empty = page.getByText('No granules match');
  await row.or(empty).first().waitFor();
  const inSearch = await row.count();
  const stac = await api(page, `/stac/search?collections=${COLLECTION}&ids=${encodeURIComponent(granuleId)}`);
  assert.equal(stac.status, 200, JSON.stringify(stac.body));
  const inStac = stac.body.features.filter((/** @type {{ id: string }} */ f) => f.id === granuleId).length;
  return { inSearch, inStac };
}

test('an operator finds, withdraws and deletes a granule; a repack reclaims its tape', async () => {
  const desk = await openPage(browser, { width: 1280, height: 800 });
  const visitor = await openPage(browser, { width: 1280, height: 800 });
  const { page } = desk;
  try {
    await logIn(page, OPERATOR, '/dashboards/granules');
    const granuleId = await deliverOwnGranule();
    const target = await until(async () => {
      const list = await api(page, `/api/v1/console/granules/?granule_id=${granuleId}&state=archived`);
      return list.body.results[0];
    }, `the delivered granule ${granuleId} is not archived`);
    await archiveSettled(page);
    const pattern = `${target.granule_id.slice(0, target.granule_id.indexOf('.061'))}.*`;
    assert.deepEqual(await publicView(visitor.page, target.granule_id), { inSearch: 1, inStac: 1 });

    // Find it by a wildcard id in the console's filter; its chips count the archived ones.
    await page.getByRole('link', { name: 'Granules' }).click();
    await page.getByLabel('Granule id').fill(pattern.toLowerCase());
    await page.getByRole('button', { name: 'Find granules' }).click();
    const link = page.getByRole('link', { name: target.granule_id, exact: true });
    await link.waitFor();
    await page.getByRole('button', { name: /^archived [1-9]/ }).waitFor();
    assert.ok((await sidewaysOverflow(page)) <= 0, 'the granule list scrolls sideways');
    await shoot(page, 'console-granules-desktop.png');

    // Its page: files, copies and a timeline from ingest to tape.
    await link.click();
    await page.getByRole('heading', { name: target.granule_id }).waitFor();
    const timeline = page.getByRole('list', { name: 'Timeline' });
    await timeline.waitFor();
    const events = await timeline.innerText();
    for (const words of [/received in ingest request \d+/, /registered in the catalog/, /copy 1 on \S+ written/,
      /copy 2 on \S+ (written and )?verified/, /archived: every copy/]) {
      assert.match(events, words, `the timeline lacks ${words}:\n${events}`);
    }
    await shoot(page, 'console-granule-desktop.png');

    // Withdraw: the reason is asked for, then the scientist's search and STAC lose it.
    await page.getByRole('button', { name: 'Withdraw…' }).click();
    await page.getByRole('form', { name: 'Withdraw' }).getByLabel(/Reason/).fill('e2e: calibration error');
    await page.getByRole('button', { name: 'Withdraw granule' }).click();
    await page.getByText(/Withdrawn: hidden from search/).waitFor().catch(async () => {
      throw new Error(`the withdrawal did not say so. The page says:\n${await pageText(page)}`);
    });
    // the notice at the top says why (the timeline repeats it beside each event it caused)
    await page.locator('.cg-retired').getByText(/was withdrawn by an operator: e2e: calibration error/).waitFor();
    assert.deepEqual(await publicView(visitor.page, target.granule_id), { inSearch: 0, inStac: 0 });
    await shoot(visitor.page, 'console-withdrawn-search.png');

    // The volumes that hold it, and their live bytes before the delete.
    const before = await api(page, `/api/v1/console/granules/${target.id}/`);
    const copies = before.body.files.flatMap((/** @type {any} */ f) => f.copies).filter((/** @type {any} */ c) => c.state === 'verified');
    const primary = copies.find((/** @type {any} */ c) => c.copy_number === 1);
    assert.ok(primary, 'no verified first copy');
    let held = 0;
    for (const c of copies) if (c.volume === primary.volume) held += c.length;
    const volumeBefore = (await api(page, `/api/v1/archive/volumes/${primary.volume}/`)).body;

    // Delete: the id must be typed again.
    await page.getByRole('button', { name: 'Delete…' }).click();
    const form = page.getByRole('form', { name: 'Delete' });
    await form.getByLabel(/Reason/).fill('e2e: duplicate product');
    const submit = form.getByRole('button', { name: 'Delete granule' });
    await form.getByLabel('Type the granule id to confirm').fill(target.granule_id.slice(0, 5));
    assert.ok(await submit.isDisabled(), 'delete was offered before the id was typed in full');
    await form.getByLabel('Type the granule id to confirm').fill(target.granule_id);
    await submit.click();
    await page.getByText(/Deleted: nothing more can be done/).waitFor();
    await page.getByRole('list', { name: 'Timeline' }).getByText(/^delete/).first().waitFor();
    const volumeAfter = (await api(page, `/api/v1/archive/volumes/${primary.volume}/`)).body;
    assert.equal(volumeAfter.live_bytes, volumeBefore.live_bytes - held, 'the volume kept the deleted bytes live');
    await shoot(page, 'console-granule-deleted-desktop.png');

    // Repack the volume: it ends scratch, nothing live on it, the deleted copies not carried.
    const repack = await api(page, `/api/v1/archive/volumes/${primary.volume}/repack/`, {});
    assert.equal(repack.status, 202, JSON.stringify(repack.body));
    const recycled = await until(async () => {
      const v = (await api(page, `/api/v1/archive/volumes/${primary.volume}/`)).body;
      return v.state === 'scratch' ? v : null;
    }, `volume ${primary.volume} was not recycled by its repack`);
    assert.equal(recycled.live_bytes, 0);
    assert.equal(recycled.file_count, 0);
    const gone = await api(page, `/api/v1/console/granules/${target.id}/`);
    const live = gone.body.files.flatMap((/** @type {any} */ f) => f.copies).filter((/** @type {any} */ c) => c.state !== 'released');
    assert.deepEqual(live, [], 'a copy of the deleted granule is still live');
    // The board shows the volume among the scratch ones again.
    await page.goto(`${BASE_URL}/dashboards/granules/${target.id}`, { waitUntil: 'load' });
    await page.getByRole('table', { name: /^Copies of / }).first().waitFor();
    assert.match(await page.getByRole('table', { name: /^Copies of / }).first().innerText(), /released/);
    assert.deepEqual(desk.consoleErrors, [], 'the browser console logged errors');
  } finally {
    await shoot(page, 'console-granule-end.png');
    await desk.context.close();
    await visitor.context.close();
  }
});

test('the granule console reads on a phone', async () => {
  const phone = await openPage(browser, { width: 390, height: 844 });
  const { page } = phone;
  try {
    await logIn(page, OPERATOR, '/dashboards/granules');
    await page.getByRole('group', { name: 'Granules per state' }).waitFor();
    const first = page.locator('tbody th a').first();
    await first.waitFor();
    assert.ok((await sidewaysOverflow(page)) <= 0, 'the granule list scrolls sideways on a phone');
    await shoot(page, 'console-granules-phone.png');
    await first.click();
    await page.getByRole('list', { name: 'Timeline' }).waitFor();
    assert.ok((await sidewaysOverflow(page)) <= 0, 'the granule page scrolls sideways on a phone');
    await shoot(page, 'console-granule-phone.png');
    assert.deepEqual(phone.consoleErrors, [], 'the browser console logged errors');
  } finally {
    await phone.context.close();
  }
});
