/**
 * What the portal map draws over the land: the search box or shape, and granule footprints as
 * their GeoJSON outlines. A footprint or shape that covers half the map or more is drawn as its
 * outline only, so a global granule does not paint the whole map one colour.
 */
import type { Geometry } from 'geojson';
import L from 'leaflet';

import type { BBox } from '../../lib/api/types';
import { boxRectangles, isWide, isWideShape, unwrapGeometry } from './geometry';
import type { Footprint } from './types';

export function rectangles(box: BBox, options: L.PolylineOptions): L.Rectangle[] {
  return boxRectangles(box).map((corners) => L.rectangle(corners, options));
}

/**
 * How a geometry reaches the map: `shape` a search shape as the API reads it (planar, RFC 7946:
 * across 180° cut there or with longitudes past it), `land` cut at 180° with its rings jumping
 * there, `split` already split at the antimeridian into -180..180 (footprints as the API
 * returns them).
 */
export type Drawing = 'shape' | 'land' | 'split';

/**
 * A geometry as a Leaflet layer. A shape or land (land made continuous across 180° first) is
 * drawn a turn either side too, so what crosses the antimeridian shows whole at both edges of
 * the map.
 */
export function geometryLayer(
  geometry: Geometry,
  className: string,
  interactive: boolean,
  drawing: Drawing = 'shape',
): L.FeatureGroup {
  const drawn = drawing === 'land' ? unwrapGeometry(geometry, false) : geometry;
  const group = L.featureGroup();
  for (const shift of drawing === 'split' ? [0] : [-360, 0, 360]) {
    group.addLayer(
      L.geoJSON(drawn, {
        coordsToLatLng: ([lng, lat]) => L.latLng(lat!, lng! + shift),
        style: { className },
        pointToLayer: (_, latLng) =>
          L.circleMarker(latLng, { radius: 6, className: `${className} box-map__point` }),
        interactive,
      }),
    );
  }
  return group;
}

/** The class of a drawn area: filled, or its outline only when it is wide. */
export function areaClass(base: string, extent: BBox | null, outline = false): string {
  return outline || (extent && isWide(extent)) ? `${base} ${base}--outline` : base;
}

export function drawSearchArea(
  layer: L.LayerGroup,
  box: BBox | null,
  shape: Geometry | null,
  outline: boolean,
): void {
  layer.clearLayers();
  if (shape) {
    const className = areaClass('box-map__box', null, outline || isWideShape(shape));
    layer.addLayer(geometryLayer(shape, className, false));
  } else if (box) {
    const className = areaClass('box-map__box', null, outline);
    for (const rectangle of rectangles(box, { className, interactive: false }))
      layer.addLayer(rectangle);
  }
}

export function drawFootprints(
  layer: L.LayerGroup,
  footprints: Footprint[],
  highlight: number | null,
  onSelect: (id: number) => void,
): void {
  layer.clearLayers();
  let top: L.FeatureGroup | null = null;
  for (const footprint of footprints) {
    const highlighted = footprint.id === highlight;
    const base = areaClass('box-map__footprint', footprint.bbox);
    // The highlighted one stands out and the others fade, so it shows among overlapping swaths.
    const mark =
      highlight === null
        ? ''
        : highlighted
          ? ' box-map__footprint--highlight'
          : ' box-map__footprint--faded';
    const className = base + mark;
    const drawn = footprint.footprint
      ? geometryLayer(footprint.footprint, className, true, 'split')
      : L.featureGroup(rectangles(footprint.bbox, { className }));
    drawn.bindTooltip(footprint.label, { sticky: true });
    drawn.on('click', () => onSelect(footprint.id));
    layer.addLayer(drawn);
    if (highlighted) top = drawn;
  }
  // Drawn last in the SVG, so no footprint listed after it covers it.
  top?.bringToFront();
}
