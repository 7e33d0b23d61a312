import { describe, expect, it } from 'vitest';

import type { BBox } from '../../lib/api/types';

import {
  emptySearch,
  granuleParams,
  matchingFilters,
  readSearch,
  wildcardSuggestion,
  writeSearch,
} from './searchState';

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
      sort: 'granule_id' as const,
      pageSize: 100,
      cursor: 'abc',
    };
    const address = writeSearch(search).toString();
    expect(address).toBe(
      'q=snow&level=3&platform=Terra&instrument=MODIS&collection=MOD10C1.061%2CMOD021KM.061' +
        '&start=2026-11-01&end=2026-11-03&bbox=170%2C-10%2C-170%2C10&day_night=Night&cloud_below=25' +
        '&sort=granule_id&per_page=100&cursor=abc',
    );
    expect(readSearch(new URLSearchParams(address))).toEqual(search);
  });

  it('leaves out what is empty and ignores what it cannot read', () => {
    expect(writeSearch(emptySearch).toString()).toBe('');
    const read = readSearch(
      new URLSearchParams('bbox=1,2,3&day_night=dusk&collection=,A.1,&sort=size&per_page=7'),
    );
    expect(read.bbox).toBeNull();
    expect(read.sort).toBe('-temporal_start');
    expect(read.pageSize).toBe(20);
    expect(read.dayNight).toBe('');
    expect(read.collections).toEqual(['A.1']);
  });

  it('maps to the granule API parameters, free text and facets included', () => {
    const search = {
      ...emptySearch,
      q: 'MOD021KM.A2026*',
      start: '2026-11-01',
      bbox: [-10, 20, 30, 40] as [number, number, number, number],
      cloudBelow: '30',
      dayNight: 'Day' as const,
      collections: ['A.1', 'B.1'],
      sort: 'temporal_start' as const,
      pageSize: 50,
    };
    const filters = {
      q: 'MOD021KM.A2026*',
      start: '2026-11-01',
      bbox: '-10,20,30,40',
      'attr.day_night': 'Day',
      'attr.cloud_cover.lt': '30',
      collection: 'A.1,B.1',
    };
    expect(matchingFilters(search)).toEqual(filters);
    expect(granuleParams(search)).toEqual({
      ...filters,
      ordering: 'temporal_start',
      cursor: null,
      limit: 50,
    });
    // The API's own default order is not spelled out.
    expect(granuleParams(emptySearch)).toEqual({ ordering: '', cursor: null, limit: 20 });
  });

  it('keeps a drawn shape in the address and sends it as intersects instead of the box', () => {
    const point = { type: 'Point' as const, coordinates: [12.5, 41.9] };
    const state = { ...emptySearch, bbox: [-10, 20, 30, 40] as BBox, shape: point };
    const params = writeSearch(state);
    expect(params.get('bbox')).toBeNull();
    expect(readSearch(params).shape).toEqual(point);
    expect(matchingFilters(state)).toEqual({
      intersects: '{"type":"Point","coordinates":[12.5,41.9]}',
    });
  });
});

describe('wildcardSuggestion', () => {
  it('adds * to the words that read as granule ids, and only those', () => {
    expect(wildcardSuggestion('MOD021KM.A2026307')).toBe('MOD021KM.A2026307*');
    expect(wildcardSuggestion('snow 20261105')).toBe('snow 20261105*');
    expect(wildcardSuggestion('  GHRSST_OI  ')).toBe('GHRSST_OI*');
  });

  it('offers nothing for plain words or ids that already have a wildcard', () => {
    expect(wildcardSuggestion('snow cover')).toBeNull();
    expect(wildcardSuggestion('MOD021KM.A2026*')).toBeNull();
    expect(wildcardSuggestion('MOD021KM.A2026?07')).toBeNull();
    expect(wildcardSuggestion('')).toBeNull();
  });
});
