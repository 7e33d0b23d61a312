/**
 * A polygon drawn on the map, made into what the API reads (RFC 7946: planar lon/lat, a shape
 * across 180° cut there). On the map each edge takes the shorter way round, so clicks at 170°
 * and -170° draw an edge across 180°; sent as clicked, the API would read that edge as running
 * 340° across the middle. So the drawn ring is made continuous in longitude, closed over a pole
 * when it went round one, cut at 180° (and at each further turn) and each piece moved back into
 * -180..180. No Leaflet.
 */
import type { MultiPolygon, Polygon } from 'geojson';

import { ringArea, unwrapPath, type Position } from './geometry';

interface Crossing {
  at: Position;
  /** Where it lies along the cut line: its latitude, then (ties) the slope of its edge. */
  y: number;
  slope: number;
}

type Node = Position | Crossing;

const isCrossing = (node: Node): node is Crossing => !Array.isArray(node);

/**
 * Which side of x = c each corner counts as (true: east). A corner on the line is moved a hair
 * off it, so that every crossing is a proper one: away from the side its ring comes from and
 * goes back to (a corner touching the line from the west splits the west part there into two
 * pieces that meet at it, rather than one ring that touches itself), else west.
 */
function sides(points: Position[], c: number): boolean[] {
  const n = points.length;
  if (points.every(([x]) => x === c)) return points.map(() => false);
  const offLine = (from: number, step: number) => {
    let i = from;
    do i = (i + step + n) % n;
    while (points[i]![0] === c);
    return points[i]![0] > c;
  };
  return points.map(([x], i) => {
    if (x !== c) return x > c;
    const before = offLine(i, -1);
    return before === offLine(i, 1) ? !before : false;
  });
}

/** The ring's corners with a crossing wherever an edge goes over the line x = c. */
function withCrossings(points: Position[], c: number): Node[] {
  const east = sides(points, c);
  const out: Node[] = [];
  points.forEach((p, i) => {
    out.push(p);
    const next = (i + 1) % points.length;
    if (east[i] === east[next]) return;
    const q = points[next]!;
    const [on, off] = p[0] === c ? [p, q] : q[0] === c ? [q, p] : [null, q];
    if (on) {
      // at the corner moved a hair off the line: crossings meeting there are ordered by how
      // steeply their edges leave it
      out.push({ at: on, y: on[1], slope: (off[1] - on[1]) / Math.abs(off[0] - c) });
    } else {
      const y = p[1] + ((c - p[0]) * (q[1] - p[1])) / (q[0] - p[0]);
      out.push({ at: [c, y], y, slope: 0 });
    }
  });
  return out;
}

/**
 * The pieces of a closed ring west and east of x = c. Between crossings the ring runs on one
 * side; along the line, crossings pair up (first with second, third with fourth...) as the
 * stretches inside the polygon, and each piece follows its side's runs joined by those
 * stretches.
 */
function split(ring: Position[], c: number): Position[][] {
  const nodes = withCrossings(ring.slice(0, -1), c);
  const first = nodes.findIndex(isCrossing);
  if (first < 0) return [ring];
  // from the first crossing round to it again
  const turned = [...nodes.slice(first), ...nodes.slice(0, first + 1)];
  const crossings = nodes.filter(isCrossing);
  // runs[k]: from crossing k (ring order) to crossing k + 1
  const runs: Position[][] = [];
  let run: Position[] = [];
  for (const node of turned) {
    if (isCrossing(node)) {
      if (run.length) runs.push([...run, node.at]);
      run = [node.at];
    } else run.push(node);
  }
  const order = crossings
    .map((crossing, index) => ({ crossing, index }))
    .sort((a, b) => a.crossing.y - b.crossing.y || a.crossing.slope - b.crossing.slope);
  const partner = new Map<number, number>();
  for (let i = 0; i + 1 < order.length; i += 2) {
    partner.set(order[i]!.index, order[i + 1]!.index);
    partner.set(order[i + 1]!.index, order[i]!.index);
  }
  const pieces: Position[][] = [];
  const used = new Set<number>();
  runs.forEach((_, start) => {
    if (used.has(start)) return;
    const piece: Position[] = [];
    let k = start;
    do {
      used.add(k);
      piece.push(...runs[k]!);
      // the run ends at crossing k + 1; across the inside stretch the next run of this side
      k = partner.get((k + 1) % runs.length)!;
    } while (k !== start && !used.has(k));
    piece.push(piece[0]!);
    pieces.push(piece);
  });
  return pieces;
}

/**
 * A closed ring without repeated positions nor corners between two others on the same cut line
 * (a crossing at a corner on the line leaves a spike there, as thin as the hair it was moved).
 */
function tidied(ring: Position[]): Position[] {
  const open = ring.slice(0, -1);
  const onLine = (p: Position, q: Position) => p[0] === q[0] && Math.abs(p[0]) === 180;
  for (let changed = true; changed && open.length > 2;) {
    changed = false;
    for (let i = 0; i < open.length && open.length > 2; i += 1) {
      const before = open[(i + open.length - 1) % open.length]!;
      const at = open[i]!;
      const after = open[(i + 1) % open.length]!;
      const repeat = at[0] === before[0] && at[1] === before[1];
      if (repeat || (onLine(before, at) && onLine(at, after))) {
        open.splice(i, 1);
        changed = true;
      }
    }
  }
  return [...open, open[0]!];
}

/** A ring that went once round a pole, closed over that pole (the side of its mean latitude). */
function closedOverPole(ring: Position[]): Position[] {
  const first = ring[0]!;
  const last = ring.at(-1)!;
  if (Math.abs(last[0] - first[0]) !== 360) return ring;
  const pole = ring.reduce((sum, [, lat]) => sum + lat, 0) >= 0 ? 90 : -90;
  return [...ring, [last[0], pole], [first[0], pole], first];
}

/**
 * The polygon a user drew (its corners as clicked, each in -180..180; the ring closes itself)
 * as the API reads it: a Polygon, or a MultiPolygon cut at 180° when it crosses it.
 */
export function cutAtAntimeridian(corners: Position[]): Polygon | MultiPolygon {
  const drawn = [...corners, corners[0]!];
  const unwrapped = unwrapPath(drawn);
  // Round a pole more than once: no polygon on the plane; the API says why.
  if (Math.abs(unwrapped.at(-1)![0] - drawn[0]![0]) > 360)
    return { type: 'Polygon', coordinates: [drawn] };
  const ring = closedOverPole(unwrapped);
  const xs = ring.map(([x]) => x);
  const [low, high] = [Math.min(...xs), Math.max(...xs)];
  let pieces = [ring];
  for (let c = 180 + 360 * Math.floor((low - 180) / 360); c < high; c += 360)
    if (c > low) pieces = pieces.flatMap((piece) => split(piece, c));
  const parts = pieces
    .map((piece) => {
      const turn = Math.floor((Math.min(...piece.map(([x]) => x)) + 180) / 360);
      return tidied(piece.map(([x, y]): Position => [x - 360 * turn, y]));
    })
    .filter((piece) => piece.length >= 4 && ringArea(piece) > 1e-12);
  if (parts.length === 1) return { type: 'Polygon', coordinates: [parts[0]!] };
  return { type: 'MultiPolygon', coordinates: parts.map((part) => [part]) };
}
