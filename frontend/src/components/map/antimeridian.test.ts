import { describe, expect, it } from 'vitest';

import { cutAtAntimeridian } from './antimeridian';
import type { Position } from './geometry';

/** Even-odd rule: whether p is inside the closed ring (brute force, for the expectations). */
function inside([x, y]: Position, ring: Position[]): boolean {
  let odd = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i]!;
    const [xj, yj] = ring[j]!;
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) odd = !odd;
  }
  return odd;
}

function area(ring: Position[]): number {
  let twice = 0;
  for (let i = 0; i + 1 < ring.length; i += 1)
    twice += ring[i]![0] * ring[i + 1]![1] - ring[i + 1]![0] * ring[i]![1];
  return Math.abs(twice / 2);
}

function cross(o: Position, a: Position, b: Position): number {
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

/** Whether two edges that share no corner cross or touch. */
function edgesMeet(a: Position, b: Position, c: Position, d: Position): boolean {
  const [d1, d2, d3, d4] = [cross(a, b, c), cross(a, b, d), cross(c, d, a), cross(c, d, b)];
  if (d1 * d2 < 0 && d3 * d4 < 0) return true;
  const on = (p: Position, q: Position, r: Position) =>
    Math.min(p[0], q[0]) <= r[0] &&
    r[0] <= Math.max(p[0], q[0]) &&
    Math.min(p[1], q[1]) <= r[1] &&
    r[1] <= Math.max(p[1], q[1]);
  return (
    (d1 === 0 && on(a, b, c)) ||
    (d2 === 0 && on(a, b, d)) ||
    (d3 === 0 && on(c, d, a)) ||
    (d4 === 0 && on(c, d, b))
  );
}

/** A closed ring whose edges meet only their neighbours, at their shared corners. */
function isSimple(ring: Position[]): boolean {
  const n = ring.length - 1;
  for (let i = 0; i < n; i += 1)
    for (let j = i + 2; j < n; j += 1) {
      if (i === 0 && j === n - 1) continue;
      if (edgesMeet(ring[i]!, ring[i + 1]!, ring[j]!, ring[j + 1]!)) return false;
    }
  return true;
}

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A star-shaped polygon around 180° in a frame where longitude runs on past 180. */
function framePolygon(random: () => number): Position[] {
  const cx = Math.round(120 + random() * 120);
  const cy = Math.round(-60 + random() * 120);
  const n = 3 + Math.floor(random() * 7);
  const angles = Array.from({ length: n }, () => random() * 2 * Math.PI).sort((a, b) => a - b);
  const ring = angles.map((a): Position => {
    const r = 2 + random() * 55;
    const x = cx + r * Math.cos(a);
    const y = Math.max(-89, Math.min(89, cy + (r / 2) * Math.sin(a)));
    // now and then on 180° itself: corners touching the cut line, edges along it
    if (random() < 0.3) return [Math.abs(x - 180) < 15 ? 180 : Math.round(x), Math.round(y)];
    return [x, y];
  });
  return [...ring, ring[0]!];
}

/** The corners as a user clicks them: each in -180..180. */
const clicked = (ring: Position[]) =>
  ring.slice(0, -1).map(([x, y]): Position => [x > 180 ? x - 360 : x, y]);

function rings(shape: ReturnType<typeof cutAtAntimeridian>): Position[][] {
  return shape.type === 'Polygon'
    ? [shape.coordinates[0] as Position[]]
    : shape.coordinates.map((polygon) => polygon[0] as Position[]);
}

describe('a polygon drawn across the antimeridian is cut there before it is sent', () => {
  it('a box from 170 to -170 becomes the two boxes either side of 180', () => {
    const cut = cutAtAntimeridian([
      [170, -10],
      [-170, -10],
      [-170, 10],
      [170, 10],
    ]);
    expect(cut.type).toBe('MultiPolygon');
    const boxes = rings(cut).map((ring) => {
      const xs = ring.map(([x]) => x);
      const ys = ring.map(([, y]) => y);
      return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys), area(ring)];
    });
    expect(boxes.sort((a, b) => a[0]! - b[0]!)).toEqual([
      [-180, -10, -170, 10, 200],
      [170, -10, 180, 10, 200],
    ]);
  });

  it('a polygon that stays on one side is sent as drawn', () => {
    const corners: Position[] = [
      [-100, 0],
      [60, 0],
      [-20, 40],
    ];
    expect(cutAtAntimeridian(corners)).toEqual({
      type: 'Polygon',
      coordinates: [[...corners, corners[0]]],
    });
    // a corner on 180 itself, the rest west of it: nothing to cut
    expect(
      cutAtAntimeridian([
        [170, -10],
        [180, 0],
        [170, 10],
      ]).type,
    ).toBe('Polygon');
  });

  it('a ring drawn once round the pole becomes the cap over it', () => {
    const cut = cutAtAntimeridian([
      [0, 80],
      [90, 80],
      [180, 80],
      [-90, 80],
    ]);
    const parts = rings(cut);
    for (const x of [-179, -90, -1, 1, 90, 179]) {
      expect(parts.filter((ring) => inside([x, 85], ring))).toHaveLength(1);
      expect(parts.some((ring) => inside([x, 75], ring))).toBe(false);
    }
    expect(parts.reduce((sum, ring) => sum + area(ring), 0)).toBeCloseTo(360 * 10, 6);
  });

  it('random polygons around 180: each piece simple, inside -180..180, covering what was drawn', () => {
    const random = seeded(19);
    const seen = { tried: 0, cut: 0, cornerOn180: 0, edgeOn180: 0 };
    while (seen.tried < 300) {
      const frame = framePolygon(random);
      if (!isSimple(frame) || area(frame) < 1) continue;
      seen.tried += 1;
      if (frame.some(([x]) => x === 180)) seen.cornerOn180 += 1;
      if (frame.some(([x], i) => x === 180 && frame[i + 1]?.[0] === 180)) seen.edgeOn180 += 1;
      const cut = cutAtAntimeridian(clicked(frame));
      const parts = rings(cut);
      if (cut.type === 'MultiPolygon') seen.cut += 1;
      for (const ring of parts) {
        expect(ring.every(([x]) => x >= -180 && x <= 180)).toBe(true);
        expect(ring[0]).toEqual(ring.at(-1));
        expect(isSimple(ring)).toBe(true);
      }
      const total = parts.reduce((sum, ring) => sum + area(ring), 0);
      expect(total).toBeCloseTo(area(frame), 6);
      const wrong = Array.from({ length: 200 }, (): Position => [
        -180 + random() * 360,
        -90 + random() * 180,
      ]).filter((p) => {
        const drawn = [-360, 0, 360].some((turn) => inside([p[0] + turn, p[1]], frame));
        return parts.filter((ring) => inside(p, ring)).length !== (drawn ? 1 : 0);
      });
      expect(wrong).toEqual([]);
    }
    expect(seen.cut).toBeGreaterThan(100);
    expect(seen.cornerOn180).toBeGreaterThan(50);
    expect(seen.edgeOn180).toBeGreaterThan(5);
  });
});
