import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from './api/client';

export const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

// Loads data once and on reload(); errors are kept for the page to show.
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data?: T; error?: Error; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error: unknown) => live && setState({ error: asError(error), loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: useCallback(() => setTick((t) => t + 1), []) };
}

export interface Action {
  busy: boolean;
  // The Error itself, not only its text: a page may read an ApiError's code or details (collisions, say).
  error?: Error;
  run: (action: () => Promise<void>) => Promise<void>;
  // A form's onSubmit: the page stays where it is and the action runs.
  submit: (action: () => Promise<void>) => (event: Event) => void;
}

// The actions of one part of a page share its error note. It is cleared as an action starts: while an
// attempt runs, the failure of the one before does not stand as if it were its answer.
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error>();
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (e) {
      setError(asError(e));
    } finally {
      setBusy(false);
    }
  };
  const submit = (action: () => Promise<void>) => (event: Event) => {
    event.preventDefault();
    void run(action);
  };
  return { busy, error, run, submit };
}

export function ErrorNote(props: { error?: Error | null; label?: string }) {
  if (!props.error) return null;
  const code = props.error instanceof ApiError ? props.error.code : undefined;
  return (
    <div class="note error" role="alert">
      {props.label ? <strong>{props.label}: </strong> : null}
      {/* The service names the key's role and the roles that may (details.role, details.allowedRoles). */}
      {code === 'forbidden_for_role' ? <strong>Your key's role does not allow this. </strong> : null}
      {code ? <code>{code}</code> : null} {props.error.message}
    </div>
  );
}

// The service returns a new key or signing secret in the answer that creates it and never again. The
// children say what was created; they are shown alone when an answer carries no secret.
export function ShownOnce(props: { label: ComponentChildren; secret?: string; children?: ComponentChildren }) {
  return (
    <div class="note ok" role="status">
      {props.children}
      {props.secret ? (
        <>
          {props.children ? ' ' : null}
          {props.label}: <code class="secret">{props.secret}</code>
        </>
      ) : null}
    </div>
  );
}

export function Field(props: { label: string; hint?: string; children: ComponentChildren; id: string }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint ? (
        <p class="hint" id={`${props.id}-hint`}>
          {props.hint}
        </p>
      ) : null}
    </div>
  );
}

// The body's rows are the children. The column of row buttons (actions) still gets a heading, for screen
// readers only, so that every cell has one.
export function Table(props: {
  caption: ComponentChildren;
  captionHidden?: boolean;
  columns: string[];
  actions?: boolean;
  children: ComponentChildren;
}) {
  return (
    <div class="table-wrap">
      <table>
        <caption class={props.captionHidden ? 'visually-hidden' : undefined}>{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
            {props.actions ? (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

export const listToText = (items: string[]): string => items.join(', ');
export const textToList = (text: string): string[] =>
  text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean);

export const formatTime = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : '—');
