/** Boxes on a plate carrée map: what a drag draws, and how footprints are drawn. No Leaflet. */
import type { Geometry } from 'geojson';

import type { BBox } from '../../lib/api/types';

export interface LatLngLike {
  lat: number;
  lng: number;
}

const clamp = (value: number, low: number, high: number) => Math.min(high, Math.max(low, value));
const round = (value: number) => Math.round(value * 100) / 100;

/** The box two dragged corners span, in any order, kept on the globe, to 0.01 degree. */
export function boxFromCorners(a: LatLngLike, b: LatLngLike): BBox {
  const lng = [a.lng, b.lng].map((v) => round(clamp(v, -180, 180)));
  const lat = [a.lat, b.lat].map((v) => round(clamp(v, -90, 90)));
  return [Math.min(...lng), Math.min(...lat), Math.max(...lng), Math.max(...lat)];
}

/** A box as one or two [[south, west], [north, east]] rectangles: two when it crosses 180°. */
export function boxRectangles([west, south, east, north]: BBox): [
  [number, number],
  [number, number],
][] {
  if (west <= east)
    return [
      [
        [south, west],
        [north, east],
      ],
    ];
  return [
    [
      [south, west],
      [north, 180],
    ],
    [
      [south, -180],
      [north, east],
    ],
  ];
}

/** True when a drag was too small to mean a box (a click). */
export function isTooSmall([west, south, east, north]: BBox): boolean {
  return Math.abs(east - west) < 0.5 && Math.abs(north - south) < 0.5;
}

/** A [longitude, latitude] position, as GeoJSON writes it. */
export type Position = [number, number];

/**
 * Longitudes made continuous along a path, each step taking the shorter way round (as the map
 * draws an edge between two clicks), so a ring from 170 to -170 continues to 190 and is drawn
 * across 180°.
 */
export function unwrapPath(points: Position[], globeEdges = true): Position[] {
  const out: Position[] = [];
  let turns = 0;
  points.forEach(([lng, lat], index) => {
    if (index > 0) {
      const previous = points[index - 1]![0];
      const step = lng - previous;
      // An edge from -180 to 180 (both on the antimeridian) spans the globe, as a world box's
      // does; land outlines cut at 180° jump there instead.
      const span = globeEdges && Math.abs(lng) === 180 && Math.abs(previous) === 180;
      if (Math.abs(step) > 180 && !span) turns -= Math.sign(step);
    }
    out.push([lng + 360 * turns, lat]);
  });
  return out;
}

/** A clicked position kept on the globe (longitude wrapped into -180..180), to 0.01 degree. */
export function onGlobe({ lat, lng }: LatLngLike): Position {
  const wrapped = ((((lng + 180) % 360) + 360) % 360) - 180;
  return [round(wrapped === -180 && lng > 0 ? 180 : wrapped), round(clamp(lat, -90, 90))];
}

/**
 * True when a box covers half the map or more: such a footprint is drawn as its outline, so a
 * global granule does not paint the whole map one colour.
 */
export function isWide([west, south, east, north]: BBox): boolean {
  const width = west <= east ? east - west : 360 - (west - east);
  return width * (north - south) >= 0.5 * 360 * 180;
}

type Coordinates = Position | Coordinates[];

/**
 * A closed ring made continuous, unless it goes once round a pole (it then ends a turn away
 * from where it began, as Antarctica's outline does along -90°): such a ring is kept as given.
 */
function unwrapRing(ring: Position[], globeEdges: boolean): Position[] {
  const unwrapped = unwrapPath(ring, globeEdges);
  const first = unwrapped[0];
  const last = unwrapped.at(-1);
  return first && last && first[0] !== last[0] ? ring : unwrapped;
}

function unwrapDeep(
  coordinates: Coordinates,
  depth: number,
  rings: boolean,
  globeEdges: boolean,
): Coordinates {
  if (depth === 1) {
    const path = coordinates as Position[];
    return rings ? unwrapRing(path, globeEdges) : unwrapPath(path, globeEdges);
  }
  return (coordinates as Coordinates[]).map((inner) =>
    unwrapDeep(inner, depth - 1, rings, globeEdges),
  );
}

const PATH_DEPTH: Partial<Record<Geometry['type'], number>> = {
  LineString: 1,
  MultiLineString: 2,
  Polygon: 2,
  MultiPolygon: 3,
};

/**
 * A geometry with each line and ring made continuous in longitude (see unwrapPath), for
 * drawing: land cut at 180° (Chukotka, Fiji; with `globeEdges` false, as its rings jump from
 * 180 to -180) then shows as one shape across 180° instead of a band across the whole map.
 */
export function unwrapGeometry(geometry: Geometry, globeEdges = true): Geometry {
  if (geometry.type === 'GeometryCollection')
    return {
      ...geometry,
      geometries: geometry.geometries.map((g) => unwrapGeometry(g, globeEdges)),
    };
  const depth = PATH_DEPTH[geometry.type];
  if (!depth) return geometry;
  const rings = geometry.type === 'Polygon' || geometry.type === 'MultiPolygon';
  return {
    ...geometry,
    coordinates: unwrapDeep(geometry.coordinates as Coordinates, depth, rings, globeEdges),
  } as Geometry;
}

/** A closed ring's area in square degrees, whichever way round it goes. */
export function ringArea(ring: Position[]): number {
  let twice = 0;
  for (let i = 0; i + 1 < ring.length; i += 1)
    twice += ring[i]![0] * ring[i + 1]![1] - ring[i + 1]![0] * ring[i]![1];
  return Math.abs(twice / 2);
}

/** Square degrees a shape's polygons cover on the map (holes left out; lines and points none). */
function areaOf(geometry: Geometry): number {
  if (geometry.type === 'GeometryCollection')
    return geometry.geometries.reduce((sum, g) => sum + areaOf(g), 0);
  const polygons =
    geometry.type === 'Polygon'
      ? [geometry.coordinates]
      : geometry.type === 'MultiPolygon'
        ? geometry.coordinates
        : [];
  return polygons.reduce(
    (sum, rings) =>
      rings.reduce(
        (inner, ring, index) => inner + (index ? -1 : 1) * ringArea(ring as Position[]),
        sum,
      ),
    0,
  );
}

/** True when a shape covers half the map or more: drawn as its outline, as a wide box is. */
export function isWideShape(geometry: Geometry): boolean {
  return areaOf(geometry) >= 0.5 * 360 * 180;
}
