/**
 * Drawing a polygon (a click per vertex) or placing a point on a Leaflet map. A polygon ends
 * with a double click, a click on its first vertex, Enter or the map's Finish button; each edge
 * takes the shorter way round the globe, so clicking at 170° and then at -170° draws an edge
 * across the antimeridian. The finished polygon is cut there (antimeridian.ts), as the API
 * reads shapes on the plane (RFC 7946). The map can still be dragged while drawing.
 */
import type {
  MultiPolygon as GeoMultiPolygon,
  Point as GeoPoint,
  Polygon as GeoPolygon,
} from 'geojson';
import L from 'leaflet';

import { cutAtAntimeridian } from './antimeridian';
import { onGlobe, unwrapPath, type Position } from './geometry';

export type ShapeKind = 'polygon' | 'point';

export interface ShapeDrawOptions {
  style: L.PathOptions;
  /** Called with the finished shape. */
  onDone: (shape: GeoPolygon | GeoMultiPolygon | GeoPoint) => void;
  /** Called when the number of vertices changes (to offer Finish once there are three). */
  onProgress?: (vertices: number) => void;
}

/** Pixels within which a click on the first vertex closes the polygon. */
const CLOSE_PX = 10;

export class ShapeDraw {
  private readonly map: L.Map;
  private readonly options: ShapeDrawOptions;
  private kind: ShapeKind | null = null;
  private vertices: Position[] = [];
  private readonly preview = L.layerGroup();

  constructor(map: L.Map, options: ShapeDrawOptions) {
    this.map = map;
    this.options = options;
  }

  get drawing(): ShapeKind | null {
    return this.kind;
  }

  enable(kind: ShapeKind): void {
    this.disable();
    this.kind = kind;
    this.map.getContainer().classList.add('box-map--drawing');
    this.map.doubleClickZoom.disable();
    this.map.on('click', this.onClick);
    this.map.on('dblclick', this.onDoubleClick);
    this.preview.addTo(this.map);
  }

  disable(): void {
    if (!this.kind) return;
    this.kind = null;
    this.map.getContainer().classList.remove('box-map--drawing');
    this.map.off('click', this.onClick);
    this.map.off('dblclick', this.onDoubleClick);
    this.map.doubleClickZoom.enable();
    this.vertices = [];
    this.preview.clearLayers();
    this.preview.remove();
  }

  /** Close the polygon drawn so far (three vertices at least); false when it has fewer. */
  finish(): boolean {
    if (this.kind !== 'polygon' || this.vertices.length < 3) return false;
    const shape = cutAtAntimeridian(this.vertices);
    const { onDone } = this.options;
    this.disable();
    onDone(shape);
    return true;
  }

  private readonly onClick = (event: L.LeafletMouseEvent) => {
    const position = onGlobe(event.latlng);
    if (this.kind === 'point') {
      const { onDone } = this.options;
      this.disable();
      onDone({ type: 'Point', coordinates: position });
      return;
    }
    if (this.closesRing(event)) {
      this.finish();
      return;
    }
    const last = this.vertices.at(-1);
    if (last && last[0] === position[0] && last[1] === position[1]) return;
    this.vertices.push(position);
    this.redraw();
    this.options.onProgress?.(this.vertices.length);
  };

  private readonly onDoubleClick = (event: L.LeafletMouseEvent) => {
    L.DomEvent.stop(event);
    this.finish();
  };

  /** Whether a click lands on the first vertex (of a ring that has three already). */
  private closesRing(event: L.LeafletMouseEvent): boolean {
    const first = this.vertices[0];
    if (!first || this.vertices.length < 3) return false;
    // The first vertex is drawn where it was clicked and a turn either side (see redraw).
    return [-360, 0, 360].some((shift) => {
      const at = this.map.latLngToContainerPoint([first[1], first[0] + shift]);
      return at.distanceTo(event.containerPoint) <= CLOSE_PX;
    });
  }

  private redraw(): void {
    this.preview.clearLayers();
    const path = unwrapPath(this.vertices);
    for (const shift of [-360, 0, 360]) {
      const latLngs = path.map(([lng, lat]) => L.latLng(lat, lng + shift));
      this.preview.addLayer(L.polyline(latLngs, { ...this.options.style, interactive: false }));
      latLngs.forEach((latLng, index) =>
        this.preview.addLayer(
          L.circleMarker(latLng, {
            radius: index === 0 ? 6 : 4,
            className: 'box-map__vertex',
            interactive: false,
          }),
        ),
      );
    }
  }
}
