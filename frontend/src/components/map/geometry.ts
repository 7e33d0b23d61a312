/** Boxes on a plate carrée map: what a drag draws, and how footprints are drawn. No Leaflet. */
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
