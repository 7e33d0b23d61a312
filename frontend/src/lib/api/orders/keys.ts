/** Cache keys of the user's orders, each order, and its download links. */
export const orderKeys = {
  all: ['orders'] as const,
  list: (cursor: string | null) => [...orderKeys.all, 'list', { cursor }] as const,
  detail: (id: number) => [...orderKeys.all, 'detail', id] as const,
  /** `ready` (how many files are ready) is part of the key: more ready files, new links. */
  links: (id: number, ready: number) => [...orderKeys.all, 'links', id, ready] as const,
};
