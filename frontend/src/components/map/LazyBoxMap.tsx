import { lazy, Suspense } from 'react';

import { Loading } from '../StatusMessage';
import type { BoxMapProps } from './types';

// Leaflet and the land outlines load with the first page that shows a map, not before.
const BoxMap = lazy(() => import('./BoxMap'));

export function LazyBoxMap(props: BoxMapProps) {
  return (
    <Suspense
      fallback={
        <div className="box-map-placeholder">
          <Loading>Loading the map…</Loading>
        </div>
      }
    >
      <BoxMap {...props} />
    </Suspense>
  );
}
