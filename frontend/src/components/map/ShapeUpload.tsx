/**
 * "Upload a shape": a GeoJSON, KML/KMZ or zipped shapefile read by the server into one search
 * shape. The server's refusal (a missing .shx, not WGS 84, too large ...) and its note when it
 * simplified the shape are shown beside the button.
 */
import { useMutation } from '@tanstack/react-query';
import type { Geometry } from 'geojson';
import { useId } from 'react';

import { readShape } from '../../lib/api/shapes/readShape';
import type { ShapeReading } from '../../lib/api/types';
import './shapeUpload.css';

export const SHAPE_FILES = '.geojson,.json,.kml,.kmz,.zip';

function summary(reading: ShapeReading): string {
  const features = reading.features === 1 ? 'one feature' : `${reading.features} features`;
  return `Read ${features} from the ${reading.format === 'shapefile' ? 'shapefile' : reading.format.toUpperCase()} file (${reading.vertices} vertices).`;
}

export function ShapeUpload({ onShape }: { onShape: (shape: Geometry) => void }) {
  const id = useId();
  const upload = useMutation({
    mutationFn: readShape,
    onSuccess: (reading) => onShape(reading.geometry as Geometry),
  });
  return (
    <div className="shape-upload">
      <input
        id={id}
        className="visually-hidden"
        type="file"
        accept={SHAPE_FILES}
        aria-describedby={`${id}-hint`}
        onChange={(event) => {
          const file = event.target.files?.[0];
          if (file) upload.mutate(file);
          // The same file chosen again uploads again.
          event.target.value = '';
        }}
      />
      <label htmlFor={id} className="button button--small button--quiet shape-upload__button">
        Upload a shape
      </label>
      <span className="visually-hidden" id={`${id}-hint`}>
        GeoJSON, KML, KMZ or a zipped shapefile (.shp, .shx, .dbf), at most 5 MiB
      </span>
      <div aria-live="polite" className="shape-upload__outcome">
        {upload.isPending && <p className="hint">Reading the shape…</p>}
        {upload.isError && (
          <p className="notice notice--error" role="alert">
            The shape could not be read: {upload.error.message}
          </p>
        )}
        {upload.isSuccess && (
          <p className="notice notice--ok">
            {summary(upload.data)}
            {upload.data.note && <> {upload.data.note}</>}
          </p>
        )}
      </div>
    </div>
  );
}
