// Plane geometry for the journeys' expectations, written here on purpose: what a search by a
// shape must return is computed with these few lines, not with the server's shapely, so the
// journey checks the server against an independent answer. Positions are [lon, lat], planar as
// RFC 7946 says: a shape across 180° comes cut there.

/** @param {number[]} a @param {number[]} b @param {number[]} c */
function orient(a, b, c) {
  return Math.sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
}

/** @param {number[]} a @param {number[]} b @param {number[]} p */
function onSegment(a, b, p) {
  return Math.min(a[0], b[0]) <= p[0] && p[0] <= Math.max(a[0], b[0])
    && Math.min(a[1], b[1]) <= p[1] && p[1] <= Math.max(a[1], b[1]);
}

/**
 * Whether segments ab and cd share a point (touching included).
 * @param {number[]} a @param {number[]} b @param {number[]} c @param {number[]} d
 */
function segmentsMeet(a, b, c, d) {
  const [o1, o2, o3, o4] = [orient(a, b, c), orient(a, b, d), orient(c, d, a), orient(c, d, b)];
  if (o1 !== o2 && o3 !== o4) return true;
  return (o1 === 0 && onSegment(a, b, c)) || (o2 === 0 && onSegment(a, b, d))
    || (o3 === 0 && onSegment(c, d, a)) || (o4 === 0 && onSegment(c, d, b));
}

/**
 * Even-odd rule: whether point p is inside the closed ring.
 * @param {number[]} p @param {number[][]} ring
 */
function inside(p, ring) {
  let odd = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i];
    const [xj, yj] = ring[j];
    if ((yi > p[1]) !== (yj > p[1]) && p[0] < ((xj - xi) * (p[1] - yi)) / (yj - yi) + xi) odd = !odd;
  }
  return odd;
}

/**
 * Whether two closed rings (polygons without holes) share a point.
 * @param {number[][]} a @param {number[][]} b
 */
function ringsMeet(a, b) {
  for (let i = 0; i + 1 < a.length; i += 1) {
    for (let j = 0; j + 1 < b.length; j += 1) if (segmentsMeet(a[i], a[i + 1], b[j], b[j + 1])) return true;
  }
  return inside(a[0], b) || inside(b[0], a);
}

/**
 * The outer rings of a GeoJSON Polygon or MultiPolygon (the journeys' footprints have no holes).
 * @param {{ type: string, coordinates: any }} geometry
 * @returns {number[][][]}
 */
export function outerRings(geometry) {
  if (geometry.type === 'Polygon') return [geometry.coordinates[0]];
  if (geometry.type === 'MultiPolygon') return geometry.coordinates.map((/** @type {any} */ p) => p[0]);
  throw new Error(`no rings in a ${geometry.type}`);
}

/**
 * Whether a footprint meets a search shape (Polygon or MultiPolygon), both planar and inside
 * -180..180 (the footprint as the API lists it, the shape as the page sends it).
 * @param {{ type: string, coordinates: any }} footprint
 * @param {{ type: string, coordinates: any }} shape
 */
export function footprintMeets(footprint, shape) {
  const rings = outerRings(shape);
  return outerRings(footprint).some((part) => rings.some((ring) => ringsMeet(part, ring)));
}
