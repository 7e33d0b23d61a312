import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { expect, it, vi } from 'vitest';

import { ApiError } from '../lib/api/client';
import { ConfigForm } from './ConfigForm';
import { TextField } from './Field';

function NameForm({
  mutationFn,
  onSaved,
}: {
  mutationFn: (name: string) => Promise<{ name: string }>;
  onSaved?: (made: { name: string }) => unknown;
}) {
  const [name, setName] = useState('');
  return (
    <ConfigForm
      mutationFn={() => mutationFn(name)}
      onSaved={onSaved}
      invalidate={['config', 'things']}
      title="New thing"
      submit="Add thing"
      saved="Saved."
      notice={(save) => save.data && <p>made {save.data.name}</p>}
    >
      {(errors) => (
        <TextField id="t-name" label="Name" value={name} onChange={setName} error={errors.name} />
      )}
    </ConfigForm>
  );
}

function renderForm(props: Parameters<typeof NameForm>[0]) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const invalidate = vi.spyOn(queryClient, 'invalidateQueries');
  render(
    <QueryClientProvider client={queryClient}>
      <NameForm {...props} />
    </QueryClientProvider>,
  );
  return { invalidate };
}

it('saves what was typed, refreshes what it names, then says so', async () => {
  const mutationFn = vi.fn(async (name: string) => ({ name }));
  const onSaved = vi.fn();
  const { invalidate } = renderForm({ mutationFn, onSaved });
  const user = userEvent.setup();
  expect(screen.getByRole('heading', { name: 'New thing' })).toBeInTheDocument();
  await user.type(screen.getByLabelText('Name'), 'reef');
  await user.click(screen.getByRole('button', { name: 'Add thing' }));
  expect(await screen.findByRole('status')).toHaveTextContent('Saved.');
  expect(mutationFn).toHaveBeenCalledExactlyOnceWith('reef');
  expect(invalidate).toHaveBeenCalledWith({ queryKey: ['config', 'things'] });
  expect(onSaved).toHaveBeenCalledWith({ name: 'reef' });
  expect(screen.getByText('made reef')).toBeInTheDocument();
});

it('shows the server sentence under its field and saves nothing twice at once', async () => {
  let refuse: (error: Error) => void = () => {};
  const mutationFn = vi.fn(
    () =>
      new Promise<{ name: string }>((_, reject) => {
        refuse = reject;
      }),
  );
  renderForm({ mutationFn });
  const user = userEvent.setup();
  const button = screen.getByRole('button', { name: 'Add thing' });
  await user.click(button);
  await waitFor(() => expect(button).toBeDisabled());
  refuse(new ApiError(400, 'name: taken', { name: ['This name is taken.'] }));
  expect(await screen.findByText('This name is taken.')).toBeInTheDocument();
  expect(screen.getByLabelText('Name')).toHaveAttribute('aria-invalid', 'true');
  expect(button).toBeEnabled();
  expect(screen.queryByRole('status')).not.toBeInTheDocument();
  expect(mutationFn).toHaveBeenCalledTimes(1);
});
