import { describe, expect, it } from 'vitest';

import type { Geometry } from 'geojson';

import {
  boxFromCorners,
  boxRectangles,
  isTooSmall,
  isWide,
  isWideShape,
  onGlobe,
  unwrapGeometry,
  unwrapPath,
} from './geometry';

/** [west, south, east, north] of a geometry's positions as given. */
function extentOf(geometry: Geometry): number[] {
  const xs: number[] = [];
  const ys: number[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value) && typeof value[0] === 'number') {
      xs.push(value[0]);
      ys.push(value[1] as number);
    } else if (Array.isArray(value)) value.forEach(visit);
  };
  if (geometry.type !== 'GeometryCollection') visit(geometry.coordinates);
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

describe('map boxes', () => {
  it('a drag in any direction gives west, south, east, north on the globe', () => {
    expect(boxFromCorners({ lat: 40.123, lng: 30.456 }, { lat: -20, lng: -10 })).toEqual([
      -10, -20, 30.46, 40.12,
    ]);
    expect(boxFromCorners({ lat: 95, lng: -200 }, { lat: 0, lng: 10 })).toEqual([-180, 0, 10, 90]);
  });

  it('a box across the antimeridian is drawn as two rectangles', () => {
    expect(boxRectangles([-10, -5, 10, 5])).toEqual([
      [
        [-5, -10],
        [5, 10],
      ],
    ]);
    expect(boxRectangles([170, -5, -170, 5])).toEqual([
      [
        [-5, 170],
        [5, 180],
      ],
      [
        [-5, -180],
        [5, -170],
      ],
    ]);
  });

  it('a click is not a box', () => {
    expect(isTooSmall([10, 10, 10.2, 10.1])).toBe(true);
    expect(isTooSmall([10, 10, 12, 10.1])).toBe(false);
  });
});

describe('shapes on the map', () => {
  it('each edge takes the shorter way round, so 170 to -170 continues past 180', () => {
    expect(
      unwrapPath([
        [170, -10],
        [-170, -10],
        [-170, 10],
        [170, 10],
        [170, -10],
      ]),
    ).toEqual([
      [170, -10],
      [190, -10],
      [190, 10],
      [170, 10],
      [170, -10],
    ]);
    // Westwards across 180 too, and a path that never crosses is left alone.
    expect(
      unwrapPath([
        [-175, 0],
        [175, 0],
      ]),
    ).toEqual([
      [-175, 0],
      [-185, 0],
    ]);
    expect(
      unwrapPath([
        [-100, 0],
        [60, 0],
      ]),
    ).toEqual([
      [-100, 0],
      [60, 0],
    ]);
  });

  it('a world box stays the world (an edge from -180 to 180 spans the globe)', () => {
    const world = [
      [-180, -90],
      [180, -90],
      [180, 90],
      [-180, 90],
      [-180, -90],
    ];
    expect(unwrapPath(world as [number, number][])).toEqual(world);
  });

  it('a search shape covering half the map or more is wide, however it is cut', () => {
    const band = (west: number, east: number, south: number, north: number) => [
      [west, south],
      [east, south],
      [east, north],
      [west, north],
      [west, south],
    ];
    // a tall band either side of 180°, cut there: small, though it reaches both map edges
    expect(
      isWideShape({
        type: 'MultiPolygon',
        coordinates: [[band(170, 180, -80, 80)], [band(-180, -170, -80, 80)]],
      }),
    ).toBe(false);
    expect(isWideShape({ type: 'Polygon', coordinates: [band(-170, 170, -60, 60)] })).toBe(true);
    // a hole takes its area away
    expect(
      isWideShape({
        type: 'Polygon',
        coordinates: [band(-170, 170, -60, 60), band(-100, 100, -50, 50)],
      }),
    ).toBe(false);
    expect(isWideShape({ type: 'Point', coordinates: [0, 0] })).toBe(false);
  });

  it('a click past the edge of the world is the same place on the globe', () => {
    expect(onGlobe({ lat: 12.345, lng: 185 })).toEqual([-175, 12.35]);
    expect(onGlobe({ lat: -95, lng: -190 })).toEqual([170, -90]);
    expect(onGlobe({ lat: 0, lng: 180 })).toEqual([180, 0]);
  });

  it('a footprint covering half the map or more is wide (drawn as an outline)', () => {
    expect(isWide([-180, -90, 180, 90])).toBe(true);
    expect(isWide([-180, -60, 180, 60])).toBe(true);
    expect(isWide([170, -90, 160, 90])).toBe(true);
    expect(isWide([-20, -40, 50, 40])).toBe(false);
    expect(isWide([170, -10, -170, 10])).toBe(false);
  });
});

describe('land and shapes cut at the antimeridian', () => {
  it('a ring cut at 180 is drawn whole; a ring round a pole is kept as given', () => {
    // Chukotka as Natural Earth cuts it: along 180, over to -180 and back.
    const cut = [
      [170, 65],
      [180, 65],
      [-180, 65],
      [-175, 66],
      [-180, 68],
      [180, 68],
      [170, 65],
    ];
    const whole = unwrapGeometry({ type: 'Polygon', coordinates: [cut] }, false);
    expect(extentOf(whole)).toEqual([170, 65, 185, 68]);
    // Antarctica: east along the coast, then back west along -90.
    const pole = [
      [-180, -70],
      [0, -65],
      [180, -70],
      [180, -90],
      [-180, -90],
      [-180, -70],
    ];
    expect(unwrapGeometry({ type: 'Polygon', coordinates: [pole] }, false)).toEqual({
      type: 'Polygon',
      coordinates: [pole],
    });
  });
});
