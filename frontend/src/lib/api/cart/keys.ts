/** Cache keys of the user's cart (one per session). */
export const cartKeys = {
  all: ['cart'] as const,
};
