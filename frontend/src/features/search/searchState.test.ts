import { describe, expect, it } from 'vitest';

import { emptySearch, facetParams, granuleParams, readSearch, writeSearch } from './searchState';

describe('search state in the address', () => {
  it('round-trips every filter through the query string', () => {
    const search = {
      ...emptySearch,
      q: 'snow',
      processingLevel: '3',
      platform: 'Terra',
      instrument: 'MODIS',
      collections: ['MOD10C1.061', 'MOD021KM.061'],
      start: '2026-11-01',
      end: '2026-11-03',
      bbox: [170, -10, -170, 10] as [number, number, number, number],
      dayNight: 'Night' as const,
      cloudBelow: '25',
      cursor: 'abc',
    };
    const address = writeSearch(search).toString();
    expect(address).toBe(
      'q=snow&level=3&platform=Terra&instrument=MODIS&collection=MOD10C1.061%2CMOD021KM.061' +
        '&start=2026-11-01&end=2026-11-03&bbox=170%2C-10%2C-170%2C10&day_night=Night&cloud_below=25&cursor=abc',
    );
    expect(readSearch(new URLSearchParams(address))).toEqual(search);
  });

  it('leaves out what is empty and ignores what it cannot read', () => {
    expect(writeSearch(emptySearch).toString()).toBe('');
    const read = readSearch(new URLSearchParams('bbox=1,2,3&day_night=dusk&collection=,A.1,'));
    expect(read.bbox).toBeNull();
    expect(read.dayNight).toBe('');
    expect(read.collections).toEqual(['A.1']);
  });

  it('maps to the granule API parameters, chosen collections before matching ones', () => {
    const search = {
      ...emptySearch,
      start: '2026-11-01',
      bbox: [-10, 20, 30, 40] as [number, number, number, number],
      cloudBelow: '30',
      dayNight: 'Day' as const,
    };
    expect(granuleParams(search, ['A.1', 'B.1'])).toEqual({
      start: '2026-11-01',
      end: '',
      bbox: '-10,20,30,40',
      'attr.day_night': 'Day',
      'attr.cloud_cover.lt': '30',
      collection: 'A.1,B.1',
      processing_level: '',
      platform: '',
      instrument: '',
      cursor: null,
      limit: 20,
    });
    expect(granuleParams({ ...search, collections: ['C.2'] }, ['A.1']).collection).toBe('C.2');
    // Facet counts keep every collection and level on offer: only time, space and attributes.
    expect(
      Object.keys(facetParams({ ...search, processingLevel: '1B', collections: ['C.2'] })),
    ).toEqual(['start', 'end', 'bbox', 'attr.day_night', 'attr.cloud_cover.lt']);
  });
});
