import { beforeEach, describe, expect, it } from 'vitest';

import { lastSearchArea, rememberSearchArea } from './searchArea';

const polygon = {
  type: 'Polygon' as const,
  coordinates: [
    [
      [0, 0],
      [1, 0],
      [1, 1],
      [0, 0],
    ],
  ],
};

describe('the last search area', () => {
  beforeEach(() => sessionStorage.clear());

  it('keeps the shape (it replaces the box) or else the box', () => {
    rememberSearchArea({ bbox: [1, 2, 3, 4], shape: polygon });
    expect(lastSearchArea()).toEqual({ bbox: null, shape: polygon });
    rememberSearchArea({ bbox: [170, -10, -170, 10], shape: null });
    expect(lastSearchArea()).toEqual({ bbox: [170, -10, -170, 10], shape: null });
  });

  it('a search without an area leaves the last one', () => {
    rememberSearchArea({ bbox: [1, 2, 3, 4], shape: null });
    rememberSearchArea({ bbox: null, shape: null });
    expect(lastSearchArea()).toEqual({ bbox: [1, 2, 3, 4], shape: null });
  });

  it('what is kept but is not an area offers nothing', () => {
    for (const text of ['{', '[]', '{"bbox":[1,2,"x",4]}', '{"shape":{"type":"Nope"}}', 'null']) {
      sessionStorage.setItem('granary.search-area', text);
      expect(lastSearchArea()).toBeNull();
    }
  });
});
