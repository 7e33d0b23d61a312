/** What an action did, or the API's words when it was refused (announced either way). */
export interface Outcome {
  ok: boolean;
  text: string;
}

export function OutcomeNotice({ outcome }: { outcome: Outcome | null }) {
  return (
    <div aria-live="polite">
      {outcome && (
        <p
          className={outcome.ok ? 'notice notice--ok' : 'notice notice--error'}
          role={outcome.ok ? undefined : 'alert'}
        >
          {outcome.text}
        </p>
      )}
    </div>
  );
}
