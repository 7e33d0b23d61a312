// Searching by shapes end to end: a provider delivers MOD021KM granules with real footprints
// around the antimeridian; a scientist draws a polygon across 180° on the search map and gets
// exactly the granules whose footprint meets it (the expectation computed here, with the plane
// geometry of geometry.mjs over the footprints the API lists, not with the server's answer);
// uploads a zipped shapefile made by pyshp and gets exactly what meets it; subscribes from the
// polygon search; and a granule delivered later that meets the polygon (and only it) shows as
// delivered in the subscription's log.
//
//   E2E_PORT=8776 scripts/e2e.sh tests/e2e/portal-shapes.test.mjs
//
// Needs the demo data (seed_demo) and a running worker. Screenshots: var/screenshots/shapes-*.png.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';

import {
  BASE_URL, PROVIDER, SCIENTIST, callApi, launchChromium, logIn, openPage, pageText, shoot,
  sidewaysOverflow, stageFile,
} from './browser.mjs';
import { footprintMeets } from './geometry.mjs';

const WAIT_MS = Number(process.env.E2E_INGEST_WAIT_MS || 180_000);
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const COLLECTION = 'MOD021KM.061';
const DAY = '2026-11-27';
const SEARCH = `/search?collection=${COLLECTION}&start=${DAY}&end=${DAY}`;

// The polygon the scientist clicks, corner by corner: from 165° E across 180° to 165° W.
const CORNERS = [[165, -15], [-165, -15], [-170, 15], [170, 5]];

/** @param {number} w @param {number} s @param {number} e @param {number} n */
const box = (w, s, e, n) => ({ type: 'Polygon', coordinates: [[[w, s], [e, s], [e, n], [w, n], [w, s]]] });
/** Two boxes either side of 180°: one across it, cut there (RFC 7946). @param {number} w @param {number} s @param {number} e @param {number} n */
const cutBox = (w, s, e, n) => ({ type: 'MultiPolygon', coordinates: [box(w, s, 180, n).coordinates, box(-180, s, e, n).coordinates] });
// Footprints near the antimeridian: some meet the polygon, some only its bounding box. Across
// 180° they are written as RFC 7946 allows: with longitudes past 180, or cut there.
const FOOTPRINTS = {
  across: box(175, -5, 185, 5), // over 180°, inside
  west: box(-178, -3, -176, 3), // inside, west of 180°
  edge: box(160, -2, 170, 2), // reaches over the polygon's slanted western edge
  corner: { type: 'Polygon', coordinates: [[[160, 10], [166, 14], [160, 14], [160, 10]]] }, // in its box, outside it
  east: box(-166, 2, -160, 10), // in its box, outside its eastern edge
  near: box(155, -2, 164, 2), // west of it
  far: box(-60, -10, -50, 10), // the other side of the world
};
const LATER = { inside: cutBox(178, -2, -178, 2), outside: box(161, 11, 164, 13) };

const RUN = Date.now();
/** A name the collection's file pattern accepts, new on every run. @param {number} n */
const granuleId = (n) => `MOD021KM.A2026331.${String(1000 + n).slice(-4)}.061.${String(RUN).slice(-13).padStart(13, '0')}`;
const IDS = Object.fromEntries(Object.keys(FOOTPRINTS).map((name, i) => [name, granuleId(i)]));
const LATER_IDS = { inside: granuleId(20), outside: granuleId(21) };

/** @type {import('playwright-core').Browser | undefined} */
let browser;
/** @type {Awaited<ReturnType<typeof openPage>> | undefined} */
let scientist;
/** @type {Awaited<ReturnType<typeof openPage>> | undefined} */
let provider;
/** The polygon as the search page's address keeps it, once drawn. @type {{ type: string, coordinates: any } | undefined} */
let drawn;
/** The search's address with the polygon. @type {string | undefined} */
let polygonSearch;

before(async () => {
  browser = await launchChromium();
  provider = await openPage(browser, DESKTOP);
  await logIn(provider.page, PROVIDER, '/provider');
  scientist = await openPage(browser, DESKTOP);
  await logIn(scientist.page, SCIENTIST, '/search');
});

