import { describe, expect, it } from 'vitest';

import { boxFromCorners, boxRectangles, isTooSmall } from './geometry';

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
