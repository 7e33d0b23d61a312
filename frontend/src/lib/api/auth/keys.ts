/** Cache keys of who is calling: kept when everything else is dropped at login and logout. */
export const authKeys = {
  all: ['auth'] as const,
  me: () => [...authKeys.all, 'me'] as const,
};
