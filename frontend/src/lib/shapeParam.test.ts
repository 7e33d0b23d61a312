import { beforeEach, describe, expect, it } from 'vitest';

import { describeShape, MAX_INLINE, readShape, writeShape } from './shapeParam';

beforeEach(() => window.localStorage.clear());

describe('a search shape in the address', () => {
  it('a small shape is written into the address itself', () => {
    const point = { type: 'Point' as const, coordinates: [12.123456789, -41.9] };
    const text = writeShape(point);
    expect(text).toBe('{"type":"Point","coordinates":[12.12346,-41.9]}');
    expect(readShape(text)).toEqual({
      shape: { type: 'Point', coordinates: [12.12346, -41.9] },
      missing: false,
    });
  });

  it('a large shape is kept in this browser and the address names it', () => {
    // A ring of 400 vertices round a circle: far longer than an address should be.
    const ring = Array.from({ length: 400 }, (_, i) => [
      10 * Math.cos((i / 400) * 2 * Math.PI),
      10 * Math.sin((i / 400) * 2 * Math.PI),
    ]);
    const polygon = { type: 'Polygon' as const, coordinates: [[...ring, ring[0]!]] };
    const text = writeShape(polygon);
    expect(text.length).toBeLessThan(40);
    expect(text).toMatch(/^saved:[0-9a-f]+$/);
    expect(JSON.stringify(polygon).length).toBeGreaterThan(MAX_INLINE);
    const read = readShape(text);
    expect(read.missing).toBe(false);
    expect(read.shape?.type).toBe('Polygon');
    // Another browser has not got it: the page says so rather than search without it silently.
    window.localStorage.clear();
    expect(readShape(text)).toEqual({ shape: null, missing: true });
  });

  it('what is not a geometry is no shape', () => {
    expect(readShape(null)).toEqual({ shape: null, missing: false });
    expect(readShape('{"type":"Feature"}').shape).toBeNull();
    expect(readShape('not json').shape).toBeNull();
    expect(readShape('{"type":"Polygon"}').shape).toBeNull();
  });

  it('says what the shape is', () => {
    const ring = [
      [0, 0],
      [1, 0],
      [1, 1],
      [0, 0],
    ];
    expect(describeShape({ type: 'Polygon', coordinates: [ring] })).toBe('a polygon of 3 vertices');
    expect(describeShape({ type: 'Point', coordinates: [5, 6] })).toBe('the point 6, 5');
    const box = (w: number, e: number) => [
      [
        [w, 0],
        [e, 0],
        [e, 1],
        [w, 1],
        [w, 0],
      ],
    ];
    expect(
      describeShape({ type: 'MultiPolygon', coordinates: [box(170, 180), box(-180, -170)] }),
    ).toBe('a polygon cut at the antimeridian into 2 parts');
    expect(describeShape({ type: 'MultiPolygon', coordinates: [box(0, 1), box(5, 6)] })).toBe(
      '2 polygons',
    );
  });
});