after(async () => {
  await scientist?.context.close();
  await provider?.context.close();
  await browser?.close();
});


/**
 * Poll until `check` gives a value; fail saying what was seen last.
 * @template T
 * @param {string} what
 * @param {() => Promise<T | undefined>} check
 * @param {() => Promise<string>} seen
 * @returns {Promise<T>}
 */
async function waitFor(what, check, seen) {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen in ${WAIT_MS / 1000} s; last seen: ${await seen()}`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/**
 * The provider delivers granules of DAY with these footprints through the bulk ingest API and
 * waits until the catalog lists them all.
 * @param {Record<string, string>} ids name -> granule id
 * @param {Record<string, object>} footprints name -> GeoJSON
 */
async function deliver(ids, footprints) {
  assert.ok(provider, 'the provider did not log in');
  const { context } = provider;
  const granules = [];
  for (const [name, id] of Object.entries(ids)) {
    const file = await stageFile(context, `e2e-shapes/${id}.hdf`, randomBytes(4_000));
    granules.push({
      collection: COLLECTION, granule_id: id, footprint: footprints[name],
      temporal: { start: `${DAY}T03:00:00Z`, end: `${DAY}T03:05:00Z` }, attributes: { day_night: 'Night' },
      files: [file],
    });
  }
  const submitted = await callApi(context, 'POST', '/api/v1/ingest/requests/', { json: { granules } });
  assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
  const wanted = Object.values(ids);
  /** @type {string[]} */
  let listed = [];
  await waitFor('the catalog listing the delivered granules', async () => {
    const answer = await callApi(context, 'GET', `/api/v1/granules/?collection=${COLLECTION}&granule_id=MOD021KM.A2026331.*.${String(RUN).slice(-13).padStart(13, '0')}&limit=100`);
    listed = answer.body.results.map((/** @type {{granule_id: string}} */ g) => g.granule_id);
    return wanted.every((id) => listed.includes(id)) ? true : undefined;
  }, async () => JSON.stringify(listed));
}

/**
 * Every granule of the collection on DAY with its footprint, as the API lists them (no shape).
 * @param {import('playwright-core').BrowserContext} context
 * @returns {Promise<{ granule_id: string, footprint: any }[]>}
 */
async function granulesOfTheDay(context) {
  const answer = await callApi(context, 'GET', `/api/v1/granules/?collection=${COLLECTION}&start=${DAY}&end=${DAY}&limit=200`);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.next, null, 'more granules that day than one page');
  return answer.body.results;
}

/**
 * Granule ids the results table shows.
 * @param {import('playwright-core').Page} page
 */
async function shownIds(page) {
  const links = page.getByRole('region', { name: 'Results' }).getByRole('table').getByRole('link');
  return (await links.allInnerTexts()).map((text) => text.trim()).filter((text) => text.startsWith('MOD021KM.')).sort();
}

/**
 * Wait until the results show `expected` (sorted ids), then check they do exactly.
 * @param {import('playwright-core').Page} page
 * @param {string[]} expected
 */
async function resultsShow(page, expected) {
  /** @type {string[]} */
  let seen = [];
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    seen = await shownIds(page).catch(() => []);
    if (JSON.stringify(seen) === JSON.stringify(expected)) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  assert.deepEqual(seen, expected, `the results differ from the expectation; the page says:\n${await pageText(page)}`);
  const count = expected.length;
  await page.getByText(`${count} ${count === 1 ? 'granule matches' : 'granules match'}`).waitFor();
}

/**
 * Click the map at a longitude and latitude (the map's view is in its data-view attribute).
 * @param {import('playwright-core').Page} page
 * @param {number[]} position [lon, lat]
 */
async function clickMap(page, [lon, lat]) {
  const map = page.getByRole('region', { name: /Map of the search/ });
  const view = (await map.getAttribute('data-view'))?.split(',').map(Number);
  const where = await map.boundingBox();
  assert.ok(view && where, 'the map has no view yet');
  const [west, south, east, north] = view;
  await page.mouse.click(where.x + ((lon - west) / (east - west)) * where.width, where.y + ((north - lat) / (north - south)) * where.height);
  await new Promise((resolve) => setTimeout(resolve, 400));   // no double click
}

test('the provider delivers granules with footprints around the antimeridian', async () => {
  await deliver(IDS, FOOTPRINTS);
});

test('a polygon drawn across the antimeridian finds exactly the granules it meets', async () => {
  assert.ok(scientist, 'an earlier step failed');
  const { page, context, consoleErrors } = scientist;
  await page.goto(`${BASE_URL}${SEARCH}`, { waitUntil: 'load' });
  await page.locator('.box-map__land').first().waitFor();
  await page.getByRole('region', { name: 'Results' }).waitFor();
  await page.getByRole('button', { name: 'Draw a polygon' }).click();
  for (const corner of CORNERS) await clickMap(page, corner);
  await page.getByRole('button', { name: 'Finish polygon' }).click();
  await page.waitForURL((url) => url.searchParams.has('shape'));
  polygonSearch = new URL(page.url()).search;

  // The polygon as the page keeps it and sends it: cut at 180° into two parts (RFC 7946), with
  // a corner where each click landed (to the map's pixel) and the others on 180° or -180°.
  const shape = JSON.parse(new URL(page.url()).searchParams.get('shape') ?? '{}');
  assert.equal(shape.type, 'MultiPolygon');
  assert.equal(shape.coordinates.length, 2);
  drawn = shape;
  /** @type {number[][]} */
  const corners = shape.coordinates.flatMap((/** @type {number[][][]} */ p) => p[0]);
  CORNERS.forEach(([lon, lat], i) => {
    assert.ok(corners.some(([x, y]) => Math.abs(x - lon) < 1.5 && Math.abs(y - lat) < 1.5), `corner ${i} is not in ${JSON.stringify(shape)}`);
  });
  assert.ok(corners.every(([x]) => Math.abs(x) === 180 || CORNERS.some(([lon]) => Math.abs(x - lon) < 1.5)), `a stray corner in ${JSON.stringify(shape)}`);

  const all = await granulesOfTheDay(context);
  const expected = all.filter((g) => g.footprint && footprintMeets(g.footprint, shape)).map((g) => g.granule_id).sort();
  // The journey's own granules fall as designed (the demo's swaths that day are counted too).
  const meets = Object.fromEntries(Object.entries(IDS).map(([name, id]) => [name, expected.includes(id)]));
  assert.deepEqual(meets, { across: true, west: true, edge: true, corner: false, east: false, near: false, far: false });
  await resultsShow(page, expected);
  await page.getByText(/Searching within a polygon cut at the antimeridian into 2 parts/).waitFor();
  // The polygon and the footprints are drawn on the map, the polygon at both edges.
  const map = page.getByRole('region', { name: /Map of the search/ });
  assert.ok((await map.locator('path.box-map__box').count()) >= 2, 'the polygon is not drawn');
  assert.ok((await map.locator('path.box-map__footprint').count()) >= expected.length, 'footprints missing');
  await shoot(page, 'shapes-polygon-desktop.png');

  // A reload keeps the search.
  await page.reload({ waitUntil: 'load' });
  await resultsShow(page, expected);

  await page.setViewportSize(PHONE);
  await page.reload({ waitUntil: 'load' });
  await resultsShow(page, expected);
  const wider = await page.evaluate(() => Array.from(document.querySelectorAll('body *'))
    .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
    .slice(0, 5).map((e) => `${e.tagName}.${e.className}`));
  assert.ok((await sidewaysOverflow(page)) <= 0, `the search page scrolls sideways on a phone: ${wider}`);
  await shoot(page, 'shapes-polygon-phone.png');
  await page.setViewportSize(DESKTOP);
  assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
});

/** A zipped shapefile of one polygon in WGS 84, made with pyshp. @param {number[][]} ring */
function zippedShapefile(ring) {
  const script = `
import io, json, sys, zipfile, shapefile
ring = json.loads(sys.argv[1])
shp, shx, dbf = io.BytesIO(), io.BytesIO(), io.BytesIO()
with shapefile.Writer(shp=shp, shx=shx, dbf=dbf, shapeType=shapefile.POLYGON) as w:
    w.field("name", "C")
    w.poly([ring[::-1]])
    w.record("area")
prj = 'GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]'
out = io.BytesIO()
with zipfile.ZipFile(out, "w") as z:
    for ext, part in (("shp", shp), ("shx", shx), ("dbf", dbf)):
        z.writestr("area." + ext, part.getvalue())
    z.writestr("area.prj", prj)
sys.stdout.buffer.write(out.getvalue())
`;
  return execFileSync('.venv/bin/python', ['-c', script, JSON.stringify(ring)]);
}

test('an uploaded zipped shapefile narrows the results to the granules it meets', async () => {
  assert.ok(scientist, 'an earlier step failed');
  const { page, context, consoleErrors } = scientist;
  await page.goto(`${BASE_URL}${SEARCH}`, { waitUntil: 'load' });
  await page.getByRole('region', { name: 'Results' }).waitFor();
  // West of 180° only: a strip from 179° W to 160° W.
  const strip = box(-179, -12, -160, 12);
  await page.getByLabel('Upload a shape').setInputFiles({ name: 'area.zip', mimeType: 'application/zip', buffer: zippedShapefile(strip.coordinates[0]) });
  await page.getByText('Read one feature from the shapefile file').waitFor();
  await page.waitForURL((url) => url.searchParams.has('shape'));

  const all = await granulesOfTheDay(context);
  const expected = all.filter((g) => g.footprint && footprintMeets(g.footprint, strip)).map((g) => g.granule_id).sort();
  const meets = Object.fromEntries(Object.entries(IDS).map(([name, id]) => [name, expected.includes(id)]));
  assert.deepEqual(meets, { across: true, west: true, edge: false, corner: false, east: true, near: false, far: false });
  await resultsShow(page, expected);
  await shoot(page, 'shapes-upload-desktop.png');
  // At phone width from the start, as a phone opens it (the address keeps the shape).
  await page.setViewportSize(PHONE);
  await page.reload({ waitUntil: 'load' });
  await resultsShow(page, expected);
  // on a phone the map waits behind its toggle, above the results
  await page.getByRole('button', { name: 'Map and area tools' }).click();
  await page.locator('.box-map__land').first().waitFor();
  await shoot(page, 'shapes-upload-phone.png');
  await page.setViewportSize(DESKTOP);
  assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
});

test('subscribing from the polygon search delivers a later granule that meets it, and only it', async () => {
  assert.ok(scientist && polygonSearch && drawn, 'an earlier step failed');
  const { page, context, consoleErrors } = scientist;
  await page.goto(`${BASE_URL}/search${polygonSearch}`, { waitUntil: 'load' });
  await page.getByRole('link', { name: 'Subscribe to this search' }).click();
  await page.waitForURL((url) => url.pathname === '/subscriptions/new');
  await page.getByText('Filled in from your search').waitFor();
  await page.getByText(/Within a polygon cut at the antimeridian into 2 parts/).waitFor();
  const name = `Across the antimeridian ${RUN}`;
  await page.getByLabel('Name').fill(name);
  await page.getByRole('region', { name: 'Area of the subscription' }).locator('path.box-map__box').first().waitFor();
  await shoot(page, 'shapes-subscribe.png');
  await page.getByRole('button', { name: 'Create subscription' }).click();
  await page.waitForURL(/\/subscriptions\/\d+$/).catch(async () => {
    throw new Error(`not created: ${await pageText(page)}`);
  });
  const id = Number(new URL(page.url()).pathname.split('/').pop());
  const saved = await callApi(context, 'GET', `/api/v1/subscriptions/${id}/`);
  assert.deepEqual(saved.body.collections, [COLLECTION]);
  assert.ok(saved.body.intersects, 'the subscription kept no shape');
  try {
    // Later, the provider delivers one granule meeting the polygon and one only in its box.
    assert.equal(footprintMeets(LATER.inside, drawn), true);
    assert.equal(footprintMeets(LATER.outside, drawn), false);
    await deliver(LATER_IDS, LATER);
    const log = page.getByRole('region', { name: 'Delivery log' });
    const row = log.getByRole('row', { name: new RegExp(LATER_IDS.inside.replaceAll('.', '\\.')) });
    await row.waitFor({ timeout: WAIT_MS }).catch(async () => {
      throw new Error(`no delivery of ${LATER_IDS.inside} appeared. The page says:\n${await pageText(page)}`);
    });
    await row.getByText(/Delivered/).waitFor({ timeout: WAIT_MS });
    await page.waitForTimeout(3000);   // a few refreshes more: the other granule is not delivered
    const deliveries = await callApi(context, 'GET', `/api/v1/subscriptions/${id}/deliveries/`);
    assert.deepEqual(deliveries.body.results.map((/** @type {{granule: string}} */ d) => d.granule), [`${COLLECTION}:${LATER_IDS.inside}`]);
    assert.ok(!(await log.innerText()).includes(LATER_IDS.outside), `${LATER_IDS.outside} was delivered too`);
    await shoot(page, 'shapes-subscription-delivered.png');
    assert.deepEqual(consoleErrors.filter((text) => !/status of 400/.test(text)), [], 'the browser console logged errors');
  } finally {
    // Leave the scientist's subscriptions as found for the other journeys.
    await callApi(context, 'DELETE', `/api/v1/subscriptions/${id}/`);
  }
});

test('results draw footprints as their shapes, and global ones as outlines only', async () => {
  assert.ok(scientist, 'an earlier step failed');
  const { page, context, consoleErrors } = scientist;
  // The demo's first day: global sea surface temperature and snow grids, and MODIS swaths.
  await page.goto(`${BASE_URL}/search?start=2026-11-01&end=2026-11-01`, { waitUntil: 'load' });
  await page.getByRole('region', { name: 'Results' }).getByRole('row').nth(1).waitFor();
  await page.locator('.box-map__land').first().waitFor();
  const listed = await callApi(context, 'GET', '/api/v1/granules/?start=2026-11-01&end=2026-11-01&limit=20');
  /** @param {number[]} b */
  const global = (b) => (b[0] <= b[2] ? b[2] - b[0] : 360 - (b[0] - b[2])) * (b[3] - b[1]) >= 0.5 * 360 * 180;
  const wide = listed.body.results.filter((/** @type {{bbox: number[]}} */ g) => g.bbox && global(g.bbox));
  const narrow = listed.body.results.filter((/** @type {{bbox: number[]}} */ g) => g.bbox && !global(g.bbox));
  assert.ok(wide.length > 0 && narrow.length > 0, 'the demo day has no global and swath granules');
  const map = page.getByRole('region', { name: /Map of the search/ });
  const outlines = map.locator('path.box-map__footprint--outline');
  await outlines.first().waitFor({ state: 'attached' });
  // Each wide granule is drawn a turn either side too; none of its copies is filled.
  assert.ok((await outlines.count()) >= wide.length);
  const fills = await outlines.evaluateAll((paths) => paths.map((p) => getComputedStyle(p).fill));
  assert.ok(fills.every((fill) => fill === 'none'), `filled outlines: ${fills}`);
  const filled = map.locator('path.box-map__footprint:not(.box-map__footprint--outline)');
  assert.ok((await filled.count()) >= narrow.length, 'the swaths are not drawn as shapes');
  await shoot(page, 'shapes-footprints-desktop.png');
  await page.setViewportSize(PHONE);
  await page.reload({ waitUntil: 'load' });
  await page.getByRole('button', { name: 'Map and area tools' }).click();
  await page.locator('.box-map__land').first().waitFor();
  await shoot(page, 'shapes-footprints-phone.png');
  await page.setViewportSize(DESKTOP);
  assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
});
