export interface CollectionListParams {
  /** Free text over name, title, description, platform and instrument. */
  q?: string;
  /** Opaque cursor from a `next`/`previous` link. */
  cursor?: string | null;
  processing_level?: string;
  platform?: string;
  instrument?: string;
  /** Page size (the API's default is 50). */
  limit?: number;
}

/** Cache keys of collections (ESDTs). */
export const collectionKeys = {
  all: ['collections'] as const,
  list: (params: CollectionListParams) => [...collectionKeys.all, 'list', params] as const,
  detail: (key: string) => [...collectionKeys.all, 'detail', key] as const,
};
