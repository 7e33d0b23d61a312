import {
  useMutation,
  useQueryClient,
  type QueryKey,
  type UseMutationResult,
} from '@tanstack/react-query';
import type { FormEvent, ReactNode } from 'react';

import { configKeys } from '../lib/api/config/keys';
import { errorsOf } from '../lib/api/configErrors';

type Save<T> = UseMutationResult<T, Error, void>;

/**
 * An operator's configuration form (a card on its page): submitting it saves once at a time,
 * refreshes what `invalidate` names (all configuration unless told), then calls `onSaved`.
 * The fields get the server's sentence per field of a refused save; `notice` shows what the
 * save said beyond the fields, above them; `saved` is the word shown beside the button after.
 */
export function ConfigForm<T>({
  mutationFn,
  submit,
  title,
  invalidate = configKeys.all,
  onSaved,
  className,
  notice,
  saved,
  children,
}: {
  mutationFn: () => Promise<T>;
  submit: string;
  title?: string;
  invalidate?: QueryKey;
  onSaved?: (made: T) => unknown;
  className?: string;
  notice?: (save: Save<T>, errors: Record<string, string>) => ReactNode;
  saved?: string;
  children: (errors: Record<string, string>) => ReactNode;
}) {
  const queryClient = useQueryClient();
  const save = useMutation({
    mutationFn,
    onSuccess: async (made: T) => {
      await queryClient.invalidateQueries({ queryKey: invalidate });
      await onSaved?.(made);
    },
  });
  const errors = errorsOf(save.error);
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    save.mutate();
  }
  return (
    <form
      className={['form-card page-section', className].filter(Boolean).join(' ')}
      onSubmit={onSubmit}
      noValidate
    >
      {title && <h2>{title}</h2>}
      {notice?.(save, errors)}
      {children(errors)}
      <div className="actions">
        <button className="button" type="submit" disabled={save.isPending}>
          {submit}
        </button>
        {saved && save.isSuccess && <span role="status">{saved}</span>}
      </div>
    </form>
  );
}
