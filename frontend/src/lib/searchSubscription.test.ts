import { describe, expect, it } from 'vitest';

import {
  needsCollectionLookup,
  readSearchDraft,
  subscribeToSearchPath,
} from './searchSubscription';

// Addresses written by hand as a user shares them (the search page's documented names).
describe('subscribe to a search', () => {
  it('carries the filters and drops the results cursor', () => {
    const search = new URLSearchParams(
      'collection=MOD021KM.061,MOD10C1.061&start=2026-11-01&end=2026-11-05&bbox=-10,20,15,40' +
        '&day_night=Day&cloud_below=30&cursor=abc',
    );
    const path = subscribeToSearchPath(search);
    expect(path.startsWith('/subscriptions/new?')).toBe(true);
    expect(path).not.toContain('cursor');

    const draft = readSearchDraft(new URL(path, 'http://x').searchParams);
    expect(draft).toEqual({
      collections: ['MOD021KM.061', 'MOD10C1.061'],
      start: '2026-11-01',
      end: '2026-11-05',
      bbox: [-10, 20, 15, 40],
      shape: null,
      dayNight: 'Day',
      cloudBelow: '30',
      collectionFilter: { q: '', processing_level: '', platform: '', instrument: '' },
    });
    expect(needsCollectionLookup(draft!)).toBe(false);
  });

  it("carries the search's drawn shape", () => {
    const ring = [
      [170, -10],
      [-170, -10],
      [-170, 10],
      [170, 10],
      [170, -10],
    ];
    const search = new URLSearchParams({
      collection: 'MOD021KM.061',
      shape: JSON.stringify({ type: 'Polygon', coordinates: [ring] }),
    });
    const draft = readSearchDraft(new URL(subscribeToSearchPath(search), 'http://x').searchParams);
    expect(draft?.shape).toEqual({ type: 'Polygon', coordinates: [ring] });
    expect(draft?.bbox).toBeNull();
  });

  it('keeps free text and facets to resolve to collections when none was picked', () => {
    const draft = readSearchDraft(new URLSearchParams('q=snow&level=3&platform=Terra'));
    expect(draft?.collections).toEqual([]);
    expect(draft?.collectionFilter).toEqual({
      q: 'snow',
      processing_level: '3',
      platform: 'Terra',
      instrument: '',
    });
    expect(needsCollectionLookup(draft!)).toBe(true);
  });

  it('ignores what is not a search, and malformed values', () => {
    expect(subscribeToSearchPath(new URLSearchParams('cursor=abc'))).toBe('/subscriptions/new');
    expect(readSearchDraft(new URLSearchParams(''))).toBeNull();
    const draft = readSearchDraft(
      new URLSearchParams('bbox=1,2,3&start=yesterday&day_night=Dusk&collection=A.1'),
    );
    expect(draft).toMatchObject({ bbox: null, start: '', dayNight: '', collections: ['A.1'] });
  });
});
